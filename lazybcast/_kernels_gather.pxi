# Included by _kernels.pyx. Advanced-index gathers: validates its arguments, turns the
# index arrays into one table of source offsets (bounds-checked), and runs the plan whose
# index axis reads through that table.

def gather(cnp.ndarray src not None, tuple vshape not None, tuple axes not None,
           list indices not None,
           cnp.ndarray out not None, int bpos, int bndim, tuple report_axes=None):
    """gather(src, vshape, axes, indices, out, bpos, bndim, report_axes=None)

    Advanced-index gather from the broadcast of ``src`` to ``vshape``.

    ``axes`` are the (sorted) axes of ``vshape`` taken by the 1-D ``np.intp`` arrays
    ``indices`` (one per axis, all of one length ``nb``; negative values count from the end,
    out-of-range ones raise ``IndexError`` naming ``report_axes[j]``, default ``axes[j]``).
    The other axes keep their order. ``out`` is C-contiguous;
    its axes ``[bpos, bpos + bndim)`` hold the ``nb`` index positions, the others are the
    remaining axes of ``vshape`` in order.
    """
    cdef int ndim = len(vshape), nadv = len(axes), nrest, d, j, r, k
    cdef const intp_t* values
    cdef intp_t limit, step
    cdef intp_t nb, b, v, size, bstride
    cdef intp_t rshape[NPY_MAXDIMS]
    cdef intp_t rsstride[NPY_MAXDIMS]
    cdef intp_t rdstride[NPY_MAXDIMS]
    cdef intp_t vstride[NPY_MAXDIMS]
    cdef intp_t vsh[NPY_MAXDIMS]
    cdef bint is_adv[NPY_MAXDIMS]
    cdef intp_t* offsets = NULL
    cdef cnp.ndarray idx
    cdef const char* s0 = <const char*>cnp.PyArray_DATA(src)
    cdef const char* s
    cdef char* t0 = <char*>cnp.PyArray_DATA(out)
    cdef char* t
    cdef Plan plan
    cdef bint objects
    if cnp.PyArray_NDIM(src) != ndim or ndim > NPY_MAXDIMS:
        raise ValueError(f"src must have rank {len(vshape)}, got {cnp.PyArray_NDIM(src)}")
    if not lzb_equiv_types(cnp.PyArray_DESCR(src), cnp.PyArray_DESCR(out)):
        raise TypeError(f"src and out must have one dtype, got {src.dtype} and {out.dtype}")
    if not cnp.PyArray_IS_C_CONTIGUOUS(out) or not cnp.PyArray_ISWRITEABLE(out):
        raise ValueError("out must be a writeable C-contiguous array")
    objects = _copyable(out)
    for d in range(ndim):
        vsh[d] = vshape[d]
        if vsh[d] < 0:
            raise ValueError(f"vshape must hold sizes >= 0, got {vshape!r}")
    if nadv != len(indices) or nadv == 0:
        raise ValueError("one index array per advanced axis is needed")
    for j in range(nadv):
        if not isinstance(indices[j], cnp.ndarray):
            raise TypeError(f"indices[{j}] must be an ndarray, got {type(indices[j]).__name__}")
    if may_overlap(src, out):
        src = src.copy()
        s0 = <const char*>cnp.PyArray_DATA(src)
    if report_axes is not None and len(report_axes) != nadv:
        raise ValueError(f"report_axes must name {nadv} axes, got {report_axes!r}")
    if bpos < 0 or bndim < 0 or bpos + bndim > cnp.PyArray_NDIM(out) or cnp.PyArray_NDIM(out) - bndim != ndim - nadv:
        raise ValueError("out's rank does not match the gather")
    for d in range(ndim):
        is_adv[d] = False
        if cnp.PyArray_DIMS(src)[d] == vsh[d]:
            vstride[d] = cnp.PyArray_STRIDES(src)[d]
        elif cnp.PyArray_DIMS(src)[d] == 1:
            vstride[d] = 0
        else:
            raise ValueError(f"src axis {d} has size {cnp.PyArray_DIMS(src)[d]}, expected 1 or {vsh[d]}")
    nb = 1
    for d in range(bpos, bpos + bndim):
        nb *= cnp.PyArray_DIMS(out)[d]
    for j in range(nadv):
        d = axes[j]
        if d < 0 or d >= ndim or is_adv[d] or (j > 0 and d <= axes[j - 1]):
            raise ValueError(f"axes must be sorted distinct axes of vshape, got {axes}")
        is_adv[d] = True
        idx = indices[j]
        if (cnp.PyArray_TYPE(idx) != cnp.NPY_INTP or not cnp.PyArray_ISNOTSWAPPED(idx)
                or cnp.PyArray_NDIM(idx) != 1 or not cnp.PyArray_ISCARRAY_RO(idx)
                or cnp.PyArray_DIMS(idx)[0] != nb):
            raise ValueError(f"indices[{j}] must be an aligned C-contiguous 1-D intp array of "
                             f"length {nb}, got {idx.dtype} of shape {(<object>idx).shape}")
    # The copy runs over out's axes in order: the remaining axes of vshape before the index
    # axes, the index axes as one gather axis (nb positions, contiguous in C-ordered out),
    # then the remaining axes after them.
    nrest = 0
    r = 0
    for d in range(ndim):
        if is_adv[d]:
            continue
        if r == bpos:
            r += bndim
        if cnp.PyArray_DIMS(out)[r] != vsh[d]:
            raise ValueError(f"out axis {r} must have size {vsh[d]}, got {cnp.PyArray_DIMS(out)[r]}")
        k = nrest + (1 if nrest >= bpos else 0)
        rshape[k] = vsh[d]
        rsstride[k] = vstride[d]
        rdstride[k] = cnp.PyArray_STRIDES(out)[r]
        nrest += 1
        r += 1
    size = cnp.PyArray_ITEMSIZE(out)
    bstride = size
    for d in range(bpos + bndim, cnp.PyArray_NDIM(out)):
        bstride *= cnp.PyArray_DIMS(out)[d]
    rshape[bpos] = nb
    rsstride[bpos] = 0
    rdstride[bpos] = bstride
    if nb == 0:
        return out
    offsets = <intp_t*>malloc(nb * sizeof(intp_t))
    if offsets == NULL:
        raise MemoryError()
    try:
        for b in range(nb):
            offsets[b] = 0
        for j in range(nadv):
            d = axes[j]
            idx = indices[j]
            values = <const intp_t*>cnp.PyArray_DATA(idx)
            limit = vsh[d]
            step = vstride[d]
            for b in range(nb):
                v = values[b]
                if v < 0:
                    v += limit
                if v < 0 or v >= limit:
                    _out_of_bounds(values[b], d if report_axes is None else report_axes[j],
                                   limit)
                offsets[b] += v * step
        if cnp.PyArray_SIZE(out) == 0:  # indices checked (as NumPy does), nothing to copy
            return out
        s = s0
        t = t0
        plan_init(&plan, nrest + 1, rshape, rsstride, rdstride, size, objects, &s, &t, bpos,
                  offsets)
        _execute_plan(&plan, s, t, out, None)
    finally:
        free(offsets)
    return out


