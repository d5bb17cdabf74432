"""Means, variances, standard deviations and norms of views at source cost.

Repeating every value of a lane alike leaves its mean unchanged, and its variance too when the
divisor counts the repeats: the logical count ``N`` of a reduced cell is the source's count
``m`` times the repeats ``k``, and ``ddof`` applies to ``N`` (``var`` divides the source's sum
of squared deviations by ``m - ddof / k``, the same quotient as NumPy's ``k * S / (N - ddof)``).
float16/32 and complex64 are computed in float64 (complex128) on the small source and rounded
once, as the sums of :mod:`lazybcast._reductions` are.

``where=`` masks, a precomputed ``mean=``, object dtypes and 0-d views run in NumPy on the
zero-copy ``np.asarray(view)``.

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.array([1.0, 2.0, 6.0]), (1000, 3))
>>> v.mean(), v.var(ddof=1), mean(v, axis=0).source
(np.float64(3.0), np.float64(4.668222740913638), array([1., 2., 6.]))
"""

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from lazybcast._axis_args import _reduction_axes, keepdims_flag
from lazybcast._reductions import (_finish, _is_object, _numpy, _out_fits, _repeated,
                                   _repeats, _result_shape, _source, _temp, _whole_call, reduce)
from lazybcast._repetition import narrow, wide
from lazybcast._ufuncs import _wrap
from lazybcast._view import BroadcastView

__all__ = ["average", "matrix_norm", "mean", "nanmean", "nanstd", "nanvar", "norm", "std", "var",
           "vector_norm"]

_NoValue = np._NoValue

#: NumPy 2.3 and later take the maxima of its norms with ``initial=0`` (an empty axis gives
#: 0); before, an empty axis raises NumPy's ValueError.
_EMPTY_MAX = {"initial": 0} if np.lib.NumpyVersion(np.__version__) >= "2.3.0" else {}


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
    if ((where is True or where is _NoValue) and view.ndim > 0 and not _is_object(view, dtype)
            and (dtype is None or view.dtype.kind in "biufc")):
        # (timedelta64 with a dtype=: NumPy's own rules, below; the float path would drop
        # NaT and the unit)
        axes = _moment_axes(name, view, axis)
        if name == "mean" and out is None and dtype is not None and np.dtype(dtype).kind in "iub":
            # NumPy sums in ``dtype`` (wrapping) over the logical elements, then true_divides
            # by the count (an intp) and casts back: the same steps on the repeated sum.
            if view.size == 0:
                return _numpy(name, view, axis=axis, dtype=dtype, keepdims=keepdims)
            s = reduce(np.add, view, axis, dtype, None, keepdims)
            count = np.intp(1)
            for d in axes:
                count *= view.shape[d]
            if type(s) is BroadcastView:
                return np.true_divide(s, count).astype(np.dtype(dtype))
            return s.dtype.type(s / count)
        fits = _out_fits(out, _result_shape(view.shape, axes, keepdims))
        if fits is not False:
            src = _source(view, axes)
            r = _in_float64(getattr(np, name), src, axes, dtype, out)
            return _finish(r, view, axes, keepdims, out)
    return _numpy(name, view, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)


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
    if (where is True or where is _NoValue) and mean is _NoValue and view.ndim > 0 \
            and not _is_object(view, dtype) and (dtype is None
                                                 or np.dtype(dtype).kind not in "biu"):
        axes = _moment_axes(name, view, axis)
        fits = _out_fits(out, _result_shape(view.shape, axes, keepdims))
        if fits is not False:
            src = _source(view, axes)
            k = _repeats(view, src, axes)
            # Logical sum of squares = k * the source's; N = k * m. NumPy divides by N - ddof:
            # dividing the source's by m - ddof / k gives the same quotient (and NumPy's
            # warning when N - ddof <= 0).
            if k > 1 and ddof:
                ddof = ddof / k
            r = _in_float64(getattr(np, name), src, axes, dtype, out, True, ddof=ddof)
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


