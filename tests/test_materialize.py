"""``BroadcastView.materialize``: results, ``out=`` in every layout, overlap, threads, and the
object, string and structured dtypes (reference counts included)."""

import gc
import sys

import numpy as np
import pytest
from _core_strategies import (
    MODES,
    assert_same,
    call_broadcast,
    dtypes,
    expected_values,
    fill,
    laid_out,
    requests,
)
from hypothesis import assume, given
from hypothesis import strategies as st

import lazybcast


@pytest.mark.parametrize("mode", MODES)
@given(data=st.data())
def test_result_is_a_fresh_c_contiguous_writeable_array(mode, data):
    shape, target, mapping, mode, axis = data.draw(requests(mode))
    x = data.draw(laid_out(shape, data.draw(dtypes)))
    expected = expected_values(x, target, mapping, mode, axis)
    got = call_broadcast(x, target, mapping, mode, axis).materialize()
    assert type(got) is np.ndarray
    assert got.flags.c_contiguous and got.flags.writeable and got.flags.owndata
    assert not np.shares_memory(got, x)
    assert_same(got, expected)


# -- out= ----------------------------------------------------------------------------------


def _out_layout(layout, shape, dtype, seed=0):
    """``(out, big, key)``: a writeable array of ``shape`` in ``layout``; ``big`` is the buffer
    it was cut from with ``key`` (``None`` when ``out`` is all of a fresh array)."""
    n = len(shape)
    if layout == "C" or n == 0:  # indexing a 0-d array with () would give a scalar
        return np.zeros(shape, dtype), None, None
    if layout == "F":
        return np.zeros(shape, dtype, order="F"), None, None
    if layout == "transposed":
        perm = list(range(n))[::-1] if n < 3 else [1, 2, 0] + list(range(3, n))
        return np.zeros([shape[p] for p in perm], dtype).transpose(np.argsort(perm)), None, None
    if layout == "negative":
        return np.zeros(shape, dtype)[(slice(None, None, -1),) * n], None, None
    if layout == "slice":
        big = fill(np.dtype(dtype), [2 * s + 3 for s in shape], seed)
        key = tuple(slice(1, 1 + 2 * s, 2) for s in shape)
        return big[key], big, key
    if layout == "mixed":  # reversed steps of 3 on some axes, a transposed cut of a bigger buffer
        rshape = shape[::-1]
        big = fill(np.dtype(dtype), [3 * s + 1 for s in rshape], seed)
        key = tuple(slice(3 * s - 2, None, -3) if i % 2 else slice(1, 1 + s)
                    for i, s in enumerate(rshape))
        return big[key].T, big, key
    raise AssertionError(layout)


LAYOUTS = ["C", "F", "transposed", "negative", "slice", "mixed"]


@pytest.mark.parametrize("layout", LAYOUTS)
@given(data=st.data())
def test_out_in_every_layout(layout, data):
    shape, target, mapping, mode, axis = data.draw(requests())
    dtype = data.draw(dtypes)
    x = data.draw(laid_out(shape, dtype))
    expected = expected_values(x, target, mapping, mode, axis)
    v = call_broadcast(x, target, mapping, mode, axis)
    out, big, key = _out_layout(layout, v.shape, dtype, data.draw(st.integers(0, 2**32 - 1)))
    assert out.shape == v.shape and out.flags.writeable
    before = None if big is None else big.copy()
    assert v.materialize(out=out) is out
    assert_same(out, expected)
    if big is not None:  # nothing outside `out` was touched
        outside = np.ones(big.shape, dtype=bool)
        outside[key] = False
        assert_same(big[outside], before[outside])


def test_out_wrong_shape():
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    for shape in [(3, 2), (2, 3, 1), (6,), (), (1, 2, 3)]:
        with pytest.raises(ValueError, match="shape"):
            v.materialize(out=np.empty(shape))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128, "V8", ">f8", object])
def test_out_wrong_dtype(dtype):
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    with pytest.raises(TypeError, match="dtype"):
        v.materialize(out=np.zeros((2, 3), dtype=dtype))


