"""NumPy functions along an axis at source cost: ``np.sort``, ``np.argsort``, ``np.cumsum``,
``np.cumprod``, ``np.diff``, ``np.median``, ``np.nanmedian`` and ``np.unique``.

A view repeats its source along its broadcast axes, so along an axis where the source is
**not** repeated, each lane of the view is a lane of the source: the function runs on the
source and the result is broadcast again. Along a **repeated** axis the lane holds one value:

- sorting it changes nothing (``np.sort`` returns the view's values; a stable ``np.argsort``
  is ``0, 1, 2, ...``);
- its differences are ``x - x``, computed once from ``n + 1`` copies (``inf - inf`` stays
  NaN, as NumPy computes it);
- a median over it is the source's: every source value is repeated the same number of times,
  and the middle of such a sorted sequence holds the source's middle values;
- ``np.unique`` sees each source value ``k`` times: the source's unique values, and its
  counts times ``k``.

Scans along a repeated axis (``np.cumsum``: ``x, 2x, 3x, ...``) repeat nothing, and neither do
``axis=None`` sorts and scans (a flat result): those, ``out=``, ``order=``, ``prepend=`` /
``append=``, ``return_index`` / ``return_inverse``, non-stable ``argsort`` along a repeated
axis and empty views run in NumPy on the zero-copy ``np.asarray(view)``, as before.

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.array([3, 1, 2]), (1000, 3))
>>> np.sort(v, axis=1).source, np.cumsum(v, axis=1).source
(array([[1, 2, 3]]), array([[3, 4, 6]]))
>>> np.median(v), np.unique(v, return_counts=True)
(np.float64(2.0), (array([1, 2, 3]), array([1000, 1000, 1000])))
>>> np.diff(v, axis=0).source
array([[0, 0, 0]])
"""

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from lazybcast._reductions import _axes, _finish
from lazybcast._view import BroadcastView, make_view

__all__ = ["argsort", "cumprod", "cumsum", "diff", "median", "nanmedian", "sort", "unique"]

_NoValue = np._NoValue


def _axis(view, axis):
    """The normalized ``axis`` of a non-empty view with axes, or None (NumPy decides, and
    raises for a bad axis)."""
    if type(view) is not BroadcastView or view.ndim == 0 or view.size == 0 or axis is None:
        return None
    try:
        return normalize_axis_index(axis, view.ndim)
    except (TypeError, ValueError):
        return None


def _repeated(view, axis):
    """True when the view repeats one value along ``axis`` (of size > 1)."""
    return view._source.shape[axis] == 1 and view.shape[axis] > 1


def _lazy(result, view):
    """``result`` (the function of the source, same rank) broadcast to the view's shape."""
    return make_view(result, result.shape, view.shape, "numpy")


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.sort`` along an axis: the source's sort, or the view itself along a repeated
    axis."""
    ax = _axis(a, axis)
    if ax is None or order is not None:
        return NotImplemented
    if _repeated(a, ax):
        return a
    extra = {} if stable is None else {"stable": stable}
    return _lazy(np.sort(a._source, axis=ax, kind=kind, **extra), a)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.argsort`` along an axis: the source's, or ``0, 1, 2, ...`` along a repeated axis
    when the sort is stable (another sort may order equal values otherwise: NumPy's)."""
    ax = _axis(a, axis)
    if ax is None or order is not None:
        return NotImplemented
    if _repeated(a, ax):
        if not (stable or kind in ("stable", "mergesort")):
            return NotImplemented
        shape = tuple(n if d == ax else 1 for d, n in enumerate(a.shape))
        return _lazy(np.arange(a.shape[ax], dtype=np.intp).reshape(shape), a)
    extra = {} if stable is None else {"stable": stable}
    return _lazy(np.argsort(a._source, axis=ax, kind=kind, **extra), a)


def _scan(func, a, axis, dtype, out):
    ax = _axis(a, axis)
    if ax is None or out is not None or _repeated(a, ax):
        return NotImplemented
    return _lazy(func(a._source, axis=ax, dtype=dtype), a)


def cumsum(a, axis=None, dtype=None, out=None):
    """``np.cumsum`` along an axis the view does not repeat: the source's."""
    return _scan(np.cumsum, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """``np.cumprod`` along an axis the view does not repeat: the source's."""
    return _scan(np.cumprod, a, axis, dtype, out)


def diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    """``np.diff``: the source's along an axis it does not repeat; along a repeated axis of
    size ``k``, the differences of ``n + 1`` copies (``k - n`` repeats of them)."""
    ax = _axis(a, axis)
    if (ax is None or prepend is not _NoValue or append is not _NoValue
            or not isinstance(n, (int, np.integer)) or n <= 0):
        return NotImplemented
    src = a._source
    if not _repeated(a, ax):
        r = np.diff(src, n=n, axis=ax)
        return make_view(r, r.shape, a.shape[:ax] + (r.shape[ax],) + a.shape[ax + 1:], "numpy")
    k = a.shape[ax]
    piece = np.broadcast_to(src, src.shape[:ax] + (min(k, n + 1),) + src.shape[ax + 1:])
    r = np.diff(piece, n=n, axis=ax)  # length 1 (or 0 when k <= n) along the axis
    return make_view(r, r.shape, a.shape[:ax] + (max(k - n, 0),) + a.shape[ax + 1:], "numpy")


def _median(func, a, axis, out, overwrite_input, keepdims):
    if (type(a) is not BroadcastView or out is not None or a.ndim == 0 or a.size == 0
            or a.dtype.kind not in "biufc"):
        return NotImplemented
    try:
        axes = _axes(axis, a.ndim)
    except (TypeError, ValueError):
        return NotImplemented
    # (overwrite_input is ignored: the source is the caller's array, never written.)
    r = func(a._source, axis=axes, keepdims=True)
    return _finish(np.asarray(r), a, axes, bool(keepdims), None)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``np.median`` over any axes: the source's (repeated axes drop out)."""
    return _median(np.median, a, axis, out, overwrite_input, keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=_NoValue):
    """``np.nanmedian`` over any axes: the source's (NaNs repeat as often as the rest)."""
    return _median(np.nanmedian, a, axis, out, overwrite_input,
                   False if keepdims is _NoValue else keepdims)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           **kwargs):
    """``np.unique`` of the flattened view: the source's unique values, and its counts times
    the number of times the view repeats each source element."""
    if (type(ar) is not BroadcastView or return_index or return_inverse or axis is not None
            or ar.size == 0 or (kwargs.get("equal_nan", True) is False and ar.dtype.kind in "fc")):
        return NotImplemented  # (equal_nan=False lists every NaN: k times as many)
    src = ar._source
    result = np.unique(src, return_counts=return_counts, **kwargs)
    if not return_counts:
        return result
    values, counts = result
    return values, counts * (ar.size // src.size)
