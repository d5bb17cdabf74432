"""Copy kernels: broadcast copies and gathers, dispatched on item size, run without the GIL.

Everything that can fail is checked by the entry points while they hold the GIL:
:c:func:`copy_into` (what ``materialize()`` calls; :func:`copy_broadcast` is its Python face)
and :func:`gather` (fancy indexing). They build a :c:type:`Plan` (drop size-1 axes, make the
destination strides positive, order the axes by destination stride, merge axes that are
contiguous in both buffers, or keep a gather's index axis with its table of offsets) and hand
blocks of it to :c:func:`plan_run`, which only moves bytes. Between blocks the GIL is taken back
to check for Ctrl-C; blocks are shared among threads for large outputs.

How bytes move, innermost first:

* a run contiguous in both buffers is one ``memcpy`` (non-temporal stores for outputs past
  :data:`STREAM_BYTES`);
* a run that repeats one source item is a ``memset`` if the item's bytes are all equal, else
  (items of 1 to 16 bytes) overlapping word or vector stores, row by row, or, for many short
  rows packed together, byte shuffles of 16 source bytes at a time (``np.repeat``), or, when
  long, replication;
* a reversed run of 1-, 2-, 4- or 8-byte items is reversed 16 bytes at a time in a register;
  any other strided run is a typed loop (item sizes 1, 2, 4, 8 and 16 bytes have their own;
  any other size goes through ``memcpy`` of the item size);
* a transposing pair of axes is walked in tiles through a 32 kB buffer, written out with
  register transposes of 16-byte rows (items of 1, 2, 4 and 8 bytes), unless one side has 2
  to 4 items (image channels: CHW <-> HWC), which interleave or deinterleave in registers;
* an outer broadcast axis whose block is small and contiguous in the destination is written
  once and replicated by doubling ``memcpy`` up to :data:`REPLICATE_CHUNK` bytes, then by
  copying that cache-resident chunk forward.

The vector code is in ``_kernels_simd.h``: SSE2 on x86-64, plus SSSE3 shuffles and AVX2 stores
where the CPU has them, chosen at run time (:func:`simd_features`); elsewhere portable loops.
Object arrays take a path that holds the GIL and keeps reference counts right.
"""

from cpython.exc cimport PyErr_CheckSignals
from cpython.ref cimport PyObject, Py_XINCREF, Py_XDECREF
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

cimport numpy as cnp

import numpy as np

cnp.import_array()
lzb_kernels_init()  # the shuffle masks, once, before any kernel runs

cdef extern from "_kernels_simd.h":
    ctypedef struct lzb_bytes16:
        pass
    void lzb_stream_copy(char* dst, const char* src, size_t n) noexcept nogil
    void lzb_stream_fill(char* dst, int byte, size_t n) noexcept nogil
    void lzb_stream_fence() noexcept nogil
    int lzb_scatter_transposed(const char* buf, intp_t ni, intp_t nj, char* dst, intp_t da,
                               intp_t size, bint stream) noexcept nogil
    int lzb_fill_rows(char* dst, intp_t dstep, const char* src, intp_t sstep, intp_t n,
                      intp_t size, intp_t len) noexcept nogil
    bint lzb_all_zero(const char* p, size_t n) noexcept nogil
    int lzb_reverse(char* dst, const char* src, intp_t n, intp_t size) noexcept nogil
    int lzb_channels(char* dst, intp_t dplane, const char* src, intp_t splane, intp_t n,
                     intp_t c, intp_t size, bint interleave) noexcept nogil
    int lzb_cpu_limit(int mask) noexcept nogil
    void lzb_kernels_init() noexcept nogil
    int lzb_cpu_in_use() noexcept nogil

ctypedef fused item_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t
    lzb_bytes16

#: A replicated block grows by doubling until it reaches this many bytes; from then on the
#: first chunk of this size (hot in cache) is copied forward.
REPLICATE_CHUNK = 64 * 1024
#: An innermost broadcast run shorter than this many bytes is a store loop, not replication.
cdef intp_t REPLICATE_MIN = 16384
#: Work between two looks at Ctrl-C and the unit of work given to one thread.
CHUNK_BYTES = 4 * 1024 * 1024
def _last_level_cache_bytes():
    """Size of the largest CPU cache (Linux sysfs), or 0 if unknown."""
    import glob
    largest = 0
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            with open(path) as f:
                text = f.read().strip().upper()
            scale = 1
            for suffix, factor in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
                if text.endswith(suffix):
                    text, scale = text[:len(text) - 1], factor
            largest = max(largest, int(text) * scale)
        except (OSError, ValueError):
            pass
    return largest


