"""``view[key]`` against ``np.broadcast_to(source, shape)[key]``.

Hypothesis draws a source (any dtype kind lazybcast copies: fixed-size numbers, bytes, unicode,
object, structured with and without object fields; any layout: transposed, negative and
non-unit strides, pre-broadcast stride-0 axes), a view shape over it (zero-size axes included)
and a key (basic, advanced or mixed, in every arrangement). NumPy is the oracle for the values,
the shape, the dtype, the scalar type and the exception type.
"""

import array
import collections
import gc
import sys
import tracemalloc

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import lazybcast
from lazybcast import BroadcastView
from _memory import overcommit_always

DTYPES = [
    np.dtype(np.int8),
    np.dtype(np.uint16),
    np.dtype(np.int32),
    np.dtype(np.float64),
    np.dtype(np.complex128),
    np.dtype(np.bool_),
    np.dtype(">f4"),
    np.dtype("S3"),
    np.dtype("U2"),
    np.dtype(object),
    np.dtype([("a", "<i2"), ("b", "S3")]),  # 5 bytes: the generic item size
    np.dtype([("x", "<f8"), ("y", "<i4")]),
    np.dtype([("i", "<i4"), ("o", "O")]),  # structured holding references
]


def _values(n, dtype):
    """``n`` distinct-ish values of ``dtype`` (1-D)."""
    i = np.arange(n)
    if dtype.kind == "b":
        return i % 3 == 0
    if dtype.kind in "SU":
        return np.array([str(k % 997) for k in range(n)]).astype(dtype)
    if dtype.kind == "O":
        out = np.empty(n, dtype=object)
        out[:] = [k if k % 2 else f"o{k}" for k in range(n)]
        return out
    if dtype.names:
        out = np.zeros(n, dtype=dtype)
        for j, name in enumerate(dtype.names):
            field = dtype.fields[name][0]
            out[name] = _values(n, field) if field.kind != "O" else [(k, j) for k in range(n)]
        return out
    return i.astype(dtype)


@st.composite
def arrays(draw, shape, dtypes=st.sampled_from(DTYPES)):
    """An array of ``shape`` in a random layout."""
    dtype = draw(dtypes)
    ndim = len(shape)
    layout = draw(st.sampled_from(["c", "strided", "broadcast"]))
    if layout == "broadcast" and ndim:
        # Some axes already stride 0 (a NumPy broadcast as the input).
        small = tuple(1 if draw(st.booleans()) else n for n in shape)
        return np.broadcast_to(_values(int(np.prod(small)), dtype).reshape(small), shape)
    if layout == "c" or not ndim:
        return _values(int(np.prod(shape)), dtype).reshape(shape)
    perm = draw(st.permutations(range(ndim)))
    steps = [draw(st.sampled_from([1, 2, -1, -2])) for _ in range(ndim)]
    big = [shape[p] * abs(steps[p]) + draw(st.integers(0, 1)) for p in perm]
    base = _values(int(np.prod(big)), dtype).reshape(big)
    key = tuple(slice(None, None, steps[p]) for p in perm)
    cut = base[key][tuple(slice(0, shape[p]) for p in perm)]
    out = cut.transpose(np.argsort(perm))
    assert out.shape == tuple(shape)
    return out


@st.composite
def views(draw, max_dims=4, max_side=4, dtypes=st.sampled_from(DTYPES)):
    """``(source, shape)``: ``source`` broadcasts to ``shape`` (right-aligned, maybe lower rank)."""
    shape = draw(st.lists(st.integers(0, max_side), min_size=0, max_size=max_dims))
    lead = draw(st.integers(0, len(shape)))
    src_shape = tuple(n if draw(st.booleans()) else 1 for n in shape[lead:])
    return draw(arrays(src_shape, dtypes)), tuple(shape)


def _index_array(draw, n, shape, negative=True):
    low = -n if negative else 0
    if n == 0:
        return np.zeros(shape, dtype=np.intp)  # out of range unless empty
    values = draw(st.lists(st.integers(low, n - 1), min_size=int(np.prod(shape)),
                           max_size=int(np.prod(shape))))
    dtype = draw(st.sampled_from([np.intp, np.int8, np.uint8, np.int32]))
    if dtype in (np.int8, np.uint8) and n > 100 or (dtype == np.uint8 and low < 0):
        dtype = np.intp
    arr = np.array(values, dtype=np.intp).reshape(shape).astype(dtype)
    if (arr.size or arr.ndim == 1) and draw(st.booleans()):
        return arr.tolist() if arr.ndim else int(arr)  # lists are index arrays too
    return arr


def _broadcastable(draw, bshape):
    """A shape that broadcasts to ``bshape``."""
    drop = draw(st.integers(0, len(bshape)))
    return tuple(1 if draw(st.booleans()) else n for n in bshape[drop:])


