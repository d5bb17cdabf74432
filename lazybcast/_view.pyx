"""BroadcastView: a lazy broadcast of a source array, materialized by our own kernels.

A view is a pair (``source``, ``shape``): ``source`` is a NumPy view of the user's array with the
view's rank, each axis either the view's size or 1. The stride map follows from that pair: the
source's stride where the sizes agree, 0 where the source has 1. Because the source is a real
NumPy array, every address the stride map can reach lies inside a buffer NumPy vouches for and
that the view keeps alive.

A view keeps its own copy of the source's geometry (data pointer, sizes, strides: in the
object up to ``_INLINE_NDIM`` axes, else in a bytes object it holds), which the kernels, keys
and ``np.asarray`` read: no one can change it (NumPy frees an array's sizes when its
``shape`` is set). A view made by a basic key (``view[::2]``, ``view[i]``, ``view[None]``)
holds the parent's ``_root`` ndarray for the memory and makes its source ndarray on first
use (``_source_of``): indexing costs one object, not two. The source ndarray is the view's
own: ``_wrap`` never keeps the array object it is given, and ``view.source`` hands out a
new NumPy view of it.
"""

cimport cython
cimport numpy as cnp

from cpython.ref cimport Py_INCREF
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.slice cimport PySlice_GetIndicesEx
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM

from lazybcast._kernels cimport (
    copy_geometry_into,
    copy_into,
    intp_t,
    lzb_equiv_types,
    lzb_has_refs,
    lzb_ndarray_type,
    lzb_new_from_descr,
    may_overlap,
    may_overlap_itself,
    threads_for,
)

cdef extern from "numpy/arrayobject.h":
    # An element as NumPy returns it (basic indexing's fast path, _view_basic_key.pxi).
    object _scalar "PyArray_Scalar"(void*, cnp.PyArray_Descr*, object)

import numpy as np

from lazybcast import _indexing
from lazybcast._gather import ALLOCATION_ERRORS as _ALLOCATION_ERRORS, check_bounds as _check_bounds
from lazybcast._kernels import flat_intp as _flat_intp, gather as _kernel_gather
from lazybcast._rules import MODES, check_size

cnp.import_array()

include "_view_fields.pxi"  # _ViewFields: the fields, the source made on first use

# NumPy's surface as thin delegations, one mixin per concern (a cdef class body cannot include
# a file, and cannot inherit numpy.lib.mixins.NDArrayOperatorsMixin, a Python class):
include "_view_materialize.pxi"  # _Materializing: materialize(), __array__
include "_view_operators.pxi"  # _ArrayOperators: __array_ufunc__, __array_function__, operators
include "_view_methods.pxi"    # _ArrayMethods: ndarray's methods, reductions
include "_view_pickling.pxi"   # _Pickling: pickling, dask
include "_view_iteration.pxi"  # _Iteration: iteration and batches

#: The most elements str(view) prints (see __str__): about a megabyte of text.
_STR_LIMIT = 100_000


@cython.final  # not subclassable: every protocol dispatches on `type(x) is BroadcastView`,
               # and a subclass would reach itself again (x == x recursed)
