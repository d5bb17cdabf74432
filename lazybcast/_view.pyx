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

#: The highest rank whose geometry the view object holds itself (2 x 8 x 8 bytes); higher
#: ranks keep it in a bytes object.
cdef enum: _INLINE_NDIM = 8

#: What a bare ``BroadcastView.__new__`` (for example from a crafted pickle) holds: nothing.
cdef cnp.ndarray _EMPTY = np.empty(0, dtype=np.uint8)  # (a C global: no lookup per view)
_EMPTY.flags.writeable = False
cdef tuple _SHAPE_EMPTY = (0,)


#: NumPy's "argument not given" marker (the reductions' ``initial=``, ``mean=``, ...).
_NoValue = np._NoValue

#: The duck-array modules, imported on first use (they import this module).
cdef list _duck_modules = [None, None, None, None, None, None, None]


cdef object _mod(int i):
    """1: lazybcast._ufuncs, 2: lazybcast._reductions, 3: lazybcast._functions,
    4: lazybcast._moments, 5: lazybcast._operators, 6: lazybcast._arg_reductions."""
    m = _duck_modules[i]
    if m is None:
        import importlib
        m = _duck_modules[i] = importlib.import_module(
            ("", "lazybcast._ufuncs", "lazybcast._reductions", "lazybcast._functions",
             "lazybcast._moments", "lazybcast._operators", "lazybcast._arg_reductions")[i])
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
@cython.auto_pickle(False)  # views pickle by _Pickling.__reduce__
@cython.no_gc_clear  # the collector never sets the fields to None (see below)
cdef class _ViewFields:
    """The fields of a :class:`BroadcastView`, in the root of its classes so that the
    NumPy-method mixins below read them in C and the free list serves every view.

    A view stays tracked by the cycle collector: its ``base`` may be an ndarray subclass
    with a ``__dict__`` that refers back to the view (``m.cache = broadcast_to(m, ...)``),
    a cycle the collector reclaims only if it sees the view's reference. (Untracked,
    ``cython.no_gc``, a key cost 4-9% less, but 200 such cycles of 1 MB stayed alive.) The
    collector breaks such a cycle by clearing the other objects in it (the subclass's
    ``__dict__``): a cleared view's size and stride pointers would point into a freed
    bytes object."""

    # The source: the ndarray ``_src``, or, until first use (``_source_of``), the ndarray
    # ``_root`` whose memory holds it; and the source's geometry in that memory, the view's own.
    cdef cnp.ndarray _src        # None for a view made by a basic key, until first use
    cdef cnp.ndarray _root       # ``_src`` itself, or the ndarray ``_src`` will be a view of
    cdef char* _data             # the source's first element
    cdef cnp.npy_intp* _sdims    # the source's sizes: ``_inline_dims``, or in ``_wide``
    cdef cnp.npy_intp* _sstrides
    cdef cnp.npy_intp _inline_dims[_INLINE_NDIM]
    cdef cnp.npy_intp _inline_strides[_INLINE_NDIM]
    cdef bytes _wide             # sizes then strides of a rank above _INLINE_NDIM, or None
    cdef bint _writeable         # the source's writeability (its own, or its parent's)
    cdef readonly tuple shape
    cdef tuple _strides  # the stride map, built on first use (None until then)
    cdef readonly object base
    cdef readonly str mode
    cdef intp_t _size

    def __cinit__(self):
        # Every field valid from the start: an object made by __new__ alone is an empty view.
        _set_source(self, _EMPTY)
        self.shape = _SHAPE_EMPTY
        self._strides = _SHAPE_EMPTY
        self.base = _EMPTY
        self.mode = "numpy"

    @property
    def _source(self):
        """The source ndarray (made on first use for a view from a basic key)."""
        return _source_of(self)

    cdef int _make_source(self) except -1:
        # (A cdef method here also puts the classes' method table in this struct, so that a
        # BroadcastView has this class's size and the free list above serves it.)
        source = _view_of_root(self._root, len(self.shape), self._sdims, self._sstrides,
                               self._data, self._writeable)
        with cython.critical_section(self):  # set once: a free-threaded build's second
            if self._src is None:            # thread keeps the first one's (readers take a
                self._src = source           # reference only once it is set)
        return 0

    def __init__(self, *args, **kwargs):
        # (here, so that the base classes below cannot be made on their own either)
        raise TypeError(
            "BroadcastView cannot be created directly; use lazybcast.broadcast(), "
            "broadcast_to() or broadcast_arrays()"
        )