@st.composite
def keys(draw, shape, advanced=True):
    """A valid-looking key for a view of ``shape`` (NumPy still judges whether it is valid)."""
    ndim = len(shape)
    bshape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))

    def tokens(start, stop):
        out = []
        axis = start
        while axis < stop:
            n = shape[axis]
            kinds = ["int", "slice", "slice", "full", "none"]
            if advanced:
                kinds += ["array", "array", "mask", "bool"]
            kind = draw(st.sampled_from(kinds))
            if kind == "int":
                out.append(draw(st.integers(-n, n - 1)) if n else 0)
                if draw(st.integers(0, 9)) == 0:
                    out[-1] = np.int64(out[-1])
            elif kind == "slice":
                bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
                step = st.one_of(st.none(), st.integers(-3, 3).filter(bool))
                out.append(slice(draw(bound), draw(bound), draw(step)))
            elif kind == "full":
                out.append(slice(None))
            elif kind == "none":
                out.append(None)
                continue
            elif kind == "bool":
                out.append(draw(st.sampled_from([True, False, np.True_, np.False_])))
                continue
            elif kind == "array":
                out.append(_index_array(draw, n, _broadcastable(draw, bshape)))
            else:  # a mask over 1 or more consecutive axes
                k = draw(st.integers(1, stop - axis))
                mshape = shape[axis:axis + k]
                bits = draw(st.lists(st.booleans(), min_size=int(np.prod(mshape)),
                                     max_size=int(np.prod(mshape))))
                mask = np.array(bits, dtype=bool).reshape(mshape)
                out.append(mask.tolist() if k == 1 and draw(st.booleans()) else mask)
                axis += k
                continue
            axis += 1
        if draw(st.integers(0, 4)) == 0:
            out.insert(draw(st.integers(0, len(out))), None)
        return out

    stop = draw(st.integers(0, ndim))
    if draw(st.booleans()):
        start = draw(st.integers(0, stop))
        key = tokens(0, start) + [Ellipsis] + tokens(stop, ndim)
    else:
        key = tokens(0, stop)
    if len(key) == 1 and draw(st.booleans()):
        return key[0]
    return tuple(key)


def _same(got, expected):
    """Values, shape, dtype and scalar type equal (and a view's size and nbytes)."""
    if isinstance(expected, np.ndarray):
        if isinstance(got, BroadcastView):
            assert (got.size, got.nbytes) == (expected.size, expected.nbytes)
        got = np.asarray(got)
        assert got.shape == expected.shape
        assert got.dtype == expected.dtype
        assert got.tolist() == expected.tolist()
    else:
        assert type(got) is type(expected), (type(got), type(expected))
        if isinstance(expected, np.generic):
            assert got.dtype == expected.dtype
            assert got.tolist() == expected.tolist()
        else:
            assert got == expected


def _numpy(source, shape, key):
    try:
        return np.broadcast_to(source, shape)[key], None
    except Exception as e:  # noqa: BLE001 - the oracle's exception type is the expectation
        return None, e


def check(source, shape, key):
    view = lazybcast.broadcast_to(source, shape)
    expected, error = _numpy(source, shape, key)
    if error is not None:
        with pytest.raises(Exception) as info:
            view[key]
        if isinstance(error, DeprecationWarning):  # NumPy 2.0: an out-of-bound index into an
            error = IndexError()                   # empty result was deprecated, now an error
        assert type(info.value) is type(error), (key, info.value, error)
        return None
    got = view[key]
    _same(got, expected)
    if isinstance(expected, np.ndarray) and not _is_advanced(key):
        assert isinstance(got, BroadcastView)
        if got.size and source.size:
            assert np.shares_memory(np.asarray(got), source)
    elif isinstance(expected, np.ndarray):
        assert type(got) is np.ndarray
        assert got.flags.writeable and got.flags.c_contiguous
        assert not np.shares_memory(got, source)
    return got


_SEQUENCES = (list, tuple, range, array.array, collections.deque, memoryview, bytearray)


def _is_advanced(key):
    items = tuple(key) if isinstance(key, tuple) else (key,)
    for item in items:
        if isinstance(item, _SEQUENCES + (bool, np.bool_, _ArrayLike, BroadcastView)):
            return True
        if isinstance(item, np.ndarray) and item.ndim > 0 or (
            isinstance(item, np.ndarray) and item.dtype == bool
        ):
            return True
    return False


# -- property tests ---------------------------------------------------------------------------


@given(st.data())
def test_basic_keys_match_numpy(data):
    source, shape = data.draw(views())
    key = data.draw(keys(shape, advanced=False))
    check(source, shape, key)


@given(st.data())
def test_advanced_and_mixed_keys_match_numpy(data):
    source, shape = data.draw(views())
    key = data.draw(keys(shape))
    check(source, shape, key)


@given(st.data())
def test_outer_index_arrays_on_broadcast_axes_match_numpy(data):
    """np.ix_-style keys whose arrays index broadcast axes (their values select the one source
    element there, once checked): gathered at the smaller index shape the other arrays need,
    then broadcast into the result. Large enough index shapes to take that path; negative
    indices, a None, non-adjacent arrays and out-of-bounds values on broadcast axes."""
    shape = tuple(data.draw(st.lists(st.integers(1, 40), min_size=2, max_size=4)))
    src_shape = tuple(n if data.draw(st.booleans()) else 1 for n in shape)
    source = _values(int(np.prod(src_shape)), np.dtype(np.int32)).reshape(src_shape)
    axes = sorted(data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=2,
                                     max_size=len(shape), unique=True)))
    arrays = [np.array(data.draw(st.lists(st.integers(-shape[a], shape[a] - 1), min_size=8,
                                          max_size=70)), dtype=np.intp) for a in axes]
    for _ in range(data.draw(st.integers(0, 2))):  # values out of bounds
        k = data.draw(st.integers(0, len(axes) - 1))
        arrays[k][data.draw(st.integers(0, len(arrays[k]) - 1))] = shape[axes[k]] + 3
    # other index types: as NumPy reads them (uint64 2**64 - 1 is -1)
    dtype = data.draw(st.sampled_from([np.intp, np.int16, np.uint64]))
    arrays = [arr.astype(dtype) for arr in arrays]
    key = [slice(None)] * len(shape)
    for a, arr in zip(axes, np.ix_(*arrays)):
        key[a] = arr
    if data.draw(st.booleans()):
        key.insert(data.draw(st.integers(0, len(key))), None)
    check(source, shape, tuple(key))


