"""``np.take`` and ``np.compress`` of a view, as indexing.

NumPy's ``np.take`` first makes its input C-contiguous, and on ``np.broadcast_to``'s array that
is a copy of the whole logical array: three columns of a 32 MiB broadcast array take 10 ms
(Zen 3), where ``a[:, [1, 2, 3]]`` takes 6 us. A view's ``np.take(v, indices, axis)`` is its
indexing ``v[:, ..., indices]`` (``axis=None``: the flat indices unravelled over the view's
shape), which gathers only the selected elements (:mod:`lazybcast._indexing`); ``mode="wrap"``
and ``"clip"`` map the indices first, as NumPy does. ``np.compress`` is ``np.take`` of the
condition's nonzero positions, as in NumPy. The result is NumPy's array (a view when one
integer is taken along an axis); an index out of range raises NumPy's IndexError for the
first one, without NumPy's copy of the whole view before it. ``out=``, indices that do not
cast safely to ``intp`` and empty views are NumPy's, on the zero-copy
``np.asarray(view)``, except one case where NumPy's ``mode="wrap"`` loops forever (an empty
axis and an empty result): lazybcast returns the empty result.

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.arange(4.0), (1_000_000, 4))
>>> np.take(v, [3, -1], axis=1)[:2], np.compress([0, 1, 1], v, axis=1).shape
(array([[3., 3.],
       [3., 3.]]), (1000000, 2))
"""

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from lazybcast._view import BroadcastView

__all__ = ["compress", "take"]

_MODES = ("raise", "wrap", "clip")


def take(a, indices, axis=None, out=None, mode="raise"):
    """``np.take(a, indices, axis, mode=mode)`` of a view, by indexing it."""
    if type(a) is not BroadcastView or a.ndim == 0:
        return NotImplemented
    if a.size == 0:
        return _empty(a, indices, axis, out, mode)
    if (out is not None or type(mode) is not str or mode not in _MODES
            or isinstance(axis, (bool, np.bool_))):
        return NotImplemented  # (NumPy's reading of the mode and axis, or its errors)
    idx = np.asarray(indices)
    if idx.dtype.kind not in "biu" or (idx.dtype.kind == "u" and idx.dtype.itemsize >= 8):
        return NotImplemented  # (NumPy casts indices to intp "safely", or raises)
    idx = idx.astype(np.intp)
    if axis is None:
        n = a.size
    else:
        try:
            axis = normalize_axis_index(axis, a.ndim)
        except (TypeError, ValueError):
            return NotImplemented  # (NumPy's AxisError or TypeError)
        n = a.shape[axis]
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif idx.size:
        bad = (idx < -n) | (idx >= n)
        if bad.any():  # (NumPy's error, without its copy of the whole logical array first)
            raise IndexError(f"index {idx.flat[np.argmax(bad)]} is out of bounds for axis "
                             f"{axis or 0} with size {n}")
    if axis is None:
        return a[np.unravel_index(np.where(idx < 0, idx + n, idx), a.shape)]
    return a[(slice(None),) * axis + (idx,)]


def _empty(a, indices, axis, out, mode):
    """``np.take`` of an empty view: NumPy's, except that its wrap mode (however spelled)
    never returns when the axis taken from is empty and so is the result (NumPy 2.0.2 to
    2.4.6: it subtracts the axis length, 0, until the index is in range). Its clip mode
    answers that case as wrap should: the empty result, or its IndexError."""
    if _numpy_mode(mode) != "wrap":  # (NumPy's own error for a mode it refuses)
        return NotImplemented
    arr = np.asarray(a)
    try:
        n = arr.size if axis is None else arr.shape[normalize_axis_index(axis, arr.ndim)]
    except (TypeError, ValueError):
        return NotImplemented  # (NumPy's error for the axis)
    if n:
        return NotImplemented
    return np.take(arr, indices, axis, out=out, mode="clip")


def _numpy_mode(mode):
    """``"raise"``, ``"wrap"`` or ``"clip"``: how NumPy reads ``mode`` (which may be an
    abbreviation, an int or a str subclass, depending on NumPy's version), or NumPy's error."""
    try:
        taken = np.take(np.arange(2), 2, mode=mode)
    except IndexError:
        return "raise"
    return "wrap" if taken == 0 else "clip"


def compress(condition, a, axis=None, out=None):
    """``np.compress(condition, a, axis)`` of a view: :func:`take` of the positions where
    the 1-D ``condition`` is nonzero."""
    if type(a) is not BroadcastView or out is not None:
        return NotImplemented
    cond = np.asarray(condition)
    if cond.ndim != 1:
        return NotImplemented  # (NumPy's ValueError)
    return take(a, np.nonzero(cond)[0], axis)
