"""``where=`` masks of reductions at source cost: the source and the mask on their joint
compact shape (:func:`masked`), and the counts of a masked sum (:func:`counted`).

A boolean mask that repeats too (a boolean view, a boolean array of fewer axes or with stride-0
axes, a Python bool) is one value per cell of the joint compact shape of the source and the
mask: along an axis both leave broadcast, the view repeats a value together with its mask, so
:mod:`lazybcast._reductions` and :mod:`lazybcast._moments` reduce the pair as they reduce a
source, scaled by the repeats. A sum needs less: where the mask varies along the reduced axes
only where the source repeats, it is the source's sum scaled by the count of selected elements
per cell; a minimum, maximum, ``any`` or ``all`` is the source's where a cell selects
anything.

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.arange(3.0)[:, None], (3, 10**6))
>>> cols = np.arange(10**6) % 4 == 0
>>> src, mask = masked(v, cols)
>>> src.shape, mask.shape  # the joint shape: every logical element here
((3, 1000000), (3, 1000000))
>>> np.sum(v, axis=1, where=cols).source  # counted: the column times 250 000, 3 + 10**6 read
array([     0., 250000., 500000.])
"""

import numpy as np

from lazybcast._ufuncs import _compact, _squash
from lazybcast._view import BroadcastView

__all__ = ["counted", "masked", "once", "zero_ties"]

_NoValue = np._NoValue


def masked(view, where):
    """``where=`` on the source: ``(source, mask)``, the view's source and the boolean mask
    both broadcast (stride 0, nothing copied) to their joint compact shape, where each axis is
    the view's or 1 (0 along the view's empty axes). Along an axis both keep at 1 the view
    repeats a value together with its mask, so a reduction of the pair, scaled as
    :func:`lazybcast._reductions.reduce` scales, is the logical one. The cost is the joint
    shape's: the source's when the mask varies only where the source does, up to the logical
    size (NumPy's, at NumPy's speed) when each varies where the other repeats.

    False without a mask (``where=True``); None where NumPy decides: a mask of another dtype
    (NumPy casts it, or refuses it, by its own rules), one that does not broadcast to the
    view's shape (NumPy's error), and a view of strings or objects (joined in order, with no
    identity to stand for a masked value)."""
    if where is True or where is _NoValue:
        return False
    if view.dtype.kind not in "biufcmM":
        return None
    t = type(where)
    if t is bool or t is np.bool_:
        mask, shape = np.asarray(where), ()
    elif t is BroadcastView or t is np.ndarray:
        mask, shape = _compact(where)
    elif t is list or t is tuple:
        try:
            mask = np.asarray(where)
        except ValueError:  # (ragged: NumPy's error)
            return None
        if mask.size == 0:
            mask = mask.astype(np.bool_)  # ([] is float64; NumPy reads it as bool)
        mask, shape = _squash(mask), mask.shape
    else:
        return None
    if mask.dtype != np.bool_ or len(shape) > view.ndim or any(
            m != 1 and m != n for m, n in zip(shape, view.shape[view.ndim - len(shape):])):
        return None
    src = view._source
    mask = mask.reshape((1,) * (view.ndim - mask.ndim) + mask.shape)
    joint = tuple(max(a, b) if n else 0 for a, b, n in zip(src.shape, mask.shape, view.shape))
    return np.broadcast_to(src, joint), np.broadcast_to(mask, joint)


