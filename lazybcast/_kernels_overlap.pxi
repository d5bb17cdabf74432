# Included by _kernels.pyx. Memory overlap, checked before a copy: whether two arrays' bytes
# may intersect (a source copied first when its output overlaps it), and whether one array's
# own items may share bytes (an ``as_strided`` out, handed to NumPy so that its values are
# NumPy's).

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


cdef bint may_overlap_itself(cnp.ndarray a) noexcept:
    """False when no two items of ``a`` can share a byte; True when they may (a stride of 0
    on an axis of length > 1, or strides that ``as_strided`` made interleave). Sufficient,
    not exact: taking the axes from the smallest stride up, each stride must step past every
    byte the smaller axes reach. Arrays NumPy makes (views, slices, transposes) always pass."""
    cdef int ndim = cnp.PyArray_NDIM(a), d, k, m = 0
    cdef intp_t n, s, span = cnp.PyArray_ITEMSIZE(a)
    cdef intp_t ns[NPY_MAXDIMS]
    cdef intp_t ss[NPY_MAXDIMS]
    for d in range(ndim):
        n = cnp.PyArray_DIMS(a)[d]
        if n == 0:
            return False
        if n == 1:
            continue
        s = cnp.PyArray_STRIDES(a)[d]
        if s < 0:
            s = -s
        k = m  # insertion by |stride|
        while k > 0 and ss[k - 1] > s:
            ss[k], ns[k] = ss[k - 1], ns[k - 1]
            k -= 1
        ss[k], ns[k] = s, n
        m += 1
    for k in range(m):
        if ss[k] < span:
            return True
        span += ss[k] * (ns[k] - 1)
    return False


def overlaps_itself(cnp.ndarray a not None):
    """overlaps_itself(a)

    Whether two items of ``a`` may share a byte (``may_overlap_itself``: conservative, and
    False for every array NumPy makes). The callers that write a user's ``out`` hand such an
    ``out`` to NumPy, so that where its items collide the value left is NumPy's.

    >>> import numpy as np
    >>> overlaps_itself(np.empty((3, 4))), overlaps_itself(np.empty((3, 4)).T[::-1])
    (False, False)
    >>> overlaps_itself(np.lib.stride_tricks.as_strided(np.empty(4), (3, 4), (0, 8)))
    True
    """
    return may_overlap_itself(a)