cdef class BroadcastView(_Iteration):
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

    # -- construction ---------------------------------------------------------------------

    @staticmethod
    cdef BroadcastView _wrap(cnp.ndarray source, tuple shape, object base, str mode):
        """Fast constructor for callers that already checked the arguments' values. The
        invariant every kernel relies on (``source`` has the view's rank; each of its axes is
        1 or the view's size) is still checked here, in O(ndim)."""
        cdef BroadcastView v = BroadcastView.__new__(BroadcastView)
        cdef int d, ndim = len(shape)
        # The view's own array object over the source's memory: NumPy frees an array's sizes
        # when its shape is set, and the caller (or the view's base) may hold the array given.
        # Read-only for a structured source: an element (np.void) refers to the source's
        # memory, so writing through an element raises, as with np.broadcast_to.
        source = _same_array(source, cnp.PyArray_ISWRITEABLE(source)
                             and not cnp.PyArray_HASFIELDS(source))
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
        _set_source(v, source)
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
        return self._root.dtype

    @property
    def strides(self):
        """Bytes between neighbours along each axis: the source's stride, 0 on a broadcast
        axis (and on an axis of size 1). Built on first use, so indexing does not pay for it."""
        cdef int d
        cdef list strides
        if self._strides is None:
            strides = [0] * len(self.shape)
            for d in range(len(self.shape)):
                if (self._sdims[d] == <cnp.npy_intp>self.shape[d]
                        and <cnp.npy_intp>self.shape[d] != 1):
                    strides[d] = self._sstrides[d]
            value = tuple(strides)
            with cython.critical_section(self):  # (set once, as _make_source's)
                if self._strides is None:
                    self._strides = value
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
        return cnp.PyArray_ITEMSIZE(self._root)

    @property
    def nbytes(self):
        """Logical bytes: what :meth:`materialize` would allocate."""
        return self._size * cnp.PyArray_ITEMSIZE(self._root)

    @property
    def source(self):
        """The compact source as a NumPy view with the view's rank (size 1 on broadcast axes);
        a new one at each call, so that setting its ``shape`` changes nothing of the view."""
        cdef cnp.ndarray src = _source_of(self)
        return _same_array(src, cnp.PyArray_ISWRITEABLE(src))

    # -- from an ndarray over a view's memory (_as_ndarray, in _view_materialize.pxi) ---------

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
    def real(self):
        """The real part (lazy: a view of the source's real part)."""
        return _with_source(self, _source_of(self).real)

    @property
    def imag(self):
        """The imaginary part (lazy: a view of the source's imaginary part)."""
        return _with_source(self, _source_of(self).imag)

    @real.setter
    def real(self, value):
        from lazybcast import _protocols
        raise _protocols.read_only_attribute(self, "real")

    @real.deleter
    def real(self):
        raise AttributeError("Cannot delete array real part")  # (NumPy's words)

    @imag.setter
    def imag(self, value):
        from lazybcast import _protocols
        raise _protocols.read_only_attribute(self, "imag")

    @imag.deleter
    def imag(self):
        raise AttributeError("Cannot delete array imaginary part")

    def __repr__(self):
        source = _source_of(self)
        held = source.size * source.dtype.itemsize
        return (
            f"BroadcastView(shape={self.shape}, dtype={source.dtype}, mode={self.mode!r}, "
            f"source_shape={tuple(self.base.shape)}, logical={_format_bytes(self.nbytes)}, "
            f"held={_format_bytes(held)})"
        )

    def __str__(self):
        # NumPy's str of the values (print(view), f"{view}"). Past NumPy's threshold (1000
        # elements) it shows each long axis's ends only; a view with many short axes would
        # still print whole ((4,) * 12: 16.8 million elements, a 108 MB string), so one whose
        # printout would pass _STR_LIMIT elements (or the threshold, if set higher) gives
        # its repr, the summary above.
        options = np.get_printoptions()
        printed = self.size
        if printed > options["threshold"]:
            printed = 1
            for n in self.shape:
                printed *= min(n, 2 * options["edgeitems"])
        if printed > max(_STR_LIMIT, options["threshold"]):
            return repr(self)
        return str(self._as_ndarray())

    def __bool__(self):
        # NumPy's rule: the truth of a one-element array is its element's; otherwise an error.
        return bool(np.broadcast_to(_source_of(self), self.shape))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d BroadcastView)")
        return self.shape[0]


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
        result = _indexing.index(_source_of(self), self.shape, key)
        if type(result) is _indexing.Lazy:
            source, shape = result
            return BroadcastView._wrap(source, shape, self.base, self.mode)
        return result

    cdef BroadcastView _field(self, key):
        # A field (or list of fields) of a structured source: NumPy selects it (and raises);
        # a subarray field adds its own axes after the view's.
        source = _source_of(self)[key]
        shape = self.shape + tuple(source.shape)[len(self.shape):]
        return BroadcastView._wrap(source, shape, self.base, self.mode)

    def __setitem__(self, key, value):
        raise ValueError(
            "BroadcastView is read-only: its elements share memory with the broadcast source; "
            "use view.materialize() to get a writeable copy"
        )

    def __delitem__(self, key):
        self.__setitem__(key, None)

cdef BroadcastView _with_source(_ViewFields v, cnp.ndarray source):
    """``v`` over another source of the same shape (its real part, a cast of it...)."""
    return BroadcastView._wrap(source, v.shape, v.base, v.mode)


include "_view_basic_key.pxi"
include "_view_gather_key.pxi"


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


def make_view(data, tuple aligned, tuple shape, str mode, base=None):
    """A view of ``data`` reshaped to ``aligned`` (same size, ones inserted) broadcast to
    ``shape``. Stride-0 axes of ``data`` itself are collapsed, so a view of
    ``np.broadcast_to(...)`` (or of another view's ``np.asarray``) stays compact. The view's
    ``base`` is ``data``, or ``base`` when given (the array a view of a view keeps).

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
    source = arr if arr.shape == aligned else arr.reshape(aligned)  # (_wrap makes its own)
    if 0 in source.strides:
        key = []
        for n, stride in zip(source.shape, source.strides):
            key.append(slice(0, 1) if stride == 0 and n > 1 else slice(None))
        source = source[tuple(key)]
    return BroadcastView._wrap(source, shape, data if base is None else base, mode)
