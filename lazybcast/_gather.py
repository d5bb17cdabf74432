"""Running a gather at the cost of what it selects from the compact source.

``_indexing`` turns an advanced key into an intermediate lazy view ``(vsource, vshape)``, whose
source axes are each 1 or the view's size, and index arrays on some of its axes; :func:`gather`
fills the result. A view repeats its source along its broadcast axes, so much of a gather's
result is repeated too:

* an axis of the result that the intermediate view broadcasts holds the same values at every
  position along it;
* an index array on a broadcast axis selects the source's one element there whatever its
  values, once they are in bounds.

When those axes make the gather at most half the result, the kernel gathers the compact part
(those axes of length 1) and :func:`lazybcast._kernels.copy_broadcast` writes it into the result,
a broadcast fill at memory speed. Every index array is bounds-checked first, in key order
(:func:`lazybcast._kernels.check_indices`), so an error is the one the whole gather raises, as
NumPy's.
"""

import numpy as np

from lazybcast import _kernels

__all__ = ["ALLOCATION_ERRORS", "broadcast_shape", "check_bounds", "gather", "result_array"]

#: Results smaller than this many bytes are gathered whole: the compact path's fixed cost (a
#: bounds check, a second small array, a broadcast fill) is a few microseconds, about what the
#: kernel takes to gather a few kilobytes.
COMPACT_MIN_BYTES = 4096


def broadcast_shape(shapes):
    """The shape index arrays of ``shapes`` broadcast to, or NumPy's ``IndexError``."""
    if len(shapes) == 1:
        return tuple(shapes[0])
    if not shapes:
        return ()
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        off = ndim - len(s)
        for i, n in enumerate(s):
            m = out[off + i]
            if n != m:
                if m == 1:
                    out[off + i] = n
                elif n != 1:
                    raise IndexError(
                        "shape mismatch: indexing arrays could not be broadcast together with "
                        "shapes " + "".join(_numpy_shape(s) + " " for s in shapes)
                    )
    return tuple(out)


def _numpy_shape(shape):
    """A shape as NumPy's indexing errors write it: ``(3,1)``, ``(4,)``, ``()``."""
    return "(" + ",".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


#: What allocating a gather's result or scratch raises when it cannot: ``MemoryError``, or
#: NumPy's ``ValueError`` when the byte count overflows ``intp``.
ALLOCATION_ERRORS = (MemoryError, ValueError)


def result_array(shape, dtype, arrays, limits, report_axes):
    """``np.empty(shape, dtype)`` for a gather's result. When it cannot be allocated, the index
    ``arrays`` are bounds-checked first (:func:`check_bounds`), so a bad index raises
    ``IndexError`` however large the result would be; NumPy raises ``MemoryError`` there
    (``np.broadcast_to(x, (0, 3, 2**31))[[0]]`` asks for 96 GiB of complex128 rows), or
    ``ValueError`` when its byte count overflows. Only a gather whose indices are all in bounds
    raises those. The check runs only when the allocation fails, so it costs nothing
    otherwise, except for dtypes that hold objects: ``np.empty`` writes ``None`` into every
    item of those, so a result that can be allocated is written whole (16 GB for a row of
    2**31 objects) before a bad index would be seen; their indices are checked first (where
    the result holds anything: NumPy checks none of an empty gather's)."""
    if dtype.hasobject and 0 not in shape:
        check_bounds(arrays, limits, report_axes)
    try:
        return np.empty(shape, dtype=dtype)
    except ALLOCATION_ERRORS:
        check_bounds(arrays, limits, report_axes)
        raise


def check_bounds(arrays, limits, report_axes):
    """NumPy's ``IndexError`` for the first value of the index ``arrays`` (in key order; an int
    is already in bounds) outside ``[-limits[j], limits[j])``, naming axis
    ``report_axes[j]``."""
    checked = [j for j, arr in enumerate(arrays) if type(arr) is not int]
    _kernels.check_indices([_kernels.flat_intp(np.asarray(arrays[j])) for j in checked],
                           tuple(limits[j] for j in checked),
                           tuple(report_axes[j] for j in checked))