def test_out_of_bounds_arrays_are_reported_in_key_order_as_numpy_does():
    """Arrays on broadcast axes are checked apart from the others, yet the error names the
    first bad array in key order, as NumPy's does."""
    source = np.arange(5).reshape(5, 1)
    key = (np.full((70, 1), 9), np.arange(70)[None] + 200)  # both out of bounds
    with pytest.raises(IndexError) as numpy_error:
        np.broadcast_to(source, (5, 100))[key]
    with pytest.raises(IndexError) as ours:
        lazybcast.broadcast_to(source, (5, 100))[key]
    assert str(ours.value) == str(numpy_error.value)


# Results of 256 TiB and more: beyond the 47-bit address space a process maps by default, so
# NumPy's allocation fails (MemoryError) before it looks at the indices, whatever the machine.
_HUGE = 2**44


@pytest.mark.parametrize("shape, key", [
    ((0, 3, _HUGE), [0]),                            # the fast path: one array
    ((0, 3, _HUGE), np.array([-1], dtype=np.int8)),  # ... of another dtype
    ((3, 0, _HUGE), (slice(None), [0])),             # ... on a later axis
    ((3, 0, _HUGE), (slice(1, None), [0])),          # ... after a slice (an intermediate view)
    ((3, 0, _HUGE), (Ellipsis, [0], slice(None))),
    ((3, 0, _HUGE), ([0], [0])),                     # the general path: two arrays
    ((3, 2, _HUGE), ([0] * 8, [2])),                 # ... the second one bad
    ((3, 2, _HUGE), (np.array([0] * 8), None, [5])),
    # results whose byte count overflows intp (NumPy's ValueError "array is too big"):
    ((0, 3, _HUGE), np.zeros(2**16, dtype=np.intp)),  # the fast path
    ((3, 0, _HUGE), (np.zeros(2**16, dtype=np.intp), [0])),  # the general path
])
def test_a_bad_index_is_an_index_error_however_large_the_result(shape, key):
    """A key with an index out of bounds raises IndexError even where the result could not be
    allocated (NumPy allocates it first and raises MemoryError): the error is the one NumPy
    gives for the same key on an array whose indexed axes have the same sizes."""
    small = np.zeros(shape[:2] + (1,))
    with pytest.raises(IndexError) as numpy_error:
        small[key]
    view = lazybcast.broadcast_to(np.zeros((1, 1, 1), dtype=np.complex128), shape)
    with pytest.raises(IndexError) as ours:
        view[key]
    assert str(ours.value) == str(numpy_error.value)


@pytest.mark.parametrize("key", [
    (np.zeros(2, int), np.zeros(3, int)),                    # (2,) (3,)
    (np.zeros((2, 3), int), 0, np.zeros(4, int)),            # ints are not listed
    (np.zeros((2, 3), int), np.zeros((), int), np.zeros(4, int)),
    (False, np.zeros((1, 3), int), True, None),              # scalar booleans where they are
    (np.zeros(3, int), False, np.zeros((1, 3), int)),
    (False, np.ones((4, 5), bool), np.zeros((2, 1), int)),   # a mask: one array per axis
])
def test_index_arrays_that_do_not_broadcast_are_numpys_error(key):
    """The shape mismatch error lists the index arrays' shapes as NumPy does: in key order,
    written ``(3,1)`` and ``(4,)``, each followed by a space."""
    source = np.arange(4 * 5 * 6.0).reshape(4, 5, 6)[:, :1]
    with pytest.raises(IndexError) as numpy_error:
        np.broadcast_to(source, (4, 5, 6))[key]
    with pytest.raises(IndexError) as ours:
        lazybcast.broadcast_to(source, (4, 5, 6))[key]
    assert str(ours.value) == str(numpy_error.value)


def test_a_bad_index_is_an_index_error_however_large_the_broadcast_index_arrays():
    """Index arrays that broadcast to far more positions than they hold are bounds-checked at
    their own size: a boolean result of 8 GiB may fit where the 64 GiB of offsets per index
    array would not. The error is NumPy's for the same first bad index."""
    view = lazybcast.broadcast_to(np.zeros((3, 2**16), dtype=bool), (3, 2**16))
    rows = np.zeros((2**17, 1), dtype=np.intp)
    rows[5] = 3
    cols = np.arange(2**16)[None]
    with pytest.raises(IndexError) as numpy_error:
        np.zeros((3, 2**16), dtype=bool)[rows[:8], cols]
    for key in ((rows, cols), (rows, cols, None), (rows, 2**15)):
        with pytest.raises(IndexError) as ours:
            view[key]
        assert str(ours.value) == str(numpy_error.value)


@pytest.mark.skipif(overcommit_always(), reason="vm.overcommit_memory=1: a huge malloc succeeds "
                    "and touching it would summon the OOM killer")
def test_a_result_too_large_with_indices_in_bounds_is_a_memory_error():
    view = lazybcast.broadcast_to(np.zeros((1, 1, 1), dtype=np.complex128), (3, 2, _HUGE))
    for key in ([0, 1, 2] * 3, np.array([2, 0, 1]), ([0] * 8, [1])):
        with pytest.raises(MemoryError):
            view[key]


