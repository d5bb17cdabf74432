"""NumPy's medians and quantiles at source cost: ``np.median``, ``np.nanmedian``,
``np.percentile``, ``np.quantile`` and their ``nan`` variants, over any axes of a view.

A view repeats its source along its broadcast axes, so along the reduced axes each lane holds
the source lane's values, each the same number ``k`` of times:

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

``out=``, ``overwrite_input=True``, float16 ``nanmedian``, 0-d and empty views and views of
non-numbers run in NumPy on the zero-copy ``np.asarray(view)``.

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.array([3, 1, 2]), (1000, 3))
>>> np.median(v), np.quantile(v, 0.5, axis=0).source
(np.float64(2.0), array([3., 1., 2.]))
"""

import warnings

import numpy as np

from lazybcast._axis_args import _axes
from lazybcast._reductions import _finish, _repeats
from lazybcast._reductions import _repeated as _repeated_axes
from lazybcast._view import BroadcastView, make_view

__all__ = ["median", "nanmedian", "nanpercentile", "nanquantile", "percentile", "quantile"]

_NoValue = np._NoValue


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
