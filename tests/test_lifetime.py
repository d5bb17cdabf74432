"""Lifetime and aliasing: a view keeps its source alive (and no longer than the view lives),
shows later changes to the source, pins resizable buffers so they cannot be resized under it,
and ``out=`` overlapping the source still gives the right answer."""

import array
import gc
import sys
import warnings
import weakref

import numpy as np
import pytest

import lazybcast


def test_view_keeps_its_source_alive_and_then_lets_go():
    x = np.arange(6.0).reshape(2, 3)
    ref = weakref.ref(x)
    view = lazybcast.broadcast(x, [4, 2, 3], mode="bidirectional")[1:, ::-1]
    del x
    gc.collect()
    assert ref() is not None
    np.testing.assert_array_equal(view.materialize(),
                                  np.broadcast_to(np.arange(6.0).reshape(2, 3), (3, 2, 3))[:, ::-1])
    del view
    gc.collect()
    assert ref() is None  # no reference leaked


def test_source_of_a_list_is_kept_too():
    view = lazybcast.broadcast_to([[1], [2]], (2, 3))
    gc.collect()
    np.testing.assert_array_equal(view.materialize(), [[1, 1, 1], [2, 2, 2]])


def test_changes_to_the_source_show_through_the_view():
    x = np.zeros((3, 1), dtype=np.int32)
    view = lazybcast.broadcast_to(x, (3, 4))
    zero_copy = np.asarray(view)
    sliced = view[::2]
    x[2, 0] = 7
    np.testing.assert_array_equal(view.materialize()[2], [7] * 4)
    assert view[2, 3] == 7 and zero_copy[2, 1] == 7
    np.testing.assert_array_equal(sliced.materialize(), [[0] * 4, [7] * 4])
    with pytest.raises(ValueError, match="read-only"):
        zero_copy[0, 0] = 1
    with pytest.raises(ValueError, match="read-only"):
        view[0, 0] = 1


def test_a_copy_does_not_follow_the_source():
    import pickle

    x = np.zeros(3)
    view = lazybcast.broadcast_to(x, (2, 3))
    clone, copied = pickle.loads(pickle.dumps(view)), np.array(view)
    x[:] = 5
    assert clone.materialize().sum() == 0 and copied.sum() == 0
    assert view.materialize().sum() == 30


@pytest.mark.parametrize("make", [
    lambda: bytearray(b"abcdef"),
    lambda: array.array("b", b"abcdef"),
])
def test_resizable_buffer_is_pinned_while_a_view_exists(make):
    buf = make()
    view = lazybcast.broadcast_to(buf, (3, 6))  # through np.asarray(buf): shares memory
    gc.collect()
    with pytest.raises(BufferError):
        buf.extend(b"gh")
    with pytest.raises(BufferError):
        del buf[0]
    buf[0] = ord("z")  # in-place writes are fine, and visible
    np.testing.assert_array_equal(view.materialize()[2], np.frombuffer(b"zbcdef", np.uint8)
                                  .astype(view.dtype))
    sub = view[1:, 2:]
    del view
    gc.collect()
    with pytest.raises(BufferError):  # a slice of the view pins it just the same
        buf.append(1)
    del sub
    gc.collect()
    buf.extend(b"gh")  # nothing holds it any more
    assert len(buf) == 8


def test_memoryview_source_is_pinned():
    buf = bytearray(8)
    view = lazybcast.broadcast_to(memoryview(buf).cast("d"), (4, 1))
    with pytest.raises(BufferError):
        buf.extend(b"x")
    del view
    gc.collect()
    buf.extend(b"x")


def test_ndarray_resize_refused_while_viewed():
    x = np.arange(4)
    view = lazybcast.broadcast_to(x, (2, 4))
    with pytest.raises(ValueError):
        x.resize(10)
    np.testing.assert_array_equal(view.materialize(), [[0, 1, 2, 3]] * 2)


# -- out= overlapping the source ----------------------------------------------------------------


def _check_into(view, out):
    expected = np.broadcast_to(view.source, view.shape).copy()  # before out= overwrites it
    got = view.materialize(out=out)
    assert got is out
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("threads", [1, 2])
def test_out_is_the_buffer_the_source_lives_in(threads):
    x = np.arange(12).reshape(3, 4)
    _check_into(lazybcast.broadcast_to(x[:, :1], (3, 4)), x)
    y = np.arange(12.0).reshape(3, 4)
    _check_into(lazybcast.broadcast_to(y[-1:, ::-1], (3, 4)), y)


def test_out_overlaps_the_source_partially_and_reversed():
    x = np.arange(10)
    _check_into(lazybcast.broadcast_to(x[2:8], (6,)), x[:6])
    x = np.arange(10)
    _check_into(lazybcast.broadcast_to(x[::-1][:6], (6,)), x[:6])
    x = np.arange(24, dtype=np.int16).reshape(4, 6)
    _check_into(lazybcast.broadcast_to(x[1:3, :1][:, :, None], (2, 3, 2)),
                x.reshape(2, 3, 4)[:, :, 1:3])


def test_out_overlap_through_a_different_view_of_the_buffer():
    buf = np.arange(16, dtype=np.uint8)
    src = buf[::4]  # 0, 4, 8, 12
    out = buf.reshape(4, 4)
    _check_into(lazybcast.broadcast_to(src[:, None], (4, 4)), out)
    assert (buf.reshape(4, 4).T == [0, 4, 8, 12]).all()


