"""The lazy-operation benchmark suite: ufunc chains and reductions on a view, side by side with
NumPy on the same logical array (``np.broadcast_to``) and PyTorch on ``expand``.

Shaped like :mod:`lazybcast._bench_cases`: :data:`CASES` is a list of named factories; calling
a case builds its operands and returns ``(name, impls, tags)``, where ``impls`` maps
``"lazybcast"``, ``"numpy"`` and, when torch imports, ``"torch"`` to zero-argument callables
that compute the same result. lazybcast and NumPy run the very same expression (a view and an
ndarray answer the same methods); torch runs its own spelling on ``torch.from_numpy(source)
.expand(shape)``. The logical size and the source size are known without building anything,
so the ratio to expect, logical / source, is part of each case.

``python -m lazybcast bench --lazy`` prints the table (:func:`run`);
``benchmarks/bench_lazy_ops.py`` runs the same cases under pytest-benchmark.

>>> from lazybcast._bench_lazy import CASES, select
>>> case = select(quick=True, pattern="exp")[0]
>>> name, impls, tags = case()
>>> name, sorted(impls)[:2], case.nbytes, case.source_nbytes
('np.exp(v).sum(axis=1) (1024,) f4 -> (16384,1024)', ['lazybcast', 'numpy'], 67108864, 4096)
"""

import math
import sys

import numpy as np

from lazybcast._api import broadcast_to

__all__ = ["CASES", "OpCase", "run", "select"]

MiB = 1 << 20


class OpCase:
    """One benchmark: an expression on broadcast operands.

    Parameters
    ----------
    expr : str
        The expression as a user writes it (the name starts with it).
    operands : list of (source shape, logical shape)
        Each operand is ``broadcast_to(values(source), shape)``.
    dtype : numpy.dtype
    tags : iterable of str
    op : callable
        ``op(*operands)`` for views and for NumPy arrays alike.
    torch_op : callable or None
        The same with torch tensors.
    """

    __slots__ = ("name", "expr", "operands", "dtype", "tags", "_op", "_torch_op")

    def __init__(self, expr, operands, dtype, tags, op, torch_op=None):
        self.expr = expr
        self.operands = [(tuple(s), tuple(t)) for s, t in operands]
        self.dtype = np.dtype(dtype)
        src = " ".join(_fmt(s) for s, _ in self.operands)
        self.name = f"{expr} {src} {self.dtype.str[1:]} -> {_fmt(self.operands[0][1])}"
        self.tags = frozenset(tags)
        self._op, self._torch_op = op, torch_op

    @property
    def nbytes(self):
        """Logical bytes of the largest operand (what NumPy and torch work through)."""
        return max(math.prod(t) for _, t in self.operands) * self.dtype.itemsize

    @property
    def source_nbytes(self):
        """Bytes of all sources together (what lazybcast works through)."""
        return sum(math.prod(s) for s, _ in self.operands) * self.dtype.itemsize

    def __call__(self, torch=None):
        sources = [_values(s, self.dtype, k) for k, (s, _) in enumerate(self.operands)]
        views = [broadcast_to(src, t) for src, (_, t) in zip(sources, self.operands)]
        arrays = [np.broadcast_to(src, t) for src, (_, t) in zip(sources, self.operands)]
        op = self._op
        impls = {"lazybcast": lambda: op(*views), "numpy": lambda: op(*arrays)}
        if torch is not None and self._torch_op is not None:
            tensors = [torch.from_numpy(src).expand(t)
                       for src, (_, t) in zip(sources, self.operands)]
            torch_op = self._torch_op
            impls["torch"] = lambda: torch_op(*tensors)
        return self.name, impls, self.tags

    def __repr__(self):
        return f"OpCase({self.name!r})"


def _fmt(shape):
    return "(" + ",".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def _values(shape, dtype, k=0):
    """Deterministic values in [0, 1) (no overflow in exp), distinct per operand."""
    n = math.prod(shape)
    return (((np.arange(n) * 7 + 13 * k) % 101) / 101).astype(dtype).reshape(shape)


CASES: "list[OpCase]" = []