def gather(vsource, vshape, arrays, positions, report_axes, bshape, result, k_pos):
    """Fill ``result`` with the gather from the view ``(vsource, vshape)``.

    ``arrays[j]`` (an index array, or an int already in bounds) takes axis ``positions[j]``
    (ascending) of the view and is named ``report_axes[j]`` in errors; the arrays broadcast to
    ``bshape``. ``result`` (C-contiguous) holds, in order, the view's other axes before the
    ``k_pos``-th of them, the index axes ``bshape``, then the other axes left (it may also have
    axes of length 1 anywhere: ``None`` entries of the key). Returns ``result``.
    """
    out = result
    if result.ndim != len(vshape) - len(positions) + len(bshape):  # None entries' axes
        rest = [n for d, n in enumerate(vshape) if d not in positions]
        out = result.reshape(tuple(rest[:k_pos]) + tuple(bshape) + tuple(rest[k_pos:]))
    if len(arrays) > 1 and result.nbytes >= COMPACT_MIN_BYTES:
        # (One index array on a broadcast axis needs no help: the kernel sees that its
        # offsets are all equal and copies a broadcast axis.)
        compact = _compact(vsource, vshape, arrays, positions, report_axes, bshape, out.size)
        if compact is not None:
            cvshape, carrays, cbshape = compact
            crest = [n for d, n in enumerate(cvshape) if d not in positions]
            part = np.empty(tuple(crest[:k_pos]) + cbshape + tuple(crest[k_pos:]),
                            dtype=result.dtype)
            _run(vsource, cvshape, carrays, positions, report_axes, cbshape, part, k_pos,
                 checked=True)
            _kernels.copy_broadcast(part, out)
            return result
    _run(vsource, vshape, arrays, positions, report_axes, bshape, out, k_pos)
    return result


def _compact(vsource, vshape, arrays, positions, report_axes, bshape, size):
    """``(vshape, arrays, bshape)`` of the compact gather (the view's broadcast axes that the
    result keeps made 1, index arrays on broadcast axes replaced by zeros and left out of the
    index shape), or None when it is more than half of ``size`` elements. Checks the bounds of
    every index array when it returns the compact gather."""
    src_shape = vsource.shape
    cvshape = list(vshape)
    n_rest = 1
    for d, n in enumerate(vshape):
        if d not in positions:
            if src_shape[d] == 1:
                cvshape[d] = 1
            else:
                n_rest *= n
    kept = []
    dropped = []
    for k, arr in enumerate(arrays):
        if type(arr) is not int:
            (dropped if src_shape[positions[k]] == 1 else kept).append(k)
    cbshape = broadcast_shape([arrays[k].shape for k in kept]) if kept else ()
    cbshape = (1,) * (len(bshape) - len(cbshape)) + cbshape
    nb = 1
    for n in cbshape:
        nb *= n
    if 2 * nb * n_rest > size:
        return None
    check_bounds(arrays, [vshape[p] for p in positions], report_axes)
    if dropped:
        zeros = np.zeros(cbshape, dtype=np.intp)
        arrays = [zeros if k in dropped else arr for k, arr in enumerate(arrays)]
    return cvshape, arrays, cbshape


def _run(vsource, vshape, arrays, positions, report_axes, bshape, out, k_pos, checked=False):
    """The kernel's gather into ``out`` (its axes as :func:`gather` lays them out).

    The kernel checks the bounds (and wraps negatives) of the ``nb`` offsets it computes from
    index arrays broadcast to ``bshape``, one ``intp`` each. Arrays smaller than that are
    bounds-checked first, at their own size: a scratch array ``nb`` long may not fit where the
    result of a narrow dtype did (``(2**17, 1)`` and ``(1, 2**16)`` indices of a boolean view:
    an 8 GiB result, 64 GiB per broadcast index array), and a bad index is an ``IndexError``
    whatever the size, as NumPy raises it (unless the compact gather ``checked`` them)."""
    nb = 1
    for n in bshape:
        nb *= n
    limits = [vshape[p] for p in positions]
    if not checked and any(type(arr) is not int and arr.size < nb for arr in arrays):
        check_bounds(arrays, limits, report_axes)
    try:
        flat = []
        for arr in arrays:
            if type(arr) is int:
                arr = np.full(nb, arr, dtype=np.intp)
            elif arr.shape != bshape:
                arr = _kernels.flat_intp(np.broadcast_to(arr, bshape))
            else:
                arr = _kernels.flat_intp(arr)
            flat.append(arr)
        _kernels.gather(vsource, tuple(vshape), tuple(positions), flat, out, k_pos,
                        len(bshape), tuple(report_axes))
    except ALLOCATION_ERRORS:  # (the kernel's offsets, nb of them: check before raising)
        check_bounds(arrays, limits, report_axes)
        raise
