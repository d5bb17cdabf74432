"""Strategies and checks shared by the duck-array tests (ufuncs, reductions, functions).

A drawn case is a :class:`~lazybcast.BroadcastView` together with its NumPy oracle, the
``np.broadcast_to`` equivalent (read-only, strided). The view is built through every mode by
:func:`_core_strategies.requests`; its data has drawn strides (transposed, negative, zero).
"""

import math
import operator
import warnings

import numpy as np
from hypothesis import strategies as st

import lazybcast
from _core_strategies import call_broadcast, expected_values, laid_out, requests, shapes

#: Numeric dtypes a ufunc or reduction takes (bool, every integer, every float and complex).
NUMERIC = [np.dtype(d) for d in ("?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
                                 "f2", "f4", "f8", "c8", "c16")]
numeric = st.sampled_from(NUMERIC)


@st.composite
def views(draw, dtype=None, max_rank=4, mode=None):
    """``(view, oracle)``: a view in any mode over data with drawn strides, and NumPy's
    ``np.broadcast_to`` equivalent."""
    dtype = draw(numeric) if dtype is None else dtype
    data_shape, target, mapping, mode, axis = draw(requests(mode=mode, max_rank=max_rank))
    x = draw(laid_out(data_shape, dtype))
    view = call_broadcast(x, target, mapping, mode, axis)
    return view, expected_values(x, target, mapping, mode, axis)


@st.composite
def operand_shapes(draw, n, max_rank=4):
    """A full shape and ``n`` operand shapes that broadcast to it (leading axes dropped,
    any axis cut to 1)."""
    full = draw(shapes(0, max_rank))
    out = []
    for _ in range(n):
        k = draw(st.integers(0, len(full)))
        out.append(tuple(m if draw(st.booleans()) else 1 for m in full[len(full) - k:]))
    return full, out


@st.composite
def operand(draw, shape, dtype, kinds=("view", "view", "array", "scalar")):
    """``(operand, oracle)`` of logical ``shape``: a view (with broadcast axes anywhere), an
    ndarray (strided, maybe stride 0), a NumPy scalar or a Python scalar."""
    kind = draw(st.sampled_from(kinds))
    if kind == "scalar" and not shape:
        x = draw(laid_out((), dtype))[()]
        if draw(st.booleans()):
            x = x.item()  # a Python scalar: NEP 50's weak promotion
            if isinstance(x, (bytes, str)):
                return np.asarray(x), np.asarray(x)
        return x, x
    if kind == "array":
        a = draw(laid_out(shape, dtype))
        return a, a
    src_shape = tuple(n if draw(st.booleans()) else 1 for n in shape)
    src = draw(laid_out(src_shape, dtype))
    return lazybcast.broadcast_to(src, shape), np.broadcast_to(src, shape)


