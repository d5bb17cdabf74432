"""Hostile-input cases shared by ``test_hostile.py`` (hypothesis) and ``fuzz/fuzz_entry_points.py``
(atheris).

A *drawer* turns fuzzer choices into arguments: anything with ``integer(lo, hi)``. The
``gen_*`` functions build well-formed and malformed arguments for every public entry point; the
``check_*`` functions call lazybcast and an independent reference (NumPy, or the mode rules as the
docs state them) and assert the contract: either both agree the call is invalid and lazybcast
raised ``ValueError``/``TypeError``/``IndexError``, or lazybcast returned the reference's values.
Any other exception propagates and fails the caller.
"""

import array
import collections
import itertools
import math
import operator
import pickle
import sys
import warnings

import numpy as np

import lazybcast

ALLOWED = (ValueError, TypeError, IndexError)
MODES = ("numpy", "explicit", "bidirectional", "pdpd")
#: Views with at most this many elements are compared in full; larger ones at a few corners.
FULL_COMPARE = 20_000


class Invalid(Exception):
    """The reference says the call must fail."""


# -- drawing ----------------------------------------------------------------------------------


class Drawer:
    """Base: subclasses provide ``integer(lo, hi)`` (inclusive)."""

    def integer(self, lo, hi):
        raise NotImplementedError

    def choice(self, seq):
        return seq[self.integer(0, len(seq) - 1)]

    def boolean(self):
        return self.integer(0, 1) == 1


class HypothesisDrawer(Drawer):
    def __init__(self, data):
        from hypothesis import strategies as st

        self._data = data
        self._st = st

    def integer(self, lo, hi):
        return self._data.draw(self._st.integers(lo, hi))


class BytesDrawer(Drawer):
    """Draws from an ``atheris.FuzzedDataProvider`` (or anything with ``ConsumeIntInRange``)."""

    def __init__(self, fdp):
        self._fdp = fdp

    def integer(self, lo, hi):
        return self._fdp.ConsumeIntInRange(lo, hi)


_DTYPES = [
    np.dtype(bool), np.dtype(np.int8), np.dtype(">u2"), np.dtype(np.int32), np.dtype(np.float32),
    np.dtype(np.float64), np.dtype(np.complex128), np.dtype("U3"), np.dtype("V3"),
    np.dtype(object), np.dtype([("a", "<i4"), ("b", "f8")]), np.dtype([("o", "O"), ("i", "i2")]),
    np.dtype(np.float16), np.dtype(np.clongdouble),
]


def _fill(size, dtype):
    values = np.arange(size)
    if dtype.kind == "b":
        return values % 3 == 1
    if dtype.kind == "U":
        return values.astype("U3")
    if dtype.kind == "V" and dtype.names is None:
        return np.frombuffer(
            (np.arange(size * dtype.itemsize) % 251).astype(np.uint8).tobytes(), dtype=dtype
        ).copy()
    if dtype.kind == "O":
        out = np.empty(size, dtype=object)
        for i in range(size):
            out[i] = (i, str(i)) if i % 2 else i
        return out
    if dtype.names:
        out = np.zeros(size, dtype=dtype)
        for name in dtype.names:
            field = values + 1 if out[name].dtype.kind != "O" else [str(v) for v in values]
            out[name] = field
        return out
    return values.astype(dtype)


