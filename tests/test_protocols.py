"""How a view meets other array code (``lazybcast._protocols`` and the view's methods): casts,
copies, flags, scalars, membership, fields, DLPack, the refused buffer protocol and dask, all
against NumPy on the ``np.broadcast_to`` equivalents."""

import operator
import re
import tracemalloc
import warnings

import numpy as np
import pytest
from _view_strategies import (
    NUMPY_2_1,
    assert_lazy,
    assert_same,
    numeric_dtypes,
    outcome,
    views,
)
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from lazybcast import BroadcastView


def same_error(got, expected):
    assert got[0] == "error", f"NumPy raised {expected[1]!r}, lazybcast returned {got[1]!r}"
    assert type(got[1]) is type(expected[1]), (got[1], expected[1])
    assert str(got[1]) == str(expected[1])


# -- astype and copy ----------------------------------------------------------------------------


@given(pair=views(numeric_dtypes), to=numeric_dtypes,
       casting=st.sampled_from(["no", "equiv", "safe", "same_kind", "unsafe"]),
       copy=st.booleans())
def test_astype_casts_the_source(pair, to, casting, copy):
    view, ref = pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NaN -> int, as in NumPy
        expected = outcome(ref.astype, to, casting=casting)
        got = outcome(view.astype, to, casting=casting, copy=copy)
    if expected[0] == "error":
        same_error(got, expected)
        return
    result = got[1]
    assert_lazy(result, view, expected[1])
    if not copy and to == view.dtype:
        assert result is view
    elif view.source.size:
        assert not np.shares_memory(result.source, view.source)


def test_astype_arguments():
    v = lazybcast.broadcast_to(np.arange(3.0), (10**9, 3))
    assert v.astype(np.int8).source.nbytes == 3
    with pytest.raises(ValueError, match="order must be one of"):
        v.astype(np.int8, order="X")
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        v.astype(np.int8, casting="safe")
    w = lazybcast.broadcast_to(np.array(["1", "25"]), (4, 2)).astype(np.int64)
    assert_same(np.asarray(w), np.broadcast_to(np.array([1, 25]), (4, 2)))


@given(pair=views())
def test_copy_is_a_view_over_a_copy_of_the_source(pair):
    view, ref = pair
    c = view.copy()
    assert_lazy(c, view, ref)
    assert c.shape == view.shape and c.dtype == view.dtype
    if view.source.size:
        assert not np.shares_memory(c.source, view.source)
    assert c.source.flags.c_contiguous


def test_copy_is_independent_of_later_writes():
    x = np.arange(4)
    v = lazybcast.broadcast_to(x, (10**8, 4))
    c = v.copy()
    x[:] = -1
    assert c[123, 2] == 2 and v[123, 2] == -1
    assert c.base.flags.owndata and c.source.base is c.base  # the view's data is the copy
    with pytest.raises(ValueError, match="order must be one of"):
        v.copy(order="Q")


# -- flags, item, tolist and scalar conversions -------------------------------------------------


@given(pair=views())
def test_flags_are_the_equivalent_arrays(pair):
    view, ref = pair
    f = view.flags
    assert not f.writeable and not f.owndata and not f.writebackifcopy
    assert f.c_contiguous == ref.flags.c_contiguous
    assert f.f_contiguous == ref.flags.f_contiguous
    assert f["C_CONTIGUOUS"] == ref.flags["C_CONTIGUOUS"]


def test_flags_cannot_make_a_view_writeable():
    x = np.arange(3.0)
    v = lazybcast.broadcast_to(x, (2, 3))
    for name in ("writeable", "WRITEABLE", "aligned"):
        with pytest.raises(ValueError, match="read-only.*materialize"):
            setattr(v.flags, name, True)
    with pytest.raises(ValueError, match="read-only"):
        v.flags["W"] = True
    assert x.flags.writeable  # the user's array is untouched
    assert repr(v.flags) == repr(np.broadcast_to(x, (2, 3)).flags)


