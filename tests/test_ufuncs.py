"""Ufuncs and Python operators on views: NumPy on the ``np.broadcast_to`` equivalents is the
oracle for values, dtypes (bit for bit) and errors; results must be lazy views whose source
is no larger than the union of the operands' live axes."""

import operator
import warnings

import numpy as np
import pytest
from _duck_strategies import (
    LAYOUT_DEPENDENT,
    LAYOUT_ULPS,
    NUMERIC,
    assert_same_array,
    assert_same_values,
    numeric,
    operand,
    operand_shapes,
    outcome,
    raised_alike,
    source_size,
    tame_views,
    views,
)
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from lazybcast import BroadcastView

UNARY = [np.negative, np.positive, np.absolute, np.sign, np.exp, np.log, np.sqrt, np.sin,
         np.square, np.reciprocal, np.floor, np.rint, np.isnan, np.isfinite, np.logical_not,
         np.invert, np.conjugate, np.signbit]

BINARY = [np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.remainder,
          np.power, np.maximum, np.fmin, np.arctan2, np.hypot, np.equal, np.less,
          np.logical_and, np.bitwise_and, np.left_shift, np.copysign, np.heaviside]

OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
             operator.mod, operator.pow, operator.and_, operator.or_, operator.xor,
             operator.lshift, operator.rshift, operator.lt, operator.le, operator.eq,
             operator.ne, operator.gt, operator.ge, divmod]


def check(got, expected, *operands, func=None):
    """``got`` equals NumPy's ``expected`` outcome, and a result of non-empty shape is lazy;
    for ``func`` in LAYOUT_DEPENDENT, floating values to within NumPy's own spread."""
    if raised_alike(got, expected):
        return
    g, e = got[1], expected[1]
    if type(e) is tuple:
        assert type(g) is tuple and len(g) == len(e)
    else:
        g, e = (g,), (e,)
    for gi, ei in zip(g, e):
        assert_same_array(gi, ei, LAYOUT_ULPS if func in LAYOUT_DEPENDENT else 0)
        if type(gi) is BroadcastView:
            assert gi.source.size <= source_size(*operands), (gi.source.shape, operands)


@given(views(), st.sampled_from(UNARY))
def test_unary_ufuncs_match_numpy(case, ufunc):
    view, oracle = case
    check(outcome(ufunc, view), outcome(ufunc, oracle), view, func=ufunc)


@given(st.data(), operand_shapes(2), st.sampled_from(BINARY + OPERATORS), numeric, numeric)
def test_binary_ufuncs_and_operators_match_numpy(data, shapes, func, dt1, dt2):
    _, (s1, s2) = shapes
    a, a_ref = data.draw(operand(s1, dt1, kinds=("view",)), label="a")
    b, b_ref = data.draw(operand(s2, dt2), label="b")
    if data.draw(st.booleans(), label="swap"):
        a, b, a_ref, b_ref = b, a, b_ref, a_ref
    check(outcome(func, a, b), outcome(func, a_ref, b_ref), a, b, func=func)


@given(st.data(), operand_shapes(3))
def test_three_operands_and_where(data, shapes):
    """np.where (through __array_function__) and a ufunc's where= mask with out=."""
    _, (s1, s2, s3) = shapes
    c, c_ref = data.draw(operand(s1, np.dtype(bool)), label="condition")
    x, x_ref = data.draw(operand(s2, np.dtype("f8"), kinds=("view",)), label="x")
    y, y_ref = data.draw(operand(s3, np.dtype("i2")), label="y")
    check(outcome(np.where, c, x, y), outcome(np.where, c_ref, x_ref, y_ref), c, x, y)
    full = np.broadcast_shapes(np.shape(c_ref), np.shape(x_ref), np.shape(y_ref))
    out1 = np.full(full, -1.5)
    out2 = out1.copy()
    got = outcome(np.add, x, y, out=out1, where=c)
    expected = outcome(np.add, x_ref, y_ref, out=out2, where=c_ref)
    assert got[0] == expected[0]
    if got[0] == "ok":
        assert got[1] is out1
        assert out1.tobytes() == out2.tobytes()