@pytest.mark.parametrize(
    "out", [[[0.0] * 3] * 2, 0.0, "out", np.zeros((2, 3)).tolist()],
    ids=["nested-list", "float", "str", "tolist"],
)
def test_out_not_an_array(out):  # (buffer-protocol and DLPack objects: tests/test_batches_out.py)
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    with pytest.raises(TypeError, match="out"):
        v.materialize(out=out)


def test_out_matrix_subclass_is_filled():
    class Sub(np.ndarray):
        pass

    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    out = np.zeros((2, 3)).view(Sub)
    assert v.materialize(out=out) is out
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(3.0), (2, 3)))


def test_out_read_only():
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    out = np.zeros((2, 3))
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        v.materialize(out=out)
    with pytest.raises(ValueError):
        v.materialize(out=np.broadcast_to(np.zeros(3), (2, 3)))
    assert (out == 0).all()


def test_out_positional_and_threads_keyword_only():
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    out = np.empty((2, 3))
    assert v.materialize(out) is out
    with pytest.raises(TypeError):
        v.materialize(out, 1)


# -- out overlapping the source --------------------------------------------------------------


def _overlap_cases():
    """(description, data, target, out) where ``out`` shares memory with ``data``."""
    cases = []
    a = np.arange(9.0).reshape(3, 3)
    cases.append(("out is the data, broadcast row 0", a[0], (3, 3), a))
    b = np.arange(9.0).reshape(3, 3)
    cases.append(("out is the data, broadcast column 0", b[:, :1], (3, 3), b))
    c = np.arange(4, dtype=np.int16).reshape(2, 2)
    cases.append(("out is the whole data", c, (2, 2), c))
    d = np.arange(12, dtype=np.int32)
    cases.append(("shifted window", d[2:6], (1, 4), d[3:7].reshape(1, 4)))
    e = np.arange(12, dtype=np.int32)
    cases.append(("reversed onto itself", e[::-1], (12,), e))
    f = np.arange(16, dtype=np.int64).reshape(4, 4)
    cases.append(("transposed onto itself", f.T, (4, 4), f))
    g = np.arange(10, dtype=np.uint8)
    cases.append(("stride-0 source inside out", g[:1], (10,), g))
    h = fill(np.dtype("V3"), (8,), 1)
    cases.append(("odd itemsize, reversed", h[::-1], (8,), h))
    s = fill(np.dtype([("a", "i2"), ("b", "f8")]), (3, 3), 2)
    cases.append(("structured, out is the data", s[1], (3, 3), s))
    o = np.array([("a", i) for i in range(9)] + [None], dtype=object)[:9].reshape(3, 3)
    cases.append(("object, out is the data", o[2], (3, 3), o))
    return cases


@pytest.mark.parametrize(
    ("what", "data", "target", "out"), _overlap_cases(), ids=[c[0] for c in _overlap_cases()]
)
def test_out_overlapping_the_source(what, data, target, out):
    assert np.shares_memory(data, out), what
    expected = np.broadcast_to(data, target).copy()
    v = lazybcast.broadcast_to(data, target)
    assert v.materialize(out=out) is out
    assert_same(out, expected)


@pytest.mark.parametrize(
    ("mode", "make_data", "target", "mapping", "axis"),
    [
        ("numpy", lambda b: b[2:6], [3, 4], None, -1),
        ("explicit", lambda b: b[1:4], [3, 4], [0], -1),
        ("bidirectional", lambda b: b[5:8].reshape(3, 1), [2, 1, 4], None, -1),
        ("pdpd", lambda b: b[::-1][:3], [2, 3, 4], None, 1),
    ],
)
def test_out_overlapping_in_every_mode(mode, make_data, target, mapping, axis):
    buf = np.arange(24.0)
    data = make_data(buf)
    kwargs = {"axis": axis} if mode == "pdpd" else {}
    v = lazybcast.broadcast(data, target, mapping, mode=mode, **kwargs)
    expected = expected_values(data.copy(), target, mapping, mode, axis).copy()
    out = buf[: v.size].reshape(v.shape)
    assert np.shares_memory(out, data)
    assert v.materialize(out=out) is out
    np.testing.assert_array_equal(out, expected)


