"""Copy kernels: broadcast copies and gathers, dispatched on item size, run without the GIL;
and the arithmetic of operands that broadcast against each other (``binary_into``).

Everything that can fail is checked by the entry points while they hold the GIL:
:c:func:`copy_into` (what ``materialize()`` calls; :func:`copy_broadcast` is its Python face)
and :func:`gather` (fancy indexing). They build a :c:type:`Plan` and hand blocks of it to
:c:func:`plan_run`, which only moves bytes. Between blocks the GIL is taken back to check for
Ctrl-C; blocks are shared with helper threads that the call starts and joins.

The units, one concern each (Cython ``include`` files: one extension module, so every call
between them is a direct C call, inlined where marked ``inline``):

===========================  =====================================================================
``_kernels.pxd``             the C vocabulary shared with ``_view.pyx``: ``Plan``, ``plan_init``,
                             ``plan_run``, ``copy_into``, ``threads_for``, ``may_overlap``,
                             ``may_overlap_itself``
``_kernels.pyx``             this map, the C declarations, and the entry points: ``copy_into``,
                             ``copy_broadcast``, the dtype check, ``simd_features``, test hooks
``_kernels_machine.pxi``     thresholds (streaming, replication, blocks, threads), the cache
                             sizes they are derived from at import, and their test hooks
``_kernels_calibrate.pxi``   the once-per-process measurements that choose the streaming
                             thresholds among their candidates (copies, fills, runs of one
                             item), how long rows are copied down and the staging block of
                             transposes in the source's order; ``stream_threshold``
``_kernels_plan.pxi``        ``plan_init``: an n-d copy simplified into a Plan (GIL, may raise)
``_kernels_rows.pxi``        row kernels: contiguous, repeated-item, reversed and strided runs,
                             replication of a block written once
``_kernels_tiles.pxi``       transposing tiles (staged, or in the source's order after a peel
                             run in pieces) and image channels (CHW <-> HWC)
``_kernels_walk.pxi``        ``plan_run`` / ``plan_run_objects``: the walk over a plan's axes
``_kernels_job.pxi``         blocks of work, helper threads (``_kernels_team.h``), Ctrl-C,
                             ``threads_for``, a layout batch's first image then copies
``_kernels_gather.pxi``      ``gather``: index arrays to a table of offsets, then a plan
``_kernels_overlap.pxi``     memory overlap: between two arrays (``may_overlap``) and among
                             one array's own items (``may_overlap_itself``, ``overlaps_itself``)
``_kernels_simd.h``          the vector code's base (SSE2, SSSE3, AVX2, ERMS chosen at run
                             time): the CPU's answer, copies, streaming stores
``_kernels_simd_fill.h``     rows of one repeated item: the choice among the kernels, ``rep
                             stos``, overlapping word and vector stores
``_kernels_simd_packed.h``   packed rows, row i of item i (np.repeat): broadcasts, word
                             permutes, byte shuffles
``_kernels_simd_fill_odd.h`` the same for items of odd sizes (3, 5-7, 9-15 bytes): byte
                             shuffles
``_kernels_simd_repeat.h``   a block or row written once and repeated: copied forward, swept
                             out from its first two periods, copied down a column
``_kernels_simd_reverse.h``  the vector code of reversed runs (SSE2, AVX2)
``_kernels_simd_layout.h``   the vector code of image channels (CHW <-> HWC), and the shuffle
                             masks' set-up at import
``_kernels_simd_tiles.h``    the vector code of transposing tiles: register-transposed
                             write-out, the staging block of large transposes
``_kernels_team.h``          helper threads: the API the job uses, the atomic block counter,
                             Windows' threads started and joined per copy
``_kernels_pool.h``          the POSIX helper pool (helpers that spin briefly after a copy,
                             then sleep until one wakes them), its fork handlers
``_kernels_pool_hooks.h``    the pool's spin setting and its test hooks (helpers spinning,
                             parked, alive; a delay before a helper takes a job)
``_kernels_binary.pxi``      ``binary_into``: arithmetic and comparisons of two operands that
                             broadcast against each other (``lazybcast._binary``), in blocks
                             shared with the same helpers
``_kernels_binary.h``        its C loops (one per operation, item type and inner pattern) and
                             the floating-point flags each thread reports
===========================  =====================================================================

How bytes move, innermost first:

* a run contiguous in both buffers is one ``memcpy`` (non-temporal stores for outputs past
  :data:`STREAM_BYTES`);
* a run that repeats one source item is a ``memset`` if the item's bytes are all equal, else
  (items of 1, 2, 4, 8 or 16 bytes) overlapping word or vector stores, row by row, or, for
  many short rows packed together, byte shuffles of 16 source bytes at a time
  (``np.repeat``), or, when long, replication; items of 3, 5-7 or 9-15 bytes (records, and a
  pixel repeated along a row under 2 kB, planned as one item) are byte shuffles (SSSE3);
* a reversed run of 1-, 2-, 4- or 8-byte items is reversed 32 (AVX2) or 16 bytes at a time
  in a register;
  any other strided run is a typed loop (item sizes 1, 2, 4, 8 and 16 bytes have their own;
  other sizes up to 16 bytes two overlapping loads and stores per item, larger ones
  ``memcpy``);
* a transposing pair of axes is walked in tiles through a 32 kB buffer, written out with
  register transposes of 16-byte rows (items of 1, 2, 4 and 8 bytes), unless one side has 2
  to 4 items (image channels: CHW <-> HWC), which interleave or deinterleave in registers;
  a transpose too large for the cache goes through a staging block written out with
  non-temporal stores, in the source's order (blocks of whole source rows) where the
  output's rows start on cache lines; so does one whose source is larger than L2 where the
  process's first such transpose measured that order faster than the tiles;
* an outer broadcast axis whose block is smaller than :data:`REPLICATE_CHUNK` bytes and
  contiguous in the destination is written once and replicated by doubling ``memcpy`` up to
  :data:`REPLICATE_COPY_BYTES` (a quarter of the L1 data cache), then (with AVX2) by aligned
  stores loaded from a few hundred bytes back or, for longer blocks, from the first two
  copies at the same phase (``_kernels_simd_repeat.h``), else by copying that L1-resident
  chunk forward.

Threads: a copy cut into more than one block may use helper threads (``threads``, or by
default two for outputs of :data:`AUTO_THREADS_BYTES` and more, from
:data:`WAKE_THREADS_BYTES` when a helper is parked, and from :data:`LOOP_THREADS_BYTES` for
copies in a loop). They are plain C threads with every signal blocked. On POSIX systems a
helper stays after its share of a copy, spinning for the next one for as long as that share
took (50 us to :data:`HELPER_SPIN_US`), or twice the gap between the last two copies where
that gap is at most :data:`HELPER_SPIN_US` (the spin capped there), then sleeps until a
copy wakes it: copies in a loop hand their blocks to a running helper, later ones wake it
(~8 us) instead of starting a thread (~15-30 us), as OpenMP runtimes do (torch's spin
~10 ms). A call returns or raises
only when no helper is inside its job -- also when Ctrl-C arrives, any number of times: the
copy is cancelled, each helper finishes at most its current block, and only then does
``KeyboardInterrupt`` leave. Before ``fork()`` a ``pthread_atfork`` handler stops and joins
the helpers, so the child (and Python 3.12's check for threads) finds a single-threaded
process; the child handler resets the pool. On Windows helpers are started and joined by
each call.

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
    void lzb_copy(char* dst, const char* src, size_t n) noexcept nogil
    void lzb_stream_copy(char* dst, const char* src, size_t n) noexcept nogil
    void lzb_stream_fill(char* dst, int byte, size_t n) noexcept nogil
    void lzb_stream_fence() noexcept nogil
    int lzb_stream_pattern(char* dst, const char* item, intp_t size, intp_t len) noexcept nogil
    bint lzb_all_zero(const char* p, size_t n) noexcept nogil
    bint lzb_page_unmapped(const char* p) noexcept nogil
    int lzb_cpu_limit(int mask) noexcept nogil
    int lzb_cpu_in_use() noexcept nogil

cdef extern from "_kernels_simd_repeat.h":
    size_t lzb_forward_distance(size_t period) noexcept nogil
    void lzb_copy_forward(char* dst, size_t done, size_t total, size_t dist) noexcept nogil
    int lzb_copy_periodic(char* dst, size_t done, size_t total, size_t period) noexcept nogil
    int lzb_copy_down(char* dst, intp_t dstep, const char* src, intp_t n, size_t len,
                      size_t chunk, int chunked) noexcept nogil

cdef extern from "_kernels_simd_fill.h":
    int lzb_fill_rows(char* dst, intp_t dstep, const char* src, intp_t sstep, intp_t n,
                      intp_t size, intp_t len) noexcept nogil

cdef extern from "_kernels_simd_fill_odd.h":
    int lzb_fill_odd_rows(char* dst, intp_t dstep, const char* src, intp_t sstep, intp_t n,
                          intp_t size, intp_t len) noexcept nogil

cdef extern from "_kernels_simd_reverse.h":
    int lzb_reverse(char* dst, const char* src, intp_t n, intp_t size) noexcept nogil

cdef extern from "_kernels_simd_layout.h":
    int lzb_channels(char* dst, intp_t dplane, const char* src, intp_t splane, intp_t n,
                     intp_t c, intp_t size, bint interleave, bint stream) noexcept nogil
    void lzb_kernels_init() noexcept nogil

cdef extern from "_kernels_simd_tiles.h":
    int lzb_scatter_transposed(const char* buf, intp_t sr, intp_t ni, intp_t nj, char* dst,
                               intp_t da, intp_t size, const char* ahead,
                               intp_t nahead) noexcept nogil
    int lzb_transpose_staged(const char* src, intp_t sb, char* dst, intp_t da, intp_t ni,
                             intp_t nj, intp_t size, intp_t tile, char* stage,
                             intp_t cols) noexcept nogil
    int lzb_transpose_rows(const char* src, intp_t sb, char* dst, intp_t da, intp_t ni,
                           intp_t nj, intp_t size, char* stage, intp_t rows,
                           intp_t cols) noexcept nogil

ctypedef fused item_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t
    lzb_bytes16

include "_kernels_machine.pxi"
include "_kernels_plan.pxi"
include "_kernels_rows.pxi"
include "_kernels_tiles.pxi"
include "_kernels_walk.pxi"
include "_kernels_job.pxi"
include "_kernels_calibrate.pxi"
include "_kernels_gather.pxi"
include "_kernels_binary.pxi"
include "_kernels_overlap.pxi"
lzb_set_helper_spin(<long long>HELPER_SPIN_US * 1000, LZB_SPIN_MIN_NS)
lzb_pool_init()  # the fork handlers, before any fork can need them


# ------------------------------------------------------------------------------------------
# Entry points (GIL held while validating; blocks run without it)
# ------------------------------------------------------------------------------------------

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
    if cnp.PyArray_NDIM(src) != cnp.PyArray_NDIM(out):
        raise ValueError(f"src must have out's rank {cnp.PyArray_NDIM(out)}, "
                         f"got {cnp.PyArray_NDIM(src)}")
    return copy_geometry_into(<const char*>cnp.PyArray_DATA(src), cnp.PyArray_DIMS(src),
                              cnp.PyArray_STRIDES(src), cnp.PyArray_DESCR(src), out, threads)


cdef int copy_geometry_into(const char* s, const cnp.npy_intp* sdims,
                            const cnp.npy_intp* sstrides, cnp.PyArray_Descr* descr,
                            cnp.ndarray out, object threads) except -1:
    """copy_into from a source given by its geometry (``out``'s rank of ``sdims`` and
    ``sstrides`` from ``s``, items of ``descr``) rather than an ndarray: the caller vouches
    that every address it reaches lies in memory it keeps alive (a view made by a basic key,
    whose source array is not made yet). The rest is checked as copy_into checks it."""
    cdef int ndim = cnp.PyArray_NDIM(out), d
    cdef intp_t shape[NPY_MAXDIMS]
    cdef intp_t sstride[NPY_MAXDIMS]
    cdef intp_t dstride[NPY_MAXDIMS]
    cdef intp_t n
    cdef char* t = <char*>cnp.PyArray_DATA(out)
    cdef Plan plan
    cdef bint objects
    if not lzb_equiv_types(descr, cnp.PyArray_DESCR(out)):
        raise TypeError(f"src and out must have one dtype, got {<object>descr} and {out.dtype}")
    if not cnp.PyArray_ISWRITEABLE(out):
        raise ValueError("out must be writeable")
    objects = _copyable(out)
    for d in range(ndim):
        n = cnp.PyArray_DIMS(out)[d]
        shape[d] = n
        dstride[d] = cnp.PyArray_STRIDES(out)[d]
        if sdims[d] == n:
            sstride[d] = sstrides[d]
        elif sdims[d] == 1:
            sstride[d] = 0
        else:
            raise ValueError(f"src axis {d} has size {sdims[d]}, expected 1 or {n}")
    plan_init(&plan, ndim, shape, sstride, dstride, cnp.PyArray_ITEMSIZE(out), objects, &s, &t)
    return _execute_plan(&plan, s, t, out, threads)


def copy_broadcast(cnp.ndarray src not None, cnp.ndarray out not None, threads=None):
    """copy_broadcast(src, out, threads=None)

    Fill ``out`` with ``np.broadcast_to(src, out.shape)``, where ``src`` already has
    ``out``'s rank and each of its axes is 1 or ``out``'s size; ``out`` may overlap
    ``src``. ``threads=None`` chooses as ``materialize`` does.

    >>> import numpy as np
    >>> out = np.empty((2, 3), dtype=np.int16)
    >>> copy_broadcast(np.arange(3, dtype=np.int16).reshape(1, 3), out)
    array([[0, 1, 2],
           [0, 1, 2]], dtype=int16)
    """
    copy_into(src.copy() if may_overlap(src, out) else src, out, threads)
    return out


# Each name with its bit in lzb_cpu_in_use(); SSE2 is compiled in, the others chosen at run time.
_FEATURES = {"SSE2": 2, "SSSE3": 0, "AVX2": 1, "ERMS": 3}


def simd_features():
    """The vector extensions the kernels use on this CPU: SSE2 on x86-64 (always), SSSE3 and
    AVX2 when the CPU has them (chosen at run time), and ERMS (fast ``rep stos``: long fills
    of 2- to 8-byte items); none elsewhere (portable C loops).

    >>> set(simd_features()) <= {"SSE2", "SSSE3", "AVX2", "ERMS"}
    True
    """
    cdef int bits = lzb_cpu_in_use()
    return tuple(name for name, bit in _FEATURES.items() if bits >> bit & 1)


def _helper_spin(us=None, min_us=50):
    """Test hook: helper threads spin after their share of a copy for as long as it took,
    at least ``min_us`` and at most ``us`` microseconds (0: they exit at once); ``None``
    leaves both. Returns the maximum in use."""
    if us is not None:
        us, min_us = min(int(us), 10 ** 9), min(int(min_us), 10 ** 9)
        lzb_set_helper_spin(<long long>us * 1000, <long long>min_us * 1000)
    return lzb_helper_spin() // 1000


def _helper_delay(us=None, inside_us=None):
    """Test hook: helpers wait ``us`` microseconds before taking a job, and ``inside_us``
    after taking it, before its first block (``None`` leaves either); returns how many
    shares of jobs helpers have taken in this process."""
    return lzb_helper_delay(-1 if us is None else <long long>us * 1000,
                            -1 if inside_us is None else <long long>inside_us * 1000)


def _transposes_staged():
    """Test hook: how many transposing planes (or blocks of one) went through a staging
    block in this process."""
    return _staged_planes


def _transposes_in_source_order():
    """Test hook: how many of those went in the source's order (_tiles_in_source_order)."""
    return _row_order_planes


