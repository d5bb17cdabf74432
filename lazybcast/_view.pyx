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
    # An element as NumPy returns it (basic indexing's fast path, _view_basic_key.pxi).
    object _scalar "PyArray_Scalar"(void*, cnp.PyArray_Descr*, object)

import numpy as np

from lazybcast import _indexing
from lazybcast._kernels import flat_intp as _flat_intp, gather as _kernel_gather
from lazybcast._rules import MODES, check_size

cnp.import_array()

#: "Not a key for the fast path": _basic_key (_view_basic_key.pxi) hands the key to _indexing.
cdef object _GENERAL = object()
cdef object _FULL_SLICE = slice(None)

#: What a bare ``BroadcastView.__new__`` (for example from a crafted pickle) holds: nothing.
cdef cnp.ndarray _EMPTY = np.empty(0, dtype=np.uint8)  # (a C global: no lookup per view)
_EMPTY.flags.writeable = False
cdef tuple _SHAPE_EMPTY = (0,)


#: NumPy's "argument not given" marker (the reductions' ``initial=``, ``mean=``, ...).
_NoValue = np._NoValue

#: The duck-array modules, imported on first use (they import this module).
cdef list _duck_modules = [None, None, None, None, None]


cdef object _mod(int i):
    """1: lazybcast._ufuncs, 2: lazybcast._reductions, 3: lazybcast._functions,
    4: lazybcast._moments."""
    m = _duck_modules[i]
    if m is None:
        import importlib
        m = _duck_modules[i] = importlib.import_module(
            ("", "lazybcast._ufuncs", "lazybcast._reductions", "lazybcast._functions",
             "lazybcast._moments")[i])
    return m


def _format_bytes(n):
    for unit in ("B", "kB", "MB", "GB", "TB", "PB", "EB"):
        if n < 1000 or unit == "EB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0