# -- threads --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["f8", "V3", "u1", "c16"])
def test_threads_give_the_same_values(dtype):
    dtype = np.dtype(dtype)
    rows = 8_400_000 // (3 * 500 * dtype.itemsize)  # ~8 MB result: several 4 MB blocks
    x = fill(dtype, (1, rows, 1), 3)
    target = (3, rows, 500)
    expected = np.broadcast_to(x, target)
    v = lazybcast.broadcast_to(x, target)
    for threads in (None, 1, 2, 3):
        assert_same(v.materialize(threads=threads), expected)
        out = np.zeros(target, dtype=dtype, order="F")
        assert_same(v.materialize(out=out, threads=threads), expected)


@pytest.mark.parametrize("threads", [0, -1, -100])
def test_threads_bad_value(threads):
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    with pytest.raises(ValueError, match="threads"):
        v.materialize(threads=threads)


@pytest.mark.parametrize("threads", [1.0, 2.5, "2", True, [2]], ids=repr)
def test_threads_bad_type(threads):
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    with pytest.raises(TypeError, match="threads"):
        v.materialize(threads=threads)


def test_threads_numpy_integer():
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    got = v.materialize(threads=np.int64(2))
    np.testing.assert_array_equal(got, np.broadcast_to(np.arange(3.0), (2, 3)))


# -- object, string, structured ---------------------------------------------------------------


def test_object_dtype_values_and_refcounts():
    objs = [object(), ["list"], ("t", 1), "a string that is not interned " * 3]
    x = np.empty(4, dtype=object)
    x[:] = objs
    before = [sys.getrefcount(o) for o in objs]
    v = lazybcast.broadcast_to(x, (1000, 4))
    got = v.materialize()
    assert all(got[i, j] is objs[j] for i in (0, 499, 999) for j in range(4))
    after = [sys.getrefcount(o) for o in objs]
    assert [a - b for a, b in zip(after, before)] == [1000] * 4
    del got
    gc.collect()
    assert [sys.getrefcount(o) for o in objs] == before


def test_object_dtype_out_releases_old_references():
    new = object()
    old = object()
    x = np.array([new, None], dtype=object)[:1]
    out = np.empty((50, 3), dtype=object)
    out[...] = old
    base_new, base_old = sys.getrefcount(new), sys.getrefcount(old)
    lazybcast.broadcast_to(x, (50, 3)).materialize(out=out)
    assert sys.getrefcount(new) - base_new == 150
    assert base_old - sys.getrefcount(old) == 150
    assert all(o is new for o in out.reshape(-1))
    out[...] = None
    assert sys.getrefcount(new) == base_new


def test_object_dtype_with_strides_and_none():
    x = np.array([None, 1, "two", 3.0, None, (5,)], dtype=object).reshape(2, 3)[::-1, ::2]
    got = lazybcast.broadcast(x, [2, 2, 2], [1, 2], mode="explicit").materialize()
    assert got.tolist() == np.broadcast_to(x, (2, 2, 2)).tolist()


def test_object_dtype_np_array_refcounts():
    o = object()
    x = np.array([o], dtype=object)
    base = sys.getrefcount(o)
    a = np.array(lazybcast.broadcast_to(x, (7, 1)))
    assert sys.getrefcount(o) - base == 7
    del a
    assert sys.getrefcount(o) == base


def test_structured_dtype_with_object_field_refcounts():
    o = object()
    dt = np.dtype([("obj", object), ("n", "i4")])
    x = np.zeros(2, dtype=dt)
    x["obj"] = [o, None]
    x["n"] = [1, 2]
    base = sys.getrefcount(o)
    got = lazybcast.broadcast_to(x, (5, 2)).materialize()
    assert got["n"].tolist() == [[1, 2]] * 5
    assert all(got["obj"][i, 0] is o for i in range(5))
    assert sys.getrefcount(o) - base == 5
    del got
    assert sys.getrefcount(o) == base


