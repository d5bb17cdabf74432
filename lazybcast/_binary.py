"""Arithmetic and comparisons of compact operands that broadcast against each other.

``a - b`` of views over a column and a row is a full-size result: the one elementwise case where
the work is the logical size, not the sources'. NumPy computes it row by row through its
iterator on one thread (about 90 ns a row, with :mod:`lazybcast._buffering`'s one-row buffers).
:func:`call` computes it in the kernels instead (``_kernels_binary.pxi``): one C loop call per
row, blocks shared with the copies' helper thread, for

- ``add``, ``subtract``, ``multiply``, ``true_divide`` (floats) and the six comparisons;
- two ndarray operands of one native dtype: integers of 1-8 bytes, float32, float64;
- no keyword arguments but ``out=`` (an ndarray of the result's shape and dtype, C-contiguous,
  not overlapping the operands); ``where=``, ``dtype=``, ... go to NumPy;
- results of any size where the operands broadcast against each other, and from
  :data:`SAME_SHAPE_BYTES` when they do not.

Values are NumPy's: the loops are IEEE 754 arithmetic, one operation per element, and integer
arithmetic wraps. Floating-point errors are NumPy's too: the kernel reports the exception flags
its threads raised, and unless ``np.errstate`` ignores every one of them the result is computed
again by NumPy, which then warns, raises or calls as it is told. NumPy's comparisons never
report floating-point errors, and neither do these.
"""

import numpy as np

from lazybcast import _kernels
from lazybcast._buffering import call as _numpy_call

__all__ = ["call"]

_OPS = {getattr(np, name): op for op, name in enumerate(_kernels.BINARY_OPS)}
_FIRST_COMPARISON = _kernels.BINARY_OPS.index("less")
_DIVIDE = _kernels.BINARY_OPS.index("true_divide")

#: dtype characters of the kernel's items (``true_divide`` takes the floats only).
_INTEGERS = frozenset("bhilqBHILQ")
_FLOATS = frozenset("fd")

#: Operands of one shape (nothing broadcast between them) stay NumPy's below this size, one
#: core's L2 cache (``LOOP_THREADS_BYTES``): NumPy's contiguous loop is as fast on one thread
#: (64 x 256 float32: 2.6 us against the kernel's 3.2; 512 x 512 int16: 16.8 against 17.4),
#: and the kernel gains where a second thread can (1024 x 1024 float32: 144 against 68 us).
#: Operands that broadcast against each other take the kernel at every size: from a 4 x 4
#: result up it cost less than NumPy's iterator (4 x 4 float32 add 6.9 against 8.7 us for the
#: whole ``v + w``; Zen 4, benchmarks/RESULTS.md).
SAME_SHAPE_BYTES = _kernels.LOOP_THREADS_BYTES


def call(ufunc, args, kwargs):
    """``ufunc(*args, **kwargs)`` where ``args`` (the compact operands, with the result's rank)
    broadcast against each other: in the kernels where they cover the case (see the module),
    else NumPy's (:func:`lazybcast._buffering.call`)."""
    op = _OPS.get(ufunc)
    out = None
    if kwargs:
        out = kwargs.get("out")
        if len(kwargs) != 1 or type(out) is not tuple or len(out) != 1:
            return _numpy_call(ufunc, args, kwargs)
        out = out[0]
    if op is None or len(args) != 2:
        return _numpy_call(ufunc, args, kwargs)
    a, b = args
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        return _numpy_call(ufunc, args, kwargs)
    char = a.dtype.char
    if b.dtype.char != char:  # (also long against longlong: equal dtypes, but NumPy's result
        return _numpy_call(ufunc, args, kwargs)  # type is its own choice between them)
    if not (char in _FLOATS or (char in _INTEGERS and op != _DIVIDE)) or not a.dtype.isnative:
        return _numpy_call(ufunc, args, kwargs)
    if a.ndim != b.ndim:
        return _numpy_call(ufunc, args, kwargs)
    shape = tuple(m if m != 1 else n for m, n in zip(a.shape, b.shape))
    size = 1
    for n in shape:
        size *= n
    nbytes = size * (1 if op >= _FIRST_COMPARISON else a.itemsize)
    if nbytes == 0 or (a.shape == b.shape and nbytes < SAME_SHAPE_BYTES):
        return _numpy_call(ufunc, args, kwargs)
    if out is None:
        out = np.empty(shape, dtype=np.bool_ if op >= _FIRST_COMPARISON else a.dtype)
    elif type(out) is not np.ndarray or out.shape != shape:
        return _numpy_call(ufunc, args, kwargs)
    flags = _kernels.binary_into(op, a, b, out)  # (-1: nothing written; out's dtype, layout)
    if flags == 0 or (flags > 0 and not _reported(flags)):
        return out
    return _numpy_call(ufunc, args, kwargs)  # NumPy's own warning, error or call


def _reported(flags):
    """Whether ``np.errstate`` does anything about one of the floating-point ``flags``."""
    state = np.geterr()
    return any(flags & bit and state[name] != "ignore"
               for name, bit in _kernels.FP_FLAGS.items())
