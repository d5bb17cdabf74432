"""Means, variances and standard deviations of views at source cost.

Repeating every value of a lane alike leaves its mean unchanged, and its variance too when the
divisor counts the repeats: the logical count ``N`` of a reduced cell is the source's count
``m`` times the repeats ``k``, and ``ddof`` applies to ``N`` (``var`` divides the source's sum
of squared deviations by ``m - ddof / k``, the same quotient as NumPy's ``k * S / (N - ddof)``).
float16/32 and complex64 are computed in float64 (complex128) on the small source and rounded
once, as the sums of :mod:`lazybcast._reductions` are.

A ``where=`` mask that repeats with the view is applied on their joint compact shape, as the
reductions apply it (:func:`lazybcast._masks.masked`: the repeats count only where the mask is set,
the quotients are unchanged). Other masks, a precomputed ``mean=``, object dtypes and 0-d
views run in NumPy on the zero-copy ``np.asarray(view)``.

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.array([1.0, 2.0, 6.0]), (1000, 3))
>>> v.mean(), v.var(ddof=1), mean(v, axis=0).source
(np.float64(3.0), np.float64(4.668222740913638), array([1., 2., 6.]))
"""

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from lazybcast._axis_args import _reduction_axes, keepdims_flag
from lazybcast._masks import masked as _masked
from lazybcast._reductions import (_finish, _is_object, _numpy, _out_fits, _repeated,
                                   _repeats, _result_shape, _source, _temp, _whole_call,
                                   reduce)
from lazybcast._repetition import narrow, wide
from lazybcast._ufuncs import _wrap
from lazybcast._view import BroadcastView

__all__ = ["average", "mean", "nanmean", "nanstd", "nanvar", "std", "var"]

_NoValue = np._NoValue

def _in_float64(func, src, axes, dtype, out, real=False, **kwargs):
    """``func(src, axis=axes, dtype=dtype, keepdims=True, **kwargs)`` (into a temporary for
    ``out``), computed in float64 and rounded once when NumPy would compute in float16/32 or
    complex64: the source is small, so the wider pass costs little and is more accurate.
    ``real``: ``func`` is a variance (real for complex data unless ``dtype`` says otherwise)."""
    dt = np.dtype(dtype) if dtype is not None else src.dtype
    if not narrow(dt):
        return func(src, axis=axes, dtype=dtype, keepdims=True, **_temp(src, axes, out),
                    **kwargs)
    w = func(src, axis=axes, dtype=wide(dt), keepdims=True, **kwargs)
    target = np.finfo(dt).dtype if real and dtype is None else dt  # NumPy's dtype
    if target.kind == "f" and w.dtype.kind == "c":
        w = w.real
    if out is not None:
        r = _temp(src, axes, out)["out"]
        np.copyto(r, w, casting="unsafe")
        return r
    return w.astype(target.newbyteorder("="))  # (native order, as NumPy's result)


def mean(view, axis=None, dtype=None, out=None, keepdims=False, *, where=True, name="mean"):
    """``view.mean()``: the source's mean (repeating every value alike leaves it unchanged).

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> mean(lazybcast.broadcast_to(np.array([[1], [2]], dtype=np.int8), (2, 10**6)), axis=0)
    BroadcastView(shape=(1000000,), dtype=float64, mode='numpy', source_shape=(1,), logical=8.0 MB, held=8 B)
    """
    keepdims = keepdims_flag(keepdims)
    if dtype is None and view.dtype.kind in "biufc" and _whole_call(view, axis, out, keepdims,
                                                                    where):
        # view.mean(), the most common call: the source's (in float64 for float16/32 and
        # complex64, rounded once), as the general path below computes it, without its
        # overhead (a 4x4 float32 view, Zen 3: 12.4 -> 6 us; NumPy 5.5 us).
        src = view._source
        func = getattr(np, name)
        if narrow(src.dtype):
            return src.dtype.type(func(src, dtype=wide(src.dtype)))
        return func(src)
    masked = _masked(view, where)
    if (masked is not None and view.ndim > 0 and not _is_object(view, dtype)
            and (dtype is None or view.dtype.kind in "biufc")):
        # (timedelta64 with a dtype=: NumPy's own rules, below; the float path would drop
        # NaT and the unit)
        axes = _moment_axes(name, view, axis)
        if dtype is not None and np.dtype(dtype).kind in "iub":
            # NumPy sums in ``dtype`` (wrapping) over the logical elements, then true_divides
            # by the count (an intp) and casts back: the same steps on the repeated sum.
            # (Into an out, under a mask, or a nanmean of floats: NumPy's own steps; a
            # nanmean of integers is their mean.)
            if (view.size == 0 or masked or out is not None
                    or (name != "mean" and view.dtype.kind not in "biu")):
                return _numpy(name, view, axis=axis, dtype=dtype, out=out,
                              keepdims=keepdims, where=where)
            s = reduce(np.add, view, axis, dtype, None, keepdims)
            count = np.intp(1)
            for d in axes:
                count *= view.shape[d]
            if type(s) is BroadcastView:
                return np.true_divide(s, count).astype(np.dtype(dtype))
            return s.dtype.type(s / count)
        fits = _moment_out_fits(out, _result_shape(view.shape, axes, keepdims))
        if fits and out.dtype.kind == "f" and np.dtype(
                view.dtype if dtype is None else dtype).kind == "c":
            fits = False  # (a complex mean into a real out: NumPy's casting error)
        if fits is not False:
            src, mask = masked or (_source(view, axes), True)
            r = _in_float64(getattr(np, name), src, axes, dtype, out, where=mask)
            return _finish(r, view, axes, keepdims, out)
    return _numpy(name, view, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)


