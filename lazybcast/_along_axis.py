"""NumPy functions along an axis at source cost: ``np.sort``, ``np.argsort``, ``np.cumsum``,
``np.cumprod`` (and ``ufunc.accumulate``, ``np.cumulative_sum``, ``np.cumulative_prod``),
``np.diff``, ``np.gradient``, ``np.median``, ``np.nanmedian``, the quantiles
(``np.percentile``, ``np.quantile`` and their ``nan`` variants) and ``np.unique``.

A view repeats its source along its broadcast axes, so along an axis where the source is
**not** repeated, each lane of the view is a lane of the source: the function runs on the
source and the result is broadcast again. Along a **repeated** axis the lane holds one value:

- sorting it changes nothing (``np.sort`` returns the view's values; a stable ``np.argsort``
  is ``0, 1, 2, ...``);
- its differences are ``x - x``, computed once from ``n + 1`` copies (``inf - inf`` stays
  NaN, as NumPy computes it); its gradient, and a scan along it, are NumPy's on the source
  stretched along that axis alone (the other broadcast axes still repeat);
- a median over it is the source's: every source value is repeated the same number of times,
  and the middle of such a sorted sequence holds the source's middle values (for an even
  number of repeats, the source's values twice: NumPy then averages a middle value with
  itself, which overflows where it does);
- a quantile over axes none of which repeats is the source lane's; where a reduced axis
  repeats, each source value is ``k`` times in its lane, and NumPy's linear method (the
  default) reads that lane at two places, computed from the source's sorted lane
  (:func:`_mixed_lanes`, as NumPy rounds; the NaN variants read each lane at the places
  of its own count of values that are not NaN). Where every reduced axis repeats, the other
  methods are NumPy's quantile of two copies of the value: each of them joins equal
  neighbours into the same value whatever their count (``inf - inf`` is NaN in the
  interpolating ones at any count); a lane that mixes both goes to NumPy with them. Sources
  holding ``-0.0`` go to NumPy (where NumPy's partition puts ``-0.0`` among equal ``0.0``,
  and the sign of a zero's quantile, ``-0.0 + 0.0`` being ``0.0``, depend on the count);
- ``np.unique`` sees each source value ``k`` times: the source's unique values, and its
  counts times ``k``.

A scan along a repeated axis (``np.cumsum``: ``x, x + x, ...``) does not repeat along it: it
is NumPy's scan of the source stretched along that axis only (the view's other broadcast axes
still repeat). ``axis=None`` sorts and scans repeat nothing (a flat result): those, ``out=``, ``order=``, ``prepend=`` /
``append=``, ``overwrite_input=True``, ``return_index`` / ``return_inverse``, ``np.unique``
of dtypes whose values may differ from themselves (objects, structured, datetimes; floats
with ``equal_nan=False``) or with ``sorted=False``, non-stable ``argsort`` along a repeated
axis, object sorts along one, float16 ``nanmedian`` and empty views run in NumPy on the
zero-copy ``np.asarray(view)``, as before. (``np.unique`` of ``0.0`` and ``-0.0`` may keep the
other zero than NumPy does: which one NumPy keeps depends on its sort.)

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.array([3, 1, 2]), (1000, 3))
>>> np.sort(v, axis=1).source, np.cumsum(v, axis=1).source
(array([[1, 2, 3]]), array([[3, 4, 6]]))
>>> np.median(v), np.unique(v, return_counts=True)
(np.float64(2.0), (array([1, 2, 3]), array([1000, 1000, 1000])))
>>> np.diff(v, axis=0).source
array([[0, 0, 0]])
"""

import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from lazybcast._axis_args import _axes
from lazybcast._reductions import _finish, _repeats
from lazybcast._reductions import _repeated as _repeated_axes
from lazybcast._view import BroadcastView, make_view

__all__ = ["accumulate", "apply_along_axis", "apply_over_axes", "argsort", "cumprod", "cumsum",
           "cumulative_prod", "cumulative_sum", "diff", "gradient", "median", "nanmedian",
           "nanpercentile", "nanquantile", "percentile", "quantile", "sort", "unique"]

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


