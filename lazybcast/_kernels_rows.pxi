# Included by _kernels.pyx. Row kernels (no GIL, cannot fail): n0 rows of n1 items of one
# size -- contiguous runs (memcpy or non-temporal stores), runs of one repeated item
# (overlapping vector stores, np.repeat shuffles, memset), reversed runs, strided loops -- and
# the replication of a block written once.

cdef inline void _fill_rows(item_t* tag, intp_t n0, intp_t s0, intp_t d0, intp_t n1,
                            const char* src, char* dst) noexcept nogil:
    """``n0`` rows, each ``n1`` contiguous copies of one source item. Inlined with a
    constant ``n1`` for the short rows of ``(N, 1) -> (N, k)``, so the row is unrolled."""
    cdef intp_t i, j
    cdef item_t v
    cdef char* d
    for i in range(n0):
        memcpy(&v, src + i * s0, sizeof(item_t))
        d = dst + i * d0
        for j in range(n1):
            memcpy(d + j * <intp_t>sizeof(item_t), &v, sizeof(item_t))


cdef inline void _reverse_streamed(item_t* tag, intp_t n, const char* src,
                                   char* dst) noexcept nogil:
    """A reversed run of a large output: reversed into an L1 buffer, then written out with
    non-temporal stores (no read-for-ownership of the destination)."""
    cdef char buf[4096]
    cdef intp_t size = sizeof(item_t), per = sizeof(buf) // sizeof(item_t), done = 0, c, j
    while done < n:
        c = min(per, n - done)
        if not lzb_reverse(buf, src - done * size, c, size):
            for j in range(c):
                memcpy(buf + j * size, src - (done + j) * size, sizeof(item_t))
        lzb_stream_copy(dst + done * size, buf, c * size)
        done += c


cdef inline void _rows(item_t* tag, intp_t n0, intp_t s0, intp_t d0,
                       intp_t n1, intp_t s1, intp_t d1,
                       const char* src, char* dst, bint stream) noexcept nogil:
    """``n0`` rows of ``n1`` items of one fixed size."""
    cdef intp_t i, j
    cdef intp_t size = sizeof(item_t)
    cdef const char* s
    cdef char* d
    if s1 == 0 and d1 == size:
        # A large output: rows of one item with non-temporal broadcast stores (lzb_fill_rows
        # would read every destination line for ownership first).
        if stream and n1 * size >= 1024 and lzb_stream_pattern(dst, src, size, n1 * size):
            for i in range(1, n0):
                if not lzb_stream_pattern(dst + i * d0, src + i * s0, size, n1 * size):
                    lzb_fill_rows(dst + i * d0, 0, src + i * s0, 0, 1, size, n1 * size)
            return
        if lzb_fill_rows(dst, d0, src, s0, n0, size, n1 * size):
            return
        # portable loops (no SSE2)
        if n1 == 2:
            _fill_rows(tag, n0, s0, d0, 2, src, dst)
        elif n1 == 3:
            _fill_rows(tag, n0, s0, d0, 3, src, dst)
        elif n1 == 4:
            _fill_rows(tag, n0, s0, d0, 4, src, dst)
        elif n1 == 8:
            _fill_rows(tag, n0, s0, d0, 8, src, dst)
        elif n1 == 16:
            _fill_rows(tag, n0, s0, d0, 16, src, dst)
        else:
            _fill_rows(tag, n0, s0, d0, n1, src, dst)
    elif s1 == size and d1 == size:
        for i in range(n0):
            if stream:
                lzb_stream_copy(dst + i * d0, src + i * s0, n1 * size)
            else:
                lzb_copy(dst + i * d0, src + i * s0, n1 * size)
    elif s1 == -size and d1 == size:
        for i in range(n0):
            s = src + i * s0
            d = dst + i * d0
            if stream:
                _reverse_streamed(tag, n1, s, d)
            elif not lzb_reverse(d, s, n1, size):
                for j in range(n1):
                    memcpy(d + j * size, s - j * size, sizeof(item_t))
    elif -64 < s1 < 0:
        # Items read downward a few to a line: walk the row from its end, so that the reads
        # go up (and the writes down). A C model of these rows (Zen 5, 192 items every other
        # one, from planes 3 MiB apart, best of 5, ms) read downward / upward: 1-byte items
        # 33.0 / 6.3, 2-byte 18.6 / 7.3, 4-byte 9.4 / 6.4, 8-byte 5.9 / 5.4; at -64 bytes
        # the two cost the same (11.9 / 11.6), and larger steps were not measured
        # (benchmarks/RESULTS.md, "Strided runs read upward").
        for i in range(n0):
            s = src + i * s0
            d = dst + i * d0
            for j in range(n1 - 1, -1, -1):
                memcpy(d + j * d1, s + j * s1, sizeof(item_t))
    else:
        for i in range(n0):
            s = src + i * s0
            d = dst + i * d0
            for j in range(n1):
                memcpy(d + j * d1, s + j * s1, sizeof(item_t))


