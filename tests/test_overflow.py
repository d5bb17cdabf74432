"""Overflow: views whose element or byte count exceeds what ``np.intp`` indexes are refused with a
ValueError when they are made, by every entry point; a view that fits ``intp`` but not memory
raises MemoryError on ``materialize()`` and leaves the process healthy."""

import gc
import pickle
import sys

import numpy as np
import pytest

import lazybcast
from _memory import overcommit_always

MAX = sys.maxsize  # what np.intp holds


# A huge stride-0 array is cheap: NumPy itself allows this much logical size.
HUGE_1D = np.broadcast_to(np.zeros(1, dtype=np.uint8), (2**40,))


@pytest.mark.parametrize("call", [
    lambda: lazybcast.broadcast_to(np.ones(1, np.uint8), (2**62, 2)),         # 2**63 elements
    lambda: lazybcast.broadcast_to(np.ones(1, np.uint8), (2**32,) * 2),       # 2**64
    lambda: lazybcast.broadcast_to(np.ones(1, np.float64), (2**60,)),         # 2**63 bytes
    lambda: lazybcast.broadcast_to(np.ones(1, np.float64), (2**200,)),        # no C integer
    lambda: lazybcast.broadcast_to(np.ones(1, "V1000000"), (2**44,)),         # 2**64 bytes
    lambda: lazybcast.broadcast_to(np.ones(1), (0, 2**62, 2**62)),            # as NumPy
    lambda: lazybcast.broadcast(np.ones(1), [2**31] * 3, mode="numpy"),
    lambda: lazybcast.broadcast(np.ones(3), [2**62, 3], [1], mode="explicit"),
    lambda: lazybcast.broadcast(np.ones((1, 3)), [2**62, 1], mode="pdpd"),
    lambda: lazybcast.broadcast(HUGE_1D[:, None], [1, 2**40], mode="bidirectional"),
    lambda: lazybcast.broadcast_arrays(HUGE_1D[:, None], HUGE_1D[None, :]),
    lambda: lazybcast.broadcast_arrays(np.ones((1,) * 40), HUGE_1D[:, None], HUGE_1D[None, :]),
    lambda: lazybcast.broadcast_shapes((2**40, 1), (1, 2**40)),
    lambda: lazybcast.broadcast_shapes((2**64,)),
    lambda: lazybcast.broadcast(np.ones(1), [1] * 65),
    lambda: lazybcast.broadcast_shapes((1,) * 65),
])
def test_too_big_is_a_value_error_at_wrap_time(call):
    with pytest.raises(ValueError, match="index|dimensions|large|allowed"):
        call()


def test_the_limit_is_exact():
    one = np.ones(1, np.uint8)
    assert lazybcast.broadcast_to(one, (MAX,)).nbytes == MAX
    with pytest.raises(ValueError):
        lazybcast.broadcast_to(one, (MAX + 1,))
    eight = np.ones(1, np.float64)
    assert lazybcast.broadcast_to(eight, (MAX // 8,)).nbytes == MAX // 8 * 8
    with pytest.raises(ValueError):
        lazybcast.broadcast_to(eight, (MAX // 8 + 1,))
    # NumPy agrees on both sides of the limit
    np.broadcast_to(eight, (MAX // 8,))
    with pytest.raises(ValueError):
        np.broadcast_to(eight, (MAX // 8 + 1,))


def test_the_largest_view_is_usable_lazily():
    src = np.arange(3, dtype=np.int8)
    view = lazybcast.broadcast_to(src, (MAX // 3, 3))
    assert view.size == MAX // 3 * 3 and view.nbytes == view.size
    assert view.strides == (0, 1)
    assert view[-1, -1] == 2 and view[MAX // 3 - 1, 0] == 0
    np.testing.assert_array_equal(view[::2**61, ::-1].materialize(), [[2, 1, 0]] * 2)
    assert view[None, ..., None].shape == (1, MAX // 3, 3, 1)  # new axes cannot grow it
    np.testing.assert_array_equal(np.asarray(view)[-2:], [[0, 1, 2]] * 2)
    np.testing.assert_array_equal(view[[0, -1], 1:], [[1, 2], [1, 2]])
    assert "EB" in repr(view)
    clone = pickle.loads(pickle.dumps(view))
    assert clone.shape == view.shape and len(pickle.dumps(view)) < 1000
    with pytest.raises(IndexError):
        view[MAX // 3]


@pytest.mark.skipif(overcommit_always(), reason="vm.overcommit_memory=1: a huge malloc succeeds "
                    "and touching it would summon the OOM killer")
@pytest.mark.parametrize("threads", [None, 2])
def test_materialize_larger_than_memory_is_a_memory_error(threads):
    src = np.arange(4, dtype=np.float64)
    view = lazybcast.broadcast_to(src, (2**40 // 32, 4))  # 2**40 bytes logical
    assert view.nbytes == 2**40
    with pytest.raises(MemoryError):
        view.materialize(threads=threads)
    with pytest.raises(MemoryError):
        np.array(view)
    with pytest.raises(MemoryError):
        next(view.iter_batches(2**40 // 32))
    gc.collect()
    # The process is healthy: the same view still slices and copies, and memory is usable.
    np.testing.assert_array_equal(view[-3:].materialize(), np.broadcast_to(src, (3, 4)))
    big = lazybcast.broadcast_to(src, (2**20, 4)).materialize(threads=threads)  # 32 MB
    assert big.shape == (2**20, 4) and big[-1, -1] == 3.0 and big.sum() == 6 * 2**20