def _moment_out_fits(out, shape):
    """:func:`_reductions._out_fits`, and False (NumPy's own steps) for an ``out`` that is
    not floating or complex: NumPy sums into it first, so the sum wraps or truncates in an
    integer or bool out before it is divided (``np.mean`` of uint8 values 253 into a uint8
    out is 41, not 84), and it refuses times, dates and strings. (A float16 or float32 out
    gets the value computed in float64, rounded once, as for those dtypes themselves.)"""
    fits = _out_fits(out, shape)
    if fits and out.dtype.kind not in "fc":
        return False
    return fits


def _moment_axes(name, view, axis):
    """The reduced axes of ``np.<name>(view)``, or its own error (NumPy's means and variances
    word theirs apart from the ufunc reductions': ``integer argument expected, got float``)."""
    try:
        return _reduction_axes(axis, view.ndim)
    except (TypeError, ValueError):
        getattr(np, name)(np.empty((1,) * view.ndim, view.dtype), axis=axis)
        raise


def _moment(name, view, axis, dtype, out, ddof, keepdims, where, mean, correction):
    keepdims = keepdims_flag(keepdims)
    if correction is not _NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof, correction = correction, _NoValue
    # (An integer dtype=: NumPy's steps wrap over the logical elements; its own, below.)
    masked = _masked(view, where) if mean is _NoValue else None
    if masked is not None and view.ndim > 0 and not _is_object(view, dtype) and (
            dtype is None or np.dtype(dtype).kind not in "biu"):
        axes = _moment_axes(name, view, axis)
        fits = _moment_out_fits(out, _result_shape(view.shape, axes, keepdims))
        if fits is not False:
            src, mask = masked or (_source(view, axes), True)
            k = _repeats(view, src, axes)
            # Logical sum of squares = k * the source's; N = k * m. NumPy divides by N - ddof:
            # dividing the source's by m - ddof / k gives the same quotient (and NumPy's
            # warning when N - ddof <= 0).
            if k > 1 and ddof:
                ddof = ddof / k
            r = _in_float64(getattr(np, name), src, axes, dtype, out, True, ddof=ddof,
                            where=mask)
            return _finish(r, view, axes, keepdims, out)
    return _numpy(name, view, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims,
                  where=where, mean=mean, correction=correction)


def var(view, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=_NoValue, correction=_NoValue):
    """``view.var()`` from the source's moments: the logical count ``N`` is the source's
    count times the repeats, and ``ddof`` applies to ``N``."""
    return _moment("var", view, axis, dtype, out, ddof, keepdims, where, mean, correction)


def std(view, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=_NoValue, correction=_NoValue):
    """``view.std()``: the square root of :func:`var`."""
    return _moment("std", view, axis, dtype, out, ddof, keepdims, where, mean, correction)


def _nan_inexact(view, dtype, out):
    """NumPy's checks of its NaN means and variances, before anything is computed: for a
    floating view, ``dtype=`` and ``out=`` must be floating too (an integer ``out`` would take
    NaN cast to garbage)."""
    if type(view) is BroadcastView and view.dtype.kind in "fc":
        if dtype is not None and not issubclass(np.dtype(dtype).type, np.inexact):
            raise TypeError("If a is inexact, then dtype must be inexact")
        if out is not None and not issubclass(out.dtype.type, np.inexact):
            raise TypeError("If a is inexact, then out must be inexact")