cdef inline void _copy_item(char* d, const char* s, intp_t size) noexcept nogil:
    """One item of an odd size: up to 16 bytes, two loads of 2, 4 or 8 bytes (at the start
    and at the end, overlapping) then two stores, where a byte loop became a ``memcpy``
    call per item; larger items by ``memcpy``."""
    cdef uint16_t a2, b2
    cdef uint32_t a4, b4
    cdef uint64_t a8, b8
    if size > 16:
        memcpy(d, s, size)
    elif size >= 8:
        memcpy(&a8, s, 8)
        memcpy(&b8, s + size - 8, 8)
        memcpy(d, &a8, 8)
        memcpy(d + size - 8, &b8, 8)
    elif size >= 4:
        memcpy(&a4, s, 4)
        memcpy(&b4, s + size - 4, 4)
        memcpy(d, &a4, 4)
        memcpy(d + size - 4, &b4, 4)
    elif size >= 2:
        memcpy(&a2, s, 2)
        memcpy(&b2, s + size - 2, 2)
        memcpy(d, &a2, 2)
        memcpy(d + size - 2, &b2, 2)
    elif size == 1:
        d[0] = s[0]


cdef inline void _fill_odd(char* d, const char* s, intp_t size, intp_t n1) noexcept nogil:
    """``n1`` contiguous copies of the item at ``s``, of an odd size under 16 bytes: each
    copy but the last is one store of the next power-of-two width (4, 8 or 16 bytes), whose
    extra bytes fall in the next copy's place and are overwritten by it; the last copy is
    exact, so nothing past the run is written and nothing past the item is read. For runs
    of 4 copies or more: shorter ones lose more on the setup than the stores gain (Zen 4,
    49932 rows of 3-byte records, one thread: 16 copies 0.96-1.5 -> 0.47-0.69 ms, 8 copies
    of 7 bytes 0.73-1.2 -> 0.45-0.52 ms, 2 copies 0.19-0.30 -> 0.35-0.40 ms)."""
    cdef uint64_t v[2]
    cdef intp_t j
    v[0] = 0
    v[1] = 0
    _copy_item(<char*>v, s, size)
    if size < 4:
        for j in range(n1 - 1):
            memcpy(d + j * size, v, 4)
    elif size < 8:
        for j in range(n1 - 1):
            memcpy(d + j * size, v, 8)
    else:
        for j in range(n1 - 1):
            memcpy(d + j * size, v, 16)
    _copy_item(d + (n1 - 1) * size, s, size)


cdef void _rows_any(intp_t size, intp_t n0, intp_t s0, intp_t d0,
                    intp_t n1, intp_t s1, intp_t d1,
                    const char* src, char* dst, bint stream) noexcept nogil:
    """``n0`` rows of ``n1`` items of any other size."""
    cdef intp_t i, j
    cdef const char* s
    cdef char* d
    if s1 == 0 and d1 == size and n1 >= 2 and lzb_fill_odd_rows(dst, d0, src, s0, n0, size,
                                                                  n1 * size):
        return  # (SSSE3 byte shuffles: items of 3 to 15 bytes)
    for i in range(n0):
        s = src + i * s0
        d = dst + i * d0
        if s1 == 0 and d1 == size and size < 16 and n1 >= 4:
            _fill_odd(d, s, size, n1)
        elif s1 == size and d1 == size:
            if stream:
                lzb_stream_copy(d, s, n1 * size)
            else:
                lzb_copy(d, s, n1 * size)
        else:
            for j in range(n1):
                _copy_item(d + j * d1, s + j * s1, size)


cdef inline void _rows_dispatch(intp_t size, intp_t n0, intp_t s0, intp_t d0,
                                intp_t n1, intp_t s1, intp_t d1,
                                const char* src, char* dst, bint stream,
                                bint cached) noexcept nogil:
    cdef intp_t i
    if (s0 == 0 and n0 > 1 and s1 == size and d1 == size and not stream
            and n1 * size >= COPY_DOWN_MIN
            and lzb_copy_down(dst, d0, src, n0, n1 * size, _replicate_copy, cached)):
        # One row of COPY_DOWN_MIN bytes or more broadcast down a column, not streamed, any
        # item size (lzb_copy_down: swept out from its first two copies, or, in an output
        # that stays in the cache, copied a chunk at a time from L1), where memcpy would
        # read the whole row back for every copy.
        return
    if size == 1:
        if s1 == 0 and d1 == 1 and n1 >= 64:  # long runs of one byte; short ones unroll below
            for i in range(n0):
                memset(dst + i * d0, (<const uint8_t*>(src + i * s0))[0], n1)
        else:
            _rows(<uint8_t*>NULL, n0, s0, d0, n1, s1, d1, src, dst, stream)
    elif size == 2:
        _rows(<uint16_t*>NULL, n0, s0, d0, n1, s1, d1, src, dst, stream)
    elif size == 4:
        _rows(<uint32_t*>NULL, n0, s0, d0, n1, s1, d1, src, dst, stream)
    elif size == 8:
        _rows(<uint64_t*>NULL, n0, s0, d0, n1, s1, d1, src, dst, stream)
    elif size == 16:
        _rows(<lzb_bytes16*>NULL, n0, s0, d0, n1, s1, d1, src, dst, stream)
    else:
        _rows_any(size, n0, s0, d0, n1, s1, d1, src, dst, stream)


