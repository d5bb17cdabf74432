"""Elementwise functions on views at source cost: ``__array_ufunc__`` (the operators, in
:mod:`lazybcast._operators`, call it).

A view repeats its source along every broadcast axis, so an elementwise function of views
repeats too: it is computed once on the operands' compact sources (each still of its logical
rank, size 1 on its broadcast axes; NumPy broadcasts them against each other only over the
union of their non-broadcast axes) and the result is wrapped as a view of the full shape.

Values, dtypes and errors are NumPy's because NumPy computes them: the real ufunc runs on the
real operands (views replaced by their sources, ndarrays by their stride-0-free part, Python
scalars left as Python scalars so that NEP 50 promotion is unchanged). Every logical element
is one of the computed elements, and every computed element is some logical element (axes of
size 0 are cut to size 0 first), so floating-point warnings are NumPy's too.

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.arange(3, dtype=np.int8), (1000, 3))
>>> r = v * 2 + 1
>>> type(r).__name__, r.shape, r.source.shape, r.dtype
('BroadcastView', (1000, 3), (1, 3), dtype('int8'))
>>> (v < 1).source
array([[ True, False, False]])
"""

import numpy as np

from lazybcast import _kernels
from lazybcast._binary import call as _call
from lazybcast._view import BroadcastView, make_view

__all__ = ["ARRAYS", "array_ufunc", "elementwise"]

#: Python scalars stay Python scalars: NEP 50 treats them as "weak".
_PY_SCALARS = (bool, int, float, complex)

_NDARRAY_UFUNC = np.ndarray.__array_ufunc__

#: The array types whose values lazybcast computes on itself: views and plain ndarrays. An
#: ndarray subclass (np.matrix, a masked array) or another array type keeps NumPy's rules.
ARRAYS = frozenset((BroadcastView, np.ndarray))

#: Operand types that never defer (checked by identity before any attribute lookup).
_PLAIN = frozenset((*ARRAYS, type(None), *_PY_SCALARS))