@pytest.mark.parametrize("ufunc", [np.divmod, np.modf, np.frexp])
@given(case=views(dtype=np.dtype("f4")))
def test_multiple_outputs(ufunc, case):
    view, oracle = case
    check(outcome(ufunc, view), outcome(ufunc, oracle), view, func=ufunc)


@given(views(dtype=np.dtype("f8")), st.sampled_from(NUMERIC), st.sampled_from(
    ["no", "equiv", "safe", "same_kind", "unsafe"]))
def test_dtype_and_casting_keywords(case, dtype, casting):
    """NumPy's dtypes, errors and values, but for inputs an integer dtype cannot hold: C
    leaves casting them undefined, and NumPy's vector and scalar loops give different
    integers for them (AVX-512: ``vcvttpd2udq`` saturates, the scalar cast wraps). (The
    product of inputs that fit wraps alike in every loop: compared.)"""
    view, oracle = case
    got = outcome(np.multiply, view, 3, dtype=dtype, casting=casting)
    expected = outcome(np.multiply, oracle, 3, dtype=dtype, casting=casting)
    x = np.asarray(oracle, np.float64)
    if dtype.kind in "iu" and not raised_alike(got, expected) and not (
            np.isfinite(x).all() and (x > np.iinfo(dtype).min - 1).all()
            and (x < np.iinfo(dtype).max + 1).all()):
        g, e = got[1], expected[1]
        assert type(g) is (BroadcastView if isinstance(e, np.ndarray) else type(e))
        assert g.dtype == e.dtype and g.shape == e.shape
        return
    check(got, expected, view)


@given(views(), st.sampled_from(NUMERIC), st.sampled_from([np.add, np.arctan2, np.less]))
def test_out_writes_into_the_callers_array(case, out_dtype, ufunc):
    view, oracle = case
    out = np.zeros(view.shape, out_dtype)
    ref = np.zeros(view.shape, out_dtype)
    got = outcome(ufunc, view, 2, out=out)
    expected = outcome(ufunc, oracle, 2, out=ref)
    assert got[0] == expected[0], (got, expected)
    if got[0] == "ok":
        assert got[1] is out
        assert_same_values(out, ref, LAYOUT_ULPS if ufunc in LAYOUT_DEPENDENT else 0)
    else:
        assert got[1] is expected[1]


def test_out_broadcasts_inputs_up_and_tuple_outputs():
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    out = np.empty((4, 2, 3))
    assert np.add(v, 1, out=out) is out
    assert np.array_equal(out, np.broadcast_to(np.arange(3.0) + 1, (4, 2, 3)))
    q, r = np.empty((2, 3)), np.empty((2, 3))
    got = np.divmod(v, 2, out=(q, r))
    assert got[0] is q and got[1] is r
    assert np.array_equal(q, np.broadcast_to([0.0, 0, 1], (2, 3)))
    with pytest.raises(ValueError, match="could not be broadcast|non-broadcastable"):
        np.add(v, 1, out=np.empty((3,)))


def _overlapping_outs(nbytes, shape, strides, dtype, offset):
    """Two identical outs, made with ``as_strided`` so that their items share bytes, each
    over its own zeroed buffer."""
    bufs = [bytearray(nbytes), bytearray(nbytes)]
    return bufs, [np.ndarray(shape, dtype, buffer=b, offset=offset, strides=strides)
                  for b in bufs]


def test_out_whose_items_share_bytes_is_written_as_numpy_writes_it():
    v = lazybcast.broadcast_to(np.arange(1, 5, dtype=np.int16)[:, None], (4, 5))
    for strides in ((-7, 2), (0, 2), (2, 0)):
        bufs, (mine, numpys) = _overlapping_outs(64, (4, 5), strides, np.int16, 21)
        assert np.negative(v, out=mine) is mine
        np.negative(np.asarray(v), out=numpys)
        assert bufs[0] == bufs[1], strides


