"""Indexing a broadcast view: NumPy's rules, applied to the compact source.

A view is ``(source, shape)`` where every source axis is the view's size or 1 (see ``_view``).
Basic indexing (ints, slices, ``...``, ``None``) maps onto the source axis by axis: an axis that
is broadcast keeps its single source element whatever the key asks of it. The result is a new
``(source, shape)`` pair in O(ndim), with no copy; NumPy slices the source, so every bound is
NumPy's.

Advanced indexing (integer arrays, boolean masks) applies the basic part of the key lazily, then
gathers only the selected elements (:func:`lazybcast._gather.gather`, which reads each repeated
part of the result from the source once). The result's layout follows NumPy: the broadcast index
dimensions replace the indexed axes when those are adjacent in the key, and go first otherwise.
"""

import operator
import sys

import numpy as np

from lazybcast import _gather

__all__ = ["index"]

_NEW, _ELLIPSIS, _SLICE, _INT, _ARRAY, _BOOL0 = range(6)

_INTP_MAX = sys.maxsize
_INTP_MIN = -sys.maxsize - 1
_MAXDIMS = 64

_INVALID = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices"
)


def _entries(key):
    """The entries of a key, as NumPy unpacks them: a tuple (or a tuple subclass, such as a
    namedtuple, iterated into a tuple) is one entry per axis; anything else is one entry."""
    if type(key) is tuple:
        return key
    if isinstance(key, tuple):
        return tuple(key)
    return (key,)


def _classify(item):
    """``(kind, value)`` of one entry of an indexing key, by NumPy's cascade
    (``prepare_index`` in ``numpy/_core/src/multiarray/mapping.c``):

    1. ``None``, ``...`` and slices are themselves.
    2. Anything but an ndarray or a bool that converts with ``__index__`` is an integer; a
       conversion that fails in any way (``__index__`` raising) only means "not an integer".
    3. Everything else is ``np.asarray(item)``: a boolean or integer array (so ``range``,
       ``array.array``, ``memoryview``, ``deque``, ``bytearray`` and nested lists are index
       arrays); an empty sequence becomes an empty ``intp`` array; any other dtype is an
       ``IndexError``.
    """
    if item is None:
        return _NEW, None
    if item is Ellipsis:
        return _ELLIPSIS, None
    tp = type(item)
    if tp is slice:
        return _SLICE, item
    if tp is int:
        return _INT, item  # past np.intp: NumPy's IndexError, with the bounds in its message
    if (tp is not bool and tp is not np.bool_ and tp is not np.ndarray
          and hasattr(tp, "__index__") and not isinstance(item, np.ndarray)):
        try:
            i = operator.index(item)
        except Exception:  # noqa: BLE001 - NumPy clears any error here and tries an array
            i = None
        if i is not None:
            return _INT, i
    if tp is np.ndarray:
        arr = item
    else:
        arr = np.asarray(item)  # an ndarray subclass: its data, as NumPy indexes with it
        if arr.size == 0 and not isinstance(item, np.ndarray) and arr.dtype.kind not in "biu":
            arr = np.zeros(arr.shape, dtype=np.intp)  # [] and () index nothing, as in NumPy
    kind = arr.dtype.kind
    if kind == "b":
        if arr.ndim == 0:
            return _BOOL0, bool(arr)
        from lazybcast._view import BroadcastView  # (imported here: _view imports this)

        if tp is BroadcastView:
            # A mask that is itself a view: kept, so that its np.nonzero is the positions
            # of its source repeated (lazybcast._nonzero), not a scan of the logical mask.
            return _ARRAY, item
        return _ARRAY, arr
    if kind not in "iu":
        if isinstance(item, np.ndarray):
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        raise IndexError(_INVALID)
    if arr.ndim == 0:
        i = int(arr)
        if not _INTP_MIN <= i <= _INTP_MAX:
            raise IndexError(f"index {i} is out of bounds for any axis (np.intp)")
        return _INT, i
    return _ARRAY, arr


class Lazy(tuple):
    """``(source, shape)`` of a lazy result; its own type, so that an element of an object
    array that happens to be a tuple is never mistaken for one."""

    __slots__ = ()


def _normalize_int(i, n, axis):
    if i < -n or i >= n:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    return i + n if i < 0 else i


