"""Extra benchmark case groups: the tables ``python -m lazybcast bench`` prints after the
materialize suite (ufunc chains and reductions, ...), each in its own module, found by name.

>>> EXTRA_GROUPS
('lazybcast._bench_lazy', 'lazybcast._bench_reader')
"""

import importlib

from lazybcast._bench_cases import Case, OpCase

__all__ = ["EXTRA_GROUPS", "groups"]

EXTRA_GROUPS = (
    "lazybcast._bench_lazy",  # issue 10: ufunc chains and reductions (branch duck-ufuncs)
    "lazybcast._bench_reader",  # issue 12: a copy, then its output read (threads' real cost)
)
"""Modules whose case groups ``python -m lazybcast bench`` runs after the materialize suite.

Each module defines ``CASES``, a list of :class:`OpCase` (timed against NumPy and torch, each
group in its own table) or :class:`Case` (timed as the materialize suite is, limit included),
and optionally ``TITLE``, the heading of its table. A module that is not installed is skipped,
so wiring a new group in is one line here. For example (``lazybcast/_bench_lazy.py``)::

    import numpy as np
    import lazybcast
    from lazybcast._bench_cases import OpCase

    TITLE = "ufunc chains and reductions at source cost"

    def _exp_sum():
        src = np.linspace(0, 1, 1024, dtype=np.float32)
        shape = (262144, 1024)  # 1 GiB logical, 4 kB held
        view, ref = lazybcast.broadcast_to(src, shape), np.broadcast_to(src, shape)
        impls = {"lazybcast": lambda: np.exp(view).sum(axis=1),
                 "numpy": lambda: np.exp(ref).sum(axis=1)}
        try:
            import torch
        except ImportError:
            return impls
        t = torch.from_numpy(src).expand(shape)
        impls["torch"] = lambda: torch.exp(t).sum(dim=1)
        return impls

    CASES = [OpCase("np.exp(view).sum(axis=1), (1024,) f4 -> (262144,1024)",
                    {"ufunc", "reduction", "quick"}, _exp_sum, nbytes=4096, rtol=1e-5)]

Results that are views are compared with ``np.asarray``; a case that raises is reported and
skipped; ``--quick`` runs the cases tagged ``quick`` (keep them short: CI runs it).
"""


def groups(modules=None):
    """groups(modules=None)

    ``[(title, cases), ...]`` of the extra case groups of ``modules`` (default
    :data:`EXTRA_GROUPS`) that can be imported; a module that does not exist is skipped (an
    error inside one that does is raised, and so is a ``TypeError`` for ``CASES`` items that
    are neither :class:`OpCase` nor :class:`Case`).

    Examples
    --------
    >>> groups(["lazybcast._no_such_bench_module"])
    []
    """
    found = []
    for name in EXTRA_GROUPS if modules is None else modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name or name.startswith(f"{exc.name}."):
                continue  # the group's module (or its package) is not there
            raise
        cases = list(getattr(module, "CASES", ()))
        wrong = [c for c in cases if not isinstance(c, (Case, OpCase))]
        if wrong:
            raise TypeError(f"{name}.CASES must hold lazybcast._bench_cases.OpCase or Case "
                            f"objects; got {type(wrong[0]).__name__} ({wrong[0]!r})")
        found.append((getattr(module, "TITLE", name), cases))
    return found