@given(pair=views(numeric_dtypes), data=st.data())
def test_item_and_tolist(pair, data):
    view, ref = pair
    args = data.draw(st.one_of(
        st.just(()),
        st.tuples(st.integers(-3, view.size + 1)),
        st.lists(st.integers(-3, 4), min_size=view.ndim, max_size=view.ndim).map(tuple),
    ))
    expected = outcome(ref.item, *args)
    got = outcome(view.item, *args)
    if expected[0] == "error":
        same_error(got, expected)
    else:
        assert got[0] == "ok"
        assert type(got[1]) is type(expected[1])
        np.testing.assert_array_equal(got[1], expected[1])
    assert view.tolist() == ref.tolist() or np.isnan(ref).any()


@pytest.mark.parametrize("shape", [(), (1,), (1, 1), (2,), (0,), (3, 1)])
@pytest.mark.parametrize("dtype", [np.int16, np.float64, np.complex64, np.bool_])
def test_scalar_conversions_are_numpys(shape, dtype):
    x = np.array(7, dtype=dtype)
    view, ref = lazybcast.broadcast_to(x, shape), np.broadcast_to(x, shape)
    for convert in (int, float, complex, operator.index):
        expected = outcome(convert, ref)
        got = outcome(convert, view)
        if expected[0] == "error":
            same_error(got, expected)
        else:
            assert got == expected


def test_format():
    v = lazybcast.broadcast_to(np.float64(2.5), ())
    assert f"{v:.3f}" == "2.500"
    assert f"{v}" == str(v) == str(np.float64(2.5)) == "2.5"


@pytest.mark.parametrize("source, shape", [
    (np.float64(2.5), ()), (np.arange(3, dtype=np.int16), (2, 3)),
    (np.array(["a", "bc"]), (2, 2)), (np.array([None, {"k": 1}], dtype=object), (3, 2)),
    (np.arange(5.0)[::-1], (10**6, 10**6, 5)),  # 40 PB logical: only the corners are read
    (np.zeros((0, 3)), (4, 0, 3)),
], ids=["0-d", "int16", "str", "object", "huge", "empty"])
def test_str_is_numpys_of_the_values(source, shape):
    v = lazybcast.broadcast_to(source, shape)
    assert str(v) == str(np.broadcast_to(source, shape))
    assert repr(v).startswith("BroadcastView(shape=")


def test_str_of_a_view_numpy_would_print_whole_is_its_repr():
    """Many short axes escape NumPy's summary ((4,) * 12: 16.8 million elements, a 108 MB
    string from an 8-byte source): past 100,000 printed elements str is the repr, unless
    NumPy's threshold asks for more."""
    v = lazybcast.broadcast_to(np.zeros(1), (4,) * 12)
    assert str(v) == repr(v) == f"{v}"
    w = lazybcast.broadcast_to(np.arange(2.0), (2,) * 17)  # 131,072 elements
    assert str(w) == repr(w)
    with np.printoptions(threshold=2**17):
        assert str(w) == str(np.broadcast_to(np.arange(2.0), w.shape))
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{lazybcast.broadcast_to(np.arange(3.0), (2, 3)):.3f}"


# -- membership ------------------------------------------------------------------------------------


#: NumPy 2.0 and 2.1 themselves segfault after a few hundred comparisons of zero-stride integer
#: arrays of mixed signedness with -1 (``np.broadcast_to(np.zeros(1, "u1"), 2) == -1`` alternated
#: with the same on "i1"; measured: 2.0.2 and 2.1.3 crash, 2.2.6 and 2.3.5 do not). The
#: reference here is NumPy's own ``value in ref`` on such an array, so on those versions -1 is
#: left out of the candidates.
NUMPY_MIXED_INT_COMPARE_CRASHES = np.lib.NumpyVersion(np.__version__) < "2.2.0"


