"""NumPy functions along an axis at source cost: ``np.sort``, ``np.argsort``, ``np.cumsum``,
``np.cumprod`` (and ``ufunc.accumulate``, ``np.cumulative_sum``, ``np.cumulative_prod``),
``np.diff``, ``np.gradient``, ``np.apply_along_axis``, ``np.apply_over_axes`` and
``np.unique``. Medians and quantiles, which reduce along axes, are in
:mod:`lazybcast._quantiles`.

A view repeats its source along its broadcast axes, so along an axis where the source is
**not** repeated, each lane of the view is a lane of the source: the function runs on the
source and the result is broadcast again. Along a **repeated** axis the lane holds one value:

- sorting it changes nothing (``np.sort`` returns the view's values; a stable ``np.argsort``
  is ``0, 1, 2, ...``);
- its differences are ``x - x``, computed once from ``n + 1`` copies (``inf - inf`` stays
  NaN, as NumPy computes it); its gradient, and a scan along it, are NumPy's on the source
  stretched along that axis alone (the other broadcast axes still repeat);
- ``np.unique`` sees each source value ``k`` times: the source's unique values, and its
  counts times ``k``.

A scan along a repeated axis (``np.cumsum``: ``x, x + x, ...``) does not repeat along it: it
is NumPy's scan of the source stretched along that axis only (the view's other broadcast axes
still repeat). ``axis=None`` sorts and scans repeat nothing (a flat result): those, ``out=``,
``order=``, ``prepend=`` / ``append=``, ``return_index`` / ``return_inverse``, ``np.unique`` of
dtypes whose values may differ from themselves (objects, structured, datetimes; floats with
``equal_nan=False``) or with ``sorted=False``, non-stable ``argsort`` along a repeated axis,
object sorts along one and empty views run in NumPy on the zero-copy ``np.asarray(view)``, as
before. (``np.unique`` of ``0.0`` and ``-0.0`` may keep the other zero than NumPy does: which
one NumPy keeps depends on its sort.)

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.array([3, 1, 2]), (1000, 3))
>>> np.sort(v, axis=1).source, np.cumsum(v, axis=1).source
(array([[1, 2, 3]]), array([[3, 4, 6]]))
>>> np.unique(v, return_counts=True)
(array([1, 2, 3]), array([1000, 1000, 1000]))
>>> np.diff(v, axis=0).source
array([[0, 0, 0]])
"""

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from lazybcast._reductions import _repeats
from lazybcast._view import BroadcastView, make_view

__all__ = ["accumulate", "apply_along_axis", "apply_over_axes", "argsort", "cumprod", "cumsum",
           "cumulative_prod", "cumulative_sum", "diff", "gradient", "sort", "unique"]

_NoValue = np._NoValue


def _axis(view, axis):
    """The normalized ``axis`` of a non-empty view with axes, or None (NumPy decides, and
    raises for a bad axis)."""
    if (type(view) is not BroadcastView or view.ndim == 0 or view.size == 0 or axis is None
            or type(axis) is bool):  # (NumPy refuses a bool axis)
        return None
    try:
        return normalize_axis_index(axis, view.ndim)
    except (TypeError, ValueError):
        return None


def _repeated(view, axis):
    """True when the view repeats one value along ``axis`` (of size > 1)."""
    return _repeats(view, view._source, (axis,)) > 1


