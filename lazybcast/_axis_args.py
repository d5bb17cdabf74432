"""The axis and ``keepdims`` arguments of reductions, read as NumPy's reductions read them, with
NumPy's own errors (:mod:`lazybcast._reductions`, :mod:`lazybcast._moments`,
:mod:`lazybcast._arg_reductions`, :mod:`lazybcast._quantiles`).

>>> _reduction_axes((-1, 0), 3), keepdims_flag(1)
((0, 2), True)
"""

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

_NoValue = np._NoValue


def not_an_axis(entry):
    """Whether NumPy's reductions refuse ``entry`` as an axis although ``operator.index``
    takes it: a bool, or an array of one or more axes (an index array of one element)."""
    return isinstance(entry, (bool, np.bool_)) or (isinstance(entry, np.ndarray)
                                                   and entry.ndim > 0)


def keepdims_flag(keepdims):
    """``keepdims`` as NumPy's reductions read it: an integer's truth (``operator.index``:
    ``None``, ``1.5`` and NumPy's bool raise its TypeError); unset is False."""
    if keepdims is False or keepdims is True:
        return keepdims
    if keepdims is _NoValue:
        return False
    return bool(operator.index(keepdims))


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if type(axis) is int and -ndim <= axis < ndim:  # (the common case, without NumPy's call)
        return (axis + ndim if axis < 0 else axis,)
    if type(axis) is list:  # NumPy's reductions take an int or a tuple, not a list
        raise TypeError("'list' object cannot be interpreted as an integer")
    try:
        return tuple(sorted(normalize_axis_tuple(axis, ndim)))
    except (TypeError, ValueError):
        np.add.reduce(np.empty((1,) * ndim), axis=axis)  # raises NumPy's own message
        raise


def _refuse_non_axes(axis, ndim):
    """NumPy's TypeError for what ufunc reductions refuse as an axis although
    ``normalize_axis_tuple`` takes it: bools (``np.sum(a, axis=True)``), and arrays of one or
    more axes (an index array of one element passes ``operator.index``)."""
    if any(not_an_axis(a) for a in (axis if type(axis) is tuple else (axis,))):
        np.add.reduce(np.empty((1,) * ndim), axis=axis)  # raises NumPy's own message
        raise TypeError(f"axis must be an integer or a tuple of integers, got {axis!r}")


def _reduction_axes(axis, ndim):
    """:func:`_axes` for a ufunc reduction (see :func:`_refuse_non_axes`)."""
    if axis is not None and type(axis) is not int:
        _refuse_non_axes(axis, ndim)
    return _axes(axis, ndim)
