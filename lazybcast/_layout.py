"""Layout changes of a broadcast view: transpose, squeeze, flip, ... in O(ndim), no copy.

A view is ``(source, shape)`` (see ``_view``). Each function here applies NumPy's own operation
to the zero-copy NumPy equivalent of the view, ``np.broadcast_to(source, shape)`` (a *proxy*
whose broadcast axes have stride 0), and reads the result back as a view: every axis of stride 0
and size > 1 is a broadcast axis and keeps one source element; every other axis is the source's.
So the axis rules, the accepted arguments and every exception (``np.exceptions.AxisError``,
``ValueError``, ``TypeError``) are NumPy's by construction, and the new source is a view of the
old one: nothing is copied. (``roll`` is the exception: as NumPy's, it copies, but only the
source, which it rolls along the view's real axes.)

``reshape`` and ``ravel``, which may need data, are in :mod:`lazybcast._reshape`.

Examples
--------
>>> import numpy as np, lazybcast
>>> from lazybcast import _layout
>>> v = lazybcast.broadcast_to(np.arange(3.0), (1000, 4, 3))
>>> t = _layout.transpose(v)
>>> t.shape, t.source.shape
((3, 4, 1000), (3, 1, 1))
"""

import numpy as np

from lazybcast._view import BroadcastView

__all__ = [
    "broadcast_to",
    "diagonal",
    "expand_dims",
    "flip",
    "fliplr",
    "flipud",
    "matrix_transpose",
    "moveaxis",
    "roll",
    "rot90",
    "squeeze",
    "swapaxes",
    "transpose",
    "view_as",
]

def _proxy(view):
    """The view as a read-only NumPy array with stride 0 on broadcast axes (no copy)."""
    return view._as_ndarray()


def _from_proxy(result, view, base=None):
    """Read a NumPy view of a proxy back as a :class:`BroadcastView`: an axis of stride 0 and
    size > 1 is broadcast, so one element of it is all the source needs."""
    return BroadcastView._from_ndarray(result, view.base if base is None else base, view.mode)


def transpose(view, axes=None):
    """transpose(view, axes=None)

    The view with its axes permuted, as ``numpy.transpose`` (``axes=None`` reverses them).

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import transpose
    >>> v = lazybcast.broadcast_to(np.arange(3), (2, 3))
    >>> transpose(v).materialize()
    array([[0, 0],
           [1, 1],
           [2, 2]])
    """
    return _from_proxy(np.transpose(_proxy(view), axes), view)


def matrix_transpose(view):
    """matrix_transpose(view)

    The view with its last two axes swapped, as ``ndarray.mT`` (``ValueError`` below two axes).

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import matrix_transpose
    >>> matrix_transpose(lazybcast.broadcast_to(np.arange(3), (5, 2, 3))).shape
    (5, 3, 2)
    """
    return _from_proxy(_proxy(view).mT, view)


def swapaxes(view, axis1, axis2):
    """swapaxes(view, axis1, axis2)

    The view with two axes interchanged, as ``numpy.swapaxes``.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import swapaxes
    >>> swapaxes(lazybcast.broadcast_to(np.arange(3), (5, 2, 3)), 0, 2).shape
    (3, 2, 5)
    """
    return _from_proxy(np.swapaxes(_proxy(view), axis1, axis2), view)


def moveaxis(view, source, destination):
    """moveaxis(view, source, destination)

    The view with axes moved to new positions, as ``numpy.moveaxis``.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import moveaxis
    >>> moveaxis(lazybcast.broadcast_to(np.arange(3), (5, 2, 3)), -1, 0).shape
    (3, 5, 2)
    """
    return _from_proxy(np.moveaxis(_proxy(view), source, destination), view)


def squeeze(view, axis=None):
    """squeeze(view, axis=None)

    The view without its axes of size 1 (or only those in ``axis``), as ``numpy.squeeze``.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import squeeze
    >>> squeeze(lazybcast.broadcast_to(np.arange(3), (1, 4, 1, 3))).shape
    (4, 3)
    """
    return _from_proxy(np.squeeze(_proxy(view), axis), view)


