"""BroadcastView's attributes, repr, ``__array__`` and the protocols it must not export."""

import math
import re

import numpy as np
import pytest
from _core_strategies import MODES, call_broadcast, dtypes, expected_values, laid_out, requests
from hypothesis import given
from hypothesis import strategies as st

import lazybcast


@pytest.mark.parametrize("mode", MODES)
@given(data=st.data())
def test_attributes_match_the_reference(mode, data):
    shape, target, mapping, mode, axis = data.draw(requests(mode))
    x = data.draw(laid_out(shape, data.draw(dtypes)))
    ref = expected_values(x, target, mapping, mode, axis)
    v = call_broadcast(x, target, mapping, mode, axis)
    assert v.shape == ref.shape and type(v.shape) is tuple
    assert all(type(n) is int for n in v.shape)
    assert v.dtype == x.dtype
    assert v.ndim == ref.ndim
    assert v.size == math.prod(ref.shape) and type(v.size) is int
    assert v.itemsize == x.dtype.itemsize
    assert v.nbytes == v.size * x.dtype.itemsize
    assert type(v.strides) is tuple and len(v.strides) == v.ndim
    if x.size and ref.size:
        assert np.shares_memory(ref, x)  # the reference's reshape did not copy
        for n, s, s_ref in zip(v.shape, v.strides, ref.strides):
            if n > 1:
                assert s == s_ref
        # broadcast axes: where the data has no axis of that size
        for d, n in enumerate(v.shape):
            if n > 1 and v.source.shape[d] == 1:
                assert v.strides[d] == 0
    assert v.base is x
    assert v.mode == mode


def test_strides_are_zero_exactly_on_broadcast_axes():
    x = np.zeros((3, 1, 4), dtype=np.int16)
    v = lazybcast.broadcast_to(x, (2, 3, 5, 4))
    assert v.strides == (0, 8, 0, 2)
    v = lazybcast.broadcast(np.zeros(4, dtype=np.float32), [3, 4, 2], [1], mode="explicit")
    assert v.strides == (0, 4, 0)
    x = np.zeros((6, 8), dtype=np.int8)[::-2, ::4].T  # negative and transposed strides
    v = lazybcast.broadcast_to(x, (5, 2, 3))
    assert v.strides == (0,) + np.broadcast_to(x, (5, 2, 3)).strides[1:]
    assert v.strides[2] < 0


def test_base_is_the_data_itself():
    x = np.arange(6.0)[::2]
    for v in (
        lazybcast.broadcast(x, [4, 3]),
        lazybcast.broadcast_to(x, (4, 3)),
        lazybcast.broadcast(x, [3, 4], [0], mode="explicit"),
        lazybcast.broadcast(x, [4, 1], mode="bidirectional"),
        lazybcast.broadcast(x, [3, 4], mode="pdpd", axis=0),
        lazybcast.broadcast_arrays(x, np.ones((4, 1)))[0],
    ):
        assert v.base is x
        assert np.shares_memory(np.asarray(v), x)


def test_weak_references_as_to_an_ndarray():
    """``weakref.ref(view)`` works as for an ndarray (a ``WeakValueDictionary`` of views,
    ``weakref.finalize``), and the reference dies with the view, free list or not."""
    import gc
    import weakref

    src = np.arange(3)
    for make in (lambda: lazybcast.broadcast_to(src, (4, 3)),
                 lambda: lazybcast.broadcast_to(src, (4, 3))[1:]):  # (a view by a basic key)
        v = make()
        ref = weakref.ref(v)
        cache = weakref.WeakValueDictionary(a=v)
        assert ref() is v and cache["a"] is v
        del v
        gc.collect()
        assert ref() is None and len(cache) == 0
        w = make()  # (may reuse the freed view's memory)
        assert ref() is None and weakref.ref(w)() is w


def test_base_of_array_likes():
    v = lazybcast.broadcast([[1, 2, 3]], [2, 3])
    assert type(v.base) is np.ndarray
    np.testing.assert_array_equal(v.base, [[1, 2, 3]])