cdef inline int _set_source(_ViewFields v, cnp.ndarray source) except -1:
    """Give ``v`` the ndarray ``source`` (already checked against its shape, and the view's
    own: see the module's docstring)."""
    v._src = source
    v._root = source
    v._data = <char*>cnp.PyArray_DATA(source)
    v._writeable = cnp.PyArray_ISWRITEABLE(source)
    return _set_geometry(v, cnp.PyArray_NDIM(source), cnp.PyArray_DIMS(source),
                         cnp.PyArray_STRIDES(source))


cdef inline int _set_geometry(_ViewFields v, int nd, const cnp.npy_intp* dims,
                              const cnp.npy_intp* strides) except -1:
    """Copy the source's ``nd`` sizes and strides into ``v`` (see ``_INLINE_NDIM``)."""
    cdef int d
    cdef cnp.npy_intp* own
    if nd <= _INLINE_NDIM:
        v._wide = None
        v._sdims = v._inline_dims
        v._sstrides = v._inline_strides
    else:
        v._wide = PyBytes_FromStringAndSize(NULL, 2 * nd * sizeof(cnp.npy_intp))
        own = <cnp.npy_intp*>PyBytes_AS_STRING(v._wide)
        v._sdims = own
        v._sstrides = own + nd
    for d in range(nd):
        v._sdims[d] = dims[d]
        v._sstrides[d] = strides[d]
    return 0


cdef inline cnp.ndarray _source_of(_ViewFields v):
    """``v``'s source ndarray, made now if a basic key left it unmade."""
    if v._src is None:
        v._make_source()
    return v._src


cdef cnp.ndarray _view_of_root(cnp.ndarray root, int nd, cnp.npy_intp* dims,
                               cnp.npy_intp* strides, char* data, bint writeable):
    """An ndarray of ``nd`` axes (``dims``, ``strides`` from ``data``) inside ``root``'s
    memory, with ``root``'s dtype, writeable or not, keeping ``root`` alive."""
    cdef cnp.PyArray_Descr* descr = cnp.PyArray_DESCR(root)
    Py_INCREF(<object>descr)  # PyArray_NewFromDescr steals a reference
    cdef cnp.ndarray out = <cnp.ndarray>lzb_new_from_descr(
        &lzb_ndarray_type, descr, nd, dims, strides, data,
        cnp.NPY_ARRAY_WRITEABLE if writeable else 0, NULL)
    cnp.set_array_base(out, root)
    return out


cdef inline cnp.ndarray _same_array(cnp.ndarray a, bint writeable):
    """A new array object with ``a``'s geometry over ``a``'s memory."""
    return _view_of_root(a, cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a), cnp.PyArray_STRIDES(a),
                         <char*>cnp.PyArray_DATA(a), writeable)


# NumPy's surface as thin delegations, one mixin per concern (a cdef class body cannot include
# a file, and cannot inherit numpy.lib.mixins.NDArrayOperatorsMixin, a Python class):
include "_view_materialize.pxi"  # _Materializing: materialize(), __array__
include "_view_operators.pxi"  # _ArrayOperators: __array_ufunc__, __array_function__, operators
include "_view_methods.pxi"    # _ArrayMethods: ndarray's methods, reductions
include "_view_pickling.pxi"   # _Pickling: pickling, dask
include "_view_iteration.pxi"  # _Iteration: iteration and batches

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
    source = arr if arr.shape == aligned else arr.reshape(aligned)  # (_wrap makes its own)
    if 0 in source.strides:
        key = []
        for n, stride in zip(source.shape, source.strides):
            key.append(slice(0, 1) if stride == 0 and n > 1 else slice(None))
        source = source[tuple(key)]
    return BroadcastView._wrap(source, shape, data, mode)
