# Included by _view.pyx: a BroadcastView as an ndarray: zero-copy over the source's memory
# (_as_ndarray, where __array__, DLPack and the layout functions start), or its values copied
# out into a new array or a given one (materialize, with a cast in the same pass), and NumPy's
# __array__ (zero-copy, or a copy that casts the compact source first). The copies run in
# lazybcast._kernels (copy_into), casts block by block in lazybcast._cast.


@cython.auto_pickle(False)
cdef class _Materializing(_ViewFields):
    """A :class:`BroadcastView` as an ndarray, zero-copy or materialized (a base class of
    it; never instantiated on its own)."""

    def _as_ndarray(self):
        """_as_ndarray()

        The view as a read-only ndarray over the source's memory, stride 0 on broadcast axes
        (what ``np.broadcast_to(view.source, view.shape)`` returns), built in C: the zero-copy
        form that ``__array__``, DLPack and the layout functions start from."""
        cdef int d, ndim = len(self.shape)
        cdef cnp.npy_intp dims[cnp.NPY_MAXDIMS]
        cdef cnp.npy_intp strides[cnp.NPY_MAXDIMS]
        cdef cnp.PyArray_Descr* descr = cnp.PyArray_DESCR(self._root)
        for d in range(ndim):
            dims[d] = self.shape[d]
            # the source's stride on an axis of size 1 (np.broadcast_to reports 0 there; a size-1
            # axis's stride is never used, and NumPy ignores it for contiguity)
            strides[d] = self._sstrides[d] if self._sdims[d] == dims[d] else 0
        Py_INCREF(<object>descr)  # PyArray_NewFromDescr steals a reference
        cdef cnp.ndarray result = <cnp.ndarray>lzb_new_from_descr(
            &lzb_ndarray_type, descr, ndim, dims, strides, self._data, 0, NULL)
        # read-only (flags 0); the root holds the source's memory (the source itself, or the
        # ndarray a basic key's source lies in, still unmade)
        cnp.set_array_base(result, self._root)
        return result

    def materialize(self, out=None, *, dtype=None, threads=None):
        """materialize(out=None, *, dtype=None, threads=None)

        Copy the view's values into a new C-contiguous array, or into ``out``.

        Parameters
        ----------
        out : array, optional
            A writeable array of exactly the view's shape and dtype (``dtype`` if given), in
            any layout: an ndarray, or any object exposing DLPack or the buffer protocol (a
            pinned ``torch`` tensor, a ``memoryview``...). It may overlap the source. An
            ``out`` whose own items share bytes (made with ``as_strided``: a stride of 0, or
            strides that interleave) is filled by ``np.copyto``, so the value left where
            items collide is NumPy's (on one thread; the test is conservative, so a few
            ``as_strided`` outs whose items only interleave take that path too, with the
            same values).
        dtype : dtype, optional
            Cast to this dtype in the copy pass (as ``astype``, ``unsafe`` casting), block by
            block in cache: no full-size intermediate.
        threads : int, optional
            Threads to split a large copy across (the GIL is released). ``None`` picks two
            threads for outputs of 4 MiB or more on a machine with two usable CPUs or more
            (``lazybcast._kernels.AUTO_THREADS_BYTES``), from half that (at least the loop
            size below; ``WAKE_THREADS_BYTES``) when a helper thread is asleep after an
            earlier copy, and from the size of
            one core's L2 cache (``LOOP_THREADS_BYTES``) for copies in a loop (a helper is
            still spinning from a previous copy, or this is the third of a tight run), else
            one. Helper threads spin for the next copy for up to 1 ms after their share
            (``LAZYBCAST_HELPER_SPIN_US``: as long as the share took, at least 50 us, or
            twice the last gap between copies), then sleep until a copy wakes them.

        Returns
        -------
        array
            ``out`` itself if given, else a new C-contiguous, writeable ndarray.

        Examples
        --------
        >>> import numpy as np, lazybcast
        >>> v = lazybcast.broadcast(np.array([1, 2], dtype=np.int8), [2, 1, 1],
        ...                         mode="bidirectional")
        >>> v.materialize()
        array([[[1, 2]],
        <BLANKLINE>
               [[1, 2]]], dtype=int8)
        >>> hwc = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
        >>> chw = lazybcast.broadcast_to(hwc.transpose(2, 0, 1), (3, 2, 2))
        >>> chw.materialize(dtype=np.float32)[2]
        array([[ 2.,  5.],
               [ 8., 11.]], dtype=float32)
        """
        cdef cnp.ndarray source = None  # (made only where the geometry is not enough)
        cdef cnp.ndarray result
        cdef cnp.PyArray_Descr* descr = cnp.PyArray_DESCR(self._root)
        caller = out
        threads_for(0, threads)  # validated here too: some dtypes skip the kernel
        if out is not None and not cnp.PyArray_Check(out):
            from lazybcast._buffers import as_writeable_array
            out = as_writeable_array(out)
        if dtype is not None:
            dtype = np.dtype(dtype)
            if dtype == <object>descr:
                dtype = None
        if out is not None:
            self._check_out(out, <cnp.dtype>descr if dtype is None else dtype)
            result = <cnp.ndarray>out
            if may_overlap_itself(result):
                # Items that share bytes (an as_strided array): which value stays depends on
                # the order of the writes, so NumPy's own copy makes them, as np.copyto would.
                np.copyto(result, np.broadcast_to(_source_of(self), self.shape),
                          casting="unsafe")
                return caller
        if dtype is not None:
            from lazybcast._cast import materialize_cast
            if out is None:
                result = np.empty(self.shape, dtype=dtype)
            materialize_cast(_source_of(self), self.shape, result, threads)
            return result if caller is None else caller
        if out is None:
            result = self._empty()
        else:
            source = _source_of(self)
            if may_overlap(result, source):
                source = source.copy()
        if lzb_has_refs(descr) and cnp.PyArray_TYPE(self._root) != cnp.NPY_OBJECT:
            # Objects inside a structured dtype: NumPy knows which bytes are references.
            np.copyto(result, np.broadcast_to(_source_of(self) if source is None else source,
                                              self.shape))
        elif source is None:  # a new array: straight from the view's geometry
            copy_geometry_into(self._data, self._sdims, self._sstrides, descr, result, threads)
        else:
            copy_into(source, result, threads)
        return result if caller is None else caller

    cdef cnp.ndarray _empty(self):
        cdef int d, ndim = len(self.shape)
        cdef cnp.npy_intp dims[cnp.NPY_MAXDIMS]
        cdef cnp.PyArray_Descr* descr = cnp.PyArray_DESCR(self._root)
        for d in range(ndim):
            dims[d] = self.shape[d]
        Py_INCREF(<object>descr)  # PyArray_NewFromDescr steals a reference
        return <cnp.ndarray>lzb_new_from_descr(&lzb_ndarray_type, descr, ndim, dims, NULL, NULL,
                                               0, NULL)

    cdef int _check_out(self, out, cnp.dtype dtype) except -1:
        cdef cnp.ndarray o
        cdef int d
        if not cnp.PyArray_Check(out):
            raise TypeError(f"out must be a numpy.ndarray, got {type(out).__name__}")
        o = <cnp.ndarray>out
        if cnp.PyArray_NDIM(o) != len(self.shape):
            raise ValueError(f"out has shape {out.shape}; it must be the view's shape {self.shape}")
        for d in range(cnp.PyArray_NDIM(o)):
            if cnp.PyArray_DIMS(o)[d] != <cnp.npy_intp>self.shape[d]:
                raise ValueError(
                    f"out has shape {out.shape}; it must be the view's shape {self.shape}")
        if not lzb_equiv_types(cnp.PyArray_DESCR(o), <cnp.PyArray_Descr*>dtype):
            what = "the view's dtype" if dtype is self._root.dtype else "dtype="
            raise TypeError(f"out has dtype {out.dtype}; it must be {what} {dtype}")
        if not cnp.PyArray_ISWRITEABLE(o):
            raise ValueError("out is read-only; pass a writeable array")
        return 0

    def __array__(self, dtype=None, copy=None):
        if copy is True:
            if dtype is not None and np.dtype(dtype) != self._root.dtype:
                # Cast the compact source, then broadcast it: cheaper than casting the result.
                return _with_source(self, _source_of(self).astype(dtype)).materialize()
            return self.materialize()
        if dtype is not None and np.dtype(dtype) != self._root.dtype:
            if copy is False:
                raise ValueError(
                    f"a copy is needed to cast a {self._root.dtype} view to {np.dtype(dtype)}; "
                    f"copy=False forbids it"
                )
            return _with_source(self, _source_of(self).astype(dtype)).materialize()
        return self._as_ndarray()
