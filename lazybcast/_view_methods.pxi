# Included by _view.pyx: ndarray's methods on a BroadcastView, as thin delegations to the
# modules that do the work: layout changes (lazybcast._layout, _reshape), casts and conversions
# (_protocols), reductions (_reductions, _moments). Each runs at the cost of the compact
# source where it can. (Pickling and dask: _view_pickling.pxi.)


@cython.auto_pickle(False)
cdef class _ArrayMethods(_ArrayOperators):
    """ndarray's methods and attributes of a :class:`BroadcastView` (a base class of it;
    never instantiated on its own)."""

    # -- layout and casts (lazybcast._layout, _reshape, _protocols) ---------------------------

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

    def view(self, dtype):
        """view(dtype)

        The same bytes read as ``dtype`` (lazy), as ``ndarray.view``: a dtype of another size
        needs a contiguous (so not broadcast) last axis."""
        from lazybcast import _layout
        return _layout.view_as(self, dtype)

    # -- conversions, protocols and what a read-only view refuses (lazybcast._protocols) -----

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

    # -- the array API standard: NumPy's namespace, which dispatches views to their protocols

    def __array_namespace__(self, *, api_version=None):
        """``numpy``, as for an ndarray (NumPy checks ``api_version``): array-API code then
        calls NumPy's functions, which reach the view's ``__array_function__``."""
        return self._as_ndarray().__array_namespace__(api_version=api_version)

    @property
    def device(self):
        """``"cpu"``: a view lives in host memory (``ndarray.device``)."""
        return self._as_ndarray().device

    def to_device(self, device, /, *, stream=None):
        """The view itself for ``"cpu"``; anything else raises NumPy's error."""
        self._as_ndarray().to_device(device, stream=stream)
        return self

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
        """``ndarray.conj``: ``np.conjugate``, lazy (on the source), for complex and object
        views; the view itself for other numbers (bool stays bool); NumPy's answer otherwise."""
        return _conjugate(self)

    def conjugate(self):
        """``ndarray.conjugate``: as :meth:`conj`."""
        return _conjugate(self)

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

    # -- reductions at source cost, with NumPy's signatures (lazybcast._reductions, _moments) --

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
        return _mod(6).argmin(self, axis, out, keepdims=keepdims)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return _mod(6).argmax(self, axis, out, keepdims=keepdims)



def _conjugate(view):
    """``ndarray.conj``'s rule (NumPy's PyArray_Conjugate): the ufunc for complex and object
    dtypes, the array itself for other numbers. For anything else NumPy's own answer, asked
    of the compact source: a TypeError (NumPy 2.4), or a DeprecationWarning and the array
    itself (NumPy 2.0)."""
    kind = view.dtype.kind
    if kind in "cO":
        return np.conjugate(view)
    if kind not in "biuf":
        view.source.conj()
    return view


def _method_axes(tuple axes):
    """``ndarray.transpose``'s arguments: none, one (None, an int or a sequence), or ints."""
    if not axes:
        return None
    return axes[0] if len(axes) == 1 else axes


def _protocols_read_only(name):
    from lazybcast import _protocols
    raise _protocols.read_only(name)
