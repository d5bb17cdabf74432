"""Cutting a copy into blocks: cache-sized passes (cast in copy) and interruptible copies.

A block is a key of slices (one per axis, so ranks are kept) that selects at most ``target``
bytes of the output, or one innermost row if a row is larger. The axes are walked in an
``order`` (outermost first; C order by default): the innermost axes stay whole, one axis is
cut into runs, the outer ones are taken one index at a time. The keys of :func:`blocks`
visit every element of the shape exactly once.
"""

import itertools

__all__ = ["blocks"]


def blocks(shape, itemsize, target, order=None):
    """Keys covering ``shape``, each selecting about ``target`` bytes.

    Examples
    --------
    >>> [k[0] for k in blocks((5, 4), 8, 64)]
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    >>> len(list(blocks((2, 3, 1000), 1, 500)))   # rows larger than the target: cut inside
    12
    >>> next(blocks((3, 100, 100), 4, 4000, order=(1, 2, 0)))   # HWC memory under a CHW shape
    (slice(None, None, None), slice(0, 3, None), slice(None, None, None))
    """
    if 0 in shape:
        return
    if not shape:
        yield ()
        return
    order = tuple(range(len(shape))) if order is None else tuple(order)
    k = len(order) - 1
    inner = itemsize
    while k > 0 and inner * shape[order[k]] <= target:
        inner *= shape[order[k]]
        k -= 1
    ax = order[k]
    per = max(1, target // inner)
    key = [slice(None)] * len(shape)
    outer = order[:k]
    for lead in itertools.product(*(range(shape[d]) for d in outer)):
        for d, i in zip(outer, lead):
            key[d] = slice(i, i + 1)
        for start in range(0, shape[ax], per):
            key[ax] = slice(start, min(start + per, shape[ax]))
            yield tuple(key)