def gen_array(d, max_rank=4, max_dim=4):
    """An ndarray with an awkward dtype and layout (negative, zero or padded strides, F order,
    read-only, zero-size axes)."""
    dtype = d.choice(_DTYPES)
    rank = d.integer(0, max_rank)
    shape = tuple(d.choice((1, 1, 2, 3, max_dim, 0)) if d.integer(0, 9) else 0 for _ in range(rank))
    if rank and not d.integer(0, 3) == 0:
        shape = tuple(1 if n == 0 else n for n in shape)  # zero-size axes: a quarter of cases
    size = int(np.prod(shape, dtype=np.int64))
    layout = d.integer(0, 5)
    if layout == 1 and rank:  # padded: every other element of a bigger buffer
        big = _fill(size * 2, dtype).reshape(shape[:-1] + (shape[-1] * 2,))
        arr = big[..., ::2]
    elif layout == 2 and rank:  # negative strides
        arr = _fill(size, dtype).reshape(shape)[tuple(slice(None, None, -1) for _ in shape)]
    elif layout == 3 and rank:  # Fortran order
        arr = np.asfortranarray(_fill(size, dtype).reshape(shape))
    elif layout == 4 and rank:  # stride-0 axes already (a NumPy broadcast, read-only)
        compact = tuple(1 if k % 2 else n for k, n in enumerate(shape))
        arr = np.broadcast_to(_fill(int(np.prod(compact)), dtype).reshape(compact), shape)
    else:
        arr = _fill(size, dtype).reshape(shape)
    if d.integer(0, 5) == 0 and arr.flags.writeable:
        arr.flags.writeable = False
    return arr


def gen_data(d):
    """Data as lazybcast receives it: mostly ndarrays, sometimes lists, scalars or odd objects."""
    k = d.integer(0, 11)
    if k == 0:
        return d.choice([3, 2.5, "ab", None, b"x", 1 + 2j, True, [1, 2, 3], [[1], [2]]])
    if k == 1:
        return d.choice([object(), {"a": 1}, [[1, 2], [3]], lazybcast.broadcast_to(1, 3)])
    return gen_array(d)


_INT_LIKE = [0, 1, 2, 3, 4, -1, -2, 2**31, 2**62, 2**63, 2**64 + 1, 2**100]


class RaisingIndex:
    """An ``__index__`` that raises something other than TypeError."""

    def __index__(self):
        raise ZeroDivisionError("RaisingIndex.__index__")

    def __repr__(self):
        return "RaisingIndex()"