def counted(view, mask, axes):
    """For a sum (or a minimum, maximum, ``any``, ``all``) under a mask (the joint mask of
    :func:`masked`) that varies along the reduced ``axes`` only where the source repeats (or
    not at all): ``(source, counts, counted axes, selected)``, so that the sum is the
    source's along ``axes`` (once per distinct source cell: :func:`once`) scaled by
    each result cell's count of selected elements; an extreme is the source's in the cells
    that count something, the reduction of nothing in the others. None otherwise (the joint
    path).

    - ``source``: the view's source broadcast (stride 0) to the result's cells along the kept
      axes, its own along ``axes``;
    - ``counts``: the number of selected elements along the counted axes (those where the
      mask varies and the source repeats), per result cell (0 where nothing is selected);
    - ``selected``: True, or the source's cells that some result cell selects, broadcast like
      ``source``: the others are not summed (NumPy never adds them: no ``inf - inf``). (The
      extremes take each result cell's own mask, ``counts > 0``, instead: NumPy then reduces
      nothing into the cells that select nothing itself, with its conversions and warnings.)

    The cost is the source's, the mask's and the result's apart, not their joint shape's: a
    column under a mask of rows reads the column and the mask once."""
    m = _squash(mask)
    src = view._source
    if src.dtype.kind not in "biufc" or 0 in view.shape or not axes:
        return None  # (axis=(): elementwise, the joint shape is the result's)
    counted_axes = tuple(d for d in axes if m.shape[d] > 1 and src.shape[d] == 1)
    if any(m.shape[d] > 1 for d in axes if d not in counted_axes):
        return None  # (the mask also varies where the source does: their joint shape)
    counts = np.add.reduce(m, axis=counted_axes, keepdims=True, dtype=np.intp)
    shape = tuple(a if d in axes else max(a, b)
                  for d, (a, b) in enumerate(zip(src.shape, counts.shape)))
    selected = counts > 0
    if selected.all():
        return np.broadcast_to(src, shape), counts, counted_axes, True
    # (a source cell counts if any result cell it is copied to selects something)
    spread = tuple(d for d in range(src.ndim) if src.shape[d] == 1 and selected.shape[d] > 1)
    selected = np.logical_or.reduce(selected, axis=spread, keepdims=True)
    return (np.broadcast_to(src, shape), counts, counted_axes,
            True if selected.all() else np.broadcast_to(selected, shape))


def once(numpy_reduce, src, axes, masking, **kwargs):
    """``numpy_reduce(src, axis=axes, keepdims=True, **kwargs, **masking)`` of a source
    that may be broadcast (stride 0) along kept axes (a counted reduction's: the result's
    cells): each distinct cell reduced once, then copied to the others (into ``out``, or a new
    array, scaled in place). Copied only along the axes where the mask repeats too (a joint
    mask varies where the source repeats)."""
    where = masking.get("where")
    copied = tuple(d for d, (n, st) in enumerate(zip(src.shape, src.strides))
                   if st == 0 and n > 1 and d not in axes
                   and (where is None or where.strides[d] == 0))
    if not copied:
        return numpy_reduce(src, axis=axes, keepdims=True, **kwargs, **masking)
    cut = tuple(slice(0, 1) if d in copied else slice(None) for d in range(src.ndim))
    if masking:
        masking = {"where": masking["where"][cut]}
    out = kwargs.pop("out", None)
    if out is None:
        r = numpy_reduce(src[cut], axis=axes, keepdims=True, **kwargs, **masking)
        return np.array(np.broadcast_to(r, tuple(1 if d in axes else n
                                                 for d, n in enumerate(src.shape))))
    # (into out's first cells, so that NumPy resolves the loop and refuses what it refuses)
    numpy_reduce(src[cut], axis=axes, keepdims=True, out=out[cut], **kwargs, **masking)
    np.copyto(out, np.broadcast_to(out[cut].copy(), out.shape))
    return out


def zero_ties(ufunc, nan, src, initial):
    """True where ``np.fmax`` / ``np.fmin`` (and the NaN-ignoring extremes, built on them)
    may meet ``0.0`` and ``-0.0`` together: which of the two NumPy keeps depends on its inner
    loop, so a counted reduction (each distinct cell once) could keep the other one."""
    return ((nan or ufunc in (np.fmax, np.fmin)) and src.dtype.kind in "fc"
            and (initial is not _NoValue and initial == 0 or bool((src == 0).any())))
