"""Generalized ufuncs on views at source cost: ``@`` / ``np.matmul``, ``np.vecdot``,
``np.matvec``, ``np.vecmat``, ``np.dot`` of one or two axes, and the loop axes of any other;
and ``np.einsum`` (:func:`einsum`), by the same rule.

A generalized ufunc (signature ``(n?,k),(k,m?)->(n?,m?)`` for matmul) maps core blocks (the
last axes) to core blocks and loops over the leading axes elementwise. A view repeats along
its broadcast axes, so:

- along a broadcast **loop** axis every core block is the same one: computed once;
- for the matrix products (matmul, matvec, vecmat), along a broadcast **free** core axis
  (matmul's rows ``n`` of the first operand and columns ``m`` of the second) each output row
  (column) depends on that input row (column) alone: computed once;
- a **contracted** axis (``k``) is summed over, so its repeats count: it is expanded to its
  logical size (stride 0: no copy; NumPy's loop reads it), and so is every core axis of a
  gufunc this module does not know.

The gufunc runs on these compact operands and the result is a view of the full shape: a row
of 512 float32 repeated 4096 times, times a 512x512 matrix, is one vector-matrix product
instead of a 4096-row one. The values are NumPy's own on the compact operands; for floating
matrix products they can differ from NumPy's on the full arrays in the last bits, as NumPy's
own results differ between shapes (BLAS picks its kernel by size), and so can their
floating-point warnings. Operands other than views, plain ndarrays and lists (``np.matrix``,
masked arrays, other array types), ``out=``, ``axes=``, ``axis=`` and ``keepdims=``, and
shapes NumPy rejects run in NumPy on the zero-copy ``np.asarray(view)`` (NumPy then keeps
their types and raises its own errors).

>>> import numpy as np, lazybcast
>>> rows = lazybcast.broadcast_to(np.array([1.0, 2.0]), (1000, 2))
>>> r = rows @ np.array([[1.0, 0.0], [0.0, 10.0]])
>>> r.shape, r.source.shape, r.source
((1000, 2), (1, 2), array([[ 1., 20.]]))
>>> np.vecdot(rows, np.array([3.0, 4.0])).source
array([11.])
"""

import math
import re

import numpy as np

from lazybcast._repetition import narrow, times, wide
from lazybcast._ufuncs import ARRAYS, _as_numpy, _broadcast_shapes, _compact, _rank
from lazybcast._view import BroadcastView, make_view

__all__ = ["call", "einsum"]

#: The core dimensions along which a product is elementwise (an output row depends on that
#: input row alone), by gufunc and the signature they were read from (a gufunc whose
#: signature is another gets none); NumPy 2.2 added matvec and vecmat.
_FREE: "dict[np.ufunc, tuple[str, frozenset]]" = {
    np.matmul: ("(n?,k),(k,m?)->(n?,m?)", frozenset("nm"))}
for _name, _sig, _free in (("matvec", "(m,n),(n)->(m)", "m"), ("vecmat", "(n),(n,m)->(m)", "m")):
    if hasattr(np, _name):
        _FREE[getattr(np, _name)] = (_sig, frozenset(_free))

#: Operand types computed on (views, plain ndarrays, and lists of values): anything else goes
#: to NumPy, which keeps its type or its mask.
_OPERANDS = ARRAYS | {list, tuple}

#: Operand types of einsum computed on: views, plain ndarrays, Python and NumPy scalars.
_EINSUM_OPERANDS = ARRAYS | {bool, int, float, complex}

#: Keyword arguments that do not move core axes or write elsewhere.
_KWARGS = frozenset(("dtype", "casting"))


_PARSED: "dict[str, tuple]" = {}


