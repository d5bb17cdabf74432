# Included by _kernels.pyx. Planning (GIL held, may raise): plan_init turns an n-d copy
# description into a Plan -- size-1 axes dropped, destination strides made positive, axes
# ordered by destination stride and merged where contiguous in both buffers, a last run
# of 2, 4, 8 or 16 bytes taken as one item (Plan.itemsize is then the run's; a run of
# another size under 16 bytes too, as the item of a short row fill), a transposing
# pair chosen for tiles, the channel axis of an image moved last, a gather's index axis kept
# with its table of offsets.

cdef inline intp_t _abs(intp_t x) noexcept nogil:
    return -x if x < 0 else x


cdef inline intp_t _tile_axis_score(intp_t n, intp_t ss, intp_t itemsize) noexcept:
    """What pairing an axis of ``n`` items at source stride ``ss`` bytes with the innermost
    axis saves: the items of each source line (64 bytes) it reads, counted twice for a
    contiguous axis (stride +itemsize), which the staged and row-wise tile kernels take (the
    others, reversed ones too, go through the generic tile loop). Measured (8192 / 4096
    layers, one thread, ms, paired with the contiguous axis / the strided one): u1
    (2, N, N) of strides (1, 1, N) 380 / 15, u1 (2, N, N) of (1, 2, 2N) 95 / 18, u1
    (3, N, N) of (1, 3, 3N) 102 / 31, f4 (2, N, N) of (1, 2, 2N) 87 / 44, f4 (3, N, N) of
    (1, 3, 3N) 97 / 116 (2 x 3 items against 5)."""
    cdef intp_t t = _abs(ss)
    return min(n, max(<intp_t>1, 64 // t)) * (2 if ss == itemsize else 1)


#: Rows shorter than this, of one short run repeated (a pixel or a record along a row), take
#: the run as one odd-sized item (_widen_items). Longer rows keep their bytes as items: the
#: block kernels write the first run and replicate it, as fast or faster there (one thread,
#: Intel Xeon family 6 model 167: 12 MiB of rows of RGB u1 pixels, 3 kB rows 500 against
#: 525 us, 24 kB 432 against 509; 1.5 kB 791 against 514, 96 B 3,900 against 500).
cdef enum:
    ODD_ROW_MAX_BYTES = 2048


cdef void _widen_items(Plan* p) noexcept:
    """A short last axis contiguous in both buffers, of 2, 4, 8 or 16 bytes in all, becomes
    one item of that size, so that the axis before it is the one the row kernels loop over
    (with its items as one typed load and store each, a broadcast of them as a fill) instead
    of a row of a few items per call: 8-byte runs of a u1 source transposed and repeated,
    ``(512, 4096, 3, 8)`` of strides ``(8, 4096, 0, 1)``, ... Runs of other sizes under 16
    bytes become one item only as the item of a row fill shorter than ODD_ROW_MAX_BYTES (the
    axis before is broadcast and packed, and the one before that is not broadcast: a whole
    output of one pixel is replicated instead), for lzb_fill_odd_rows' byte
    shuffles: ``(100, 1, 3) -> (100, 100, 3)`` u1 4.3 -> 1.0 us, ``(1000, 1, 7) -> (1000,
    16, 7)`` 26.4 -> 2.8 us (same Xeon, one thread). The bytes moved are the same; objects
    keep their items (reference counts)."""
    cdef int last = p.ndim - 1
    cdef intp_t run
    if last < 1 or p.has_objects or p.sstride[last] != p.itemsize or p.dstride[last] != p.itemsize:
        return
    run = p.shape[last] * p.itemsize
    if run > 16:
        return
    if run & (run - 1) and not (run < 16 and last >= 2 and p.sstride[last - 1] == 0
                                and p.dstride[last - 1] == run and p.sstride[last - 2] != 0
                                and p.shape[last - 1] * run < ODD_ROW_MAX_BYTES):
        return
    p.itemsize = run
    p.ndim = last


cdef inline intp_t _gcd(intp_t a, intp_t b) noexcept:
    while b:
        a, b = b, a % b
    return a


cdef bint _lines_stay_in_l2(intp_t n, intp_t stride) noexcept:
    """Whether ``n`` source lines ``stride`` bytes apart, walked again and again, stay in
    L2: at most an eighth of its lines (8192 lines 1040 bytes apart fitted its sets exactly,
    and rows of them took 32 ms against 6.5 in tiles: 2000 pages a row), and in the sets the
    stride reaches (lines a multiple of the L2's set span, L2_BYTES / L2_WAYS, apart share
    one set) at most half the ways of each (the rest hold the destination and whatever
    else passes)."""
    cdef intp_t span = _l2_sets * 64
    cdef intp_t sets = min(n, span // _gcd(stride % span or span, span), _l2_sets)
    return 8 * n <= _l2_sets * _l2_ways and (n + sets - 1) // sets <= _l2_ways // 2


cdef bint _choose_tile_axis(Plan* p) noexcept:
    """A transposing copy reads its innermost destination axis with a long source stride.
    If another axis is read with a shorter one, move that axis next to the innermost, so
    that _run walks the pair in tiles that stay in L1: the axis that saves the most
    (_tile_axis_score), then the one of shorter stride, then the longer one. Strided layers
    (k, N, N) of strides (1, 1, N) so pair their N items with the innermost axis, not the k
    layers.

    No tiles where the axis found is already next to the innermost, steps over at most one
    item (a stride of 16 bytes or more, but at most two items: 8- and 16-byte items; not
    contiguous, so the generic tile loop would run) and the innermost axis' lines stay in
    L2 (_lines_stay_in_l2): plain rows then read each line from memory once, with a
    constant stride the prefetchers follow, and from L2 for the next row or two, where the
    tile loop's short runs of a few lines each wait on memory (float64 (56, 4, 32, 512) of
    strides (524288, 29360128, 16, -1024), one thread: 13.4 -> 6.1 ms, NumPy 5.8). Pairs
    that read less of each line keep their tiles, which stream through it (a review found
    rows 2-5x slower for uint16 (64, 32, 1000) of strides (1088000, 32, 1088), float32
    (64, 32, 1000) of (2112000, 64, 2112) and float64 (64, 8, 4096) of (524288, -16, 128),
    the last with 4096 lines). A pair moved inside a broadcast axis is
    transposed again for each copy instead of written once and replicated. Tiles usually
    still win (a rule against such moves made float32 (256, 100, 2, 256) of strides (4,
    1024, 0, 307200) 4.7x slower); a known loss is accepted: float32 (64000, 3, 12, 2) of
    (24, 0, 1536000, 4), whose runs of 2 became one item and so a tiled pair, 3.35 ms in
    rows, 5.9 in tiles (NumPy 8.2)."""
    cdef int last = p.ndim - 1, d, best = -1
    cdef intp_t s, t, u, bt = 0, bu = 0
    if last < 1 or p.has_objects:
        return False
    s = _abs(p.sstride[last])
    if s <= 64:
        return False  # consecutive reads already share cache lines
    for d in range(last):
        t = _abs(p.sstride[d])
        if t == 0 or t >= s:
            continue
        u = _tile_axis_score(p.shape[d], p.sstride[d], p.itemsize)
        if best < 0 or u > bu or (u == bu and (t < bt or (t == bt
                                                          and p.shape[d] > p.shape[best]))):
            best, bt, bu = d, t, u
    if best < 0:
        return False
    if (best == last - 1 and p.sstride[best] != p.itemsize and 16 <= bt <= 2 * p.itemsize
            and _lines_stay_in_l2(p.shape[last], s)):
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
    p.stream_fill = False
    p.stream_item = False
    p.cached = True
    p.tiled = False
    p.source_order = False
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
        _widen_items(p)
        p.tiled = _choose_tile_axis(p)
    n = p.ndim  # (short runs may have become one item: _widen_items)
    blk = p.itemsize
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