class Index:
    """An integer only through ``__index__``."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value

    def __repr__(self):
        return f"Index({self.value})"


class TupleKey(tuple):
    """A tuple subclass: NumPy reads it as a tuple of entries."""


PairKey = collections.namedtuple("PairKey", "first second")


def _entry(d, small):
    k = d.integer(0, 12)
    if k <= 6:
        return d.choice(small)
    if k == 7:
        return d.choice(_INT_LIKE)
    if k == 8:
        return d.choice([np.int64(2), np.uint8(3), np.int8(-1), np.intp(1)])
    return d.choice([1.0, 2.5, True, np.bool_(False), None, "2", [2], (1,), np.float64(3),
                     np.array(2), complex(1, 0), RaisingIndex(), Index(2), np.array(2, dtype=object),
                     b"\x02"])


def gen_shape_like(d, small=(0, 1, 1, 2, 3, 4), allow_int=False):
    """A shape-like argument: sequences of ints, int arrays, or something malformed."""
    k = d.integer(0, 15)
    rank = d.integer(0, 5)
    if k <= 7:
        items = [d.choice(small) for _ in range(rank)]
        return tuple(items) if k % 2 else items
    if k == 8:
        return np.array([d.choice(small) for _ in range(rank)],
                        dtype=d.choice([np.int64, np.uint8, np.int16, np.uint64]))
    if k == 9:
        return [_entry(d, small) for _ in range(rank)]
    if k == 10:
        return tuple(_entry(d, small) for _ in range(rank))
    if k == 11:
        return d.choice(_INT_LIKE + [np.int32(3)]) if allow_int or d.boolean() else None
    if k == 12:
        return d.choice([np.zeros((2, 2), dtype=int), np.array([1.0, 2.0]), np.array(["1"]),
                         np.array(3), np.array([True]), np.zeros(0, dtype=int)])
    if k == 13:
        return d.choice(["12", b"\x01\x02", 2.0, None, {1: 2}, {3}, object(), range(2, 4),
                         iter([2, 3]), bytearray(b"\x03"), np.array([2, 3], dtype=object),
                         np.array([2.0], dtype=object), [[2]], RaisingIndex(), frozenset([1]),
                         collections.deque([1, 2]), array.array("b", [2, 1]), {1: 2}.values(),
                         memoryview(np.array([1, 2]))])
    if k == 14:
        return [d.choice(small)] * d.integer(60, 70)  # near and past NPY_MAXDIMS
    return (d.choice([2**31, 2**32, 2**40]),) * d.integer(1, 3)


def gen_mode(d):
    return d.choice(MODES + MODES + ("NUMPY", "Explicit", "bidirectional ", "", "pdpd\0",
                                     None, 1, b"numpy", np.str_("pdpd")))


def gen_axis(d):
    return d.choice([-1] * 6 + [0, 1, 2, 3, -2, np.int64(1), np.uint8(0), True, 1.5, None, "0",
                                2**70, -(2**70)])


def gen_key_entry(d, n):
    """One entry of an indexing key for an axis of size ``n`` (which it may not fit)."""
    k = d.integer(0, 15)
    if k <= 3:
        return d.integer(-n - 2, n + 2)
    if k <= 6:
        bound = n + 3
        start = d.choice([None, d.integer(-bound, bound), 2**70, -(2**70)])
        stop = d.choice([None, d.integer(-bound, bound), 2**70])
        step = d.choice([None, None, 1, 2, -1, -3, 0, 2**70, np.int64(2)])
        return slice(start, stop, step)
    if k == 7:
        return None
    if k == 8:
        return Ellipsis
    if k == 9:
        dtype = np.dtype(d.choice([np.intp, np.int8, np.uint16, np.uint64, np.int32]))
        info = np.iinfo(dtype)  # values the index dtype can hold, around the axis' bounds
        low, high = max(0 if dtype.kind == "u" else -n - 1, info.min), min(n, info.max)
        return np.array([d.integer(low, high) for _ in range(d.integer(0, 4))], dtype=dtype)
    if k == 10:
        return [d.integer(-n - 1, n) for _ in range(d.integer(0, 3))]
    if k == 11:
        length = d.choice([n, n, n + 1, 0] if n <= 64 else [0, 1, 2])  # views may be huge
        return np.array([d.boolean() for _ in range(length)], dtype=bool)
    if k == 12:
        return d.choice([True, False, np.bool_(True), np.int64(0), np.uint8(1), -(2**63), 2**70])
    if k == 13:
        return d.choice([0.0, 1.5, "0", b"", 1j, object(), {0}, (0, 1), [[0], [1]], [0.5],
                         np.array([0], dtype=object), np.array(0), np.array([[True]]),
                         RaisingIndex(), Index(0), Index(-1), Index(2**70), iter([0]),
                         np.array(2**64 - 1, dtype=np.uint64), {0: 0}, [Index(0)]])
    if k == 14 and d.boolean():  # sequences NumPy converts to index arrays
        values = [d.integer(0, max(n - 1, 0)) for _ in range(d.integer(0, 3))]
        return d.choice([range(len(values)), array.array("q", values), collections.deque(values),
                         memoryview(np.array(values, dtype=np.intp)),
                         bytearray(values) if max(values, default=0) < 256 else values])
    if k == 14:
        return [slice(None), 0]
    return d.choice([np.array([[0], [1]]), np.array([[0, 1]]), [[0, 0], [1, 0]]])


def gen_key(d, shape):
    """An indexing key: usually a tuple, sometimes a bare entry."""
    length = d.integer(0, len(shape) + 2)
    entries = []
    axis = 0
    for _ in range(length):
        n = shape[axis] if axis < len(shape) else d.integer(0, 3)
        entries.append(gen_key_entry(d, n))
        axis += 1
    if length == 1 and d.boolean():
        return entries[0]
    kind = d.integer(0, 9)
    if kind == 0:
        return TupleKey(entries)
    if kind == 1 and length == 2:
        return PairKey(*entries)
    if kind == 2:  # many scalar booleans, around NumPy's limit of 64 index arrays
        return tuple(entries) + (d.choice([True, np.bool_(True), False]),) * d.integer(60, 66)
    return tuple(entries)


def gen_out(d, shape, dtype, data):
    """An ``out=`` argument: right, wrong or aliasing the source.

    None when NumPy cannot allocate the one drawn: a zero-size shape may have other axes too
    long for a wider item (``(0, 2**62)`` fits int8, not int16).
    """
    try:
        return _gen_out(d, shape, dtype, data)
    except (ValueError, MemoryError):
        return None


def _gen_out(d, shape, dtype, data):
    k = d.integer(0, 13)
    if k <= 2:
        return None
    if k == 3:
        return np.empty(shape, dtype=dtype)
    if k == 4:
        return np.empty(shape, dtype=dtype, order="F")
    if k == 5 and shape:  # every other element of a bigger buffer, flipped
        big = np.empty(shape[:-1] + (shape[-1] * 2 + 1,), dtype=dtype)
        return big[..., ::-2][..., : shape[-1]]
    if k == 6:
        out = np.empty(shape, dtype=dtype)
        out.flags.writeable = False
        return out
    if k == 7:
        return np.empty((shape + (1,))[-64:], dtype=dtype)
    if k == 8:
        return np.empty(shape, dtype=np.dtype(np.int16) if dtype != np.int16 else np.int32)
    if k == 9:
        return d.choice([[0] * 3, memoryview(b"abc"), 1.0, "out", np.float64(1)])
    if k == 10 and isinstance(data, np.ndarray):
        return data  # aliases the source (right only when the view does not broadcast)
    if k == 11 and shape:
        return np.empty(tuple(reversed(shape)), dtype=dtype).T  # transposed layout
    if k == 12:
        return np.ma.masked_array(np.empty(shape, dtype=dtype)) if dtype.kind != "V" else None
    return np.empty(shape, dtype=dtype.newbyteorder()) if dtype.isnative else None


def gen_threads(d):
    return d.choice([None, None, None, 1, 2, 3, 8, 0, -1, True, 1.5, "2", np.int64(2), 2**40])


# -- reference --------------------------------------------------------------------------------


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _ref_dim(x):
    """One size, as NumPy's shape converter reads it: ``__index__``, but not a bool."""
    if isinstance(x, (bool, np.bool_)):
        raise Invalid
    try:
        n = operator.index(x)
    except Exception:  # noqa: BLE001 - a raising __index__ is no integer
        raise Invalid from None
    if n > sys.maxsize:
        raise Invalid
    return n


