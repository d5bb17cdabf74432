"""BroadcastView: a lazy broadcast of a source array, materialized by our own kernels.

A view is a pair (``source``, ``shape``): ``source`` is a NumPy view of the user's array with the
view's rank, each axis either the view's size or 1. The stride map follows from that pair: the
source's stride where the sizes agree, 0 where the source has 1. Because the source is a real
NumPy array, every address the stride map can reach lies inside a buffer NumPy vouches for and
that the view keeps alive.
"""

cimport cython
cimport numpy as cnp

from cpython.ref cimport Py_INCREF
from cpython.slice cimport PySlice_GetIndicesEx
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM

from lazybcast._kernels cimport (
    copy_into,
    intp_t,
    lzb_equiv_types,
    lzb_has_refs,
    lzb_ndarray_type,
    lzb_new_from_descr,
    may_overlap,
    threads_for,
)

cdef extern from "numpy/arrayobject.h":
    # An element as NumPy returns it (basic indexing's fast path, BroadcastView._basic_key).
    object _scalar "PyArray_Scalar"(void*, cnp.PyArray_Descr*, object)

import numpy as np

from lazybcast import _indexing
from lazybcast._rules import MODES, check_size

cnp.import_array()

#: "Not a key for the fast path": BroadcastView._basic_key hands the key to _indexing.
cdef object _GENERAL = object()

#: What a bare ``BroadcastView.__new__`` (for example from a crafted pickle) holds: nothing.
_EMPTY = np.empty(0, dtype=np.uint8)
_EMPTY.flags.writeable = False


def _format_bytes(n):
    for unit in ("B", "kB", "MB", "GB", "TB", "PB", "EB"):
        if n < 1000 or unit == "EB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0


