"""The measuring half of ``python -m lazybcast bench`` (:mod:`lazybcast._bench`): each case's
callables timed in turns (:func:`_time_interleaved`), and the values they wrote checked
against NumPy's. The tables and summaries are in :mod:`lazybcast._bench_report`.
"""

import ctypes
import statistics
import time

import numpy as np

from lazybcast._bench_peers import source_bytes, torch_copy
from lazybcast._bench_report import _RATIO_KEY

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

    After a turn whose calls used more CPU time than wall time (other threads ran), the next
    turn waits until this process is quiet again (:func:`_quiesce`).
    """
    calls = {key: (v if isinstance(v, tuple) else (None, v)) for key, v in fns.items()}
    for setup, fn in calls.values():  # warm up: page faults, caches, lazy imports, threads
        if setup is not None:
            setup()
        fn()
    samples = {key: [] for key in calls}
    clock, cpu = time.perf_counter, time.process_time
    start = clock()
    for i in range(max_repeat):
        for key, (setup, fn) in calls.items():
            if setup is not None:
                setup()
            c0, w0 = cpu(), clock()
            fn()
            t0 = clock()
            fn()
            t1 = clock()
            samples[key].append(t1 - t0)
            if _others_ran(cpu() - c0, t1 - w0, slack=20e-6):
                _quiesce()
        if i + 1 >= min_repeat and clock() - start > budget:
            break
    return {key: {"best": min(v), "median": statistics.median(v), "n": len(v)}
            for key, v in samples.items()}


def _quiesce(step=0.0005, limit=0.05):
    """Wait (at most ``limit`` seconds) until no other thread of this process uses a CPU.

    Thread pools keep their workers spinning after a parallel call, waiting for the next:
    torch's OpenMP workers (libgomp) used 10-12 ms of CPU after a 4 MB two-thread copy
    (measured with getrusage; 0.5-1.3 ms with OMP_WAIT_POLICY=PASSIVE), lazybcast's helpers up
    to HELPER_SPIN_US (1 ms). Timed during that spin, the next callable has one core less: on
    a 2-CPU machine lazybcast's two-thread copies of 4-8 MB read no faster than one thread
    when they followed torch's turn, and 1.9x faster in a loop of their own. Each callable's
    own untimed call still finds its own workers warm, as in a user's loop.

    The wait is a busy loop, not a sleep: after even a few milliseconds idle this VM's next
    ~20 copies of 4 MB ran up to 2.5x slower, ramping back (Zen 3, KVM).
    """
    clock, cpu = time.perf_counter, time.process_time
    deadline = clock() + limit
    while True:
        c0, w0 = cpu(), clock()
        while clock() - w0 < step:
            pass
        w1 = clock()
        if not _others_ran(cpu() - c0, w1 - w0) or w1 > deadline:
            return


def _others_ran(cpu_seconds, wall_seconds, slack=0.0):
    """Whether this process used more CPU time than the calling thread alone could (by 20%
    and ``slack`` seconds): other threads of it ran meanwhile."""
    return cpu_seconds > 1.2 * wall_seconds + slack


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