def _order_axes(a, axis, out, overwrite_input):
    """The reduced axes of a median or quantile computed on the source, or None for NumPy's
    own (not a view, ``out=``, ``overwrite_input``, 0-d or empty views, non-numbers, a bool or
    invalid axis). NumPy's medians and quantiles take a list of axes; its reductions do not."""
    if (type(a) is not BroadcastView or out is not None or overwrite_input or a.ndim == 0
            or a.size == 0 or type(axis) is bool or a.dtype.kind not in "biufc"):
        return None
    try:
        return _axes(tuple(axis) if type(axis) is list else axis, a.ndim)
    except (TypeError, ValueError):
        return None


def _median(func, a, axis, out, overwrite_input, keepdims):
    axes = _order_axes(a, axis, out, overwrite_input)
    if axes is None or (func is np.nanmedian and a.dtype.kind == "f" and a.dtype.itemsize == 2):
        # (float16 nanmedian: NumPy averages the middle values by a method that depends on
        # the array's size, and the source's size is not the view's.)
        return NotImplemented
    src = a._source
    k = _repeats(a, src, axes)
    if k % 2 == 0:
        # Each value k times, k even: NumPy's middle pair is (b, b) where the source's
        # middle is one b, and it averages them (b + b may overflow). Any even multiplicity
        # has the same middle pair as 2: the source twice along a reduced axis.
        src = np.concatenate([src, src], axis=axes[0])
    r = func(src, axis=axes, keepdims=True)
    return _finish(np.asarray(r), a, axes, keepdims is not _NoValue and bool(keepdims), None)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``np.median`` over any axes: the source's (repeated axes drop out)."""
    return _median(np.median, a, axis, out, overwrite_input, keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=_NoValue):
    """``np.nanmedian`` over any axes: the source's (NaNs repeat as often as the rest)."""
    return _median(np.nanmedian, a, axis, out, overwrite_input,
                   False if keepdims is _NoValue else keepdims)


def _quantile(func, a, q, axis, out, overwrite_input, method, keepdims, weights,
              interpolation):
    """``func(a, q, ...)`` for NumPy's quantile functions: the source's lanes where no
    reduced axis repeats; where every reduced axis repeats, each lane is one value ``k``
    times, and every method of NumPy's joins equal neighbours into the same value whatever
    ``k`` is (``inf`` minus itself is NaN for all ``k``): the source twice along those axes.
    NotImplemented (NumPy's, on the zero-copy arrays) when a lane mixes both, and for
    ``out=``, ``weights=``, the deprecated ``interpolation=`` and empty views."""
    axes = _order_axes(a, axis, out, overwrite_input)
    if axes is None or weights is not None or interpolation is not None:
        return NotImplemented
    if func in (np.nanquantile, np.nanpercentile) and np.ndim(q) > 1:
        return NotImplemented  # (NumPy's NaN quantiles place a q of 2+ axes by their own rule)
    src = a._source
    repeated = _repeated_axes(a, src, axes)
    nan_variant = func in (np.nanquantile, np.nanpercentile)
    if repeated and src.dtype.kind == "f" and np.any(np.signbit(src) & (
            (src == 0) | (np.isnan(src) & (not nan_variant)))):
        # (-0.0 == 0.0, and NaNs of either sign: which of them NumPy's partition puts where
        # is its own; and the sign of a zero's quantile depends on the count, -0.0 + 0.0
        # being 0.0. The NaN variants drop the NaNs.)
        return NotImplemented
    r = _mixed_lanes(func, src, q, axes, _repeats(a, src, axes), method) if repeated else None
    if r is NotImplemented:
        if any(src.shape[d] > 1 for d in axes):
            return r  # (each source value k times in a lane of several values)
        r = np.asarray(func(np.broadcast_to(src, tuple(2 if d in repeated else n for d, n
                                                       in enumerate(src.shape))),
                            q, axis=axes, method=method, keepdims=True))
    elif r is None:
        r = np.asarray(func(src, q, axis=axes, method=method, keepdims=True))
    lead = r.ndim - a.ndim  # (q's axes come first)
    if keepdims:
        shape = r.shape[:lead] + tuple(1 if d in axes else n for d, n in enumerate(a.shape))
    else:
        r = r.reshape(r.shape[:lead] + tuple(n for d, n in enumerate(r.shape[lead:])
                                             if d not in axes))
        shape = r.shape[:lead] + tuple(n for d, n in enumerate(a.shape) if d not in axes)
    if not shape:
        return r[()]
    return make_view(r, r.shape, shape, "numpy")


