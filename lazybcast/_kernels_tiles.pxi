# Included by _kernels.pyx. Transposing copies (no GIL, cannot fail): the last two axes
# walked in tiles through an L1-sized buffer, and image channels (2 to 4 items) interleaved
# or deinterleaved in registers.

cdef void _tiles(const Plan* p, const char* src, char* dst) noexcept nogil:
    """The last two axes of a transposing copy, tile by tile through an L1-sized buffer:
    each tile is read in the source's order and written in the destination's, so both
    buffers are walked in contiguous runs instead of one of them column by column."""
    cdef int a = p.ndim - 2, b = p.ndim - 1
    cdef intp_t size = p.itemsize, tile = 8, i, j, ni, nj
    # Tiles of up to 32 kB, the largest square of items that fits (128x128 for 1- and 2-byte
    # items): measured, 2048x2048 uint16 transposed 1.0 ms with 16 kB tiles, 0.48 ms with
    # 32 kB; no other item size changed.
    cdef char buf[32768]
    while (2 * tile) * (2 * tile) * size <= sizeof(buf):
        tile *= 2
    if tile * tile * size > sizeof(buf):  # items too large for any tile: plain rows
        _rows_dispatch(size, p.shape[a], p.sstride[a], p.dstride[a], p.shape[b],
                       p.sstride[b], p.dstride[b], src, dst, False)
        return
    i = 0
    while i < p.shape[a]:
        ni = min(tile, p.shape[a] - i)
        j = 0
        while j < p.shape[b]:
            nj = min(tile, p.shape[b] - j)
            # buf[jj, ii] <- src[i + ii, j + jj]: runs along axis a, short source stride
            _rows_dispatch(size, nj, p.sstride[b], ni * size, ni, p.sstride[a], size,
                           src + i * p.sstride[a] + j * p.sstride[b], buf, False)
            # dst[i + ii, j + jj] <- buf[jj, ii]: runs along axis b, short destination stride
            if p.dstride[b] != size or not lzb_scatter_transposed(
                    buf, ni, nj, dst + i * p.dstride[a] + j * p.dstride[b], p.dstride[a], size,
                    p.stream):
                _rows_dispatch(size, ni, size, p.dstride[a], nj, ni * size, p.dstride[b],
                               buf, dst + i * p.dstride[a] + j * p.dstride[b], False)
            j += tile
        i += tile


cdef inline bint _channels(const Plan* p, int d, const char* src, char* dst) noexcept nogil:
    """Axes ``d`` and ``d + 1`` (the last) as a transpose with 2 to 4 channels on one side,
    pixels by channels, packed: channels interleaved from planes (CHW -> HWC), or planes
    from interleaved channels (HWC -> CHW, axes swapped by _channels_last)."""
    cdef intp_t size = p.itemsize, n0 = p.shape[d], n1 = p.shape[d + 1]
    if n1 > 4 or (p.sstride[d] != n1 * size and p.dstride[d] != n1 * size):
        return False
    if (p.dstride[d] == n1 * size and p.sstride[d] == size and p.dstride[d + 1] == size
            and p.sstride[d + 1] != 0):  # (a broadcast inner axis is a fill: _rows)
        return lzb_channels(dst, 0, src, p.sstride[d + 1], n0, n1, size, True)
    if p.sstride[d] == n1 * size and p.sstride[d + 1] == size and p.dstride[d] == size:
        if not lzb_channels(dst, p.dstride[d + 1], src, 0, n0, n1, size, False):
            # no kernel: channel plane by channel plane, a strided read each
            _rows_dispatch(size, n1, size, p.dstride[d + 1], n0, n1 * size, size, src, dst,
                           p.stream)
        return True
    return False
