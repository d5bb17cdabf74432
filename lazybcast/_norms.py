"""Norms of views at source cost: ``np.linalg.norm``, ``vector_norm`` and ``matrix_norm``.

Every norm NumPy computes from sums, maxima and minima of ``abs(x)`` and its powers runs here
as NumPy's own formula on the view, so each step is lazy and costs the compact source (the sums
are the repeated sums of :mod:`lazybcast._reductions`). Matrix norms that need singular values
(``ord=2``, ``-2``, ``"nuc"`` over two axes), object dtypes and 0-d views return
``NotImplemented``, and NumPy computes them on the materialized view.

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.array([3.0, 4.0]), (10**6, 2))
>>> float(np.linalg.norm(v)), np.linalg.norm(v, axis=1).source
(5000.0, array([5.]))
"""

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from lazybcast._reductions import _result_shape
from lazybcast._ufuncs import _wrap
from lazybcast._view import BroadcastView

__all__ = ["matrix_norm", "norm", "vector_norm"]

#: NumPy 2.3 and later take the maxima of its norms with ``initial=0`` (an empty axis gives
#: 0); before, an empty axis raises NumPy's ValueError.
_EMPTY_MAX = {"initial": 0} if np.lib.NumpyVersion(np.__version__) >= "2.3.0" else {}


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm`` of a view: NumPy's own formula for each ``ord`` (sums, maxima and
    minima of ``abs(x)`` and its powers), run on the view, so each step is lazy and costs the
    source. Matrix norms that need singular values (``ord=2``, ``-2``, ``"nuc"`` over two
    axes), object dtypes and 0-d views are NumPy's. Floating sums are the repeated sums of
    :mod:`lazybcast._reductions` (a float64 pass over the source, rounded once): they may
    differ from NumPy's in the last bits, as :func:`lazybcast._moments.var` does.

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