@st.composite
def one_array_keys(draw, shape):
    """``view[idx]``, ``view[:, idx]``, ``view[a:b, ..., mask]``: one index array (any integer
    dtype, byte order or layout; a list of positions' worth of dimensions) or a 1-D boolean
    mask (sometimes of the wrong length), every other entry a slice or one ``...``. Now and
    then an index out of bounds."""
    ndim = len(shape)
    pos = draw(st.integers(0, ndim - 1))
    n = shape[pos]
    if draw(st.integers(0, 3)) == 0:
        length = n if draw(st.integers(0, 5)) else draw(st.integers(0, n + 2))
        item = np.array(draw(st.lists(st.booleans(), min_size=length, max_size=length)),
                        dtype=bool)
    else:
        ishape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=2)))
        size = int(np.prod(ishape))
        low, high = (-n, n - 1) if n else (0, 0)
        values = draw(st.lists(st.integers(low, high), min_size=size, max_size=size))
        if values and (n == 0 or draw(st.integers(0, 9)) == 0):
            values[draw(st.integers(0, size - 1))] = draw(st.sampled_from([n, -n - 1, n + 7]))
        item = np.array(values, dtype=np.intp).reshape(ishape)
        dtype = draw(st.sampled_from(["intp", "int8", "int16", "uint64", ">i8", "<u4"]))
        if dtype == "int8" and n > 120 or dtype in ("uint64", "<u4") and min(values, default=0) < 0:
            dtype = "intp"
        item = item.astype(dtype)
        if draw(st.booleans()) and item.ndim == 2:
            item = np.ascontiguousarray(item.T).T  # F order (same values)
    entries = []
    for axis in range(ndim):
        if axis == pos:
            entries.append(item)
        else:
            m = shape[axis]
            entries.append(slice(draw(st.one_of(st.none(), st.integers(-m - 1, m + 1))),
                                 draw(st.one_of(st.none(), st.integers(-m - 1, m + 1))),
                                 draw(st.sampled_from([None, 1, 2, -1, -3]))))
    # Drop trailing entries (implicit `...`) or fold a run of axes into one `...`.
    cut = draw(st.integers(pos + 1, ndim))
    entries = entries[:cut]
    if draw(st.booleans()):
        start = draw(st.integers(0, len(entries)))
        stop = draw(st.integers(start, len(entries)))
        if not start <= pos < stop:
            entries[start:stop] = [Ellipsis]
    return entries[0] if len(entries) == 1 and draw(st.booleans()) else tuple(entries)


@given(st.data())
def test_one_array_keys_match_numpy(data):
    """The fast path of one index array or mask amid slices: values, shape, dtype, layout and
    the exception type all as NumPy's (its out-of-bounds message too)."""
    shape = tuple(data.draw(st.lists(st.integers(0, 7), min_size=1, max_size=4)))
    lead = data.draw(st.integers(0, len(shape)))
    src_shape = tuple(n if data.draw(st.booleans()) else 1 for n in shape[lead:])
    source = data.draw(arrays(src_shape))
    key = data.draw(one_array_keys(shape))
    check(source, shape, key)
    expected, error = _numpy(source, shape, key)
    if isinstance(error, IndexError) and "out of bounds" in str(error):
        with pytest.raises(IndexError) as ours:
            lazybcast.broadcast_to(source, shape)[key]
        assert str(ours.value) == str(error)


@pytest.mark.parametrize("key", [
    np.array([3, 0, -1]),
    np.array([[1], [2]], dtype=np.int16),
    np.arange(8) % 3 == 0,                                 # a mask of axis 0
    (slice(1, 6, 2), np.array([4, 4, 0])),
    (Ellipsis, np.array([0, 6])),
    (np.array([7, 1]), Ellipsis),
    (slice(None), Ellipsis, np.array([2, 2, 5], dtype=np.uint8)),
    (slice(None, None, -1), np.arange(7) > 3),             # a mask of axis 1
])
def test_one_array_keys_skip_the_general_parser(monkeypatch, key):
    """``view[idx]`` and ``view[:, idx]``-style keys never reach ``_indexing.index`` (its
    per-key cost is what made small gathers slower than NumPy's)."""
    from lazybcast import _indexing

    source = np.arange(7.0)
    view = lazybcast.broadcast_to(source, (8, 7))
    expected = np.broadcast_to(source, (8, 7))[key]

    def general(*args):
        raise AssertionError("the general parser was called")

    monkeypatch.setattr(_indexing, "index", general)
    got = view[key]
    assert type(got) is np.ndarray and got.flags.c_contiguous and got.flags.writeable
    _same(got, expected)


@pytest.mark.skipif(not hasattr(np.dtypes, "StringDType"), reason="NumPy without StringDType")
def test_gathers_of_stringdtype_sources_are_numpys():
    """StringDType items hold references the kernels do not copy: its gathers are NumPy's, on
    every path (one array, several, a mask, RowDataset batches)."""
    source = np.array(["a", "bb", "ccc"], dtype=np.dtypes.StringDType())
    for key in (np.array([0, 2, -1]), (slice(None), np.array([2, 0])), (Ellipsis, source == "bb"),
                (np.array([[1], [3]]), np.array([0, 2]))):
        check(source, (4, 3), key)
    got = lazybcast.RowDataset(lazybcast.broadcast_to(source, (4, 3))).__getitems__([0, 3])
    assert got.tolist() == [["a", "bb", "ccc"]] * 2


@pytest.mark.parametrize("key", [
    np.ones((8, 7), dtype=bool),                           # a 2-D mask
    np.ones(5, dtype=bool),                                # a mask of the wrong length
    (np.array([1, 2]), np.array([0, 3])),                  # two arrays
    (np.array([1, 2]), 3),                                 # an array and an int
    (None, np.array([1, 2])),                              # a None
    np.array([1, 2]).view(np.matrix),                      # an ndarray subclass
])
def test_other_array_keys_take_the_general_parser(monkeypatch, key):
    from lazybcast import _indexing

    calls = []
    index = _indexing.index
    monkeypatch.setattr(_indexing, "index", lambda *a: calls.append(1) or index(*a))
    check(np.arange(7.0), (8, 7), key)
    assert calls