def index(source, shape, key):
    """Apply ``key`` to the view ``(source, shape)``.

    Returns a :class:`Lazy` ``(new_source, new_shape)`` for a lazy result, or the NumPy scalar,
    element or ndarray that the key selects.
    """
    entries = [_classify(item) for item in _entries(key)]
    ndim = len(shape)
    consumed = 0
    n_ellipsis = 0
    advanced = False
    for kind, value in entries:
        if kind == _INT or kind == _SLICE:
            consumed += 1
        elif kind == _ARRAY:
            consumed += value.ndim if value.dtype == bool else 1
            advanced = True
        elif kind == _ELLIPSIS:
            n_ellipsis += 1
        elif kind == _BOOL0:
            advanced = True
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed"
        )
    fill = ndim - consumed
    if advanced:
        result = _one_array(source, shape, entries, fill)
        if result is not None:
            return result
        if source.dtype.hasobject and source.dtype.type is not np.object_:
            # References inside a structured dtype: NumPy's own gather knows which bytes are
            # references; it sees the same key (its entries as classified here).
            full = np.broadcast_to(source, shape)
            key = tuple(np.bool_(v) if k == _BOOL0 else Ellipsis if k == _ELLIPSIS else v
                        for k, v in entries)
            return np.ascontiguousarray(full[key])
        return _advanced(source, shape, entries, fill)
    return _basic(source, shape, entries, fill)


_FULL = slice(None)


def _one_array(source, shape, entries, fill):
    """The commonest gathers, ``view[idx]``, ``view[:, idx]``, ``view[idx, a:b]`` (one integer
    array, every other entry a slice or ``...``): the slices make an intermediate lazy view,
    then straight to the kernel; None for any other key."""
    pos = -1
    arr = None
    axis = 0
    whole = True
    for kind, value in entries:
        if kind == _ARRAY and arr is None and value.dtype.kind != "b" and value.ndim:
            arr = value
            pos = axis
            axis += 1
        elif kind == _SLICE:
            whole = whole and value.start is None and value.stop is None and value.step is None
            axis += 1
        elif kind == _ELLIPSIS:
            axis += fill
        else:
            return None
    dtype = source.dtype
    if arr is None or len(shape) - 1 + arr.ndim > _MAXDIMS or (
            dtype.hasobject and dtype.type is not np.object_):
        return None
    if not whole:  # the slices first: a lazy view, the array's axis kept whole
        source, shape = _basic(source, shape, [(_SLICE, _FULL) if kind == _ARRAY else
                                               (kind, value) for kind, value in entries], fill)
    out = _gather.result_array(tuple(shape[:pos]) + arr.shape + tuple(shape[pos + 1:]), dtype,
                               [arr], [shape[pos]], [pos])
    return _gather.gather(source, shape, [arr], [pos], (pos,), arr.shape, out, pos)


def _basic(source, shape, entries, fill):
    if entries and all(kind == _SLICE and value == _FULL for kind, value in entries):
        return Lazy((source, tuple(shape)))  # every axis whole (what a gather leaves)
    src_key = []
    new_shape = []
    axis = 0
    for kind, value in entries:
        if kind == _NEW:
            src_key.append(None)
            new_shape.append(1)
        elif kind == _INT:
            n = shape[axis]
            i = _normalize_int(value, n, axis)
            src_key.append(i if source.shape[axis] == n else 0)
            axis += 1
        elif kind == _SLICE:
            n = shape[axis]
            length = len(range(*value.indices(n)))
            if source.shape[axis] == n:
                src_key.append(value)
            else:
                src_key.append(slice(0, 1))
            new_shape.append(length)
            axis += 1
        else:  # ellipsis (kept as such: ``a[0, ...]`` is a 0-d array, ``a[0]`` a scalar)
            src_key.append(Ellipsis)
            new_shape.extend(shape[axis:axis + fill])
            axis += fill
            fill = 0
    new_shape.extend(shape[axis:])
    result = source[tuple(src_key)]
    if not isinstance(result, np.ndarray):
        return result  # every axis taken by an int: NumPy's scalar
    return Lazy((result, tuple(new_shape)))


