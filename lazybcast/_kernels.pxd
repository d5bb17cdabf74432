# Copy kernels: the C-level vocabulary shared by the compiled modules.
#
# A copy is described by a Plan: the output's shape with a source and a destination stride per
# axis (bytes; a source stride of 0 is a broadcast axis). plan_init() validates and simplifies it
# with the GIL held; plan_run() then moves bytes with the GIL released and cannot fail.

cimport numpy as cnp

from cpython.object cimport PyObject, PyTypeObject

cdef extern from "numpy/ndarraytypes.h":
    enum: NPY_MAXDIMS

# NumPy C-API calls that numpy's own .pxd leaves out or types loosely.
cdef extern from "numpy/arrayobject.h":
    PyTypeObject lzb_ndarray_type "PyArray_Type"
    bint lzb_equiv_types "PyArray_EquivTypes"(cnp.PyArray_Descr*, cnp.PyArray_Descr*) noexcept
    bint lzb_has_refs "PyDataType_REFCHK"(cnp.PyArray_Descr*) noexcept
    # Steals a reference to the descriptor.
    object lzb_new_from_descr "PyArray_NewFromDescr"(
        PyTypeObject*, cnp.PyArray_Descr*, int, cnp.npy_intp*, cnp.npy_intp*, void*, int,
        PyObject*)

ctypedef Py_ssize_t intp_t

cdef struct Plan:
    int ndim
    intp_t itemsize  # bytes moved as one item: the dtype's, or a short run's (_widen_items)
    intp_t shape[NPY_MAXDIMS]
    intp_t sstride[NPY_MAXDIMS]
    intp_t dstride[NPY_MAXDIMS]
    # dblock[d] > 0: axes d.. are one C-contiguous block of dblock[d] bytes in the destination
    intp_t dblock[NPY_MAXDIMS]
    bint empty
    bint has_objects
    bint stream     # large output: copies from the source use non-temporal stores
    bint stream_fill  # larger still: fills and replication (no source read) do too
    bint stream_item  # long runs of one item (memset, rep stos) do too: as stream_fill, or,
                      # for items of 1, 2, 4 or 8 bytes, from a larger output where the
                      # string instructions fill faster (_calibrate_item_beyond)
    bint cached     # the output stays in the cache: a long row broadcast over several is
                    # copied into all of them a chunk at a time (lzb_copy_down)
    bint tiled      # axes ndim-2 and ndim-1 are walked in tiles (a transposing copy)
    bint source_order  # ... in the source's order (_tiles_in_source_order swapped them)
    # An advanced-index gather: axis `gaxis` (or -1) takes its source offsets from the table
    # `goffsets` (one per index, bounds-checked before) instead of from a stride.
    int gaxis
    const intp_t* goffsets

cdef int plan_init(Plan* p, int ndim, const intp_t* shape, const intp_t* sstride,
                   const intp_t* dstride, intp_t itemsize, bint has_objects,
                   const char** src, char** dst, int gaxis=*,
                   const intp_t* goffsets=*) except -1

cdef int copy_into(cnp.ndarray src, cnp.ndarray out, object threads) except -1
cdef int copy_geometry_into(const char* s, const cnp.npy_intp* sdims,
                            const cnp.npy_intp* sstrides, cnp.PyArray_Descr* descr,
                            cnp.ndarray out, object threads) except -1
cdef bint may_overlap(cnp.ndarray a, cnp.ndarray b) noexcept
cdef bint may_overlap_itself(cnp.ndarray a) noexcept
cdef int threads_for(intp_t nbytes, object threads) except -1

cdef void plan_run(const Plan* p, const char* src, char* dst) noexcept nogil
cdef void plan_run_objects(const Plan* p, const char* src, char* dst) noexcept