@pytest.mark.parametrize(
    "dtype",
    ["S1", "S5", "S7", "S16", "S33", "U1", "U3", "U9", "V3", "V5", "V32",
     [("a", "i2"), ("b", "f8")], [("x", "u1"), ("y", "u2")],
     np.dtype([("a", "i1"), ("b", "f4")], align=True),
     [("nested", [("p", "u1"), ("q", "i8")]), ("r", "S3")],
     [("sub", "i2", (3,))], ">i4", "<c8", ">f8"],
    ids=str,
)
def test_string_and_structured_dtypes(dtype):
    dtype = np.dtype(dtype)
    x = fill(dtype, (3, 1, 4), 7)[::-1, :, ::2]
    target = (2, 3, 5, 2)
    expected = np.broadcast_to(x, target)
    got = lazybcast.broadcast_to(x, target).materialize()
    assert got.dtype == dtype
    assert_same(got, expected)


def test_string_values_readable():
    x = np.array(["ab", "cde", ""], dtype="U3")
    got = lazybcast.broadcast(x, [2, 3], mode="bidirectional").materialize()
    assert got.tolist() == [["ab", "cde", ""]] * 2
    x = np.array([b"xyz\x00\x01", b"q"], dtype="S5")
    got = lazybcast.broadcast(x, [2, 1], mode="pdpd", axis=0).materialize()
    assert got.tolist() == [[b"xyz\x00\x01"], [b"q"]]


def test_zero_size_and_zero_d():
    assert lazybcast.broadcast_to(np.ones(3), (0, 3)).materialize().shape == (0, 3)
    assert lazybcast.broadcast_to(np.ones((0, 1)), (5, 0, 4)).materialize().shape == (5, 0, 4)
    z = lazybcast.broadcast(np.array(3, dtype=np.int8), []).materialize()
    assert z.shape == () and z.dtype == np.int8 and z[()] == 3 and z.flags.writeable
    out = np.zeros((), dtype=np.int8)
    assert lazybcast.broadcast_to(np.int8(5), ()).materialize(out=out) is out and out[()] == 5


@pytest.mark.parametrize(
    "dtype", ["i2", "f4", "f8", "c16", ">i8", "V3", [("a", "i2"), ("b", "f8")]], ids=str
)
def test_unaligned_source_and_out(dtype):
    dtype = np.dtype(dtype)

    def unaligned(shape, seed):
        n = int(np.prod(shape)) * dtype.itemsize
        raw = np.zeros(n + 1, dtype=np.uint8)
        raw[1:] = fill(np.dtype("u1"), (n,), seed)
        return raw[1:].view(dtype).reshape(shape)

    x = unaligned((4, 1, 3), 5)[::-1]
    target = (2, 4, 5, 3)
    out = unaligned(target, 6)
    expected = np.broadcast_to(x, target).copy()
    assert lazybcast.broadcast_to(x, target).materialize(out=out) is out
    assert_same(out, expected)
    assert_same(lazybcast.broadcast_to(x, target).materialize(), expected)


@given(data=st.data())
def test_out_overlapping_anywhere(data):
    """``out`` and the data cut from one buffer, with any offsets and steps."""
    shape, target, mapping, mode, axis = data.draw(requests(max_rank=3))
    dtype = data.draw(st.sampled_from([np.dtype("u1"), np.dtype("f8"), np.dtype("V3"),
                                       np.dtype("O")]))
    buf = fill(dtype, (96,), data.draw(st.integers(0, 2**32 - 1)))

    def cut(n, shape):
        if n == 0:
            return buf[:0].reshape(shape)
        step = data.draw(st.sampled_from([1, 2, -1, -2]))
        span = (n - 1) * abs(step) + 1
        assume(span <= buf.size)
        start = data.draw(st.integers(0, buf.size - span))
        if step < 0:
            start += span - 1
        stop = start + step * n
        return buf[start : None if stop < 0 else stop : step].reshape(shape)

    x = cut(int(np.prod(shape)), shape)
    expected = expected_values(x.copy(), target, mapping, mode, axis).copy()
    v = call_broadcast(x, target, mapping, mode, axis)
    out = cut(v.size, v.shape)
    assert v.materialize(out=out) is out
    assert_same(out, expected)