def test_compact_gathers_read_each_repeated_part_once(monkeypatch):
    """Gathers with several index arrays whose result repeats along the view's broadcast axes
    gather the compact part (broadcast axes of length 1, arrays on broadcast axes left out of
    the index shape) and broadcast it into the result."""
    from lazybcast import _kernels

    parts = []
    copy = _kernels.copy_broadcast
    monkeypatch.setattr(_kernels, "copy_broadcast",
                        lambda part, out, *a: parts.append(part.shape) or copy(part, out, *a))
    rows, cols = np.arange(60)[::-1] % 50, np.arange(70) * 7 % 64
    cases = [
        (np.arange(64, dtype=np.int32), (50, 64), np.ix_(rows, cols), (1, 70)),
        (np.arange(64 * 50, dtype=np.int32).reshape(1, 50, 64), (30, 50, 64),
         (slice(None), rows[:, None], cols), (1, 60, 70)),
        (np.arange(64, dtype=np.int32), (50, 64), (rows[:, None], None, cols), (1, 70)),
        (np.arange(64 * 30, dtype=np.int32).reshape(64, 30), (50, 64, 30), (rows[:, None], -5),
         (1, 1, 30)),
    ]
    for source, shape, key, part in cases:
        parts.clear()
        _same(lazybcast.broadcast_to(source, shape)[key], np.broadcast_to(source, shape)[key])
        assert parts == [part], (key, parts)
    whole = [  # keys that gather whole: nothing repeated, or a result under 4 kB
        (np.arange(64 * 64, dtype=np.int32).reshape(64, 64), (64, 64),
         (rows[:, None] + 10, cols[None, :])),
        (np.arange(64, dtype=np.int32), (50, 64), np.ix_(rows[:10], cols[:10])),
    ]
    for source, shape, key in whole:
        parts.clear()
        got = lazybcast.broadcast_to(source, shape)[key]
        _same(got, np.broadcast_to(source, shape)[key])
        assert parts == [], (key, parts)
    assert got.nbytes < 4096 <= lazybcast.broadcast_to(*whole[0][:2])[whole[0][2]].nbytes


def test_outer_gather_on_a_broadcast_axis_costs_the_result():
    """``np.ix_`` over a broadcast axis: the index shape is 2000 x 2000, yet no index table of
    that size is made (two would be 64 MB), only the result (16 MB)."""
    lazybcast._kernels.stream_threshold()  # the process's one calibration (an array of the
    #                                        shared cache's size), not this gather's cost
    source = np.arange(2000, dtype=np.int32)
    rows, cols = np.arange(2000)[::-1], (np.arange(2000) * 7) % 2000
    view = lazybcast.broadcast_to(source, (10**6, 2000))
    got, peak = _peak(lambda: view[np.ix_(rows, cols)])
    assert peak < got.nbytes + 1_000_000
    np.testing.assert_array_equal(got, np.broadcast_to(source[cols], (2000, 2000)))


@given(st.data())
def test_all_int_keys_give_numpys_scalar(data):
    source, shape = data.draw(views(max_dims=3))
    assume(all(shape))
    key = tuple(data.draw(st.integers(-n, n - 1)) for n in shape)
    got = check(source, shape, key)
    assert not isinstance(got, (BroadcastView, np.ndarray))


@given(st.data())
def test_chained_basic_indexing_stays_lazy_and_matches(data):
    source, shape = data.draw(views(max_dims=3))
    view = lazybcast.broadcast_to(source, shape)
    ref = np.broadcast_to(source, shape)
    for _ in range(3):
        key = data.draw(keys(ref.shape, advanced=False))
        expected, error = _numpy(ref, ref.shape, key)
        if error is not None or not isinstance(expected, np.ndarray):
            return
        view, ref = view[key], expected
        assert isinstance(view, BroadcastView)
        _same(view, ref)
        # the stride map agrees with NumPy's, axis by axis, wherever the axis has > 1 element
        for n, mine, theirs in zip(ref.shape, view.strides, ref.strides):
            if n > 1 and ref.size:
                assert mine == theirs


@given(st.data())
def test_views_from_basic_keys_read_their_source_before_and_after_it_is_made(data):
    """A basic key's view makes its source ndarray on first use: every attribute, conversion
    and further key reads the same elements as NumPy's, whichever links of the chain had their
    source made, and the last view alone keeps the memory alive."""
    source, shape = data.draw(views(max_dims=5))
    view = lazybcast.broadcast_to(source, shape)
    ref = np.broadcast_to(source, shape)
    expected_writeable = view.source.flags.writeable
    src = None
    for _ in range(data.draw(st.integers(1, 4))):
        key = data.draw(keys(ref.shape, advanced=False))
        expected, error = _numpy(ref, ref.shape, key)
        if error is not None or not isinstance(expected, np.ndarray):
            break
        view, ref = view[key], expected
        if data.draw(st.booleans()):  # this link's source made now, or never
            src = view.source
            assert src.ndim == view.ndim and src.flags.writeable == expected_writeable
            assert np.broadcast_to(src, view.shape).tolist() == ref.tolist()
    # What NumPy read, taken before the references to the source go (NumPy's arrays, a made
    # source, and NumPy's exception, whose traceback holds _numpy's frame): then only the view
    # keeps its memory alive (a young collection suffices: the chain is a few calls old, and
    # a full one costs ~0.3 s per example late in the suite).
    geometry = (ref.shape, ref.dtype, ref.itemsize, ref.nbytes, ref.size)
    strides = [theirs for n, theirs in zip(ref.shape, ref.strides) if n > 1 and ref.size]
    values = ref.tolist()
    ends = None
    if ref.ndim and ref.shape[0] and ref.dtype.kind not in "OV":
        ends = ref.shape[0], ref[-1].tolist(), ref[[0]].tolist()
    del source, ref, expected, error, src
    gc.collect(1)
    assert (view.shape, view.dtype, view.itemsize, view.nbytes, view.size) == geometry
    assert [mine for n, mine in zip(view.shape, view.strides) if n > 1 and view.size] == strides
    assert np.asarray(view).tolist() == values
    assert view.materialize().tolist() == values
    if ends is not None:
        n, last, first = ends
        assert view[n - 1].tolist() == last
        assert view[[0]].tolist() == first  # a gather from the made source


