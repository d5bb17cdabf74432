"""Cutting a copy into blocks: cache-sized passes (cast in copy) and interruptible copies.

A block is a key of slices (one per axis, so ranks are kept) that selects a C-ordered run of
at most ``target`` bytes of the output, or one innermost row if a row is larger. Walking the
keys of :func:`blocks` in order visits every element of the shape exactly once.
"""

import itertools

__all__ = ["blocks"]


def blocks(shape, itemsize, target):
    """Keys covering ``shape`` in C order, each selecting about ``target`` bytes.

    Examples
    --------
    >>> [k[0] for k in blocks((5, 4), 8, 64)]
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    >>> len(list(blocks((2, 3, 1000), 1, 500)))   # rows larger than the target: cut inside
    12
    """
    if 0 in shape:
        return
    if not shape:
        yield ()
        return
    ax = len(shape) - 1
    inner = itemsize
    while ax > 0 and inner * shape[ax] <= target:
        inner *= shape[ax]
        ax -= 1
    per = max(1, target // inner)
    rest = (slice(None),) * (len(shape) - ax - 1)
    for lead in itertools.product(*(range(n) for n in shape[:ax])):
        head = tuple(slice(i, i + 1) for i in lead)
        for start in range(0, shape[ax], per):
            yield head + (slice(start, min(start + per, shape[ax])),) + rest
