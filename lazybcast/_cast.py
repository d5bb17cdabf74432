"""``materialize(dtype=...)``: the cast runs inside the copy pass, block by block in cache.

The output is written once, and no full-size intermediate is made. A source much smaller
than the output (a real broadcast) is cast whole, then broadcast by the copy kernel.
Otherwise (a layout change such as HWC -> CHW, or little broadcasting) the output is cut into
blocks of :data:`BLOCK_BYTES`, each done in cache in the cheaper order:

- widening casts (``uint8 -> float32``): the copy kernel moves the block in the narrow dtype
  into a small buffer (its byte shuffles are fastest on small items), then NumPy casts that
  contiguous buffer into the output block;
- narrowing or same-size casts: NumPy casts the block's part of the source into a small
  buffer, then the kernel moves it into place.

Blocks follow the source's memory order (broadcast axes outermost), so each block's part of
the source is one run of memory (all channels of some pixels, not one channel plane).

Dtypes holding Python objects go through ``np.copyto``.
"""

import numpy as np

from lazybcast import _kernels
from lazybcast._blocks import blocks

__all__ = ["BLOCK_BYTES", "materialize_cast"]

#: Output bytes per block (measured best between 128 kB and 2 MB on a 1 MiB-L2 Zen 3).
BLOCK_BYTES = 1024 * 1024


def materialize_cast(source, shape, out, threads):
    """Fill ``out`` (shape ``shape``, any dtype) with ``np.broadcast_to(source, shape)`` cast
    to ``out.dtype`` (NumPy's ``unsafe`` casting, as ``astype``). Returns ``out``."""
    dtype = out.dtype
    if source.dtype.hasobject or dtype.hasobject:
        np.copyto(out, np.broadcast_to(source, shape), casting="unsafe")
        return out
    if np.may_share_memory(source, out):
        source = source.copy()
    if source.size * dtype.itemsize <= max(BLOCK_BYTES, out.nbytes // 4):
        # Mostly broadcast: casting the compact source is cheap; one kernel pass writes out.
        _kernels.copy_broadcast(source.astype(dtype, order="K"), out, threads)
        return out
    keep = [n != 1 or m == 1 for n, m in zip(source.shape, shape)]
    # Blocks follow the source's memory order (broadcast axes outermost), so that each block's
    # source part is one run of memory: all channels of some pixels, not one channel plane.
    order = sorted(range(len(shape)),
                   key=lambda d: (keep[d] and shape[d] > 1, -abs(source.strides[d])))

    def source_part(key):
        return source[tuple(k if kept else slice(None) for k, kept in zip(key, keep))]

    if source.dtype.itemsize < dtype.itemsize:
        # Copy in the narrow dtype into a C-ordered buffer, then cast it into the output block.
        buffer = np.empty(max(1, BLOCK_BYTES // dtype.itemsize), dtype=source.dtype)
        for key in blocks(shape, dtype.itemsize, BLOCK_BYTES, order):
            target = out[key]
            part = buffer[:target.size].reshape(target.shape)
            _kernels.copy_broadcast(source_part(key), part, 1)
            np.copyto(target, part, casting="unsafe")
        return out
    # Cast the source part (a sequential read), then let the kernel move it into place.
    for key in blocks(shape, dtype.itemsize, BLOCK_BYTES, order):
        _kernels.copy_broadcast(source_part(key).astype(dtype, order="K"), out[key], 1)
    return out