@given(pair=views(numeric_dtypes), data=st.data())
def test_contains_is_numpys(pair, data):
    view, ref = pair
    flat = ref.reshape(-1)
    candidates = [0, 1, -1, 0.5, np.nan, True, 1j]
    if NUMPY_MIXED_INT_COMPARE_CRASHES:
        candidates.remove(-1)
    if flat.size:
        candidates.append(flat[data.draw(st.integers(0, flat.size - 1))])
    value = data.draw(st.sampled_from(candidates))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # comparing complex with real, as NumPy
        assert (value in view) == (value in ref)


def test_contains_arrays_and_empty_views():
    x = np.arange(3)
    v, ref = lazybcast.broadcast_to(x, (4, 3)), np.broadcast_to(x, (4, 3))
    assert (np.array([0, 1, 2]) in v) == (np.array([0, 1, 2]) in ref)
    assert 0 not in lazybcast.broadcast_to(x, (0, 3))
    with pytest.raises(ValueError):
        np.zeros((2, 2)) in v  # noqa: B015 - the broadcast error, as for the ndarray
    with pytest.raises(ValueError):
        np.zeros((2, 2)) in ref  # noqa: B015


# -- structured fields ------------------------------------------------------------------------------

RECORD = np.dtype([("a", "i2"), ("b", "f8", (2,)), ("c", "U3")])


def _records():
    x = np.zeros(3, dtype=RECORD)
    x["a"] = [1, 2, 3]
    x["b"] = [[1.5, 2.5], [3.5, 4.5], [5.5, 6.5]]
    x["c"] = ["x", "yy", "zzz"]
    return x, lazybcast.broadcast_to(x, (1000, 3)), np.broadcast_to(x, (1000, 3))


@pytest.mark.parametrize("key", ["a", "b", "c", ["a", "c"], ["c", "a"]])
def test_field_access_is_lazy(key):
    x, v, ref = _records()
    got = v[key]
    assert type(got) is BroadcastView
    assert got.source.size <= x.size * 2
    assert_same(np.asarray(got), ref[key])
    assert np.shares_memory(got.source, x)


def test_field_errors_are_numpys():
    _, v, ref = _records()
    same_error(outcome(v.__getitem__, "nope"), outcome(ref.__getitem__, "nope"))
    plain = lazybcast.broadcast_to(np.arange(3), (2, 3))
    same_error(outcome(plain.__getitem__, "a"),
               outcome(np.broadcast_to(np.arange(3), (2, 3)).__getitem__, "a"))


def test_field_of_a_record_view_stays_read_only():
    x, v, _ = _records()
    with pytest.raises(ValueError):
        np.asarray(v["a"])[0, 0] = 5
    assert x["a"][0] == 1


# -- real, imag ---------------------------------------------------------------------------------------


@given(pair=views(numeric_dtypes))
def test_real_and_imag(pair):
    view, ref = pair
    assert_lazy(view.real, view, ref.real)
    assert_lazy(view.imag, view, ref.imag)


# -- read-only and missing attributes -------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda v: v.fill(0), lambda v: v.sort(), lambda v: v.partition(1), lambda v: v.put(0, 1),
    lambda v: v.resize((3,)),
])
def test_in_place_methods_say_read_only(call):
    v = lazybcast.broadcast_to(np.arange(3), (2, 3))
    n = np.broadcast_to(np.arange(3), (2, 3))
    with pytest.raises(ValueError):  # NumPy's type for a read-only array
        call(n)
    with pytest.raises(ValueError, match="read-only.*materialize"):
        call(v)


def test_missing_ndarray_attributes_name_the_cheap_way():
    v = lazybcast.broadcast_to(np.arange(3), (2, 3))
    with pytest.raises(AttributeError, match=r"np\.asarray\(view\)\.tobytes.*materialize"):
        v.tobytes  # noqa: B018
    with pytest.raises(AttributeError, match="nonsense"):
        v.nonsense  # noqa: B018
    for name in ("__array_interface__", "__array_struct__", "__buffer__", "ctypes", "data",
                 "tofile", "nonzero"):
        assert not hasattr(v, name)
        assert hasattr(np.ndarray, name) or name == "__buffer__"


# -- DLPack -------------------------------------------------------------------------------------------


