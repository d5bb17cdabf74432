# Included by _kernels.pyx. Running a validated plan: small copies run inline; larger ones
# are cut into blocks (a Job), claimed through an atomic counter by this thread -- which
# checks for Ctrl-C between its blocks and writes from the output's front -- and by helper
# threads, which write from its back (_kernels_team.h: on POSIX, helpers that spin briefly
# after a copy for the next one; the call waits until none is in its job).

cdef extern from "_kernels_team.h":
    ctypedef struct lzb_team:
        int started
    int lzb_team_start(lzb_team* team, int n, void (*fn)(void*) noexcept nogil,
                       void* arg) noexcept nogil
    void lzb_team_join(lzb_team* team) noexcept nogil
    void lzb_set_helper_spin(long long max_ns, long long min_ns) noexcept nogil
    long long lzb_helper_spin() noexcept nogil
    int lzb_helpers_alive() noexcept nogil
    int lzb_helpers_idle() noexcept nogil
    int lzb_helpers_parked() noexcept nogil
    long long lzb_now_ns() noexcept nogil
    long long LZB_SPIN_MIN_NS
    unsigned long lzb_helper_delay(long long delay_ns, long long delay_in_ns) noexcept nogil
    void lzb_pool_init() noexcept nogil
    bint lzb_pool_stopping() noexcept nogil
    intp_t lzb_next_item(intp_t* counter) noexcept nogil
    intp_t lzb_take_front(intp_t* front) noexcept nogil
    intp_t lzb_take_back(intp_t* next, intp_t* back, intp_t n_items) noexcept nogil
    bint lzb_cancelled(int* flag) noexcept nogil
    void lzb_cancel(int* flag) noexcept nogil


cdef struct Job:
    # One validated copy, cut into blocks along one axis so that it can be interrupted and
    # shared among threads. Lives on the stack of _execute_plan, whose caller keeps both
    # arrays alive; no helper is inside it when that frame returns (lzb_team_join).
    Plan plan
    const char* src
    char* dst
    int axis                 # the axis cut into blocks; outer axes are walked one by one
    intp_t per_block         # indices of `axis` in one block
    intp_t blocks_per_outer
    intp_t n_items
    intp_t next              # blocks claimed so far, by any thread (atomic)
    intp_t front             # of those, taken by the calling thread: blocks 0, 1, ... (atomic)
    intp_t back              # ... and by helpers: blocks n_items - 1, n_items - 2, ... (atomic)
    int cancelled            # set (atomically) on an exception: no thread starts a block