def expand_dims(view, axis):
    """expand_dims(view, axis)

    The view with new axes of size 1 at ``axis`` (an int or a tuple), as
    ``numpy.expand_dims``.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import expand_dims
    >>> expand_dims(lazybcast.broadcast_to(np.arange(3), (4, 3)), (0, -1)).shape
    (1, 4, 3, 1)
    """
    return _from_proxy(np.expand_dims(_proxy(view), axis), view)


def broadcast_to(view, shape):
    """broadcast_to(view, shape)

    The view broadcast further to ``shape`` by NumPy's rules (a view of a view: the source stays
    the compact one).

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import broadcast_to
    >>> w = broadcast_to(lazybcast.broadcast_to(np.arange(3), (4, 3)), (7, 4, 3))
    >>> w.shape, w.source.shape
    ((7, 4, 3), (1, 1, 3))
    """
    return _from_proxy(np.broadcast_to(_proxy(view), shape), view)


def flip(view, axis=None):
    """flip(view, axis=None)

    The view reversed along ``axis`` (all axes for None), as ``numpy.flip``: a broadcast axis
    reads the same either way, a real one is reversed in the source (a negative stride).

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import flip
    >>> flip(lazybcast.broadcast_to(np.arange(3), (1000, 3))).source
    array([[2, 1, 0]])
    """
    r = np.flip(_proxy(view), axis)
    return r if type(r) is not np.ndarray else _from_proxy(r, view)  # (0-d: NumPy's scalar)


def fliplr(view):
    """fliplr(view): :func:`flip` along the second axis, as ``numpy.fliplr``."""
    return _from_proxy(np.fliplr(_proxy(view)), view)


def flipud(view):
    """flipud(view): :func:`flip` along the first axis, as ``numpy.flipud``."""
    return _from_proxy(np.flipud(_proxy(view)), view)


def rot90(view, k=1, axes=(0, 1)):
    """rot90(view, k=1, axes=(0, 1))

    The view rotated by 90 degrees ``k`` times in the plane of ``axes``, as ``numpy.rot90``.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import rot90
    >>> r = rot90(lazybcast.broadcast_to(np.arange(3), (1000, 3)))
    >>> r.shape, r.source
    ((3, 1000), array([[2],
           [1],
           [0]]))
    """
    return _from_proxy(np.rot90(_proxy(view), k, axes), view)


def diagonal(view, offset=0, axis1=0, axis2=1):
    """diagonal(view, offset=0, axis1=0, axis2=1)

    The diagonal of the plane ``(axis1, axis2)`` as a last axis, as ``numpy.diagonal`` (a
    read-only view in both): along two broadcast axes it repeats one value.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import diagonal
    >>> d = diagonal(lazybcast.broadcast_to(np.arange(4), (4, 4)))
    >>> d.shape, d.source
    ((4,), array([0, 1, 2, 3]))
    """
    return _from_proxy(np.diagonal(_proxy(view), offset, axis1, axis2), view)


def roll(view, shift, axis=None):
    """roll(view, shift, axis=None)

    The view rolled by ``shift`` along ``axis``, as ``numpy.roll``: a broadcast axis reads the
    same rolled, so the source is rolled (a copy of the source, as NumPy's roll copies).
    ``axis=None`` rolls the flattened array: NumPy's.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import roll
    >>> r = roll(lazybcast.broadcast_to(np.arange(3), (1000, 3)), 1, axis=(0, 1))
    >>> r.shape, r.source
    ((1000, 3), array([[2, 0, 1]]))
    """
    if axis is None:
        return NotImplemented
    src = view._source
    r = np.roll(src, shift, axis)  # (NumPy's checks; a source axis of size 1 rolls to itself)
    return BroadcastView._from_ndarray(np.broadcast_to(r, view.shape), r, view.mode)


def view_as(view, dtype):
    """view_as(view, dtype)

    The same bytes read as ``dtype``, as ``ndarray.view(dtype)``: a dtype of another item
    size changes the last axis, which must then be contiguous (a broadcast last axis is not).

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import view_as
    >>> w = view_as(lazybcast.broadcast_to(np.zeros(4, np.float32), (9, 4)), np.uint16)
    >>> w.shape, w.source.shape
    ((9, 8), (1, 8))
    """
    return _from_proxy(_proxy(view).view(dtype), view)