cdef inline void _replicate(char* dst, intp_t block, intp_t n, bint stream) noexcept nogil:
    """Copy ``dst[0:block]`` into the ``n - 1`` blocks after it: doubling while the copied
    region fits in L1 (``REPLICATE_COPY_BYTES``), then that cache-resident chunk forward
    (bypassing the cache for a large output, and as one ``memset`` when the chunk is all zero
    bytes)."""
    cdef intp_t filled = 1, c
    while filled < n and (filled * block < _replicate_copy or (stream and filled < 2)):
        c = filled if filled <= n - filled else n - filled
        lzb_copy(dst + filled * block, dst, c * block)
        filled += c
    if filled == n:
        return
    if (n - filled) * block >= 16 * _replicate_copy and lzb_all_zero(dst, filled * block):
        memset(dst + filled * block, 0, (n - filled) * block)
        return
    if stream:
        _replicate_streamed(dst, block, filled * block, n * block)
    else:
        _copy_forward(dst, filled * block, n * block, block)


cdef inline void _copy_forward(char* dst, intp_t done, intp_t total,
                               intp_t period) noexcept nogil:
    """``dst[done:total]`` from the pattern in ``dst[0:done]`` (its ``period`` divides
    ``done``): from a few hundred bytes back where the period allows (lzb_copy_forward), else
    swept out from its first two periods where they fit in L1 (twice
    ``REPLICATE_COPY_BYTES`` each; lzb_copy_periodic), both as fast as memset; else by copies
    of its first ``done`` bytes."""
    cdef intp_t chunk = done, c
    cdef intp_t dist = <intp_t>lzb_forward_distance(period)
    if 0 < dist <= done:
        lzb_copy_forward(dst, done, total, dist)
        return
    if period <= 2 * _replicate_copy and total - done > period and dist == 0:
        if done < 2 * period:  # (a period past REPLICATE_COPY_BYTES: written once so far)
            lzb_copy(dst + done, dst, period)
            done += period
        if lzb_copy_periodic(dst, done, total, period):
            return
    while done < total:
        c = chunk if chunk <= total - done else total - done
        lzb_copy(dst + done, dst, c)
        done += c


cdef inline void _replicate_streamed(char* dst, intp_t block, intp_t done,
                                     intp_t total) noexcept nogil:
    """``dst[done:total]`` from the periodic pattern in ``dst[0:done]`` (period ``block``,
    ``done >= 2 * block``) with non-temporal stores, in whole 64-byte lines: the bytes up to
    the first line boundary and after the last are ordinary stores. (A line written partly
    with ordinary and partly with non-temporal stores is read for ownership and flushed
    early: chunks copied from arbitrary offsets cost a 3-byte pattern a third of its speed.)
    Each chunk reads the source at the offset with the same phase, below ``block``."""
    cdef intp_t x = done + ((-(<intp_t>dst + done)) & 63)  # the first line boundary
    cdef intp_t span = ((done - block) // 64) * 64          # chunk length: whole lines
    cdef intp_t end, c
    # No whole line to stream: less than a line left past the first boundary. (span < 64 is
    # unreachable from _replicate, which streams only once done >= max(REPLICATE_COPY_BYTES,
    # 2 * block): a cheap guard.)
    if span < 64 or x >= total:
        _copy_forward(dst, done, total, block)
        return
    lzb_copy(dst + done, dst, x - done)  # done is a multiple of block: phase 0
    end = x + ((total - x) // 64) * 64
    while x < end:
        c = span if span <= end - x else end - x
        lzb_stream_copy(dst + x, dst + x % block, c)
        x += c
    memcpy(dst + x, dst + x % block, total - x)


cdef inline bint _uniform(const char* item, intp_t size) noexcept nogil:
    """All bytes of one item equal (zeros, -1, ...): a run of it is a ``memset``."""
    cdef intp_t k
    for k in range(1, size):
        if item[k] != item[0]:
            return False
    return True