cdef void _job_init(Job* job, const Plan* plan, const char* src, char* dst,
                    intp_t block_bytes) noexcept:
    cdef intp_t rowbytes = plan.itemsize
    cdef int d
    job.plan = plan[0]
    job.src = src
    job.dst = dst
    job.next = 0
    job.front = 0
    job.back = 0
    job.cancelled = 0
    job.n_items = 0
    if plan.empty:
        return
    d = plan.ndim - 1
    while d > 0 and (rowbytes * plan.shape[d] <= block_bytes or d > plan.gaxis >= 0):
        rowbytes *= plan.shape[d]
        d -= 1
    job.axis = d
    job.per_block = max(1, block_bytes // rowbytes)
    if job.per_block >= 128:
        # Blocks hold a multiple of 64 indices, so each starts at the same place in a cache
        # line as the output does: 16-byte aligned non-temporal stores stay possible in every
        # block (lzb_channels), and for an output that starts on a line, threads never share
        # one at their blocks' edges. (Speed only: no test can see it.)
        job.per_block -= job.per_block % 64
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
    sub.stream_fill = p.stream_fill
    sub.stream_item = p.stream_item
    sub.cached = p.cached
    sub.tiled = p.tiled and sub.ndim >= 2
    sub.source_order = p.source_order and sub.tiled
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
    """A helper thread: blocks until none is left, the copy is cancelled, or a fork() is
    stopping the helpers (the caller then does the rest). Each claim (job.next) takes the
    last block not yet taken (lzb_take_back, _kernels_team.h): helpers write the output from
    its back, the caller from its front (_run_block), so the caller's share is one run of
    the output and the helpers' together another (one helper's with two threads). Against
    blocks handed out in order to whichever thread came (Xeon VM, rows of 1024 float64,
    loops, medians of 60, two runs; benchmarks/threads_reader.py): 4 MiB written in 55-57
    us against 71-94, and read after it on the calling thread (out.sum()) in 179-180
    against 215-244; 16 MiB 300 + 686-730 against 304 + 852-887 (benchmarks/RESULTS.md,
    "Two threads and the reader after them")."""
    cdef Job* job = <Job*>arg
    cdef Plan sub
    cdef const char* s
    cdef char* t
    cdef intp_t item
    while not lzb_cancelled(&job.cancelled) and not lzb_pool_stopping():
        item = lzb_take_back(&job.next, &job.back, job.n_items)
        if item < 0:
            break
        _job_block(job, item, &sub, &s, &t)
        plan_run(&sub, s, t)


ctypedef int (*_item_runner)(void* job, intp_t item) except -1


cdef int _run_block(void* arg, intp_t claim) except -1:
    """The calling thread's block for a claim it made (``claim``, its number among all
    threads' claims, is below n_items): the first block not yet taken from the front (the
    helpers take theirs from the back, _helper). With the GIL, released around the copy
    unless it holds objects."""
    cdef Job* job = <Job*>arg
    cdef Plan sub
    cdef const char* s
    cdef char* t
    _job_block(job, lzb_take_front(&job.front), &sub, &s, &t)
    if job.plan.has_objects:
        plan_run_objects(&sub, s, t)
    else:
        with nogil:
            plan_run(&sub, s, t)
    return 0


cdef int _execute(void* job, intp_t* next, int* cancelled, intp_t n_items, int threads,
                  void (*helper)(void*) noexcept nogil, _item_runner run) except -1:
    """Run items ``0 .. n_items - 1`` of ``job`` (a copy's blocks, or binary_into's): this
    thread claims them from the atomic counter ``next`` and runs each claim with ``run``
    (``run(job, claim)``, which runs the next block from the output's front), checking for
    Ctrl-C between them, and up to ``threads - 1`` helpers (``helper(job)``, which claim
    from the same counter until it runs out or ``cancelled`` is set, and take blocks from
    the back) share them. Whatever
    happens (any number of KeyboardInterrupts), no helper is inside the job when this returns
    or raises: on an exception the job is cancelled, so each helper finishes at most the item
    it is in, and lzb_team_join withdraws the job and waits for them."""
    cdef lzb_team team
    cdef intp_t item
    team.started = 0
    if threads > n_items:
        threads = <int>n_items
    if threads > 1:
        with nogil:
            lzb_team_start(&team, threads - 1, helper, job)
    try:
        while not lzb_cancelled(cancelled):
            item = lzb_next_item(next)
            if item >= n_items:
                break
            run(job, item)
            PyErr_CheckSignals()
    finally:
        # No Python code runs from here to the end of the join, so no signal handler can
        # raise in between.
        lzb_cancel(cancelled)
        if team.started:
            with nogil:
                lzb_team_join(&team)
    return 0


cdef int threads_for(intp_t nbytes, object threads) except -1:
    """How many threads a copy of ``nbytes`` uses (validating the user's ``threads``)."""
    if threads is None:
        return 2 if nbytes >= _auto_threads_bytes else 1
    if isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be a positive int or None, got {threads!r}")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    return min(int(threads), 256)


# The loop rule's state. (Free-threaded Python: two threads may race on these two; that only
# changes how many threads a copy chooses, never what it writes.)
cdef long long _loop_end_ns = -(1 << 62)  # when the last copy of a loop's size ended
cdef int _loop_run = 0  # such copies in a row, each started soon after the one before
cdef int _last_nthreads = 0  # threads the last copy chose (test hook _last_threads)
cdef bint _last_stream = False  # whether its rows or fills streamed (test hook _last_streamed)


cdef int _loop_threads(intp_t nbytes) except -1:
    """Threads for a copy of LOOP_THREADS_BYTES to AUTO_THREADS_BYTES when the caller did not
    say: two if a helper is spinning now (handing it blocks costs ~1 us); or if one is parked
    and the copy has WAKE_THREADS_BYTES or more (waking it costs the caller ~8 us on a VM);
    or if this is the third copy in a row that starts within the helpers' shortest spin (50
    us) of the previous one's end: a loop, whose next copies will find the helper this one
    starts (~30 us, once) still spinning. One otherwise: smaller one-off copies never pay for
    a helper. (The window is the default shortest spin, LZB_SPIN_MIN_NS, also where the test
    hook _helper_spin lengthens the spin.)"""
    global _loop_run
    if lzb_helper_spin() < LZB_SPIN_MIN_NS:  # helpers do not spin (one CPU, Windows, or set so)
        return 1
    if lzb_now_ns() - _loop_end_ns < LZB_SPIN_MIN_NS:
        _loop_run += 1
    else:
        _loop_run = 0
    if lzb_helpers_idle() > 0 or _loop_run >= 2:
        return 2
    return 2 if nbytes >= _wake_threads_bytes and lzb_helpers_parked() > 0 else 1


cdef inline intp_t _block_bytes(intp_t nbytes, int nthreads) noexcept:
    """Bytes per block: CHUNK_BYTES on one thread (the Ctrl-C granularity); with helpers,
    about four blocks per thread (so that one that starts late, or is descheduled, still
    gets a share), at least THREAD_BLOCK_MIN_BYTES."""
    if nthreads <= 1:
        return _chunk_bytes
    return max(_thread_block_min, min(_chunk_bytes, nbytes // (4 * nthreads)))


cdef bint _loop_sized(intp_t nbytes, object threads) noexcept:
    """Whether a call writing ``nbytes`` follows the loop rule (_loop_threads): the caller
    did not say how many threads, and the output is from LOOP_THREADS_BYTES up to
    AUTO_THREADS_BYTES. Such a call sets _loop_end_ns when it ends."""
    return threads is None and _loop_threads_bytes <= nbytes < _auto_threads_bytes


cdef int _execute_plan(Plan* plan, const char* s, char* t, cnp.ndarray out,
                       object threads) except -1:
    """Run a validated plan into ``out``: inline if small, else in interruptible blocks,
    shared among threads."""
    global _loop_end_ns
    cdef intp_t nbytes = cnp.PyArray_NBYTES(out)
    cdef int nthreads = threads_for(nbytes, threads)
    if plan.empty:
        return 0
    if _loop_sized(nbytes, threads) and not plan.has_objects:
        nthreads = _loop_threads(nbytes)
        try:
            _run_plan(plan, s, t, nbytes, nthreads)
        finally:
            _loop_end_ns = lzb_now_ns()
        return 0
    _run_plan(plan, s, t, nbytes, nthreads)
    return 0


cdef bint _unwritten(const Plan* plan, const char* t) noexcept:
    """Whether the output's middle and last items lie on pages never written (a new output:
    NumPy's allocations past glibc's mmap threshold, 32 MiB at most, always are). The kernel
    zeroes each page through the cache as the first write faults it in, so ordinary stores
    then find it there, and non-temporal ones write it twice: a fresh output is written with
    ordinary stores whatever its size. Xeon VM (GenuineIntel family 6 model 167),
    materialize() into a new float32 output, best of 9, streamed / ordinary, one thread and
    two: 64 MiB rows of 1024 22.3 / 11.9 ms and 11.0 / 7.0; 256 MiB rows 82.6 / 50.1 and
    41.5 / 30.9, columns 121.2 / 50.5 and 62.0 / 28.6 (benchmarks/RESULTS.md, "New outputs
    take ordinary stores"). Tiled transposes measured level and keep their rule. (Not the
    first item: the allocator's header shares its page. At most two mincore calls.)"""
    cdef intp_t last = 0
    cdef int d
    for d in range(plan.ndim):
        last += (plan.shape[d] - 1) * plan.dstride[d]
    return lzb_page_unmapped(t + last // 2) and lzb_page_unmapped(t + last)


cdef intp_t _source_bytes(const Plan* plan) noexcept:
    """Bytes of the source a plan reads: the items along its axes of non-zero stride (a
    transposing copy's source counts with its output against the streaming threshold:
    STREAM_BYTES in _kernels_machine.pxi)."""
    cdef intp_t n = plan.itemsize
    cdef int d
    for d in range(plan.ndim):
        if plan.sstride[d] != 0:
            n *= plan.shape[d]
    return n


cdef bint _layout_batch(const Plan* plan) noexcept:
    """Whether the plan is a layout change (a transpose, image channels moved) broadcast over
    its outermost axis into one contiguous output: a batch of copies of one image, as a data
    loader stacks. _run_plan then runs the layout kernel on the first image only and copies
    that image into the others, at a plain copy's speed and with every thread (within a
    block of work, _run replicates too, but every block starts with the kernel again).
    Images of REPLICATE_CHUNK (64 kB) or more: smaller ones cost little to write again per
    block, less than a second plan (a (8, 8) float32 transpose x 2: 0.22 -> 0.30 us)."""
    return (not plan.has_objects and plan.gaxis < 0 and plan.ndim >= 2 and plan.shape[0] > 1
            and plan.sstride[0] == 0 and plan.dblock[0] > 0
            and plan.dstride[0] >= _replicate_chunk and _moves_layout(plan))


cdef intp_t _tile_loop_blocks(const Plan* plan, intp_t block_bytes, intp_t nbytes,
                              int nthreads) noexcept:
    """Bytes per block for a transpose through the generic tile loop (_tiles: its paired
    axis is strided in the source), which sweeps the source once per block: blocks cut
    inside a plane of the pair hold at least 128 rows of the paired axis (a tile's height
    for 1- and 2-byte items, two or more tiles for larger ones),
    or the loop reads a short piece of every source row again for every few output rows (u2
    (192, 65536) of strides (4, 768), 24 MiB, Zen 5: one thread 34 -> 11 ms, NumPy 16; two
    21 -> 4.2; f8 (12, 262144) of strides (16, 576) 17 -> 9.2 ms, NumPy 6). At most a
    thread's share and 16 chunks (Ctrl-C waits for a block). A sweep costs about the same
    however little of each source row it reads: blocks of half a thread's share took 13 ms
    for that u2 transpose on two threads, and 14 ms for the f8 one on one."""
    cdef int a = plan.ndim - 2
    cdef intp_t row = plan.shape[a + 1] * plan.itemsize  # (_job_init's unit)
    if plan.sstride[a] == plan.itemsize or block_bytes >= plan.shape[a] * row:
        return block_bytes  # (the staged kernels, or blocks of whole planes)
    return max(block_bytes, min(128 * row, nbytes // nthreads, 16 * _chunk_bytes))


cdef int _run_plan(Plan* plan, const char* s, char* t, intp_t nbytes, int nthreads) except -1:
    """_execute_plan's work, with its number of threads chosen."""
    global _last_nthreads, _last_stream
    cdef Job job
    cdef intp_t block_bytes
    cdef Plan first, rest
    cdef intp_t image, shape[2], sstride[2], dstride[2]
    cdef const char* rest_src
    cdef char* rest_dst
    _last_nthreads = nthreads
    cdef intp_t source_bytes = _source_bytes(plan) if plan.tiled else 0
    cdef intp_t reach = nbytes + source_bytes
    _calibrate(reach, nbytes)
    if _layout_batch(plan):
        # The first image by the layout kernel (threads as chosen for the whole), then the
        # others as a broadcast of it: a plain copy from the output, which the row kernels
        # stream and share among threads by the size of that rest. The two regions do not
        # overlap (the output is one contiguous block, image after image), and the join of
        # the first run orders its writes before the second run's reads.
        image = plan.dstride[0]
        shape[0], sstride[0], dstride[0] = plan.shape[0] - 1, 0, image
        shape[1], sstride[1], dstride[1] = image // plan.itemsize, plan.itemsize, plan.itemsize
        first = plan[0]
        first.shape[0] = 1
        first.dblock[0] = image
        _run_plan(&first, s, t, image, nthreads)
        rest_src, rest_dst = t, t + image
        plan_init(&rest, 2, shape, sstride, dstride, plan.itemsize, False, &rest_src, &rest_dst)
        _run_plan(&rest, rest_src, rest_dst, nbytes - image, nthreads)
        return 0
    plan.stream = reach >= _stream_bytes
    plan.stream_fill = nbytes >= _stream_fill_bytes
    # (only items of 2, 4 and 8 bytes are `rep stos` fills, and bytes memset; other sizes,
    # as runs shorter than ITEM_RUN_MIN_BYTES (_streams), follow the fills' threshold)
    plan.stream_item = plan.stream_fill and (nbytes >= _stream_item_bytes or not (
        plan.itemsize == 1 or plan.itemsize == 2 or plan.itemsize == 4 or plan.itemsize == 8))
    if ((plan.stream or plan.stream_fill) and not plan.tiled and not _new_outputs_streamed
            and _unwritten(plan, t)):
        plan.stream = plan.stream_fill = plan.stream_item = False
    _last_stream = plan.stream or plan.stream_fill
    if not _copy_down_calibrated and nbytes < _copy_down_max and _copies_down(plan):
        _calibrate_copy_down()
    plan.cached = nbytes < _copy_down_max
    block_bytes = _block_bytes(nbytes, nthreads)
    if plan.tiled:
        block_bytes = _tile_loop_blocks(plan, block_bytes, nbytes, nthreads)
        block_bytes = _tiles_in_source_order(plan, &s, &t, block_bytes, source_bytes)
    if nbytes <= _chunk_bytes and nthreads == 1:
        if plan.has_objects:
            plan_run_objects(plan, s, t)
        else:
            with nogil:
                plan_run(plan, s, t)
        return 0
    _job_init(&job, plan, s, t, block_bytes)
    _execute(&job, &job.next, &job.cancelled, job.n_items,
             1 if plan.has_objects else nthreads,  # (reference counts need the GIL)
             _helper, _run_block)
    return 0