def test_two_outputs_that_share_bytes_are_written_as_numpy_writes_them():
    v = lazybcast.broadcast_to(np.array([1.25, -2.5, 3.75]), (4, 3))
    mine, numpys = np.zeros((4, 3)), np.zeros((4, 3))
    np.modf(v, out=(mine, mine))
    np.modf(np.asarray(v), out=(numpys, numpys))
    np.testing.assert_array_equal(mine, numpys)
    w = lazybcast.broadcast_to(np.arange(7, 10), (4, 3))
    bufs = [np.zeros(16, np.int64), np.zeros(16, np.int64)]
    for b, x in zip(bufs, (w, np.asarray(w))):
        np.divmod(x, 5, out=(b[:12].reshape(4, 3), b[2:14].reshape(4, 3)))
    np.testing.assert_array_equal(bufs[0], bufs[1])


def test_out_view_is_read_only():
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    with pytest.raises(ValueError, match="read-only.*materialize"):
        np.add(v, 1, out=v)
    with pytest.raises(ValueError, match="read-only"):
        np.add(np.ones((2, 3)), 1, out=(v,))
    with pytest.raises(ValueError, match="read-only.*materialize"):
        np.add.at(v, [0], 1)


def test_in_place_operators_raise_and_leave_the_view_alone():
    """A view is read-only, so ``v += 1`` raises NumPy's ValueError (as on a read-only
    ndarray) rather than silently rebinding ``v``; ``v = v + 1`` builds a new lazy view."""
    data = np.arange(3)
    v = w = lazybcast.broadcast_to(data, (2, 3))
    with pytest.raises(ValueError, match="read-only"):
        v += 1
    assert v is w and np.array_equal(data, [0, 1, 2])
    v = v + 1
    assert type(v) is BroadcastView and np.array_equal(v.materialize(), [[1, 2, 3]] * 2)


def test_other_ufunc_methods_fall_back_to_numpy():
    src = np.array([[1.0], [2.0], [4.0]])
    v = lazybcast.broadcast_to(src, (3, 2))
    ref = np.broadcast_to(src, (3, 2))
    assert np.array_equal(np.add.accumulate(v), np.add.accumulate(ref))
    assert np.array_equal(np.multiply.outer(v, [1, 2]), np.multiply.outer(ref, [1, 2]))
    assert np.array_equal(np.add.reduceat(v, [0, 2]), np.add.reduceat(ref, [0, 2]))
    assert np.array_equal(np.matmul(v, np.ones(2)), ref @ np.ones(2))
    assert np.array_equal(v @ np.ones((2, 5)), ref @ np.ones((2, 5)))
    # ufunc.at with the view elsewhere than the first operand only reads it
    target = np.zeros(2)
    np.add.at(target, [0, 1], v[0])
    assert np.array_equal(target, [1.0, 1.0])


def test_shape_mismatch_is_numpys_error():
    v = lazybcast.broadcast_to(np.arange(3), (2, 3))
    with pytest.raises(ValueError) as got:
        v + np.ones(4)
    with pytest.raises(ValueError) as expected:
        np.asarray(v) + np.ones(4)
    assert str(got.value) == str(expected.value)


def test_broadcast_ndarray_operand_stays_compact():
    a = np.broadcast_to(np.arange(1000.0)[:, None], (1000, 500))  # stride 0 on axis 1
    v = lazybcast.broadcast_to(np.arange(500.0), (1000, 500))
    r = a * v
    assert type(r) is BroadcastView and r.source.shape == (1000, 500)  # the union of axes
    r = np.exp(lazybcast.broadcast_to(np.ones(7), (10**6, 7)) + np.broadcast_to(2.0, (7,)))
    assert r.source.shape == (1, 7)
    assert r.materialize()[-1, -1] == np.exp(3.0)


