"""``materialize(dtype=...)``: the cast runs inside the copy pass, block by block in cache.

The output is written once. A source much smaller than the output (a real broadcast) is cast
whole, then broadcast by the copy kernel. Otherwise (a layout change such as HWC -> CHW, or
little broadcasting) the output is cut into blocks of :data:`BLOCK_BYTES`; each block's part of
the source is cast into a small buffer that stays in cache (NumPy's ``astype``, keeping the
source's memory order so that the cast reads sequentially), and the copy kernel moves it into
place (transposing if needed). Dtypes holding Python objects go through ``np.copyto``.
"""

import numpy as np

from lazybcast import _kernels
from lazybcast._blocks import blocks

__all__ = ["BLOCK_BYTES", "materialize_cast"]

#: Output bytes per block: source block, cast block and output block fit a 1 MiB L2 together.
BLOCK_BYTES = 256 * 1024


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
    for key in blocks(shape, dtype.itemsize, BLOCK_BYTES):
        skey = tuple(k if kept else slice(None) for k, kept in zip(key, keep))
        _kernels.copy_broadcast(source[skey].astype(dtype, order="K"), out[key], 1)
    return out