# -- norms: sums of powers, at source cost ----------------------------------------------------


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm`` of a view: NumPy's own formula for each ``ord`` (sums, maxima and
    minima of ``abs(x)`` and its powers), run on the view, so each step is lazy and costs the
    source. Matrix norms that need singular values (``ord=2``, ``-2``, ``"nuc"`` over two
    axes), object dtypes and 0-d views are NumPy's. Floating sums are the repeated sums of
    :mod:`lazybcast._reductions` (a float64 pass over the source, rounded once): they may
    differ from NumPy's in the last bits, as :func:`var` does.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> v = lazybcast.broadcast_to(np.array([3.0, 4.0]), (1000, 2))
    >>> norm(v, axis=1).source, norm(v, ord=np.inf, axis=0).source
    (array([5.]), array([3., 4.]))
    """
    if (type(x) is not BroadcastView or x.ndim == 0 or x.dtype.kind in "OSUVMm"
            or not (ord is None or isinstance(ord, (str, int, float, np.integer, np.floating)))):
        return NotImplemented
    if x.dtype.kind not in "fc":
        x = x.astype(float)
    if axis is None:
        if ord is None or (ord in ("f", "fro") and x.ndim == 2) or (ord == 2 and x.ndim == 1):
            if x.dtype == np.float16:
                # NumPy's shortcut is ``x.dot(x)``, whose float16 loop multiplies and adds in
                # float32: squares that underflow float16 still count.
                r = np.sqrt(_squares(x.astype(np.float32)).sum().astype(np.float16))
            else:
                r = np.sqrt(_squares(x).sum())
            return r.reshape((1,) * x.ndim) if keepdims else r
        axis = tuple(range(x.ndim))
    axis = _norm_axes(axis, x.ndim)
    if axis is None or len(axis) not in (1, 2):
        return NotImplemented  # (NumPy's errors)
    if len(axis) == 1:
        return _vector_norm(x, ord, axis, keepdims)
    rows, cols = axis
    if isinstance(ord, str) and ord not in ("f", "fro"):
        return NotImplemented  # (NumPy's errors, and the nuclear norm)
    a = abs(x)
    if ord == 1 or ord == -1:
        r = a.sum(axis=rows)
        r = r.max(axis=cols - (cols > rows), **_EMPTY_MAX) if ord == 1 else \
            r.min(axis=cols - (cols > rows))
    elif ord == np.inf or ord == -np.inf:
        r = a.sum(axis=cols)
        r = r.max(axis=rows - (rows > cols), **_EMPTY_MAX) if ord > 0 else \
            r.min(axis=rows - (rows > cols))
    elif ord in (None, "f", "fro"):
        r = np.sqrt(_squares(x).sum(axis=(rows, cols)))
    else:
        return NotImplemented  # (2, -2: singular values; anything else: NumPy's error)
    if keepdims:
        shape = list(x.shape)
        shape[rows] = shape[cols] = 1
        r = np.reshape(r, shape)
    return r


def _squares(x):
    """``|x|**2`` as NumPy's norm computes it: ``(x.conj() * x).real`` (a view)."""
    return (x.conj() * x).real


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """``np.linalg.vector_norm`` of a view: the vector norms of :func:`norm` over any axes
    (all of them for ``axis=None``), each step lazy.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> v = lazybcast.broadcast_to(np.array([3.0, 4.0]), (4, 2))
    >>> vector_norm(v, axis=-1).source, float(vector_norm(v, ord=1))
    (array([5.]), 28.0)
    """
    if (type(x) is not BroadcastView or x.ndim == 0 or x.dtype.kind in "OSUVMm"
            or not isinstance(ord, (int, float, np.integer, np.floating))
            or isinstance(ord, (bool, np.bool_))):
        return NotImplemented
    axis = tuple(range(x.ndim)) if axis is None else _norm_axes(axis, x.ndim)
    if axis is None:
        return NotImplemented  # (NumPy converts or refuses them)
    if x.dtype.kind not in "fc":
        x = x.astype(float)
    # (NumPy's reduces without keepdims, then reshapes: its last power is a scalar's there)
    r = _vector_norm(x, ord, axis, False)
    if not keepdims or r is NotImplemented:
        return r
    return np.reshape(r, _result_shape(x.shape, axis, True))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """``np.linalg.matrix_norm`` of a view: :func:`norm` over its last two axes."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def _norm_axes(axis, ndim):
    """A norm's ``axis`` (an int or a tuple of them) as a tuple of axes in ``range(ndim)``,
    or None where NumPy converts the axes (bools, floats, objects) or raises (out of range,
    repeated)."""
    if type(axis) is not tuple:
        axis = (axis,)
    if not all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
               for a in axis):
        return None
    try:
        return normalize_axis_tuple(axis, ndim)
    except (TypeError, ValueError):
        return None


def _vector_norm(x, ord, ax, keepdims):
    """NumPy's vector-norm formula for ``ord`` over the axes ``ax`` (from :func:`_norm_axes`),
    on the view."""
    if isinstance(ord, str):
        return NotImplemented  # (NumPy's ValueError)
    if ord == np.inf:
        return abs(x).max(axis=ax, keepdims=keepdims, **_EMPTY_MAX)
    if ord == -np.inf:
        return abs(x).min(axis=ax, keepdims=keepdims)
    if ord == 0:
        return (x != 0).astype(x.real.dtype).sum(axis=ax, keepdims=keepdims)
    if ord == 1:
        return abs(x).sum(axis=ax, keepdims=keepdims)
    if ord is None or ord == 2:
        return np.sqrt(_squares(x).sum(axis=ax, keepdims=keepdims))
    r = _power_in_place(abs(x), ord).sum(axis=ax, keepdims=keepdims)
    return _power_in_place(r, np.reciprocal(ord, dtype=r.dtype))


def _power_in_place(r, exponent):
    """NumPy's ``r **= exponent`` (a view's on a copy of its source): an in-place power keeps
    r's dtype and takes the shortcuts of NumPy's version (``**= -1`` is np.reciprocal,
    ``**= 2`` np.square; a NumPy scalar's is a scalar power), and warns as they do."""
    if type(r) is not BroadcastView:
        r **= exponent
        return r
    p = r._source.copy()
    p **= exponent
    return _wrap(p, r.shape)