@pytest.mark.parametrize("dtype", [None, "f8"], ids=["own dtype", "cast"])
@given(data=st.data())
def test_out_whose_items_share_bytes_gets_numpys_values(dtype, data):
    """An ``as_strided`` ``out`` whose items may overlap one another (a stride of 0, or strides
    that interleave) is left exactly as ``np.copyto`` leaves one made the same way; every other
    such ``out`` gets the broadcast's values."""
    item = data.draw(st.sampled_from([np.dtype("u1"), np.dtype("<i2"), np.dtype("<u4")]))
    rank = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    out_item = item if dtype is None else np.dtype(dtype)  # (size 0: test_zero_size_and_zero_d)
    steps = data.draw(st.lists(st.integers(-3, 3), min_size=rank, max_size=rank))
    strides = tuple(k * data.draw(st.sampled_from([1, out_item.itemsize])) for k in steps)
    low = sum(min(0, s * (n - 1)) for s, n in zip(strides, shape))
    high = sum(max(0, s * (n - 1)) for s, n in zip(strides, shape)) + out_item.itemsize
    src_shape = tuple(data.draw(st.sampled_from([1, n])) for n in shape)
    seed = data.draw(st.integers(0, 2**32 - 1))
    x = fill(item, src_shape, seed)
    bufs = [bytearray(fill(np.dtype("u1"), (high - low,), seed + 1).tobytes()) for _ in range(2)]
    mine, numpys = (np.ndarray(shape, out_item, buffer=b, offset=-low, strides=strides)
                    for b in bufs)
    np.copyto(numpys, np.broadcast_to(x, shape), casting="unsafe")
    assert lazybcast.broadcast_to(x, shape).materialize(mine, dtype=dtype) is mine
    assert bytes(bufs[0]) == bytes(bufs[1])


def test_out_whose_items_share_bytes_regression():
    """Two int16 items one byte apart (strides (-1, 0)): the kernels left 443311 here,
    NumPy 442211."""
    x = np.array([[0x1122], [0x3344]], dtype=np.int16)
    bufs = [bytearray(3), bytearray(3)]
    mine, numpys = (np.ndarray((2, 1), np.int16, buffer=b, offset=1, strides=(-1, 0))
                    for b in bufs)
    np.copyto(numpys, x)
    lazybcast.broadcast_to(x, (2, 1)).materialize(mine)
    assert bytes(bufs[0]) == bytes(bufs[1])


def test_object_dtype_refcounts_when_out_is_the_data():
    objs = [object() for _ in range(6)]
    x = np.empty((2, 3), dtype=object)
    x[...] = np.array(objs, dtype=object).reshape(2, 3)
    before = [sys.getrefcount(o) for o in objs]
    v = lazybcast.broadcast_to(x[0], (2, 3))
    assert v.materialize(out=x) is x
    del v
    gc.collect()
    assert all(x[i, j] is objs[j] for i in range(2) for j in range(3))
    after = [sys.getrefcount(o) for o in objs]
    assert [a - b for a, b in zip(after, before)] == [1, 1, 1, -1, -1, -1]


@pytest.mark.parametrize("layout", ["C", "F", "transposed", "negative", "slice"])
@pytest.mark.parametrize(
    ("dtype", "shape", "target"),
    [
        ("f8", (1, 700, 1), (3, 700, 600)),  # inner broadcast run: replication
        ("f8", (650, 1), (650, 700)),  # one value per row
        ("u1", (1, 1, 1999), (2, 999, 1999)),  # odd lengths, 1-byte items
        ("c16", (300, 1, 37), (300, 41, 37)),
        ("V3", (1, 1000), (1001, 1000)),
        ("u2", (2048, 1), (2048, 2048)),  # large power-of-two strides
    ],
    ids=lambda p: str(p),
)
def test_large_outputs_every_layout(layout, dtype, shape, target):
    """Outputs of megabytes, where the kernels switch to blocked, tiled and threaded paths."""
    dtype = np.dtype(dtype)
    x = fill(dtype, shape, 11)[::-1]
    expected = np.broadcast_to(x, target)
    v = lazybcast.broadcast_to(x, target)
    out, big, key = _out_layout(layout, target, dtype, 12)
    before = None if big is None else big.copy()
    for threads in (1, 2):
        assert v.materialize(out=out, threads=threads) is out
        assert_same(out, expected)
    if big is not None:  # nothing outside `out` was touched
        outside = np.ones(big.shape, dtype=bool)
        outside[key] = False
        assert_same(big[outside], before[outside])
