"""materialize(out=) against NumPy, PyTorch and the write limit.

The cases are :data:`lazybcast._bench_cases.CASES` (shared with ``python -m lazybcast bench``).
Each case is one pytest-benchmark group, so the callables sit side by side:

* ``lazybcast``: ``view.materialize(out=out)``
* ``numpy``: ``np.copyto(out, np.broadcast_to(...))`` (the broadcast view made once, outside
  the timing, as the lazybcast view is)
* ``torch-1t`` and ``torch-2t``: the same copy in PyTorch (``out.copy_(src.expand(shape))``,
  ``permute`` for layout changes, ``torch.flip`` for reversed sources) with
  ``torch.set_num_threads(1)`` and ``(2)``; skipped without torch;
* ``memset-1t`` and ``memset-2t``: a C ``memset`` of ``out`` with a non-zero byte, one thread
  or two (halves); the faster is the write limit. Zero bytes are not the limit: some machines
  write them about twice as fast as any other byte (the project's EPYC VMs do);
* ``copy-1t`` and ``copy-2t``: a C ``memcpy`` of the same bytes, the limit for cases whose
  source is as large as the output (transposes, layout changes); skipped for the others.

All write into one preallocated ``out`` per case. See :mod:`lazybcast._bench_peers`.
"""

import numpy as np
import pytest

from lazybcast._bench_cases import CASES, HUGE
from lazybcast._bench_peers import Limits, load_torch, source_bytes, torch_copy

IMPLS = ("lazybcast", "numpy", "torch-1t", "torch-2t", "memset-1t", "memset-2t", "copy-1t",
         "copy-2t")

# Threads scaling: every case of 32 MiB or more, materialize(threads=1) against threads=2.
SCALING = [case for case in CASES if case.nbytes >= 32 << 20]


def _skip_huge_in_smoke(case, smoke):
    if smoke and case.nbytes >= HUGE:
        pytest.skip("output >= 64 MiB: runs only when benchmarks are enabled")


def _same_bytes(out, ref):
    return np.array_equal(np.ascontiguousarray(out).reshape(-1).view(np.uint8),
                          np.ascontiguousarray(ref).reshape(-1).view(np.uint8))


@pytest.fixture(scope="module")
def limits():
    with Limits() as lim:
        yield lim


@pytest.fixture(scope="module")
def torch_module():
    torch = load_torch()
    if torch is None:
        yield None
        return
    threads = torch.get_num_threads()
    yield torch
    torch.set_num_threads(threads)


@pytest.fixture(scope="module", params=CASES, ids=[case.name for case in CASES])
def built(request, smoke):
    """(case, view, NumPy's broadcast view, preallocated out), built once per case."""
    case = request.param
    _skip_huge_in_smoke(case, smoke)
    _, view, _ = case()
    return case, view, np.asarray(view), np.empty(view.shape, view.dtype)


@pytest.mark.parametrize("impl", IMPLS)
def test_materialize(benchmark, built, impl, limits, torch_module):
    case, view, ref, out = built
    benchmark.group = case.name
    benchmark.extra_info["nbytes"] = case.nbytes
    benchmark.extra_info["tags"] = sorted(case.tags)
    copy_bound = source_bytes(ref) >= out.nbytes
    benchmark.extra_info["bound"] = "copy" if copy_bound else "memset"
    kind, _, threads = impl.partition("-")
    if kind == "lazybcast":
        fn = lambda: view.materialize(out=out)  # noqa: E731
    elif kind == "numpy":
        fn = lambda: np.copyto(out, ref)  # noqa: E731
    elif kind == "torch":
        if torch_module is None:
            pytest.skip("torch is not installed")
        fn, what = torch_copy(torch_module, ref, out)
        if fn is None:
            pytest.skip(what)
        benchmark.extra_info["torch"] = what
        torch_module.set_num_threads(int(threads[0]))
    elif kind == "memset":
        fn = limits.memset(out)[f"memset {threads}"]
    else:
        if not copy_bound:
            pytest.skip("the copy limit is for sources as large as the output")
        src = np.full(out.nbytes, 0x33, np.uint8)
        fn = limits.copy(out, src)[f"copy {threads}"]
    out.fill(0)
    result = benchmark(fn)
    if kind in ("lazybcast", "numpy"):
        assert _same_bytes(out, ref), f"{impl} wrote wrong values for {case.name}"
    elif kind == "torch":
        assert _same_bytes(result.numpy(), ref), f"{impl} wrote wrong values for {case.name}"


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
