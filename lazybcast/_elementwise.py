"""NumPy functions that are elementwise in their array arguments, on views at source cost.

``np.where``, ``np.isclose``, ``np.clip``, ``np.round``, ``np.nan_to_num``, ``np.isin``,
``np.angle``, and the functions elementwise in one argument given fixed tables:
``np.searchsorted(a, v)`` (in ``v``), ``np.digitize(x, bins)`` and ``np.interp(x, xp, fp)``
(in ``x``). Each runs once on the compact sources through :func:`lazybcast._ufuncs.elementwise`
(NumPy computes the values, so dtypes and errors are NumPy's) and the result is broadcast
again; ``np.allclose`` and ``np.array_equal`` reduce the lazy comparison; ``np.real`` and
``np.imag`` are the view's own. Arguments these do not cover (``out=``, array tolerances, a
view as the table) run in NumPy on the zero-copy ``np.asarray(view)``.
:mod:`lazybcast._functions` registers :data:`FUNCTIONS` for ``__array_function__``.

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.array([0.5, 2.5, 9.0]), (100_000, 3))
>>> np.digitize(v, [1, 5]).source, np.interp(v, [0, 10], [0, 1]).source
(array([[0, 1, 2]]), array([[0.05, 0.25, 0.9 ]]))
"""

import builtins

import numpy as np

from lazybcast._nonzero import nonzero
from lazybcast._ufuncs import elementwise
from lazybcast._view import BroadcastView

__all__ = ["FUNCTIONS"]

_NoValue = np._NoValue

def _where(*args, **kwargs):
    if len(args) == 1 and not kwargs:
        return nonzero(args[0])  # np.where(condition): the indices (lazybcast._nonzero)
    if len(args) != 3 or kwargs:
        return NotImplemented
    return elementwise(np.where, args)


def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if np.ndim(rtol) or np.ndim(atol):
        return NotImplemented

    def isclose(x, y):
        return np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)

    return elementwise(isclose, (a, b))


def _all(x):
    return builtins.bool(x.all() if type(x) is BroadcastView else np.asanyarray(x).all())


def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    close = _isclose(a, b, rtol, atol, equal_nan)
    return NotImplemented if close is NotImplemented else _all(close)


def _array_equal(a1, a2, equal_nan=False):
    if equal_nan:
        # NumPy's own, but for one view passed twice: an array equals itself, NaNs or not
        # (NumPy's `a1 is a2`, which the two zero-copy arrays it would get could not see).
        return True if a1 is a2 and type(a1) is BroadcastView else NotImplemented
    if np.shape(a1) != np.shape(a2):
        return False
    return _all(a1 == a2)


def _clip(a, a_min=_NoValue, a_max=_NoValue, out=None, *, min=_NoValue, max=_NoValue,
          **kwargs):
    if out is not None or kwargs or a_min is _NoValue or a_max is _NoValue:
        return NotImplemented  # NumPy sorts out min=/max= and their errors
    if min is not _NoValue or max is not _NoValue:
        return NotImplemented
    return elementwise(np.clip, (a, a_min, a_max))


def _round(a, decimals=0, out=None):
    if out is not None or type(a) is not BroadcastView:
        return NotImplemented

    def round_(x):
        return np.round(x, decimals)

    return elementwise(round_, (a,))


def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Elementwise: the source's NaN and infinities replaced (into a new array, as NumPy's
    ``copy=True``; ``copy=False`` cannot write into a view: NumPy's error)."""
    if type(x) is not BroadcastView or not copy or any(np.ndim(v) for v in (nan, posinf,
                                                                             neginf)):
        return NotImplemented  # (array replacements of the logical shape: NumPy's)

    def nan_to_num(s):
        return np.nan_to_num(s, copy=True, nan=nan, posinf=posinf, neginf=neginf)

    return elementwise(nan_to_num, (x,))


def _real(val):
    return val.real if type(val) is BroadcastView else NotImplemented


def _imag(val):
    return val.imag if type(val) is BroadcastView else NotImplemented


def _isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Elementwise in ``element``: the source's answer, broadcast again."""
    if type(element) is not BroadcastView or type(test_elements) is BroadcastView:
        return NotImplemented

    def isin_(x):
        return np.isin(x, test_elements, assume_unique=assume_unique, invert=invert, kind=kind)

    return elementwise(isin_, (element,))


def _angle(z, deg=False):
    if type(z) is not BroadcastView:
        return NotImplemented

    def angle(x):
        return np.angle(x, deg)

    return elementwise(angle, (z,))


def _table(x):
    """A lookup table argument as NumPy reads it (a view is its zero-copy array)."""
    return np.asarray(x) if type(x) is BroadcastView else x


def _searchsorted(a, v, side="left", sorter=None):
    """Elementwise in ``v``: the insertion points of the source's values."""
    if type(v) is not BroadcastView:
        return NotImplemented
    a, sorter = _table(a), _table(sorter)

    def searchsorted(x):
        return np.searchsorted(a, x, side=side, sorter=sorter)

    return elementwise(searchsorted, (v,))


def _digitize(x, bins, right=False):
    """Elementwise in ``x``: the bins of the source's values."""
    if type(x) is not BroadcastView:
        return NotImplemented
    bins = _table(bins)

    def digitize(s):
        return np.digitize(s, bins, right)

    return elementwise(digitize, (x,))


def _interp(x, xp, fp, left=None, right=None, period=None):
    """Elementwise in ``x``: the source's values interpolated."""
    if type(x) is not BroadcastView:
        return NotImplemented
    xp, fp, left, right = _table(xp), _table(fp), _table(left), _table(right)

    def interp(s):
        return np.interp(s, xp, fp, left, right, period)

    return elementwise(interp, (x,))


#: NumPy function -> implementation for views (NotImplemented: NumPy's, on the arrays).
FUNCTIONS: dict[object, object] = {
    np.where: _where,
    np.isclose: _isclose,
    np.allclose: _allclose,
    np.array_equal: _array_equal,
    np.clip: _clip,
    np.round: _round,
    np.around: _round,
    np.nan_to_num: _nan_to_num,
    np.real: _real,
    np.imag: _imag,
    np.isin: _isin,
    np.angle: _angle,
    np.searchsorted: _searchsorted,
    np.digitize: _digitize,
    np.interp: _interp,
}