def _peel_pieces():
    """Test hook: how many pieces of peels (the source rows before the output's first line
    boundary in a transpose in the source's order) ran in this process (_run_peel)."""
    return _peeled_pieces


def _helpers_alive():
    """Test hook: helper threads alive now (in a copy, spinning after one, or parked)."""
    return lzb_helpers_alive()


def _helpers_parked():
    """Test hook: helper threads asleep, waiting for the next copy."""
    return lzb_helpers_parked()


def _last_threads():
    """Test hook: the number of threads the last copy in blocks (or inline) chose, before
    any helper took part (0 before the first copy)."""
    return _last_nthreads


def _last_streamed():
    """Test hook: whether the last copy (its last plan) was set to write with non-temporal
    stores, from a source or as a fill."""
    return _last_stream


def _limit_simd(names):
    """Test hook: let the kernels choose only the named run-time extensions ("SSSE3",
    "AVX2", "ERMS"); ``None``: all the CPU has. Returns :func:`simd_features`."""
    cdef int mask = -1
    if names is not None:
        unknown = set(names) - {"SSSE3", "AVX2", "ERMS"}
        if unknown:
            raise ValueError(
                f"names must be among 'SSSE3', 'AVX2' and 'ERMS', got {sorted(unknown)}")
        mask = sum(1 << _FEATURES[name] for name in set(names))
    lzb_cpu_limit(mask)
    return simd_features()


def _plan_py(tuple shape, tuple sstrides, tuple dstrides, intp_t itemsize, bint details=False):
    """Test hook: the simplified plan as ``(shape, sstrides, dstrides, dblock)`` tuples; with
    ``details``, also its item size (short runs become one item) and whether its last two
    axes are walked in tiles."""
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
            tuple(p.dblock[d] for d in range(p.ndim))) + (
                (p.itemsize, bool(p.tiled)) if details else ())
