"""materialize(out=) against np.copyto(out, np.broadcast_to(...)) and the write limit.

The cases are :data:`lazybcast._bench_cases.CASES` (shared with ``python -m lazybcast bench``).
Each case is one pytest-benchmark group, so the four callables sit side by side:

* ``lazybcast``: ``view.materialize(out=out)``
* ``numpy``: ``np.copyto(out, np.broadcast_to(...))`` (the broadcast view made once, outside
  the timing, as the lazybcast view is)
* ``fill`` and ``memset``: ``out.fill(0)`` and a C ``memset`` of the same buffer; the faster
  of the two is the write limit;
* ``memset-nonzero``: a ``memset`` with a non-zero byte. Some machines write zeros to memory
  faster than anything else (this 2-core EPYC VM: about twice as fast beyond the cache), so
  this is the limit for writing real data.

All write into one preallocated ``out`` per case.
"""

import ctypes

import numpy as np
import pytest

from lazybcast._bench_cases import CASES, HUGE

IMPLS = ("lazybcast", "numpy", "fill", "memset", "memset-nonzero")

# Threads scaling: every case of 32 MiB or more, materialize(threads=1) against threads=2.
SCALING = [case for case in CASES if case.nbytes >= 32 << 20]


def _skip_huge_in_smoke(case, smoke):
    if smoke and case.nbytes >= HUGE:
        pytest.skip("output >= 64 MiB: runs only when benchmarks are enabled")


def _same_bytes(out, ref):
    return np.array_equal(out.reshape(-1).view(np.uint8),
                          np.ascontiguousarray(ref).reshape(-1).view(np.uint8))


@pytest.fixture(scope="module", params=CASES, ids=[case.name for case in CASES])
def built(request, smoke):
    """(case, view, NumPy's broadcast view, preallocated out), built once per case."""
    case = request.param
    _skip_huge_in_smoke(case, smoke)
    _, view, _ = case()
    return case, view, np.asarray(view), np.empty(view.shape, view.dtype)


@pytest.mark.parametrize("impl", IMPLS)
def test_materialize(benchmark, built, impl):
    case, view, ref, out = built
    benchmark.group = case.name
    benchmark.extra_info["nbytes"] = case.nbytes
    benchmark.extra_info["tags"] = sorted(case.tags)
    address, nbytes = out.ctypes.data, out.nbytes
    fn = {
        "lazybcast": lambda: view.materialize(out=out),
        "numpy": lambda: np.copyto(out, ref),
        "fill": lambda: out.fill(0),
        "memset": lambda: ctypes.memset(address, 0, nbytes),
        "memset-nonzero": lambda: ctypes.memset(address, 0x5A, nbytes),
    }[impl]
    out.fill(0)
    benchmark(fn)
    if impl in ("lazybcast", "numpy"):
        assert _same_bytes(out, ref), f"{impl} wrote wrong values for {case.name}"


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", SCALING, ids=[case.name for case in SCALING])
def test_threads(benchmark, smoke, case, threads):
    _skip_huge_in_smoke(case, smoke)
    _, view, _ = case()
    out = np.empty(view.shape, view.dtype)
    benchmark.group = f"threads: {case.name}"
    benchmark.extra_info["nbytes"] = case.nbytes
    benchmark(view.materialize, out=out, threads=threads)
    assert _same_bytes(out, np.asarray(view))
