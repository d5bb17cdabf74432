"""The buffer size of NumPy's ufunc loops when compact operands broadcast against each other.

(:mod:`lazybcast._binary` computes the cases its kernel covers first: arithmetic and
comparisons of native integers, float32 and float64. What it leaves comes here.)

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
either way. :func:`call` runs the one ufunc call with ``np.setbufsize`` in a copy of the
caller's context, so the caller's setting never changes.

Measured (Zen 3, NumPy 2.4.6 and 2.0.2, best of 30 calls, ``np.add(a, b)`` of an (m, 1) and a
(1, n) source; ``benchmarks/RESULTS.md``, "Outer operations"):

- float32 512 x 512: 122 -> 71 us; 1000 x 1000: 515 -> 217 us; float64 1000 x 1000:
  1334 -> 334 us; complex64 300 x 2000: 845 -> 168 us;
- rows of fewer than 2 kB keep NumPy's buffers: each row is one more step of the iterator
  (about 90 ns), more than copying a short row costs (int8 512 x 512: 25 -> 47 us; float32
  rows of 256 beside a full operand: 48 -> 66 us, an independent review's figure);
- so do operands broadcast across rows only (a (1, n) row beside an (m, n) array): NumPy
  copies those at memcpy speed, and one-row buffers gain little (512 x 512: 82 -> 76 us);
- results of fewer than 128 kB keep NumPy's buffers: the switch (a copied context and one
  ``np.setbufsize``, about 3 us) costs more than it saves there;
- rows longer than 2048 elements: NumPy 2.3 and later already run them in place (with
  NumPy 2.0.2, 64 x 4096 float32: 131 -> 44 us, so they take one-row buffers there).
"""

import contextvars

import numpy as np

__all__ = ["call", "core", "row_buffer"]

#: NumPy's default buffer (``NPY_BUFSIZE``); rows this long or longer need no change.
_NUMPY_BUFFER = 8192

#: The longest row given a buffer of its own: NumPy 2.3 and later run longer rows in place.
_LONGEST = 2048 if np.lib.NumpyVersion(np.__version__) >= "2.3.0" else _NUMPY_BUFFER - 1

#: Rows of fewer bytes keep NumPy's buffers (the per-row pass costs more than the copy).
_SHORTEST_BYTES = 2048

#: Results of fewer bytes keep NumPy's buffers (the switch costs more than it saves).
_SMALLEST_BYTES = 128 * 1024


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
    return _core(shape, arrays)[0]


def _core(shape, arrays):
    """:func:`core`, and for each operand whether it is whole (not broadcast) along it."""
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
    return row, pattern


def row_buffer(shape, arrays):
    """The buffer size (in elements) that holds one :func:`core` row of ``shape``, or 0 to
    keep NumPy's: for results of at least 128 kB whose rows hold 2 kB or more, along which
    some operand is broadcast (a stride-0 operand NumPy would otherwise expand)."""
    size = 1
    for n in shape:
        size *= n
    itemsize = max(a.itemsize for a in arrays)
    if size * itemsize < _SMALLEST_BYTES or any(not a.flags.c_contiguous for a in arrays):
        return 0
    row, whole = _core(shape, arrays)
    if row == size or row > _LONGEST or all(whole) or row * itemsize < _SHORTEST_BYTES:
        # (one stride for every operand over the whole result; rows NumPy runs in place;
        # operands broadcast across rows only, which NumPy copies row by row at memcpy speed;
        # short rows, where the iterator's pass per row costs more than the copies)
        return 0
    return row - row % 16


def call(ufunc, args, kwargs):
    """``ufunc(*args, **kwargs)``, with one-row buffers where the array operands broadcast
    against each other (see the module); ``args`` already have the result's rank."""
    wide = ufunc in _STRIDE0_WIDE
    if not wide and ufunc not in _STRIDE0:
        return ufunc(*args, **kwargs)
    arrays = [a for a in args if type(a) is np.ndarray]
    bound = 1  # (the product of the operands' sizes bounds the result's: a cheap first test)
    itemsize = 0
    for a in arrays:
        bound *= a.size
        itemsize = max(itemsize, a.itemsize)
    if len(arrays) < 2 or bound * itemsize < _SMALLEST_BYTES or "order" in kwargs:
        return ufunc(*args, **kwargs)
    ndim = arrays[0].ndim
    for a in arrays:
        if a.ndim != ndim or a.dtype.kind == "b" or (wide and (a.itemsize < 8
                                                               or a.dtype.kind == "c")):
            return ufunc(*args, **kwargs)
    where = kwargs.get("where", True)
    if type(where) is np.ndarray:
        if where.ndim != ndim:
            return ufunc(*args, **kwargs)
        arrays.append(where)
    size = row_buffer(tuple(map(max, *(a.shape for a in arrays))), arrays)
    if not size:
        return ufunc(*args, **kwargs)
    # In a copy of the caller's context (NumPy keeps the buffer size in a context variable):
    # nothing to restore afterwards, whatever the call raises, even KeyboardInterrupt.
    return contextvars.copy_context().run(_with_buffer, size, ufunc, args, kwargs)


def _with_buffer(size, ufunc, args, kwargs):
    np.setbufsize(size)
    return ufunc(*args, **kwargs)