@pytest.mark.parametrize("key", [np.s_[1:], np.s_[None], np.s_[..., ::-1], np.s_[0, ..., None]])
def test_basic_keys_of_high_rank_views(key):
    """Views of rank above what the view object holds of the geometry itself (8): it lives
    in a bytes object."""
    source = np.arange(2 * 3 * 4, dtype=np.int16).reshape(2, 1, 3, 1, 1, 4, 1, 1, 1)
    shape = (2, 2, 3, 1, 2, 4, 1, 2, 1)
    view = lazybcast.broadcast_to(source, shape)[key]
    expected = np.broadcast_to(source, shape)[key]
    assert view.shape == expected.shape and view.source.ndim == expected.ndim
    assert view.materialize().tolist() == expected.tolist()
    assert view[1:][::-1].materialize().tolist() == expected[1:][::-1].tolist()


def test_views_share_the_free_list():
    """Cython reuses freed objects of the class that declares the free list only for a type
    of that class's size: a BroadcastView adds no field (and no method table) of its own."""
    assert lazybcast.BroadcastView.__basicsize__ == lazybcast._view._ViewFields.__basicsize__


@given(st.data())
def test_two_advanced_indices_placement(data):
    """Adjacent advanced indices replace their axes in place; separated ones go first."""
    shape = (2, 3, 4, 5)
    source = _values(120, np.dtype(np.int64)).reshape(shape)
    i, j = sorted(data.draw(st.lists(st.integers(0, 3), min_size=2, max_size=2, unique=True)))
    bshape = tuple(data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=2)))
    key = [slice(None)] * 4
    key[i] = _index_array(data.draw, shape[i], bshape)
    if data.draw(st.booleans()):
        key[j] = data.draw(st.integers(-shape[j], shape[j] - 1))  # an int counts as advanced
    else:
        key[j] = _index_array(data.draw, shape[j], _broadcastable(data.draw, bshape))
    got = check(source, shape, tuple(key))
    assert isinstance(got, np.ndarray)


# -- specific cases ---------------------------------------------------------------------------


class _ArrayLike:
    def __init__(self, values):
        self.values = values

    def __array__(self, dtype=None, copy=None):
        return np.array(self.values, dtype=dtype)


class _Index:
    """Not an int, but has ``__index__``: NumPy accepts it as an integer index."""

    def __init__(self, i):
        self.i = i

    def __index__(self):
        return self.i


@pytest.mark.parametrize(
    "key",
    [
        (0, ...),
        (..., 0),
        ...,
        None,  # a bare None or ... takes the fast path too (it was 13x slower)
        (),  # the same source and shape: the view itself (NumPy: a new, equal view)
        slice(None),
        (slice(None), slice(None)),
        (..., slice(None)),
        (),
        (None, 1, None, ..., -1),
        (slice(None, None, -1), 2),
        ([], ...),
        (np.array([], dtype=np.intp), 0),
        ([[]],),
        np.zeros((3, 4), dtype=bool),
        np.ones((3, 4), dtype=bool),
        (np.array([True, False, True]), [1, 3]),
        ([0, 2], ..., [1, 3]),
        ([0, 2], slice(None), None),
        (1, None, [0, 1]),
        (True,),
        (False, 0),
        (None, True, [[0], [2]], slice(1, None)),
        ([-1, -3, 0],),
        (slice(1, 1), [0, 0]),
        ((0, 2),),  # a tuple inside the key is an index array
        (((0, 1), (2, 2)), slice(None, None, -2)),
        (_Index(2), slice(_Index(1), None)),
        np.array(1),  # a 0-d integer array is an int (basic, lazy)
        (np.array(True), 1),
        (_ArrayLike([2, 0, -1]),),  # any object with __array__ is an index array
        (lazybcast.broadcast_to(np.array([0, 3]), (2, 2)), 1),
    ],
)
def test_specific_keys(key):
    source = np.arange(4, dtype=np.int16)
    check(source, (3, 4), key)


@pytest.mark.parametrize("key", [(), ..., None, (None, ...)])
def test_zero_dim_view(key):
    source = np.array(7.5)
    got = check(source, (), key)
    if key is None or isinstance(key, tuple) and None in key:
        assert isinstance(got, BroadcastView) and got.shape == (1,)
    elif key is ...:
        assert isinstance(got, BroadcastView) and got.shape == ()
    else:
        assert type(got) is np.float64


def test_object_gather_keeps_references_right():
    obj = object()
    source = np.empty(2, dtype=object)
    source[:] = [obj, None]
    view = lazybcast.broadcast_to(source, (1000, 2))
    before = sys.getrefcount(obj)
    got = view[[0, 5, 999], 0]
    assert got.tolist() == [obj] * 3
    assert sys.getrefcount(obj) == before + 3
    del got
    assert sys.getrefcount(obj) == before


# -- laziness and cost -------------------------------------------------------------------------


def _peak(fn):
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


HUGE = (10**6, 10**6)  # 10**12 logical elements, 8 TB of int64


def test_slicing_a_huge_view_is_lazy():
    source = np.arange(10**6)
    view = lazybcast.broadcast_to(source, HUGE)
    got, peak = _peak(lambda: view[5::-3, None, 10:-10:7][..., 1:])
    assert isinstance(got, BroadcastView)
    assert got.shape == (2, 1, 142854)
    assert peak < 100_000  # bytes: nothing proportional to the view (or even the source)
    np.testing.assert_array_equal(np.asarray(got[1, 0, :4]), [17, 24, 31, 38])