@NUMPY_2_1
@given(pair=views(numeric_dtypes))
def test_from_dlpack_shares_the_source(pair):
    view, ref = pair
    a = np.from_dlpack(view)
    assert_same(a, ref)
    assert not a.flags.writeable
    if view.size and view.source.size:
        reversed_data = any(s < 0 for n, s in zip(ref.shape, ref.strides) if n > 1)
        # zero-copy; a view over reversed data exports a copy of its compact source
        assert np.shares_memory(a, view.source) != reversed_data
        for n, s, s_ref in zip(a.shape, a.strides, ref.strides):
            if n > 1:
                assert (s == 0) == (s_ref == 0)  # the broadcast axes keep stride 0
                assert s == s_ref or reversed_data


@NUMPY_2_1
def test_dlpack_versions_and_copies():
    x = np.arange(3.0)
    v = lazybcast.broadcast_to(x, (4, 3))
    assert v.__dlpack_device__() == (1, 0)
    assert np.from_dlpack(v).strides == (0, 8)
    with pytest.raises(BufferError, match=r"read-only.*max_version=\(1, 0\).*materialize"):
        v.__dlpack__()  # a pre-1.0 consumer cannot be told the memory is read-only
    copied = np.from_dlpack(lazybcast.broadcast_to(x, (4, 3)).materialize())
    assert copied.flags.writeable
    capsule = v.__dlpack__(copy=True)  # a writeable copy, made by the kernel
    assert capsule is not None
    with pytest.raises(BufferError, match="unsupported device"):
        v.__dlpack__(max_version=(1, 0), dl_device=(2, 0))
    with pytest.raises(BufferError, match="DLPack only supports"):
        np.from_dlpack(lazybcast.broadcast_to(np.array(["a"]), (2, 1)))


# -- the buffer protocol: refused on purpose ---------------------------------------------------------


def test_no_buffer_protocol_so_that_np_array_keeps_the_kernel():
    x = np.arange(3.0)
    v = lazybcast.broadcast_to(x, (4, 3))
    with pytest.raises(TypeError):
        memoryview(v)
    a = np.array(v)  # through __array__ (a kernel copy), not through a strided buffer
    assert a.flags.writeable and not np.shares_memory(a, x)
    if np.lib.NumpyVersion(np.__version__) >= "2.1.0":  # 2.0 copies __array__'s result itself
        assert a.flags.c_contiguous
    m = memoryview(np.asarray(v))  # the way: zero-copy, read-only, strided
    assert m.readonly and m.strides == (0, 8) and m.shape == (4, 3)


# -- dask ------------------------------------------------------------------------------------------------


@pytest.fixture(params=["as today", "as a duck array"])
def from_array(request, monkeypatch):
    """``dask.array.from_array``, also as it treats a duck array (an object with
    ``__array_function__``): it calls ``x.copy()`` and keeps the chunks as views."""
    da = pytest.importorskip("dask.array", reason="dask is an optional extra")
    if request.param == "as today":
        return da.from_array
    import dask.array.core

    monkeypatch.setattr(dask.array.core, "is_arraylike", lambda x: True)

    def duck(x, chunks="auto"):
        return da.from_array(x, chunks=chunks, asarray=False)

    return duck


def test_dask_from_array_does_not_materialize(from_array):
    x = np.arange(64, dtype=np.float32)
    v = lazybcast.broadcast_to(x, (4_000_000, 64))  # 1 GB logical
    tracemalloc.start()
    try:
        d = from_array(v, chunks=(500_000, 64))
        built = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        part = d[123:125, 5:8].compute(scheduler="sync")
        computed = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert built < 5_000_000, built
    assert computed < 50_000_000, computed  # far below one 128 MB chunk
    np.testing.assert_array_equal(part, np.broadcast_to(x[5:8], (2, 3)))
    assert d.shape == v.shape and d.dtype == v.dtype
    small = lazybcast.broadcast_to(np.arange(3.0), (10, 3))
    np.testing.assert_array_equal(from_array(small, chunks=4).compute(scheduler="sync"),
                                  np.broadcast_to(np.arange(3.0), (10, 3)))