def nanmean(view, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """``np.nanmean(view)``: the source's (NaNs repeat as often as the other values)."""
    _nan_inexact(view, dtype, out)
    return mean(view, axis, dtype, out, keepdims, where=where, name="nanmean")


def nanvar(view, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=_NoValue, correction=_NoValue):
    """``np.nanvar(view)`` from the source's moments (as :func:`var`)."""
    _nan_inexact(view, dtype, out)
    return _moment("nanvar", view, axis, dtype, out, ddof, keepdims, where, mean, correction)


def nanstd(view, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=_NoValue, correction=_NoValue):
    """``np.nanstd(view)`` from the source's moments (as :func:`std`)."""
    _nan_inexact(view, dtype, out)
    return _moment("nanstd", view, axis, dtype, out, ddof, keepdims, where, mean, correction)


def average(a, axis=None, weights=None, returned=False, *, keepdims=_NoValue):
    """``np.average`` of a view: without weights :func:`mean`, and with ``returned=True`` the
    count of elements averaged in each cell, as NumPy computes them; with weights NumPy's
    formula ``sum(a * w) / sum(w)`` on the view, where an axis along which the view repeats
    one value sums its weights first (``sum(x * w) = x * sum(w)``), so the product costs
    the source times the weights, not the logical size. Weighted floating sums may differ
    from NumPy's in the last bits, as :func:`var` does. Object dtypes and empty views are
    NumPy's."""
    if type(a) is not BroadcastView or a.dtype.kind == "O":
        return NotImplemented  # (objects: NumPy's count is a float, which it then refuses)
    if axis is not None:
        try:
            axis = normalize_axis_tuple(axis, a.ndim, argname="axis")
        except (TypeError, ValueError):
            return NotImplemented
    if weights is not None:
        return _weighted(a, axis, weights, returned, keepdims)
    avg = mean(a, axis, keepdims=False if keepdims is _NoValue else keepdims)
    # (a NumPy scalar or a view: both have these; NumPy computes it, and may raise, always)
    scl = avg.dtype.type(a.size / avg.size)
    return (avg, _broadcast(scl, np.shape(avg))) if returned else avg


def _products_are_tame(src, w, dtype):
    """True when ``x * sum(w)`` equals ``sum(x * w)`` up to rounding: finite values and
    weights, and products (and their sums) that cannot overflow ``dtype``. Otherwise the
    special values differ (NumPy's ``inf * 0`` is NaN, where ``inf * sum(w)`` is not)."""
    x = np.abs(np.asarray(src, dtype=dtype))
    a = np.abs(np.asarray(w, dtype=dtype))
    if not (np.isfinite(x).all() and np.isfinite(a).all()):
        return False
    bound = float(x.max(initial=0)) * float(a.sum(dtype=np.float64))
    return bound < float(np.finfo(dtype).max) / 2


def _broadcast(scl, shape):
    """``scl`` (a NumPy scalar or array) as a view of ``shape``, as NumPy's ``returned``
    counts are (NumPy copies them out in full)."""
    if not shape or np.shape(scl) == shape:
        return scl
    return _wrap(np.asarray(scl), shape)


def _weighted(a, axis, weights, returned, keepdims):
    """``np.average(a, axis, weights)`` of a view (see :func:`average`)."""
    w = weights
    if type(w) in (list, tuple):
        w = np.asarray(w)
    if (type(w) not in (BroadcastView, np.ndarray) or a.size == 0
            or a.dtype.kind not in "biufc" or w.dtype.kind not in "biufc"):
        return NotImplemented
    shape = a.shape
    if w.shape != shape:
        if axis is None or w.shape != tuple(shape[ax] for ax in axis):
            return NotImplemented  # (NumPy's TypeError or ValueError)
        # NumPy's own steps: the weights' axes in order, size 1 on the other axes
        w = np.reshape(np.transpose(w, np.argsort(axis)),
                       tuple(n if ax in axis else 1 for ax, n in enumerate(shape)))
    if a.dtype.kind in "biu":
        dtype = np.result_type(a.dtype, w.dtype, "f8")
    else:
        dtype = np.result_type(a.dtype, w.dtype)
    kw = {} if keepdims is _NoValue else {"keepdims": keepdims}
    scl = w.sum(axis=axis, dtype=dtype, **kw)
    if np.any(scl == 0.0):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    src = a._source
    repeated = _repeated(a, src, range(a.ndim) if axis is None else axis)
    if repeated and _products_are_tame(src, w, dtype):
        # x * w summed along an axis where x repeats: x * (the weights summed there)
        w = w.sum(axis=repeated, dtype=dtype, keepdims=True)
        a = a[tuple(slice(0, 1) if ax in repeated else slice(None) for ax in range(a.ndim))]
    avg = np.multiply(a, w, dtype=dtype).sum(axis, **kw) / scl
    return (avg, _broadcast(scl, np.shape(avg))) if returned else avg