def _mixed_lanes(func, src, q, axes, k, method):
    """NumPy's linear quantile (its default method) over lanes in which each value of the
    source's lane appears ``k`` times, from the source's sorted lanes, in NumPy's layout
    (``q``'s axes, then ``src``'s with the reduced ones 1), or NotImplemented.

    The sorted lane of ``N = n * k`` values holds ``t[i // k]`` at ``i`` (``t`` the source's
    ``n`` values sorted, NaN last), and NumPy's linear method reads it at two indices only:
    the steps below are those of NumPy's ``_quantile`` and ``_lerp`` (NumPy 2.0-2.5), with
    the same operands, so they round alike. Left to NumPy (on the zero-copy array): other
    methods, dtypes other than float64, integers and bools (whose quantiles NumPy 2.0 and
    2.4 compute alike only there), a ``q`` other than float64 (and integers for the
    percentiles: NumPy 2.4 takes the item of an integer quantile without interpolating, 2.0
    interpolates, and 2.0 widens a float32 percentile), a ``q`` out of range (NumPy's error),
    and sources whose values are more than the dtype's range apart or hold an infinity
    (:func:`_may_overflow`).

    The NaN variants of lanes holding NaNs: NumPy drops a lane's NaNs and takes the linear
    quantile of the ``m * k`` values left (``m`` of the source's lane), lane by lane, each
    lane's count its own; here every lane at once with its own count. A lane of NaNs only
    gives NaN with NumPy's "All-NaN slice encountered" warning (once, where NumPy warns
    once per such lane: the same under every warnings filter but "always")."""
    kind = src.dtype.kind
    if method != "linear" or not (kind in "biu" or src.dtype == np.float64):
        return NotImplemented
    nan_variant = func in (np.nanquantile, np.nanpercentile)
    percent = func in (np.percentile, np.nanpercentile)
    q0 = np.asanyarray(q)
    if q0.dtype != np.float64 and not (percent and q0.dtype.kind in "iu"):
        return NotImplemented  # (NumPy 2.0 divides a float32 q by a float64 100; 2.4 not)
    qa = np.asanyarray(np.true_divide(q0, 100)) if percent else q0
    if qa.size == 0 or not (np.all(qa >= 0) and np.all(qa <= 1)):
        return NotImplemented
    if _may_overflow(src):
        return NotImplemented
    kept = [d for d in range(src.ndim) if d not in axes]
    lanes = np.transpose(src, kept + list(axes)).reshape([src.shape[d] for d in kept] + [-1])
    t = np.moveaxis(np.sort(lanes, axis=-1), -1, 0)  # (n, kept...): NumPy's arr, compacted
    if nan_variant and kind == "f" and np.isnan(t[-1]).any():
        # NumPy drops each lane's NaNs: a count per lane; a lane of NaNs only is NaN
        count = t.shape[0] - np.count_nonzero(np.isnan(t), axis=0)
        empty = count == 0
        if empty.any():
            warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=5)
        r = _linear(t, qa, k, count.astype(np.intp))
        if empty.any():
            np.copyto(r, np.nan, where=empty)
    else:
        r = _linear(t, qa, k, t.shape[0])
        if kind == "f":  # a lane with a NaN: NaN, its sorted last value
            nans = np.isnan(t[-1])
            if nans.any():
                np.copyto(r, t[-1], where=nans)
    return r.reshape(qa.shape + tuple(1 if d in axes else n for d, n in enumerate(src.shape)))


