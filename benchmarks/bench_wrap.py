"""Wrapping cost: lazybcast.broadcast_to / broadcast (every mode) against np.broadcast_to.

Each group times the lazybcast call and the NumPy call a user would write for the same result
(for ``explicit`` and ``pdpd`` that includes the reshape NumPy needs first). The memory check
builds 10,000 views of a petabyte each and measures what they hold with ``tracemalloc``.
"""

import tracemalloc

import numpy as np
import pytest

import lazybcast

PB = 1 << 50

_src3 = np.arange(3.0)
_chan = np.arange(16.0).reshape(16, 1, 1)
_vec16 = np.arange(16.0)
_bidir = np.ones((3, 1))
_pdpd = np.ones((3, 4))
_arr_a = np.ones((2, 1, 5))
_arr_b = np.ones((4, 1))

# name -> (lazybcast call, NumPy call); both return a view of the same shape and values.
CASES = {
    "broadcast_to (3,) -> (1000,3)": (
        lambda: lazybcast.broadcast_to(_src3, (1000, 3)),
        lambda: np.broadcast_to(_src3, (1000, 3)),
    ),
    "broadcast_to scalar -> (10,10)": (
        lambda: lazybcast.broadcast_to(1.5, (10, 10)),
        lambda: np.broadcast_to(1.5, (10, 10)),
    ),
    "broadcast numpy (16,1,1) -> (1,16,50,50)": (
        lambda: lazybcast.broadcast(_chan, [1, 16, 50, 50]),
        lambda: np.broadcast_to(_chan, (1, 16, 50, 50)),
    ),
    "broadcast explicit (16,) [1] -> (1,16,50,50)": (
        lambda: lazybcast.broadcast(_vec16, [1, 16, 50, 50], [1], mode="explicit"),
        lambda: np.broadcast_to(_vec16.reshape(1, 16, 1, 1), (1, 16, 50, 50)),
    ),
    "broadcast bidirectional (3,1) [2,1,6] -> (2,3,6)": (
        lambda: lazybcast.broadcast(_bidir, [2, 1, 6], mode="bidirectional"),
        lambda: np.broadcast_to(_bidir, np.broadcast_shapes(_bidir.shape, (2, 1, 6))),
    ),
    "broadcast pdpd (3,4) [2,1,4,5] axis=1 -> (2,3,4,5)": (
        lambda: lazybcast.broadcast(_pdpd, [2, 1, 4, 5], mode="pdpd", axis=1),
        lambda: np.broadcast_to(_pdpd.reshape(1, 3, 4, 1), (2, 3, 4, 5)),
    ),
    "broadcast_arrays (2,1,5), (4,1)": (
        lambda: lazybcast.broadcast_arrays(_arr_a, _arr_b),
        lambda: np.broadcast_arrays(_arr_a, _arr_b),
    ),
}


@pytest.mark.parametrize("impl", ["lazybcast", "numpy"])
@pytest.mark.parametrize("name", list(CASES))
def test_wrap(benchmark, name, impl):
    ours, theirs = CASES[name]
    benchmark.group = f"wrap: {name}"
    result = benchmark(ours if impl == "lazybcast" else theirs)
    # Same shapes and values as NumPy's (checked outside the timing).
    got = result if isinstance(result, (tuple, list)) else (result,)
    want = theirs()
    want = want if isinstance(want, (tuple, list)) else (want,)
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(np.asarray(g), w)


def _petabyte_views(n):
    source = np.arange(8, dtype=np.float64)  # 64 bytes, shared by every view
    return [lazybcast.broadcast_to(source, (PB // 64, 8)) for _ in range(n)]


def test_memory_10000_petabyte_views(benchmark, note):
    benchmark.group = "wrap: 10,000 views of 1 PiB each"
    views = benchmark.pedantic(_petabyte_views, args=(10_000,), rounds=3, iterations=1)
    assert views[0].nbytes == PB
    del views
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        views = _petabyte_views(10_000)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(views) == 10_000
    per_view = held / len(views)
    note("traced_bytes_10000_views", held,
         f"10,000 views of 1 PiB logical size hold {held / 1e6:.2f} MB "
         f"({per_view:.0f} B per view; traced by tracemalloc)")
    # The claim: O(ndim) bytes per view, so 10,000 views fit in a few MB.
    assert held < 8_000_000, f"10,000 views held {held} bytes"