def test_zero_stride_input_stays_compact():
    x = np.broadcast_to(np.arange(3.0), (1000, 3))
    v = lazybcast.broadcast_to(x, (7, 1000, 3))
    assert v.base is x
    assert v.source.size == 3
    assert "held=24 B" in repr(v)
    np.testing.assert_array_equal(v.materialize(), np.broadcast_to(x, (7, 1000, 3)))


def test_repr():
    x = np.arange(6, dtype=np.float64).reshape(2, 1, 3)
    r = repr(lazybcast.broadcast_to(x, (4, 2, 5, 3)))
    for part in ("BroadcastView", "shape=(4, 2, 5, 3)", "dtype=float64", "mode='numpy'",
                 "source_shape=(2, 1, 3)", "logical=960 B", "held=48 B"):
        assert part in r, (part, r)
    x = np.ones(16, dtype=np.float32)
    r = repr(lazybcast.broadcast(x, [1, 16, 50, 50], [1], mode="explicit"))
    for part in ("shape=(1, 16, 50, 50)", "dtype=float32", "mode='explicit'", "source_shape=(16,)",
                 "logical=160.0 kB", "held=64 B"):
        assert part in r, (part, r)
    x = np.ones((3, 1), dtype=np.int8)
    r = repr(lazybcast.broadcast(x, [1, 2, 1, 1], mode="bidirectional"))
    assert "mode='bidirectional'" in r and "shape=(1, 2, 3, 1)" in r
    r = repr(lazybcast.broadcast_to(np.ones(8), (10**9, 8)))
    assert "logical=64.0 GB" in r and "held=64 B" in r
    r = repr(lazybcast.broadcast(np.ones(2, dtype=[("a", "i2"), ("b", "f8")]), [3, 2], mode="pdpd"))
    assert "mode='pdpd'" in r and "held=20 B" in r and "logical=60 B" in r


def test_cannot_be_constructed_directly():
    with pytest.raises(TypeError):
        lazybcast.BroadcastView()
    with pytest.raises(TypeError):
        lazybcast.BroadcastView(np.ones(3), (2, 3))


def test_read_only_attributes():
    v = lazybcast.broadcast_to(np.arange(3), (2, 3))
    for name, value in (("shape", (3, 3)), ("strides", (0, 0)), ("base", None), ("mode", "pdpd"),
                        ("dtype", np.dtype("f8")), ("size", 1)):
        with pytest.raises(AttributeError):
            setattr(v, name, value)
    with pytest.raises(ValueError):  # NumPy's type for a read-only array
        v[0, 0] = 5


# -- __array__ -----------------------------------------------------------------------------


def _view():
    x = np.arange(12, dtype=np.int32).reshape(3, 1, 4)[:, :, ::-1]
    return x, lazybcast.broadcast_to(x, (2, 3, 5, 4))


def test_np_array_is_a_fresh_writeable_copy():
    x, v = _view()
    a = np.array(v)
    assert a.flags.writeable and a.flags.owndata
    if np.lib.NumpyVersion(np.__version__) >= "2.1.0":
        # NumPy 2.0 calls __array__() without copy=True and copies the zero-copy array itself,
        # keeping its (broadcast) memory order; from 2.1 the view makes the C-ordered copy.
        assert a.flags.c_contiguous
    assert not np.shares_memory(a, x)
    np.testing.assert_array_equal(a, np.broadcast_to(x, (2, 3, 5, 4)))
    a[...] = -1
    assert (x >= 0).all()
    b = np.array(v, copy=True)
    assert b.flags.writeable and not np.shares_memory(b, x)


