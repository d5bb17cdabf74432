"""len(), iteration and iter_batches against NumPy's rows (``np.broadcast_to(...)[i]``)."""

import gc
import sys
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from _threads import needs_proc, os_threads, settles_to

DTYPES = [np.int8, np.int64, np.float32, np.complex128, "S5", object, [("a", "<i2"), ("b", "S3")]]


@st.composite
def views(draw, min_dims=1, max_dims=3):
    """``(source, shape)``: a randomly laid-out source that broadcasts to ``shape``."""
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=min_dims, max_size=max_dims)))
    lead = draw(st.integers(0, len(shape)))
    src_shape = tuple(n if draw(st.booleans()) else 1 for n in shape[lead:])
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    flip = [draw(st.booleans()) for _ in src_shape]
    step = [draw(st.sampled_from([1, 2])) for _ in src_shape]
    big = tuple(n * s for n, s in zip(src_shape, step))
    total = int(np.prod(big))
    if dtype.names:
        values = np.zeros(total, dtype=dtype)
        values["a"] = np.arange(total)
        values["b"] = [str(i).encode() for i in range(total)]
    elif dtype.kind in "SO":
        values = np.array([str(i) for i in range(total)], dtype=object).astype(dtype)
    else:
        values = np.arange(total).astype(dtype)
    key = tuple(slice(None, None, -s if f else s) for s, f in zip(step, flip))
    source = values.reshape(big)[key + (Ellipsis,)]
    if source.ndim >= 2 and draw(st.booleans()):
        source = source.swapaxes(0, -1).copy().swapaxes(0, -1)  # Fortran-ish strides
    return source, shape


def _equal(got, expected):
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert got.tolist() == expected.tolist()


# -- len and iteration --------------------------------------------------------------------


@given(views(min_dims=0))
def test_len_matches_numpy(case):
    source, shape = case
    view, ref = lazybcast.broadcast_to(source, shape), np.broadcast_to(source, shape)
    if not shape:
        with pytest.raises(TypeError):
            len(ref)
        with pytest.raises(TypeError):
            len(view)
        with pytest.raises(TypeError):
            iter(ref)
        with pytest.raises(TypeError, match="0-d"):
            iter(view)  # at once, not at the first next(): np.iterable(view) is False
    else:
        assert len(view) == len(ref) == shape[0]
    assert np.iterable(view) is np.iterable(ref) is bool(shape)


@given(views())
def test_iteration_yields_numpys_rows(case):
    source, shape = case
    view, ref = lazybcast.broadcast_to(source, shape), np.broadcast_to(source, shape)
    rows = list(view)
    assert len(rows) == len(ref)
    for row, expected in zip(rows, ref):
        if len(shape) == 1:
            assert type(row) is type(expected)  # NumPy scalars (or the objects themselves)
            assert row == expected
        else:
            assert type(row) is np.ndarray
            assert row.flags.c_contiguous and row.flags.writeable
            assert not np.shares_memory(row, source)
            _equal(row, expected)


def test_rows_are_independent_copies():
    source = np.arange(3.0)
    rows = list(lazybcast.broadcast_to(source, (2, 3)))
    rows[0][0] = 99.0
    assert rows[1][0] == 0.0 and source[0] == 0.0


# -- iter_batches -------------------------------------------------------------------------


@given(views(), st.integers(1, 7), st.booleans(), st.integers(0, 3))
def test_batches_match_numpy(case, batch_size, drop_last, prefetch):
    source, shape = case
    view, ref = lazybcast.broadcast_to(source, shape), np.broadcast_to(source, shape)
    batches = list(view.iter_batches(batch_size, drop_last=drop_last, prefetch=prefetch))
    starts = range(0, shape[0], batch_size)
    if drop_last:
        starts = [s for s in starts if s + batch_size <= shape[0]]
    assert len(batches) == len(starts)
    for batch, start in zip(batches, starts):
        assert type(batch) is np.ndarray
        assert batch.flags.c_contiguous and batch.flags.writeable
        _equal(batch, ref[start:start + batch_size])
    assert len({id(b) for b in batches}) == len(batches)  # a fresh array per batch


@given(views(), st.integers(1, 7), st.booleans(), st.sampled_from(["C", "F"]))
def test_batches_into_one_buffer(case, batch_size, drop_last, order):
    source, shape = case
    view, ref = lazybcast.broadcast_to(source, shape), np.broadcast_to(source, shape)
    out = np.zeros((batch_size,) + shape[1:], dtype=view.dtype, order=order)
    address = out.__array_interface__["data"][0]
    starts = []
    for batch in view.iter_batches(batch_size, out=out, drop_last=drop_last):
        start = len(starts) * batch_size
        assert batch.base is out
        assert batch.__array_interface__["data"][0] == address  # a leading slice of out
        assert out.size == 0 or np.shares_memory(batch, out)
        _equal(batch, ref[start:start + batch_size])
        starts.append(start)
    end = shape[0] - shape[0] % batch_size if drop_last else shape[0]
    assert starts == list(range(0, end, batch_size))