def ref_shape(value, allow_int=False, allow_negative=False):
    """The shape a shape-like argument means, or Invalid: NumPy's shape converter
    (``PyArray_IntpConverter``, which ``np.empty`` and ``np.broadcast_shapes`` use): a sequence
    (a type with ``__getitem__`` other than a dict, that iterates) of integers, or, where a
    single integer is allowed, one integer. ``test_rules.py`` checks this reference against
    ``np.broadcast_shapes`` itself."""
    if value is None:
        raise Invalid
    items = None
    if type(value) is not int and hasattr(type(value), "__getitem__") \
            and not isinstance(value, dict):
        try:
            items = list(value)
        except Exception:  # noqa: BLE001 - not iterable (a NumPy scalar, a 0-d array)
            items = None
    if items is None:
        if not allow_int:
            raise Invalid
        items = [value]
    shape = tuple(_ref_dim(x) for x in items)
    if not allow_negative and any(n < 0 for n in shape):
        raise Invalid
    return shape


def ref_fits(shape, itemsize):
    """What NumPy can index: rank <= 64 and element and byte counts within intp."""
    if len(shape) > 64:
        raise Invalid
    total = max(itemsize, 1)
    for n in shape:
        total *= max(n, 1)
    if total > sys.maxsize:
        raise Invalid


def _as_data(data):
    if isinstance(data, lazybcast.BroadcastView):
        return np.asarray(data)  # a view is data as np.broadcast_to(view, ...) reads it
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return np.asarray(data)
    except Exception:
        raise Invalid from None


