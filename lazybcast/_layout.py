"""Layout changes of a broadcast view: transpose, squeeze, reshape, ... in O(ndim), no copy.

A view is ``(source, shape)`` (see ``_view``). Each function here applies NumPy's own operation
to the zero-copy NumPy equivalent of the view, ``np.broadcast_to(source, shape)`` (a *proxy*
whose broadcast axes have stride 0), and reads the result back as a view: every axis of stride 0
and size > 1 is a broadcast axis and keeps one source element; every other axis is the source's.
So the axis rules, the accepted arguments and every exception (``np.exceptions.AxisError``,
``ValueError``, ``TypeError``) are NumPy's by construction, and the new source is a view of the
old one: nothing is copied. (``roll`` is the exception: as NumPy's, it copies, but only the
source, which it rolls along the view's real axes.)

``reshape`` is the one operation that may need data. NumPy reshapes without a copy when each
group of old axes that maps onto a group of new axes can be re-strided; on the proxy that rule
reads: axes that *split* always can (a broadcast axis splits into broadcast axes, a real axis
into real ones); axes that *merge* can when both are broadcast, or both are real and their
source strides nest (``stride[k] == size[k+1] * stride[k+1]`` in C order). A group that mixes a
broadcast axis with a real one, or real axes whose strides do not nest, needs a copy. Then, with
``copy=None`` (the default), only those groups are materialized: the new source is the view
broadcast over the copied groups' axes, the other axes stay compact, and the result is still a
:class:`~lazybcast.BroadcastView`. ``copy=False`` raises NumPy's ``ValueError``; ``copy=True``
first copies the compact source (as ``view.copy()``), so the result shares nothing with the
user's array.

Examples
--------
>>> import numpy as np, lazybcast
>>> from lazybcast import _layout
>>> v = lazybcast.broadcast_to(np.arange(3.0), (1000, 4, 3))
>>> t = _layout.transpose(v)
>>> t.shape, t.source.shape
((3, 4, 1000), (3, 1, 1))
>>> r = _layout.reshape(v, (4000, 3))       # merges two broadcast axes: lazy
>>> r.shape, r.source.shape
((4000, 3), (1, 3))
>>> r = _layout.reshape(v, (1000, 12))      # merges a broadcast axis into a real one: copies
>>> r.shape, r.source.shape                 # ... only the (4, 3) group, not the 1000 rows
((1000, 12), (1, 12))
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
    "ravel",
    "reshape",
    "roll",
    "rot90",
    "squeeze",
    "swapaxes",
    "transpose",
    "view_as",
]

_RESHAPE_COPY = "Unable to avoid creating a copy while reshaping."

#: ``ndarray.reshape(..., copy=)`` exists from NumPy 2.1 on; before, this module decides alone.
_COPY_KEYWORD = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


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


# -- reshape ------------------------------------------------------------------------------------


def _groups(old, new):
    """Pairs ``(old_axes, new_axes)`` of ranges whose sizes have equal products, in order; the
    axes of size 1 join a neighbouring group. Both shapes hold the same number (> 0) of
    elements."""
    groups = []
    i = j = 0
    while i < len(old) and j < len(new):
        i0, j0 = i, j
        po, pn = old[i], new[j]
        i += 1
        j += 1
        while po != pn:
            if po < pn:
                po *= old[i]
                i += 1
            else:
                pn *= new[j]
                j += 1
        groups.append([i0, i, j0, j])
    if groups:  # trailing axes of size 1
        groups[-1][1] = len(old)
        groups[-1][3] = len(new)
    return groups


def _nests(shape, strides, start, stop, order):
    """Whether the axes ``start:stop`` (sizes 1 skipped) can merge without a copy."""
    axes = [d for d in range(start, stop) if shape[d] != 1]
    if order == "F":
        axes.reverse()
    for outer, inner in zip(axes, axes[1:]):
        if strides[outer] != shape[inner] * strides[inner]:
            return False
    return True


def _resolve(shape, newshape, order, copy):
    """``newshape`` as a tuple of ints (``-1`` inferred) and ``order`` as "C", "F" or "A", by
    NumPy's own reshape of a stride-0 array of ``shape`` (which never copies), so that every
    error is NumPy's."""
    dummy = np.broadcast_to(np.empty((), dtype=np.uint8), shape)
    if _COPY_KEYWORD:
        resolved = dummy.reshape(newshape, order=order, copy=copy).shape
    else:
        resolved = dummy.reshape(newshape, order=order).shape
    if order in ("A", "a"):  # NumPy's "A": "F" for Fortran-contiguous-only data
        proxy_order = "A"
    else:
        proxy_order = "F" if order in ("F", "f") else "C"
    return resolved, proxy_order


