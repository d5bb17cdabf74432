"""``np.nonzero``, ``np.argwhere`` and ``np.flatnonzero`` of a view (and one-argument
``np.where``, through :mod:`lazybcast._elementwise`), at the cost of the result, never of
the logical size.

NumPy scans every logical element (``np.broadcast_to`` of a 10**6 x 10**6 view: about half an
hour before it finds out whether the result fits in memory). Here the source is scanned once,
and each broadcast axis of size ``k`` turns the list of nonzero positions into ``k`` copies
of each group of entries that share the coordinates before that axis: the positions of the
logical array, in C order, as NumPy lists them. A result too large to allocate fails at
once (``MemoryError``, as NumPy's allocation would).

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.array([[0, 3, 0, 5]]), (10**6, 4))
>>> rows, cols = np.nonzero(v)
>>> rows[:4], cols[:4]
(array([0, 0, 1, 1]), array([1, 3, 1, 3]))
"""

import numpy as np

from lazybcast._view import BroadcastView

__all__ = ["FUNCTIONS", "nonzero"]


def _expand(index, d, k, shape):
    """Positions ``index`` (a tuple of intp arrays, C order, coordinate 0 on axis ``d``)
    with axis ``d`` broadcast to ``k``: every group of entries sharing the coordinates
    before ``d`` repeated ``k`` times, copy ``j`` at coordinate ``j`` on ``d``."""
    m = index[0].size
    if k == 0:
        return tuple(np.empty(0, np.intp) for _ in index)
    if m == 0 or k == 1:
        return index
    total = m * k
    if total > np.iinfo(np.intp).max // len(index):
        raise MemoryError(f"np.nonzero of this view has {m} x {k} positions per axis: too many "
                          f"to allocate")
    if d == 0:
        starts = np.zeros(1, np.intp)
    else:
        prefix = np.ravel_multi_index(index[:d], shape[:d])
        starts = np.flatnonzero(np.r_[True, prefix[1:] != prefix[:-1]])
    sizes = np.diff(np.append(starts, m))              # entries per group
    out_sizes = sizes * k                              # outputs per group
    block = np.repeat(sizes, out_sizes)                # each output's group size
    offset = np.arange(total, dtype=np.intp) - np.repeat(np.cumsum(out_sizes) - out_sizes,
                                                         out_sizes)
    take = np.repeat(starts, out_sizes) + offset % block
    out = [a[take] for a in index]
    out[d] = offset // block
    return tuple(out)


def _positions(view):
    """The tuple ``np.nonzero`` returns for a view of one axis or more."""
    src = view.source
    index = tuple(np.asarray(a, dtype=np.intp) for a in np.nonzero(src))
    for d in range(view.ndim):
        if src.shape[d] == 1 and view.shape[d] != 1:
            index = _expand(index, d, view.shape[d], view.shape)
    return index


def nonzero(a):
    """``np.nonzero(a)`` for a view (NotImplemented for anything else, and for 0-d views:
    NumPy's error)."""
    if type(a) is not BroadcastView or a.ndim == 0:
        return NotImplemented
    return _positions(a)


def _argwhere(a):
    if type(a) is not BroadcastView or a.ndim == 0:
        return NotImplemented
    index = _positions(a)
    out = np.empty((index[0].size, a.ndim), np.intp)
    for d, column in enumerate(index):
        out[:, d] = column
    return out


def _flatnonzero(a):
    if type(a) is not BroadcastView or a.ndim == 0:
        return NotImplemented
    index = _positions(a)
    return np.ravel_multi_index(index, a.shape) if a.ndim > 1 else index[0]


#: NumPy function -> implementation for views (NotImplemented: NumPy's, on the arrays).
FUNCTIONS: dict[object, object] = {
    np.nonzero: nonzero,
    np.argwhere: _argwhere,
    np.flatnonzero: _flatnonzero,
}