cdef int _out_of_bounds(intp_t value, object axis, intp_t limit) except -1:
    raise IndexError(f"index {value} is out of bounds for axis {axis} with size {limit}")


def check_indices(list indices not None, tuple limits not None, tuple report_axes not None):
    """check_indices(indices, limits, report_axes)

    Raise ``IndexError`` as :func:`gather` does for the first value of ``indices[j]`` (aligned
    C-contiguous native ``np.intp`` arrays, in key order) outside ``[-limits[j], limits[j])``,
    naming axis ``report_axes[j]``. What a gather that reads fewer positions than the key
    holds checks first, so that its errors are the whole gather's.
    """
    cdef Py_ssize_t j, n = len(indices)
    cdef intp_t b, v, nb, limit
    cdef const intp_t* values
    cdef cnp.ndarray idx
    if len(limits) != n or len(report_axes) != n:
        raise ValueError(f"one limit and one axis per index array are needed, got {n} arrays, "
                         f"{len(limits)} limits and {len(report_axes)} axes")
    for j in range(n):
        if not isinstance(indices[j], cnp.ndarray):
            raise TypeError(f"indices[{j}] must be an ndarray, got {type(indices[j]).__name__}")
        idx = indices[j]
        if (cnp.PyArray_TYPE(idx) != cnp.NPY_INTP or not cnp.PyArray_ISNOTSWAPPED(idx)
                or not cnp.PyArray_ISCARRAY_RO(idx)):
            raise ValueError(f"indices[{j}] must be an aligned C-contiguous intp array, got "
                             f"{idx.dtype} with flags {(<object>idx).flags!r}")
        limit = limits[j]
        if limit < 0:
            raise ValueError(f"limits must be sizes >= 0, got {limits!r}")
        values = <const intp_t*>cnp.PyArray_DATA(idx)
        nb = cnp.PyArray_SIZE(idx)
        for b in range(nb):
            v = values[b]
            if v < -limit or v >= limit:
                _out_of_bounds(v, report_axes[j], limit)


def flat_intp(cnp.ndarray arr not None):
    """``arr``'s values in C order as :func:`gather` takes an index array: 1-D, C-contiguous,
    aligned native ``np.intp`` (``arr`` itself or a view of it when it is one, else a copy of
    its values so cast)."""
    cdef cnp.ndarray flat
    if (cnp.PyArray_TYPE(arr) == cnp.NPY_INTP and cnp.PyArray_ISNOTSWAPPED(arr)
            and cnp.PyArray_ISCARRAY_RO(arr)):
        # (PyArray_TYPE: int64 'q' equals intp, yet is another type number)
        return arr if cnp.PyArray_NDIM(arr) == 1 else cnp.PyArray_Ravel(arr, cnp.NPY_CORDER)
    flat = np.empty(cnp.PyArray_SIZE(arr), dtype=np.intp)
    flat.reshape((<object>arr).shape)[...] = arr
    return flat
