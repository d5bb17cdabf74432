"""Views joined, repeated and padded at source cost: ``np.concatenate``, ``np.stack``,
``np.vstack``, ``np.hstack``, ``np.tile``, ``np.repeat``, ``np.pad`` and ``np.atleast_1d`` /
``2d`` / ``3d``.

Each operand is its compact source (a view's source, an ndarray's stride-0-free part), of the
operand's rank with size 1 on its broadcast axes. Joining them along an axis:

- an axis other than the joined one stays **compact** (size 1 in the result's source) when it
  is broadcast in every operand; otherwise each operand is expanded along it (stride 0, no
  copy) to its logical size;
- along the joined axis every operand is expanded to its logical length;

and NumPy's ``np.concatenate`` joins these compact pieces (its dtype, casting and errors). So
stacking a batch of items that repeat along their spatial axes gives a view that still repeats
along them: 64 images of shape (3, 224, 224) that repeat one colour per channel stack into a
(64, 3, 224, 224) view of a (64, 3, 1, 1) source.

Repeating costs nothing along a broadcast axis: ``np.tile`` and ``np.repeat`` lengthen it
(the source keeps one element), and a new leading axis of ``np.tile`` is a broadcast axis.
Along a real axis they run on the source.

``np.pad`` fills each lane along a padded axis from that lane alone, so an axis that is not
padded and repeats one value still repeats: the source, stretched along the padded axes only,
is padded by NumPy (every mode but ``mean``, whose sums NumPy orders by layout, and a
function as ``mode``, which may write anywhere). A repeated axis padded by copies of its
lane (``edge``, ``wrap``, ``reflect``, ``symmetric``) stays repeated: its one value padded
with itself.

Lists of other types, ``out=``, ``axis=None`` (a flat result) and empty results run in NumPy
on the zero-copy ``np.asarray(view)``, as before; so do operands whose shapes do not match
(NumPy raises its own error).

>>> import numpy as np, lazybcast
>>> a = lazybcast.broadcast_to(np.arange(3.0), (1000, 3))
>>> b = lazybcast.broadcast_to(np.array([7.0]), (1000, 2))
>>> r = np.concatenate([a, b], axis=1)
>>> r.shape, r.source
((1000, 5), array([[0., 1., 2., 7., 7.]]))
>>> t = np.tile(a, (8, 2, 1))
>>> t.shape, t.source.shape
((8, 2000, 3), (1, 1, 3))
"""

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from lazybcast._reshape import reshape
from lazybcast._rules import check_size
from lazybcast._ufuncs import ARRAYS, _compact
from lazybcast._view import BroadcastView, make_view

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "concatenate", "hstack", "pad", "repeat",
           "stack", "tile", "vstack"]


def _mixed_ranks(tup):
    """A list or tuple of views and plain ndarrays of any ranks, at least one view."""
    return (type(tup) in (list, tuple) and all(type(x) in ARRAYS for x in tup)
            and any(type(x) is BroadcastView for x in tup))


def _operands(arrays, min_rank=1):
    """``arrays`` as a list of views and plain ndarrays, at least one view among them, all
    of one rank >= ``min_rank``; None otherwise (NumPy decides)."""
    if not _mixed_ranks(arrays):
        return None
    ranks = {x.ndim for x in arrays}
    if len(ranks) != 1 or min(ranks) < min_rank:
        return None
    return list(arrays)


