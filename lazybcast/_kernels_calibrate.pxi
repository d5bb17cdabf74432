# Included by _kernels.pyx: the measurements behind the streaming thresholds (copies, fills,
# runs of one item) and the copy-down's chunks, run once per process the first time an
# output needs them (_calibrate and _calibrate_copy_down, from _run_plan in
# _kernels_job.pxi), and stream_threshold(), which says what they chose. The candidates they
# choose between, and the evidence for each rule, are in _kernels_machine.pxi.


cdef double _time_replication(char* buf, intp_t n, intp_t chunk, bint stream) noexcept:
    """Seconds to fill ``buf[chunk:n]`` from its first ``chunk`` bytes (the replication
    loop; with a 64 kB chunk, read from L2, it stands for a copy from a cache-resident
    source)."""
    from time import perf_counter
    cdef intp_t o
    cdef double start = perf_counter()
    with nogil:
        o = chunk
        while o + chunk <= n:
            if stream:
                lzb_stream_copy(buf + o, buf, chunk)
            else:
                memcpy(buf + o, buf, chunk)
            o += chunk
        if stream:
            lzb_stream_fence()
    return perf_counter() - start


cdef int _calibrate_stream() except -1:
    """Choose between the two streaming thresholds of copies, once: write an output of half
    the shared cache (above LOW, below HIGH) from a 64 kB chunk (in L2, as a copy from a
    cache-resident source) with ordinary and with non-temporal stores, each in its steady
    state (after an untimed pass of the same kind, as when the same output is written again:
    ordinary stores after non-temporal ones find nothing in cache), best of 3 each, taking
    turns; 30-100 ms. If ordinary stores are 1.5x faster there (Zen 5: 1.6x at 32 MB), the
    cache keeps such outputs and streaming starts at STREAM_BYTES_HIGH; else (Zen 3:
    non-temporal stores 1.4-1.6x faster) at STREAM_BYTES_LOW. The margin keeps a noisy
    measurement on a busy machine from choosing HIGH where it does not hold. Fills stream
    from the higher of MID and this threshold."""
    global _stream_bytes, _stream_fill_bytes, _stream_calibrated, _calibrations, STREAM_BYTES
    global STREAM_FILL_BYTES
    cdef intp_t n = L3_BYTES // 2
    cdef char* buf
    cdef double ordinary = 1e9, streamed = 1e9
    cdef int r
    _stream_calibrated = True
    buf = <char*>malloc(n)
    if buf == NULL:
        return 0
    try:
        with nogil:
            memset(buf, 1, n)
        for r in range(3):
            _time_replication(buf, n, REPLICATE_CHUNK, False)
            ordinary = min(ordinary, _time_replication(buf, n, REPLICATE_CHUNK, False))
            _time_replication(buf, n, REPLICATE_CHUNK, True)
            streamed = min(streamed, _time_replication(buf, n, REPLICATE_CHUNK, True))
    finally:
        free(buf)
    _stream_bytes = STREAM_BYTES_HIGH if ordinary * 1.5 < streamed else STREAM_BYTES_LOW
    _stream_fill_bytes = max(_stream_bytes, STREAM_BYTES_MID)
    STREAM_BYTES = _stream_bytes
    try:
        _calibrate_fill()
    except BaseException:
        _stream_calibrated = False  # (Ctrl-C in the fills' copies: the next large copy
        raise                       # measures again)
    finally:
        STREAM_FILL_BYTES = _stream_fill_bytes
    _calibrations += 1
    return 0