def test_out_buffer_is_reused_not_reallocated():
    view = lazybcast.broadcast_to(np.arange(4), (10, 4))
    out = np.empty((4, 4), dtype=view.dtype)
    batches = list(view.iter_batches(4, out=out))
    assert [b.shape for b in batches] == [(4, 4), (4, 4), (2, 4)]
    assert all(b.base is out for b in batches)


def test_object_batches_into_out_keep_references_right():
    obj = object()
    source = np.empty(1, dtype=object)
    source[0] = obj
    view = lazybcast.broadcast_to(source, (10, 3))
    out = np.empty((4, 3), dtype=object)
    before = sys.getrefcount(obj)
    for _ in view.iter_batches(4, out=out):
        pass
    assert sys.getrefcount(obj) == before + out.size  # old references were released
    out[...] = None
    assert sys.getrefcount(obj) == before
    before = sys.getrefcount(obj)
    batches = list(view.iter_batches(4, prefetch=2))
    assert sys.getrefcount(obj) == before + 30
    del batches
    assert sys.getrefcount(obj) == before


@pytest.mark.parametrize("batch_size", [0, -1])
def test_batch_size_below_one_is_value_error(batch_size):
    view = lazybcast.broadcast_to(np.arange(3), (4, 3))
    with pytest.raises(ValueError, match="batch_size"):
        view.iter_batches(batch_size)  # raised at the call, not at the first batch


@pytest.mark.parametrize("batch_size", [2.0, "2", None, True, np.float64(2)])
def test_batch_size_of_wrong_type_is_type_error(batch_size):
    view = lazybcast.broadcast_to(np.arange(3), (4, 3))
    with pytest.raises(TypeError, match="batch_size"):
        view.iter_batches(batch_size)


def test_numpy_integer_batch_size_is_fine():
    view = lazybcast.broadcast_to(np.arange(3), (4, 3))
    assert [b.shape[0] for b in view.iter_batches(np.int32(3))] == [3, 1]


@pytest.mark.parametrize("prefetch, error", [(-1, ValueError), (1.0, TypeError), (None, TypeError)])
def test_bad_prefetch(prefetch, error):
    view = lazybcast.broadcast_to(np.arange(3), (4, 3))
    with pytest.raises(error, match="prefetch"):
        view.iter_batches(2, prefetch=prefetch)


@pytest.mark.parametrize(
    "out, error",
    [
        (np.empty((3, 3), dtype=np.int64), ValueError),  # batch_size rows needed
        (np.empty((2, 4), dtype=np.int64), ValueError),
        (np.empty((2,), dtype=np.int64), ValueError),
        (np.empty((2, 3), dtype=np.int32), TypeError),
        (np.empty((2, 3), dtype=np.float64), TypeError),
        ([[0, 0, 0], [0, 0, 0]], TypeError),
        (np.broadcast_to(np.int64(0), (2, 3)), ValueError),  # read-only
    ],
)
def test_bad_out(out, error):
    view = lazybcast.broadcast_to(np.arange(3, dtype=np.int64), (5, 3))
    with pytest.raises(error, match="out"):
        view.iter_batches(2, out=out)


def test_out_and_prefetch_together_is_value_error():
    view = lazybcast.broadcast_to(np.arange(3), (5, 3))
    with pytest.raises(ValueError, match="prefetch"):
        view.iter_batches(2, out=np.empty((2, 3), dtype=view.dtype), prefetch=1)


def test_zero_d_view_has_no_batches():
    with pytest.raises(TypeError):
        lazybcast.broadcast_to(np.float64(1.0), ()).iter_batches(1)


def test_batches_of_a_huge_view_start_at_once():
    view = lazybcast.broadcast_to(np.arange(3), (10**15, 3))  # row ranges are not listed up front
    batches = view.iter_batches(2, drop_last=True, prefetch=2)
    first = next(batches)
    np.testing.assert_array_equal(first, [[0, 1, 2], [0, 1, 2]])
    batches.close()


# -- prefetch thread lifetime -------------------------------------------------------------


@needs_proc
@pytest.mark.parametrize("how", ["close", "break-and-del", "exhaust", "never-started"])
def test_prefetch_thread_is_cleaned_up(how):
    view = lazybcast.broadcast_to(np.arange(1000.0), (1000, 1000))  # 8 MB, 100 batches
    baseline = os_threads()
    gen = view.iter_batches(10, prefetch=3)
    if how == "close":
        next(gen)
        next(gen)
        gen.close()
    elif how == "break-and-del":
        for i, _ in enumerate(gen):
            if i == 2:
                break
        del gen
        gc.collect()
    elif how == "exhaust":
        assert sum(1 for _ in gen) == 100
    else:
        del gen
    assert settles_to(baseline)


@needs_proc
def test_close_while_the_worker_is_busy_returns():
    # The consumer abandons the generator while the worker is materializing the next batches:
    # close() must return (no hang) and leave no thread behind.
    view = lazybcast.broadcast_to(np.arange(2000.0), (4000, 2000))  # 64 MB, 4 batches
    baseline = os_threads()
    gen = view.iter_batches(1000, prefetch=2)
    first = next(gen)
    assert first.shape == (1000, 2000)
    done = threading.Event()

    def close():
        gen.close()
        done.set()

    closer = threading.Thread(target=close)
    closer.start()
    closer.join(timeout=30)
    assert done.is_set()
    assert settles_to(baseline)