def _join(parts, ax, dtype, casting):
    """``(compact, logical shape)`` pairs (one rank, shapes equal off ``ax``) joined along
    ``ax`` as a view; None when NumPy should decide. (A batch repeats its few shapes: each
    distinct one is looked at once.)"""
    shapes = {s for _, s in parts}
    first = next(iter(shapes))
    if len({(s[:ax], s[ax + 1:]) for s in shapes}) != 1:
        return None  # (NumPy's ValueError)
    shape = list(first)
    shape[ax] = sum(s[ax] for _, s in parts)
    compact = {c.shape for c, _ in parts}
    keep = [d != ax and all(c[d] == 1 for c in compact) for d in range(len(shape))]
    wants = {s: tuple(1 if k else n for k, n in zip(keep, s)) for s in shapes}
    pieces = []
    for c, s in parts:
        want = wants[s]
        pieces.append(c if c.shape == want else np.broadcast_to(c, want))
    try:
        itemsize = (np.result_type(*pieces) if dtype is None else np.dtype(dtype)).itemsize
    except TypeError:
        return None  # (dtypes NumPy cannot join: NumPy's error)
    if not _fits(tuple(shape), itemsize):
        return None
    r = np.concatenate(pieces, axis=ax, dtype=dtype, casting=casting)
    return make_view(r, r.shape, tuple(shape), "numpy")


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """``np.concatenate`` of views (and plain ndarrays) along an axis, as a view."""
    arrays = _operands(arrays)
    if arrays is None or out is not None or axis is None or type(axis) is bool:
        return NotImplemented
    try:
        ax = normalize_axis_index(axis, arrays[0].ndim)
    except (TypeError, ValueError):
        return NotImplemented
    r = _join([(_compact(x)[0], x.shape) for x in arrays], ax, dtype, casting)
    return NotImplemented if r is None else r


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """``np.stack`` of views (and plain ndarrays) of one shape, as a view."""
    arrays = _operands(arrays, 0)
    if (arrays is None or out is not None or type(axis) is bool
            or len({x.shape for x in arrays}) != 1):
        return NotImplemented
    try:
        ax = normalize_axis_index(axis, arrays[0].ndim + 1)
    except (TypeError, ValueError):
        return NotImplemented
    shape = arrays[0].shape[:ax] + (1,) + arrays[0].shape[ax:]
    parts = []
    for x in arrays:  # (each with a new axis of size 1 at ``ax``)
        c = _compact(x)[0]
        parts.append((c[(slice(None),) * ax + (None,)], shape))
    r = _join(parts, ax, dtype, casting)
    return NotImplemented if r is None else r


def _at_least(x, ndim):
    """``np.atleast_<ndim>d`` of one view or ndarray: new axes of size 1 where NumPy puts
    them (a 1-D array ``(n,)`` becomes ``(1, n)``, then ``(1, n, 1)``)."""
    if x.ndim >= ndim:
        return x
    if x.ndim == 0:
        shape = (1,) * ndim
    elif x.ndim == 1:
        shape = (1, x.shape[0], 1)[:ndim] if ndim > 1 else x.shape
    else:  # 2-D to 3-D
        shape = x.shape + (1,)
    return reshape(x, shape) if type(x) is BroadcastView else x.reshape(shape)


def _atleast(ndim):
    def impl(*arys):
        if not _mixed_ranks(arys):
            return NotImplemented
        r = [_at_least(x, ndim) for x in arys]
        return r[0] if len(r) == 1 else tuple(r)

    impl.__name__ = impl.__qualname__ = f"atleast_{ndim}d"
    impl.__doc__ = f"``np.atleast_{ndim}d``: views stay views (new axes of size 1, no copy)."
    return impl


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """``np.vstack``: :func:`concatenate` along the first axis of the 2-D forms."""
    if not _mixed_ranks(tup):
        return NotImplemented
    return concatenate([_at_least(x, 2) for x in tup], 0, dtype=dtype, casting=casting)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """``np.hstack``: :func:`concatenate` along the second axis (the first for vectors)."""
    if not _mixed_ranks(tup):
        return NotImplemented
    arrays = [_at_least(x, 1) for x in tup]
    return concatenate(arrays, 0 if arrays[0].ndim == 1 else 1, dtype=dtype, casting=casting)


def _fits(full, itemsize):
    """True for a non-empty result shape that can be indexed (else NumPy's path: its own
    error, or its empty array)."""
    if 0 in full:
        return False
    try:
        check_size(full, itemsize)
    except ValueError:
        return False
    return True


def tile(A, reps):
    """``np.tile`` of a view: broadcast axes grow (their source keeps one element), new
    leading axes are broadcast axes, and real axes are tiled in the source (a new array, as
    NumPy's tile returns one)."""
    if type(A) is not BroadcastView:
        return NotImplemented
    try:
        reps = tuple(reps) if np.iterable(reps) else (reps,)
        reps = tuple(int(r) if isinstance(r, (int, np.integer)) and not isinstance(
            r, (bool, np.bool_)) else None for r in reps)
    except TypeError:
        return NotImplemented
    if None in reps or any(r < 0 for r in reps):
        return NotImplemented  # (NumPy's errors)
    ndim = max(A.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - A.ndim) + A.shape
    full = tuple(n * r for n, r in zip(shape, reps))
    if not _fits(full, A.itemsize):
        return NotImplemented
    src = A._source.reshape((1,) * (ndim - A.ndim) + A._source.shape)
    # A source axis of size 1 is broadcast (or of length 1): tiling repeats one element.
    src = np.tile(src, tuple(1 if m == 1 else r for m, r in zip(src.shape, reps)))
    return make_view(src, src.shape, full, "numpy")  # (np.tile copies, even by ones)