#: Outputs at least this large are written with non-temporal stores: 1.5x the last-level
#: cache (measured here: with a 32 MB L3, non-temporal replication wins from 64 MB on, at 43
#: against 37 GB/s, and loses below, at 43 against 70 GB/s for 32 MB). Smaller outputs use
#: ordinary stores, so that they are still in cache for the caller.
STREAM_BYTES = max(8 << 20, 3 * _last_level_cache_bytes() // 2 or 48 << 20)
#: Outputs at least this large use two threads when materialize() is not told how many.
AUTO_THREADS_BYTES = 32 * 1024 * 1024

cdef intp_t _replicate_chunk = REPLICATE_CHUNK
cdef intp_t _chunk_bytes = CHUNK_BYTES
cdef intp_t _stream_bytes = STREAM_BYTES


# ------------------------------------------------------------------------------------------
# Planning (GIL held, may raise)
# ------------------------------------------------------------------------------------------

cdef inline intp_t _abs(intp_t x) noexcept nogil:
    return -x if x < 0 else x


cdef bint _choose_tile_axis(Plan* p) noexcept:
    """A transposing copy reads its innermost destination axis with a long source stride.
    If another axis is read with a shorter one, move that axis next to the innermost, so
    that _run walks the pair in tiles that stay in L1."""
    cdef int last = p.ndim - 1, d, best = -1
    cdef intp_t s, t
    if last < 1 or p.has_objects:
        return False
    s = _abs(p.sstride[last])
    if s <= 64:
        return False  # consecutive reads already share cache lines
    for d in range(last):
        t = _abs(p.sstride[d])
        if t != 0 and t < s and (best < 0 or t < _abs(p.sstride[best])):
            best = d
    if best < 0:
        return False
    cdef intp_t shape = p.shape[best], ss = p.sstride[best], ds = p.dstride[best]
    for d in range(best, last - 1):
        p.shape[d] = p.shape[d + 1]
        p.sstride[d] = p.sstride[d + 1]
        p.dstride[d] = p.dstride[d + 1]
    p.shape[last - 1] = shape
    p.sstride[last - 1] = ss
    p.dstride[last - 1] = ds
    return True


cdef int _channels_last(Plan* p) noexcept:
    """Deinterleaving 2 to 4 channels (HWC -> CHW) is ordered channel planes first, pixels
    last (with any axes between, as for a cropped image): move the channel axis to the end,
    so that the pixels and their channels are the last two axes, as the deinterleaving
    kernel needs (see _channels), and blocks of work (and threads) never split a pixel's
    channels. Returns the axis moved, or -1."""
    cdef int a, b = p.ndim - 1, d
    cdef intp_t size = p.itemsize, shape, ss, ds
    if b < 1 or p.dstride[b] != size or size not in (1, 2, 4):
        return -1
    for a in range(b):
        if p.shape[a] <= 4 and p.sstride[a] == size and p.sstride[b] == p.shape[a] * size:
            break
    else:
        return -1
    for d in range(a + 1, b):
        if p.sstride[d] == 0 and p.dstride[d] < _replicate_chunk:
            # A broadcast axis in between whose rows are written once and replicated: moving
            # past it would compute every row again (measured 4x-65x slower).
            return -1
    shape, ss, ds = p.shape[a], p.sstride[a], p.dstride[a]
    for d in range(a, b):
        p.shape[d] = p.shape[d + 1]
        p.sstride[d] = p.sstride[d + 1]
        p.dstride[d] = p.dstride[d + 1]
    p.shape[b], p.sstride[b], p.dstride[b] = shape, ss, ds
    return a


cdef int plan_init(Plan* p, int ndim, const intp_t* shape, const intp_t* sstride,
                   const intp_t* dstride, intp_t itemsize, bint has_objects,
                   const char** src, char** dst, int gaxis=-1,
                   const intp_t* goffsets=NULL) except -1:
    """Fill ``p`` from an n-d copy description; moves ``src``/``dst`` for flipped axes.

    With ``gaxis >= 0`` (a gather), that axis takes its source offsets from ``goffsets``
    and ``dst`` must be C-contiguous: axes then keep their order and the gather axis is never
    merged. A gather whose offsets are all equal is an ordinary broadcast axis (stride 0).
    """
    cdef int d, k, n = 0
    cdef intp_t t, blk, i
    cdef bint contiguous, gather = False
    if ndim < 0 or ndim > NPY_MAXDIMS:
        raise ValueError(f"ndim must be in [0, {NPY_MAXDIMS}], got {ndim}")
    if itemsize < 0:
        raise ValueError(f"itemsize must be >= 0, got {itemsize}")
    if gaxis >= ndim or (gaxis >= 0 and goffsets == NULL):
        raise ValueError(f"gaxis {gaxis} needs an offset table and must be < ndim {ndim}")
    p.itemsize = itemsize
    p.has_objects = has_objects
    p.empty = itemsize == 0
    p.stream = False
    p.tiled = False
    p.gaxis = -1
    p.goffsets = NULL
    for d in range(ndim):
        if shape[d] < 0:
            raise ValueError(f"shape[{d}] must be >= 0, got {shape[d]}")
        if shape[d] == 0:
            p.empty = True
    if p.empty:
        p.ndim = 0
        return 0
    for d in range(ndim):
        if d == gaxis:
            for i in range(1, shape[d]):
                if goffsets[i] != goffsets[0]:
                    gather = True
                    break
            if gather:
                p.gaxis = n
                p.goffsets = goffsets
                p.shape[n] = shape[d]
                p.sstride[n] = 0
                p.dstride[n] = dstride[d]
                n += 1
                continue
            # every index selects the same source block: a broadcast axis
            src[0] += goffsets[0]
        if shape[d] > 1:
            p.shape[n] = shape[d]
            p.sstride[n] = 0 if d == gaxis else sstride[d]
            p.dstride[n] = dstride[d]
            n += 1
    if not gather:
        # Positive destination strides: walk flipped axes from their other end.
        for d in range(n):
            if p.dstride[d] < 0:
                dst[0] += (p.shape[d] - 1) * p.dstride[d]
                src[0] += (p.shape[d] - 1) * p.sstride[d]
                p.dstride[d] = -p.dstride[d]
                p.sstride[d] = -p.sstride[d]
        # Order axes by destination stride, largest first (stable insertion sort; n is small).
        for d in range(1, n):
            k = d
            while k > 0 and p.dstride[k - 1] < p.dstride[k]:
                t = p.dstride[k]; p.dstride[k] = p.dstride[k - 1]; p.dstride[k - 1] = t
                t = p.sstride[k]; p.sstride[k] = p.sstride[k - 1]; p.sstride[k - 1] = t
                t = p.shape[k]; p.shape[k] = p.shape[k - 1]; p.shape[k - 1] = t
                k -= 1
    # Merge neighbours that are contiguous in both buffers (stride-0 runs merge too).
    if n > 1:
        k = 0
        for d in range(1, n):
            if (p.sstride[k] == p.sstride[d] * p.shape[d]
                    and p.dstride[k] == p.dstride[d] * p.shape[d]
                    and k != p.gaxis and d != p.gaxis):
                p.shape[k] *= p.shape[d]
                p.sstride[k] = p.sstride[d]
                p.dstride[k] = p.dstride[d]
            else:
                k += 1
                if d == p.gaxis:
                    p.gaxis = k
                p.shape[k] = p.shape[d]
                p.sstride[k] = p.sstride[d]
                p.dstride[k] = p.dstride[d]
        n = k + 1
    if n == 0:
        p.shape[0] = 1
        p.sstride[0] = itemsize
        p.dstride[0] = itemsize
        n = 1
    p.ndim = n
    if not gather:
        p.tiled = _choose_tile_axis(p)
    blk = itemsize
    contiguous = True
    for d in range(n - 1, -1, -1):
        contiguous = contiguous and p.dstride[d] == blk
        if contiguous:
            blk *= p.shape[d]
            p.dblock[d] = blk
        else:
            p.dblock[d] = 0
    # After the blocks: moving the channel axis leaves the blocks of the axes before it as
    # they are (the same set of inner axes) but not those of the axes it moved past.
    d = _channels_last(p) if not gather else -1
    if d >= 0:
        for d in range(d, n):
            p.dblock[d] = 0
    return 0


# ------------------------------------------------------------------------------------------
# Moving bytes (no GIL, cannot fail)
# ------------------------------------------------------------------------------------------

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
                memcpy(dst + i * d0, src + i * s0, n1 * size)
    elif s1 == -size and d1 == size:
        for i in range(n0):
            s = src + i * s0
            d = dst + i * d0
            if stream:
                _reverse_streamed(tag, n1, s, d)
            elif not lzb_reverse(d, s, n1, size):
                for j in range(n1):
                    memcpy(d + j * size, s - j * size, sizeof(item_t))
    else:
        for i in range(n0):
            s = src + i * s0
            d = dst + i * d0
            for j in range(n1):
                memcpy(d + j * d1, s + j * s1, sizeof(item_t))


cdef inline void _copy_item(char* d, const char* s, intp_t size) noexcept nogil:
    """One item of an odd size: a byte loop beats a ``memcpy`` call for short items."""
    cdef intp_t k
    if size <= 16:
        for k in range(size):
            d[k] = s[k]
    else:
        memcpy(d, s, size)


cdef void _rows_any(intp_t size, intp_t n0, intp_t s0, intp_t d0,
                    intp_t n1, intp_t s1, intp_t d1,
                    const char* src, char* dst, bint stream) noexcept nogil:
    """``n0`` rows of ``n1`` items of any other size."""
    cdef intp_t i, j
    cdef const char* s
    cdef char* d
    for i in range(n0):
        s = src + i * s0
        d = dst + i * d0
        if s1 == size and d1 == size:
            if stream:
                lzb_stream_copy(d, s, n1 * size)
            else:
                memcpy(d, s, n1 * size)
        else:
            for j in range(n1):
                _copy_item(d + j * d1, s + j * s1, size)


cdef inline void _rows_dispatch(intp_t size, intp_t n0, intp_t s0, intp_t d0,
                                intp_t n1, intp_t s1, intp_t d1,
                                const char* src, char* dst, bint stream) noexcept nogil:
    cdef intp_t i
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
    region fits in cache, then that cache-resident chunk forward (bypassing the cache for a
    large output, and as one ``memset`` when the chunk is all zero bytes)."""
    cdef intp_t filled = 1, c
    while filled < n and filled * block < _replicate_chunk:
        c = filled if filled <= n - filled else n - filled
        memcpy(dst + filled * block, dst, c * block)
        filled += c
    if filled == n:
        return
    if (n - filled) * block >= 16 * _replicate_chunk and lzb_all_zero(dst, filled * block):
        memset(dst + filled * block, 0, (n - filled) * block)
        return
    cdef intp_t chunk = filled
    while filled < n:
        c = chunk if chunk <= n - filled else n - filled
        if stream:
            lzb_stream_copy(dst + filled * block, dst, c * block)
        else:
            memcpy(dst + filled * block, dst, c * block)
        filled += c


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


cdef inline bint _uniform(const char* item, intp_t size) noexcept nogil:
    """All bytes of one item equal (zeros, -1, ...): a run of it is a ``memset``."""
    cdef intp_t k
    for k in range(1, size):
        if item[k] != item[0]:
            return False
    return True


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


cdef void _run(const Plan* p, int d, const char* src, char* dst) noexcept nogil:
    cdef intp_t n = p.shape[d]
    cdef intp_t i
    cdef int last = p.ndim - 1
    if d == p.gaxis:
        if d == last:
            for i in range(n):
                memcpy(dst + i * p.dstride[d], src + p.goffsets[i], p.itemsize)
        else:
            for i in range(n):
                _run(p, d + 1, src + p.goffsets[i], dst + i * p.dstride[d])
        return
    if p.sstride[d] == 0 and p.dblock[d] > 0 and n > 1:
        # A broadcast axis contiguous in the destination.
        if d == last:
            if _uniform(src, p.itemsize):
                if p.stream:
                    lzb_stream_fill(dst, src[0], n * p.itemsize)
                else:
                    memset(dst, src[0], n * p.itemsize)
                return
            if n * p.itemsize >= REPLICATE_MIN:
                memcpy(dst, src, p.itemsize)
                _replicate(dst, p.itemsize, n, p.stream)
                return
        elif p.dstride[d] < _replicate_chunk and not (
                p.dstride[d] >= 4096 and d + 1 == last and p.sstride[last] == p.itemsize
                and p.dstride[last] == p.itemsize):
            # Small blocks: write one, then copy it (from cache) into the others. A large
            # block, or a block that is one long memcpy anyway, is cheaper to write again
            # from its (smaller, cache-resident) source.
            _run(p, d + 1, src, dst)
            _replicate(dst, p.dstride[d], n, p.stream)
            return
    if d == last:
        _rows_dispatch(p.itemsize, 1, 0, 0, n, p.sstride[d], p.dstride[d], src, dst, p.stream)
    elif d == last - 1 and p.gaxis != last:
        if _channels(p, d, src, dst):
            return
        if p.tiled:
            _tiles(p, src, dst)
        else:
            _rows_dispatch(p.itemsize, n, p.sstride[d], p.dstride[d],
                           p.shape[last], p.sstride[last], p.dstride[last], src, dst, p.stream)
    else:
        for i in range(n):
            _run(p, d + 1, src + i * p.sstride[d], dst + i * p.dstride[d])


cdef void plan_run(const Plan* p, const char* src, char* dst) noexcept nogil:
    """Copy everything ``p`` describes. ``p`` must come from :c:func:`plan_init`."""
    if not p.empty:
        _run(p, 0, src, dst)
        if p.stream:
            lzb_stream_fence()


cdef void _run_objects(const Plan* p, int d, const char* src, char* dst) noexcept:
    cdef intp_t i
    cdef PyObject* new
    cdef PyObject* old
    cdef const char* s
    for i in range(p.shape[d]):
        s = src + (p.goffsets[i] if d == p.gaxis else i * p.sstride[d])
        if d == p.ndim - 1:
            memcpy(&new, s, sizeof(PyObject*))
            memcpy(&old, dst + i * p.dstride[d], sizeof(PyObject*))
            Py_XINCREF(new)
            memcpy(dst + i * p.dstride[d], &new, sizeof(PyObject*))
            Py_XDECREF(old)
        else:
            _run_objects(p, d + 1, s, dst + i * p.dstride[d])


cdef void plan_run_objects(const Plan* p, const char* src, char* dst) noexcept:
    """Like :c:func:`plan_run` for arrays of object pointers; holds the GIL."""
    if not p.empty:
        _run_objects(p, 0, src, dst)


# ------------------------------------------------------------------------------------------
# Entry points (GIL held while validating; blocks run without it)
# ------------------------------------------------------------------------------------------

cdef extern from "_kernels_team.h":
    ctypedef struct lzb_team:
        int started
    int lzb_team_start(lzb_team* team, int n, void (*fn)(void*) noexcept nogil,
                       void* arg) noexcept nogil
    void lzb_team_join(lzb_team* team) noexcept nogil
    intp_t lzb_next_item(intp_t* counter) noexcept nogil
    bint lzb_cancelled(int* flag) noexcept nogil
    void lzb_cancel(int* flag) noexcept nogil


cdef struct Job:
    # One validated copy, cut into blocks along one axis so that it can be interrupted and
    # shared among threads. Lives on the stack of _execute_plan, whose caller keeps both
    # arrays alive; every helper is joined before that frame returns.
    Plan plan
    const char* src
    char* dst
    int axis                 # the axis cut into blocks; outer axes are walked one by one
    intp_t per_block         # indices of `axis` in one block
    intp_t blocks_per_outer
    intp_t n_items
    intp_t next              # the next block to hand out (atomic)
    int cancelled            # set (atomically) on an exception: no thread starts a block


cdef void _job_init(Job* job, const Plan* plan, const char* src, char* dst) noexcept:
    cdef intp_t rowbytes = plan.itemsize
    cdef int d
    job.plan = plan[0]
    job.src = src
    job.dst = dst
    job.next = 0
    job.cancelled = 0
    job.n_items = 0
    if plan.empty:
        return
    d = plan.ndim - 1
    while d > 0 and (rowbytes * plan.shape[d] <= _chunk_bytes or d > plan.gaxis >= 0):
        rowbytes *= plan.shape[d]
        d -= 1
    job.axis = d
    job.per_block = max(1, _chunk_bytes // rowbytes)
    job.blocks_per_outer = (plan.shape[d] + job.per_block - 1) // job.per_block
    job.n_items = job.blocks_per_outer
    for d in range(job.axis):
        job.n_items *= plan.shape[d]


cdef void _job_block(const Job* job, intp_t item, Plan* sub, const char** src,
                     char** dst) noexcept nogil:
    """The sub-plan of block ``item``: axes ax.. with axis ax shortened to one block."""
    cdef int d, ax = job.axis
    cdef intp_t rest, i, first, count
    cdef const Plan* p = &job.plan
    cdef const char* s
    cdef char* t
    sub.ndim = p.ndim - ax
    sub.itemsize = p.itemsize
    sub.empty = False
    sub.has_objects = p.has_objects
    sub.stream = p.stream
    sub.tiled = p.tiled and sub.ndim >= 2
    sub.gaxis = p.gaxis - ax if p.gaxis >= 0 else -1
    sub.goffsets = p.goffsets
    for d in range(sub.ndim):
        sub.shape[d] = p.shape[ax + d]
        sub.sstride[d] = p.sstride[ax + d]
        sub.dstride[d] = p.dstride[ax + d]
        sub.dblock[d] = p.dblock[ax + d]
    rest = item // job.blocks_per_outer
    first = (item % job.blocks_per_outer) * job.per_block
    count = min(job.per_block, p.shape[ax] - first)
    s = job.src + first * p.sstride[ax]
    t = job.dst + first * p.dstride[ax]
    for d in range(ax - 1, -1, -1):
        i = rest % p.shape[d]
        rest //= p.shape[d]
        s += i * p.sstride[d]
        t += i * p.dstride[d]
    sub.shape[0] = count
    if sub.gaxis == 0:
        sub.goffsets = p.goffsets + first  # (the gather axis has stride 0)
    if sub.dblock[0] > 0:
        sub.dblock[0] = count * sub.dstride[0]
    src[0] = s
    dst[0] = t


cdef void _helper(void* arg) noexcept nogil:
    """A helper thread: blocks until none is left or the copy is cancelled."""
    cdef Job* job = <Job*>arg
    cdef Plan sub
    cdef const char* s
    cdef char* t
    cdef intp_t item
    while not lzb_cancelled(&job.cancelled):
        item = lzb_next_item(&job.next)
        if item >= job.n_items:
            break
        _job_block(job, item, &sub, &s, &t)
        plan_run(&sub, s, t)


cdef int _execute(Job* job, int threads) except -1:
    """Run every block of ``job``: this thread checks for Ctrl-C between its blocks, and up
    to ``threads - 1`` helpers, started here, share the blocks. Whatever happens (any number
    of KeyboardInterrupts), every helper has stopped and been joined when this returns or
    raises: on an exception the job is cancelled, so each helper finishes at most the block
    it is in."""
    cdef lzb_team team
    cdef Plan sub
    cdef const char* s
    cdef char* t
    cdef intp_t item
    team.started = 0
    if job.plan.has_objects:
        threads = 1  # reference counts need the GIL
    if threads > job.n_items:
        threads = <int>job.n_items
    if threads > 1:
        with nogil:
            lzb_team_start(&team, threads - 1, _helper, job)
    try:
        while not lzb_cancelled(&job.cancelled):
            item = lzb_next_item(&job.next)
            if item >= job.n_items:
                break
            _job_block(job, item, &sub, &s, &t)
            if job.plan.has_objects:
                plan_run_objects(&sub, s, t)
            else:
                with nogil:
                    plan_run(&sub, s, t)
            PyErr_CheckSignals()
    finally:
        # No Python code runs from here to the end of the join, so no signal handler can
        # raise in between.
        lzb_cancel(&job.cancelled)
        if team.started:
            with nogil:
                lzb_team_join(&team)
    return 0


cdef int threads_for(intp_t nbytes, object threads) except -1:
    """How many threads a copy of ``nbytes`` uses (validating the user's ``threads``)."""
    if threads is None:
        return 2 if nbytes >= AUTO_THREADS_BYTES else 1
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be a positive int or None, got {threads!r}")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    return min(int(threads), 256)


cdef inline void _extent(cnp.ndarray a, char** lo, char** hi) noexcept:
    """The bytes ``[lo, hi)`` that ``a`` can touch."""
    cdef int d
    cdef intp_t n, s
    lo[0] = <char*>cnp.PyArray_DATA(a)
    hi[0] = lo[0] + cnp.PyArray_ITEMSIZE(a)
    for d in range(cnp.PyArray_NDIM(a)):
        n = cnp.PyArray_DIMS(a)[d]
        s = cnp.PyArray_STRIDES(a)[d]
        if n == 0:
            hi[0] = lo[0]
            return
        if s < 0:
            lo[0] += (n - 1) * s
        else:
            hi[0] += (n - 1) * s


cdef bint may_overlap(cnp.ndarray a, cnp.ndarray b) noexcept:
    """True if the memory bounds of ``a`` and ``b`` intersect (as ``np.may_share_memory``)."""
    cdef char* alo
    cdef char* ahi
    cdef char* blo
    cdef char* bhi
    _extent(a, &alo, &ahi)
    _extent(b, &blo, &bhi)
    return alo < bhi and blo < ahi and alo < ahi and blo < bhi


cdef bint _copyable(cnp.ndarray out) except -1:
    """Whether the kernels can copy ``out``'s items: True for plain object arrays (a path that
    keeps reference counts), False for items that are plain bytes. Raises TypeError for
    anything else: references inside a structured dtype, or a dtype of the new DType API
    (StringDType keeps its strings in an arena owned by its descriptor), whose bytes must not
    be copied between arrays; NumPy copies those (``np.copyto``)."""
    cdef cnp.PyArray_Descr* descr = cnp.PyArray_DESCR(out)
    cdef int num = cnp.PyArray_TYPE(out)
    if lzb_has_refs(descr):
        if num == cnp.NPY_OBJECT:
            return True
        raise TypeError(f"cannot copy {out.dtype!r} in the kernels: its items hold references "
                        f"(only plain object arrays do); use np.copyto")
    if num >= 256 and not getattr(type(out.dtype), "_legacy", True):  # NPY_USERDEF
        raise TypeError(f"cannot copy {out.dtype!r} in the kernels: only NumPy's built-in and "
                        f"legacy user dtypes are plain bytes; use np.copyto")
    return False


cdef int copy_into(cnp.ndarray src, cnp.ndarray out, object threads) except -1:
    """Fill ``out`` with the broadcast of ``src`` (``src`` has ``out``'s rank; each of its
    axes is 1 or ``out``'s size). Validates everything, then copies without the GIL."""
    cdef int ndim = cnp.PyArray_NDIM(out), d
    cdef intp_t shape[NPY_MAXDIMS]
    cdef intp_t sstride[NPY_MAXDIMS]
    cdef intp_t dstride[NPY_MAXDIMS]
    cdef intp_t n
    cdef const char* s = <const char*>cnp.PyArray_DATA(src)
    cdef char* t = <char*>cnp.PyArray_DATA(out)
    cdef Plan plan
    cdef bint objects
    if cnp.PyArray_NDIM(src) != ndim:
        raise ValueError(f"src must have out's rank {ndim}, got {cnp.PyArray_NDIM(src)}")
    if not lzb_equiv_types(cnp.PyArray_DESCR(src), cnp.PyArray_DESCR(out)):
        raise TypeError(f"src and out must have one dtype, got {src.dtype} and {out.dtype}")
    if not cnp.PyArray_ISWRITEABLE(out):
        raise ValueError("out must be writeable")
    objects = _copyable(out)
    for d in range(ndim):
        n = cnp.PyArray_DIMS(out)[d]
        shape[d] = n
        dstride[d] = cnp.PyArray_STRIDES(out)[d]
        if cnp.PyArray_DIMS(src)[d] == n:
            sstride[d] = cnp.PyArray_STRIDES(src)[d]
        elif cnp.PyArray_DIMS(src)[d] == 1:
            sstride[d] = 0
        else:
            raise ValueError(
                f"src axis {d} has size {cnp.PyArray_DIMS(src)[d]}, expected 1 or {n}")
    plan_init(&plan, ndim, shape, sstride, dstride, cnp.PyArray_ITEMSIZE(out), objects, &s, &t)
    return _execute_plan(&plan, s, t, src, out, threads)


cdef int _execute_plan(Plan* plan, const char* s, char* t, object src_ref, cnp.ndarray out,
                       object threads) except -1:
    """Run a validated plan into ``out``: inline if small, else in interruptible blocks,
    shared among threads."""
    cdef intp_t nbytes = cnp.PyArray_NBYTES(out)
    cdef int nthreads = threads_for(nbytes, threads)
    cdef Job job
    if plan.empty:
        return 0
    plan.stream = nbytes >= _stream_bytes
    if nbytes <= _chunk_bytes and nthreads == 1:
        if plan.has_objects:
            plan_run_objects(plan, s, t)
        else:
            with nogil:
                plan_run(plan, s, t)
        return 0
    _job_init(&job, plan, s, t)
    _execute(&job, nthreads)
    return 0


def copy_broadcast(cnp.ndarray src not None, cnp.ndarray out not None, threads=None):
    """copy_broadcast(src, out, threads=None)

    Fill ``out`` with ``np.broadcast_to(src, out.shape)``, where ``src`` already has
    ``out``'s rank and each of its axes is 1 or ``out``'s size; ``out`` may overlap
    ``src``. ``threads=None`` uses two threads for outputs of 32 MB and more.

    >>> import numpy as np
    >>> out = np.empty((2, 3), dtype=np.int16)
    >>> copy_broadcast(np.arange(3, dtype=np.int16).reshape(1, 3), out)
    array([[0, 1, 2],
           [0, 1, 2]], dtype=int16)
    """
    copy_into(src.copy() if may_overlap(src, out) else src, out, threads)
    return out


def gather(cnp.ndarray src not None, tuple vshape not None, tuple axes not None,
           list indices not None,
           cnp.ndarray out not None, int bpos, int bndim, tuple report_axes=None):
    """gather(src, vshape, axes, indices, out, bpos, bndim, report_axes=None)

    Advanced-index gather from the broadcast of ``src`` to ``vshape``.

    ``axes`` are the (sorted) axes of ``vshape`` taken by the 1-D ``np.intp`` arrays
    ``indices`` (one per axis, all of one length ``nb``; negative values count from the end,
    out-of-range ones raise ``IndexError`` naming ``report_axes[j]``, default ``axes[j]``).
    The other axes keep their order. ``out`` is C-contiguous;
    its axes ``[bpos, bpos + bndim)`` hold the ``nb`` index positions, the others are the
    remaining axes of ``vshape`` in order.
    """
    cdef int ndim = len(vshape), nadv = len(axes), nrest, d, j, r, k
    cdef const intp_t* values
    cdef intp_t limit, step
    cdef intp_t nb, b, v, size, bstride
    cdef intp_t rshape[NPY_MAXDIMS]
    cdef intp_t rsstride[NPY_MAXDIMS]
    cdef intp_t rdstride[NPY_MAXDIMS]
    cdef intp_t vstride[NPY_MAXDIMS]
    cdef intp_t vsh[NPY_MAXDIMS]
    cdef bint is_adv[NPY_MAXDIMS]
    cdef intp_t* offsets = NULL
    cdef cnp.ndarray idx
    cdef const char* s0 = <const char*>cnp.PyArray_DATA(src)
    cdef const char* s
    cdef char* t0 = <char*>cnp.PyArray_DATA(out)
    cdef char* t
    cdef Plan plan
    cdef bint objects
    if cnp.PyArray_NDIM(src) != ndim or ndim > NPY_MAXDIMS:
        raise ValueError(f"src must have rank {len(vshape)}, got {cnp.PyArray_NDIM(src)}")
    if not lzb_equiv_types(cnp.PyArray_DESCR(src), cnp.PyArray_DESCR(out)):
        raise TypeError(f"src and out must have one dtype, got {src.dtype} and {out.dtype}")
    if not cnp.PyArray_IS_C_CONTIGUOUS(out) or not cnp.PyArray_ISWRITEABLE(out):
        raise ValueError("out must be a writeable C-contiguous array")
    objects = _copyable(out)
    for d in range(ndim):
        vsh[d] = vshape[d]
        if vsh[d] < 0:
            raise ValueError(f"vshape must hold sizes >= 0, got {vshape!r}")
    if nadv != len(indices) or nadv == 0:
        raise ValueError("one index array per advanced axis is needed")
    for j in range(nadv):
        if not isinstance(indices[j], cnp.ndarray):
            raise TypeError(f"indices[{j}] must be an ndarray, got {type(indices[j]).__name__}")
    if may_overlap(src, out):
        src = src.copy()
        s0 = <const char*>cnp.PyArray_DATA(src)
    if report_axes is not None and len(report_axes) != nadv:
        raise ValueError(f"report_axes must name {nadv} axes, got {report_axes!r}")
    if bpos < 0 or bndim < 0 or bpos + bndim > cnp.PyArray_NDIM(out) or cnp.PyArray_NDIM(out) - bndim != ndim - nadv:
        raise ValueError("out's rank does not match the gather")
    for d in range(ndim):
        is_adv[d] = False
        if cnp.PyArray_DIMS(src)[d] == vsh[d]:
            vstride[d] = cnp.PyArray_STRIDES(src)[d]
        elif cnp.PyArray_DIMS(src)[d] == 1:
            vstride[d] = 0
        else:
            raise ValueError(f"src axis {d} has size {cnp.PyArray_DIMS(src)[d]}, expected 1 or {vsh[d]}")
    nb = 1
    for d in range(bpos, bpos + bndim):
        nb *= cnp.PyArray_DIMS(out)[d]
    for j in range(nadv):
        d = axes[j]
        if d < 0 or d >= ndim or is_adv[d] or (j > 0 and d <= axes[j - 1]):
            raise ValueError(f"axes must be sorted distinct axes of vshape, got {axes}")
        is_adv[d] = True
        idx = indices[j]
        if (cnp.PyArray_TYPE(idx) != cnp.NPY_INTP or not cnp.PyArray_ISNOTSWAPPED(idx)
                or cnp.PyArray_NDIM(idx) != 1 or not cnp.PyArray_ISCARRAY_RO(idx)
                or cnp.PyArray_DIMS(idx)[0] != nb):
            raise ValueError(f"indices[{j}] must be an aligned C-contiguous 1-D intp array of "
                             f"length {nb}, got {idx.dtype} of shape {(<object>idx).shape}")
    # The copy runs over out's axes in order: the remaining axes of vshape before the index
    # axes, the index axes as one gather axis (nb positions, contiguous in C-ordered out),
    # then the remaining axes after them.
    nrest = 0
    r = 0
    for d in range(ndim):
        if is_adv[d]:
            continue
        if r == bpos:
            r += bndim
        if cnp.PyArray_DIMS(out)[r] != vsh[d]:
            raise ValueError(f"out axis {r} must have size {vsh[d]}, got {cnp.PyArray_DIMS(out)[r]}")
        k = nrest + (1 if nrest >= bpos else 0)
        rshape[k] = vsh[d]
        rsstride[k] = vstride[d]
        rdstride[k] = cnp.PyArray_STRIDES(out)[r]
        nrest += 1
        r += 1
    size = cnp.PyArray_ITEMSIZE(out)
    bstride = size
    for d in range(bpos + bndim, cnp.PyArray_NDIM(out)):
        bstride *= cnp.PyArray_DIMS(out)[d]
    rshape[bpos] = nb
    rsstride[bpos] = 0
    rdstride[bpos] = bstride
    if nb == 0:
        return out
    offsets = <intp_t*>malloc(nb * sizeof(intp_t))
    if offsets == NULL:
        raise MemoryError()
    try:
        for b in range(nb):
            offsets[b] = 0
        for j in range(nadv):
            d = axes[j]
            idx = indices[j]
            values = <const intp_t*>cnp.PyArray_DATA(idx)
            limit = vsh[d]
            step = vstride[d]
            for b in range(nb):
                v = values[b]
                if v < 0:
                    v += limit
                if v < 0 or v >= limit:
                    axis = d if report_axes is None else report_axes[j]
                    raise IndexError(
                        f"index {values[b]} is out of bounds for axis {axis} with size {limit}")
                offsets[b] += v * step
        if cnp.PyArray_SIZE(out) == 0:  # indices checked (as NumPy does), nothing to copy
            return out
        s = s0
        t = t0
        plan_init(&plan, nrest + 1, rshape, rsstride, rdstride, size, objects, &s, &t, bpos,
                  offsets)
        _execute_plan(&plan, s, t, src, out, None)
    finally:
        free(offsets)
    return out


# Each name with its bit in lzb_cpu_in_use(); SSE2 is compiled in, the others chosen at run time.
_FEATURES = {"SSE2": 2, "SSSE3": 0, "AVX2": 1}


def simd_features():
    """The vector extensions the kernels use on this CPU: SSE2 on x86-64 (always), SSSE3 and
    AVX2 when the CPU has them (chosen at run time); none elsewhere (portable C loops).

    >>> set(simd_features()) <= {"SSE2", "SSSE3", "AVX2"}
    True
    """
    cdef int bits = lzb_cpu_in_use()
    return tuple(name for name, bit in _FEATURES.items() if bits >> bit & 1)


def _limit_simd(names):
    """Test hook: let the kernels choose only the named run-time extensions ("SSSE3",
    "AVX2"); ``None``: all the CPU has. Returns :func:`simd_features`."""
    cdef int mask = -1
    if names is not None:
        unknown = set(names) - {"SSSE3", "AVX2"}
        if unknown:
            raise ValueError(f"names must be among 'SSSE3' and 'AVX2', got {sorted(unknown)}")
        mask = sum(1 << _FEATURES[name] for name in set(names))
    lzb_cpu_limit(mask)
    return simd_features()


def _plan_py(tuple shape, tuple sstrides, tuple dstrides, intp_t itemsize):
    """Test hook: the simplified plan as ``(shape, sstrides, dstrides, dblock)`` tuples."""
    cdef Plan p
    cdef intp_t cshape[NPY_MAXDIMS]
    cdef intp_t cs[NPY_MAXDIMS]
    cdef intp_t cd[NPY_MAXDIMS]
    cdef const char* s = NULL
    cdef char* t = NULL
    cdef int d, n = len(shape)
    if n > NPY_MAXDIMS or len(sstrides) != n or len(dstrides) != n:
        raise ValueError("shape, sstrides and dstrides must have one length <= NPY_MAXDIMS")
    for d in range(n):
        cshape[d] = shape[d]
        cs[d] = sstrides[d]
        cd[d] = dstrides[d]
    plan_init(&p, n, cshape, cs, cd, itemsize, False, &s, &t)
    return (tuple(p.shape[d] for d in range(p.ndim)),
            tuple(p.sstride[d] for d in range(p.ndim)),
            tuple(p.dstride[d] for d in range(p.ndim)),
            tuple(p.dblock[d] for d in range(p.ndim)))