def test_scalars_keep_nep50_promotion():
    v = lazybcast.broadcast_to(np.array([1, 2], dtype=np.uint8), (3, 2))
    assert (v + 1).dtype == np.uint8
    assert (v + np.int64(1)).dtype == np.int64
    assert (v * 1.5).dtype == np.float64
    with pytest.raises(OverflowError):
        v + 1000  # NEP 50: a Python int that does not fit the array's dtype
    f = lazybcast.broadcast_to(np.array([1.0], dtype=np.float32), (2, 1))
    assert (f + 1.0).dtype == np.float32
    assert (f + np.float64(1.0)).dtype == np.float64


def test_zero_d_result_is_numpys_scalar():
    v = lazybcast.broadcast_to(np.float32(2.0), ())
    r = v * 3
    assert type(r) is np.float32 and r == 6.0


def test_zero_size_computes_nothing():
    """No element of an empty result is computed (no spurious warnings)."""
    v = lazybcast.broadcast_to(np.array([0]), (0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = np.floor_divide(v, 0)
    assert r.shape == (0, 1) and r.source.size == 0


def test_comparisons_and_datetime():
    days = np.array(["2024-01-01", "2024-06-01"], dtype="datetime64[D]")
    v = lazybcast.broadcast_to(days, (1000, 2))
    r = v > np.datetime64("2024-03-01")
    assert type(r) is BroadcastView and r.source.tolist() == [[False, True]]
    assert (v - days[0]).dtype == np.dtype("m8[D]")
    assert np.array_equal((v == days).materialize(), np.ones((1000, 2), bool))


def test_equality_with_incomparable_types_is_numpys():
    v = lazybcast.broadcast_to(np.arange(3), (2, 3))
    assert np.array_equal(v == "a", np.asarray(v) == "a")
    assert np.array_equal(v != None, np.asarray(v) != None)  # noqa: E711 - elementwise
    with pytest.raises(TypeError, match="unhashable"):
        hash(v)


class _OptOut:
    __array_ufunc__ = None

    def __radd__(self, other):
        return "radd"

    def __rmul__(self, other):
        return "rmul"


class _Duck:
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return ("duck", ufunc.__name__)


def test_deferring_to_other_types():
    v = lazybcast.broadcast_to(np.arange(3), (2, 3))
    assert v + _OptOut() == "radd"
    assert v * _OptOut() == "rmul"
    assert v + _Duck() == ("duck", "add")
    assert np.multiply(_Duck(), v) == ("duck", "multiply")


class _HighPriority:
    """No ``__array_ufunc__``, a higher ``__array_priority__`` (scipy.sparse's and torch's
    kind): NumPy's forward operators and comparisons give it its reflected method."""
    __array_priority__ = 10.1

    def __init__(self, priority=10.1):
        self.__array_priority__ = priority

    def _reflected(name):
        return lambda self, other: (name, type(other).__name__, np.shape(other))

    for _name in ("radd", "rsub", "rmul", "rtruediv", "rfloordiv", "rmod", "rpow", "rmatmul",
                  "rlshift", "rrshift", "rand", "ror", "rxor", "rdivmod"):
        locals()[f"__{_name}__"] = _reflected(_name)
    __lt__, __gt__ = _reflected("lt"), _reflected("gt")
    __le__, __ge__ = _reflected("le"), _reflected("ge")
    __eq__, __ne__ = _reflected("eq"), _reflected("ne")
    __hash__ = None
    del _name, _reflected


@pytest.mark.parametrize("op", OPERATORS + [operator.matmul], ids=lambda op: op.__name__)
@pytest.mark.parametrize("priority", [10.1, 0.0, "high", "10"], ids=repr)
def test_operators_defer_by_array_priority_as_numpys(op, priority):
    """``view op x`` for an ``x`` without ``__array_ufunc__``: ``x``'s reflected method, given
    the zero-copy ndarray, where NumPy's ``ndarray op x`` defers to it (an
    ``__array_priority__`` above an ndarray's: a number, not a string that reads as one),
    NumPy's loop otherwise; ``x op view`` never defers."""
    src = np.arange(1, 4)
    n, v = np.broadcast_to(src, (2, 3)), lazybcast.broadcast_to(src, (2, 3))
    for args, ref in (((v, _HighPriority(priority)), (n, _HighPriority(priority))),
                      ((_HighPriority(priority), v), (_HighPriority(priority), n))):
        got, expected = outcome(op, *args), outcome(op, *ref)
        if priority == 10.1 and args[0] is v:
            assert expected == ("ok", (expected[1][0], "ndarray", (2, 3))), expected
        if raised_alike(got, expected):
            continue  # (both raised: NumPy's object loop, or nothing took the operands)
        if type(expected[1]) is tuple and args[0] is v:  # x's reflected method, given ndarray
            assert got == expected
        elif type(expected[1]) is tuple:  # x's own comparison, given the view (or NumPy's)
            assert got[1][0] == expected[1][0] and got[1][2] == expected[1][2], (got, expected)
        else:  # NumPy's object loop, element by element, and the same on the view
            assert np.asarray(got[1]).tolist() == expected[1].tolist()


def test_array_like_operands():
    v = lazybcast.broadcast_to(np.arange(3), (2, 3))
    r = v + [10, 20, 30]
    assert type(r) is BroadcastView and r.source.shape == (1, 3)
    assert r.materialize().tolist() == [[10, 21, 32]] * 2
    assert (v == (0, 1, 2)).all()


def test_object_dtype():
    v = lazybcast.broadcast_to(np.array([1, "a"], dtype=object), (2, 2))
    r = v * 2
    assert r.dtype == object and r.materialize().tolist() == [[2, "aa"]] * 2


def test_other_duck_arrays_get_the_plain_array():
    """dask does not know a view as a chunk type: the view steps aside as np.asarray(view),
    so mixing them works as it did before the protocols."""
    da = pytest.importorskip("dask.array", reason="dask is an optional test dependency")
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    x = da.from_array(np.ones((2, 3)), chunks=(1, 3))
    for r in (v + x, x + v, np.add(x, v), np.concatenate([v, x])):
        assert isinstance(r, da.Array)
    np.testing.assert_array_equal((v + x).compute(), np.asarray(v) + 1)


_MASKED = np.ma.array([10.0, 10.0, 10.0], mask=[True, False, False])
_SUBCLASS_OPS = [
    lambda a, m: a + m, lambda a, m: m + a, lambda a, m: a - m, lambda a, m: m - a,
    lambda a, m: a * m, lambda a, m: a ** m, lambda a, m: divmod(a, m)[0],
    lambda a, m: a == m, lambda a, m: a != m, lambda a, m: a < m,
    lambda a, m: np.add(m, a), lambda a, m: np.maximum(a, m), lambda a, m: np.add(a, m),
]


@pytest.mark.parametrize("op", _SUBCLASS_OPS)
@pytest.mark.parametrize("kind", ["masked", "matrix"])
def test_ndarray_subclasses_keep_numpys_type_and_mask(op, kind):
    """An ndarray subclass among the operands (a masked array, np.matrix) gets what NumPy
    gives it with np.broadcast_to: its own type back, with the mask, masked data included
    (a masked array's mask was dropped: the view computed on the plain data)."""
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    n = np.broadcast_to(np.arange(3.0), (2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)  # np.matrix's
        other = _MASKED if kind == "masked" else np.matrix([[1.0, 2.0, 3.0]])
        want = outcome(op, n, other)
        got = outcome(op, v, other)
    if raised_alike(got, want):
        return
    got, want = got[1], want[1]
    assert type(got) is type(want)
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_memmap_operands_stay_lazy(tmp_path):
    """np.memmap is the one ndarray subclass NumPy's ufuncs return plain arrays for: the
    result stays a lazy view, with NumPy's values."""
    m = np.memmap(tmp_path / "m.bin", dtype=np.float64, mode="w+", shape=(1, 3))
    m[:] = [1.0, 2.0, 3.0]
    v = lazybcast.broadcast_to(np.arange(3.0), (1000, 3))
    r = v + m
    assert type(r) is BroadcastView and r.source.shape == (1, 3)
    np.testing.assert_array_equal(np.asarray(r), np.asarray(v) + np.asarray(m))


# -- review fixes (F2, F6) ---------------------------------------------------------------------


def test_three_argument_pow_raises_as_numpy():
    src = np.array([5])
    with pytest.raises(TypeError):
        pow(np.broadcast_to(src, (3, 1)), 2, 3)
    with pytest.raises(TypeError):
        pow(lazybcast.broadcast_to(src, (3, 1)), 2, 3)


#: Exponents NumPy's ``ndarray ** x`` computes by other ufuncs for some dtypes and versions
#: (np.square, np.sqrt, np.reciprocal, np.positive, ones), and neighbours that it does not.
_EXPONENTS = [2, -1, 0.5, 1, 0, 3, 2.0, -1.0, 1.0, 0.0, 1.5, True, 2 + 0j, np.int64(2),
              np.int8(-1), np.float64(0.5), np.float32(2.0), np.array(2), np.array(0.5)]


@pytest.mark.parametrize("exponent", _EXPONENTS, ids=repr)
@given(case=views())
def test_power_operator_with_a_scalar_exponent_is_ndarrays(exponent, case):
    """``view ** x`` is ndarray's ``**``, not always ``np.power``: NumPy 2.4 squares any dtype
    for ``** 2`` (``bool ** 2`` is int8 where ``np.power`` gives int64); older versions had
    other shortcuts. The operator on the ``np.broadcast_to`` equivalent is the oracle (values
    to within NumPy's own spread between layouts: ``np.power`` is one of those functions),
    so this holds for every NumPy version CI runs."""
    view, oracle = case
    check(outcome(operator.pow, view, exponent), outcome(operator.pow, oracle, exponent), view,
          func=np.power)
    # A 0-d view as the exponent is its 0-d source, as np.broadcast_to's 0-d array is.
    zero_d = lazybcast.broadcast_to(np.asarray(exponent), ())
    check(outcome(operator.pow, view, zero_d),
          outcome(operator.pow, oracle, np.broadcast_to(np.asarray(exponent), ())), view,
          func=np.power)


class _OptOutInt(int):
    """An int that opted out of ufuncs: NumPy's ``arr ** x`` defers to its ``__rpow__``."""
    __array_ufunc__ = None

    def __rpow__(self, other):
        return "rpow", type(other).__name__, np.shape(other)


def test_power_operator_keeps_the_deferral_of_a_scalar_subclass():
    """``view ** x`` of an int subclass that opted out of ufuncs calls its ``__rpow__`` with
    the view, as NumPy's ``**`` calls it with the whole array (not with the source)."""
    src = np.arange(3.0)
    assert np.broadcast_to(src, (4, 3)) ** _OptOutInt(2) == ("rpow", "ndarray", (4, 3))
    assert lazybcast.broadcast_to(src, (4, 3)) ** _OptOutInt(2) == ("rpow", "BroadcastView",
                                                                  (4, 3))


@pytest.mark.parametrize("exponent", _EXPONENTS, ids=repr)
@pytest.mark.parametrize("dtype", ["?", "i1", "u8", "f2", "f4", "f8", "c8", "c16"])
def test_power_operator_shortcuts_are_numpys_bit_for_bit(dtype, exponent):
    """On contiguous rows (one loop for both sides: no spread between layouts) the values
    are NumPy's bit for bit: ``c ** 0.5`` is ``np.sqrt``, one ULP from ``np.power``."""
    src = (np.arange(1, 40) * 0.7 + (1j if dtype[0] == "c" else 0)).astype(dtype)
    view = lazybcast.broadcast_to(src, (3, src.size))
    check(outcome(operator.pow, view, exponent),
          outcome(operator.pow, np.broadcast_to(src, view.shape), exponent), view)


@pytest.mark.parametrize("op", ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow",
                                "ilshift", "irshift", "iand", "ior", "ixor", "imatmul"])
def test_in_place_operators_raise_as_numpy(op):
    """``v += 1`` raises NumPy's read-only ValueError instead of rebinding ``v``."""
    src = np.arange(1, 4)
    other = np.ones((3, 3), dtype=int) if op == "imatmul" else 1
    n, v = np.broadcast_to(src, (3, 3)), lazybcast.broadcast_to(src, (3, 3))
    with pytest.raises(ValueError, match="output array is read-only"):
        getattr(operator, op)(n, other)
    with pytest.raises(ValueError, match="output array is read-only.*materialize"):
        getattr(operator, op)(v, other)


@given(data=st.data())
@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.subtract, np.maximum, np.less,
                                   np.divmod, np.arctan2, np.left_shift])
