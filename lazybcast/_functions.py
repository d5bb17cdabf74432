"""``__array_function__``: NumPy's functions on views.

The functions in :data:`LAZY` keep a view lazy:

- the reductions, at source cost (:mod:`lazybcast._reductions`, means, variances and
  ``np.average`` in :mod:`lazybcast._moments`, their ``np.nan*`` variants too;
  ``np.linalg.norm``, ``vector_norm`` and ``matrix_norm`` in :mod:`lazybcast._norms`),
  ``np.count_nonzero``, ``np.ptp``, ``np.histogram`` and ``np.bincount``;
- the layout functions of :mod:`lazybcast._layout` (``np.transpose``, ``np.moveaxis``,
  ``np.swapaxes``, ``np.matrix_transpose``, ``np.expand_dims``, ``np.squeeze``,
  ``np.broadcast_to``, ``np.flip``, ``np.fliplr``, ``np.flipud``, ``np.rot90``,
  ``np.diagonal``: O(ndim), they move the source's axes with the view's; ``np.roll`` along
  axes:
  the source rolled), ``np.reshape`` and ``np.ravel`` (:mod:`lazybcast._reshape`: lazy where
  the axes split or merge cleanly), and ``np.trace``, the sum of the lazy diagonal;
- the elementwise functions of :mod:`lazybcast._elementwise` (``np.where``, ``np.isclose``,
  ``np.allclose``, ``np.array_equal``, ``np.clip``, ``np.round``, ``np.isin``,
  ``np.nan_to_num``, ``np.real``, ``np.imag``, ``np.angle``, ``np.searchsorted``,
  ``np.digitize``, ``np.interp``), and ``np.outer`` of two vectors (``np.multiply.outer``,
  elementwise);
- ``np.nonzero``, ``np.argwhere``, ``np.flatnonzero`` and one-argument ``np.where``
  (:mod:`lazybcast._nonzero`): the source's positions, repeated along the broadcast axes;
- products that take the gufuncs' lazy path (:mod:`lazybcast._gufuncs`): ``np.dot`` of
  operands with one or two axes, ``np.linalg.matmul`` and ``np.linalg.vecdot``, and
  ``np.einsum``;
- the functions along an axis of :mod:`lazybcast._along_axis` (``np.sort``, ``np.argsort``,
  ``np.cumsum``, ``np.cumprod``, ``np.cumulative_sum``, ``np.cumulative_prod``,
  ``np.diff``, ``np.gradient``, ``np.apply_along_axis``, ``np.apply_over_axes``,
  ``np.unique``), and the medians and quantiles of :mod:`lazybcast._quantiles`
  (``np.median``, ``np.percentile``, ``np.quantile`` and their ``nan`` variants);
- joins, repeats and padding (:mod:`lazybcast._joining`): ``np.concatenate``, ``np.stack``,
  ``np.vstack``, ``np.hstack``, ``np.atleast_1d`` / ``2d`` / ``3d``, ``np.tile``,
  ``np.repeat``, ``np.pad``.

Every other NumPy function runs as before this protocol existed: on ``np.asarray(view)``,
which is ``np.broadcast_to`` of the source (no copy).

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.arange(3.0), (1000, 3))
>>> np.transpose(v).source.shape, np.sum(v, axis=0).source.shape
((3, 1), (3,))
>>> np.pad(v, 1, mode="edge").source.shape, np.pad(v, 1).source.shape  # edges: copies
((1, 5), (1002, 5))
>>> np.select([v > 1], [v])[:2]  # not lazy: NumPy's own on the zero-copy arrays
array([[0., 0., 2.],
       [0., 0., 2.]])
"""

import numpy as np

from lazybcast import _along_axis, _elementwise, _gufuncs, _joining, _nonzero, _quantiles
from lazybcast import _layout as _layout_module
from lazybcast import _reshape as _reshape_module
from lazybcast import _arg_reductions, _moments, _norms, _reductions, _take
from lazybcast._ufuncs import ARRAYS, _as_numpy
from lazybcast._view import BroadcastView

__all__ = ["LAZY", "array_function", "fallback"]

_NoValue = np._NoValue

#: NumPy function -> implementation for views (which may return NotImplemented to fall back).
LAZY: dict[object, object] = {}


def _implements(*funcs):
    def register(impl):
        for func in funcs:
            LAZY[func] = impl
        return impl

    return register


def array_function(func, types, args, kwargs):
    """``BroadcastView.__array_function__``: the lazy implementation if there is one, else
    :func:`fallback`; if another duck array takes part, ``func`` again with every view as
    ``np.asarray(view)`` (NumPy then asks that type)."""
    for t in types:
        if not issubclass(t, (BroadcastView, np.ndarray)):
            # Another duck array takes part: step aside as the plain ndarray a view was
            # before this protocol, and let NumPy ask that type.
            return func(*[_as_numpy(a) for a in args],
                        **{k: _as_numpy(v) for k, v in kwargs.items()})
    impl = LAZY.get(func)
    if impl is not None:
        result = impl(*args, **kwargs)
        if result is not NotImplemented:
            return result
    return fallback(func, args, kwargs)


