"""The buffer size of NumPy's ufunc loops when compact operands broadcast against each other.

An elementwise function of views runs on the views' compact sources (:mod:`lazybcast._ufuncs`).
When those broadcast against each other, a column against a row as in an outer sum, NumPy's
iterator can give each operand one stride for at most a row of the result (the "core": the
trailing axes along which every operand is either whole or broadcast). Its default buffer
holds 8192 elements, many rows of such a result, so it copies the operands into contiguous
buffers and runs the loop on the copies: three passes over every buffer instead of one.
NumPy before 2.3 does so whenever a buffer spans rows; NumPy 2.3 and later weigh the copies
against smaller buffers (``npyiter_find_buffering_setup`` in ``nditer_constr.c``: it copies
while the row is shorter than 8192 / (1 + buffered operands) elements).

A buffer of one row (rounded down to the multiple of 16 NumPy requires) lets the loop run in
place, one call per row, with a stride-0 operand where one broadcasts. That pays for the
loops that are fast on a stride-0 operand (arithmetic, comparisons, logical and bitwise
operations of numbers; maxima and minima of 8-byte reals: :data:`_STRIDE0`), and only for
them. The values, dtypes and floating-point warnings are the same: an elementwise loop
computes each element on its own, and NumPy checks the floating-point flags once per call
either way. :func:`call` sets ``np.setbufsize`` around the one ufunc call and restores the
caller's setting.

Measured (Zen 3, NumPy 2.4.6 and 2.0.2, best of 30 calls, ``np.add(a, b)`` of an (m, 1) and a
(1, n) source; ``benchmarks/RESULTS.md``, "Outer operations"):

- float32 512 x 512: 122 -> 71 us; 1000 x 1000: 515 -> 217 us; float64 1000 x 1000:
  1334 -> 334 us; complex64 300 x 2000: 845 -> 168 us; int64 4096 x 256: 1420 -> 555 us;
- rows of fewer than 1 kB lose: each row is one more pass through the iterator (about
  90 ns), more than the copy of a short row costs (int8 512 x 512: 25 -> 47 us), so they keep
  NumPy's buffers;
- switching the buffer size costs about 5 us (two ``np.setbufsize``), so results of fewer
  than 32768 elements keep NumPy's buffers;
- rows longer than 2048 elements: NumPy 2.3 and later already run them in place (with
  NumPy 2.0.2, 64 x 4096 float32: 131 -> 44 us, so they take one-row buffers there).
"""

import numpy as np

__all__ = ["call", "core", "row_buffer"]

#: NumPy's default buffer (``NPY_BUFSIZE``); rows this long or longer need no change.
_NUMPY_BUFFER = 8192

#: The longest row given a buffer of its own: NumPy 2.3 and later run longer rows in place.
_LONGEST = (2048 if tuple(map(int, np.__version__.split(".")[:2])) >= (2, 3)
            else _NUMPY_BUFFER - 1)

#: Rows of fewer bytes keep NumPy's buffers (the per-row pass costs more than the copy).
_SHORTEST_BYTES = 1024

#: Results of fewer elements keep NumPy's buffers (the switch costs more than it saves).
_SMALLEST = 32768

#: Ufuncs whose NumPy loops run fast over an operand of stride 0 (the "scalar" inner loops of
#: numpy/_core/src/umath: loops_arithm_fp, loops_autovec, loops_comparison), so that a row
#: buffer saves the copies. Other loops are fast on contiguous data only: they then run
#: element by element, slower than copying first (bool operands of every ufunc; maximum and
#: minimum of items under 8 bytes), or they spend their time computing, not copying
#: (arctan2, hypot, power, remainder: no gain). Measured: benchmarks/RESULTS.md.
_STRIDE0 = frozenset((np.add, np.subtract, np.multiply, np.true_divide, np.less,
                      np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
                      np.logical_and, np.logical_or, np.logical_xor, np.bitwise_and,
                      np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift,
                      np.copysign))

#: Ufuncs whose loops are fast over an operand of stride 0 for real items of 8 bytes.
_STRIDE0_WIDE = frozenset((np.maximum, np.minimum, np.fmax, np.fmin))


def core(shape, arrays):
    """The number of elements NumPy's iterator runs over with one stride per operand: the
    trailing axes of ``shape`` (the broadcast shape of ``arrays``, C-contiguous ndarrays of
    ``len(shape)`` axes) along which each operand stays whole or stays broadcast, as it is
    along the last axis of size > 1."""
    row = 1
    pattern = None
    for axis in range(len(shape) - 1, -1, -1):
        n = shape[axis]
        if n == 1:
            continue
        here = tuple(a.shape[axis] != 1 for a in arrays)
        if pattern is None:
            pattern = here
        elif here != pattern:
            break
        row *= n
    return row


def row_buffer(shape, arrays):
    """The buffer size (in elements) that holds one :func:`core` row of ``shape``, or 0 to
    keep NumPy's."""
    size = 1
    for n in shape:
        size *= n
    if size < _SMALLEST or any(not a.flags.c_contiguous for a in arrays):
        return 0
    row = core(shape, arrays)
    if row == size or row > _LONGEST:
        return 0  # (one stride for every operand over the whole result: nothing to copy)
    if row * max(a.itemsize for a in arrays) < _SHORTEST_BYTES:
        return 0
    return row - row % 16


def call(ufunc, args, kwargs):
    """``ufunc(*args, **kwargs)``, with one-row buffers where the array operands broadcast
    against each other (see the module); ``args`` already have the result's rank."""
    wide = ufunc in _STRIDE0_WIDE
    if not wide and ufunc not in _STRIDE0:
        return ufunc(*args, **kwargs)
    if len(args) == 2 and not kwargs:  # (the operators: two operands, few tests)
        a, b = args
        if (type(a) is not np.ndarray or type(b) is not np.ndarray or a.shape == b.shape
                or a.size * b.size < _SMALLEST):
            return ufunc(a, b)
    arrays = [a for a in args if type(a) is np.ndarray]
    if any(a.dtype.kind == "b" or (wide and (a.itemsize < 8 or a.dtype.kind == "c"))
           for a in arrays):
        return ufunc(*args, **kwargs)
    where = kwargs.get("where", True)
    if type(where) is np.ndarray:
        arrays.append(where)
    bound = 1  # (the product of the operands' sizes bounds the result's: a cheap first test)
    for a in arrays:
        bound *= a.size
    if len(arrays) < 2 or bound < _SMALLEST or "order" in kwargs:
        return ufunc(*args, **kwargs)
    ndim = arrays[0].ndim
    if any(a.ndim != ndim for a in arrays):
        return ufunc(*args, **kwargs)
    shape = tuple(max(sizes) if min(sizes) else 0 for sizes in zip(*(a.shape for a in arrays)))
    size = row_buffer(shape, arrays)
    if not size:
        return ufunc(*args, **kwargs)
    old = np.setbufsize(size)
    try:
        return ufunc(*args, **kwargs)
    finally:
        np.setbufsize(old)