def _missing(name):
    """A property for an ndarray attribute that a view does not have: reading it raises an
    AttributeError naming the cheap ways (see lazybcast._protocols.missing_attribute)."""

    def get(self):
        from lazybcast import _protocols
        raise _protocols.missing_attribute(name)

    return property(get, doc=f"Not available on a view: np.asarray(view).{name} (zero-copy) "
                             f"or view.materialize().{name}.")


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
    cdef tuple _strides  # the stride map, built on first use (None until then)
    cdef readonly object base
    cdef readonly str mode
    cdef intp_t _size

    def __cinit__(self):
        # Every field valid from the start: an object made by __new__ alone is an empty view.
        self._source = _EMPTY
        self.shape = _SHAPE_EMPTY
        self._strides = _SHAPE_EMPTY
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
        if cnp.PyArray_NDIM(source) != ndim:
            raise ValueError(f"source has rank {cnp.PyArray_NDIM(source)}; the view's shape "
                             f"{shape} needs rank {ndim}")
        for d in range(ndim):
            n = shape[d]
            m = cnp.PyArray_DIMS(source)[d]
            if m != n and m != 1:
                raise ValueError(f"source axis {d} has size {m}; it must be 1 or {n}")
            size *= n
        v._source = source
        v.shape = shape
        v._strides = None
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
    def strides(self):
        """Bytes between neighbours along each axis: the source's stride, 0 on a broadcast
        axis (and on an axis of size 1). Built on first use, so indexing does not pay for it."""
        cdef int d
        cdef list strides
        if self._strides is None:
            strides = [0] * len(self.shape)
            for d in range(len(self.shape)):
                if (cnp.PyArray_DIMS(self._source)[d] == <cnp.npy_intp>self.shape[d]
                        and <cnp.npy_intp>self.shape[d] != 1):
                    strides[d] = cnp.PyArray_STRIDES(self._source)[d]
            self._strides = tuple(strides)
        return self._strides

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

    # -- as an ndarray: layout (lazybcast._layout), conversions and protocols (_protocols) -------

    def _as_ndarray(self):
        """_as_ndarray()

        The view as a read-only ndarray over the source's memory, stride 0 on broadcast axes
        (what ``np.broadcast_to(view.source, view.shape)`` returns), built in C: the zero-copy
        form that ``__array__``, DLPack and the layout functions start from."""
        cdef cnp.ndarray source = self._source
        cdef int d, ndim = len(self.shape)
        cdef cnp.npy_intp dims[cnp.NPY_MAXDIMS]
        cdef cnp.npy_intp strides[cnp.NPY_MAXDIMS]
        cdef cnp.PyArray_Descr* descr = cnp.PyArray_DESCR(source)
        for d in range(ndim):
            dims[d] = self.shape[d]
            # the source's stride on an axis of size 1 (np.broadcast_to reports 0 there; a size-1
            # axis's stride is never used, and NumPy ignores it for contiguity)
            strides[d] = cnp.PyArray_STRIDES(source)[d] if cnp.PyArray_DIMS(source)[d] == dims[d] else 0
        Py_INCREF(<object>descr)  # PyArray_NewFromDescr steals a reference
        cdef cnp.ndarray result = <cnp.ndarray>lzb_new_from_descr(
            &lzb_ndarray_type, descr, ndim, dims, strides, cnp.PyArray_DATA(source), 0, NULL)
        cnp.set_array_base(result, source)  # read-only (flags 0), keeps the source alive
        return result

    @staticmethod
    def _from_ndarray(cnp.ndarray result, base, str mode):
        """_from_ndarray(result, base, mode)

        The view that ``result`` (an ndarray over a view's memory, for example a transposed
        :meth:`_as_ndarray`) shows: an axis of stride 0 and size > 1 is broadcast, so the new
        source keeps one element of it. No copy; O(ndim)."""
        cdef int d, ndim = cnp.PyArray_NDIM(result)
        cdef bint broadcast = False
        cdef cnp.npy_intp dims[cnp.NPY_MAXDIMS]
        cdef cnp.PyArray_Descr* descr
        cdef cnp.ndarray source = result
        for d in range(ndim):
            dims[d] = cnp.PyArray_DIMS(result)[d]
            if cnp.PyArray_STRIDES(result)[d] == 0 and dims[d] > 1:
                dims[d] = 1
                broadcast = True
        if broadcast:
            descr = cnp.PyArray_DESCR(result)
            Py_INCREF(<object>descr)  # PyArray_NewFromDescr steals a reference
            source = <cnp.ndarray>lzb_new_from_descr(
                &lzb_ndarray_type, descr, ndim, dims, cnp.PyArray_STRIDES(result),
                cnp.PyArray_DATA(result), 0, NULL)
            cnp.set_array_base(source, result)
        return BroadcastView._wrap(source, (<object>result).shape, base, mode)

    @property
    def T(self):
        """The view with its axes reversed (lazy, as ``ndarray.T``)."""
        from lazybcast import _layout
        return _layout.transpose(self)

    @property
    def mT(self):
        """The view with its last two axes swapped (lazy, as ``ndarray.mT``)."""
        from lazybcast import _layout
        return _layout.matrix_transpose(self)

    def transpose(self, *axes):
        """transpose(*axes)

        The view with its axes permuted (lazy): ``transpose()``, ``transpose((1, 0))`` or
        ``transpose(1, 0)``, as ``ndarray.transpose``.

        Examples
        --------
        >>> import numpy as np, lazybcast
        >>> v = lazybcast.broadcast_to(np.arange(3), (1000, 2, 3))
        >>> t = v.transpose(2, 0, 1)
        >>> t.shape, t.source.shape
        ((3, 1000, 2), (3, 1, 1))
        """
        from lazybcast import _layout
        return _layout.transpose(self, _method_axes(axes))

    def swapaxes(self, axis1, axis2):
        """swapaxes(axis1, axis2)

        The view with two axes interchanged (lazy), as ``ndarray.swapaxes``."""
        from lazybcast import _layout
        return _layout.swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None):
        """squeeze(axis=None)

        The view without axes of size 1 (lazy), as ``ndarray.squeeze``."""
        from lazybcast import _layout
        return _layout.squeeze(self, axis)

    def reshape(self, *shape, order="C", copy=None):
        """reshape(*shape, order="C", copy=None)

        The view with a new shape: lazy when NumPy could reshape the ``np.broadcast_to``
        equivalent without a copy; otherwise (``copy=None``) only the groups of axes that cannot
        be re-strided are materialized into a new compact source, and the result is still a
        view. ``copy=False`` raises ``ValueError`` instead; ``copy=True`` copies the compact
        source first. See :func:`lazybcast._reshape.reshape`.

        Examples
        --------
        >>> import numpy as np, lazybcast
        >>> v = lazybcast.broadcast_to(np.arange(3.0), (1000, 4, 3))
        >>> r = v.reshape(-1, 3)                  # two broadcast axes merge: no copy
        >>> r.shape, r.source.shape
        ((4000, 3), (1, 3))
        >>> v.reshape(1000, 12, copy=False)
        Traceback (most recent call last):
        ...
        ValueError: Unable to avoid creating a copy while reshaping.
        """
        from lazybcast import _reshape
        if not shape:
            raise TypeError("reshape() takes exactly 1 argument (0 given)")
        return _reshape.reshape(self, shape[0] if len(shape) == 1 else shape, order, copy)

    def ravel(self, order="C"):
        """ravel(order="C")

        The view as one axis, as ``ndarray.ravel`` (which copies only when it must): lazy when
        the axes merge (see :meth:`reshape`)."""
        from lazybcast import _reshape
        return _reshape.ravel(self, order)

    def flatten(self, order="C"):
        """flatten(order="C")

        A new writeable one-axis ndarray of the values (always a copy, as ``ndarray.flatten``).
        """
        if order == "C":
            return self.materialize().reshape(-1)  # the kernel's C-ordered copy, no second one
        return self._as_ndarray().flatten(order)  # NumPy's reading of "F", "A" and "K"

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """astype(dtype, order="K", casting="unsafe", subok=True, copy=True)

        A view of the compact source cast to ``dtype``: O(source), NumPy's casting rules and
        errors. ``copy=False`` returns the view itself when the dtype is already right.

        Examples
        --------
        >>> import numpy as np, lazybcast
        >>> v = lazybcast.broadcast_to(np.arange(3), (10**9, 3)).astype(np.float32)
        >>> v.dtype, v.source.nbytes
        (dtype('float32'), 12)
        """
        from lazybcast import _protocols
        return _protocols.astype(self, dtype, order, casting, subok, copy)

    def copy(self, order="C"):
        """copy(order="C")

        A view over a copy of the compact source: O(source), and independent of later writes
        to the array the view was made from. ``order`` is accepted for compatibility (the
        view's logical layout does not change); ``materialize()`` makes the full array.

        Examples
        --------
        >>> import numpy as np, lazybcast
        >>> x = np.arange(3)
        >>> c = lazybcast.broadcast_to(x, (1000, 3)).copy()
        >>> x[0] = 7
        >>> int(c[999, 0]), c.source.nbytes
        (0, 24)
        """
        from lazybcast import _protocols
        return _protocols.copy(self, order)

    @property
    def real(self):
        """The real part (lazy: a view of the source's real part)."""
        return self._with_source(self._source.real)

    @property
    def imag(self):
        """The imaginary part (lazy: a view of the source's imaginary part)."""
        return self._with_source(self._source.imag)

    def view(self, dtype):
        """view(dtype)

        The same bytes read as ``dtype`` (lazy), as ``ndarray.view``: a dtype of another size
        needs a contiguous (so not broadcast) last axis."""
        from lazybcast import _layout
        return _layout.view_as(self, dtype)

    @property
    def flags(self):
        """The flags NumPy reports for the equivalent ``np.broadcast_to`` array: never
        writeable, never owning its data; contiguity as NumPy computes it."""
        from lazybcast import _protocols
        return _protocols.flags(self)

    def item(self, *args):
        """item(*args)

        One element as a Python scalar, as ``ndarray.item`` (no copy)."""
        return self._as_ndarray().item(*args)

    def tolist(self):
        """tolist()

        The values as nested Python lists, as ``ndarray.tolist`` (one Python object per
        logical element)."""
        return self._as_ndarray().tolist()

    def __contains__(self, value):
        from lazybcast import _protocols
        return _protocols.contains(self, value)

    def __int__(self):
        return int(self._as_ndarray())

    def __float__(self):
        return float(self._as_ndarray())

    def __complex__(self):
        return complex(self._as_ndarray())

    def __index__(self):
        return self._as_ndarray().__index__()

    def __format__(self, spec):
        if not spec:
            return str(self)
        return format(self._as_ndarray(), spec)

    def fill(self, value):
        """Not supported: a view is read-only."""
        _protocols_read_only("fill")

    def sort(self, *args, **kwargs):
        """Not supported: a view is read-only."""
        _protocols_read_only("sort")

    def partition(self, *args, **kwargs):
        """Not supported: a view is read-only."""
        _protocols_read_only("partition")

    def put(self, *args, **kwargs):
        """Not supported: a view is read-only."""
        _protocols_read_only("put")

    def resize(self, *args, **kwargs):
        """Not supported: a view is read-only."""
        _protocols_read_only("resize")

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)

        Export the view by DLPack without a copy: the source's memory with the view's strides
        (0 on broadcast axes), flagged read-only (DLPack >= 1.0). ``copy=True`` exports a new
        C-contiguous array made by :meth:`materialize`. See :mod:`lazybcast._protocols`."""
        from lazybcast import _protocols
        return _protocols.dlpack(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """``(kDLCPU, 0)``: a view lives in host memory."""
        return self._as_ndarray().__dlpack_device__()

    # ndarray attributes a view does not have: each raises an AttributeError that names the
    # cheap way (hasattr() stays False). Properties, not __getattr__: a __getattr__ would slow
    # down every failed lookup, and NumPy probes several on each np.asarray(view).
    flat = property(lambda self: self._as_ndarray().flat,
                    doc="``np.asarray(view).flat``: a flat iterator over the zero-copy ndarray.")

    def round(self, decimals=0, out=None):
        """``ndarray.round``: elementwise, so lazy (rounds the source) unless ``out`` is given."""
        return np.round(self, decimals, out)

    def clip(self, min=None, max=None, out=None, **kwargs):
        """``ndarray.clip``: the ``np.clip`` ufunc, lazy (on the source) unless ``out`` is given."""
        return np.clip(self, min, max, out=out, **kwargs)

    def conj(self):
        """``ndarray.conj``: ``np.conjugate``, lazy (on the source)."""
        return np.conjugate(self)

    def conjugate(self):
        """``ndarray.conjugate``: ``np.conjugate``, lazy (on the source)."""
        return np.conjugate(self)

    def cumsum(self, axis=None, dtype=None, out=None):
        """``np.cumsum(view, ...)``: lazy along an axis the view does not repeat
        (lazybcast._along_axis), NumPy's full-size result otherwise."""
        return np.cumsum(self, axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None):
        """``np.cumprod(view, ...)``: lazy along an axis the view does not repeat
        (lazybcast._along_axis), NumPy's full-size result otherwise."""
        return np.cumprod(self, axis, dtype, out)

    def dot(self, b, out=None):
        """``np.dot(view, b, out)``: lazy for operands of one or two axes without ``out``
        (lazybcast._gufuncs), NumPy's on ``np.asarray(view)`` otherwise."""
        return np.dot(self, b, out)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        """``np.diagonal(view, ...)``: a view (lazybcast._layout), no copy."""
        return np.diagonal(self, offset, axis1, axis2)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        """``np.trace(view, ...)``: the sum of the lazy diagonal, at source cost."""
        return np.trace(self, offset, axis1, axis2, dtype, out)

    def repeat(self, repeats, axis=None):
        """``np.repeat(view, repeats, axis)``: lazy along an axis (lazybcast._joining),
        NumPy's flat copy for ``axis=None``."""
        return np.repeat(self, repeats, axis)

    tobytes = _missing("tobytes")
    tofile = _missing("tofile")
    dump = _missing("dump")
    dumps = _missing("dumps")
    data = _missing("data")
    ctypes = _missing("ctypes")
    byteswap = _missing("byteswap")
    setflags = _missing("setflags")
    getfield = _missing("getfield")
    setfield = _missing("setfield")
    take = _missing("take")
    argsort = _missing("argsort")
    argpartition = _missing("argpartition")
    searchsorted = _missing("searchsorted")
    nonzero = _missing("nonzero")
    compress = _missing("compress")
    choose = _missing("choose")

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

    def materialize(self, out=None, *, dtype=None, threads=None):
        """materialize(out=None, *, dtype=None, threads=None)

        Copy the view's values into a new C-contiguous array, or into ``out``.

        Parameters
        ----------
        out : array, optional
            A writeable array of exactly the view's shape and dtype (``dtype`` if given), in
            any layout: an ndarray, or any object exposing DLPack or the buffer protocol (a
            pinned ``torch`` tensor, a ``memoryview``...). It may overlap the source.
        dtype : dtype, optional
            Cast to this dtype in the copy pass (as ``astype``, ``unsafe`` casting), block by
            block in cache: no full-size intermediate.
        threads : int, optional
            Threads to split a large copy across (the GIL is released). ``None`` picks two
            threads for outputs of 4 MiB or more on a machine with two usable CPUs or more
            (``lazybcast._kernels.AUTO_THREADS_BYTES``), and from the size of one core's L2
            cache (``LOOP_THREADS_BYTES``) for copies in a loop (a helper is still spinning
            from a previous copy, or this is the third of a tight run), else one. Helper
            threads spin for the next copy for up to 1 ms after their share
            (``LAZYBCAST_HELPER_SPIN_US``), then exit.

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
        cdef cnp.ndarray source = self._source
        cdef cnp.ndarray result
        caller = out
        threads_for(0, threads)  # validated here too: some dtypes skip the kernel
        if out is not None and not cnp.PyArray_Check(out):
            from lazybcast._buffers import as_writeable_array
            out = as_writeable_array(out)
        if dtype is not None:
            dtype = np.dtype(dtype)
            if dtype != source.dtype:
                from lazybcast._cast import materialize_cast
                if out is None:
                    result = np.empty(self.shape, dtype=dtype)
                else:
                    self._check_out(out, dtype)
                    result = <cnp.ndarray>out
                materialize_cast(source, self.shape, result, threads)
                return result if caller is None else caller
        if out is None:
            result = self._empty()
        else:
            self._check_out(out, source.dtype)
            result = <cnp.ndarray>out
            if may_overlap(result, source):
                source = source.copy()
        if (lzb_has_refs(cnp.PyArray_DESCR(source))
                and cnp.PyArray_TYPE(source) != cnp.NPY_OBJECT):
            # Objects inside a structured dtype: NumPy knows which bytes are references.
            np.copyto(result, np.broadcast_to(source, self.shape))
        else:
            copy_into(source, result, threads)
        return result if caller is None else caller

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
            what = "the view's dtype" if dtype is self._source.dtype else "dtype="
            raise TypeError(f"out has dtype {out.dtype}; it must be {what} {dtype}")
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
        return self._as_ndarray()

    cdef BroadcastView _with_source(self, cnp.ndarray source):
        return BroadcastView._wrap(source, self.shape, self.base, self.mode)

    # -- as a NumPy duck array: thin delegations (the logic is in _ufuncs, _reductions and
    # _functions; a cdef class cannot inherit NDArrayOperatorsMixin, so the operators are here)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _mod(1).array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _mod(3).array_function(func, types, args, kwargs)

    def __add__(self, other): return _mod(1).binary(np.add, self, other)
    def __radd__(self, other): return _mod(1).binary(np.add, other, self)
    def __sub__(self, other): return _mod(1).binary(np.subtract, self, other)
    def __rsub__(self, other): return _mod(1).binary(np.subtract, other, self)
    def __mul__(self, other): return _mod(1).binary(np.multiply, self, other)
    def __rmul__(self, other): return _mod(1).binary(np.multiply, other, self)
    def __truediv__(self, other): return _mod(1).binary(np.true_divide, self, other)
    def __rtruediv__(self, other): return _mod(1).binary(np.true_divide, other, self)
    def __floordiv__(self, other): return _mod(1).binary(np.floor_divide, self, other)
    def __rfloordiv__(self, other): return _mod(1).binary(np.floor_divide, other, self)
    def __mod__(self, other): return _mod(1).binary(np.remainder, self, other)
    def __rmod__(self, other): return _mod(1).binary(np.remainder, other, self)
    def __divmod__(self, other): return _mod(1).binary(np.divmod, self, other)
    def __rdivmod__(self, other): return _mod(1).binary(np.divmod, other, self)
    def __pow__(self, other, mod=None):
        return NotImplemented if mod is not None else _mod(1).binary(np.power, self, other)
    def __rpow__(self, other, mod=None):
        return NotImplemented if mod is not None else _mod(1).binary(np.power, other, self)
    def __matmul__(self, other): return _mod(1).binary(np.matmul, self, other)
    def __rmatmul__(self, other): return _mod(1).binary(np.matmul, other, self)
    def __lshift__(self, other): return _mod(1).binary(np.left_shift, self, other)
    def __rlshift__(self, other): return _mod(1).binary(np.left_shift, other, self)
    def __rshift__(self, other): return _mod(1).binary(np.right_shift, self, other)
    def __rrshift__(self, other): return _mod(1).binary(np.right_shift, other, self)
    def __and__(self, other): return _mod(1).binary(np.bitwise_and, self, other)
    def __rand__(self, other): return _mod(1).binary(np.bitwise_and, other, self)
    def __or__(self, other): return _mod(1).binary(np.bitwise_or, self, other)
    def __ror__(self, other): return _mod(1).binary(np.bitwise_or, other, self)
    def __xor__(self, other): return _mod(1).binary(np.bitwise_xor, self, other)
    def __rxor__(self, other): return _mod(1).binary(np.bitwise_xor, other, self)
    def __lt__(self, other): return _mod(1).binary(np.less, self, other)
    def __le__(self, other): return _mod(1).binary(np.less_equal, self, other)
    def __gt__(self, other): return _mod(1).binary(np.greater, self, other)
    def __ge__(self, other): return _mod(1).binary(np.greater_equal, self, other)
    def __eq__(self, other): return _mod(1).equality(np.equal, self, other)
    def __ne__(self, other): return _mod(1).equality(np.not_equal, self, other)
    # In place: NumPy's ufunc with out=self, which raises NumPy's read-only ValueError.
    def __iadd__(self, other): return _in_place(np.add, self, other)
    def __isub__(self, other): return _in_place(np.subtract, self, other)
    def __imul__(self, other): return _in_place(np.multiply, self, other)
    def __itruediv__(self, other): return _in_place(np.true_divide, self, other)
    def __ifloordiv__(self, other): return _in_place(np.floor_divide, self, other)
    def __imod__(self, other): return _in_place(np.remainder, self, other)
    def __ipow__(self, other, mod=None): return _in_place(np.power, self, other)
    def __imatmul__(self, other): return _in_place(np.matmul, self, other)
    def __ilshift__(self, other): return _in_place(np.left_shift, self, other)
    def __irshift__(self, other): return _in_place(np.right_shift, self, other)
    def __iand__(self, other): return _in_place(np.bitwise_and, self, other)
    def __ior__(self, other): return _in_place(np.bitwise_or, self, other)
    def __ixor__(self, other): return _in_place(np.bitwise_xor, self, other)
    def __neg__(self): return np.negative(self)
    def __pos__(self): return np.positive(self)
    def __abs__(self): return np.absolute(self)
    def __invert__(self): return np.invert(self)

    __hash__ = None  # elementwise ==, as ndarray

    # Reductions at source cost (lazybcast._reductions, means and variances in
    # lazybcast._moments); NumPy's signatures.
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
            where=True):
        return _mod(2).sum(self, axis, dtype, out, keepdims, initial, where)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
             where=True):
        return _mod(2).prod(self, axis, dtype, out, keepdims, initial, where)

    def min(self, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
        return _mod(2).min(self, axis, out, keepdims, initial, where)

    def max(self, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
        return _mod(2).max(self, axis, out, keepdims, initial, where)

    def any(self, axis=None, out=None, keepdims=False, *, where=True):
        return _mod(2).any(self, axis, out, keepdims, where=where)

    def all(self, axis=None, out=None, keepdims=False, *, where=True):
        return _mod(2).all(self, axis, out, keepdims, where=where)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
        return _mod(4).mean(self, axis, dtype, out, keepdims, where=where)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
            mean=_NoValue, correction=_NoValue):
        return _mod(4).var(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                           correction=correction)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
            mean=_NoValue, correction=_NoValue):
        return _mod(4).std(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                           correction=correction)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        return _mod(2).argmin(self, axis, out, keepdims=keepdims)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return _mod(2).argmax(self, axis, out, keepdims=keepdims)

    # -- indexing and iteration ---------------------------------------------------------------

    def __getitem__(self, key):
        cdef object result
        if type(key) is str or (type(key) is list and key and type(key[0]) is str):
            return self._field(key)
        if type(key) is int or type(key) is slice:
            # The commonest keys (a data loader's view[i], a batch's view[a:b]).
            result = _first_axis_key(self, key)
            if result is not _GENERAL:
                return result
        elif type(key) is tuple or key is None or key is Ellipsis:
            # Other basic keys, without the general parser.
            result = _basic_key(self, key)
            if result is not _GENERAL:
                return result
            if type(key) is tuple:
                result = _one_array_key(self, key)
                if result is not _GENERAL:
                    return result
        elif type(key) is np.ndarray:
            # A gather by one index array (a data loader's batch of rows).
            result = _one_array_key(self, key)
            if result is not _GENERAL:
                return result
        result = _indexing.index(self._source, self.shape, key)
        if type(result) is _indexing.Lazy:
            source, shape = result
            return BroadcastView._wrap(source, shape, self.base, self.mode)
        return result

    cdef BroadcastView _field(self, key):
        # A field (or list of fields) of a structured source: NumPy selects it (and raises);
        # a subarray field adds its own axes after the view's.
        source = self._source[key]
        shape = self.shape + tuple(source.shape)[len(self.shape):]
        return BroadcastView._wrap(source, shape, self.base, self.mode)

    def __setitem__(self, key, value):
        raise ValueError(
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
        out : array or list of arrays, optional
            A writeable buffer of shape ``(batch_size,) + view.shape[1:]`` and the view's dtype
            (an ndarray, or any object exposing DLPack or the buffer protocol), or a ring of
            several: batch ``i`` is written into ``out[i % len(out)]`` (the last, shorter one
            into a leading slice), and ``out[k][:n]`` is yielded (the caller's type: a
            tensor for a tensor). Nothing is allocated per batch; batch ``i`` stays valid
            until batch ``i + len(out) - prefetch`` is requested (with one buffer: until the
            next one).
        drop_last : bool
            Skip a last batch shorter than ``batch_size``.
        prefetch : int
            Materialize up to this many batches ahead on a background thread, from 0 to
            ``MAX_PREFETCH`` (32), and below ``len(out)`` with a ring. Ctrl-C or closing the
            generator stops the background copy at its next kernel block (4 MiB).

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
        # A source in a memory-mapped file travels as its path and region (lazybcast._memmap).
        from lazybcast._memmap import reduce_by_reference
        by_reference = reduce_by_reference(self)
        if by_reference is not None:
            return by_reference
        base = None if self.base is self._source else self.base
        if base is not None and not _same_elements(base, self._source):
            # A sliced, transposed or reversed view: the compact source is all that travels
            # (unpickling rebuilds base as source.reshape(base_shape), in C order).
            base = None
        base_shape = None if base is None else tuple(base.shape)
        source = self._source
        if source.ndim > 32 and source.dtype.hasobject:
            source = _Squeezed(source)  # NumPy cannot pickle such an array itself
        return (_rebuild, (source, self.shape, self.mode, base_shape))

    def __dask_tokenize__(self):
        from dask.base import tokenize

        from lazybcast._memmap import file_token
        source = file_token(self._source)  # a memory-mapped source: its file, not its bytes
        if source is None:
            source = tokenize(self._source)
        return ("lazybcast.BroadcastView", self.shape, self.mode, source)

    def to_dask(self, chunks="auto"):
        """to_dask(chunks="auto")

        A ``dask.array.Array`` over this view; each chunk is materialized by our kernel on the
        worker that computes it. Needs the ``lazybcast[dask]`` extra.
        """
        from lazybcast._dask import to_dask
        return to_dask(self, chunks)


include "_view_basic_key.pxi"
include "_view_gather_key.pxi"


def _method_axes(tuple axes):
    """``ndarray.transpose``'s arguments: none, one (None, an int or a sequence), or ints."""
    if not axes:
        return None
    return axes[0] if len(axes) == 1 else axes


