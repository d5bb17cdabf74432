"""``python -m lazybcast bench``: materialize() against NumPy, PyTorch and the write limit.

For every case of :mod:`lazybcast._bench_cases`, on one preallocated output, time

* ``view.materialize(out=out)`` (lazybcast; ``threads=`` as given, default the library's own
  choice);
* ``np.copyto(out, np.broadcast_to(...))`` (NumPy; the broadcast view is made once, outside
  the timing, exactly as the lazybcast view is);
* the same copy in PyTorch with one and with two threads (``torch 1t``, ``torch 2t``; optional,
  ``n/a`` without torch; see :mod:`lazybcast._bench_peers`);
* the write limit, with one and two threads: a ``memset`` of the output with a non-zero byte,
  and for cases whose source is as large as the output (transposes, layout changes) a
  ``memcpy`` of the same bytes. "of limit" is the faster of the right bound's two timings over
  lazybcast's time.

Each timed sample is one call between two ``time.perf_counter()`` reads. The callables take
turns within every round, so machine noise hits them alike; a case stops after its time budget
(and at least ``min_repeat`` rounds). Best and median are kept; the table shows best. The
values written by lazybcast and torch are checked against NumPy's after timing.

Extra case groups (:data:`lazybcast._bench_cases.EXTRA_GROUPS`, e.g. ufunc chains) follow, one
table each, against NumPy and torch.

The ``--json`` report: ``command``, ``quick``, ``budget``, ``threads``, ``elapsed``,
``machine`` (:func:`lazybcast._bench_machine.describe`), ``summary`` (:func:`summarize`),
``results`` (one dict per case: ``name``, ``tags``, ``shape``, ``dtype``, ``nbytes``,
``source_nbytes`` (bytes that must be read), ``times`` (per callable: ``best``, ``median``,
``n``; callables ``lazybcast``, ``numpy``, ``torch 1t``, ``torch 2t``, ``memset 1t``,
``memset 2t``, ``copy 1t``, ``copy 2t``, those that ran), ``torch`` (the torch code timed, or
why not), ``bound`` (``memset`` or ``copy``), ``limit`` (the fastest callable of the bound),
``speedup`` / ``speedup_torch_1t`` / ``speedup_torch_2t`` (peer time / lazybcast time, None
without the peer), ``speedup_median``, ``fraction_of_limit``, ``correct``,
``torch_correct``), ``scaling`` (``--scaling``: per case ``times`` of ``threads=1``,
``threads=2``, ``torch 1t``, ``torch 2t``, ``speedup`` (2t over 1t), ``limit`` (name, time),
``fraction_of_limit_1t`` / ``_2t``, ``vs_torch_1t`` / ``_2t``) and ``groups`` (per extra group:
``title``, ``results``, ``ops``, ``summary``).
"""

import ctypes
import json
import math
import statistics
import sys
import textwrap
import time

import numpy as np

from lazybcast._bench_cases import EXTRA_GROUPS, HUGE, Case, groups, select
from lazybcast._bench_machine import describe, machine_line
from lazybcast._bench_peers import Limits, load_torch, source_bytes, torch_copy

__all__ = ["run", "run_cases", "summarize", "PEERS"]

PEERS = ("numpy", "torch 1t", "torch 2t")
"""What lazybcast is compared with; the ratio keys are ``speedup``, ``speedup_torch_1t``,
``speedup_torch_2t`` (the peer's best time over lazybcast's: > 1 means lazybcast is faster)."""

_RATIO_KEY = {"numpy": "speedup", "torch 1t": "speedup_torch_1t",
              "torch 2t": "speedup_torch_2t"}

TARGETS = {"memset": 0.9, "copy": 0.7}
"""Issue 12's targets for outputs >= 64 MB: fraction of the write limit by kind of bound."""

_SCALING_MIN = 4 << 20  # outputs this large or larger get the threads=1 vs threads=2 table


# -- timing -----------------------------------------------------------------------------------