def outcome(func, *args, **kwargs):
    """``("ok", result)`` or ``("error", exception type)``, floating-point warnings off and
    any other warning raised as an error (so both sides meet the same ones)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return "ok", func(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the type is compared against NumPy's
            return "error", type(e)


def raised_alike(got, expected):
    """Two :func:`outcome` pairs agree on success or failure; True when both raised an
    exception of one family (nothing more to compare), False when both returned."""
    assert got[0] == expected[0], (got, expected)
    if got[0] == "error":
        assert issubclass(got[1], expected[1]) or issubclass(expected[1], got[1]), (got, expected)
        return True
    return False


def source_size(*operands):
    """An upper bound on a lazy result's source: the union of the operands' live axes."""
    shapes_ = []
    for x in operands:
        if type(x) is lazybcast.BroadcastView:
            shapes_.append(x.source.shape)
        elif isinstance(x, np.ndarray):
            shapes_.append(tuple(1 if s == 0 else n for n, s in zip(x.shape, x.strides)))
    if not shapes_:
        return 1
    rank = max(len(s) for s in shapes_)
    sizes = [1] * rank
    for s in shapes_:
        for d, n in enumerate(s, rank - len(s)):
            sizes[d] = max(sizes[d], n) if n else 0
    return max(math.prod(sizes), 1)  # an empty reduction computes one cell


#: Ufuncs whose NumPy loops give other last bits for contiguous operands than for strided,
#: reversed or broadcast ones on CPUs with AVX-512 (NumPy's vector approximations take
#: contiguous data only; measured on Zen 4, NumPy 2.4: up to 3 ULP for float32 arctan2 and
#: cbrt). A view's result is computed on its source, laid out otherwise than the oracle,
#: so for these NumPy's own answer varies by that much: results are compared to within
#: LAYOUT_ULPS, NaNs, infinities and dtypes still exactly. (np.frexp: its loop for a
#: broadcast float32 operand passes a signaling NaN through, the contiguous one quiets it:
#: 0xffb5710f against 0xfff5710f, the same NaN but for its payload.)
LAYOUT_DEPENDENT = {np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sin,
                    np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.arctan2, np.sinh,
                    np.cosh, np.tanh, np.arcsinh, np.arccosh, np.arctanh, np.cbrt, np.power,
                    np.float_power, np.angle, operator.pow, np.frexp}
LAYOUT_ULPS = 4


def assert_same_array(got, expected, ulps=0):
    """Same type (view of NumPy's shape, or NumPy's scalar/array), dtype and bytes; floating
    values (and complex parts) to within ``ulps`` units in the last place if ``ulps``."""
    if isinstance(expected, np.ndarray):  # a view of NumPy's shape (0-d included)
        assert type(got) is lazybcast.BroadcastView, type(got)
        assert got.shape == expected.shape
        got = got.materialize()
    else:
        assert type(got) is type(expected), (type(got), type(expected))
        got, expected = np.asarray(got), np.asarray(expected)
    assert_same_values(got, expected, ulps)


def assert_same_values(got, expected, ulps=0):
    """Two NumPy arrays of the same dtype and shape, bit for bit; floating values (and complex
    parts) to within ``ulps`` units in the last place if ``ulps``."""
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape
    got, expected = np.ascontiguousarray(got), np.ascontiguousarray(expected)
    if got.tobytes() == expected.tobytes():
        return
    # Bit for bit (NaN payloads and signed zeros included), unless told otherwise.
    assert ulps and got.dtype.kind in "fc", "not the same bytes"
    if got.dtype.kind == "c":
        got, expected = got.view(got.real.dtype), expected.view(got.real.dtype)
    with np.errstate(invalid="ignore"):  # (a signaling NaN raises the flag when widened)
        g, e = got.astype(np.float64), expected.astype(np.float64)
    nan, finite = np.isnan(g), np.isfinite(g)
    assert np.array_equal(nan, np.isnan(e)) and np.array_equal(finite, np.isfinite(e))
    signed = nan | (e == 0)  # NumPy's loops agree on these signs whatever the layout
    assert np.array_equal(np.signbit(got)[signed], np.signbit(expected)[signed])
    assert np.array_equal(g[~finite & ~nan], e[~finite & ~nan])  # the same infinities
    ulp = np.spacing(np.maximum(abs(got[finite]), abs(expected[finite]))).astype(np.float64)
    assert (abs(g[finite] - e[finite]) <= ulps * ulp).all(), "more than %d ULP apart" % ulps


@st.composite
def tame_views(draw, dtype, max_rank=4, nan=True):
    """``(view, oracle)`` over floating data k/8 (|k| <= 128; float64 sums of them are exact)
    and, if ``nan``, sometimes one NaN; the data is reversed along a drawn axis."""
    data_shape, target, mapping, mode, axis = draw(requests(max_rank=max_rank))
    k = draw(laid_out(data_shape, np.dtype("i1")))
    x = (np.asarray(k, dtype=np.float64) / 8).astype(dtype)
    if x.ndim and draw(st.booleans()):
        x = x[::-1]
    if nan and x.size and draw(st.integers(0, 4)) == 0:
        x = x.copy()
        x.reshape(-1)[draw(st.integers(0, x.size - 1))] = np.nan
    view = call_broadcast(x, target, mapping, mode, axis)
    return view, expected_values(x, target, mapping, mode, axis)


@st.composite
def axes_for(draw, ndim, kind="tuple"):
    """An ``axis`` argument for rank ``ndim``: None, an int (maybe negative) or, if
    ``kind == "tuple"``, a tuple of distinct axes."""
    if ndim == 0:
        return draw(st.sampled_from([None, ()] if kind == "tuple" else [None]))
    choice = draw(st.sampled_from(["none", "int", "tuple"] if kind == "tuple" else
                                  ["none", "int"]))
    if choice == "none":
        return None
    if choice == "int":
        return draw(st.integers(-ndim, ndim - 1))
    picked = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return tuple(d - ndim if draw(st.booleans()) else d for d in picked)