def test_outer_is_elementwise_on_the_sources(ufunc, data):
    """``ufunc.outer`` of views and ndarrays (and ``np.outer`` of vectors): NumPy's values,
    dtypes and errors, as a view over the operands' sources. Values are k/8 (no overflow):
    NumPy's own complex multiply gives another inf or NaN on overflow depending on the loop
    its operands' shapes select (``x * x`` of shape (1,) against ``np.multiply.outer(x, x)``),
    and the compact operands' shapes are not the full ones'."""
    dtype = data.draw(numeric)
    a, a_ref = data.draw(tame_views(dtype, max_rank=2, nan=False))
    if data.draw(st.booleans()):
        b, b_ref = data.draw(tame_views(data.draw(numeric), max_rank=2, nan=False))
    else:
        b = b_ref = np.asarray(data.draw(tame_views(dtype, max_rank=2, nan=False))[1]).copy()
    spread = a[(Ellipsis,) + (None,) * b.ndim] if b.ndim else a  # (a's axes, then b's)
    check(outcome(ufunc.outer, a, b), outcome(ufunc.outer, a_ref, b_ref), spread, b, func=ufunc)
    if a.ndim == 1 and b.ndim == 1:
        check(outcome(np.outer, a, b), outcome(np.outer, a_ref, b_ref), spread, b)
    # A Python scalar is a strong 0-d array in ufunc.outer (unlike in ufunc(a, b)): NumPy's.
    got, expected = outcome(ufunc.outer, a, 2), outcome(ufunc.outer, a_ref, 2)
    assert got[0] == expected[0]
    if got[0] == "ok" and ufunc is not np.divmod:
        assert np.asarray(got[1]).dtype == np.asarray(expected[1]).dtype


