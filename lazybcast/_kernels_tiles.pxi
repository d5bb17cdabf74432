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
                       p.sstride[b], p.dstride[b], src, dst, False, p.cached)
        return
    if p.source_order and _tiles_rows(p, src, dst):
        return  # (in the source's order: _tiles_in_source_order)
    if (p.stream and p.sstride[a] == size and p.dstride[b] == size
            and _tiles_staged(p, tile, src, dst)):
        return
    # A source axis read downward a few items to a line (the row kernel walks such a run
    # upward, from its end): tiles tall along it, so that each run is long, and bands taken
    # from the last to the first, so that the reads go up across bands too. Each tile is
    # 64 // itemsize items wide (a 64-byte line of the destination's rows; at least one
    # item), wider where the axis is short, up to the square's width. Zen 5, one thread,
    # 38 such layouts of benchmarks/layout_scan.py (seeds 1-12): 1.1x geometric mean, up
    # to 3.3x (u1 (102400, 224) of strides (-2, 204800) 34.9 -> 10.6 ms), none slower
    # beyond noise; contiguous reversed runs (a step of -1 item) gained on some layouts and
    # lost up to 0.75x on others, so they keep the square (benchmarks/RESULTS.md, "Tall
    # tiles for runs read upward").
    cdef intp_t ti = tile, tj = tile, bands, k
    cdef bint upward = (-64 < p.sstride[a] < 0 and p.sstride[a] != -size
                        and p.shape[a] > tile)
    if upward:
        tj = max(1, 64 // size)
        ti = min(p.shape[a], sizeof(buf) // (tj * size))
        tj = max(tj, min(tile, sizeof(buf) // (ti * size)))  # (ti * tj * size <= 32 kB)
    bands = (p.shape[a] + ti - 1) // ti
    for k in range(bands):
        i = (bands - 1 - k) * ti if upward else k * ti
        ni = min(ti, p.shape[a] - i)
        j = 0
        while j < p.shape[b]:
            nj = min(tj, p.shape[b] - j)
            # buf[jj, ii] <- src[i + ii, j + jj]: runs along axis a, short source stride
            _rows_dispatch(size, nj, p.sstride[b], ni * size, ni, p.sstride[a], size,
                           src + i * p.sstride[a] + j * p.sstride[b], buf, False, True)
            # dst[i + ii, j + jj] <- buf[jj, ii]: runs along axis b, short destination stride
            # Ordinary stores even for a large output: a tile writes a few 16-byte pieces to
            # each of many rows in turn, which non-temporal stores handle badly (a large
            # output streams through _tiles_rows or _tiles_staged instead).
            if p.dstride[b] != size or not lzb_scatter_transposed(
                    buf, ni * size, ni, nj, dst + i * p.dstride[a] + j * p.dstride[b],
                    p.dstride[a], size, NULL, 0):
                _rows_dispatch(size, ni, size, p.dstride[a], nj, ni * size, p.dstride[b],
                               buf, dst + i * p.dstride[a] + j * p.dstride[b], False, True)
            j += tj


#: Planes transposed through a staging block in this process (atomic; a test hook reads it).
cdef intp_t _staged_planes = 0


cdef bint _tiles_staged(const Plan* p, intp_t tile, const char* src, char* dst) noexcept nogil:
    """A transpose whose output is streamed (too large for the cache), with rows contiguous
    on both sides: through a staging block of about TRANSPOSE_STAGE_BYTES, written out in
    long non-temporal runs (lzb_transpose_staged). False (nothing done) for items other
    than 1, 2, 4, 8 or 16 bytes, a plane under a tile high or two tiles wide, or a block that
    cannot be allocated."""
    cdef int a = p.ndim - 2, b = p.ndim - 1
    cdef intp_t size = p.itemsize
    cdef intp_t cols = (_transpose_stage_bytes // (tile * size)) // tile * tile
    cdef char* stage
    cdef int done
    if size > 16 or size & (size - 1) or cols < tile or p.shape[a] < tile or p.shape[b] < 2 * tile:
        return False
    cols = min(cols, (p.shape[b] + tile - 1) // tile * tile)  # no wider than the plane
    stage = <char*>malloc(tile * (tile + cols) * size)
    if stage == NULL:
        return False
    done = lzb_transpose_staged(src, p.sstride[b], dst, p.dstride[a], p.shape[a], p.shape[b],
                                size, tile, stage, cols)
    free(stage)
    if done:
        lzb_next_item(&_staged_planes)
    return done


#: Planes (or blocks of one) of them transposed in the source's order (a test hook reads it).
cdef intp_t _row_order_planes = 0

#: The output's runs in a transpose in the source's order (lzb_transpose_rows), in bytes.
cdef enum:
    ROW_ORDER_RUN_BYTES = 256


cdef inline intp_t _stage_rows(intp_t stage_bytes, intp_t size, intp_t n) noexcept nogil:
    """Source rows lzb_transpose_rows stages at a time through ``stage_bytes`` (runs of
    ROW_ORDER_RUN_BYTES), for items of ``size`` bytes and ``n`` rows: whole register blocks
    (16 bytes of rows), at least one, at most ``n``."""
    cdef intp_t block = 16 // size
    return min(max(block, stage_bytes // ROW_ORDER_RUN_BYTES // block * block), n)


cdef intp_t _tiles_in_source_order(Plan* p, const char** src, char** dst, intp_t block_bytes,
                                   intp_t source_bytes) except -1:
    """Before a transpose is cut into blocks (_run_plan): swap its last two axes, so that the
    blocks (and threads) take whole source rows, which lzb_transpose_rows reads in order and
    writes out with non-temporal stores, instead of bands of the output, which read a short
    piece of every source row. Only for rows that start on cache lines (the runs written
    must too), items of 1 to 16 bytes, a staging block set, vector code compiled in (SSE2),
    a block that holds a run of whole source rows, a source (``source_bytes`` read) larger
    than ROW_ORDER_SOURCE_BYTES (L2), and no small repeated plane (written once and copied
    by _run: each would be transposed again); and for an output that streams, or where the
    first such transpose measured this order faster than the tiles (_calibrate_stage, which
    runs then). The source rows up to the output's first line boundary are
    copied first, on their own (_run_peel), and the blocks hold whole runs, so that the runs
    start on lines (in the first plane, and in every plane whose stride is a multiple of 64
    bytes). Returns the bytes per block (``block_bytes``, or a whole number of runs)."""
    cdef int a = p.ndim - 2, b = p.ndim - 1, d
    cdef intp_t t, size = p.itemsize, cols = ROW_ORDER_RUN_BYTES // p.itemsize, rows
    cdef intp_t lead = (64 - (<size_t>dst[0] & 63)) & 63
    cdef Plan peel
    if not (p.tiled and _transpose_stage_bytes > 0 and lzb_cpu_in_use() & 4
            and source_bytes > _row_order_source and size <= 16 and size & (size - 1) == 0
            and p.sstride[a] == size and p.dstride[b] == size
            and p.dstride[a] & 63 == 0 and lead % size == 0
            and p.shape[b] * size >= ROW_ORDER_RUN_BYTES
            and p.shape[a] * size * cols <= block_bytes):
        return block_bytes
    for d in range(a):
        if p.sstride[d] == 0 and p.dblock[d] > 0 and p.dstride[d] < _replicate_chunk:
            return block_bytes
    if not _stage_calibrated:
        _calibrate_stage()
    if not (p.stream or _source_order_cached):
        return block_bytes
    p.source_order = True
    t = p.shape[a]; p.shape[a] = p.shape[b]; p.shape[b] = t
    t = p.sstride[a]; p.sstride[a] = p.sstride[b]; p.sstride[b] = t
    t = p.dstride[a]; p.dstride[a] = p.dstride[b]; p.dstride[b] = t
    for d in range(p.ndim):
        p.dblock[d] = 0  # (no axis is a block _run copies whole any more)
    if lead:
        peel = p[0]
        peel.shape[a] = lead // size
        _run_peel(&peel, src[0], dst[0])
        src[0] += peel.shape[a] * p.sstride[a]
        dst[0] += peel.shape[a] * p.dstride[a]
        p.shape[a] -= peel.shape[a]
    rows = block_bytes // (p.shape[b] * size)  # source rows per block
    if rows < p.shape[a]:
        block_bytes = rows // cols * cols * p.shape[b] * size
    return block_bytes


#: Pieces of peels run (_run_peel; a test hook reads it).
cdef intp_t _peeled_pieces = 0


cdef int _run_peel(const Plan* peel, const char* src, char* dst) except -1:
    """Run ``peel``, the first few source rows of every plane of a streamed transpose
    (_tiles_in_source_order), in pieces whose output spans about CHUNK_BYTES, checking for
    Ctrl-C between them: planes together along the last axis before them while their spans
    fit, else one plane cut along its last axis (the output's rows, far apart). The peel
    writes a few bytes of every output row, so it is the first touch of each page of an
    output whose rows are a page or two: on the Xeon VM a fresh 2 GiB output took 1-6 s to
    fault in, all of it in the peel when it ran as one piece."""
    cdef int a = peel.ndim - 2, b = peel.ndim - 1, c = peel.ndim - 3, d
    cdef Plan piece = peel[0]
    cdef intp_t row = max(1, abs(peel.dstride[b]))
    cdef intp_t planes = max(1, _chunk_bytes // max(1, row * peel.shape[b]))
    cdef intp_t cols = peel.shape[b] if planes > 1 else max(1, _chunk_bytes // row)
    cdef intp_t k, rem, i, j, n = 1, along = peel.shape[c] if c >= 0 else 1
    cdef const char* s
    cdef char* t
    for d in range(c):
        n *= peel.shape[d]
        piece.shape[d] = 1
    for k in range(n):
        s, t, rem = src, dst, k
        for d in range(c - 1, -1, -1):
            i = rem % peel.shape[d]
            rem //= peel.shape[d]
            s += i * peel.sstride[d]
            t += i * peel.dstride[d]
        i = 0
        while i < along:
            if c >= 0:
                piece.shape[c] = min(planes, along - i)
            j = 0
            while j < peel.shape[b]:
                piece.shape[b] = min(cols, peel.shape[b] - j)
                with nogil:
                    plan_run(&piece, s + j * peel.sstride[b], t + j * peel.dstride[b])
                lzb_next_item(&_peeled_pieces)
                PyErr_CheckSignals()
                j += piece.shape[b]
            if c >= 0:
                s += piece.shape[c] * peel.sstride[c]
                t += piece.shape[c] * peel.dstride[c]
            i += planes
    return 0


cdef bint _tiles_rows(const Plan* p, const char* src, char* dst) noexcept nogil:
    """A transpose in the source's order (source rows along the last axis but one:
    _tiles_in_source_order), through a staging block of about TRANSPOSE_STAGE_BYTES
    (lzb_transpose_rows; or TRANSPOSE_STAGE_SMALL_BYTES where _calibrate_stage measured it
    faster). False (nothing done) for other item sizes or a block that cannot be
    allocated."""
    cdef int a = p.ndim - 2, b = p.ndim - 1
    cdef intp_t size = p.itemsize, cols = ROW_ORDER_RUN_BYTES // p.itemsize, rows
    cdef char* stage
    cdef int done
    if size > 16 or size & (size - 1):
        return False
    rows = _stage_rows(_rows_stage_bytes or _transpose_stage_bytes, size, p.shape[b])
    stage = <char*>malloc(rows * cols * size)
    if stage == NULL:
        return False
    done = lzb_transpose_rows(src, p.sstride[a], dst, p.dstride[b], p.shape[b], p.shape[a],
                              size, stage, rows, cols)
    free(stage)
    if done:
        lzb_next_item(&_staged_planes)
        lzb_next_item(&_row_order_planes)
    return done


cdef inline bint _channels(const Plan* p, int d, const char* src, char* dst) noexcept nogil:
    """Axes ``d`` and ``d + 1`` (the last) as a transpose with 2 to 4 channels on one side,
    pixels by channels, packed: channels interleaved from planes (CHW -> HWC), or planes
    from interleaved channels (HWC -> CHW, axes swapped by _channels_last)."""
    cdef intp_t size = p.itemsize, n0 = p.shape[d], n1 = p.shape[d + 1]
    if n1 > 4 or (p.sstride[d] != n1 * size and p.dstride[d] != n1 * size):
        return False
    if (p.dstride[d] == n1 * size and p.sstride[d] == size and p.dstride[d + 1] == size
            and p.sstride[d + 1] != 0):  # (a broadcast inner axis is a fill: _rows)
        return lzb_channels(dst, 0, src, p.sstride[d + 1], n0, n1, size, True, p.stream)
    if p.sstride[d] == n1 * size and p.sstride[d + 1] == size and p.dstride[d] == size:
        if not lzb_channels(dst, p.dstride[d + 1], src, 0, n0, n1, size, False, p.stream):
            # no kernel: channel plane by channel plane, a strided read each
            _rows_dispatch(size, n1, size, p.dstride[d + 1], n0, n1 * size, size, src, dst,
                           p.stream, p.cached)
        return True
    return False