def _time_interleaved(fns, budget, min_repeat, max_repeat):
    """Best, median and count of single-call times of each callable, taking turns per round.

    A value of ``fns`` is a callable or a ``(setup, fn)`` pair: ``setup()`` runs before each
    call of ``fn``, outside the timing (torch's thread count).

    In each turn a callable is called twice and only the second call is timed. The first
    absorbs what the previous callable left behind: its system calls (thread wake-ups and
    joins) and the bench's own helper thread taking the GIL back after a two-thread limit
    call. Timed cold, a 4 kB copy read 2.4 us against 0.5 us warm for lazybcast and 3.4
    against 1.0 us for NumPy (Zen 3 VM), which measured the neighbour, not the copy. Every
    callable gets the same untimed call, so the peers are treated alike.
    """
    calls = {key: (v if isinstance(v, tuple) else (None, v)) for key, v in fns.items()}
    for setup, fn in calls.values():  # warm up: page faults, caches, lazy imports, threads
        if setup is not None:
            setup()
        fn()
    samples = {key: [] for key in calls}
    clock = time.perf_counter
    start = clock()
    for i in range(max_repeat):
        for key, (setup, fn) in calls.items():
            if setup is not None:
                setup()
            fn()
            t0 = clock()
            fn()
            samples[key].append(clock() - t0)
        if i + 1 >= min_repeat and clock() - start > budget:
            break
    return {key: {"best": min(v), "median": statistics.median(v), "n": len(v)}
            for key, v in samples.items()}


def _same_bytes(out, ref):
    a = np.ascontiguousarray(out).reshape(-1).view(np.uint8)
    b = np.ascontiguousarray(ref).reshape(-1).view(np.uint8)
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _scribble(out):
    """Overwrite ``out`` (so a check cannot pass on what an earlier writer left)."""
    ctypes.memset(out.ctypes.data, 0xA5, out.nbytes)


def _ratio(times, peer, stat="best", ours="lazybcast"):
    if peer not in times or ours not in times:
        return None
    return times[peer][stat] / times[ours][stat]


class _Setup:
    """What every case of a run shares: the budget, lazybcast's threads, torch, the limits."""

    def __init__(self, budget, min_repeat, max_repeat, threads, torch, limits):
        self.budget, self.min_repeat, self.max_repeat = budget, min_repeat, max_repeat
        self.threads, self.torch, self.limits = threads, torch, limits

    def time(self, fns):
        return _time_interleaved(fns, self.budget, self.min_repeat, self.max_repeat)

    def torch_threads(self, fn):
        """{"torch 1t": (setup, fn), "torch 2t": (setup, fn)}.

        The setup sets torch's thread count; the untimed call that every callable gets before
        its timed one (:func:`_time_interleaved`) then pays for the first parallel region after
        a change of thread count, which forms OpenMP's team anew (measured 5-15% slower at
        best-of-N for a 4 MB copy) and which a user who does not switch never pays.
        """
        torch = self.torch
        return {f"torch {t}t": ((lambda t=t: torch.set_num_threads(t)), fn) for t in (1, 2)}