def test_outer_past_64_axes_is_numpys_error():
    a = lazybcast.broadcast_to(np.ones((1,) * 40), (1,) * 39 + (2,))
    b = np.ones((1,) * 30)
    with pytest.raises(ValueError, match="64"):
        np.add.outer(a, b)


def test_layout_tolerance_is_a_few_ulps_and_nothing_else():
    """The oracle's allowance for NumPy's layout-dependent loops: floating values within
    LAYOUT_ULPS of each other pass; more, a NaN for a number or another infinity do not,
    and other ufuncs still compare bit for bit."""
    x = np.array([1.0, -2.5, np.inf, np.nan], np.float32)
    near = x.copy()
    near[:2] = np.nextafter(np.nextafter(x[:2], np.inf), np.inf)  # 2 ULP up
    assert_same_values(near, x, LAYOUT_ULPS)
    with pytest.raises(AssertionError):
        assert_same_values(near, x)
    far = x.copy()
    far[0] += 8 * np.spacing(far[0])
    for bad in (far, np.array([1.0, -2.5, -np.inf, np.nan], np.float32),
                np.array([1.0, np.nan, np.inf, np.nan], np.float32)):
        with pytest.raises(AssertionError):
            assert_same_values(bad, x, LAYOUT_ULPS)
    for bad in (np.float32(-0.0), -np.float32(np.nan)):  # another sign of zero or NaN
        with pytest.raises(AssertionError):
            assert_same_values(np.array([bad]), np.array([abs(bad)]), LAYOUT_ULPS)
    c, c_near = np.zeros(4, np.complex64), np.zeros(4, np.complex64)
    c.imag, c_near.imag = x, near
    assert_same_values(c_near, c, LAYOUT_ULPS)
    with pytest.raises(AssertionError):
        assert_same_values(np.array([1, 2]), np.array([1, 3]), LAYOUT_ULPS)