def test_dask_copy_of_a_view_is_its_source_only(from_array):
    x = np.arange(4.0)
    v = lazybcast.broadcast_to(x, (10**9, 4))
    d = from_array(v, chunks=(10**8, 4))
    assert d[10**9 - 1].compute(scheduler="sync").tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("write", [
    lambda x: x.__setitem__(0, 1), lambda x: x.__setitem__((slice(None), 1), 5),
    lambda x: x.__delitem__(0),
])
def test_item_assignment_raises_valueerror_as_numpy(write):
    n = np.broadcast_to(np.arange(3), (2, 3))
    v = lazybcast.broadcast_to(np.arange(3), (2, 3))
    try:
        write(n)
    except ValueError:
        pass
    with pytest.raises(ValueError, match="read-only.*materialize"):
        write(v)


def _cumprod_0(x):
    return x.cumprod(axis=0)


@pytest.mark.parametrize("call", [
    lambda x: x.round(1), lambda x: x.round(), lambda x: x.clip(0.5, 1.5),
    lambda x: x.clip(min=1.0), lambda x: x.conj(), lambda x: x.conjugate(),
    lambda x: x.cumsum(axis=1), lambda x: x.cumsum(), _cumprod_0,
    lambda x: x.dot(x.T), lambda x: x.dot(np.ones(3)), lambda x: list(x.flat),
    lambda x: x.flat[4],
], ids=["round1", "round", "clip", "clip-min", "conj", "conjugate", "cumsum1", "cumsum",
        "cumprod0", "dot-view", "dot-array", "flat", "flat-index"])
@pytest.mark.parametrize("src", [np.arange(3.0) - 0.75, np.array([1 + 2j, -3j, 0.5])],
                         ids=["float", "complex"])
def test_ndarray_methods_as_numpy(call, src):
    """round/clip/conj/conjugate stay lazy; so do cumsum/cumprod (along axis 0, which
    repeats, the source stretched along it: 6 elements); dot/flat are NumPy's (review F5)."""
    n, v = np.broadcast_to(src, (2, 3)), lazybcast.broadcast_to(src, (2, 3))
    try:
        expected = call(n)
    except TypeError:  # clip of complex
        with pytest.raises(TypeError):
            call(v)
        return
    got = call(v)
    if isinstance(expected, np.ndarray) and expected.shape == (2, 3) and \
            not np.shares_memory(expected, n) and type(got) is BroadcastView:
        # lazy: computed on the source (a scan along the repeated axis: stretched along it)
        assert got.source.size <= (6 if call is _cumprod_0 else 3)
    expected, got = np.asarray(expected), np.asarray(got)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("api_version", [None, "2023.12", "2020.1", 3])
def test_array_namespace_is_numpys(api_version):
    """The array API's entry: NumPy itself, with NumPy's check of ``api_version``."""
    ref = np.broadcast_to(np.arange(3.0), (2, 3))
    view = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    try:
        want = ref.__array_namespace__(api_version=api_version)
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error), match=re.escape(str(error))):
            view.__array_namespace__(api_version=api_version)
        return
    xp = view.__array_namespace__(api_version=api_version)
    assert xp is want is np
    total = xp.sum(view, axis=0)  # array-API code calls the namespace: lazy as np.sum is
    assert type(total) is lazybcast.BroadcastView
    np.testing.assert_array_equal(np.asarray(total), ref.sum(axis=0))


@pytest.mark.parametrize("device, stream", [("cpu", None), ("gpu", None), (None, None),
                                            ("cpu", 1)])
def test_device_and_to_device_are_numpys(device, stream):
    ref = np.broadcast_to(np.arange(3.0), (2, 3))
    view = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    assert view.device == ref.device == "cpu"
    try:
        ref.to_device(device, stream=stream)
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error)):
            view.to_device(device, stream=stream)
    else:
        assert view.to_device(device, stream=stream) is view