def _measure(case, setup):
    name, view, tags = case()
    out = np.empty(view.shape, view.dtype)
    ref = np.asarray(view)  # NumPy's zero-copy broadcast view of the same source
    threads = setup.threads
    read = source_bytes(ref)
    bound = "copy" if out.nbytes and read >= out.nbytes else "memset"
    fns = {
        "lazybcast": lambda: view.materialize(out=out, threads=threads),
        "numpy": lambda: np.copyto(out, ref),
    }
    torch_fn, torch_what = None, "n/a: torch not installed or --no-torch"
    if setup.torch is not None:
        torch_fn, torch_what = torch_copy(setup.torch, ref, out)
        if torch_fn is not None:
            fns.update(setup.torch_threads(torch_fn))
    fns.update(setup.limits.memset(out))
    copy_src = None
    if bound == "copy":
        copy_src = np.full(out.nbytes, 0x33, np.uint8)
        fns.update(setup.limits.copy(out, copy_src))
    times = setup.time(fns)
    del copy_src

    _scribble(out)
    view.materialize(out=out, threads=threads)
    correct = _same_bytes(out, ref)
    torch_correct = None
    if torch_fn is not None:
        _scribble(out)
        torch_correct = _same_bytes(torch_fn().numpy(), ref)
    limit = min((k for k in times if k.startswith(bound + " ")), key=lambda k: times[k]["best"])
    result = {
        "name": name,
        "tags": sorted(tags),
        "shape": list(view.shape),
        "dtype": str(view.dtype),
        "nbytes": int(out.nbytes),
        "source_nbytes": int(read),
        "times": times,
        "torch": torch_what,
        "bound": bound,
        "limit": limit,
        "speedup_median": _ratio(times, "numpy", "median"),
        "fraction_of_limit": times[limit]["best"] / times["lazybcast"]["best"],
        "correct": correct,
        "torch_correct": torch_correct,
    }
    for peer, key in _RATIO_KEY.items():
        result[key] = _ratio(times, peer)
    return result


def _measure_scaling(case, setup, limit):
    """threads=1 against threads=2 for lazybcast, beside torch with 1 and 2 threads."""
    name, view, _ = case()
    out = np.empty(view.shape, view.dtype)
    fns = {f"threads={t}": (lambda t=t: view.materialize(out=out, threads=t)) for t in (1, 2)}
    if setup.torch is not None:
        torch_fn, _ = torch_copy(setup.torch, np.asarray(view), out)
        if torch_fn is not None:
            fns.update(setup.torch_threads(torch_fn))
    times = setup.time(fns)
    t1, t2 = times["threads=1"], times["threads=2"]
    return {
        "name": name,
        "nbytes": int(out.nbytes),
        "times": times,
        "speedup": t1["best"] / t2["best"],
        "speedup_median": t1["median"] / t2["median"],
        "limit": limit,
        "fraction_of_limit_1t": None if limit is None else limit[1] / t1["best"],
        "fraction_of_limit_2t": None if limit is None else limit[1] / t2["best"],
        "vs_torch_1t": _ratio(times, "torch 1t", ours="threads=1"),
        "vs_torch_2t": _ratio(times, "torch 2t", ours="threads=2"),
    }


def _as_numpy(value):
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        value = value.detach().numpy()
    return np.asarray(value)


def _close(value, expected, rtol):
    a, b = _as_numpy(value), _as_numpy(expected)
    if a.shape != b.shape:
        return False
    if rtol == 0 or b.dtype.kind not in "fc":
        return bool(np.array_equal(a, b, equal_nan=b.dtype.kind in "fc"))
    return bool(np.allclose(a, b, rtol=rtol, atol=0, equal_nan=True))


def _measure_op(case, setup):
    name, impls, tags = case()
    fns = {"lazybcast": impls["lazybcast"], "numpy": impls["numpy"]}
    torch_fn = impls.get("torch") if setup.torch is not None else None
    if torch_fn is not None:
        fns.update(setup.torch_threads(torch_fn))
    times = setup.time(fns)
    expected = impls["numpy"]()
    result = {
        "name": name,
        "tags": sorted(tags),
        "nbytes": case.nbytes,
        "times": times,
        "speedup_median": _ratio(times, "numpy", "median"),
        "correct": _close(impls["lazybcast"](), expected, case.rtol),
        "torch_correct": None if torch_fn is None else _close(torch_fn(), expected, case.rtol),
    }
    for peer, key in _RATIO_KEY.items():
        result[key] = _ratio(times, peer)
    return result


# -- reporting --------------------------------------------------------------------------------

def _fmt_time(seconds):
    if seconds is None:
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds / 1e-9:.0f} ns"


def _fmt_bytes(n):
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _fmt_ratio(value, suffix="x"):
    return "n/a" if value is None else f"{value:.2f}{suffix}"


def _best(times, key):
    return times[key]["best"] if key in times else None