def ref_broadcast(data, target_shape, axes_mapping, mode, axis):
    """``(shape, lazy expected array)`` for :func:`lazybcast.broadcast`, or Invalid.

    Written from the documented rules, not from lazybcast's code."""
    data = _as_data(data)
    if not isinstance(mode, str) or mode.lower() not in MODES:
        raise Invalid
    mode = mode.lower()
    target = ref_shape(target_shape)
    axes = None if axes_mapping is None else ref_shape(axes_mapping, allow_negative=True)
    if not _is_int(axis):
        raise Invalid
    axis = int(axis)
    if (axes is not None) != (mode == "explicit") or (axis != -1 and mode != "pdpd"):
        raise Invalid
    nd, nt = data.ndim, len(target)
    if mode == "numpy":
        if nt < nd:
            raise Invalid
        aligned, shape = (1,) * (nt - nd) + data.shape, target
        if any(d not in (1, t) for d, t in zip(aligned, shape)):
            raise Invalid
    elif mode == "bidirectional":
        shape = ref_broadcast_shapes(data.shape, target)
        aligned = (1,) * (len(shape) - nd) + data.shape
    elif mode == "explicit":
        dshape = data.shape
        if nd == 0 and len(axes) == 1:
            dshape = (1,)
        if len(axes) != len(dshape) or any(b <= a for a, b in zip(axes, axes[1:])):
            raise Invalid
        if any(a < 0 or a >= nt for a in axes):
            raise Invalid
        if nd == 0 and axes and target[axes[0]] != 1:
            raise Invalid  # OpenVINO: a scalar mapped to one axis needs target size 1 there
        aligned = [1] * nt
        for dim, a in zip(dshape, axes):
            if dim not in (1, target[a]):
                raise Invalid
            aligned[a] = dim
        aligned, shape = tuple(aligned), target
    else:  # pdpd
        if axis < -1:
            raise Invalid
        start = nt - nd if axis == -1 else axis
        if start < 0 or start + nd > nt:
            raise Invalid
        aligned = [1] * nt
        shape = list(target)
        for i, dim in enumerate(data.shape):
            t = target[start + i]
            if dim != 1 and t != 1 and dim != t:
                raise Invalid
            aligned[start + i] = dim
            if t == 1:
                shape[start + i] = dim
        aligned, shape = tuple(aligned), tuple(shape)
    ref_fits(shape, data.dtype.itemsize)
    return shape, np.broadcast_to(data.reshape(aligned), shape)


def ref_broadcast_to(data, shape):
    data = _as_data(data)
    target = ref_shape(shape, allow_int=True)
    ref_fits(target, data.dtype.itemsize)
    try:
        return target, np.broadcast_to(data, target)
    except ValueError:
        raise Invalid from None


# -- contract ---------------------------------------------------------------------------------


def attempt(fn, *args, **kwargs):
    """``(True, result)`` or ``(False, exception)`` for the allowed exception types; anything
    else propagates."""
    try:
        return True, fn(*args, **kwargs)
    except ALLOWED as exc:
        if not str(exc):
            raise AssertionError(f"{type(exc).__name__} without a message") from exc
        return False, exc