def test_fancy_indexing_a_huge_view_costs_the_result():
    source = np.arange(10**6)
    view = lazybcast.broadcast_to(source, HUGE)
    rows = np.array([0, 10**6 - 1, 12345])
    got, peak = _peak(lambda: view[rows, 3:1000:2])
    np.testing.assert_array_equal(got, np.broadcast_to(source, HUGE)[rows, 3:1000:2])
    assert peak < 200_000


# -- every key NumPy accepts (issue 13, items 3-6) ----------------------------------------------


class TupleKey(tuple):
    """A tuple subclass: NumPy indexes with its entries, as with a tuple."""


Pair = collections.namedtuple("Pair", "first second")


class RaisingIndex:
    def __index__(self):
        raise ZeroDivisionError("__index__ raised")


class Index:
    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


def _other_sequence(draw, item):
    """``item`` (a 1-D list of ints) as another sequence NumPy converts to the same index array,
    or ``item`` itself."""
    values = list(item)
    kinds = ["list", "array.array", "deque", "memoryview", "tuple"]
    if values and min(values) >= 0 and max(values) < 256:
        kinds.append("bytearray")
    if values == list(range(len(values))):
        kinds.append("range")
    kind = draw(st.sampled_from(kinds))
    if kind == "array.array":
        return array.array("q", values)
    if kind == "deque":
        return collections.deque(values)
    if kind == "memoryview":
        return memoryview(np.array(values, dtype=np.intp))
    if kind == "tuple":
        return tuple(values)
    if kind == "bytearray":
        return bytearray(values)
    if kind == "range":
        return range(len(values))
    return item


@st.composite
def numpy_keys(draw, shape):
    """The keys of :func:`keys` re-spelled in every form NumPy reads the same way (tuple
    subclasses, namedtuples, sequences that become index arrays, ``__index__`` objects, many
    scalar booleans), plus entries whose ``__index__`` raises."""
    key = draw(keys(shape))
    entries = list(key) if type(key) is tuple else [key]
    for i, item in enumerate(entries):
        if type(item) is list and all(type(v) is int for v in item):
            entries[i] = _other_sequence(draw, item)
        elif type(item) is int and draw(st.integers(0, 3)) == 0:
            entries[i] = Index(item)
    if draw(st.integers(0, 9)) == 0:
        entries.insert(draw(st.integers(0, len(entries))), RaisingIndex())
    if draw(st.integers(0, 9)) == 0:
        entries += [draw(st.sampled_from([True, np.True_, False]))] * draw(st.integers(1, 66))
    form = draw(st.sampled_from(["tuple", "subclass", "namedtuple", "bare"]))
    if form == "subclass":
        return TupleKey(entries)
    if form == "namedtuple" and len(entries) == 2:
        return Pair(*entries)
    if form == "bare" and len(entries) == 1 and not isinstance(entries[0], tuple):
        return entries[0]
    return tuple(entries)


@given(st.data())
def test_every_key_form_numpy_reads_matches_numpy(data):
    source, shape = data.draw(views(max_dims=3))
    check(source, shape, data.draw(numpy_keys(shape)))


def test_tuple_subclass_keys_are_tuples_of_entries():
    v, a = lazybcast.broadcast_to(np.ones((5, 5)), (5, 5)), np.ones((5, 5))
    assert v[TupleKey(([1], [1]))].shape == a[TupleKey(([1], [1]))].shape == (1,)
    assert type(v[Pair(0, 1)]) is np.float64
    assert v[TupleKey((slice(1, 3),))].shape == (2, 5)


@pytest.mark.parametrize("seq", [
    range(2), array.array("i", [0, 1]), memoryview(np.array([0, 1])), collections.deque([0, 1]),
    bytearray(b"\x00\x01"), memoryview(b"\x00\x01"), (0, 1),
], ids=lambda s: type(s).__name__)
def test_sequences_are_index_arrays(seq):
    source = np.arange(5.0)
    v, a = lazybcast.broadcast_to(source, (5, 5)), np.broadcast_to(source, (5, 5))
    for key in (seq, (slice(None), seq), (seq, 0)):
        _same(v[key], a[key])


def test_64_scalar_booleans():
    key = (slice(None),) + (True,) * 64
    v = lazybcast.broadcast_to(np.ones(1), (2, 1))
    assert v[key].shape == np.broadcast_to(np.ones(1), (2, 1))[key].shape == (2, 1, 1)
    with pytest.raises(IndexError, match="64"):
        v[key + (True,)]


@pytest.mark.parametrize("key", [RaisingIndex(), (0, RaisingIndex()), [RaisingIndex()]],
                         ids=["bare", "in-tuple", "in-list"])
def test_raising_index_is_an_index_error(key):
    with pytest.raises(IndexError):
        np.broadcast_to(np.ones(3), (2, 3))[key]
    with pytest.raises(IndexError):
        lazybcast.broadcast_to(np.ones(3), (2, 3))[key]


# -- errors ------------------------------------------------------------------------------------


