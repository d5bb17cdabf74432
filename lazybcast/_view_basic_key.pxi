# The fast path of BroadcastView.__getitem__ for basic keys (ints, slices, None, one ...):
# the new source is computed straight from the source's strides, as NumPy's
# get_view_from_index does, without the general key parser in lazybcast._indexing.
# Included by _view.pyx at module level.

cdef object _basic_key(BroadcastView self, object key):
    """Basic indexing by an int, a slice or a tuple of ints, slices, ``None`` and one
    ``...``, straight onto the source's strides (what NumPy's ``get_view_from_index``
    does), or ``_GENERAL`` for any other key and for an int out of range (the general path
    in ``_indexing`` then raises NumPy's error)."""
    cdef cnp.ndarray src = self._source
    cdef tuple entries = key if type(key) is tuple else None
    cdef Py_ssize_t nkey = 1 if entries is None else len(entries)
    cdef Py_ssize_t k, start, stop, step, length, i, n, m
    cdef int ndim = len(self.shape), axis = 0, out_nd = 0, consumed = 0, fill, j
    cdef bint ellipsis = False, scalar = True
    cdef cnp.npy_intp dims[cnp.NPY_MAXDIMS]      # the new source's
    cdef cnp.npy_intp strides[cnp.NPY_MAXDIMS]
    cdef cnp.npy_intp vdims[cnp.NPY_MAXDIMS]     # the new view's
    cdef int vfrom[cnp.NPY_MAXDIMS]               # the view's axis of the same size, or -1
    cdef cnp.npy_intp stride, size = 1
    cdef char* data = <char*>cnp.PyArray_DATA(src)
    cdef tuple old_shape = self.shape
    cdef object item
    for k in range(nkey):
        item = key if entries is None else entries[k]
        if type(item) is int or type(item) is slice:
            consumed += 1
        elif item is Ellipsis and not ellipsis:
            ellipsis = True
        elif item is not None:
            return _GENERAL
    if consumed > ndim or nkey - consumed > cnp.NPY_MAXDIMS:
        return _GENERAL
    fill = ndim - consumed
    for k in range(nkey + 1):
        if k < nkey:
            item = key if entries is None else entries[k]
        elif ellipsis:
            break
        else:
            item = Ellipsis  # the implicit trailing `...`
        if type(item) is int:
            n = self.shape[axis]
            try:
                i = item
            except OverflowError:
                return _GENERAL
            if i < -n or i >= n:
                return _GENERAL
            if i < 0:
                i += n
            if cnp.PyArray_DIMS(src)[axis] == n:
                data += i * cnp.PyArray_STRIDES(src)[axis]
            axis += 1
            continue
        if item is Ellipsis:
            if k < nkey:
                scalar = False
            if out_nd + fill > cnp.NPY_MAXDIMS:
                return _GENERAL
            for j in range(fill):
                dims[out_nd] = cnp.PyArray_DIMS(src)[axis]
                strides[out_nd] = cnp.PyArray_STRIDES(src)[axis]
                vdims[out_nd] = self.shape[axis]
                vfrom[out_nd] = axis
                out_nd += 1
                axis += 1
            fill = 0
            continue
        if out_nd == cnp.NPY_MAXDIMS:
            return _GENERAL
        scalar = False
        vfrom[out_nd] = -1
        if item is None:
            dims[out_nd] = 1
            strides[out_nd] = 0
            vdims[out_nd] = 1
        else:  # a slice
            n = self.shape[axis]
            m = cnp.PyArray_DIMS(src)[axis]
            stride = cnp.PyArray_STRIDES(src)[axis]
            PySlice_GetIndicesEx(item, n, &start, &stop, &step, &length)
            if m == n:
                if length > 0:
                    data += start * stride
                dims[out_nd] = length
                strides[out_nd] = stride * step
            else:  # a broadcast axis keeps its single source element
                dims[out_nd] = m
                strides[out_nd] = stride
            vdims[out_nd] = length
            if length == n:
                vfrom[out_nd] = axis
            axis += 1
        out_nd += 1
    cdef cnp.PyArray_Descr* descr = cnp.PyArray_DESCR(src)
    if scalar and out_nd == 0:
        return _scalar(data, descr, src)  # every axis an int: NumPy's scalar
    cdef cnp.ndarray out
    cdef bint same = out_nd == cnp.PyArray_NDIM(src) and data == <char*>cnp.PyArray_DATA(src)
    j = 0
    while same and j < out_nd:
        same = (dims[j] == cnp.PyArray_DIMS(src)[j] and strides[j] == cnp.PyArray_STRIDES(src)[j]
                and vdims[j] == <cnp.npy_intp>old_shape[j])
        j += 1
    if same:  # v[()], v[...], v[:]: the same source and shape, so the same view
        return self
    Py_INCREF(<object>descr)
    out = <cnp.ndarray>lzb_new_from_descr(
        &lzb_ndarray_type, descr, out_nd, dims, strides, data,
        cnp.PyArray_FLAGS(src) & cnp.NPY_ARRAY_WRITEABLE, NULL)
    cnp.set_array_base(out, src)
    # The view, built here: its invariant holds by construction (every source axis is 1
    # or the view's size), so _wrap's checks are skipped.
    cdef BroadcastView v = BroadcastView.__new__(BroadcastView)
    cdef tuple shape = PyTuple_New(out_nd)
    cdef object value
    for j in range(out_nd):
        # An axis of the view's size keeps its int object (no new int for sizes > 256).
        value = old_shape[vfrom[j]] if vfrom[j] >= 0 else vdims[j]
        Py_INCREF(value)
        PyTuple_SET_ITEM(shape, j, value)
        size *= vdims[j]
    v._source = out
    v.shape = shape
    v._strides = None
    v.base = self.base
    v.mode = self.mode
    v._size = size
    return v