cdef int _calibrate_fill() except -1:
    """Choose the fills' streaming threshold, once, after the copies': fill an output of the
    shared cache's size with the threads a copy of that size takes by default
    (_fill_times); 25-40 ms with the allocation, on top of the copies' measurement (about
    20 ms). The thresholds in use change only at the end, so other threads' copies meanwhile
    see the old ones.

    Fills stream from STREAM_FILL_HIGH unless non-temporal stores are 1.25x faster there
    (Zen 3, one thread: 1.33x-1.66x at 32 MiB), else from MID; the copy threshold if
    higher. The margin leans to the cheaper mistake: on this Zen 4 host non-temporal stores
    with two threads are bimodal (most of the time no faster than one thread, 1.2-2.6x
    slower than ordinary stores for 24-64 MiB fills; at times twice as fast, then up to 1.16x
    faster than ordinary ones at 96-128 MiB and even at 32 MiB: 0.60 against 0.46-1.10 ms),
    and a choice made in the fast mode would cost far more in the slow one than the reverse
    (benchmarks/RESULTS.md, "Fills that stay in the cache"). STREAM_FILL_HIGH may come down
    to STREAM_FILL_BEYOND later (_calibrate_fill_beyond)."""
    global _stream_fill_bytes
    cdef intp_t n = (L3_BYTES // 256) * 256
    cdef double ordinary, streamed
    if not _fill_times(n, threads_for(n, None), &ordinary, &streamed):
        return 0
    _stream_fill_bytes = max(_stream_bytes, STREAM_FILL_HIGH if ordinary < 1.25 * streamed
                             else STREAM_BYTES_MID)
    return 0


cdef int _calibrate_fill_beyond() except -1:
    """Once, the first time an output reaches STREAM_FILL_BEYOND, if fills stream from
    STREAM_FILL_HIGH: fill an output of STREAM_FILL_BEYOND with one thread (_fill_times;
    20-90 ms with the allocation on Zen 5); if non-temporal stores are 1.15x faster, fills stream
    from STREAM_FILL_BEYOND (the copy threshold if higher). See STREAM_FILL_BEYOND."""
    global _stream_fill_bytes, _fill_beyond_calibrated, STREAM_FILL_BYTES
    cdef double ordinary, streamed
    cdef intp_t n = (_fill_beyond // 256) * 256
    cdef intp_t before = _stream_fill_bytes
    _fill_beyond_calibrated = True
    if before < STREAM_FILL_HIGH or n <= 0:
        return 0
    try:
        if not _fill_times(n, 1, &ordinary, &streamed):
            return 0
    except BaseException:
        _fill_beyond_calibrated = False  # (Ctrl-C: the next such output measures again)
        raise
    if ordinary > 1.15 * streamed and _stream_fill_bytes == before:
        # (not if set meanwhile: the fills above release the GIL, and another thread may
        # have set the threshold through the test hook)
        _stream_fill_bytes = max(_stream_bytes, _fill_beyond)
        STREAM_FILL_BYTES = _stream_fill_bytes
    return 0


cdef int _calibrate_item_beyond() except -1:
    """Once, after _calibrate_fill_beyond, where it brought the fills' threshold down to
    STREAM_FILL_BEYOND and ERMS is in use: fill an output of that size whose rows of 64 kB
    each repeat one float32 (ITEM_RUN_MIN_BYTES), with the threads a fill of that size
    takes, by `rep stos` (ordinary stores) and with non-temporal stores (_fill_times; 15-40
    ms with the allocation). If `rep stos` is faster, runs of one item of ITEM_RUN_MIN_BYTES
    or more stream only from STREAM_ITEM_BEYOND. No margin: where the two are within noise
    of each other either is as good. Without ERMS in use (or with it masked by the test
    hook _limit_simd) nothing is decided, and a later output measures."""
    global _item_beyond_calibrated, _stream_item_bytes, _item_calibrations
    cdef double stos, streamed
    cdef intp_t n = (_fill_beyond // 65536) * 65536
    cdef intp_t before = _stream_fill_bytes
    if not lzb_cpu_in_use() & 8:  # (bit 3: ERMS)
        return 0
    _item_beyond_calibrated = True
    if before != max(_stream_bytes, _fill_beyond) or before >= STREAM_FILL_HIGH or n <= 0:
        return 0
    try:
        if not _fill_times(n, threads_for(n, None), &stos, &streamed, True):
            return 0
    except BaseException:
        _item_beyond_calibrated = False  # (Ctrl-C: the next such output measures again)
        raise
    _item_calibrations += 1
    if stos < streamed and _stream_fill_bytes == before and _stream_item_bytes == 0:
        # (not if either was set meanwhile through the test hooks)
        _stream_item_bytes = STREAM_ITEM_BEYOND
    return 0


cdef double _time_copy_down(char* dst, intp_t dstep, const char* src, intp_t n, intp_t length,
                            bint chunked) noexcept:
    """Seconds for three copies of the ``length`` bytes at ``src`` into ``n`` rows ``dstep``
    apart, chunk by chunk (lzb_copy_down) or row by row (lzb_copy: memcpy)."""
    from time import perf_counter
    cdef intp_t i, r
    cdef double start = perf_counter()
    with nogil:
        for r in range(3):
            if chunked:
                lzb_copy_down(dst, dstep, src, n, length, _replicate_copy, True)
            else:
                for i in range(n):
                    lzb_copy(dst + i * dstep, src, length)
    return perf_counter() - start


cdef int _calibrate_copy_down() except -1:
    """Choose, once, how a long row broadcast over several rows of an output that stays in
    the cache is written (see COPY_DOWN_MAX_BYTES): copy 16 rows of the L1 data cache's size
    (four chunks), 64 bytes apart beyond their length (neither packed nor 4 kB apart), a
    chunk at a time and row by row, best of 7 rounds of 3 each, taking turns (0.3-1 ms with
    the allocation). Chunks only if 1.1x faster: otherwise no output is copied down a chunk
    at a time (_copy_down_max 0). Zen 4 (family 25 model 17, L1d 32 KiB), C model, 16 rows
    of 32 kB: chunks 8.0-8.7 us, rows 10.0; Zen 5 (family 26 model 2, L1d 48 KiB), one
    thread, medians, rows of 32-128 kB in outputs of 128 kB-8 MiB: rows take 0.71-0.93 of
    the chunks' time, where `rep movsb` (FSRM) copies a row from L1 or L2 faster than the
    vector loop (benchmarks/RESULTS.md, "Rows copied down, chosen by measurement")."""
    global _copy_down_max, _copy_down_calibrated
    cdef intp_t length = 4 * _replicate_copy, dstep = length + 64, n = 16
    cdef intp_t before = _copy_down_max
    cdef double chunks = 1e9, rows = 1e9
    cdef char* buf
    cdef int r
    if not lzb_cpu_in_use() & 2:
        return 0  # (no AVX2 in use: lzb_copy_down declines, rows are copied row by row)
    _copy_down_calibrated = True
    buf = <char*>malloc(n * dstep + length + 64)
    if buf == NULL:
        return 0
    try:
        with nogil:
            memset(buf, 1, n * dstep + length + 64)
        for r in range(7):
            chunks = min(chunks, _time_copy_down(buf + length + 64, dstep, buf, n, length, True))
            rows = min(rows, _time_copy_down(buf + length + 64, dstep, buf, n, length, False))
    finally:
        free(buf)
    if not chunks * 1.1 < rows and _copy_down_max == before:  # (not if set meanwhile)
        _copy_down_max = 0
    return 0


cdef bint _copies_down(const Plan* p) noexcept:
    """Whether the plan may copy a long row down several rows a chunk at a time
    (_rows_dispatch, lzb_copy_down): a row of COPY_DOWN_MIN bytes or more, contiguous in
    the output, broadcast over the axis above it, unless three or more rows are packed and
    short enough to be swept out from their first two (which does not depend on the
    choice)."""
    cdef int last = p.ndim - 1
    cdef intp_t row = p.shape[last] * p.itemsize if last >= 1 else 0
    return (last >= 1 and p.sstride[last - 1] == 0 and p.sstride[last] == p.itemsize
            and p.dstride[last] == p.itemsize and row >= COPY_DOWN_MIN
            and (p.dstride[last - 1] != row or row > 2 * _replicate_copy
                 or p.shape[last - 1] < 3))


cdef double _time_transpose_rows(const char* src, char* dst, intp_t n, intp_t m, char* stage,
                                 intp_t stage_bytes) except -1:
    """Seconds for lzb_transpose_rows to transpose the float32 ``src`` of ``m`` rows of
    ``n`` into ``dst`` (both on cache lines) through ``stage_bytes`` of ``stage``, one
    thread."""
    from time import perf_counter
    cdef intp_t rows = _stage_rows(stage_bytes, 4, n)  # (as _tiles_rows stages float32)
    cdef double start = perf_counter()
    with nogil:
        lzb_transpose_rows(src, 4 * n, dst, 4 * m, n, m, 4, stage, rows,
                           ROW_ORDER_RUN_BYTES // 4)
    return perf_counter() - start


cdef double _time_transpose_tiles(const char* src, char* dst, intp_t n, intp_t m) except -1:
    """Seconds for the tiles (_tiles, in the output's order, ordinary stores) to transpose
    the float32 ``src`` of ``m`` rows of ``n`` into ``dst``, one thread."""
    from time import perf_counter
    cdef Plan p
    cdef intp_t shape[2]
    cdef intp_t sstride[2]
    cdef intp_t dstride[2]
    cdef const char* s = src
    cdef char* t = dst
    shape[0], shape[1] = n, m
    sstride[0], sstride[1] = 4, 4 * n
    dstride[0], dstride[1] = 4 * m, 4
    plan_init(&p, 2, shape, sstride, dstride, 4, False, &s, &t)
    cdef double start = perf_counter()
    with nogil:
        plan_run(&p, s, t)
    return perf_counter() - start


cdef int _calibrate_stage() except -1:
    """Choose the staging block of the transposes that read their source in order, once, at
    the first one (_tiles_in_source_order): a float32 transpose of m rows of n, the source
    twice L2 (larger than L2, as those transposes' sources are; its output written with
    non-temporal stores, as theirs is) and its rows at least as long as the rule's block
    holds rows, through TRANSPOSE_STAGE_BYTES and through TRANSPOSE_STAGE_SMALL_BYTES, best
    of 3 each, taking turns (4 MiB, 512 rows of 2048, and 13-15 ms where L2 is 2 MiB). The
    small block is kept if it is 1.1x faster: the Xeon VM's float32 transposes are
    1.2x-1.35x faster with it for sources of 4 to 64 MiB alike, Zen 5's 64 MiB one 1.2x
    slower. The same transpose by the tiles in the output's order (ordinary stores) is timed
    alongside: transposes below the streaming threshold take the source's order too if the
    block kept is 1.1x faster than the tiles (_source_order_cached; the Xeon VM, 4-17 MB
    outputs, one thread: 1.08x-2.1x faster with 32 kB, 0.8x-1.45x with the rule's)."""
    global _stage_calibrated, _rows_stage_bytes, _source_order_cached
    cdef intp_t n, m, rule = _transpose_stage_bytes, small = TRANSPOSE_STAGE_SMALL_BYTES
    cdef char* buf
    cdef char* src
    cdef char* dst
    cdef char* stage
    cdef double ruled = 1e9, smaller = 1e9, tiled = 1e9
    cdef int r
    _stage_calibrated = True
    _source_order_cached = False
    if rule <= small or not (lzb_cpu_in_use() & 4):
        return 0
    # (rows as long as the rule's block holds rows, so that each block is timed whole: at
    # most 2048, TRANSPOSE_STAGE_BYTES' most; as many as make 2 x L2 bytes, whole runs)
    n = max(256, rule // ROW_ORDER_RUN_BYTES) // 64 * 64
    m = max(64, 2 * (L2_BYTES or 512 << 10) // (4 * n) // 64 * 64)
    buf = <char*>malloc(2 * n * m * 4 + 64 + rule)
    if buf == NULL:
        return 0
    src = buf + ((64 - (<size_t>buf & 63)) & 63)
    dst = src + n * m * 4
    stage = dst + n * m * 4
    try:
        with nogil:
            memset(src, 1, 2 * n * m * 4)
        for r in range(3):
            ruled = min(ruled, _time_transpose_rows(src, dst, n, m, stage, rule))
            smaller = min(smaller, _time_transpose_rows(src, dst, n, m, stage, small))
            tiled = min(tiled, _time_transpose_tiles(src, dst, n, m))
    except BaseException:
        _stage_calibrated = False  # (whatever failed: the next such transpose measures)
        raise
    finally:
        free(buf)
    if smaller * 1.1 < ruled:
        _rows_stage_bytes = small
        ruled = smaller  # (the time of the block kept)
    _source_order_cached = ruled * 1.1 < tiled
    return 0


cdef int _calibrate(intp_t reach, intp_t nbytes) except -1:
    """Measure what a copy needs measured and this process has not: the copies' and fills'
    thresholds once its ``reach`` (output bytes, plus the source a transpose reads) is
    STREAM_BYTES_LOW or more, the fills' beyond the cache once its output (``nbytes``) is
    STREAM_FILL_BEYOND or more. (The staging block of transposes in the source's order is
    measured at the first: _tiles_in_source_order.)"""
    if reach >= _stream_low and not _stream_calibrated:
        _calibrate_stream()
    if nbytes >= _fill_beyond and _stream_calibrated:
        if not _fill_beyond_calibrated:
            _calibrate_fill_beyond()
        if _fill_beyond_calibrated and not _item_beyond_calibrated:
            _calibrate_item_beyond()
    return 0


cdef bint _fill_times(intp_t n, int nthreads, double* ordinary, double* streamed,
                      bint one_item=False) except -1:
    """Fill ``n`` bytes (rows of 64 float32 replicated, or with ``one_item`` rows of 64 kB
    that each repeat one float32: `rep stos` where ERMS is in use; a NumPy array as outputs
    are) through the kernels with ``nthreads`` threads: with ordinary stores (two untimed
    fills, one of which finds the output in memory, then best of 3) and with non-temporal
    ones (one untimed, best of 3). False if the output cannot be allocated."""
    cdef int r
    cdef bint stream
    try:
        out = np.empty((n // 65536, 16384) if one_item else (n // 256, 64), dtype=np.float32)
    except MemoryError:
        return False
    src = (np.arange(1, n // 65536 + 1, dtype=np.float32).reshape(-1, 1) if one_item
           else np.arange(1, 65, dtype=np.float32))
    ordinary[0] = streamed[0] = 1e9
    for stream in (False, True):
        for r in range(1 if stream else 2):
            _timed_fill(src, out, stream, nthreads)
        for r in range(3):
            if stream:
                streamed[0] = min(streamed[0], _timed_fill(src, out, stream, nthreads))
            else:
                ordinary[0] = min(ordinary[0], _timed_fill(src, out, stream, nthreads))
    return True


cdef double _timed_fill(cnp.ndarray row, cnp.ndarray out, bint stream, int nthreads) except -1:
    """Seconds to fill each row of ``out`` (C-contiguous) with ``row`` (1-d: as many items as
    a row of ``out``), or, if ``row`` is a column (2-d: one item per row of ``out``), with
    its item repeated, through the kernels, with ``nthreads`` threads, with non-temporal
    stores or not (``stream``) whatever the thresholds say."""
    from time import perf_counter
    cdef intp_t shape[2]
    cdef intp_t sstride[2]
    cdef intp_t dstride[2]
    cdef const char* s = <const char*>cnp.PyArray_DATA(row)
    cdef char* t = <char*>cnp.PyArray_DATA(out)
    cdef intp_t nbytes = cnp.PyArray_NBYTES(out)
    cdef Plan plan
    cdef Job job
    cdef double start
    shape[0], shape[1] = cnp.PyArray_DIMS(out)[0], cnp.PyArray_DIMS(out)[1]
    if cnp.PyArray_NDIM(row) == 1:
        sstride[0], sstride[1] = 0, cnp.PyArray_ITEMSIZE(row)
    else:
        sstride[0], sstride[1] = cnp.PyArray_STRIDES(row)[0], 0
    dstride[0], dstride[1] = cnp.PyArray_STRIDES(out)[0], cnp.PyArray_STRIDES(out)[1]
    plan_init(&plan, 2, shape, sstride, dstride, cnp.PyArray_ITEMSIZE(out), False, &s, &t)
    plan.stream = stream
    plan.stream_fill = stream
    plan.stream_item = stream
    _job_init(&job, &plan, s, t, _block_bytes(nbytes, nthreads))
    start = perf_counter()
    _execute(&job, &job.next, &job.cancelled, job.n_items, nthreads, _helper, _run_block)
    return perf_counter() - start


def stream_threshold(kind="copy"):
    """stream_threshold(kind="copy")

    The output size (bytes) from which copies from a source (``kind="copy"``) or fills
    (``kind="fill"``: one repeated item, replicated blocks) use non-temporal stores on this
    machine, measuring it first if no copy has needed it yet (see ``_kernels_calibrate.pxi``).
    A transposing copy compares its output plus the source it reads with the copy threshold.

    >>> stream_threshold() in (STREAM_BYTES_LOW, STREAM_BYTES_HIGH, STREAM_BYTES)
    True
    >>> stream_threshold("fill") >= stream_threshold()
    True
    >>> stream_threshold("fill") in (STREAM_BYTES_MID, STREAM_FILL_BEYOND, STREAM_FILL_HIGH,
    ...                              stream_threshold())
    True
    """
    if kind not in ("copy", "fill"):
        raise ValueError(f"kind must be 'copy' or 'fill', got {kind!r}")
    _calibrate(_stream_low, 0 if kind == "copy" else _fill_beyond)
    return _stream_bytes if kind == "copy" else _stream_fill_bytes


def _new_outputs_stream(value=None):
    """Test hook: whether outputs never written stream past the thresholds too (``True``),
    or take ordinary stores (``False``, the default: _unwritten in _kernels_job.pxi). The
    test suite sets ``True`` so that its tests past the thresholds, whose outputs are new
    allocations, keep testing the non-temporal paths. Returns the setting before."""
    global _new_outputs_streamed
    before = _new_outputs_streamed
    if value is not None:
        _new_outputs_streamed = bool(value)
    return before


def _stream_item_threshold(nbytes=None):
    """Test and benchmark hook: the output size from which runs of one item of 1, 2, 4 or 8
    bytes, ITEM_RUN_MIN_BYTES or longer (memset, `rep stos`), stream, after calibrating as
    a fill beyond the cache would: the fills' threshold, or STREAM_ITEM_BEYOND where
    _calibrate_item_beyond chose it. ``nbytes`` sets it (the fills' threshold applies if
    higher; 0: just the fills'); ``None`` leaves it."""
    global _stream_item_bytes
    _calibrate(_stream_low, _fill_beyond)
    _stream_item_bytes = _size_or(nbytes, _stream_item_bytes, "nbytes")
    return max(_stream_fill_bytes, _stream_item_bytes)


def _item_measurements():
    """Test hook: how many times this process measured runs of one item beyond the cache to
    the end (_calibrate_item_beyond: 0 or 1)."""
    return _item_calibrations


def _copy_down_measured():
    """Test hook: whether this process has chosen how long rows are copied down
    (_calibrate_copy_down: measured, at the first copy that may need it or when
    _copy_down_max_bytes() is asked, or set through that hook)."""
    return _copy_down_calibrated


def _fill_beyond_measured():
    """Test hook: whether this process is done with fills beyond the cache
    (_calibrate_fill_beyond, then _calibrate_item_beyond for runs of one item where ERMS is
    in use, at the first output of STREAM_FILL_BEYOND or more, or when the thresholds are
    asked for): measured, or found nothing to measure (the first calibration chose MID,
    LAZYBCAST_STREAM_BYTES is set, or the measurement's output could not be allocated; it
    is not tried again). An interrupted measurement does not count."""
    return _fill_beyond_calibrated and (_item_beyond_calibrated or not lzb_cpu_in_use() & 8)


def _stream_calibrations():
    """Test hook: how many times this process measured its streaming thresholds to the end
    (0 or 1; an interrupted measurement does not count, and the next large copy measures
    again)."""
    return _calibrations