def _broadcast_shapes(shapes):
    """``np.broadcast_shapes`` for tuples of ints, without its arrays (ValueError alike)."""
    if len(shapes) == 1:  # (the usual cases first: one operand, one shape, or a scalar)
        return shapes[0]
    if len(shapes) == 2:
        a, b = shapes
        if a == b or not b:
            return a
        if not a:
            return b
    ndim = max(map(len, shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for d, n in enumerate(shape, ndim - len(shape)):
            m = out[d]
            if n != m:
                if m == 1:
                    out[d] = n
                elif n != 1:
                    raise ValueError(f"shapes {shapes} cannot be broadcast together")
    return tuple(out)


def _squash(a):
    """``a`` with its stride-0 axes cut to size 1 (as ``make_view`` does for its data)."""
    if 0 in a.strides:
        key = tuple(slice(0, 1) if s == 0 and n > 1 else slice(None)
                    for n, s in zip(a.shape, a.strides))
        a = a[key]
    return a


def _compact(x):
    """``(operand, logical shape)`` for one input, or None if ``x`` handles ufuncs itself."""
    t = type(x)
    if t is BroadcastView:
        return x._source, x.shape
    if t is np.ndarray:
        return _squash(x), x.shape
    if t in _PY_SCALARS or isinstance(x, np.generic):
        return x, ()
    if isinstance(x, _PY_SCALARS):  # IntEnum and friends: NumPy reads them as Python scalars
        return x, ()
    override = getattr(t, "__array_ufunc__", _NDARRAY_UFUNC)
    if override is not _NDARRAY_UFUNC:
        return None  # another duck array (or __array_ufunc__ = None): NumPy's rules defer
    a = np.asarray(x)
    if a.ndim == 0 and a.dtype == object:
        return x, ()  # an arbitrary object: hand it over as it is, as NumPy would
    return _squash(a), a.shape


def _rank(a, ndim):
    """``a`` (an ndarray operand) with leading axes of size 1 up to ``ndim`` axes."""
    if type(a) is np.ndarray and a.ndim < ndim:
        return a.reshape((1,) * (ndim - a.ndim) + a.shape)
    return a


def _cut_empty(a, shape):
    """``a`` (aligned to the rank of ``shape``) cut to size 0 where ``shape`` is 0."""
    if type(a) is not np.ndarray or a.ndim == 0:
        return a
    key = tuple(slice(0, 0) if n == 0 else slice(None) for n in shape[len(shape) - a.ndim:])
    return a[key]


def _prepare(operands, where):
    """The compact operands, the compact ``where`` and the full shape; None to defer to
    another type; ``False`` when the shapes do not broadcast (NumPy then raises)."""
    compact = []
    shapes = []
    for x in operands:
        c = _compact(x)
        if c is None:
            return None
        compact.append(c[0])
        shapes.append(c[1])
    if where is not True:
        c = _compact(where)
        if c is None:
            return None
        where = c[0]
        shapes.append(c[1])
    try:
        full = _broadcast_shapes(shapes)
    except ValueError:
        return False
    if 0 in full:
        compact = [_cut_empty(a, full) for a in compact]
        where = _cut_empty(where, full)
    return compact, where, full


def _wrap(result, full):
    """A view of ``full`` over one computed result (NumPy's scalars stay scalars; a 0-d
    array becomes a 0-d view)."""
    if type(result) is not np.ndarray:
        return result
    aligned = (1,) * (len(full) - result.ndim) + result.shape
    return make_view(result, aligned, full, "numpy")


def elementwise(func, operands, kwargs=None):
    """``func(*operands, **kwargs)`` for an elementwise ``func``, computed on the compact
    sources and returned as a view of the broadcast shape.

    Parameters
    ----------
    func : callable
        Elementwise in all of ``operands`` (a ufunc, ``np.where``, ``np.isclose``, ...).
    operands : sequence
        Views, ndarrays, scalars or array-likes.
    kwargs : dict, optional
        Passed to ``func``; a ``where`` entry is broadcast like an operand.

    Returns
    -------
    BroadcastView, tuple of BroadcastView, a NumPy scalar (0-d) or NotImplemented
        ``NotImplemented`` when an operand is another duck array.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> v = lazybcast.broadcast_to(np.array([1.0, -2.0]), (4, 2))
    >>> elementwise(np.where, (v > 0, v, 0.0)).source
    array([[1., 0.]])
    """
    kwargs = {} if not kwargs else dict(kwargs)
    where = kwargs.get("where", True)
    prepared = _prepare(operands, where)
    if prepared is None:
        return NotImplemented
    if prepared is False:  # NumPy's own error, raised before any element is computed
        return func(*[_as_numpy(x) for x in operands], **_numpy_kwargs(kwargs))
    compact, where, full = prepared
    if "where" in kwargs:
        kwargs["where"] = where
    args = [_rank(a, len(full)) for a in compact]
    if type(func) is np.ufunc:
        result = _call(func, args, kwargs)  # (with NumPy's buffers sized for the operands)
    else:
        result = func(*args, **kwargs)
    if type(result) is tuple:
        return tuple(_wrap(r, full) for r in result)
    return _wrap(result, full)


# -- NumPy on the zero-copy arrays ----------------------------------------------------------------


def _as_numpy(x):
    """A view as ``np.asarray(view)`` (``np.broadcast_to`` of its source: no copy)."""
    if type(x) is BroadcastView:
        return np.asarray(x)
    if type(x) in (list, tuple):
        return type(x)(_as_numpy(y) for y in x)
    return x


def _numpy_kwargs(kwargs):
    out = {k: _as_numpy(v) for k, v in kwargs.items() if k != "out"}
    if "out" in kwargs:
        _check_writeable(kwargs["out"])
        out["out"] = kwargs["out"]
    return out


def _check_writeable(out):
    for o in out if type(out) is tuple else (out,):
        if type(o) is BroadcastView:
            raise ValueError(
                "out= is a BroadcastView, which is read-only; pass a writeable ndarray "
                "(for example view.materialize()) or drop out= to get a lazy result"
            )


def _numpy(ufunc, method, inputs, kwargs):
    """``ufunc.method`` by NumPy itself, on ``np.asarray(view)`` for every view."""
    return getattr(ufunc, method)(*[_as_numpy(x) for x in inputs], **_numpy_kwargs(kwargs))


# -- __array_ufunc__ ----------------------------------------------------------------------------


def _defers(inputs, kwargs):
    """True if an operand (or out) is another duck array, or an ndarray subclass whose type
    NumPy's result keeps (a masked array and its mask, np.matrix): NumPy then computes, or
    asks that type, on ``np.asarray(view)``. (np.memmap is not one: NumPy returns plain
    arrays from its ufuncs.)"""
    outs = kwargs.get("out", ())
    for x in (*inputs, *outs):
        t = type(x)
        if t in _PLAIN:
            continue
        if getattr(t, "__array_ufunc__", _NDARRAY_UFUNC) is not _NDARRAY_UFUNC:
            return True
        if _keeps_its_type(t):
            return True
    return False


def _keeps_its_type(t):
    """An ndarray subclass whose type NumPy's results keep (masked arrays, np.matrix; not
    np.memmap, whose ufunc results are plain arrays)."""
    return issubclass(t, np.ndarray) and not issubclass(t, np.memmap)


def _opted_out(inputs, kwargs):
    """True if an operand set ``__array_ufunc__ = None`` (it wants its reflected operators)."""
    for x in (*inputs, *kwargs.get("out", ())):
        if type(x) not in _PLAIN and getattr(type(x), "__array_ufunc__", 0) is None:
            return True
    return False


def _call_into(ufunc, inputs, kwargs, out):
    """``ufunc(*inputs, out=out)``: computed on the compact operands into temporaries of
    the outputs' dtypes (NumPy resolves the loop and checks the casting), then copied into
    ``out`` by the materialize kernel."""
    if (any(type(o) is not np.ndarray or _kernels.overlaps_itself(o) for o in out)
            or kwargs.get("where", True) is not True
            or (len(out) > 1 and any(np.may_share_memory(out[i], out[j])
                                     for i in range(1, len(out)) for j in range(i)))):
        # Partial outputs (None entries), outs whose items share bytes, within one out or
        # between two (NumPy's loop, writing them item by item, decides which value stays),
        # and masked writes: NumPy itself, on the arrays.
        return _numpy(ufunc, "__call__", inputs, {**kwargs, "out": out})
    prepared = _prepare(inputs, True)
    if prepared is None:
        return NotImplemented
    shapes = [o.shape for o in out]
    full = None if prepared is False else prepared[2]
    if full is None or any(s != full for s in shapes):
        # Outputs that broadcast the inputs up, or do not fit: NumPy decides (and raises).
        return _numpy(ufunc, "__call__", inputs, {**kwargs, "out": out})
    compact = [_rank(a, len(full)) for a in prepared[0]]
    shape = _broadcast_shapes([np.shape(a) for a in compact])
    if shape == full:  # the compact result is full size (a column against a row): into out
        _call(ufunc, compact, {**kwargs, "out": out})
        return out[0] if len(out) == 1 else out
    temps = tuple(np.empty(shape, o.dtype) for o in out)
    _call(ufunc, compact, {**kwargs, "out": temps})
    for o, t in zip(out, temps):
        make_view(t, t.shape, full, "numpy").materialize(out=o)
    return out[0] if len(out) == 1 else out


def array_ufunc(ufunc, method, inputs, kwargs):
    """``BroadcastView.__array_ufunc__``: NumPy's override protocol for views.

    ``__call__`` of an elementwise ufunc is computed at source cost (see the module);
    ``reduce`` of the ufuncs whose repetition is algebra (``add``, ``multiply``, ``minimum``,
    ``maximum``, ``logical_and``, ...) goes to :mod:`lazybcast._reductions`; generalized ufuncs
    (``matmul``, ``vecdot``, ...) to :mod:`lazybcast._gufuncs`; ``outer`` of views and
    ndarrays is elementwise (one operand given new axes); ``accumulate`` along an axis runs
    on the source (:mod:`lazybcast._along_axis`; along a repeated axis, on the source
    stretched along it alone); ``reduceat`` and the rest run in NumPy on the zero-copy
    ``np.asarray(view)``. ``ufunc.at`` cannot write into a view, and neither can ``out=``.
    With another duck array among the operands, the views step aside as
    ``np.asarray(view)`` and NumPy asks that type (``NotImplemented`` if it opted out of
    ufuncs, so that Python tries its reflected operator).

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> v = lazybcast.broadcast_to(np.array([0.0, 1.0]), (3, 2))
    >>> np.exp(v).source
    array([[1.        , 2.71828183]])
    >>> np.add.accumulate(v, axis=0).materialize()
    array([[0., 1.],
           [0., 2.],
           [0., 3.]])
    """
    if _defers(inputs, kwargs):
        # Another duck array takes part (dask, xarray, pint, ...). Step aside as the plain
        # ndarray a view was before this protocol: NumPy then asks that type, with arrays.
        if _opted_out(inputs, kwargs):
            return NotImplemented
        return _numpy(ufunc, method, inputs, kwargs)
    out = kwargs.get("out")
    if out is not None:
        _check_writeable(out)
    if method == "__call__":
        if ufunc.signature is not None:
            if out is None:
                from lazybcast._gufuncs import call

                result = call(ufunc, inputs, kwargs)
                if result is not None:
                    return result
            return _numpy(ufunc, method, inputs, kwargs)
        if out is not None:
            rest = {k: v for k, v in kwargs.items() if k != "out"}
            return _call_into(ufunc, inputs, rest, out)
        return elementwise(ufunc, inputs, kwargs)
    if method == "reduce":
        from lazybcast._reductions import ufunc_reduce

        return ufunc_reduce(ufunc, inputs, kwargs)
    if method == "outer" and out is None:
        result = _outer(ufunc, inputs, kwargs)
        if result is not None:
            return result
    if method == "accumulate" and out is None and type(inputs[0]) is BroadcastView:
        from lazybcast._along_axis import accumulate

        result = accumulate(ufunc, *inputs, **kwargs)
        if result is not NotImplemented:
            return result
    if method == "at" and type(inputs[0]) is BroadcastView:
        raise ValueError(
            f"{ufunc.__name__}.at cannot write into a BroadcastView (it is read-only); "
            f"use view.materialize() for a writeable copy"
        )
    return _numpy(ufunc, method, inputs, kwargs)


def _outer(ufunc, inputs, kwargs):
    """``ufunc.outer(a, b)`` of views and plain ndarrays: ``ufunc(a[..., None, ...], b)`` with
    one new axis of ``a`` per axis of ``b``, elementwise (lazy); None for anything else
    (NumPy's own: Python scalars are strong there, unlike in ``ufunc(a, b)``)."""
    if (len(inputs) != 2 or ufunc.nin != 2 or ufunc.signature is not None
            or not kwargs.keys() <= {"dtype", "casting"}
            or any(type(x) not in ARRAYS for x in inputs)
            or inputs[0].ndim + inputs[1].ndim > 64):  # (NumPy's ValueError past 64 axes)
        return None
    a, b = inputs
    if b.ndim:
        a = a[(Ellipsis,) + (None,) * b.ndim]
    return elementwise(ufunc, (a, b), kwargs)