def _flag(r):
    flags = []
    if not r["correct"]:
        flags.append("[WRONG VALUES]")
    if r.get("torch_correct") is False:
        flags.append("[torch: wrong values]")
    return r["name"] + "".join("  " + f for f in flags)


COLUMNS = ("case", "out", "lazybcast", "numpy", "torch 1t", "torch 2t", "limit", "bound",
           "vs numpy", "median", "vs torch 1t", "vs torch 2t", "of limit")
_WIDTHS = (9, 10, 10, 10, 10, 10, 9, 8, 8, 11, 11, 8)


def row(r):
    """The table cells of one materialize result."""
    t = r["times"]
    return (
        _flag(r),
        _fmt_bytes(r["nbytes"]),
        _fmt_time(_best(t, "lazybcast")),
        _fmt_time(_best(t, "numpy")),
        _fmt_time(_best(t, "torch 1t")),
        _fmt_time(_best(t, "torch 2t")),
        _fmt_time(_best(t, r["limit"])),
        r["limit"],
        _fmt_ratio(r["speedup"]),
        _fmt_ratio(r["speedup_median"]),
        _fmt_ratio(r["speedup_torch_1t"]),
        _fmt_ratio(r["speedup_torch_2t"]),
        f"{r['fraction_of_limit']:.2f}",
    )


OP_COLUMNS = ("case", "lazybcast", "numpy", "torch 1t", "torch 2t", "vs numpy", "median",
              "vs torch 1t", "vs torch 2t")
_OP_WIDTHS = (10, 10, 10, 10, 8, 8, 11, 11)


def op_row(r):
    """The table cells of one extra-group (OpCase) result."""
    t = r["times"]
    return (_flag(r), _fmt_time(_best(t, "lazybcast")), _fmt_time(_best(t, "numpy")),
            _fmt_time(_best(t, "torch 1t")), _fmt_time(_best(t, "torch 2t")),
            _fmt_ratio(r["speedup"]), _fmt_ratio(r["speedup_median"]),
            _fmt_ratio(r["speedup_torch_1t"]), _fmt_ratio(r["speedup_torch_2t"]))


SCALING_COLUMNS = ("case", "out", "threads=1", "threads=2", "2t / 1t", "median", "limit",
                   "of limit 1t", "of limit 2t", "1t vs torch 1t", "2t vs torch 2t")
_SCALING_WIDTHS = (9, 10, 10, 8, 8, 9, 11, 11, 14, 14)


def scaling_row(r):
    """The table cells of one threads=1 / threads=2 result."""
    t = r["times"]
    limit = r["limit"]
    return (r["name"], _fmt_bytes(r["nbytes"]), _fmt_time(_best(t, "threads=1")),
            _fmt_time(_best(t, "threads=2")), _fmt_ratio(r["speedup"]),
            _fmt_ratio(r["speedup_median"]), "n/a" if limit is None else limit[0],
            _fmt_ratio(r["fraction_of_limit_1t"], ""), _fmt_ratio(r["fraction_of_limit_2t"], ""),
            _fmt_ratio(r["vs_torch_1t"]), _fmt_ratio(r["vs_torch_2t"]))


def _text_line(cells, widths):
    first, *rest = cells
    return f"{first:<{widths[0]}}" + "".join(f" {c:>{w}}" for c, w in zip(rest, widths[1:]))


def _geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _peer_summary(results):
    peers = {}
    for peer, key in _RATIO_KEY.items():
        rated = [r for r in results if r.get(key) is not None]
        worst = min(rated, key=lambda r: r[key]) if rated else None
        peers[peer] = {
            "cases": len(rated),
            "geomean": _geomean([r[key] for r in rated]),
            "worst": None if worst is None else {"name": worst["name"], "speedup": worst[key]},
            "slower": [r["name"] for r in rated if r[key] < 1.0],
        }
    return peers


