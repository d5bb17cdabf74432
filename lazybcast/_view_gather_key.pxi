# The fast path of BroadcastView.__getitem__ for the commonest gathers: view[idx],
# view[:, idx], view[a:b, idx, ...] (one integer ndarray or 1-D boolean mask, every other
# entry a slice or one `...`). The slices go through _basic_key (a view, no copy), then the kernel gathers
# straight into the result, without the general key parser in lazybcast._indexing (which
# takes every other key, and these too when this path declines). Included by _view.pyx at
# module level.

cdef object _one_array_key(BroadcastView self, object key):
    """The gather that ``key`` asks for, or ``_GENERAL`` for any other key."""
    cdef tuple entries = key if type(key) is tuple else (key,)
    cdef Py_ssize_t k, nkey = len(entries), nslices = 0, before = 0, pos
    cdef int ndim = len(self.shape)
    cdef bint ellipsis = False, ellipsis_first = False
    cdef cnp.ndarray arr = None, src = self._root  # (the source's dtype)
    cdef object item, sub = self, shape
    for k in range(nkey):
        item = entries[k]
        if type(item) is slice:
            nslices += 1
            if arr is None:
                before += 1
        elif item is Ellipsis and not ellipsis:
            ellipsis = True
            ellipsis_first = arr is None
        elif (type(item) is np.ndarray and arr is None and cnp.PyArray_NDIM(<cnp.ndarray>item)
              and (cnp.PyArray_ISINTEGER(<cnp.ndarray>item)
                   or (cnp.PyArray_ISBOOL(<cnp.ndarray>item)
                       and cnp.PyArray_NDIM(<cnp.ndarray>item) == 1))):
            arr = item
        else:
            return _GENERAL
    if (arr is None or nslices + 1 > ndim or ndim - 1 + cnp.PyArray_NDIM(arr) > cnp.NPY_MAXDIMS
            or (cnp.PyArray_TYPE(src) != cnp.NPY_OBJECT and (<object>src).dtype.hasobject)):
        # References the kernel cannot copy (inside a structured dtype, StringDType's):
        # NumPy's gather, via _indexing.
        return _GENERAL
    pos = before + (ndim - nslices - 1 if ellipsis_first else 0)
    if nslices:  # the slices first: a lazy view, the array's axis kept whole
        sub = _basic_key(self, tuple(_FULL_SLICE if x is arr else x for x in entries))
        if sub is _GENERAL:
            return _GENERAL
    if cnp.PyArray_ISBOOL(arr):  # a mask of the axis: the positions it selects
        if cnp.PyArray_DIMS(arr)[0] != self.shape[pos]:
            return _GENERAL  # (NumPy's error, or its empty mask that fits any axis)
        arr = cnp.PyArray_Nonzero(arr)[0]
    shape = (<BroadcastView>sub).shape
    try:  # (lazybcast._gather.result_array, without a call on this path)
        out = np.empty(shape[:pos] + (<object>arr).shape + shape[pos + 1:], dtype=src.dtype)
    except _ALLOCATION_ERRORS:
        _check_bounds([arr], [shape[pos]], [pos])  # a bad index is an IndexError
        raise
    _kernel_gather(_source_of(<BroadcastView>sub), shape, (pos,), [_flat_intp(arr)], out, pos,
                   cnp.PyArray_NDIM(arr), (pos,))
    return out
