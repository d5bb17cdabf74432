# Included by _view.pyx. The fields of a view (_ViewFields, the root of its classes) and the
# module state they use: the source ndarray or, for a view made by a basic key, the source's
# geometry over its parent's memory (the ndarray made on first use, _source_of).

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
    cdef object __weakref__      # weakref.ref(view) works, as for an ndarray

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
