# Included by _kernels.pyx. Walking a plan: plan_run (no GIL) recurses over the axes and
# hands the innermost ones to the row, tile and channel kernels; plan_run_objects (GIL held)
# does the same for object pointers, keeping reference counts right.

cdef inline bint _streams(const Plan* p, intp_t inner_sstride, intp_t run_bytes) noexcept nogil:
    """Non-temporal stores for rows of ``run_bytes`` with this inner source stride: 0 is a
    fill (no source read), runs of one item, whose threshold is higher on machines where
    cached writes win longer, and higher still for long runs where `rep stos` does."""
    if inner_sstride != 0:
        return p.stream
    return p.stream_item if run_bytes >= _item_run_min else p.stream_fill


cdef inline bint _moves_layout(const Plan* p) noexcept nogil:
    """Whether the plan's innermost copy changes the layout: its last axis is not a run (an
    item repeated, or items read in order or reversed) into consecutive items."""
    cdef int last = p.ndim - 1
    return p.dstride[last] != p.itemsize or not (
        p.sstride[last] == 0 or p.sstride[last] == p.itemsize or p.sstride[last] == -p.itemsize)


cdef void _run(const Plan* p, int d, const char* src, char* dst) noexcept nogil:
    cdef intp_t n = p.shape[d]
    cdef intp_t i
    cdef int last = p.ndim - 1
    if d == p.gaxis:
        if d == last:
            for i in range(n):
                memcpy(dst + i * p.dstride[d], src + p.goffsets[i], p.itemsize)
        else:
            for i in range(n):
                _run(p, d + 1, src + p.goffsets[i], dst + i * p.dstride[d])
        return
    if p.sstride[d] == 0 and p.dblock[d] > 0 and n > 1:
        # A broadcast axis contiguous in the destination.
        if d == last:
            if _uniform(src, p.itemsize):
                if _streams(p, 0, n * p.itemsize):
                    lzb_stream_fill(dst, src[0], n * p.itemsize)
                else:
                    memset(dst, src[0], n * p.itemsize)
                return
            if n * p.itemsize >= REPLICATE_MIN:
                # Items of 1 to 16 bytes: vector broadcast stores, as out.fill() does (copying
                # the output onto itself spent 86% of a scalar float64 fill in memmove).
                if _streams(p, 0, n * p.itemsize):
                    if lzb_stream_pattern(dst, src, p.itemsize, n * p.itemsize):
                        return
                elif lzb_fill_rows(dst, 0, src, 0, 1, p.itemsize, n * p.itemsize):
                    return
                memcpy(dst, src, p.itemsize)
                _replicate(dst, p.itemsize, n, p.stream_fill)
                return
        elif (p.dstride[d] < _replicate_chunk and not (
                (p.dstride[d] >= 4096 or (not p.stream
                                          and p.shape[last] * p.itemsize >= COPY_DOWN_MIN))
                and d + 1 == last and p.sstride[last] == p.itemsize
                and p.dstride[last] == p.itemsize)) or (
                p.dstride[d] <= _row_order_source and _moves_layout(p)):
            # Small blocks: write one, then copy it (from cache) into the others. A large
            # block, or a block that is one long memcpy anyway, is cheaper to write again
            # from its (smaller, cache-resident) source; a row of COPY_DOWN_MIN or more, in
            # the cache, too (_rows_dispatch: lzb_copy_down). Except a block up to L2 whose
            # inner copy changes the layout (transposing tiles, image channels): that kernel
            # costs several times a copy from the cache per byte.
            _run(p, d + 1, src, dst)
            _replicate(dst, p.dstride[d], n, p.stream_fill)
            return
    if d == last:
        _rows_dispatch(p.itemsize, 1, 0, 0, n, p.sstride[d], p.dstride[d], src, dst,
                       _streams(p, p.sstride[d], n * p.itemsize), p.cached)
    elif d == last - 1 and p.gaxis != last:
        if _channels(p, d, src, dst):
            return
        if p.tiled:
            _tiles(p, src, dst)
        else:
            _rows_dispatch(p.itemsize, n, p.sstride[d], p.dstride[d],
                           p.shape[last], p.sstride[last], p.dstride[last], src, dst,
                           _streams(p, p.sstride[last], p.shape[last] * p.itemsize),
                           p.cached)
    else:
        for i in range(n):
            _run(p, d + 1, src + i * p.sstride[d], dst + i * p.dstride[d])


cdef void plan_run(const Plan* p, const char* src, char* dst) noexcept nogil:
    """Copy everything ``p`` describes. ``p`` must come from :c:func:`plan_init`."""
    if not p.empty:
        _run(p, 0, src, dst)
        if p.stream or p.stream_fill or p.source_order:  # (source order: non-temporal runs)
            lzb_stream_fence()


cdef void _run_objects(const Plan* p, int d, const char* src, char* dst) noexcept:
    cdef intp_t i
    cdef PyObject* new
    cdef PyObject* old
    cdef const char* s
    for i in range(p.shape[d]):
        s = src + (p.goffsets[i] if d == p.gaxis else i * p.sstride[d])
        if d == p.ndim - 1:
            memcpy(&new, s, sizeof(PyObject*))
            memcpy(&old, dst + i * p.dstride[d], sizeof(PyObject*))
            Py_XINCREF(new)
            memcpy(dst + i * p.dstride[d], &new, sizeof(PyObject*))
            Py_XDECREF(old)
        else:
            _run_objects(p, d + 1, s, dst + i * p.dstride[d])


cdef void plan_run_objects(const Plan* p, const char* src, char* dst) noexcept:
    """Like :c:func:`plan_run` for arrays of object pointers; holds the GIL."""
    if not p.empty:
        _run_objects(p, 0, src, dst)