def summarize(results):
    """Headline numbers of a list of materialize results (the ``results`` of :func:`run_cases`).

    Returns a dict: ``cases``; ``geomean_speedup``, ``worst`` and ``slower_than_numpy`` (against
    NumPy); ``peers`` (for each of :data:`PEERS`: ``cases`` compared, ``geomean``, ``worst``
    name and speedup, ``slower`` names); ``huge`` (for each kind of bound, ``memset`` and
    ``copy``: the name, fraction of the limit and target of the worst case of at least 64 MiB,
    or None); ``wrong`` and ``torch_wrong`` (names of cases whose output did not match NumPy's).
    """
    peers = _peer_summary(results)
    huge = {}
    for bound, target in TARGETS.items():
        rows = [r for r in results if r["nbytes"] >= HUGE and r.get("bound") == bound]
        worst = min(rows, key=lambda r: r["fraction_of_limit"]) if rows else None
        huge[bound] = None if worst is None else {
            "name": worst["name"], "fraction": worst["fraction_of_limit"], "target": target,
            "cases": len(rows)}
    numpy_peer = peers["numpy"]
    return {
        "cases": len(results),
        "geomean_speedup": numpy_peer["geomean"],
        "worst": numpy_peer["worst"],
        "slower_than_numpy": numpy_peer["slower"],
        "peers": peers,
        "huge": huge,
        "wrong": [r["name"] for r in results if not r["correct"]],
        "torch_wrong": [r["name"] for r in results if r.get("torch_correct") is False],
    }


def summarize_ops(results):
    """Headline numbers of an extra group's results: ``cases``, ``peers``, ``wrong``,
    ``torch_wrong`` (as :func:`summarize`)."""
    return {"cases": len(results), "peers": _peer_summary(results),
            "wrong": [r["name"] for r in results if not r["correct"]],
            "torch_wrong": [r["name"] for r in results if r.get("torch_correct") is False]}


def summary_lines(summary):
    """The summary as lines of text (printed, and bold in the markdown)."""
    if not summary["cases"]:
        return ["no cases selected"]
    peers = summary["peers"]
    geo, low, slow = [], [], []
    for peer in PEERS:
        p = peers[peer]
        if not p["cases"]:
            geo.append(f"{peer} n/a")
            continue
        geo.append(f"{p['geomean']:.2f}x over {peer} ({p['cases']} case"
                   + ("s)" if p["cases"] != 1 else ")"))
        low.append(f"{p['worst']['speedup']:.2f}x vs {peer} ({p['worst']['name']})")
        slow.append(f"{len(p['slower'])} vs {peer}")
    lines = ["geometric-mean speedup: " + ", ".join(geo)]
    if low:
        lines.append("lowest: " + "; ".join(low))
        lines.append("cases slower than the peer: " + ", ".join(slow))
    huge = summary.get("huge") or {}
    parts = []
    for bound in TARGETS:
        h = huge.get(bound)
        if h is not None:
            parts.append(f"{h['fraction']:.2f} of the {bound} limit ({h['name']}; "
                         f"target >= {h['target']})")
    if parts:
        lines.append("outputs >= 64 MiB, lowest: " + "; ".join(parts))
    if summary["wrong"]:
        lines.append(f"WRONG VALUES in {len(summary['wrong'])} case(s): "
                     + "; ".join(summary["wrong"]))
    if summary.get("torch_wrong"):
        lines.append(f"torch wrote different values in {len(summary['torch_wrong'])} case(s) "
                     f"(the torch equivalent is wrong): " + "; ".join(summary["torch_wrong"]))
    return lines


_LEGEND = ("lazybcast = view.materialize(out=out); numpy = np.copyto(out, broadcast view); "
           "torch 1t/2t = out.copy_(src.expand(...)) (permute/flip for layout cases) with "
           "torch.set_num_threads(1)/(2); limit = the faster of 1 and 2 threads of the case's "
           "bound: memset = memset of a non-zero byte, copy = memcpy of the same bytes (sources "
           "as large as the output); vs X = X's time / lazybcast's (> 1: lazybcast faster); "
           "median = vs numpy on median times; of limit = limit time / lazybcast time.")