def _parse(signature):
    """``"(n?,k),(k,m?)->(n?,m?)"`` -> the inputs' and outputs' core dimensions, each a
    tuple of ``(name, optional)`` (memoized per signature)."""
    parsed = _PARSED.get(signature)
    if parsed is None:
        def groups(part):  # "(i),()" -> (("i", False),), ()
            return tuple(tuple((d.rstrip("?"), d.endswith("?")) for d in g.split(",") if d)
                         for g in re.findall(r"\(([^()]*)\)", part))
        ins, outs = signature.replace(" ", "").split("->")
        parsed = _PARSED[signature] = (groups(ins), groups(outs))
    return parsed


def call(ufunc, inputs, kwargs):
    """``ufunc(*inputs, **kwargs)`` for a gufunc with one output, on the compact operands (see
    the module), as a view of the full shape (a NumPy scalar for a 0-d result); None when
    NumPy should run it on the zero-copy arrays instead."""
    if ufunc.nout != 1 or not kwargs.keys() <= _KWARGS or len(inputs) != ufunc.nin:
        return None
    in_specs, (out_spec,) = _parse(ufunc.signature)
    if any(type(x) not in _OPERANDS for x in inputs):
        return None
    known = _FREE.get(ufunc)
    free = known[1] if known is not None and known[0] == ufunc.signature else frozenset()
    sizes = {}
    dropped = set()
    loops = []
    operands = []
    for x, spec in zip(inputs, in_specs):
        c = _compact(x)
        if c is None or type(c[0]) is not np.ndarray:
            return None  # a scalar operand (NumPy raises) or another duck array
        a, shape = c
        if len(shape) < len(spec):
            # NumPy drops an operand's optional core dimensions (matmul: a 1-D operand).
            dropped.update(d for d, optional in spec if optional)
            spec = tuple(s for s in spec if not s[1])
            if len(shape) < len(spec):
                return None
        a = _rank(a, len(shape))
        if 0 in shape:  # (computed elements are logical ones: NumPy's warnings, no others)
            a = a[tuple(slice(0, 0) if n == 0 else slice(None) for n in shape)]
        lead = len(shape) - len(spec)
        want = list(a.shape)
        for i, (d, _) in enumerate(spec):
            n = shape[lead + i]
            if sizes.setdefault(d, n) != n:
                return None  # core sizes that do not match: NumPy raises
            if d not in free:
                want[lead + i] = n  # summed over (or unknown): every repeat counts
        if tuple(want) != a.shape:
            a = np.broadcast_to(a, tuple(want))
        loops.append(shape[:lead])
        operands.append(a)
    try:
        full = _broadcast_shapes(loops)
    except ValueError:
        return None
    for d, _ in out_spec:
        if d not in dropped:
            if d not in sizes:
                return None  # an output-only dimension: NumPy decides
            full += (sizes[d],)
    result = ufunc(*operands, **kwargs)
    if type(result) is not np.ndarray:
        return result
    return make_view(result, (1,) * (len(full) - result.ndim) + result.shape, full, "numpy")


def _times(r, k):
    """``k`` equal terms ``r`` added as einsum adds them: :func:`lazybcast._repetition.times`
    (integers wrap as the sum would, booleans stay, complex values part by part) on a copy,
    narrow floats in float64 and rounded once, overflowing to inf silently as NumPy's einsum
    does."""
    a = np.asarray(r)
    dtype = a.dtype
    with np.errstate(over="ignore"):
        p = times(np.array(a, dtype=wide(dtype) if narrow(dtype) else dtype), k)
        p = p.astype(dtype, copy=False)
    return p if type(r) is np.ndarray else p[()]  # (a 0-d array stays one)