def _advanced(source, shape, entries, fill):
    """Gather what an advanced key selects.

    The basic entries (slices, ``...``) and the axes the integers and index arrays take make an
    intermediate lazy view of at most the view's rank; ``None`` entries and scalar booleans take
    no axis of it (they only add axes of length 1 to the result, or a 0 to the broadcast index
    shape for ``False``), so every key NumPy accepts fits in 64 dimensions. The index
    dimensions go where NumPy puts them: in place of the indexed axes when every advanced entry
    (integer, array, scalar boolean) is adjacent in the key, first otherwise.
    """
    basic_entries = []
    arrays = []        # per gather axis: an index array, or an int (from an integer entry)
    positions = []     # that axis, in the intermediate view
    report_axes = []   # and in the original view (for error messages)
    shapes = []        # the index arrays' shapes (a scalar boolean's (1,) or (0,)), in key order
    res = []           # result sizes of the non-advanced entries, in key order
    rest = []          # the same without the None entries' (the intermediate view's other axes)
    n_new = 0          # how many None entries
    first = None       # (len(res), len(res) - n_new) at the first advanced entry
    state = 0          # 0: no advanced entry yet, 1: in the first run of them, 2: past it, 3: split
    n_index = 0        # index arrays as NumPy counts them (bool arrays: one per axis)
    fancy_ndim = 0
    pos = 0
    axis = 0
    left = fill        # axes the `...` (explicit or implicit at the end) still covers
    for kind, value in entries:
        if kind == _INT or kind == _ARRAY or kind == _BOOL0:
            if state == 0:
                first = (len(res), len(res) - n_new)
                state = 1
            elif state == 2:
                state = 3
        elif state == 1:
            state = 2
        if kind == _NEW:
            res.append(1)
            n_new += 1
        elif kind == _SLICE:
            basic_entries.append((kind, value))
            n = len(range(*value.indices(shape[axis])))  # (no negative list indices here:
            res.append(n)                                # setup.py turns wraparound off)
            rest.append(n)
            pos += 1
            axis += 1
        elif kind == _ELLIPSIS:
            basic_entries.append((kind, None))
            res.extend(shape[axis:axis + left])
            rest.extend(shape[axis:axis + left])
            pos += left
            axis += left
            left = 0
        elif kind == _INT:
            basic_entries.append((_SLICE, _FULL))
            arrays.append(_normalize_int(value, shape[axis], axis))
            positions.append(pos)
            report_axes.append(axis)
            pos += 1
            axis += 1
        elif kind == _BOOL0:
            shapes.append((1,) if value else (0,))
            n_index += 1
            fancy_ndim = max(fancy_ndim, 1)
        elif value.dtype == bool:
            for j in range(value.ndim):
                # NumPy lets an empty boolean axis index an axis of any size (selects nothing).
                if value.shape[j] != shape[axis + j] and value.shape[j] != 0:
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {axis + j}; "
                        f"size of axis is {shape[axis + j]} but size of corresponding boolean "
                        f"axis is {value.shape[j]}"
                    )
            for nz in np.nonzero(value):
                basic_entries.append((_SLICE, _FULL))
                shapes.append(nz.shape)
                arrays.append(nz)
                positions.append(pos)
                report_axes.append(axis)
                pos += 1
                axis += 1
            n_index += value.ndim
            fancy_ndim = max(fancy_ndim, 1)
        else:
            basic_entries.append((_SLICE, _FULL))
            shapes.append(value.shape)
            arrays.append(value)
            positions.append(pos)
            report_axes.append(axis)
            pos += 1
            axis += 1
            n_index += 1
            fancy_ndim = max(fancy_ndim, value.ndim)
    res.extend(shape[axis:axis + left])  # the implicit trailing `...`
    rest.extend(shape[axis:axis + left])
    n_rest = 1
    for n in rest:
        n_rest *= n
    # NumPy's MapIter: at most 64 index arrays, and 63 when the rest of the result (its
    # "subspace") holds exactly one element.
    if n_index > _MAXDIMS or (n_index == _MAXDIMS and n_rest == 1):
        raise IndexError(
            f"too many advanced (array) indices: {n_index} index arrays (a boolean array counts "
            f"one per axis, a scalar boolean one); NumPy allows at most {_MAXDIMS}, or "
            f"{_MAXDIMS - 1} when the other axes of the result hold one element"
        )
    if len(res) + fancy_ndim > _MAXDIMS:
        raise IndexError(
            f"number of dimensions must be within [0, {_MAXDIMS}], indexing result would have "
            f"{len(res) + fancy_ndim}"
        )
    bshape = _gather.broadcast_shape(shapes)
    nb = 1
    for n in bshape:
        nb *= n
    adjacent = state != 3
    res_pos, k_pos = first if adjacent else (0, 0)
    full_shape = tuple(res[:res_pos]) + bshape + tuple(res[res_pos:])
    if not any(kind == _ELLIPSIS for kind, _ in basic_entries):
        basic_entries.append((_ELLIPSIS, None))  # keeps a 0-d intermediate an array
    vsource, vshape = _basic(source, shape, basic_entries, fill)
    result = _gather.result_array(full_shape, vsource.dtype, arrays,
                                  [vshape[p] for p in positions], report_axes)
    if not arrays:  # scalar booleans only: the basic view, with their axis inserted
        if nb:
            np.copyto(result.reshape(vshape), np.broadcast_to(vsource, vshape))
        return result
    return _gather.gather(vsource, vshape, arrays, positions, report_axes, bshape, result,
                          k_pos)
