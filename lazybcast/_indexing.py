"""Indexing a broadcast view: NumPy's rules, applied to the compact source.

A view is ``(source, shape)`` where every source axis is the view's size or 1 (see ``_view``).
Basic indexing (ints, slices, ``...``, ``None``) maps onto the source axis by axis: an axis that
is broadcast keeps its single source element whatever the key asks of it. The result is a new
``(source, shape)`` pair in O(ndim), with no copy; NumPy slices the source, so every bound is
NumPy's.

Advanced indexing (integer arrays, boolean masks) applies the basic part of the key lazily, then
gathers only the selected elements with :func:`lazybcast._kernels.gather`. The result's layout
follows NumPy: the broadcast index dimensions replace the indexed axes when those are adjacent
in the key, and go first otherwise.
"""

import operator

import numpy as np

from lazybcast import _kernels

__all__ = ["index"]

_NEW, _ELLIPSIS, _SLICE, _INT, _ARRAY = range(5)

_INVALID = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices"
)


def _classify(item):
    """``(kind, value)`` of one entry of an indexing key."""
    if item is None:
        return _NEW, None
    if item is Ellipsis:
        return _ELLIPSIS, None
    if type(item) is slice:
        return _SLICE, item
    if type(item) is int:
        return _INT, item
    if isinstance(item, (bool, np.bool_)):
        return _ARRAY, np.asarray(item, dtype=bool)
    if isinstance(item, np.integer):
        return _INT, int(item)
    if isinstance(item, (np.ndarray, list, tuple)) or hasattr(item, "__array__"):
        arr = np.asarray(item)
        if arr.size == 0 and arr.dtype.kind not in "biu" and type(item) is not np.ndarray:
            arr = arr.astype(np.intp)  # [] and () index nothing, as in NumPy
        if arr.dtype == bool:
            return _ARRAY, arr
        if arr.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        if arr.ndim == 0:
            return _INT, int(arr)
        return _ARRAY, arr
    if isinstance(item, (float, complex, str, bytes, np.floating, np.complexfloating)):
        raise IndexError(_INVALID)
    if hasattr(item, "__index__"):
        return _INT, operator.index(item)
    raise IndexError(_INVALID)


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
    if type(key) is not tuple:
        key = (key,)
    entries = [_classify(item) for item in key]
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
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(
            f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed"
        )
    fill = ndim - consumed
    if advanced:
        return _advanced(source, shape, entries, fill)
    return _basic(source, shape, entries, fill)


_FULL = slice(None)


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
    """Gather what an advanced key selects."""
    basic_entries = []
    arrays = []        # index arrays, one per advanced axis of the intermediate view
    positions = []     # that axis, in the intermediate view
    orig_axes = []     # and in the original view (for error messages)
    pos = 0
    axis = 0
    split = None       # advanced indices before a zero-length `...` (it still separates them)
    for kind, value in entries:
        if kind == _NEW:
            basic_entries.append((_NEW, None))
            pos += 1
        elif kind == _SLICE:
            basic_entries.append((kind, value))
            pos += 1
            axis += 1
        elif kind == _ELLIPSIS:
            basic_entries.append((kind, None))
            if not fill and split is None:
                split = len(positions)
            pos += fill
            axis += fill
        elif kind == _INT:
            basic_entries.append((_SLICE, slice(None)))
            arrays.append(np.asarray(_normalize_int(value, shape[axis], axis), dtype=np.intp))
            positions.append(pos)
            orig_axes.append(axis)
            pos += 1
            axis += 1
        elif value.ndim == 0:  # a scalar bool: a new axis of length 1 (True) or 0 (False)
            basic_entries.append((_NEW, None))
            arrays.append(np.zeros(1 if value else 0, dtype=np.intp))
            positions.append(pos)
            orig_axes.append(None)
            pos += 1
        elif value.dtype == bool:
            for j in range(value.ndim):
                # NumPy lets an empty boolean axis index an axis of any size (selects nothing).
                if value.shape[j] != shape[axis + j] and value.shape[j] != 0:
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {axis + j}; "
                        f"size of axis is {shape[axis + j]} but size of corresponding boolean "
                        f"axis is {value.shape[j]}"
                    )
            for j, nz in enumerate(np.nonzero(value)):
                basic_entries.append((_SLICE, slice(None)))
                arrays.append(nz)
                positions.append(pos)
                orig_axes.append(axis)
                pos += 1
                axis += 1
        else:
            basic_entries.append((_SLICE, slice(None)))
            arrays.append(value)
            positions.append(pos)
            orig_axes.append(axis)
            pos += 1
            axis += 1
    vsource, vshape = _basic(source, shape, basic_entries, fill)
    try:
        if len(arrays) > 1:
            arrays = np.broadcast_arrays(*arrays)
    except ValueError:
        shapes = " ".join(str(a.shape) for a in arrays)
        raise IndexError(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes {shapes}"
        ) from None
    bshape = arrays[0].shape
    flat = []
    for arr in arrays:  # bounds are checked (and negatives wrapped) by the kernel
        if arr.ndim != 1 or arr.dtype != np.intp or not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr, dtype=np.intp).reshape(-1)
        flat.append(arr)
    report_axes = tuple(p if orig is None else orig for p, orig in zip(positions, orig_axes))
    consecutive = all(b - a == 1 for a, b in zip(positions, positions[1:]))
    adjacent = consecutive and (split is None or split in (0, len(positions)))
    bpos = positions[0] if adjacent else 0
    rest = [n for p, n in enumerate(vshape) if p not in positions]
    out_shape = tuple(rest[:bpos]) + bshape + tuple(rest[bpos:])
    dtype = vsource.dtype
    if dtype.hasobject and dtype.type is not np.object_:
        full = np.broadcast_to(vsource, vshape)
        key = [slice(None)] * len(vshape)
        for p, arr in zip(positions, arrays):
            key[p] = arr
        result = full[tuple(key)]  # a copy; NumPy sees no `...` here, so may place bshape
        if consecutive and not adjacent:  # at positions[0] where we need it first
            nb = len(bshape)
            result = np.moveaxis(result, range(positions[0], positions[0] + nb), range(nb))
        return np.ascontiguousarray(result)
    out = np.empty(out_shape, dtype=dtype)
    return _kernels.gather(vsource, vshape, tuple(positions), flat, out, bpos, len(bshape),
                           report_axes)