def fallback(func, args, kwargs):
    """``func`` by NumPy on ``np.asarray(view)`` for every view in ``args`` and ``kwargs``
    (also inside lists and tuples), as it ran before ``__array_function__`` existed."""
    args = [_as_numpy(a) for a in args]
    kwargs = {k: _as_numpy(v) for k, v in kwargs.items()}
    return getattr(func, "_implementation", func)(*args, **kwargs)


# -- reductions ------------------------------------------------------------------------------


def _reduction(name):
    module = next(m for m in (_moments, _arg_reductions, _reductions) if name in m.__all__)
    method = getattr(module, name)

    def impl(a, *args, **kwargs):
        if type(a) is not BroadcastView:
            return NotImplemented
        return method(a, *args, **kwargs)

    impl.__name__ = name
    return impl


for _name, _funcs in (
    ("sum", (np.sum,)), ("prod", (np.prod,)), ("mean", (np.mean,)), ("any", (np.any,)),
    ("all", (np.all,)), ("min", (np.min, np.amin)), ("max", (np.max, np.amax)),
    ("var", (np.var,)), ("std", (np.std,)), ("argmin", (np.argmin,)),
    ("argmax", (np.argmax,)),
    *((name, (getattr(np, name),)) for name in (
        "nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanvar", "nanstd", "nanargmin",
        "nanargmax")),
):
    _implements(*_funcs)(_reduction(_name))
del _name, _funcs


# -- layout: lazybcast._layout moves the source's axes with the view's, in O(ndim) ---------------


#: NumPy's name of the array argument, where it is not ``a`` (``matrix_transpose``'s is
#: positional only: NumPy refuses it by keyword).
_ARRAY_ARGUMENT = {"flip": "m", "fliplr": "m", "flipud": "m", "rot90": "m",
                   "matrix_transpose": None}


def _layout(name):
    def impl(*args, **kwargs):
        if args:
            a, args = args[0], args[1:]
        else:  # (passed by keyword, under NumPy's name)
            a = kwargs.pop(_ARRAY_ARGUMENT.get(name, "a"), None)
        if type(a) is not BroadcastView:
            return NotImplemented
        return getattr(_layout_module, name)(a, *args, **kwargs)

    impl.__name__ = name
    return impl


for _name in ("transpose", "moveaxis", "swapaxes", "expand_dims", "squeeze",
              "matrix_transpose", "flip", "fliplr", "flipud", "rot90", "diagonal", "roll"):
    LAZY[getattr(np, _name)] = _layout(_name)
del _name


@_implements(np.trace)
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum of the lazy diagonal, as NumPy's trace sums its diagonal."""
    if type(a) is not BroadcastView:
        return NotImplemented
    return _reductions.sum(_layout_module.diagonal(a, offset, axis1, axis2), -1, dtype, out)


@_implements(np.broadcast_to)
def _broadcast_to(array, shape, subok=False):
    if type(array) is not BroadcastView:
        return NotImplemented
    return _layout_module.broadcast_to(array, shape)


@_implements(np.reshape)
def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if type(a) is not BroadcastView or newshape is not None or shape is None:
        return NotImplemented  # NumPy's deprecation and errors
    return _reshape_module.reshape(a, shape, order, copy)


@_implements(np.ravel)
def _ravel(a, order="C"):
    if type(a) is not BroadcastView:
        return NotImplemented
    return _reshape_module.ravel(a, order)


# -- counting and ranges: the same algebra as the reductions ---------------------------------