def _in_place(ufunc, view, other):
    """``view <op>= other``: a view is read-only, so this raises NumPy's error for a read-only
    array (rather than Python's fallback ``view = view <op> other``, a silent rebinding)."""
    raise ValueError(
        f"output array is read-only: a BroadcastView cannot be updated in place "
        f"(np.{ufunc.__name__} with out=view); use view.materialize() for a writeable copy, "
        f"or write view = view <op> other for a new lazy view"
    )


def _protocols_read_only(name):
    from lazybcast import _protocols
    raise _protocols.read_only(name)


class _Squeezed:
    """Pickles an array of more than 32 axes (which NumPy refuses for object dtypes) as its
    squeezed form and ``numpy.reshape``."""

    def __init__(self, array):
        self.array = array

    def __reduce__(self):
        shape = self.array.shape
        return (np.reshape, (self.array.reshape([n for n in shape if n != 1]), shape))


def _same_elements(base, source):
    """Whether ``source.reshape(base.shape)`` reads ``base``'s elements in C order (same size,
    same memory, same order), so that ``base`` can be rebuilt from the source alone."""
    if base.size != source.size:
        return False
    flat = np.asarray(base).reshape(source.shape)  # a copy (O(source)) when not a plain view
    return (flat.__array_interface__["data"][0] == source.__array_interface__["data"][0]
            and all(s == t for n, s, t in zip(source.shape, flat.strides, source.strides)
                    if n > 1))


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