def _lazy(result, view):
    """``result`` (the function of the source, same rank) broadcast to the view's shape."""
    return make_view(result, result.shape, view.shape, "numpy")


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.sort`` along an axis: the source's sort (along a repeated axis, of one item per
    lane: a copy of the source, NumPy's checks of ``kind`` and ``stable`` made)."""
    ax = _axis(a, axis)
    if ax is None or order is not None or (a.dtype.kind == "O" and _repeated(a, ax)):
        return NotImplemented  # (objects: NumPy compares the repeats, and may raise)
    extra = {} if stable is None else {"stable": stable}
    return _lazy(np.sort(a._source, axis=ax, kind=kind, **extra), a)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.argsort`` along an axis: the source's, or ``0, 1, 2, ...`` along a repeated axis
    when the sort is stable (another sort may order equal values otherwise: NumPy's)."""
    ax = _axis(a, axis)
    if ax is None or order is not None:
        return NotImplemented
    extra = {} if stable is None else {"stable": stable}
    r = np.argsort(a._source, axis=ax, kind=kind, **extra)  # (also NumPy's argument checks)
    if _repeated(a, ax):
        if not (stable or kind in ("stable", "mergesort")) or a.dtype.kind == "O":
            return NotImplemented
        shape = tuple(n if d == ax else 1 for d, n in enumerate(a.shape))
        return _lazy(np.arange(a.shape[ax], dtype=np.intp).reshape(shape), a)
    return _lazy(r, a)


def accumulate(ufunc, array, axis=0, dtype=None, out=None):
    """``ufunc.accumulate`` along an axis: the source's (:func:`_scan`)."""
    return _scan(ufunc.accumulate, array, axis, dtype, out)


def _scan(func, a, axis, dtype, out):
    """The scan of the source along ``ax``; along a repeated axis (``x, x + x, ...``), the
    scan of the source stretched along that axis alone (stride 0: NumPy's own loop over the
    same values, lane by lane), so the view's other broadcast axes still repeat."""
    _refuse_0d_out(a, out)
    ax = _axis(a, axis)
    if ax is None or out is not None:
        return NotImplemented
    return _lazy(func(_stretched(a, ax), axis=ax, dtype=dtype), a)


def _refuse_0d_out(a, out):
    """NumPy's error for an ``out`` of the wrong size for the scan of a 0-d view (a scan of
    one value gives a vector of one). NumPy 2.0-2.4 miss a 0-d ``out`` and crash the
    interpreter writing past it (``np.cumsum(np.asarray(3.0), out=np.empty(()))``)."""
    if (out is not None and type(a) is BroadcastView and a.ndim == 0
            and isinstance(out, np.ndarray) and out.shape != (1,)):
        raise ValueError("provided out is the wrong size for the accumulation.")


def _stretched(a, ax):
    """The view's source, stretched (stride 0) to the view's length along ``ax``."""
    src = a._source
    if _repeated(a, ax):
        src = np.broadcast_to(src, src.shape[:ax] + (a.shape[ax],) + src.shape[ax + 1:])
    return src


def cumsum(a, axis=None, dtype=None, out=None):
    """``np.cumsum`` along an axis: the source's (:func:`_scan`)."""
    return _scan(np.cumsum, a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """``np.cumprod`` along an axis: the source's (:func:`_scan`)."""
    return _scan(np.cumprod, a, axis, dtype, out)


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """``np.cumulative_sum`` (NumPy 2.1's array-API scan) along an axis: the source's
    (:func:`_scan`), the initial zeros included if asked."""
    return _cumulative(np.cumulative_sum, x, axis, dtype, out, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """``np.cumulative_prod`` along an axis: the source's, as :func:`cumulative_sum`."""
    return _cumulative(np.cumulative_prod, x, axis, dtype, out, include_initial)


def _cumulative(func, x, axis, dtype, out, include_initial):
    _refuse_0d_out(x, out)
    if axis is None and type(x) is BroadcastView and x.ndim == 1:
        axis = 0  # (NumPy's default, for one axis only)
    ax = _axis(x, axis)
    if ax is None or out is not None:
        return NotImplemented
    r = func(_stretched(x, ax), axis=ax, dtype=dtype, include_initial=include_initial)
    return make_view(r, r.shape, x.shape[:ax] + (r.shape[ax],) + x.shape[ax + 1:], "numpy")


def gradient(f, *varargs, axis=None, edge_order=1):
    """``np.gradient`` of a view: along each axis, NumPy's gradient of the source stretched
    along that axis alone (its differences per lane, elementwise: NumPy's values; zeros along
    a repeated axis, which repeat along it too for even spacing and ``edge_order=1``), a view
    that still repeats along the other broadcast axes. Where NumPy raises (spacings, sizes,
    ``edge_order``), its own call raises."""
    if type(f) is not BroadcastView or f.ndim == 0 or f.size == 0:
        return NotImplemented
    spacings = _spacings(f, axis, varargs, edge_order)
    if spacings is None:
        return NotImplemented  # (NumPy's error, raised before it computes anything)
    out = []
    for ax, dx in spacings:  # (an axis too short raises here, after the ones before, as NumPy)
        if edge_order == 1 and _repeated(f, ax) and all(
                np.ndim(d) == 0 and not np.iscomplexobj(d) for d in dx):
            # ``(x - x) / (2 dx)`` inside, ``(x - x) / dx`` at the ends: one zero (or NaN)
            # all along, so three copies give it, kept once (the axis still repeats). (Not
            # for a complex spacing: 0 / (2 dx) is NaN where 2 dx overflows, 0 / dx is not.)
            src = f._source
            src = np.broadcast_to(src, src.shape[:ax] + (min(3, f.shape[ax]),)
                                  + src.shape[ax + 1:])
            g = np.gradient(src, *dx, axis=ax, edge_order=1)
            g = g[(slice(None),) * ax + (slice(0, 1),)].copy()
        else:
            g = np.gradient(_stretched(f, ax), *dx, axis=ax, edge_order=edge_order)
        out.append(make_view(g, g.shape, f.shape, "numpy"))
    return out[0] if len(out) == 1 else tuple(out)


def _spacings(f, axis, varargs, edge_order):
    """``[(axis, its spacing arguments)]`` for ``np.gradient``, or None where NumPy refuses
    the axes, the spacings or ``edge_order`` before computing anything (its checks)."""
    try:
        axes = tuple(range(f.ndim)) if axis is None else normalize_axis_tuple(axis, f.ndim)
        if not axes or edge_order > 2:
            return None
    except (TypeError, ValueError):
        return None
    if not varargs or (len(varargs) == 1 and np.ndim(varargs[0]) == 0):
        return [(ax, varargs) for ax in axes]
    if len(varargs) != len(axes):
        return None
    for ax, d in zip(axes, varargs):
        d = np.asanyarray(d)
        if d.ndim > 1 or (d.ndim == 1 and len(d) != f.shape[ax]):
            return None
        if d.ndim == 1:
            try:  # (NumPy's own look at the coordinates: one of them alone raises)
                diffx = np.diff(d.astype(np.float64) if d.dtype.kind in "iu" else d)
                (diffx == diffx[0]).all()
            except Exception:  # noqa: BLE001 - NumPy raises it again, first
                return None
    return [(ax, (d,)) for ax, d in zip(axes, varargs)]


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``np.apply_along_axis`` of a view: ``func1d`` runs on the lanes of the source stretched
    along ``axis`` (read-only, as the lanes of ``np.broadcast_to`` are), once per distinct
    lane: lanes along the view's other broadcast axes are equal, and the result repeats
    there. (A function with side effects sees fewer calls than NumPy makes: one per lane of
    the source, in NumPy's order.) Results of another array type than ndarray are NumPy's."""
    if type(arr) is not BroadcastView or arr.size == 0:
        return NotImplemented
    try:
        ax = normalize_axis_index(axis, arr.ndim)
    except (TypeError, ValueError):
        return NotImplemented
    src = _stretched(arr, ax).view()
    src.flags.writeable = False  # (func1d must not write into the caller's source)
    r = np.apply_along_axis(func1d, ax, src, *args, **kwargs)
    if type(r) is not np.ndarray:
        return NotImplemented  # (a subclass wraps NumPy's own result; recomputed there)
    new = r.ndim - arr.ndim + 1  # (the axes of func1d's result, in place of ``axis``)
    full = arr.shape[:ax] + r.shape[ax:ax + new] + arr.shape[ax + 1:]
    return make_view(r, r.shape, full, "numpy")


def apply_over_axes(func, a, axes):
    """``np.apply_over_axes`` of a view: NumPy's steps with the view itself in place of
    ``np.asarray(a)``, so each ``func(val, axis)`` (a reduction: at source cost) gets a view
    and the result is one."""
    if type(a) is not BroadcastView:
        return NotImplemented
    val = a
    if np.array(axes).ndim == 0:
        axes = (axes,)
    for axis in axes:
        if axis < 0:
            axis = a.ndim + axis
        res = func(val, axis)
        if res.ndim != val.ndim:
            res = np.expand_dims(res, axis)
            if res.ndim != val.ndim:
                raise ValueError("function is not returning an array of the correct shape")
            if type(res) is np.ndarray:  # (a NumPy scalar expanded: a view again)
                res = make_view(res, res.shape, res.shape, "numpy")
        val = res
    return val


def diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    """``np.diff``: the source's along an axis it does not repeat; along a repeated axis of
    size ``k``, the differences of ``n + 1`` copies (``k - n`` repeats of them)."""
    ax = _axis(a, axis)
    if (ax is None or prepend is not _NoValue or append is not _NoValue
            or not isinstance(n, (int, np.integer)) or n <= 0):
        return NotImplemented
    src = a._source
    if _repeated(a, ax):
        k = a.shape[ax]
        src = np.broadcast_to(src, src.shape[:ax] + (min(k, n + 1),) + src.shape[ax + 1:])
    r = np.diff(src, n=n, axis=ax)  # (along a repeated axis: length 1, or 0 when k <= n)
    return make_view(r, r.shape, a.shape[:ax] + (max(a.shape[ax] - n, 0),) + a.shape[ax + 1:],
                     "numpy")


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           **kwargs):
    """``np.unique`` of the flattened view: the source's unique values, and its counts times
    the number of times the view repeats each source element."""
    if (type(ar) is not BroadcastView or return_index or return_inverse or axis is not None
            or ar.size == 0 or ar.dtype.kind not in "biufcSU" or not kwargs.get("sorted", True)
            or (ar.dtype.kind in "fc" and not kwargs.get("equal_nan", True))):
        # Values not equal to themselves (NaN with equal_nan=False, NaN objects or fields,
        # NaT) are listed once per repeat; an unsorted order is NumPy's to choose.
        return NotImplemented
    src = ar._source
    result = np.unique(src, return_counts=return_counts, **kwargs)
    if not return_counts:
        return result
    values, counts = result
    return values, counts * (ar.size // src.size)