def reshape(view, shape, order="C", copy=None):
    """reshape(view, shape, order="C", copy=None)

    The view with a new shape, as ``numpy.reshape``; lazy whenever NumPy could reshape the
    equivalent ``np.broadcast_to`` array without a copy.

    Parameters
    ----------
    view : BroadcastView
    shape : int or tuple of ints
        The new shape; one entry may be -1 (inferred).
    order : {"C", "F", "A"}
        Read and place elements in C (last axis fastest) or Fortran order; "A" is "F" when the
        equivalent NumPy array is Fortran-contiguous and not C-contiguous, else "C".
    copy : bool, optional
        ``None`` (default): groups of axes that cannot be re-strided are materialized into a
        new compact source (the rest stays broadcast). ``False``: raise ``ValueError`` instead.
        ``True``: copy the compact source first, so the result is independent of the user's
        array.

    Returns
    -------
    BroadcastView

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import reshape
    >>> v = lazybcast.broadcast_to(np.arange(6).reshape(2, 1, 3), (2, 5, 3))
    >>> reshape(v, (2, 5, 3, 1)).source.shape                 # a new axis: lazy
    (2, 1, 3, 1)
    >>> reshape(v, (10, 3), copy=False)                        # (2 real) x (5 broadcast)
    Traceback (most recent call last):
    ...
    ValueError: Unable to avoid creating a copy while reshaping.
    >>> reshape(v, (10, 3)).source.shape                       # materializes that group only
    (10, 3)
    """
    if _COPY_KEYWORD and (copy is None or copy is False):
        # The common case first: NumPy reshapes the proxy without a copy (and raises every
        # argument error); only "a copy is needed" goes on.
        try:
            result = _proxy(view).reshape(shape, order=order, copy=False)
        except ValueError as exc:
            if copy is False or str(exc) != _RESHAPE_COPY:
                raise
        else:
            return _from_proxy(result, view)
    newshape, order = _resolve(view.shape, shape, order, copy)  # NumPy checked ``copy`` too
    forbid = copy is not None and not copy
    if order == "A":  # decided on the view itself, before a copy changes its layout
        proxy = _proxy(view)
        order = "F" if proxy.flags.f_contiguous and not proxy.flags.c_contiguous else "C"
    if copy:
        view = view.copy()
    proxy = _proxy(view)
    if proxy.size == 0:
        return _from_proxy(proxy.reshape(newshape, order=order), view)
    old = proxy.shape
    copied = [
        g for g in _groups(old, newshape)
        if not _nests(old, proxy.strides, g[0], g[1], order)
    ]
    base = None
    if copied:
        if forbid:
            raise ValueError(_RESHAPE_COPY)
        # The copied groups' axes at full size; the other broadcast axes keep one element.
        key = [slice(None)] * len(old)
        for d, (n, m) in enumerate(zip(view.source.shape, old)):
            if n != m and not any(start <= d < stop for start, stop, _, _ in copied):
                key[d] = slice(0, 1)
        part = view[tuple(key)]
        base = part.materialize(out=np.empty(part.shape, dtype=view.dtype, order=order))
        proxy = np.broadcast_to(base, old)
    # No group needs a copy now, so NumPy's reshape is a view.
    return _from_proxy(proxy.reshape(newshape, order=order), view, base)


def ravel(view, order="C"):
    """ravel(view, order="C")

    The view as one axis, as ``numpy.ravel``: ``reshape(view, -1, order)`` for "C", "F" and
    "A"; for "K" (memory order) NumPy's ravel of the equivalent array, kept lazy when that is a
    view and wrapped when NumPy had to copy.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> from lazybcast._layout import ravel
    >>> r = ravel(lazybcast.broadcast_to(np.float32(1), (1000, 1000)))
    >>> r.shape, r.source.shape
    ((1000000,), (1,))
    """
    if order not in ("K", "k"):
        return reshape(view, -1, order)
    result = _proxy(view).ravel(order)
    if result.flags.owndata:  # NumPy copied: the copy is the new source
        return BroadcastView._from_ndarray(result, result, view.mode)
    return _from_proxy(result, view)