@cython.freelist(16)  # a view is made per index call: reuse the memory of freed ones
cdef class BroadcastView:
    """A read-only, lazily broadcast array.

    Create views with :func:`lazybcast.broadcast`, :func:`lazybcast.broadcast_to` or
    :func:`lazybcast.broadcast_arrays`; nothing is copied until :meth:`materialize`,
    ``np.array(view)``, iteration, fancy indexing or batches ask for data.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> v = lazybcast.broadcast_to(np.arange(3), (2, 3))
    >>> v.shape, v.strides[0]
    ((2, 3), 0)
    >>> v.materialize()
    array([[0, 1, 2],
           [0, 1, 2]])
    """

    cdef readonly cnp.ndarray _source
    cdef readonly tuple shape
    cdef readonly tuple strides
    cdef readonly object base
    cdef readonly str mode
    cdef intp_t _size

    def __cinit__(self):
        # Every field valid from the start: an object made by __new__ alone is an empty view.
        self._source = _EMPTY
        self.shape = (0,)
        self.strides = (0,)
        self.base = _EMPTY
        self.mode = "numpy"

    def __init__(self, *args, **kwargs):
        raise TypeError(
            "BroadcastView cannot be created directly; use lazybcast.broadcast(), "
            "broadcast_to() or broadcast_arrays()"
        )

    # -- construction ---------------------------------------------------------------------

    @staticmethod
    cdef BroadcastView _wrap(cnp.ndarray source, tuple shape, object base, str mode):
        """Fast constructor for callers that already checked the arguments' values. The
        invariant every kernel relies on (``source`` has the view's rank; each of its axes is
        1 or the view's size) is still checked here, in O(ndim)."""
        cdef BroadcastView v = BroadcastView.__new__(BroadcastView)
        cdef int d, ndim = len(shape)
        if cnp.PyArray_HASFIELDS(source) and cnp.PyArray_ISWRITEABLE(source):
            # A structured element (np.void) refers to the source's memory: hold a read-only
            # view, so that writing through an element raises, as with np.broadcast_to.
            source = source.view()
            source.flags.writeable = False
        cdef intp_t size = 1, n, m
        cdef list strides = [0] * ndim
        if cnp.PyArray_NDIM(source) != ndim:
            raise ValueError(f"source has rank {cnp.PyArray_NDIM(source)}; the view's shape "
                             f"{shape} needs rank {ndim}")
        for d in range(ndim):
            n = shape[d]
            m = cnp.PyArray_DIMS(source)[d]
            if m != n and m != 1:
                raise ValueError(f"source axis {d} has size {m}; it must be 1 or {n}")
            size *= n
            if m == n and n != 1:
                strides[d] = cnp.PyArray_STRIDES(source)[d]
        v._source = source
        v.shape = shape
        v.strides = tuple(strides)
        v.base = base
        v.mode = mode
        v._size = size
        return v

    @staticmethod
    def _checked(source, shape, base=None, mode="numpy"):
        """Validating constructor (used by unpickling): rejects anything inconsistent."""
        if type(source) is not np.ndarray:
            raise TypeError(f"source must be a numpy.ndarray, got {type(source).__name__}")
        if type(shape) is not tuple or not all(type(n) is int for n in shape):
            raise TypeError(f"shape must be a tuple of ints, got {shape!r}")
        if not isinstance(mode, str) or mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if base is not None and type(base) is not np.ndarray:
            raise TypeError(f"base must be a numpy.ndarray or None, got {type(base).__name__}")
        for d, n in enumerate(shape):
            if n < 0:
                raise ValueError(f"shape[{d}] is {n}; sizes cannot be negative")
        check_size(shape, source.dtype.itemsize, "shape")
        # _wrap checks the rest of the invariant: the source's rank, each axis 1 or the size.
        return BroadcastView._wrap(source, shape, source if base is None else base, mode)

    # -- array attributes -----------------------------------------------------------------

    @property
    def dtype(self):
        """The element type (the source's)."""
        return self._source.dtype

    @property
    def ndim(self):
        """Number of axes."""
        return len(self.shape)

    @property
    def size(self):
        """Number of logical elements."""
        return self._size

    @property
    def itemsize(self):
        """Bytes per element."""
        return self._source.dtype.itemsize

    @property
    def nbytes(self):
        """Logical bytes: what :meth:`materialize` would allocate."""
        return self._size * self._source.dtype.itemsize

    @property
    def source(self):
        """The compact source as a NumPy view with the view's rank (size 1 on broadcast axes)."""
        return self._source

    @property
    def T(self):
        """Not supported: a view never reorders axes. Materialize first."""
        raise AttributeError("BroadcastView has no transpose; use view.materialize().T")

    def __repr__(self):
        held = self._source.size * self._source.dtype.itemsize
        return (
            f"BroadcastView(shape={self.shape}, dtype={self._source.dtype}, mode={self.mode!r}, "
            f"source_shape={tuple(self.base.shape)}, logical={_format_bytes(self.nbytes)}, "
            f"held={_format_bytes(held)})"
        )

    def __bool__(self):
        # NumPy's rule: the truth of a one-element array is its element's; otherwise an error.
        return bool(np.broadcast_to(self._source, self.shape))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d BroadcastView)")
        return self.shape[0]

    # -- materializing ----------------------------------------------------------------------

    def materialize(self, out=None, *, threads=None):
        """materialize(out=None, *, threads=None)

        Copy the view's values into a new C-contiguous array, or into ``out``.

        Parameters
        ----------
        out : ndarray, optional
            A writeable array of exactly the view's shape and dtype, in any layout. It may
            overlap the source.
        threads : int, optional
            Threads to split a large copy across (the GIL is released). ``None`` picks one
            thread for outputs under 32 MB and two above.

        Returns
        -------
        ndarray
            ``out`` if given, else a new C-contiguous, writeable array.

        Examples
        --------
        >>> import numpy as np, lazybcast
        >>> v = lazybcast.broadcast(np.array([1, 2], dtype=np.int8), [2, 1, 1],
        ...                         mode="bidirectional")
        >>> v.materialize()
        array([[[1, 2]],
        <BLANKLINE>
               [[1, 2]]], dtype=int8)
        """
        cdef cnp.ndarray source = self._source
        cdef cnp.ndarray result
        threads_for(0, threads)  # validated here too: some dtypes skip the kernel
        if out is None:
            result = self._empty()
        else:
            self._check_out(out)
            result = <cnp.ndarray>out
            if may_overlap(result, source):
                source = source.copy()
        if (lzb_has_refs(cnp.PyArray_DESCR(source))
                and cnp.PyArray_TYPE(source) != cnp.NPY_OBJECT):
            # Objects inside a structured dtype: NumPy knows which bytes are references.
            np.copyto(result, np.broadcast_to(source, self.shape))
        else:
            copy_into(source, result, threads)
        return result

    cdef cnp.ndarray _empty(self):
        cdef cnp.ndarray source = self._source
        cdef int d, ndim = cnp.PyArray_NDIM(source)
        cdef cnp.npy_intp dims[cnp.NPY_MAXDIMS]
        cdef cnp.PyArray_Descr* descr = cnp.PyArray_DESCR(source)
        for d in range(ndim):
            dims[d] = self.shape[d]
        Py_INCREF(<object>descr)  # PyArray_NewFromDescr steals a reference
        return <cnp.ndarray>lzb_new_from_descr(&lzb_ndarray_type, descr, ndim, dims, NULL, NULL,
                                               0, NULL)

    cdef int _check_out(self, out) except -1:
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
        if not lzb_equiv_types(cnp.PyArray_DESCR(o), cnp.PyArray_DESCR(self._source)):
            raise TypeError(
                f"out has dtype {out.dtype}; it must be the view's dtype {self._source.dtype}"
            )
        if not cnp.PyArray_ISWRITEABLE(o):
            raise ValueError("out is read-only; pass a writeable array")
        return 0

    def __array__(self, dtype=None, copy=None):
        if copy is True:
            if dtype is not None and np.dtype(dtype) != self._source.dtype:
                # Cast the compact source, then broadcast it: cheaper than casting the result.
                return self._with_source(self._source.astype(dtype)).materialize()
            return self.materialize()
        if dtype is not None and np.dtype(dtype) != self._source.dtype:
            if copy is False:
                raise ValueError(
                    f"a copy is needed to cast a {self._source.dtype} view to {np.dtype(dtype)}; "
                    f"copy=False forbids it"
                )
            return self._with_source(self._source.astype(dtype)).materialize()
        return np.broadcast_to(self._source, self.shape)

    cdef BroadcastView _with_source(self, cnp.ndarray source):
        return BroadcastView._wrap(source, self.shape, self.base, self.mode)

    # -- indexing and iteration ---------------------------------------------------------------

    def __getitem__(self, key):
        cdef object result
        if type(key) is tuple or type(key) is int or type(key) is slice:
            # The commonest keys (a data loader's view[i], slicing) without the general parser.
            result = self._basic_key(key)
            if result is not _GENERAL:
                return result
        result = _indexing.index(self._source, self.shape, key)
        if type(result) is _indexing.Lazy:
            source, shape = result
            return BroadcastView._wrap(source, shape, self.base, self.mode)
        return result

    cdef object _basic_key(self, object key):
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
        cdef cnp.npy_intp stride, size = 1
        cdef char* data = <char*>cnp.PyArray_DATA(src)
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
                    out_nd += 1
                    axis += 1
                fill = 0
                continue
            if out_nd == cnp.NPY_MAXDIMS:
                return _GENERAL
            scalar = False
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
                axis += 1
            out_nd += 1
        cdef cnp.PyArray_Descr* descr = cnp.PyArray_DESCR(src)
        if scalar and out_nd == 0:
            return _scalar(data, descr, src)  # every axis an int: NumPy's scalar
        Py_INCREF(<object>descr)
        cdef cnp.ndarray out = <cnp.ndarray>lzb_new_from_descr(
            &lzb_ndarray_type, descr, out_nd, dims, strides, data,
            cnp.PyArray_FLAGS(src) & cnp.NPY_ARRAY_WRITEABLE, NULL)
        cnp.set_array_base(out, src)
        # The view, built here: its invariant holds by construction (every source axis is 1
        # or the view's size), so _wrap's checks are skipped.
        cdef BroadcastView v = BroadcastView.__new__(BroadcastView)
        cdef tuple shape = PyTuple_New(out_nd)
        cdef tuple vstrides = PyTuple_New(out_nd)
        cdef object value
        for j in range(out_nd):
            value = vdims[j]
            Py_INCREF(value)
            PyTuple_SET_ITEM(shape, j, value)
            value = strides[j] if dims[j] == vdims[j] and vdims[j] != 1 else 0
            Py_INCREF(value)
            PyTuple_SET_ITEM(vstrides, j, value)
            size *= vdims[j]
        v._source = out
        v.shape = shape
        v.strides = vstrides
        v.base = self.base
        v.mode = self.mode
        v._size = size
        return v

    def __setitem__(self, key, value):
        raise TypeError(
            "BroadcastView is read-only: its elements share memory with the broadcast source; "
            "use view.materialize() to get a writeable copy"
        )

    def __delitem__(self, key):
        self.__setitem__(key, None)

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d BroadcastView")
        if len(self.shape) == 1:
            values = np.broadcast_to(self._source, self.shape)
            for i in range(self.shape[0]):
                yield values[i]
            return
        for i in range(self.shape[0]):
            yield self[i].materialize()

    def iter_batches(self, batch_size, *, out=None, drop_last=False, prefetch=0):
        """iter_batches(batch_size, *, out=None, drop_last=False, prefetch=0)

        Yield consecutive materialized batches along axis 0.

        Parameters
        ----------
        batch_size : int
            Rows per batch (>= 1). The last batch may be shorter.
        out : ndarray, optional
            A writeable buffer of shape ``(batch_size,) + view.shape[1:]`` and the view's dtype;
            every batch is written into it (the last, shorter one into a leading slice), so
            each yielded array is only valid until the next one is requested.
        drop_last : bool
            Skip a last batch shorter than ``batch_size``.
        prefetch : int
            Materialize up to this many batches ahead on a background thread (not with
            ``out=``, which has room for one batch only).

        Examples
        --------
        >>> import numpy as np, lazybcast
        >>> v = lazybcast.broadcast_to(np.arange(2), (5, 2))
        >>> [b.shape for b in v.iter_batches(2)]
        [(2, 2), (2, 2), (1, 2)]
        """
        from lazybcast._batches import iter_batches
        return iter_batches(self, batch_size, out=out, drop_last=drop_last, prefetch=prefetch)

    # -- pickling and dask --------------------------------------------------------------------

    def __reduce__(self):
        base = None if self.base is self._source else self.base
        if base is not None and base.size != self._source.size:
            base = None  # a sliced view: the compact source is all that travels
        base_shape = None if base is None else tuple(base.shape)
        source = self._source
        if source.ndim > 32 and source.dtype.hasobject:
            source = _Squeezed(source)  # NumPy cannot pickle such an array itself
        return (_rebuild, (source, self.shape, self.mode, base_shape))

    def __dask_tokenize__(self):
        from dask.base import tokenize
        return ("lazybcast.BroadcastView", self.shape, self.mode, tokenize(self._source))

    def to_dask(self, chunks="auto"):
        """to_dask(chunks="auto")

        A ``dask.array.Array`` over this view; each chunk is materialized by our kernel on the
        worker that computes it. Needs the ``lazybcast[dask]`` extra.
        """
        from lazybcast._dask import to_dask
        return to_dask(self, chunks)


