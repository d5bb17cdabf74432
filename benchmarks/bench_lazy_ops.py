"""Ufunc chains and reductions on a view against NumPy (``np.broadcast_to``) and torch
(``expand``) on the same logical array.

The cases are :data:`lazybcast._bench_lazy.CASES` (an extra group of ``python -m lazybcast
bench``). Each case is one pytest-benchmark group with the callables ``lazybcast``, ``numpy``
and ``torch`` (one thread, as NumPy's ufuncs; skipped without torch). The peers' ratio to
lazybcast (their time over ours, > 1: lazybcast faster) goes to ``extra_info`` and to the
measurements printed at the end; the ratio to expect is logical / source bytes.

In the smoke mode (``--benchmark-disable``) the peers skip cases of 64 MiB or more.
"""

import numpy as np
import pytest

from lazybcast._bench_lazy import CASES, SOURCE_NBYTES

IMPLS = ("lazybcast", "numpy", "torch")
_BEST = {}  # case name -> lazybcast's best time, for the peers' ratios


@pytest.fixture(scope="module")
def one_torch_thread():
    torch = pytest.importorskip("torch", reason="torch is an optional peer")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _value(result):
    return result.numpy() if hasattr(result, "detach") else np.asarray(result)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_lazy_op(benchmark, note, smoke, request, case, impl):
    if smoke and impl != "lazybcast" and "huge" in case.tags:
        pytest.skip("logical size >= 64 MiB: the peers run only when benchmarks are enabled")
    if impl == "torch":
        request.getfixturevalue("one_torch_thread")
    name, impls, _ = case()
    source = SOURCE_NBYTES[name]
    benchmark.group = name
    benchmark.extra_info["logical_bytes"] = case.nbytes
    benchmark.extra_info["source_bytes"] = source
    benchmark.extra_info["logical_over_source"] = case.nbytes / source
    result = _value(benchmark(impls[impl]))
    expected = np.asarray(impls["numpy"]())
    assert result.shape == expected.shape, name
    assert np.allclose(result, expected, rtol=case.rtol, atol=1e-6), name
    if benchmark.stats is None:
        return
    if impl == "lazybcast":
        _BEST[name] = benchmark.stats.stats.min
    elif name in _BEST:
        ratio = benchmark.stats.stats.min / _BEST[name]
        note(f"{impl}_over_lazybcast", ratio,
             f"{impl} {ratio:.0f}x slower than lazybcast (logical/source "
             f"{case.nbytes / source:.0f}x)")
