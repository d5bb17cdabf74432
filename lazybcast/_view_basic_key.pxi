# The fast paths of BroadcastView.__getitem__ for basic keys (ints, slices, None, one ...):
# the new source is computed straight from the source's strides, as NumPy's
# get_view_from_index does, without the general key parser in lazybcast._indexing; an int or
# a slice alone (view[i], view[a:b]) has a shorter path still (_first_axis_key). The new view
# keeps the new source's geometry and makes its ndarray on first use (_source_of in _view.pyx).
# Included by _view.pyx at module level.

cdef object _basic_key(BroadcastView self, object key):
    """Basic indexing by an int, a slice or a tuple of ints, slices, ``None`` and one
    ``...``, straight onto the source's strides (what NumPy's ``get_view_from_index``
    does), or ``_GENERAL`` for any other key and for an int out of range (the general path
    in ``_indexing`` then raises NumPy's error)."""
    cdef cnp.npy_intp* sdims = self._sdims
    cdef cnp.npy_intp* sstrides = self._sstrides
    cdef tuple entries = key if type(key) is tuple else None
    cdef Py_ssize_t nkey = 1 if entries is None else len(entries)
    cdef Py_ssize_t k, start, stop, step, length, i, n, m
    cdef int ndim = len(self.shape), axis = 0, out_nd = 0, consumed = 0, fill, j
    cdef bint ellipsis = False, scalar = True
    cdef cnp.npy_intp dims[cnp.NPY_MAXDIMS]      # the new source's
    cdef cnp.npy_intp strides[cnp.NPY_MAXDIMS]
    cdef cnp.npy_intp vdims[cnp.NPY_MAXDIMS]     # the new view's
    cdef int vfrom[cnp.NPY_MAXDIMS]               # the view's axis of the same size, or -1
    cdef cnp.npy_intp stride
    cdef intp_t size = 1
    cdef char* data = self._data
    cdef tuple old_shape = self.shape, shape
    cdef object item, value
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
            if sdims[axis] == n:
                data += i * sstrides[axis]
            axis += 1
            continue
        if item is Ellipsis:
            if k < nkey:
                scalar = False
            if out_nd + fill > cnp.NPY_MAXDIMS:
                return _GENERAL
            for j in range(fill):
                dims[out_nd] = sdims[axis]
                strides[out_nd] = sstrides[axis]
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
            m = sdims[axis]
            stride = sstrides[axis]
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
    if scalar and out_nd == 0:
        # every axis an int: NumPy's scalar (a structured one refers to the root's memory)
        return _scalar(data, cnp.PyArray_DESCR(self._root), self._root)
    cdef bint same = out_nd == ndim and data == self._data
    j = 0
    while same and j < out_nd:
        same = (dims[j] == sdims[j] and strides[j] == sstrides[j]
                and vdims[j] == <cnp.npy_intp>old_shape[j])
        j += 1
    if same:  # v[()], v[...], v[:]: the same source and shape, so the same view
        return self
    shape = PyTuple_New(out_nd)
    for j in range(out_nd):
        # An axis of the view's size keeps its int object (no new int for sizes > 256).
        value = old_shape[vfrom[j]] if vfrom[j] >= 0 else vdims[j]
        Py_INCREF(value)
        PyTuple_SET_ITEM(shape, j, value)
        size *= vdims[j]
    return _new_view(self, out_nd, dims, strides, data, shape, size)


cdef BroadcastView _new_view(BroadcastView self, int nd, cnp.npy_intp* dims,
                             cnp.npy_intp* strides, char* data, tuple shape, intp_t size):
    """A view of ``self``'s source memory: the new source (``nd`` axes ``dims``, ``strides``
    from ``data``, inside ``self``'s source) and the new view's ``shape`` and ``size``. Its
    invariant holds by the callers' construction (every source axis is 1 or the view's
    size), so _wrap's checks are skipped. The source's ndarray is left to first use: the
    view keeps ``self``'s root and the geometry."""
    cdef BroadcastView v = BroadcastView.__new__(BroadcastView)
    v._src = None
    v._root = self._root
    v._data = data
    v._writeable = self._writeable
    _set_geometry(v, nd, dims, strides)
    v.shape = shape
    v._strides = None
    v.base = self.base
    v.mode = self.mode
    v._size = size
    return v


cdef object _first_axis_key(BroadcastView self, object key):
    """``view[i]`` and ``view[start:stop:step]`` (a data loader's and a batcher's keys) by
    the first axis alone: the same results as _basic_key, with less to decide. ``_GENERAL``
    for a 0-d view and an int out of range."""
    cdef tuple old_shape = self.shape, shape
    cdef int ndim = len(old_shape), j
    cdef Py_ssize_t n, i, start, stop, step, length
    cdef cnp.npy_intp* sdims = self._sdims
    cdef cnp.npy_intp* sstrides = self._sstrides
    cdef cnp.npy_intp dims[cnp.NPY_MAXDIMS]
    cdef cnp.npy_intp strides[cnp.NPY_MAXDIMS]
    cdef char* data = self._data
    cdef bint broadcast
    cdef object value
    if ndim == 0:
        return _GENERAL
    n = old_shape[0]
    broadcast = sdims[0] != n
    if type(key) is int:
        try:
            i = key
        except OverflowError:
            return _GENERAL
        if i < -n or i >= n:
            return _GENERAL
        if i < 0:
            i += n
        if not broadcast:
            data += i * sstrides[0]
        if ndim == 1:
            return _scalar(data, cnp.PyArray_DESCR(self._root), self._root)
        return _new_view(self, ndim - 1, sdims + 1, sstrides + 1, data, old_shape[1:],
                         self._size // n)
    PySlice_GetIndicesEx(key, n, &start, &stop, &step, &length)
    if length == n and (broadcast or (start == 0 and step == 1)):
        return self  # v[:], or any full slice of a broadcast axis: the same view
    for j in range(1, ndim):
        dims[j] = sdims[j]
        strides[j] = sstrides[j]
    if broadcast:  # a broadcast axis keeps its single source element
        dims[0] = sdims[0]
        strides[0] = sstrides[0]
    else:
        if length > 0:
            data += start * sstrides[0]
        dims[0] = length
        strides[0] = sstrides[0] * step
    shape = PyTuple_New(ndim)
    value = old_shape[0] if length == n else length
    Py_INCREF(value)
    PyTuple_SET_ITEM(shape, 0, value)
    for j in range(1, ndim):
        value = old_shape[j]
        Py_INCREF(value)
        PyTuple_SET_ITEM(shape, j, value)
    return _new_view(self, ndim, dims, strides, data, shape,
                     self._size // n * length if n else 0)