def reference(fn, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return True, fn(*args)
    except (Invalid, Exception) as exc:  # noqa: B014 - NumPy may raise anything on junk
        return False, exc


def _same(got, expected):
    """``got`` (anything array-like lazybcast returned) has ``expected``'s dtype and values."""
    if not isinstance(expected, (np.ndarray, np.generic)):  # an element of an object array
        assert type(got) is type(expected) and got == expected, (got, expected)
        return
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    if expected.size <= FULL_COMPARE:
        arr = got.materialize() if isinstance(got, lazybcast.BroadcastView) else np.asarray(got)
        np.testing.assert_array_equal(arr, expected, strict=True)
    else:  # compare corners without allocating the whole thing
        for corner in (0, -1):
            key = (corner,) * expected.ndim
            np.testing.assert_array_equal(np.asarray(got[key]), expected[key])


def _agree(ok_ref, ref, ok, got, what):
    if not ok_ref:
        assert not ok, f"{what}: the reference rejects it ({ref!r}) but lazybcast returned {got!r}"
        return False
    if not ok:
        raise AssertionError(f"{what}: the reference accepts it but lazybcast raised {got!r}")
    return True


def check_view(view, expected):
    """A view's attributes and values against the lazy NumPy reference."""
    assert isinstance(view, lazybcast.BroadcastView)
    assert view.shape == expected.shape and view.dtype == expected.dtype
    assert view.size == expected.size and view.nbytes == expected.nbytes
    assert view.ndim == expected.ndim
    src = view.source
    assert src.ndim == view.ndim
    for n, s, stride in zip(view.shape, src.shape, view.strides):
        assert s in (1, n)
        if s == 1 and n != 1:
            assert stride == 0
    _same(view, expected)


def check_broadcast(data, target_shape, axes_mapping, mode, axis):
    ok_ref, ref = reference(ref_broadcast, data, target_shape, axes_mapping, mode, axis)
    ok, got = attempt(lazybcast.broadcast, data, target_shape, axes_mapping, mode=mode, axis=axis)
    if _agree(ok_ref, ref, ok, got, f"broadcast({target_shape!r}, {axes_mapping!r}, {mode!r}, "
                                    f"{axis!r})"):
        check_view(got, ref[1])
        return got
    return None


def check_broadcast_to(data, shape):
    ok_ref, ref = reference(ref_broadcast_to, data, shape)
    ok, got = attempt(lazybcast.broadcast_to, data, shape)
    if _agree(ok_ref, ref, ok, got, f"broadcast_to({shape!r})"):
        check_view(got, ref[1])
        return got
    return None


def check_broadcast_arrays(arrays):
    def ref_fn(*arrays):
        datas = [_as_data(a) for a in arrays]
        result = np.broadcast_arrays(*datas)
        if result:
            ref_fits(result[0].shape, max(r.dtype.itemsize for r in result))
        return result

    ok_ref, ref = reference(ref_fn, *arrays)
    ok, got = attempt(lazybcast.broadcast_arrays, *arrays)
    if _agree(ok_ref, ref, ok, got, "broadcast_arrays"):
        assert type(got) is tuple and len(got) == len(ref)
        for view, expected in zip(got, ref):
            check_view(view, expected)


def ref_broadcast_shapes(*shapes):
    parsed = [ref_shape(s, allow_int=True) for s in shapes]
    if any(len(s) > 64 for s in parsed):
        raise Invalid
    if all(len(s) <= 32 for s in parsed):
        result = np.broadcast_shapes(*parsed)
    else:  # np.broadcast_shapes raises RuntimeError beyond 32 dimensions
        ndim = max(len(s) for s in parsed)
        padded = [(1,) * (ndim - len(s)) + s for s in parsed]
        result = tuple(max(col) if min(col) else 0 for col in zip(*padded))
        if any(n not in (1, r) for col, r in zip(zip(*padded), result) for n in col):
            raise Invalid
        if any(math.prod(result[:k]) > sys.maxsize for k in range(len(result) + 1)):
            raise Invalid  # NumPy's running product: (2**40, 0, 2**40) fits
    return result


def check_broadcast_shapes(shapes):
    ok_ref, ref = reference(ref_broadcast_shapes, *shapes)
    ok, got = attempt(lazybcast.broadcast_shapes, *shapes)
    if _agree(ok_ref, ref, ok, got, f"broadcast_shapes{tuple(shapes)!r}"):
        assert got == tuple(ref) and all(type(n) is int for n in got)


def check_index(view, key):
    if view.dtype.hasobject and max(view.shape, default=0) > 10 * FULL_COMPARE:
        return  # (NumPy's gather fills its result with None before it checks the indices:
        # an empty view's long rows of objects would fill gigabytes in the reference)
    expected_full = np.broadcast_to(view.source, view.shape)
    ok_ref, ref = reference(expected_full.__getitem__, key)
    if ok_ref and np.asarray(ref).size > 10 * FULL_COMPARE:
        return  # a legitimately huge gather: not what this fuzzer is about
    ok, got = attempt(view.__getitem__, key)
    if _agree(ok_ref, ref, ok, got, f"view[{key!r}]"):
        if isinstance(got, lazybcast.BroadcastView):
            check_view(got, ref)
        else:
            if isinstance(ref, np.ndarray):
                assert isinstance(got, np.ndarray), type(got)
            _same(got, ref)


def check_materialize(view, out, threads):
    expected = np.broadcast_to(view.source, view.shape).copy()  # before out= may clobber it
    ok_out = (isinstance(out, np.ndarray) and out.shape == view.shape
              and out.dtype == view.dtype and out.flags.writeable) or out is None
    ok_threads = threads is None or (
        isinstance(threads, (int, np.integer)) and not isinstance(threads, (bool, np.bool_))
        and threads >= 1)
    if view.nbytes > 10 * FULL_COMPARE * 16:
        return
    ok, got = attempt(view.materialize, out, threads=threads)
    if _agree(ok_out and ok_threads, "bad out or threads", ok, got,
              f"materialize(out={type(out).__name__}, threads={threads!r})"):
        if out is not None:
            assert got is out
        else:
            assert got.flags.c_contiguous and got.flags.writeable and got.flags.owndata
        _same(np.asarray(got), expected)


def check_iter_batches(view, batch_size, out, drop_last, prefetch):
    if view.nbytes > 10 * FULL_COMPARE * 16:
        return
    valid = view.ndim > 0 and _is_int(batch_size) and batch_size >= 1 and _is_int(prefetch) \
        and prefetch >= 0
    if valid and out is not None:
        want = (int(batch_size),) + view.shape[1:]
        valid = (isinstance(out, np.ndarray) and out.shape == want and out.dtype == view.dtype
                 and out.flags.writeable and not prefetch)
    ok, got = attempt(view.iter_batches, batch_size, out=out, drop_last=drop_last,
                      prefetch=prefetch)
    if not _agree(valid, "bad arguments", ok, got, f"iter_batches({batch_size!r}, "
                  f"out={type(out).__name__}, prefetch={prefetch!r})"):
        return
    full = np.broadcast_to(view.source, view.shape)
    n, b = view.shape[0], int(batch_size)
    starts = range(0, n - n % b if drop_last else n, b)
    batches = [np.array(batch, copy=True) for batch in itertools.islice(got, 1000)]
    assert len(batches) == min(len(starts), 1000)
    for start, batch in zip(starts, batches):
        _same(batch, full[start:start + b])


def check_row_dataset(view, i, indices):
    ok, ds = attempt(lazybcast.RowDataset, view)
    if not _agree(isinstance(view, lazybcast.BroadcastView) and view.ndim > 0, "0-d", ok, ds,
                  "RowDataset"):
        return
    full = np.broadcast_to(view.source, view.shape)
    assert len(ds) == view.shape[0]
    ok_ref, ref = reference(full.__getitem__, i)
    if not _is_int(i):
        ok_ref = False
    ok, got = attempt(ds.__getitem__, i)
    if _agree(ok_ref, ref, ok, got, f"RowDataset[{i!r}]"):
        _same(got, ref)

    def ref_items(indices):
        arr = np.asarray(indices)
        if arr.dtype.kind not in "iu" and arr.size:
            raise Invalid
        return list(full[arr.reshape(-1).astype(np.intp)])

    try:  # (NumPy's gather allocates its result before it checks the indices, and fills
        count = np.asarray(indices).size  # an object result with None: rows of 2**31
    except Exception:  # objects drew 16 GB for an index that raises)
        count = 1
    if count * math.prod(full.shape[1:]) > 10 * FULL_COMPARE:
        return
    ok_ref, ref = reference(ref_items, indices)
    ok, got = attempt(ds.__getitems__, indices)
    if _agree(ok_ref, ref, ok, got, f"RowDataset.__getitems__({indices!r})"):
        assert len(got) == len(ref)
        for row, expected in zip(got, ref):
            _same(row, expected)


def check_pickle(view):
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        clone = pickle.loads(pickle.dumps(view, protocol=protocol))
        assert clone.shape == view.shape and clone.mode == view.mode
        expected = np.broadcast_to(view.source, view.shape)
        if clone.dtype != view.dtype:  # NumPy's own pickles may turn '>u2' into native 'u2'
            assert clone.dtype == view.dtype.newbyteorder("="), (clone.dtype, view.dtype)
            expected = expected.astype(clone.dtype)
        if view.dtype.hasobject:  # bare object() instances come back as new objects
            got, want = clone.materialize().ravel(), expected.ravel()
            assert all(type(a) is type(b) and (type(a) is object or a == b)
                       for a, b in zip(got.tolist(), want.tolist()))
        else:
            _same(clone, expected)


_BINARY_UFUNCS = (np.add, np.subtract, np.multiply, np.true_divide, np.less, np.greater_equal,
                  np.equal, np.not_equal, np.maximum)


def check_binary(view, d):
    """``ufunc(view, partner)`` where the partner repeats along the axes where the view's
    source does not (an outer operation: the kernel of lazybcast._binary),
    against NumPy on the broadcast arrays."""
    if view.ndim == 0 or view.nbytes > FULL_COMPARE * 16 or view.dtype.hasobject:
        return  # (objects raise their own errors: ZeroDivisionError, ...)
    aligned = (1,) * (view.ndim - view.source.ndim) + view.source.shape
    shape = tuple(n if m == 1 else 1 for m, n in zip(aligned, view.shape))
    dtype = d.choice([view.dtype, view.dtype, view.dtype, np.dtype("f8"), np.dtype("i4")])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if math.prod(shape) > FULL_COMPARE * 16:
            return  # (the partner's values of an empty view's long axis: 16 GB of int64)
        values = np.arange(math.prod(shape), dtype=np.int64).reshape(shape) - 3
        ok_values, values = reference(values.astype, dtype)
    if not ok_values:
        return
    partner = lazybcast.broadcast_to(values, view.shape)
    ufunc = d.choice(_BINARY_UFUNCS)
    operands = (view, partner) if d.boolean() else (partner, view)
    arrays = tuple(np.broadcast_to(x.source, x.shape) for x in operands)
    with np.errstate(all="ignore"):
        ok_ref, ref = reference(ufunc, *arrays)
        ok, got = attempt(ufunc, *operands)
    if _agree(ok_ref, ref, ok, got, f"{ufunc.__name__}({operands[0].dtype}, "
              f"{operands[1].dtype})"):
        _same(got, ref)


# -- one whole case ---------------------------------------------------------------------------


def run_case(d):
    """Draw one entry point and its arguments from ``d`` and check the contract."""
    what = d.integer(0, 9)
    if what == 0:
        check_broadcast_shapes([gen_shape_like(d, allow_int=True) for _ in range(d.integer(0, 3))])
        return
    if what == 1:
        check_broadcast_arrays([gen_data(d) for _ in range(d.integer(0, 3))])
        return
    data = gen_data(d)
    if what == 2:
        view = check_broadcast_to(data, gen_shape_like(d, allow_int=True))
    else:
        mode = gen_mode(d)
        axes = gen_shape_like(d) if d.integer(0, 2) == 0 else None
        view = check_broadcast(data, gen_shape_like(d), axes, mode, gen_axis(d))
    if view is None or view.nbytes > FULL_COMPARE * 16:
        return
    if what <= 4:
        check_index(view, gen_key(d, view.shape))
    elif what == 5:
        check_materialize(view, gen_out(d, view.shape, view.dtype, data), gen_threads(d))
    elif what == 6:
        n = view.shape[0] if view.shape else 1
        batch = d.choice([1, 2, 3, n, n + 5, 0, -1, True, 2.0, None, np.int64(2), 2**70])
        out_shape = ((batch,) if _is_int(batch) and 0 < batch < 100 else (1,)) + view.shape[1:]
        # an empty view (0 rows) may still have rows too large to allocate a batch of
        fits = math.prod(out_shape) * view.dtype.itemsize <= FULL_COMPARE * 16
        out = gen_out(d, out_shape, view.dtype, data) if fits else None
        check_iter_batches(view, batch, out, d.boolean(), d.choice([0, 0, 1, 2, -1, True]))
    elif what == 7:
        n = view.shape[0] if view.shape else 1
        i = d.choice([0, n - 1, -n, n, -n - 1, 2**70, True, 1.5, np.int64(0), None, "0"])
        indices = d.choice([[0], [n - 1, 0], [], [n], [1.5], [2**70], np.array([0, 0]),
                            [[0]], [True], "0", None, np.array([-1], dtype=np.int8)])
        check_row_dataset(view, i, indices)
    elif what == 8:
        check_pickle(view)
    else:
        check_binary(view, d)
