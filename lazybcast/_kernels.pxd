# Copy kernels: the C-level vocabulary shared by the compiled modules.
#
# A copy is described by a Plan: the output's shape with a source and a destination stride per
# axis (bytes; a source stride of 0 is a broadcast axis). plan_init() validates and simplifies it
# with the GIL held; plan_run() then moves bytes with the GIL released and cannot fail.

cdef extern from "numpy/ndarraytypes.h":
    enum: NPY_MAXDIMS

ctypedef Py_ssize_t intp_t

cdef struct Plan:
    int ndim
    intp_t itemsize
    intp_t shape[NPY_MAXDIMS]
    intp_t sstride[NPY_MAXDIMS]
    intp_t dstride[NPY_MAXDIMS]
    # dblock[d] > 0: axes d.. are one C-contiguous block of dblock[d] bytes in the destination
    intp_t dblock[NPY_MAXDIMS]
    bint empty
    bint has_objects

cdef int plan_init(Plan* p, int ndim, const intp_t* shape, const intp_t* sstride,
                   const intp_t* dstride, intp_t itemsize, bint has_objects,
                   const char** src, char** dst) except -1

cdef void plan_run(const Plan* p, const char* src, char* dst) noexcept nogil
cdef void plan_run_objects(const Plan* p, const char* src, char* dst) noexcept