def test_out_overlap_with_objects_keeps_references_right():
    a, b = object(), object()
    x = np.empty((2, 3), dtype=object)
    x[:] = [[a, b, b], [b, a, a]]
    before = sys.getrefcount(a), sys.getrefcount(b)
    _check_into(lazybcast.broadcast_to(x[:, :1], (2, 3)), x)
    assert x.tolist() == [[a, a, a], [b, b, b]]
    gc.collect()
    assert (sys.getrefcount(a), sys.getrefcount(b)) == before  # three of each, as before


def test_out_overlap_with_structured_objects():
    dt = np.dtype([("o", "O"), ("i", "i4")])
    x = np.array([[("p", 1), ("q", 2)], [("r", 3), ("s", 4)]], dtype=dt)
    _check_into(lazybcast.broadcast_to(x[:1], (2, 2)), x)
    assert x.tolist() == [[("p", 1), ("q", 2)]] * 2


def test_iter_batches_into_an_out_that_is_the_source():
    x = np.arange(8.0).reshape(8, 1)
    view = lazybcast.broadcast_to(x[:4], (4, 1))
    seen = [b.copy() for b in view.iter_batches(2, out=x[2:4])]
    # each batch is copied before it lands, so values are those of the source at that moment
    np.testing.assert_array_equal(seen[0], [[0.0], [1.0]])
    np.testing.assert_array_equal(seen[1], [[0.0], [1.0]])  # rows 2-3 now hold batch 1


class _Cached(np.ndarray):
    """An ndarray subclass with a ``__dict__`` (NumPy's documented InfoArray pattern)."""


def test_a_cycle_through_a_subclass_base_is_reclaimed():
    """``m.cache = broadcast_to(m, ...)``: the view's base refers back to it, a cycle the
    collector reclaims only if it sees the view's reference (it did not while views were
    untracked, cython.no_gc: 200 such 1 MB cycles stayed alive)."""
    refs = []
    for _ in range(20):
        m = np.zeros((1, 1000)).view(_Cached)
        m.cache = lazybcast.broadcast_to(m, (10, 1000))
        m.info = {"view": lazybcast.broadcast_to(m, (2, 1000))}
        refs.append(weakref.ref(m))
        del m
    gc.collect()
    assert sum(r() is not None for r in refs) == 0


@pytest.mark.parametrize("rank", [2, 10])
@pytest.mark.parametrize("how", ["the array's shape", "the source's shape"])
def test_setting_a_shape_changes_nothing_of_the_view(rank, how):
    """NumPy frees an array's sizes and strides when its ``shape`` is set: a view keeps its
    own copy of its source's geometry, and its source array is its own, so that neither the
    user's array (``a.shape = ...``) nor ``view.source.shape = ...`` changes the view (a
    review found both reading freed memory under ASan, or values of the new shape)."""
    a = np.arange(3.0).reshape((1,) * (rank - 1) + (3,)).copy()
    shape = (4,) + (1,) * (rank - 2) + (3,)
    view = lazybcast.broadcast_to(a, shape)
    keyed = view[1:]  # (the source made on first use)
    want = np.broadcast_to(np.arange(3.0).reshape(a.shape), shape)
    with warnings.catch_warnings():  # (deprecated since NumPy 2.5, still done)
        warnings.simplefilter("ignore", DeprecationWarning)
        if how == "the array's shape":
            a.shape = a.shape[::-1]
        else:
            view.source.shape = view.source.shape[::-1]
            keyed.source.shape = keyed.source.shape[::-1]
    filler = [np.zeros(rank, np.intp) + 7 for _ in range(100)]  # (reuse freed memory)
    for v, w in ((view, want), (keyed, want[1:])):
        assert v.source.shape == (1,) * (rank - 1) + (3,)
        assert v.strides == tuple(0 if n == 1 or d < rank - 1 else 8
                                  for d, n in enumerate(w.shape))
        assert np.asarray(v).tolist() == w.tolist()
        assert v.materialize().tolist() == w.tolist()
        assert v[-1].materialize().tolist() == w[-1].tolist()
        assert v.sum(axis=0).tolist() == w.sum(axis=0).tolist()
    del filler


def test_a_keys_source_keeps_the_writeability_it_had():
    """A view's source is writeable as its parent's was when the key was taken."""
    a = np.zeros((1, 3))
    a.flags.writeable = False
    keyed = lazybcast.broadcast_to(a, (4, 3))[:, 1:]
    a.flags.writeable = True
    assert not keyed.source.flags.writeable
    b = np.zeros((1, 3))
    assert lazybcast.broadcast_to(b, (4, 3))[1:].source.flags.writeable


@pytest.mark.parametrize("make", ["copy", "astype"])
def test_setting_the_shape_of_a_copys_base_changes_nothing_of_the_copy(make):
    """A view's copy (or cast) has the new array as its base: the view's source is another
    array object over it, so that setting the base's shape changes nothing (a review found
    sums along axis 0 of the new shape, and ValueErrors)."""
    v = lazybcast.broadcast_to(np.arange(6.0).reshape(1, 6), (4, 6))
    c = v.copy() if make == "copy" else v.astype(np.float32)
    want = np.broadcast_to(np.arange(6.0).reshape(1, 6), (4, 6)).astype(c.dtype)
    with warnings.catch_warnings():  # (deprecated since NumPy 2.5, still done)
        warnings.simplefilter("ignore", DeprecationWarning)
        c.base.shape = (6, 1)
    assert np.sum(c, axis=0).tolist() == want.sum(axis=0).tolist()
    assert (c + 1).tolist() == (want + 1).tolist()
    assert c.materialize().tolist() == want.tolist()