@_implements(np.count_nonzero)
def _count_nonzero(a, axis=None, *, keepdims=False):
    """Nonzero elements of the source times the repeats (NumPy's algorithm otherwise: a bool
    view summed in intp, at source cost)."""
    if type(a) is not BroadcastView:
        return NotImplemented
    if axis is None and not keepdims:
        count = np.count_nonzero(a.source)  # (its type: int on NumPy 2.0.2, np.int64 on 2.4.6)
        return type(count)(int(count) * (a.size // a.source.size) if a.size else 0)
    if np.issubdtype(a.dtype, np.character):
        flags = a != a.dtype.type()
    else:
        flags = a.astype(np.bool, copy=False)
    return _reductions.sum(flags, axis=axis, dtype=np.intp, keepdims=keepdims)


@_implements(np.ptp)
def _ptp(a, axis=None, out=None, keepdims=False):
    """``max - min``, both at source cost, as NumPy's ``np.ptp`` computes it."""
    if out is not None or type(a) is not BroadcastView:
        return NotImplemented
    if keepdims is _NoValue:
        keepdims = False
    return np.subtract(_reductions.max(a, axis, None, keepdims),
                       _reductions.min(a, axis, None, keepdims))


@_implements(np.histogram)
def _histogram(a, bins=10, range=None, density=None, weights=None):
    """The source's counts times the repeats: NumPy's counts over the logical array, exactly
    (integers: no float64 weights, which would round counts past 2**53), and its density
    from them as ``np.histogram`` computes it. Bins named by a string ("auto", "fd", ...)
    depend on the sample count, and user weights on the view's layout: NumPy's."""
    if (type(a) is not BroadcastView or a.size == 0 or weights is not None
            or isinstance(bins, str) or a.dtype.kind not in "biuf"):
        return NotImplemented
    counts, edges = np.histogram(a.source, bins=bins, range=range)
    n = counts * (a.size // a.source.size)
    if density:
        db = np.array(np.diff(edges), float)  # (np.histogram's own density formula)
        return n / db / n.sum(), edges
    return n, edges


@_implements(np.bincount)
def _bincount(x, weights=None, minlength=0):
    """Of a 1-D view: the source's counts times the repeats."""
    if type(x) is not BroadcastView or weights is not None or x.ndim != 1 or x.size == 0:
        return NotImplemented
    return np.bincount(x.source, minlength=minlength) * (x.size // x.source.size)


# -- elementwise functions (lazybcast._elementwise) --------------------------------------------

LAZY.update(_elementwise.FUNCTIONS)
LAZY.update(_nonzero.FUNCTIONS)  # (np.nonzero, np.argwhere, np.flatnonzero)


# -- products: the gufuncs' own path (lazybcast._gufuncs) -----------------------------------------


def _numeric(x):
    """A view, plain ndarray, NumPy or Python scalar of a bool, integer, float or complex
    dtype."""
    if type(x) in ARRAYS or isinstance(x, np.generic):
        return x.dtype.kind in "biufc"
    return type(x) in (bool, int, float, complex)


@_implements(np.dot)
def _dot(a, b, out=None):
    # For numeric operands of one or two axes np.dot is np.matmul, with a 0-d one
    # np.multiply: both lazy. (N-d operands pair every row of one with every column of the
    # other; other dtypes and types follow np.dot's own rules: NumPy's.)
    if out is not None or not (_numeric(a) and _numeric(b)):
        return NotImplemented
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:  # (np.dot makes arrays of Python scalars: no NEP 50 weak promotion)
        return np.multiply(np.asarray(a) if na == 0 else a, np.asarray(b) if nb == 0 else b)
    if na <= 2 and nb <= 2:
        return np.matmul(a, b)
    return NotImplemented


@_implements(np.outer)
def _outer(a, b, out=None):
    # Of two vectors (views or plain ndarrays), np.outer is np.multiply.outer: lazy.
    if out is None and all(type(x) in ARRAYS and x.ndim == 1
                           for x in (a, b)):
        return np.multiply.outer(a, b)
    return NotImplemented


LAZY[np.linalg.norm] = _norms.norm  # (sums of powers: lazybcast._norms)
LAZY[np.average] = _moments.average
if hasattr(np.linalg, "vector_norm"):  # (NumPy 2.0's array-API names)
    LAZY[np.linalg.vector_norm] = _norms.vector_norm
    LAZY[np.linalg.matrix_norm] = _norms.matrix_norm
LAZY[np.einsum] = _gufuncs.einsum
LAZY[np.take] = _take.take  # (indexing: lazybcast._take)
LAZY[np.compress] = _take.compress


if hasattr(np.linalg, "matmul"):  # (NumPy 2.0's array-API names)
    @_implements(np.linalg.matmul)
    def _linalg_matmul(x1, x2, /):
        return np.matmul(x1, x2)

    @_implements(np.linalg.vecdot)
    def _linalg_vecdot(x1, x2, /, *, axis=-1):
        if axis == -1:  # (the default: the gufunc's own core axis, lazy)
            return np.vecdot(x1, x2)
        return np.vecdot(x1, x2, axis=axis)


# -- joined, repeated, padded: concatenate, stack, tile, repeat, pad (lazybcast._joining) ------

for _name in _joining.__all__:
    LAZY[getattr(np, _name)] = getattr(_joining, _name)
del _name


# -- along an axis: sorts, scans, differences, unique values (lazybcast._along_axis) ----------
# -- and medians and quantiles (lazybcast._quantiles) -------------------------------------------

for _module in (_along_axis, _quantiles):
    for _name in _module.__all__:
        if hasattr(np, _name):  # (accumulate: a ufunc method; np.cumulative_*: NumPy 2.1)
            LAZY[getattr(np, _name)] = getattr(_module, _name)
del _module, _name