class _Squeezed:
    """Pickles an array of more than 32 axes (which NumPy refuses for object dtypes) as its
    squeezed form and ``numpy.reshape``."""

    def __init__(self, array):
        self.array = array

    def __reduce__(self):
        shape = self.array.shape
        return (np.reshape, (self.array.reshape([n for n in shape if n != 1]), shape))


def _rebuild(source, shape, mode, base_shape=None):
    """Unpickle: every field goes through the validating constructor."""
    view = BroadcastView._checked(source, shape, None, mode)
    if base_shape is not None:
        if type(base_shape) is not tuple or not all(type(n) is int for n in base_shape):
            raise TypeError(f"base_shape must be a tuple of ints, got {base_shape!r}")
        if any(n < 0 for n in base_shape):  # reshape would read -1 (or -7) as "infer"
            raise ValueError(f"base_shape sizes cannot be negative, got {base_shape!r}")
        base = source.reshape(base_shape)  # raises ValueError if the sizes disagree
        return BroadcastView._wrap(source, shape, base, mode)
    return view


def make_view(data, tuple aligned, tuple shape, str mode):
    """A view of ``data`` reshaped to ``aligned`` (same size, ones inserted) broadcast to
    ``shape``. Stride-0 axes of ``data`` itself are collapsed, so a view of
    ``np.broadcast_to(...)`` stays compact.

    ``data`` is an ndarray. Of its subclasses, a masked array is refused (``TypeError``: the
    view would drop its mask); any other (``np.memmap``, ``np.matrix``, user subclasses) is read
    through ``np.asarray`` (a plain ndarray over the same memory, no copy) and stays the view's
    ``base``, so that a memmap-backed view is still recognisable as one.
    """
    cdef object arr = data
    if type(data) is not np.ndarray:
        if not isinstance(data, np.ndarray):
            raise TypeError(f"data must be a numpy.ndarray, got {type(data).__name__}")
        if isinstance(data, np.ma.MaskedArray):
            raise TypeError(
                "data is a masked array, whose mask a BroadcastView would lose; pass "
                "data.filled(fill_value) or np.ma.getdata(data)"
            )
        arr = np.asarray(data)
    source = arr if arr.shape == aligned else arr.reshape(aligned)
    if 0 in source.strides:
        key = []
        for n, stride in zip(source.shape, source.strides):
            key.append(slice(0, 1) if stride == 0 and n > 1 else slice(None))
        source = source[tuple(key)]
    return BroadcastView._wrap(source, shape, data, mode)