def _build():
    f4, f8 = np.float32, np.float64

    def add(expr, operands, dtype, op, torch_op, quick):
        tags = {"quick"} if quick else set()
        case = OpCase(expr, operands, dtype, tags, op, torch_op)
        if case.nbytes >= 64 * MiB:
            case.tags = case.tags | {"huge"}
        CASES.append(case)

    for rows, quick in ((16384, True), (262144, False)):  # 64 MiB and 1 GiB logical
        add("np.exp(v).sum(axis=1)", [((1024,), (rows, 1024))], f4,
            lambda v: np.exp(v).sum(axis=1), lambda t: t.exp().sum(dim=1), quick)
    for rows, quick in ((2048, True), (32768, False)):  # 16 MiB and 256 MiB logical
        add("(v*2+1).mean()", [((1, 1024), (rows, 1024))], f8,
            lambda v: (v * 2 + 1).mean(), lambda t: (t * 2 + 1).mean(), quick)
        add("v.std(axis=0)", [((rows, 1), (rows, 1024))], f8,
            lambda v: v.std(axis=0), lambda t: t.std(dim=0, correction=0), quick)
        add("(v > 0.5).any(axis=0)", [((1, 1024), (rows, 1024))], f8,
            lambda v: (v > 0.5).any(axis=0), lambda t: (t > 0.5).any(dim=0), quick)
        add("np.nanmean(v, axis=0)", [((rows, 1), (rows, 1024))], f8,
            lambda v: np.nanmean(v, axis=0), lambda t: t.nanmean(dim=0), quick)
        add("v.argmax()", [((1, 1024), (rows, 1024))], f8,
            lambda v: v.argmax(), lambda t: t.argmax(), quick)
    for n, quick in ((512, True), (4096, False)):  # an outer sum: the result is full size
        add("(a + b).max()", [((n, 1), (n, n)), ((1, n), (n, n))], f4,
            lambda a, b: (a + b).max(), lambda a, b: (a + b).max(), quick)


_build()
del _build


def select(*, quick=False, pattern=None, max_bytes=None):
    """The cases to run, in suite order (as :func:`lazybcast._bench_cases.select`)."""
    chosen = []
    for case in CASES:
        if quick and "quick" not in case.tags:
            continue
        if max_bytes is not None and case.nbytes > max_bytes:
            continue
        if pattern is not None and pattern.lower() not in case.name.lower():
            continue
        chosen.append(case)
    return chosen


def _load_torch():
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]
    except (ImportError, OSError):
        return None
    return torch


def _as_numpy(result):
    if hasattr(result, "detach"):  # a torch tensor
        return result.detach().numpy()
    return np.asarray(result)


def check(impls):
    """True if every implementation's result equals NumPy's (floats to 1e-4 relative)."""
    expected = np.asarray(impls["numpy"]())
    for key, fn in impls.items():
        got = _as_numpy(fn())
        if got.shape != expected.shape:
            return False
        if expected.dtype.kind in "fc":
            if not np.allclose(got, expected, rtol=1e-4, atol=1e-6):
                return False
        elif not np.array_equal(got, expected):
            return False
    return True


def _fmt_time(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds / 1e-9:.0f} ns"


def _fmt_ratio(r):
    return "n/a" if r is None else f"{r:.3g}x" if r < 100 else f"{r:.0f}x"


def _fmt_bytes(n):
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.4g} {unit}"
        n /= 1024


def run(quick=False, *, pattern=None, budget=None, torch=True):
    """Time the cases, print one row each; returns a process exit code (1 if a result is
    wrong). torch runs with one thread, as NumPy's ufuncs do."""
    from lazybcast._bench import _time_interleaved

    torch_mod = _load_torch() if torch else None
    threads = None
    if torch_mod is not None:
        threads = torch_mod.get_num_threads()
        torch_mod.set_num_threads(1)
    budget = (0.3 if quick else 1.0) if budget is None else budget
    cases = select(quick=quick, pattern=pattern)
    width = max([len("case")] + [len(c.name) for c in cases]) + 2
    header = (f"{'case':{width}} {'logical':>9} {'source':>8} {'lazybcast':>10} {'numpy':>10} "
              f"{'torch 1t':>10} {'x numpy':>9} {'x torch':>9} {'logical/src':>11}")
    print(header)
    print("-" * len(header), flush=True)
    wrong = 0
    try:
        for case in cases:
            name, impls, _ = case(torch_mod)
            times = _time_interleaved(impls, budget, 3, 2000)
            ok = check(impls)
            wrong += not ok
            best = {k: v["best"] for k, v in times.items()}
            vs_np = best["numpy"] / best["lazybcast"]
            vs_torch = best["torch"] / best["lazybcast"] if "torch" in best else None
            print(f"{name:{width}} {_fmt_bytes(case.nbytes):>9} "
                  f"{_fmt_bytes(case.source_nbytes):>8} {_fmt_time(best['lazybcast']):>10} "
                  f"{_fmt_time(best['numpy']):>10} "
                  f"{_fmt_time(best['torch']) if vs_torch else 'n/a':>10} {_fmt_ratio(vs_np):>9} "
                  f"{_fmt_ratio(vs_torch):>9} "
                  f"{case.nbytes / case.source_nbytes:>10.0f}x"
                  + ("" if ok else "  WRONG"), flush=True)
    finally:
        if threads is not None:
            torch_mod.set_num_threads(threads)
    print("x numpy / x torch: the peer's best time over lazybcast's (> 1: lazybcast is faster); "
          "logical/src: the ratio a source-cost computation can reach.", file=sys.stdout)
    return 1 if wrong else 0
