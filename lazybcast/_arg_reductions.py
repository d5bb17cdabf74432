"""``argmin`` / ``argmax`` and their NaN-ignoring variants of a view at source cost: NumPy's
first occurrence in the logical C order is found in the source (along a broadcast axis every
index is 0; over the whole view, the source's first occurrence with 0 on the broadcast axes).

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.array([3, 9, 1]), (1000, 3))
>>> argmax(v), argmin(v, axis=0).source
(np.int64(1), array([0, 0, 0]))
"""

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from lazybcast._axis_args import not_an_axis
from lazybcast._reductions import _finish, _is_object, _numpy, _out_fits, _result_shape, _source

__all__ = ["argmax", "argmin", "nanargmax", "nanargmin"]

_NoValue = np._NoValue


def _logical_flat(i, src_shape, shape):
    """The C-order flat index in ``shape`` of the source's flat index ``i``: the same
    coordinates, 0 on the broadcast axes (``np.ravel_multi_index(np.unravel_index(...))``
    in Python ints, a fifth of their cost)."""
    coords = []
    for n in reversed(src_shape):
        i, c = divmod(i, n)
        coords.append(c)
    flat = 0
    for c, m in zip(reversed(coords), shape):
        flat = flat * m + c
    return flat


def _not_an_axis(name, view, axis):
    """NumPy's error for an ``axis`` that is not an integer (or is a bool or an array), at
    source cost. NumPy's NaN variants first reduce the NaN mask along it (``np.all``: its
    AxisError or TypeError, or ValueError for an all-NaN slice), then its function rejects
    the axis: raised here from one element of the view's rank."""
    if name.startswith("nan") and view.dtype.kind in "fc" and view.size:
        if np.isnan(view).all(axis=axis).any():
            raise ValueError("All-NaN slice encountered")
    getattr(np, name.removeprefix("nan"))(np.zeros((1,) * view.ndim, view.dtype), axis=axis)
    raise TypeError(f"axis must be an integer or None, got {axis!r}")  # (NumPy raised above)


def _arg(name, view, axis, out, keepdims):
    if keepdims is _NoValue:
        keepdims = False
    if axis is not None and view.ndim > 0 and not _is_object(view):
        if not_an_axis(axis):
            _not_an_axis(name, view, axis)
        try:
            operator.index(axis)
        except TypeError:
            _not_an_axis(name, view, axis)
    if view.ndim > 0 and not _is_object(view):
        axes = tuple(range(view.ndim)) if axis is None else \
            (normalize_axis_index(axis, view.ndim),)
        fits = _out_fits(out, _result_shape(view.shape, axes, keepdims))
        if fits is not False and (out is None or out.dtype == np.intp):
            src = _source(view, axes)
            if axis is None:
                # The first occurrence in the logical C order has every broadcast coordinate
                # 0 and the source's first occurrence for the others.
                flat = _logical_flat(int(getattr(np, name)(src)), src.shape, view.shape)
                if out is None and not keepdims:
                    return np.intp(flat)
                r = np.full((1,) * view.ndim, flat, dtype=np.intp)
            else:  # along a broadcast axis (size 1 in the source) every index is 0
                r = getattr(np, name)(src, axis=axes[0], keepdims=True)
            return _finish(r, view, axes, keepdims, out)
    return _numpy(name, view, axis=axis, out=out, keepdims=keepdims)


def argmin(view, axis=None, out=None, *, keepdims=False):
    """``view.argmin()``: NumPy's first occurrence, found in the source."""
    return _arg("argmin", view, axis, out, keepdims)


def argmax(view, axis=None, out=None, *, keepdims=False):
    """``view.argmax()``: NumPy's first occurrence, found in the source."""
    return _arg("argmax", view, axis, out, keepdims)


def nanargmin(view, axis=None, out=None, *, keepdims=False):
    """``np.nanargmin(view)``: NumPy's first occurrence, found in the source."""
    return _arg("nanargmin", view, axis, out, keepdims)


def nanargmax(view, axis=None, out=None, *, keepdims=False):
    """``np.nanargmax(view)``: NumPy's first occurrence, found in the source."""
    return _arg("nanargmax", view, axis, out, keepdims)