@pytest.mark.parametrize("how", ["asarray", "copy=False", "copy=None"])
def test_asarray_is_zero_copy_read_only(how):
    x, v = _view()
    if how == "asarray":
        a = np.asarray(v)
    elif how == "copy=False":
        a = np.array(v, copy=False)
    else:
        a = np.array(v, copy=None)
    ref = np.broadcast_to(x, (2, 3, 5, 4))
    assert not a.flags.writeable
    assert np.shares_memory(a, x)
    assert a.strides == ref.strides
    np.testing.assert_array_equal(a, ref)
    with pytest.raises(ValueError):
        a[0, 0, 0, 0] = 1


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.complex64, "U12"])
def test_dtype_gives_a_cast_copy(dtype):
    x, v = _view()
    ref = np.broadcast_to(x, (2, 3, 5, 4)).astype(dtype)
    copies = (np.array(v, dtype=dtype), np.asarray(v, dtype=dtype),
              np.array(v, dtype=dtype, copy=True))
    for a in copies:
        assert a.dtype == np.dtype(dtype)
        assert a.flags.writeable
        assert not np.shares_memory(a, x)
        np.testing.assert_array_equal(a, ref)


def test_same_dtype_asarray_stays_zero_copy():
    x, v = _view()
    assert np.shares_memory(np.asarray(v, dtype=np.int32), x)


def test_copy_false_with_a_cast_raises():
    _, v = _view()
    with pytest.raises(ValueError):
        np.array(v, dtype=np.float64, copy=False)
    with pytest.raises(ValueError):
        np.asarray(v, dtype=np.int64, copy=False)


def test_dunder_array_directly():
    x, v = _view()
    ref = np.broadcast_to(x, (2, 3, 5, 4))
    np.testing.assert_array_equal(v.__array__(), ref)
    assert v.__array__(copy=True).flags.writeable
    assert not v.__array__(copy=False).flags.writeable
    assert v.__array__(np.float32).dtype == np.float32


def test_no_bypassing_protocols():
    _, v = _view()
    # __array_ufunc__ / __array_function__ exist (issue 10): they keep results lazy and fall
    # back to np.asarray(view), never to the view's raw memory.
    for name in ("__array_interface__", "__array_struct__", "__buffer__"):
        assert not hasattr(v, name), name
        assert not hasattr(lazybcast.BroadcastView, name), name
    with pytest.raises(TypeError):
        memoryview(v)
    with pytest.raises(TypeError):
        bytes(v)


def test_numpy_functions_go_through_dunder_array():
    x, v = _view()
    ref = np.broadcast_to(x, (2, 3, 5, 4))
    np.testing.assert_array_equal(np.add(v, 1), ref + 1)
    assert np.sum(v) == ref.sum()
    np.testing.assert_array_equal(np.concatenate([v, v]), np.concatenate([ref, ref]))



@pytest.mark.parametrize(
    "value, shape", [(0.0, ()), (1.0, ()), (0.0, (1,)), (2.0, (1, 1)), (1.0, (2, 3)), (1.0, (0,))]
)
def test_truth_value_follows_numpy(value, shape):
    ref = np.broadcast_to(np.float64(value), shape)
    view = lazybcast.broadcast_to(np.float64(value), shape)
    try:
        expected = bool(ref)
    except (ValueError, DeprecationWarning) as error:  # NumPy 2.0-2.1 warn on an empty array
        with pytest.raises(type(error)):
            bool(view)
    else:
        assert bool(view) is expected


@pytest.mark.parametrize("name", ["real", "imag"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_assigning_real_or_imag_raises_value_error(name, dtype):
    """NumPy's ValueError for a read-only array (it was an AttributeError, as if the
    attribute could not be assigned on any array)."""
    ref = np.broadcast_to(np.arange(3, dtype=dtype), (2, 3))
    view = lazybcast.broadcast_to(np.arange(3, dtype=dtype), (2, 3))
    try:
        setattr(ref, name, 1)
    except (TypeError, ValueError) as error:  # (TypeError: the imaginary part of a real one)
        with pytest.raises(type(error), match=re.escape(str(error)) if type(error) is
                           TypeError else f"BroadcastView.{name} cannot be assigned"):
            setattr(view, name, 1)
    for target in (ref, view):  # NumPy's AttributeError (it was NotImplementedError)
        with pytest.raises(AttributeError, match="Cannot delete array"):
            delattr(target, name)
    np.testing.assert_array_equal(np.asarray(getattr(view, name)), getattr(ref, name))