@pytest.mark.parametrize("method", ["conj", "conjugate"])
@pytest.mark.parametrize("source", [np.array([True, False]), np.array([1.5, -2.0], "f2"),
                                    np.array([3, 4], "u1"), np.array([1 + 2j, 3j]),
                                    np.array([1, "a"], dtype=object), np.array(["a", "b"]),
                                    np.array([1, 2], "m8[s]")],
                         ids=lambda a: a.dtype.str)
def test_conj_method_is_ndarrays(method, source):
    """``ndarray.conj()`` keeps a real dtype (bool stays bool, where ``np.conjugate`` gives
    int8), conjugates complex and object values, and refuses other dtypes."""
    view = lazybcast.broadcast_to(source, (3, 2))
    got = outcome(getattr(view, method))
    want = outcome(getattr(np.broadcast_to(source, (3, 2)), method))
    if not raised_alike(got, want):
        assert np.asarray(got[1]).dtype == want[1].dtype
        assert np.asarray(got[1]).tolist() == want[1].tolist()


_PAIR = np.dtype([("a", "i4"), ("b", "f8")])


@pytest.mark.parametrize("other", [
    None, 1, "x", object(), [1, 2], np.zeros(2, "i4"),
    np.array([(1, 0.0), (5, 0.0)], _PAIR), np.array([(1, 0.0)], _PAIR)[0],
    np.zeros(2, [("a", "i4"), ("b", "f4")]), np.zeros(2, [("c", "i4"), ("b", "f8")]),
])
@pytest.mark.parametrize("op", [operator.eq, operator.ne])
def test_structured_comparisons_are_ndarrays(op, other):
    """``==`` and ``!=`` of a structured view answer as ndarray's operators do: field by field
    against structured operands, TypeError against anything else (``None`` and plain objects
    gave all False / all True, as ``np.equal`` compares them as objects)."""
    source = np.array([(1, 0.0), (2, 0.0)], _PAIR)
    got = outcome(op, lazybcast.broadcast_to(source, (3, 2)), other)
    want = outcome(op, np.broadcast_to(source, (3, 2)), other)
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        np.testing.assert_array_equal(np.asarray(got[1]), want[1])
    else:
        assert got[1] is want[1]