def _linear(t, qa, k, n):
    """NumPy's linear quantiles ``qa`` of lanes whose sorted values are ``t`` (along axis 0,
    each value ``k`` times in the view): of the first ``n`` values of every lane (an int), or
    of each lane's own count (an array of the lanes' shape: the NaN variants). The steps of
    NumPy's ``_get_indexes``, ``_get_gamma`` and ``_lerp`` on the same operands, so that
    they round alike; ``(q's axes, lanes...)``."""
    lanes = t.shape[1:]
    each = type(n) is not int  # (an array, 0-d for a single lane: axis=None)
    n_total = n * k
    # _get_indexes: NumPy's (n - 1) * q, with n the lane's count
    vi = np.asanyarray((n_total - 1) * (qa.reshape(qa.shape + (1,) * len(lanes)) if each
                                        else qa))
    previous = np.asanyarray(np.floor(vi))
    following = np.asanyarray(previous + 1)
    above = vi >= n_total - 1
    if above.any():
        previous[above] = -1
        following[above] = -1
    previous = previous.astype(np.intp)
    following = following.astype(np.intp)
    if each:
        n_safe = np.maximum(n_total, 1)  # (a lane of no values: any index, its result is NaN)

        def at(index):  # t[index // k] in each lane, -1 its last counted value
            flat = ((index % n_safe) // k).reshape((-1,) + lanes)
            return np.take_along_axis(t, flat, axis=0).reshape(vi.shape)
    else:
        def at(index):
            return t[(index % n_total) // k]  # (q's axes, lanes...)
    lower, upper = at(previous), at(following)
    # _get_gamma, then _lerp
    gamma = np.asanyarray(np.asanyarray(vi - previous), dtype=vi.dtype)
    if not each:
        gamma = gamma.reshape(vi.shape + (1,) * len(lanes))
    diff = np.subtract(upper, lower)
    r = np.asanyarray(np.add(lower, diff * gamma))
    np.subtract(upper, diff * (1 - gamma), out=r, where=gamma >= 0.5, casting="unsafe",
                dtype=type(r.dtype))
    return r


def _may_overflow(src):
    """Whether the difference of two values of ``src`` may overflow, or be an infinity's:
    NumPy's interpolation then warns, worded by the version (scalars, from NumPy 2.4: "in
    scalar subtract") and by whether its result is a scalar, which only NumPy itself says."""
    if src.dtype.kind == "b":
        return False
    if src.dtype.kind in "iu":
        return int(src.max()) - int(src.min()) > np.iinfo(src.dtype).max
    hi, lo = np.fmax.reduce(src, axis=None), np.fmin.reduce(src, axis=None)  # (NaN: ignored)
    with np.errstate(all="ignore"):
        return not np.isnan(hi) and not np.isfinite(hi - lo)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """``np.percentile`` at source cost where it can be (see :func:`_quantile`)."""
    return _quantile(np.percentile, a, q, axis, out, overwrite_input, method, keepdims,
                     weights, interpolation)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """``np.quantile`` at source cost where it can be (see :func:`_quantile`)."""
    return _quantile(np.quantile, a, q, axis, out, overwrite_input, method, keepdims,
                     weights, interpolation)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=_NoValue, *, weights=None, interpolation=None):
    """``np.nanpercentile`` at source cost where it can be (see :func:`_quantile`)."""
    return _quantile(np.nanpercentile, a, q, axis, out, overwrite_input, method,
                     False if keepdims is _NoValue else keepdims, weights, interpolation)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=_NoValue, *, weights=None, interpolation=None):
    """``np.nanquantile`` at source cost where it can be (see :func:`_quantile`)."""
    return _quantile(np.nanquantile, a, q, axis, out, overwrite_input, method,
                     False if keepdims is _NoValue else keepdims, weights, interpolation)


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
