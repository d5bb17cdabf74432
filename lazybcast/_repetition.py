"""The repetition algebra: what a reduction becomes when every value repeats ``k`` times.

A broadcast axis of size ``k`` repeats each source value ``k`` times within a reduced cell, so
the reduction of the logical array is a function of the source's reduction:

- a sum is ``k`` times the source's (in the result dtype: integers wrap as ``k`` repeated
  additions wrap);
- a product is its ``k``-th power (square and multiply for integers, bool and complex, so
  every partial product wraps or rounds as NumPy's repeated multiplication does; ``pow`` for
  real floats);
- an exclusive or is the source's for odd ``k`` and 0 for even ``k``;
- a minimum, maximum, ``and`` or ``or`` is the source's;
- a gcd or lcm is the source's absolute value (``gcd(a, a) == lcm(a, a) == |a|``; the
  source's own is already non-negative unless it reduced one value).

**Narrow floats** (float16, float32, complex64) are scaled in float64 (complex128) and
rounded once to the result dtype: the source is small, so the wider pass costs little, and it
is more accurate than NumPy's own partial sums in the narrow dtype (see
``benchmarks/accuracy_reductions.py``). :func:`narrow` says when, :func:`wide` in what.

:mod:`lazybcast._reductions` plans the reductions (axes, source, repeats, NumPy's options) and
calls these.

>>> import numpy as np
>>> scale(np.array([3], dtype=np.int8), "times", 100)  # 300 wraps in int8, as NumPy's sum
array([44], dtype=int8)
"""

import numpy as np

__all__ = ["KIND", "narrow", "power", "rounded", "rounded_scalar", "reported", "scale",
           "times", "wide"]

#: Reductions whose value along a repeated axis is algebra on one copy.
KIND: "dict[np.ufunc, str]" = {
    np.add: "times",
    np.multiply: "power",
    np.bitwise_xor: "parity",
    np.logical_xor: "parity",
    **{u: "same" for u in (np.minimum, np.maximum, np.fmin, np.fmax, np.logical_and,
                           np.logical_or, np.bitwise_and, np.bitwise_or)},
    np.gcd: "abs",
    np.lcm: "abs",
}

_WIDE: "dict[np.dtype, np.dtype]" = {}


def wide(dtype):
    """The dtype to scale a floating result in: float64 for float16/32, complex128 for
    complex64, the dtype itself for float64 and wider. (Memoized: ``np.result_type`` costs
    about a microsecond, and a small reduction asks up to three times.)"""
    w = _WIDE.get(dtype)
    if w is None:
        w = _WIDE[dtype] = np.result_type(dtype, np.float64)
    return w


def narrow(dtype):
    """True for float16/32 and complex64 in either byte order: the dtypes computed in
    :func:`wide` and rounded once. (The scalar types are compared, not the dtypes, so that a
    non-native ``>f8`` counts as wide.)"""
    return dtype.kind in "fc" and wide(dtype).type is not dtype.type


def times(r, k):
    """``r`` summed ``k`` times, in place, in ``r``'s dtype (``k``: an int, or an array of
    counts per cell that broadcasts to ``r``)."""
    if np.ndim(k):  # a cell counted 0 times sums nothing: 0 (no inf * 0 computed)
        np.copyto(r, 0, where=np.asarray(k) == 0, casting="unsafe")
    if r.dtype.kind == "b" or (np.ndim(k) == 0 and k == 1):
        return r  # (a bool "sum" is a logical or: repeating is a no-op)
    kind = r.dtype.kind
    if kind in "iu":
        # k is reduced modulo 2**bits by the cast: the same wrap as k repeated additions.
        np.multiply(r, np.array(k).astype(r.dtype), out=r)
    elif kind == "f":
        # (Narrow floats arrive already widened: see _reductions._scaled.)
        r[...] = reported(np.multiply, r, np.array(k, dtype=r.dtype))
    elif kind == "c":
        # Each part on its own, as repeated additions scale it: a complex product by k + 0j
        # would turn inf + 0j into inf + nanj (inf * 0).
        for part in (r.real, r.imag):
            times(part, k)
    else:  # timedelta64, object
        np.multiply(r, k, out=r)
    return r


def power(r, k):
    """``r`` multiplied by itself ``k`` times, in place, in ``r``'s dtype."""
    if k == 1:
        return r
    if r.dtype.kind == "f":
        w = wide(r.dtype)
        r[...] = reported(np.power, r, np.array(k, dtype=w), dtype=w)
        return r
    # Integers (wrapping), bool (logical and), complex, object: square and multiply; every
    # product is rounded or wrapped as NumPy's repeated multiplication rounds or wraps it.
    base = r.astype(wide(r.dtype)) if r.dtype.kind == "c" else r.copy()
    acc = None
    while True:
        if k & 1:
            acc = base.copy() if acc is None else np.multiply(acc, base, out=acc)
        k >>= 1
        if not k:
            break
        np.multiply(base, base, out=base)
    r[...] = acc
    return r


def scale(r, kind, k):
    """The reduction of ``k`` repetitions from the source's reduction ``r`` (an array,
    changed in place and returned), for a :data:`KIND` kind."""
    if kind == "times":
        return times(r, k)
    if kind == "power":
        return power(r, k)
    if kind == "parity" and k % 2 == 0:
        r[...] = 0  # x ^ x == 0: pairs cancel
    elif kind == "abs" and k > 1:
        np.absolute(r, out=r)  # gcd(a, a) == lcm(a, a) == |a|
    return r


def rounded(w, dtype, out=None):
    """The wide result ``w`` rounded once to ``dtype`` (into ``out``, of that dtype, if
    given). The cast runs as a reduction over one element so that an overflow is reported
    as NumPy reports it in the narrow reduction it replaces: "overflow encountered in
    reduce", under ``np.errstate``'s rule (a cast would say "in cast")."""
    if out is None:
        out = np.empty(w.shape, dtype.newbyteorder("="))
    return np.add.reduce(w[np.newaxis], axis=0, out=out)


def rounded_scalar(x, dtype):
    """:func:`rounded` for a NumPy scalar ``x``: a plain conversion when it cannot
    overflow (the common case, a tenth of the reduction's cost)."""
    limit = np.finfo(dtype).max
    if -limit <= x.real <= limit and -limit <= x.imag <= limit:
        return dtype.type(x)
    return rounded(np.asarray(x), dtype)[()]



def reported(ufunc, *args, **kwargs):
    """``ufunc(*args, **kwargs)`` (a new result) on real floats, an overflow reported as NumPy
    reports one in the reduction this replaces: "overflow encountered in reduce", under
    ``np.errstate``'s rule (``ufunc`` itself would say "in multiply" or "in power"). The other
    kinds of floating-point error keep the caller's settings and callbacks."""
    try:
        with np.errstate(over="raise"):
            return ufunc(*args, **kwargs)
    except FloatingPointError as e:
        if "overflow" not in str(e):
            raise  # another kind the caller set to "raise"
    with np.errstate(over="ignore"):
        r = ufunc(*args, **kwargs)
    dtype = np.result_type(r)
    big = np.finfo(dtype).max
    np.multiply.reduce(np.array([big, big], dtype))  # NumPy's own report of an overflow
    return r