ERROR_KEYS = [
    pytest.param(3, IndexError, id="int-out-of-range"),
    pytest.param(-4, IndexError, id="negative-out-of-range"),
    pytest.param((0, 4), IndexError, id="out-of-range-on-broadcast-axis"),
    pytest.param((0, -5), IndexError, id="negative-out-of-range-on-broadcast-axis"),
    pytest.param([0, 3], IndexError, id="array-out-of-range"),
    pytest.param((slice(None), [-5]), IndexError, id="array-out-of-range-broadcast-axis"),
    pytest.param((0, 0, 0), IndexError, id="too-many-indices"),
    pytest.param((0, ..., 0, 0), IndexError, id="too-many-with-ellipsis"),
    pytest.param((np.ones((3, 4, 1), dtype=bool)), IndexError, id="mask-too-many-dims"),
    pytest.param(1.0, IndexError, id="float"),
    pytest.param(np.float64(1), IndexError, id="numpy-float"),
    pytest.param("a", IndexError, id="str"),
    pytest.param(b"a", IndexError, id="bytes"),
    pytest.param(1j, IndexError, id="complex"),
    pytest.param(object(), IndexError, id="object"),
    pytest.param((0, 1.5), IndexError, id="float-second"),
    pytest.param(np.array([0.0, 1.0]), IndexError, id="float-array"),
    pytest.param([0.0, 1.0], IndexError, id="float-list"),
    pytest.param(np.array(["0"]), IndexError, id="str-array"),
    pytest.param([0, None], IndexError, id="object-list"),
    pytest.param([slice(None), 0], IndexError, id="list-of-slices"),
    pytest.param(np.ones(4, dtype=bool), IndexError, id="mask-too-long"),
    pytest.param(np.ones(2, dtype=bool), IndexError, id="mask-too-short"),
    pytest.param((slice(None), np.ones(3, dtype=bool)), IndexError, id="mask-on-broadcast-axis"),
    pytest.param(np.ones((3, 3), dtype=bool), IndexError, id="2d-mask-wrong-shape"),
    pytest.param((..., ...), IndexError, id="two-ellipses"),
    pytest.param(([0, 1], [0, 1, 2]), IndexError, id="arrays-do-not-broadcast"),
    pytest.param((False, [0, 1]), IndexError, id="false-with-array"),
    pytest.param(slice(None, None, 0), ValueError, id="zero-step"),
    pytest.param((0, slice(1, None, 0)), ValueError, id="zero-step-second"),
    pytest.param(([0], slice(None, None, 0)), ValueError, id="zero-step-with-array"),
    pytest.param(slice(1.0, None), TypeError, id="float-slice-bound"),
]


@pytest.mark.parametrize("key, error", ERROR_KEYS)
def test_errors_as_numpy(key, error):
    source = np.arange(4.0)
    with pytest.raises(error):
        np.broadcast_to(source, (3, 4))[key]
    with pytest.raises(error):
        lazybcast.broadcast_to(source, (3, 4))[key]


def test_out_of_range_message_names_axis_and_size():
    view = lazybcast.broadcast_to(np.arange(4.0), (3, 4))
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with size 4"):
        view[0, 7]
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with size 3"):
        view[[0, -4]]


@pytest.mark.parametrize("key", [0, (0, 1), slice(None), ..., [0, 1]])
def test_item_assignment_is_a_value_error(key):
    """NumPy raises ValueError for a write into a read-only array."""
    view = lazybcast.broadcast_to(np.arange(4.0), (3, 4))
    with pytest.raises(ValueError, match=r"materialize\(\)"):
        view[key] = 1.0
    with pytest.raises(ValueError, match=r"materialize\(\)"):
        del view[key]


@pytest.mark.parametrize("dtype", [np.int16, np.float64, object, [("a", "u1"), ("b", "<f4")]])
@pytest.mark.parametrize("src_shape, shape", [((4,), (4,)), ((1,), (3,)), ((4, 1, 2), (4, 3, 2)),
                                              ((1, 3), (5, 3)), ((2, 1), (2, 0))])
def test_single_int_keys_match_numpy(dtype, src_shape, shape):
    """``view[i]`` (a data loader's dataset[i]) has its own fast path: every i in range, and
    the first ones out of it, against NumPy."""
    data = np.arange(int(np.prod(src_shape)), dtype=np.int64).astype(np.float32).astype(
        np.dtype(dtype)).reshape(src_shape)
    v = lazybcast.broadcast_to(data, shape)
    want = np.broadcast_to(data, shape)
    for i in range(-shape[0], shape[0]):
        _same(v[i], want[i])
    for i in (shape[0], -shape[0] - 1, 2**70):
        with pytest.raises(IndexError):
            want[i]
        with pytest.raises(IndexError, match="out of bounds|index"):
            v[i]


@pytest.mark.parametrize("layout", ["unaligned", "byteswapped", "strided"])
def test_index_arrays_in_any_layout(layout):
    values = np.array([5, 0, -1, 2, 2], dtype=np.intp)
    if layout == "unaligned":
        raw = np.zeros(values.nbytes + 1, dtype=np.uint8)[1:]
        idx = raw.view(np.intp)
        idx[:] = values
        assert not idx.flags.aligned
    elif layout == "byteswapped":
        idx = values.astype(values.dtype.newbyteorder())
    else:
        idx = np.repeat(values, 2)[::2]
    source = np.arange(6.0)
    v, a = lazybcast.broadcast_to(source, (6, 6)), np.broadcast_to(source, (6, 6))
    for key in (idx, (slice(None), idx), (idx, idx), idx[None], (idx, 1)):
        _same(v[key], a[key])


def test_index_arrays_of_an_equivalent_integer_type():
    """int64 as C long long ('q', array.array('q')) equals intp but is another NumPy type."""
    source = np.arange(6.0)
    v, a = lazybcast.broadcast_to(source, (6, 6)), np.broadcast_to(source, (6, 6))
    for idx in (np.array([1, -1], dtype="q"), array.array("q", [1, 5]),
                np.array([2, 0], dtype=np.longlong)[::-1]):
        for key in (idx, (slice(None), idx), (idx, [[0], [1]]), (0, idx)):
            _same(v[key], a[key])