# -- running ----------------------------------------------------------------------------------

def run_cases(cases, *, budget=1.0, min_repeat=5, max_repeat=2000, threads=None, torch=None,
              progress=None, on_result=None):
    """Time materialize ``cases`` and return the list of per-case result dicts.

    ``torch`` is the torch module for the peer columns (None: n/a). ``progress(i, n, case)``
    is called before each case, ``on_result(result)`` after it.
    """
    results = []
    with Limits() as limits:
        setup = _Setup(budget, min_repeat, max_repeat, threads, torch, limits)
        for i, case in enumerate(cases, 1):
            if progress is not None:
                progress(i, len(cases), case)
            result = _measure(case, setup)
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


class _Printer:
    """Progress on stderr (one rewritten line on a terminal), table rows on stdout."""

    def __init__(self):
        self.tty = sys.stderr.isatty()

    def progress(self, i, n, case):
        msg = f"[{i}/{n}] {case.name} ({_fmt_bytes(case.nbytes)})"
        sys.stderr.write("\r\033[K" + msg if self.tty else msg + "\n")
        sys.stderr.flush()

    def line(self, text):
        if self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
        print(text, flush=True)


def _table_head(printer, columns, widths):
    header = _text_line(columns, widths)
    printer.line(header)
    printer.line("-" * len(header))
    return header