class _Priority:
    """An array-like that NumPy's operators defer to (``__array_priority__``)."""

    __array_priority__ = 100

    def __array__(self, dtype=None, copy=None):
        return np.array([(1, 0.0), (2, 0.0)], _PAIR)


class _OwnUfuncs:
    """An object with its own ``__array_ufunc__`` that handles nothing."""

    def __array_ufunc__(self, *args, **kwargs):
        return NotImplemented


@pytest.mark.parametrize("make", [
    lambda s: np.ma.array(s, mask=[(1, 1), (0, 0)]), lambda s: s.view(np.recarray),
    lambda s: _Priority(), lambda s: _OwnUfuncs(),
])
@pytest.mark.parametrize("op", [operator.eq, operator.ne])
def test_structured_comparisons_keep_numpys_deferrals(op, make):
    """A masked array (its mask), a recarray, an object NumPy defers to and one with its own
    ``__array_ufunc__`` get what ndarray's operator gives them (the structured path took
    them as plain operands: the mask was lost, and the last two gave TypeError or a bare
    bool)."""
    source = np.array([(1, 0.0), (2, 0.0)], _PAIR)
    got = outcome(op, lazybcast.broadcast_to(source, (3, 2)), make(source))
    want = outcome(op, np.broadcast_to(source, (3, 2)), make(source))
    assert got[0] == want[0], (got, want)
    if got[0] == "error":
        assert got[1] is want[1]
        return
    assert type(got[1]) is type(want[1])
    np.testing.assert_array_equal(np.ma.getdata(got[1]), np.ma.getdata(want[1]))
    assert np.array_equal(np.ma.getmaskarray(got[1]), np.ma.getmaskarray(want[1]))

