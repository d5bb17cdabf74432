# Included by _kernels.pyx. Arithmetic and comparisons of two compact operands that broadcast
# against each other (an outer difference of a column and a row), computed in C loops
# (_kernels_binary.h) over blocks shared with the helper threads of the copies. NumPy runs
# such a result row by row through its iterator, one thread, ~90 ns a row; here a row is one
# C call and blocks go to both cores (lazybcast._binary decides when, and checks the
# floating-point flags against np.errstate).

cdef extern from "<fenv.h>":
    ctypedef struct fenv_t:
        pass
    int fegetenv(fenv_t* env) noexcept nogil
    enum:
        FE_INVALID
        FE_DIVBYZERO
        FE_OVERFLOW
        FE_UNDERFLOW

cdef extern from "_kernels_binary.h":
    ctypedef void (*lzb_binary_loop)(intp_t n, const char* a, const char* b,
                                     char* out) noexcept nogil
    ctypedef struct lzb_binary_job:
        lzb_binary_loop loop
        const char* a
        const char* b
        char* out
        int outer
        intp_t shape[64]
        intp_t sa[64]
        intp_t sb[64]
        intp_t so[64]
        intp_t n, ia, ib, io, rows, rows_per_item, cols_per_item, pieces, n_items, next
        intp_t front, back
        int cancelled
        int flags
        fenv_t env
    enum:
        LZB_BINARY_MAXDIMS
        LZB_NOPS
        LZB_LESS
        LZB_F4
        LZB_VV
        LZB_SV
        LZB_VS
    lzb_binary_loop lzb_binary_loop_for(int op, int type, int pattern) noexcept nogil
    void lzb_binary_run(const lzb_binary_job* job, intp_t item) noexcept nogil
    void lzb_binary_run_reporting(lzb_binary_job* job) noexcept nogil
    void lzb_binary_helper(void* arg) noexcept nogil

#: The floating-point flags binary_into reports, by the np.errstate category they stand for.
FP_FLAGS = {"invalid": FE_INVALID, "divide": FE_DIVBYZERO, "over": FE_OVERFLOW,
            "under": FE_UNDERFLOW}

#: The operations of :func:`binary_into`, by ufunc name, in the order of _kernels_binary.h.
BINARY_OPS = ("add", "subtract", "multiply", "true_divide", "less", "less_equal", "greater",
              "greater_equal", "equal", "not_equal")


cdef int _binary_type(cnp.ndarray a) noexcept:
    """The item type of _kernels_binary.h for ``a``'s dtype (native integers of 1-8 bytes,
    float32, float64), or -1."""
    cdef int num = cnp.PyArray_TYPE(a)
    cdef int k = {1: 0, 2: 1, 4: 2, 8: 3}.get(cnp.PyArray_ITEMSIZE(a), -1)
    if not cnp.PyArray_ISNOTSWAPPED(a) or k < 0:
        return -1
    if num in (cnp.NPY_BYTE, cnp.NPY_SHORT, cnp.NPY_INT, cnp.NPY_LONG, cnp.NPY_LONGLONG):
        return k
    if num in (cnp.NPY_UBYTE, cnp.NPY_USHORT, cnp.NPY_UINT, cnp.NPY_ULONG, cnp.NPY_ULONGLONG):
        return 4 + k
    if num == cnp.NPY_FLOAT or num == cnp.NPY_DOUBLE:
        return 8 + k - 2
    return -1


cdef bint _inner_ok(intp_t stride, intp_t itemsize) noexcept:
    return stride == 0 or stride == itemsize