def einsum(*operands, out=None, optimize=False, **kwargs):
    """``np.einsum`` with a subscripts string of letters (no ``...``, no letter twice in one
    operand) over views and plain ndarrays: a letter of the output along which every operand
    that has it repeats (a broadcast axis) is computed once; a summed letter along which
    every operand that has it repeats is summed once and the result multiplied by its size
    (``np.einsum("ij->j", v)`` costs the source); every other axis is expanded to its
    logical size (stride 0, no copy), so summed repeats count. NumPy's einsum runs on
    these compact operands and the result is a view of the full shape (NumPy's scalar when
    0-d). Anything else is NumPy's.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> v = lazybcast.broadcast_to(np.array([1.0, 2.0]), (1000, 2))
    >>> r = np.einsum("ij,jk->ik", v, np.eye(2))
    >>> r.shape, r.source
    ((1000, 2), array([[1., 2.]]))
    """
    if (out is not None or not operands or type(operands[0]) is not str
            or not kwargs.keys() <= {"dtype", "order", "casting"}):
        return NotImplemented
    subscripts, arrays = operands[0].replace(" ", ""), operands[1:]
    if (not arrays or any(type(x) not in _EINSUM_OPERANDS and not isinstance(x, np.generic)
                          for x in arrays)
            or not any(type(x) is BroadcastView for x in arrays)):
        return NotImplemented
    ins, arrow, output = subscripts.partition("->")
    terms = ins.split(",")
    letters = "".join(terms)
    if not arrow:  # implicit: the letters used once, in alphabetical order
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if (len(terms) != len(arrays) or not (letters + output).isalpha()
            or any(len(set(t)) != len(t) for t in terms + [output])
            or any(len(t) != np.ndim(x) for t, x in zip(terms, arrays))):
        return NotImplemented  # (ellipses, diagonals, NumPy's errors)
    sizes = {}
    for t, x in zip(terms, arrays):
        for c, n in zip(t, np.shape(x)):
            m = sizes.setdefault(c, n)
            if m != n:
                if 1 not in (m, n):
                    return NotImplemented  # (NumPy's ValueError)
                sizes[c] = n if m == 1 else m  # (einsum broadcasts a size of 1)
    if not set(output) <= set(letters):
        return NotImplemented
    compact = [_compact(x)[0] for x in arrays]  # (a 0-d operand: itself or its source)
    def repeats(c):  # every operand that has letter c repeats along it
        return all(a.shape[t.index(c)] == 1 for t, a in zip(terms, compact) if c in t)

    # (An empty output axis is computed empty: no element NumPy would not compute.)
    once = {c for c in output if sizes[c] and repeats(c)}
    # A summed letter along which every operand that has it repeats adds up that many equal
    # terms: it is summed once and the result scaled. Not for objects, whose + may not be a
    # product; nor along a path of pairwise steps (optimize=), whose dtypes (each step wraps
    # in its own) and result type (a 0-d array or a scalar) NumPy picks from the shapes.
    summed = set(letters) - set(output)
    dtype = kwargs.get("dtype")
    if summed and (optimize is False or len(compact) == 1) and not any(
            np.asarray(a).dtype.kind == "O" for a in compact) and (
            dtype is None or np.dtype(dtype).kind != "O"):
        summed = {c for c in summed if sizes[c] > 1 and repeats(c)}
    else:
        summed = set()
    once |= summed
    pieces = []
    for t, x, a in zip(terms, arrays, compact):
        if not t:  # a scalar (a Python one stays one: NumPy converts it)
            pieces.append(a)
            continue
        want = tuple(1 if c in once else n for c, n in zip(t, x.shape))
        pieces.append(a if a.shape == want else np.broadcast_to(a, want))
    explicit = f"{','.join(terms)}->{output}"
    if optimize is not False:
        # NumPy picks the order of pairwise contractions from the shapes, and each step
        # promotes (and wraps) on its own: the path is the one for the logical shapes.
        optimize = np.einsum_path(explicit, *map(_as_numpy, arrays), optimize=optimize)[0]
    r = np.einsum(explicit, *pieces, optimize=optimize, **kwargs)
    if summed:
        r = _times(r, math.prod(sizes[c] for c in summed))
    full = tuple(sizes[c] for c in output)
    if type(r) is not np.ndarray or not full:
        return r
    return make_view(r, r.shape, full, "numpy")
