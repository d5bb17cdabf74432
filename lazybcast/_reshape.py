"""Reshapes of a broadcast view: ``reshape`` and ``ravel``, lazy where the axes allow.

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

Like the layout functions of :mod:`lazybcast._layout`, these run NumPy's own operation on the
view's zero-copy proxy wherever no data is needed, so its rules and errors are NumPy's.

Examples
--------
>>> import numpy as np, lazybcast
>>> from lazybcast import _reshape
>>> v = lazybcast.broadcast_to(np.arange(3.0), (1000, 4, 3))
>>> r = _reshape.reshape(v, (4000, 3))      # merges two broadcast axes: lazy
>>> r.shape, r.source.shape
((4000, 3), (1, 3))
>>> r = _reshape.reshape(v, (1000, 12))     # merges a broadcast axis into a real one: copies
>>> r.shape, r.source.shape                 # ... only the (4, 3) group, not the 1000 rows
((1000, 12), (1, 12))
"""

import numpy as np

from lazybcast._layout import _from_proxy, _proxy
from lazybcast._view import BroadcastView

__all__ = ["ravel", "reshape"]

_RESHAPE_COPY = "Unable to avoid creating a copy while reshaping."

#: ``ndarray.reshape(..., copy=)`` exists from NumPy 2.1 on; before, this module decides alone.
_COPY_KEYWORD = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


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
    >>> from lazybcast._reshape import reshape
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
    >>> from lazybcast._reshape import ravel
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