def binary_into(int op, cnp.ndarray a not None, cnp.ndarray b not None,
                cnp.ndarray out not None, threads=None):
    """binary_into(op, a, b, out, threads=None)

    ``out[...] = BINARY_OPS[op](a, b)``, where ``a`` and ``b`` have ``out``'s rank and one
    dtype, each axis of theirs is 1 or ``out``'s size, and ``out`` (C-contiguous, not
    overlapping them) has their dtype, or bool for a comparison. Returns the floating-point
    exception flags the arithmetic of floats raised (``FE_*`` bits of ``<fenv.h>``; 0 for
    integers and for comparisons, whose NumPy loops never report any), or -1 without writing
    anything when the kernel has no loop for these operands (another dtype, byte order or
    layout, integer division). Helper threads compute in the caller's floating-point
    environment (rounding mode, flush-to-zero), as NumPy computes in the caller's thread.
    ``threads=None`` chooses as ``materialize`` does.

    >>> import numpy as np
    >>> out = np.empty((2, 3))
    >>> binary_into(BINARY_OPS.index("subtract"), np.ones((2, 1)), np.arange(3.0)[None], out)
    0
    >>> out
    array([[ 1.,  0., -1.],
           [ 1.,  0., -1.]])
    """
    global _loop_end_ns, _last_nthreads
    cdef int ndim = cnp.PyArray_NDIM(out), d, kept = 0, typ = _binary_type(a), pattern
    cdef intp_t n, na, nb, sa, sb, so, size = 1, block, nbytes
    cdef intp_t itemsize = cnp.PyArray_ITEMSIZE(a), outsize = cnp.PyArray_ITEMSIZE(out)
    cdef lzb_binary_job job
    cdef int nthreads
    cdef bint loop_sized, comparison = op >= LZB_LESS
    if op < 0 or op >= LZB_NOPS:
        raise ValueError(f"op must be in 0..{LZB_NOPS - 1}, got {op}")
    if cnp.PyArray_NDIM(a) != ndim or cnp.PyArray_NDIM(b) != ndim:
        raise ValueError(f"a and b must have out's rank {ndim}, got {cnp.PyArray_NDIM(a)} and "
                         f"{cnp.PyArray_NDIM(b)}")
    if ndim > LZB_BINARY_MAXDIMS or typ < 0 or lzb_binary_loop_for(op, typ, LZB_VV) == NULL:
        return -1
    if not lzb_equiv_types(cnp.PyArray_DESCR(a), cnp.PyArray_DESCR(b)) or _binary_type(b) != typ:
        return -1
    if comparison:
        if cnp.PyArray_TYPE(out) != cnp.NPY_BOOL:
            return -1
    elif not lzb_equiv_types(cnp.PyArray_DESCR(out), cnp.PyArray_DESCR(a)):
        return -1
    if not (cnp.PyArray_ISALIGNED(a) and cnp.PyArray_ISALIGNED(b) and cnp.PyArray_ISALIGNED(out)
            and cnp.PyArray_ISWRITEABLE(out) and cnp.PyArray_IS_C_CONTIGUOUS(out)):
        return -1
    job.loop = NULL
    job.a = <const char*>cnp.PyArray_DATA(a)
    job.b = <const char*>cnp.PyArray_DATA(b)
    job.out = <char*>cnp.PyArray_DATA(out)
    # The axes of size > 1, each merged into the one before where all three arrays step
    # through both as through one axis; an operand's stride is 0 where it repeats.
    for d in range(ndim):
        n = cnp.PyArray_DIMS(out)[d]
        na = cnp.PyArray_DIMS(a)[d]
        nb = cnp.PyArray_DIMS(b)[d]
        if (na != n and na != 1) or (nb != n and nb != 1) or (n != 1 and na != n and nb != n):
            raise ValueError(f"a {(<object>a).shape} and b {(<object>b).shape} do not broadcast "
                             f"to out {(<object>out).shape}")
        size *= n
        if n == 1:
            continue
        sa = cnp.PyArray_STRIDES(a)[d] if na == n else 0
        sb = cnp.PyArray_STRIDES(b)[d] if nb == n else 0
        so = cnp.PyArray_STRIDES(out)[d]
        if (kept and job.sa[kept - 1] == sa * n and job.sb[kept - 1] == sb * n
                and job.so[kept - 1] == so * n):
            job.shape[kept - 1] *= n
        else:
            job.shape[kept] = n
            kept += 1
        job.sa[kept - 1], job.sb[kept - 1], job.so[kept - 1] = sa, sb, so
    if size == 0:
        return 0
    if may_overlap(out, a) or may_overlap(out, b):
        return -1
    if kept == 0:  # one element
        job.shape[0], job.sa[0], job.sb[0], job.so[0] = 1, itemsize, itemsize, outsize
        kept = 1
    job.outer = kept - 1
    job.n = job.shape[job.outer]
    job.ia, job.ib, job.io = job.sa[job.outer], job.sb[job.outer], job.so[job.outer]
    if (not (_inner_ok(job.ia, itemsize) and _inner_ok(job.ib, itemsize) and job.io == outsize)
            or (job.ia == 0 and job.ib == 0 and job.n > 1)):  # (both repeat: an input's own
        return -1                                             # stride 0, np.broadcast_to's)
    pattern = LZB_SV if job.ia == 0 else LZB_VS if job.ib == 0 else LZB_VV
    job.loop = lzb_binary_loop_for(op, typ, pattern)
    if job.loop == NULL:
        return -1
    job.rows = size // job.n

    nbytes = size * outsize
    nthreads = threads_for(nbytes, threads)
    loop_sized = _loop_sized(nbytes, threads)
    if loop_sized:
        nthreads = _loop_threads(nbytes)
    block = _block_bytes(nbytes, nthreads) // outsize
    if job.n >= block:  # blocks are pieces of one row
        job.cols_per_item = block
        job.pieces = (job.n + block - 1) // block
        job.rows_per_item = 1
        job.n_items = job.rows * job.pieces
    else:  # blocks are whole rows
        job.cols_per_item = job.n
        job.pieces = 1
        job.rows_per_item = block // job.n
        job.n_items = (job.rows + job.rows_per_item - 1) // job.rows_per_item
    job.next = 0
    job.front = 0
    job.back = 0
    job.cancelled = 0
    job.flags = 0
    _last_nthreads = min(nthreads, job.n_items)
    fegetenv(&job.env)  # (the helpers compute in it: lzb_binary_helper)
    try:
        _execute(&job, &job.next, &job.cancelled, job.n_items, nthreads, lzb_binary_helper,
                 _run_binary_item)
    finally:
        if loop_sized:
            _loop_end_ns = lzb_now_ns()
    return job.flags if typ >= LZB_F4 and not comparison else 0


cdef int _run_binary_item(void* job, intp_t claim) except -1:
    """binary_into's block (rows, or pieces of one) for a claim of the calling thread: the
    first not yet taken from the front (helpers take theirs from the back,
    lzb_binary_helper); its floating-point flags added to the job's before _execute checks
    for signals."""
    with nogil:
        lzb_binary_run_reporting(<lzb_binary_job*>job)
    return 0