def run(quick=False, *, json_path=None, plot_path=None, markdown_paths=(), threads=None,
        pattern=None, budget=None, max_bytes=None, scaling=False, torch=True, command=None,
        extra_groups=None):
    """Run the suite, print the machine line, the tables and summary; return an exit code.

    ``quick`` runs the cases tagged ``quick`` with a short budget per case (about 20 s with
    torch). ``scaling`` adds ``threads=1`` against ``threads=2`` for outputs of 4 MiB or more.
    ``torch=False`` leaves torch out (its columns say n/a). ``markdown_paths``: files whose
    ``bench`` markers get the results (see :mod:`lazybcast._bench_markdown`).
    ``extra_groups``: module names instead of :data:`~lazybcast._bench_cases.EXTRA_GROUPS`.
    The exit code is 1 when lazybcast wrote wrong values, else 0.
    """
    if isinstance(markdown_paths, str):
        markdown_paths = [markdown_paths]
    if plot_path is not None:
        from lazybcast._bench_plot import plot_problem

        problem = plot_problem()
        if problem:
            print(f"note: {problem}; no chart will be written", file=sys.stderr)
            plot_path = None
    torch_module = load_torch() if torch else None
    machine = describe(torch_module)
    saved_torch_threads = None if torch_module is None else torch_module.get_num_threads()

    cases = select(quick=quick, max_bytes=max_bytes, pattern=pattern)
    extra = []
    for module in EXTRA_GROUPS if extra_groups is None else extra_groups:
        try:
            found = groups([module])
        except Exception as exc:  # one broken group must not stop the suite: say why, go on
            print(f"note: case group {module} skipped: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            continue
        for title, group in found:
            chosen = select(quick=quick, max_bytes=max_bytes, pattern=pattern, cases=group)
            if chosen:
                extra.append((title, chosen))
    if budget is None:
        budget = 0.4 if quick else 1.0
    min_repeat = 3 if quick else 5
    max_repeat = 300 if quick else 2000

    printer = _Printer()
    printer.line("Machine: " + machine_line(machine))
    if torch_module is None:
        printer.line("torch: n/a (" + ("not installed" if torch else "--no-torch")
                     + "); its columns say n/a")
    printer.line("")
    name_width = max([len(COLUMNS[0])] + [len(c.name) for c in cases]) + 2
    t0 = time.perf_counter()
    results, scaled, group_reports = [], [], []
    try:
        with Limits() as limits:
            setup = _Setup(budget, min_repeat, max_repeat, threads, torch_module, limits)
            if cases:
                _table_head(printer, COLUMNS, (name_width,) + _WIDTHS)
            for i, case in enumerate(cases, 1):
                printer.progress(i, len(cases), case)
                result = _measure(case, setup)
                results.append(result)
                printer.line(_text_line(row(result), (name_width,) + _WIDTHS))
            summary = summarize(results)
            if cases:
                printer.line("-" * (name_width + sum(w + 1 for w in _WIDTHS)))
            for line in summary_lines(summary):
                printer.line(line)
            for line in textwrap.wrap(_LEGEND, 100):
                printer.line(line)

            big = [(case, r) for case, r in zip(cases, results)
                   if case.nbytes >= _SCALING_MIN] if scaling else []
            if big:
                printer.line("")
                printer.line(f"threads: materialize(threads=1) against threads=2, outputs >= "
                             f"{_SCALING_MIN >> 20} MiB; torch with 1 and 2 threads beside")
                _table_head(printer, SCALING_COLUMNS, (name_width,) + _SCALING_WIDTHS)
                for i, (case, r) in enumerate(big, 1):
                    printer.progress(i, len(big), case)
                    limit = (r["limit"], r["times"][r["limit"]]["best"])
                    s = _measure_scaling(case, setup, limit)
                    scaled.append(s)
                    printer.line(_text_line(scaling_row(s), (name_width,) + _SCALING_WIDTHS))

            for title, group in extra:
                printer.line("")
                printer.line(f"{title}:")
                ops = [c for c in group if not isinstance(c, Case)]
                views = [c for c in group if isinstance(c, Case)]
                width = max([len(OP_COLUMNS[0])] + [len(c.name) for c in group]) + 2
                op_results, view_results = [], []
                if views:
                    _table_head(printer, COLUMNS, (width,) + _WIDTHS)
                    for i, case in enumerate(views, 1):
                        printer.progress(i, len(views), case)
                        view_results.append(_measure(case, setup))
                        printer.line(_text_line(row(view_results[-1]), (width,) + _WIDTHS))
                errors = []
                if ops:
                    _table_head(printer, OP_COLUMNS, (width,) + _OP_WIDTHS)
                    for i, case in enumerate(ops, 1):
                        printer.progress(i, len(ops), case)
                        try:
                            op_results.append(_measure_op(case, setup))
                        except Exception as exc:  # a broken case: say so, time the others
                            errors.append(case.name)
                            printer.line(f"{case.name}  [ERROR: {type(exc).__name__}: {exc}]")
                            continue
                        printer.line(_text_line(op_row(op_results[-1]), (width,) + _OP_WIDTHS))
                group_summary = summarize_ops(op_results + view_results)
                group_summary["wrong"] += errors
                for line in summary_lines({**group_summary, "huge": {}}):
                    printer.line(line)
                group_reports.append({"title": title, "results": view_results,
                                      "ops": op_results, "summary": group_summary})
    finally:
        if saved_torch_threads is not None:
            torch_module.set_num_threads(saved_torch_threads)
    elapsed = time.perf_counter() - t0
    printer.line(f"{len(results) + sum(len(g['results']) + len(g['ops']) for g in group_reports)}"
                 f" cases in {elapsed:.1f} s.")

    report = {
        "command": command or "python -m lazybcast bench" + (" --quick" if quick else ""),
        "quick": quick,
        "budget": budget,
        "threads": threads,
        "elapsed": elapsed,
        "machine": machine,
        "summary": summary,
        "results": results,
        "scaling": scaled,
        "groups": group_reports,
    }
    if json_path is not None:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
        print(f"wrote {json_path}", file=sys.stderr)
    if markdown_paths:
        from lazybcast._bench_markdown import write_blocks

        for path in markdown_paths:
            write_blocks(path, report)
            print(f"wrote {path}", file=sys.stderr)
    if plot_path is not None:
        from lazybcast._bench_plot import plot

        plot(report, plot_path)
        print(f"wrote {plot_path}", file=sys.stderr)
    wrong = summary["wrong"] + [n for g in group_reports for n in g["summary"]["wrong"]]
    return 1 if wrong else 0