def _length(repeats, n):
    """The length ``np.repeat`` gives an axis of ``n`` for integer ``repeats`` (a scalar, or
    a vector of length 1 or ``n``, none negative); None for anything else (NumPy decides)."""
    r = np.asarray(repeats)
    if r.dtype.kind not in "iu" or r.dtype == np.uint64 or r.ndim > 1 or r.size not in (1, n):
        return None
    if r.size and r.min() < 0:
        return None
    if r.size == 1:
        return int(r.reshape(())) * n
    return sum(map(int, r)) if r.max(initial=0) > 2**62 // max(n, 1) else int(r.sum())


def repeat(a, repeats, axis=None):
    """``np.repeat`` of a view along an axis: along a broadcast axis the source's one
    element is repeated (nothing more to copy); along a real axis the source's elements are.
    The source is a new array, as NumPy's repeat returns one."""
    if type(a) is not BroadcastView or axis is None or type(axis) is bool:
        return NotImplemented
    if a.ndim == 0:  # (NumPy repeats a 0-d array as a vector of one)
        a = reshape(a, (1,))
    try:
        ax = normalize_axis_index(axis, a.ndim)
    except (TypeError, ValueError):
        return NotImplemented
    length = _length(repeats, a.shape[ax])
    if length is None:
        return NotImplemented
    full = a.shape[:ax] + (length,) + a.shape[ax + 1:]
    if not _fits(full, a.itemsize):
        return NotImplemented
    src = a._source
    if src.shape[ax] == 1:  # one element along the axis: repeated, it stays one
        src = src.copy()
    else:
        src = np.repeat(src, repeats, axis=ax)
    return make_view(src, src.shape, full, "numpy")


#: ``np.pad`` modes whose padding is computed from each lane alone, exactly as NumPy does on
#: the full array. (Not ``mean``: NumPy's sums along the axis of a lane follow the array's
#: layout, which has fewer lanes here, so they may round otherwise.)
_PAD_MODES = frozenset(("constant", "edge", "linear_ramp", "maximum", "median", "minimum",
                        "reflect", "symmetric", "wrap", "empty"))


#: Modes whose padding copies values of the lane itself (``reflect`` and ``symmetric`` too,
#: unless ``reflect_type="odd"``: ``2 * edge - x``). Not the statistics: NumPy's median of
#: two equal values is their mean, which overflows or rounds large integers, and a maximum
#: of NaNs may come back with other NaN bits (quieted) than the NaN copied.
_COPYING = frozenset(("edge", "wrap", "empty"))


def _padded_axes(pad_width, ndim):
    """The axes ``np.pad`` widens for ``pad_width`` (NumPy's reading of it: a dict of axes,
    else an integer array broadcast to ``(ndim, 2)``); None where NumPy raises or reads it
    otherwise."""
    if type(pad_width) is dict:
        return None  # (NumPy 2.3's form: NumPy's own path)
    try:
        w = np.asarray(pad_width)
        if w.dtype.kind not in "iu" or w.ndim > 2:
            return None
        pairs = np.broadcast_to(w if w.size != 2 or w.shape == (2, 1) else w.ravel(),
                                (ndim, 2))
    except ValueError:
        return None
    if (pairs < 0).any():
        return None
    return frozenset(d for d in range(ndim) if pairs[d].any())


def pad(array, pad_width, mode="constant", **kwargs):
    """``np.pad`` of a view: NumPy's padding of the source stretched along the padded axes
    alone; the axes it leaves alone keep repeating (a view of the padded shape)."""
    if type(array) is not BroadcastView or array.ndim == 0 or array.size == 0:
        return NotImplemented
    if not isinstance(mode, str) or mode not in _PAD_MODES:
        return NotImplemented
    padded = _padded_axes(pad_width, array.ndim)
    if padded is None:
        return NotImplemented
    src = array._source
    # Along a repeated axis, a mode that copies values from within the lane pads one value
    # with itself: the axis stays repeated (NumPy pads the source's one slice, kept once).
    copies = mode in _COPYING or (mode in ("reflect", "symmetric")
                                  and kwargs.get("reflect_type") != "odd")
    kept = {d for d in padded if copies and src.shape[d] == 1 < array.shape[d]}
    stretched = tuple(array.shape[d] if d in padded and d not in kept else n
                      for d, n in enumerate(src.shape))
    r = np.pad(np.broadcast_to(src, stretched), pad_width, mode, **kwargs)
    if any(r.shape[d] != stretched[d] for d in range(array.ndim) if d not in padded):
        return NotImplemented  # (NumPy read pad_width otherwise: its own path)
    full = tuple(n + r.shape[d] - stretched[d] for d, n in enumerate(array.shape))
    if kept:
        r = r[tuple(slice(0, 1) if d in kept else slice(None) for d in range(r.ndim))].copy()
    return make_view(r, r.shape, full, "numpy")
