"""Reductions of views at source cost, against NumPy on the ``np.broadcast_to`` equivalents.

Integer, bool, min/max/any/all and arg results must equal NumPy's exactly (wrapping on
overflow included); floating sums, products and moments must be at least as accurate as
NumPy's against an exact reference (within one unit in the last place). Results of non-empty
shape are views no larger than the source.
"""

import math
import re
import warnings

import numpy as np
import pytest
from _core_strategies import laid_out
from _duck_strategies import (
    NUMERIC,
    assert_same_array,
    axes_for,
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

EXACT = ["sum", "prod", "min", "max", "any", "all"]
INTEGERS = [d for d in NUMERIC if d.kind in "biu"]


def check(got, expected, view):
    assert got[0] == expected[0], (got, expected)
    if got[0] == "error":
        assert got[1] is expected[1], (got, expected)
        return
    assert_same_array(got[1], expected[1])
    if type(got[1]) is BroadcastView:
        assert got[1].source.size <= max(view.source.size, 1)


def call(name, a, *args, **kwargs):
    return outcome(getattr(np, name), a, *args, **kwargs)


@given(st.data(), st.sampled_from(EXACT), st.booleans(),
       st.sampled_from([None] + INTEGERS))
def test_integer_and_bool_reductions_are_exact(data, name, keepdims, dtype):
    view, oracle = data.draw(views(dtype=data.draw(st.sampled_from(INTEGERS))), label="view")
    axis = data.draw(axes_for(view.ndim), label="axis")
    kwargs = {"axis": axis, "keepdims": keepdims}
    if name in ("sum", "prod"):
        kwargs["dtype"] = dtype
    check(call(name, view, **kwargs), call(name, oracle, **kwargs), view)
    # the method and ufunc.reduce agree with the function
    check(outcome(getattr(view, name), **kwargs), call(name, oracle, **kwargs), view)


@given(st.data(), st.sampled_from(["min", "max", "any", "all"]), st.booleans())
def test_order_reductions_are_exact_for_every_dtype(data, name, keepdims):
    """NaN, signed zeros and infinities included (the data is random bytes)."""
    view, oracle = data.draw(views(), label="view")
    axis = data.draw(axes_for(view.ndim), label="axis")
    check(call(name, view, axis=axis, keepdims=keepdims),
          call(name, oracle, axis=axis, keepdims=keepdims), view)


@given(st.data(), st.sampled_from(["argmin", "argmax"]), st.booleans())
def test_arg_reductions_are_numpys_first_occurrence(data, name, keepdims):
    view, oracle = data.draw(views(), label="view")
    axis = data.draw(axes_for(view.ndim, kind="int"), label="axis")
    check(call(name, view, axis=axis, keepdims=keepdims),
          call(name, oracle, axis=axis, keepdims=keepdims), view)


@given(st.data(), st.sampled_from([np.add, np.multiply, np.minimum, np.maximum,
                                   np.logical_and, np.logical_or, np.bitwise_or, np.gcd,
                                   np.lcm, np.bitwise_xor]))
def test_ufunc_reduce(data, ufunc):
    view, oracle = data.draw(views(dtype=data.draw(st.sampled_from(INTEGERS))), label="view")
    axis = data.draw(st.one_of(st.just(0), axes_for(view.ndim)), label="axis")
    check(outcome(ufunc.reduce, view, axis=axis), outcome(ufunc.reduce, oracle, axis=axis),
          view)


@pytest.mark.parametrize("ufunc", [np.gcd, np.lcm])
@pytest.mark.parametrize("initial", [None, -5, 4])
@pytest.mark.parametrize("source, shape, axis", [
    ([-6, 4], (3, 2), 0), ([-6, 4], (1, 2), 0), ([[-6], [4]], (2, 3), 1),
    ([[-6], [-4]], (2, 3), None), ([-6], (3,), None), ([-6], (1,), None), ([[-6, 4]], (5, 2), 0),
])
def test_gcd_and_lcm_of_a_repeated_negative_value(ufunc, initial, source, shape, axis):
    """gcd(a, a) == lcm(a, a) == |a|: a negative value repeated along the reduced axis gives
    its absolute value, as NumPy's reduction of the repeats does (it gave the value)."""
    kwargs = {} if initial is None else {"initial": initial}
    source = np.array(source, dtype=np.int64)
    view = lazybcast.broadcast_to(source, shape)
    check(outcome(ufunc.reduce, view, axis=axis, **kwargs),
          outcome(ufunc.reduce, np.broadcast_to(source, shape), axis=axis, **kwargs), view)


@pytest.mark.skipif(not hasattr(np.dtypes, "StringDType"), reason="NumPy 2.0's StringDType")
@pytest.mark.parametrize("axis", [0, 1, None])
def test_initial_comes_first_in_a_reduction_that_does_not_commute(axis):
    """``np.add.reduce(strings, initial="X")`` starts from "X", as NumPy's does (it was
    appended last)."""
    s = np.array(["a", "bc"], dtype=np.dtypes.StringDType())
    got = outcome(np.add.reduce, lazybcast.broadcast_to(s, (3, 2)), axis=axis, initial="X")
    want = outcome(np.add.reduce, np.broadcast_to(s, (3, 2)), axis=axis, initial="X")
    if not raised_alike(got, want):
        assert np.asarray(got[1]).tolist() == np.asarray(want[1]).tolist()


@pytest.mark.parametrize("ufunc", [np.bitwise_xor, np.bitwise_or, np.add, np.multiply])
@pytest.mark.parametrize("source_dtype", ["?", "i1", "u2", "f8"])
@pytest.mark.parametrize("dtype, out_dtype", [("i8", "f8"), ("f8", "i8"), ("f4", "i2"),
                                              (None, "i1"), (None, "f4")])
@pytest.mark.parametrize("initial", [None, -3, 0.5, 1.5])
@pytest.mark.parametrize("axis", [0, 1, None, ()])
def test_a_loop_in_another_dtype_than_outs(ufunc, source_dtype, dtype, out_dtype, initial,
                                           axis):
    """An ``out=`` of another dtype than NumPy's loop (``dtype=``, or a wider source: float64
    values summed into an int8 out are added in float64): NumPy writes ``initial`` into out
    (in out's dtype), joins the values with it in the loop's dtype and casts the result into
    out. (A float out raised TypeError for bitwise operations; a float source repeated along
    the axis was cast into an int out before its sum was scaled: 2 x 0.5 gave 0.)"""
    source = (np.arange(3).reshape(3, 1) * 3 - 2).astype(source_dtype) / (
        2 if source_dtype == "f8" else 1)
    view = lazybcast.broadcast_to(source, (3, 4))
    shape = {0: (4,), 1: (3,), None: (), (): (3, 4)}[axis]
    kwargs = {"axis": axis, "dtype": dtype} | ({} if initial is None else {"initial": initial})
    got_out, want_out = np.zeros(shape, out_dtype), np.zeros(shape, out_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        got = outcome(ufunc.reduce, view, out=got_out, **kwargs)
        want = outcome(ufunc.reduce, np.broadcast_to(source, (3, 4)), out=want_out, **kwargs)
    if not raised_alike(got, want):
        np.testing.assert_array_equal(got_out, want_out)
        assert got[1] is got_out


# -- floating results: as accurate as NumPy's ------------------------------------------------------


def _ulp(x, dtype):
    real = np.finfo(dtype).dtype
    with np.errstate(invalid="ignore", over="ignore"):
        return np.spacing(np.abs(np.asarray(x)).astype(real)).astype(np.float64)


def _as_accurate(got, expected, exact, dtype):
    """``got`` is no further from ``exact`` than NumPy's ``expected`` plus one ulp (NaN where
    NumPy has NaN)."""
    got = np.asarray(got).astype(np.complex128 if dtype.kind == "c" else np.float64)
    expected = np.asarray(expected).astype(got.dtype)
    assert got.shape == expected.shape
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    ok = ~nan & np.isfinite(expected)
    assert np.array_equal(got[~ok & ~nan], expected[~ok & ~nan])  # the same infinities
    with np.errstate(invalid="ignore"):
        err_got = np.abs(got - exact)[ok]
        err_np = np.abs(expected - exact)[ok]
    slack = _ulp(exact, dtype)[ok]
    assert np.all(err_got <= err_np + slack), (got, expected, exact)


FLOATS = [np.dtype(d) for d in ("f2", "f4", "f8", "c8", "c16")]


@given(st.data(), st.sampled_from(FLOATS), st.sampled_from(["sum", "mean"]), st.booleans())
def test_float_sum_and_mean_at_least_as_accurate(data, dtype, name, keepdims):
    view, oracle = data.draw(tame_views(dtype), label="view")
    axis = data.draw(axes_for(view.ndim), label="axis")
    got = call(name, view, axis=axis, keepdims=keepdims)
    expected = call(name, oracle, axis=axis, keepdims=keepdims)
    assert got[0] == expected[0], (got, expected)
    if got[0] == "error":
        return
    assert type(got[1]) is (BroadcastView if np.ndim(expected[1]) else type(expected[1]))
    assert np.asarray(got[1]).dtype == np.asarray(expected[1]).dtype
    # exact: float64 sums of k/8 values are exact (and the count divides once)
    wide = oracle.astype(np.complex128 if dtype.kind == "c" else np.float64)
    exact = getattr(np, name)(wide, axis=axis, keepdims=keepdims)
    _as_accurate(got[1], expected[1], exact, np.asarray(expected[1]).dtype)


@given(st.data(), st.sampled_from(FLOATS), st.sampled_from(["var", "std"]),
       st.sampled_from([0, 1, 2]))
def test_float_moments_at_least_as_accurate(data, dtype, name, ddof):
    view, oracle = data.draw(tame_views(dtype), label="view")
    axis = data.draw(axes_for(view.ndim), label="axis")
    got = call(name, view, axis=axis, ddof=ddof)
    expected = call(name, oracle, axis=axis, ddof=ddof)
    assert got[0] == expected[0], (got, expected)  # "Degrees of freedom <= 0" alike
    if got[0] == "error":
        return
    assert np.asarray(got[1]).dtype == np.asarray(expected[1]).dtype
    wide = oracle.astype(np.clongdouble if dtype.kind == "c" else np.longdouble)
    exact = getattr(np, name)(wide, axis=axis, ddof=ddof).astype(
        np.complex128 if dtype.kind == "c" else np.float64)
    _as_accurate(got[1], expected[1], exact, np.asarray(expected[1]).real.dtype)


@given(st.data(), st.sampled_from([np.dtype("f4"), np.dtype("f8")]))
def test_float_prod_close_to_numpy(data, dtype):
    view, oracle = data.draw(tame_views(dtype, nan=False), label="view")
    axis = data.draw(axes_for(view.ndim), label="axis")
    got = call("prod", view, axis=axis)
    expected = call("prod", oracle, axis=axis)
    assert got[0] == expected[0]
    if got[0] == "ok":
        g, e = np.asarray(got[1]), np.asarray(expected[1])
        assert g.dtype == e.dtype
        tiny = np.finfo(dtype).tiny
        normal = np.isfinite(e) & (np.abs(e) > tiny / np.finfo(dtype).eps)
        assert np.allclose(g[normal], e[normal], rtol=8 * max(view.size, 1) * np.finfo(dtype).eps)
        assert np.array_equal(np.isinf(g) & (np.abs(e) > 1), np.isinf(e))


# -- keyword arguments -----------------------------------------------------------------------


def test_lazy_result_keeps_the_repetition():
    v = lazybcast.broadcast_to(np.arange(4.0), (1000, 4))
    r = v.sum(axis=1)
    assert type(r) is BroadcastView and r.shape == (1000,) and r.source.shape == (1,)
    assert float(r.source[0]) == 6.0
    r = v.mean(axis=1, keepdims=True)
    assert r.shape == (1000, 1) and r.source.shape == (1, 1)
    assert type(v.sum()) is np.float64 and v.sum() == 6000.0
    assert type(v.sum(keepdims=True)) is BroadcastView


def test_integer_overflow_wraps_as_numpy():
    src = np.array([2**62 + 3, -7], dtype=np.int64)
    v = lazybcast.broadcast_to(src, (2**40, 2))  # 8.8 TB logical
    exact = (2**40 * (2**62 + 3 - 7)) % 2**64
    assert int(v.sum()) % 2**64 == exact
    u = lazybcast.broadcast_to(np.array([3], dtype=np.uint8), (1000, 1))
    assert v.dtype == np.int64 and int(u.prod(dtype=np.uint8)) == pow(3, 1000, 256)
    assert int(u.sum(dtype=np.uint8)) == 3000 % 256
    assert u.prod(dtype=np.uint8) == np.prod(np.asarray(u), dtype=np.uint8)


def test_huge_float_reductions_stay_cheap_and_exact_enough():
    v = lazybcast.broadcast_to(np.array([0.1, 0.2, 0.3]), (10**9, 3))
    assert math.isclose(float(v.sum()), 0.6 * 10**9, rel_tol=1e-15)
    assert math.isclose(float(v.mean()), 0.2, rel_tol=1e-15)
    assert math.isclose(float(v.var(ddof=1)), 0.02 / 3 * 3e9 / (3e9 - 1), rel_tol=1e-14)
    assert v.argmax() == 2 and v.argmin(axis=0).shape == (3,)


def test_out_argument():
    src = np.arange(6.0).reshape(2, 1, 3)
    v = lazybcast.broadcast_to(src, (2, 5, 3))
    ref = np.broadcast_to(src, (2, 5, 3))
    for name, kwargs in (("sum", {"axis": 1}), ("mean", {"axis": (0, 2)}),
                         ("max", {"axis": 2}), ("std", {"axis": 1, "ddof": 1}),
                         ("argmax", {"axis": 1})):
        expected = getattr(np, name)(ref, **kwargs)
        out = np.empty(expected.shape, expected.dtype)
        assert getattr(np, name)(v, out=out, **kwargs) is out
        np.testing.assert_allclose(out, expected, rtol=1e-15)
    out = np.empty((2, 3), np.float32)  # another dtype: NumPy's casting
    assert v.sum(axis=1, out=out) is out and out.dtype == np.float32
    assert np.array_equal(out, ref.sum(axis=1))
    with pytest.raises(ValueError):
        v.sum(axis=1, out=np.empty((3, 3)))
    with pytest.raises(ValueError, match="read-only"):
        v.sum(axis=1, out=lazybcast.broadcast_to(np.zeros(3), (2, 3)))
    out = np.empty((2, 3))
    assert np.add.reduce(v, axis=1, out=out) is out


@pytest.mark.parametrize("name", ["mean", "var", "nanmean", "nanvar"])
@pytest.mark.parametrize("out_dtype", ["u1", "i2", "i8", "?"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_moments_into_an_integer_out_are_numpys(name, out_dtype, axis):
    """NumPy sums into an integer ``out`` before it divides, so the sum wraps there: the mean
    of 253s repeated into a uint8 out is 41, the variance of these values into an int16 out
    negative. Such an out gets NumPy's values (it got the float result cast once)."""
    src = np.array([[0, 3, 250], [253, 253, 253]], np.uint8)
    shape = (2, 3)
    view, ref = lazybcast.broadcast_to(src[:, :1], shape), np.broadcast_to(src[:, :1], shape)
    view2, ref2 = lazybcast.broadcast_to(src[:1], shape), np.broadcast_to(src[:1], shape)
    for v, r in ((view, ref), (view2, ref2)):
        oshape = {None: (), 0: (3,), 1: (2,)}[axis]
        got_out, want_out = np.full(oshape, 7, out_dtype), np.full(oshape, 7, out_dtype)
        got = outcome(getattr(np, name), v, axis=axis, out=got_out)
        want = outcome(getattr(np, name), r, axis=axis, out=want_out)
        if not raised_alike(got, want):
            np.testing.assert_array_equal(got_out, want_out)
            assert got[1] is got_out


@pytest.mark.parametrize("case", [
    ("mean", np.array([200], np.uint8), {"dtype": np.uint8}, "f8"),  # sums wrap in uint8
    ("mean", np.array([200], np.uint8), {"dtype": bool}, "f8"),
    ("mean", np.array([1.5, 4.0], np.float32), {}, "m8[s]"),  # NumPy refuses these outs
    ("var", np.array([1.5, 4.0], np.float32), {}, "U5"),
    ("mean", np.array([1.5 + 1j], np.complex64), {}, "f8"),  # a complex mean, a real out
])
def test_moments_into_outs_numpy_computes_in_or_refuses(case):
    name, src, kwargs, out_dtype = case
    got, want = _both(getattr(np, name), src, (1000, src.size), out=np.zeros((), out_dtype),
                      **kwargs)
    if not raised_alike(got, want):
        assert got[1].dtype == want[1].dtype
        np.testing.assert_array_equal(got[1], want[1])


def test_out_whose_items_share_bytes_is_written_as_numpy_writes_it():
    """An ``as_strided`` out whose items share bytes: NumPy's own reduction writes it."""
    v = lazybcast.broadcast_to(np.arange(1.0, 4.0)[None, :], (5, 3))
    for name in ("sum", "max", "mean", "argmax"):
        dtype = np.intp if name == "argmax" else np.float64
        bufs = [bytearray(8), bytearray(8)]
        mine, numpys = (np.ndarray((3,), dtype, buffer=b, strides=(0,)) for b in bufs)
        assert getattr(np, name)(v, axis=0, out=mine) is mine
        getattr(np, name)(np.asarray(v), axis=0, out=numpys)
        assert bufs[0] == bufs[1], name


def test_where_and_initial():
    src = np.array([[1, 5, 2]])
    v = lazybcast.broadcast_to(src, (4, 3))
    ref = np.broadcast_to(src, (4, 3))
    mask = np.array([True, False, True])
    assert np.array_equal(v.sum(axis=0, where=mask), ref.sum(axis=0, where=mask))
    assert v.max(where=mask, initial=-1) == ref.max(where=mask, initial=-1)
    assert np.mean(v, where=mask) == np.mean(ref, where=mask)
    assert v.sum(initial=10) == ref.sum(initial=10) == 42
    assert v.prod(axis=0, initial=2).materialize().tolist() == [2, 2 * 5**4, 2 * 2**4]
    empty = lazybcast.broadcast_to(src, (0, 3))
    assert empty.max(axis=0, initial=7).materialize().tolist() == [7, 7, 7]
    with pytest.raises(ValueError, match="zero-size array"):
        empty.max(axis=0)
    assert empty.sum() == 0 and empty.prod() == 1
    assert empty.any() == np.False_ and empty.all() == np.True_


# -- where= masks that repeat with the view: reduced on their joint compact shape ------------------


@st.composite
def masks(draw, shape):
    """``(mask, oracle)``: a boolean ``where=`` for a view of ``shape`` (trailing axes, any cut
    to 1), given as an ndarray with drawn strides (stride 0 too), a view, a list or a Python
    bool or NumPy bool; the oracle is NumPy's plain array of it (the bool itself)."""
    k = draw(st.integers(0, len(shape)))
    mshape = tuple(n if draw(st.booleans()) else 1 for n in shape[len(shape) - k:])
    m = draw(laid_out(mshape, np.dtype(bool)))
    oracle = np.array(m)
    form = draw(st.sampled_from(["array", "view", "list", "bool"]))
    if form == "view":
        full = tuple(m if m != 1 or not draw(st.booleans()) else n
                     for m, n in zip(mshape, shape[len(shape) - k:]))
        return lazybcast.broadcast_to(m, full), np.broadcast_to(oracle, full)
    if form == "list" and mshape and 0 not in mshape:  # (tolist() of those loses the shape)
        return oracle.tolist(), oracle
    if form == "bool":  # (NumPy reads a Python True as no mask, np.True_ as a mask)
        b = draw(st.sampled_from([True, False, np.True_, np.False_]))
        return b, b
    return m, oracle


def _masked_call(data, name, view, oracle, **kwargs):
    mask, mask_oracle = data.draw(masks(view.shape), label="mask")
    got = call(name, view, where=mask, **kwargs)
    expected = call(name, oracle, where=mask_oracle, **kwargs)
    assert got[0] == expected[0], (got, expected)
    if got[0] == "error":
        assert got[1] is expected[1], (got, expected)
        return
    assert_same_array(got[1], expected[1])
    if type(got[1]) is BroadcastView:  # (no larger than the joint compact source and mask)
        assert got[1].source.size <= source_size(view, mask if type(mask) is not list
                                                 else np.array(mask))


@given(st.data(), st.sampled_from(EXACT + ["nanmax", "nanmin"]), st.booleans(),
       st.sampled_from([None, -3, 5]))
def test_masked_integer_and_bool_reductions_are_exact(data, name, keepdims, initial):
    """Sums, products, extremes, any and all under a ``where=`` mask, of integer and bool
    views in every mode: NumPy's values and errors (min and max without ``initial`` raise)."""
    view, oracle = data.draw(views(dtype=data.draw(st.sampled_from(INTEGERS))), label="view")
    axis = data.draw(axes_for(view.ndim), label="axis")
    kwargs = {"axis": axis, "keepdims": keepdims}
    if initial is not None and name not in ("any", "all"):
        kwargs["initial"] = initial
    _masked_call(data, name, view, oracle, **kwargs)


@given(st.data(), st.sampled_from(FLOATS), st.sampled_from(["sum", "mean", "var", "std"]))
def test_masked_float_reductions_at_least_as_accurate(data, dtype, name):
    """Floating sums, means and moments under a mask: NumPy's dtype, warnings and NaNs (an
    all-masked cell's mean), at least as accurate against an exact reference."""
    view, oracle = data.draw(tame_views(dtype), label="view")
    axis = data.draw(axes_for(view.ndim), label="axis")
    kwargs = {"axis": axis}
    if name in ("var", "std"):
        kwargs["ddof"] = data.draw(st.sampled_from([0, 1, 2]), label="ddof")
    mask, mask_oracle = data.draw(masks(view.shape), label="mask")
    got = call(name, view, where=mask, **kwargs)
    expected = call(name, oracle, where=mask_oracle, **kwargs)
    if raised_alike(got, expected):  # ("Mean of empty slice", "Degrees of freedom <= 0")
        return
    assert np.asarray(got[1]).dtype == np.asarray(expected[1]).dtype
    wide = oracle.astype(np.clongdouble if dtype.kind == "c" else np.longdouble)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = getattr(np, name)(wide, where=mask_oracle, **kwargs).astype(
            np.complex128 if dtype.kind == "c" else np.float64)
    _as_accurate(got[1], expected[1], exact, np.asarray(expected[1]).dtype)


def _both(func, src, shape, **kwargs):
    """``func`` on the view and on NumPy's ``np.broadcast_to`` of ``src``, each with its own
    copy of any ``out=``: ``(ours, NumPy's)`` as :func:`outcome` pairs."""
    results = []
    for a in (lazybcast.broadcast_to(src, shape), np.broadcast_to(src, shape)):
        kw = dict(kwargs)
        if "out" in kw:
            kw["out"] = kw["out"].copy()
        results.append(outcome(func, a, **kw))
    return results


@pytest.mark.parametrize("where", [True, np.array([False, True]), np.False_])
@pytest.mark.parametrize("ufunc", [np.gcd, np.lcm])
@pytest.mark.parametrize("out", [None, np.zeros(2, np.int8)])
def test_gcd_of_a_masked_out_cell_is_its_initial(where, ufunc, out):
    """A cell the mask selects nothing of holds ``initial`` as it is (-4), not ``|initial|``
    (``gcd(a, a) == |a|`` scaled the cell as if it held repeated values)."""
    kwargs = {"axis": 0, "initial": -4, "where": where} | ({} if out is None else {"out": out})
    got, want = _both(ufunc.reduce, np.array([6, 4]), (3, 2), **kwargs)
    if out is None:
        check(got, want, lazybcast.broadcast_to(np.array([6, 4]), (3, 2)))
    else:  # (each side's own out, returned)
        assert got[0] == want[0] == "ok" and type(got[1]) is np.ndarray, (got, want)
        assert got[1].dtype == want[1].dtype
        np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("out_dtype", [np.int16, bool, np.float32])
@pytest.mark.parametrize("kwargs", [{"dtype": np.int8}, {}])
def test_small_integer_loops_into_another_out_wrap_as_numpys(out_dtype, kwargs):
    """int8 values summed into an int16 or bool out in NumPy's int8 loop (``dtype=int8``, or
    the out's promotion with the source) wrap there; a sum without the dtype would widen."""
    src = np.array([100, 3], np.int8)
    got, want = _both(np.add.reduce, src, (3, 2), axis=0, out=np.zeros(2, out_dtype),
                      **kwargs)
    assert got[0] == want[0] == "ok", (got, want)
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("where", [True, np.array([True, False])])
@pytest.mark.parametrize("func", [np.nanmax, np.nanmin])
def test_nan_extremes_into_an_out_of_another_dtype(where, func):
    """np.nanmax / np.nanmin take no ``dtype=``: an out of another dtype than the source's
    raised TypeError (with or without a mask)."""
    got, want = _both(func, np.array([1.5, np.nan]), (3, 2), axis=0, where=where, initial=0,
                      out=np.zeros(2, np.float32))
    assert got[0] == want[0] == "ok", (got, want)
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("where", [True, np.array([True, False])])
@pytest.mark.parametrize("name", ["sum", "max"])
@pytest.mark.parametrize("out_dtype", ["i8", "m8[ms]", "m8[s]"])
def test_timedeltas_into_an_out_of_another_dtype(where, name, out_dtype):
    """timedelta64 sums and extremes into an integer out or one of another unit: NumPy's
    values (its loop's dtype has a unit, which ``dtype=`` cannot select: they raised)."""
    got, want = _both(getattr(np, name), np.array([5, -3], "m8[s]"), (3, 2), axis=0,
                      where=where, out=np.zeros(2, out_dtype))
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.skipif(not hasattr(np.dtypes, "StringDType"), reason="NumPy 2.0's StringDType")
@pytest.mark.parametrize("dtype", ["U3", "StringDType"])
def test_masked_string_sums_with_initial(dtype):
    """Strings join in order and have no identity: a masked sum with ``initial`` is NumPy's
    (it raised, asking for the ``initial`` that was given)."""
    dt = np.dtypes.StringDType() if dtype == "StringDType" else np.dtype(dtype)
    src = np.array([["a", "b"]], dtype=dt)
    got, want = _both(np.add.reduce, src, (3, 2), axis=0, where=np.array([True, False]),
                      initial="x")
    if not raised_alike(got, want):
        assert np.asarray(got[1]).tolist() == np.asarray(want[1]).tolist()


def test_a_masked_sum_counts_the_mask_where_the_source_repeats(monkeypatch):
    """A column of values under a row mask: each row's sum is its value times the count of
    the mask, so the sum reads the source and the mask apart (10^5 + 10^5 elements), never
    their joint (10^10): the reduction is watched for the shape it reduces."""
    import lazybcast._reductions as reductions

    reduced = []
    scaled = reductions._scaled

    def watched(numpy_reduce, src, *args):
        reduced.append(src.shape)
        return scaled(numpy_reduce, src, *args)

    monkeypatch.setattr(reductions, "_scaled", watched)
    n = 10**5
    col = np.arange(n, dtype=np.int64).reshape(n, 1)
    v = lazybcast.broadcast_to(col, (n, n))
    cols = np.arange(n) % 3 == 0
    r = v.sum(axis=1, where=cols)
    assert r.source.shape == (n,) and reduced == [(n, 1)]
    np.testing.assert_array_equal(r.source, np.arange(n) * int(cols.sum()))
    assert np.nansum(v, where=cols) == (n * (n - 1) // 2) * int(cols.sum())
    r = v.sum(axis=0, where=cols, keepdims=True)  # (the mask is kept: a view of its shape)
    assert r.shape == (1, n) and r.materialize()[0, :4].tolist() == [n * (n - 1) // 2, 0, 0,
                                                                      n * (n - 1) // 2]


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.complex128, np.bool_])
def test_a_masked_sum_over_a_row_of_kept_cells_reads_the_row_once(monkeypatch, dtype):
    """A row of values under a mask of the kept cells (rows): each selected cell's sum is the
    row's, so the row is summed once and copied, not once per cell (n^2 elements): every
    array NumPy reduces is watched for its size."""
    import lazybcast._reductions as reductions

    sizes = []
    scaled = reductions._scaled

    def watched(numpy_reduce, *args):
        def reduce(a, **kwargs):
            sizes.append(a.size)
            return numpy_reduce(a, **kwargs)
        return scaled(reduce, *args)

    monkeypatch.setattr(reductions, "_scaled", watched)
    n = 3000
    row = (np.arange(n) % 7).astype(dtype).reshape(1, n)
    rows = (np.arange(n) % 3 == 0).reshape(n, 1)
    for view, ref, kwargs in [
            (lazybcast.broadcast_to(row, (n, n)), np.broadcast_to(row, (n, n)), {"axis": 1}),
            (lazybcast.broadcast_to(row[:, None], (n, 2, n)), np.broadcast_to(row[:, None],
                                                                                (n, 2, n)),
             {"axis": (1, 2), "keepdims": True})]:
        r = np.sum(view, where=rows if view.ndim == 2 else rows[:, :, None], **kwargs)
        want = np.sum(ref, where=rows if ref.ndim == 2 else rows[:, :, None], **kwargs)
        assert r.dtype == want.dtype and sizes and max(sizes) <= n
        np.testing.assert_array_equal(r.materialize(), want)
        sizes.clear()


@pytest.mark.parametrize("func, kwargs", [
    (np.max, {"initial": -1}), (np.min, {"initial": 10**6}), (np.any, {}), (np.all, {}),
    (np.nanmax, {"initial": -1.0}), (np.bitwise_or.reduce, {}),
    (np.max, {"initial": -1, "out": np.zeros((1000, 1), np.float32), "keepdims": True}),
])
def test_masked_extremes_count_the_mask_where_the_source_repeats(monkeypatch, func, kwargs):
    """A column of values under a row mask: a row's extreme is its value where the mask
    selects anything, the reduction of nothing (``initial``, the identity) elsewhere, so no
    array of the joint shape (10^3 x 10^5) is reduced: every array NumPy reduces is watched
    for its size; NumPy's values and dtypes."""
    import lazybcast._reductions as reductions

    sizes = []
    once = reductions._once

    def watched(numpy_reduce, *args, **kw):
        def reduce(a, **k):
            sizes.append(a.size)
            return numpy_reduce(a, **k)
        return once(reduce, *args, **kw)

    monkeypatch.setattr(reductions, "_once", watched)
    n, m = 1000, 10**5
    col = (np.arange(n) % 97).reshape(n, 1)
    if func is np.nanmax:
        col = np.where(col % 5 == 0, np.nan, col)
    cols = np.arange(m) % 7 == 3
    for mask in (cols, np.zeros(m, bool), lazybcast.broadcast_to(cols, (n, m))):
        kw = dict(kwargs)
        if "out" in kw:
            kw["out"] = kw["out"].copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # (nanmax: All-NaN slices)
            got = func(lazybcast.broadcast_to(col, (n, m)), axis=1, where=mask, **kw)
            want = func(np.broadcast_to(col, (n, m)), axis=1, where=np.asarray(mask),
                        **dict(kw, **({"out": kw["out"].copy()} if "out" in kw else {})))
        assert sizes and max(sizes) <= n, sizes
        got = np.asarray(got.materialize() if type(got) is BroadcastView else got)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        sizes.clear()


@pytest.mark.parametrize("src, shape, call", [
    (np.array([[1.0]]), (2, 2),  # (the "All-NaN slice" of a cell that selects nothing)
     lambda a: np.nanmax(a, axis=1, where=[[True, True], [False, False]], initial=np.nan)),
    (np.full((2, 1), -0.0), (2, 2),  # (which zero NumPy's fmax keeps depends on its loop)
     lambda a: np.fmax.reduce(a, axis=1, where=[True, False], initial=0.0)),
    (np.array([[-0.0], [0.0]]), (2, 3),
     lambda a: np.nanmax(a, where=[True, False, True], initial=-0.0)),
    (np.array([[1.0], [2.0]], np.float16), (2, 3),  # (initial converted once)
     lambda a: np.max(a, axis=1, where=[[True, False, False], [False] * 3], initial=1e6)),
    (np.array([[1 + 1j], [2]]), (2, 3),
     lambda a: np.maximum.reduce(a, axis=1, dtype=np.float64,
                                 where=[[True, False, False], [False] * 3], initial=0.5)),
])
def test_counted_extremes_warn_and_sign_as_numpy(src, shape, call):
    """Counted extremes whose cells select nothing: NumPy's values (signs of zero too) and
    warnings, each once (review: a second conversion of ``initial`` warned twice, and the
    cells filled afterwards missed the "All-NaN slice" warning)."""
    results = []
    for a in (lazybcast.broadcast_to(src, shape), np.broadcast_to(src, shape)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = call(a)
        r = np.asarray(r.materialize() if type(r) is BroadcastView else r)
        results.append(([repr(x) for x in r.ravel().tolist()], r.dtype,
                        [(w.category, str(w.message)) for w in caught]))
    assert results[0] == results[1]


@pytest.mark.parametrize("func, src, shape, mask, axis", [
    (np.sum, np.array([[[1.0, 10.0]]]), (2, 2, 2), np.array([[[True, False]], [[False, True]]]),
     (1, 2)),
    (np.prod, np.array([[3]]), (2, 2), np.array([[False], [True]]), 1),
    (np.add.reduce, np.array([[[1, 10]]], np.int8), (3, 2, 2),
     np.array([[[True, True]], [[False, True]], [[False, False]]]), (1, 2)),
])
def test_a_joint_mask_that_varies_along_kept_axes_the_source_repeats(func, src, shape, mask,
                                                                      axis):
    """The source repeats along a kept axis where the mask varies: each cell keeps its own
    mask (the first cell's was applied to all, in review)."""
    got, want = _both(func, src, shape, axis=axis, where=mask)
    assert got[0] == want[0] == "ok", (got, want)
    np.testing.assert_array_equal(np.asarray(got[1]), want[1])


@pytest.mark.parametrize("case", [
    (np.array([True]), (3,), {"where": np.array([True, False, True]), "dtype": bool}),
    (np.array([True]), (3,), {"where": np.array([True, False, True]),
                              "out": np.zeros((), bool)}),
    (np.array([np.inf]), (3,), {"where": np.False_}),  # (inf * 0 was computed, and warned)
    (np.array([np.inf, 1.0]), (3, 2), {"axis": 0, "where": np.array([False, True])}),
    (np.array([-np.inf], np.float16), (3,), {"where": np.array([False, False, False])}),
])
def test_masked_sums_of_cells_that_select_nothing(case):
    """A counted sum's cells that select nothing are 0 without computing inf * 0 (which warns,
    or raises under ``np.errstate(invalid="raise")``), in bool results too."""
    src, shape, kwargs = case
    out = kwargs.pop("out", None)
    results = []
    for a in (lazybcast.broadcast_to(src, shape), np.broadcast_to(src, shape)):
        with np.errstate(all="raise"):  # (NumPy computes nothing that could raise here)
            results.append(np.asarray(np.sum(a, **kwargs, **(
                {} if out is None else {"out": out.copy()}))))
    got, want = results
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("func, src, out", [
    (np.nanmin, np.array([[1], [2]], "M8[s]"), np.zeros(2, "m8[ms]")),
    (np.nanmax, np.array([[1000], [2000]], "m8[ms]"), np.zeros(2, "M8[s]")),
])
def test_nan_extremes_of_datetimes_into_an_out_of_another_unit(func, src, out):
    """NumPy's own steps (its datetime loops take no unit): the source cast to out's unit
    first gave other values (1000 ms for NumPy's 1 ms)."""
    got, want = _both(func, src, (2, 3), axis=1, out=out)
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("name", ["mean", "nanmean"])
@pytest.mark.parametrize("dtype", [np.int16, np.int8])
def test_means_of_integers_in_an_integer_dtype_wrap_as_numpys(name, dtype):
    """np.nanmean of integers is their mean: the sum wraps in ``dtype`` over the logical
    elements (nanmean gave the source's mean, 227 where NumPy gives -100)."""
    got, want = _both(getattr(np, name), np.full((1, 5), 227, np.uint8), (40, 5), dtype=dtype)
    assert got[0] == want[0] == "ok" and type(got[1]) is type(want[1]), (got, want)
    assert got[1] == want[1]


@pytest.mark.parametrize("func", [np.sum, np.prod, np.add.reduce])
def test_numbers_reduced_into_a_timedelta_out(func):
    """NumPy's values (its loop takes no dtype= with a unit: lazybcast raised TypeError)."""
    got, want = _both(func, np.full((1, 5), 7, np.uint8), (4, 5), axis=0,
                      out=np.zeros(5, "m8[s]"))
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        np.testing.assert_array_equal(got[1], want[1])


def test_a_counted_sum_leaves_cells_that_select_nothing_unsummed():
    """inf and -inf in a column no cell selects are never added (NumPy never adds them)."""
    v = lazybcast.broadcast_to(np.array([[np.inf], [-np.inf]]), (2, 5))
    with np.errstate(all="raise"):
        assert np.sum(v, where=np.zeros(5, bool)) == 0.0
        assert np.sum(v, axis=1, where=np.zeros(5, bool)).materialize().tolist() == [0, 0]


def test_a_mask_that_varies_where_the_source_repeats():
    """A column source and a row mask: their joint shape is the logical one, which NumPy's
    own loop reduces (the values are NumPy's either way)."""
    src = np.arange(5.0).reshape(5, 1)
    mask = np.array([True, False, True, True])
    got, want = _both(np.sum, src, (5, 4), axis=0, where=mask)
    check(got, want, lazybcast.broadcast_to(src, (5, 4)))
    got, want = _both(np.var, src, (5, 4), axis=1, where=mask, ddof=1)
    assert got[0] == want[0] == "ok"
    np.testing.assert_allclose(np.asarray(got[1]), want[1], rtol=1e-15)


@pytest.mark.parametrize("where, error", [
    (np.array([1, 0, 1]), TypeError),  # NumPy casts a mask 'safe' only: an int array raises
    (np.array([True, False]), ValueError),  # does not broadcast
    (np.ones((2, 4, 3), bool), ValueError),  # more axes than the view
    ([1, 0, 1], None),  # a list of ints is NumPy's to convert (it takes this one)
    ([[True], [False, True]], ValueError),  # ragged
])
def test_masks_numpy_casts_or_refuses_are_numpys(where, error):
    src = np.array([[1, 5, 2]])
    v, ref = lazybcast.broadcast_to(src, (4, 3)), np.broadcast_to(src, (4, 3))
    got, expected = outcome(np.sum, v, axis=0, where=where), outcome(np.sum, ref, axis=0,
                                                                    where=where)
    assert got[0] == expected[0] == ("ok" if error is None else "error"), (got, expected)
    if error is None:
        assert np.array_equal(got[1], expected[1])
    else:
        assert issubclass(got[1], error) and issubclass(expected[1], error)


def test_masked_reductions_of_a_huge_view_stay_compact(monkeypatch):
    """A mask that repeats with the view never sends the reduction to NumPy on the logical
    array (10^12 elements here): NumPy's path is switched off for the test."""
    import lazybcast._moments
    import lazybcast._reductions

    def refuse(*args, **kwargs):
        raise AssertionError("went to NumPy on the logical array")

    monkeypatch.setattr(lazybcast._reductions, "_numpy", refuse)
    monkeypatch.setattr(lazybcast._moments, "_numpy", refuse)
    src = np.arange(6.0).reshape(2, 1, 3)
    v = lazybcast.broadcast_to(src, (2, 5 * 10**11, 3))
    cols = np.array([True, False, True])
    rows = lazybcast.broadcast_to(np.array([[[True]], [[False]]]), (2, 5 * 10**11, 1))
    assert v.sum(where=cols) == 5 * 10**11 * (0 + 2 + 3 + 5)
    assert v.sum(axis=1, where=rows).materialize().tolist() == [[0.0, 5e11, 1e12], [0.0] * 3]
    assert v.max(axis=(0, 1), where=cols, initial=-1.0).materialize().tolist() == [3, -1, 5]
    assert v.mean(axis=(1, 2), where=cols).materialize().tolist() == [1.0, 4.0]
    assert math.isclose(v.var(where=cols, ddof=1), np.var([0, 2, 3, 5], ddof=0) * 4 * 5e11
                        / (4 * 5e11 - 1), rel_tol=1e-14)
    assert v.any(where=False) == np.False_ and v.all(where=[False]) == np.True_
    assert np.nansum(v, where=rows) == 5e11 * 3
    assert np.add.reduce(v, axis=None, where=cols) == 5e12


def test_axis_errors_are_numpys():
    v = lazybcast.broadcast_to(np.arange(3), (2, 3))
    with pytest.raises(np.exceptions.AxisError):
        v.sum(axis=2)
    with pytest.raises(ValueError, match="duplicate"):
        v.sum(axis=(0, -2))
    with pytest.raises(ValueError, match="empty sequence"):
        lazybcast.broadcast_to(np.arange(3), (0, 3)).argmax()
    with pytest.raises(ValueError, match="correction"):
        v.var(ddof=1, correction=1)
    assert np.var(v, correction=1) == np.var(np.asarray(v), correction=1)
    assert v.var(ddof=1) == np.var(np.asarray(v), ddof=1)


@given(st.data(), st.sampled_from(["nanmin", "nanmax", "nanargmin", "nanargmax", "nansum",
                                   "nanprod", "nanmean", "nanvar", "nanstd"]))
def test_nan_functions(data, name):
    """np.nan* (what xarray calls for float data): exact where NumPy's is, close elsewhere."""
    view, oracle = data.draw(tame_views(np.dtype("f8")), label="view")
    kind = "int" if "arg" in name else "tuple"
    axis = data.draw(axes_for(view.ndim, kind=kind), label="axis")
    got = call(name, view, axis=axis)
    expected = call(name, oracle, axis=axis)
    if name in ("nanmin", "nanmax", "nanargmin", "nanargmax"):
        check(got, expected, view)
        return
    assert got[0] == expected[0], (got, expected)
    if got[0] == "ok":
        assert type(got[1]) is (BroadcastView if np.ndim(expected[1]) else type(expected[1]))
        np.testing.assert_allclose(np.asarray(got[1]), expected[1], rtol=1e-12)


@pytest.mark.parametrize("name", ["mean", "var", "std", "sum"])
@pytest.mark.parametrize("src_dtype", ["f2", "f4", "c8", "i2"])
@pytest.mark.parametrize("dtype", [None, "f2", "f4", "c8", "f8"])
def test_float_result_dtypes_are_numpys(name, src_dtype, dtype):
    """The float64 pass for float16/32 and complex64 rounds to NumPy's result dtype."""
    src = (np.arange(6).reshape(2, 3) % 4).astype(src_dtype)
    view = lazybcast.broadcast_to(src[:, None], (2, 50, 3))
    ref = np.broadcast_to(src[:, None], (2, 50, 3))
    for axis in (None, 1, (0, 2)):
        got = call(name, view, axis=axis, dtype=dtype)
        expected = call(name, ref, axis=axis, dtype=dtype)
        assert got[0] == expected[0], (got, expected)
        if got[0] == "ok":
            assert np.asarray(got[1]).dtype == np.asarray(expected[1]).dtype
            np.testing.assert_allclose(np.asarray(got[1]), expected[1], rtol=2e-3)


# -- review fixes (F9, F10, F3, F4) -----------------------------------------------------------


class _AddOnly:
    """An object with ``+`` but neither ``*`` nor comparisons, as ``collections.Counter``."""

    def __init__(self, x):
        self.x = x

    def __add__(self, other):
        return _AddOnly(self.x + other.x)

    def __eq__(self, other):
        return type(other) is _AddOnly and self.x == other.x

    __hash__ = None


@pytest.mark.parametrize("axis", [0, None, (0, 1)])
def test_object_sum_adds_as_numpy(axis):
    """Object dtype reduces by NumPy's repeated ``+``, never ``x * k``."""
    src = np.array([[_AddOnly(1), _AddOnly(2)]], dtype=object)
    expected = np.broadcast_to(src, (10, 2)).sum(axis=axis)
    got = lazybcast.broadcast_to(src, (10, 2)).sum(axis=axis)
    assert np.asarray(got).tolist() == np.asarray(expected).tolist()


@pytest.mark.parametrize("name", ["sum", "mean", "prod"])
def test_object_floats_reduce_as_numpy(name):
    """Python floats in an object array: NumPy adds 0.1 ten times (0.9999999999999999)."""
    src = np.array([0.1, 3.0], dtype=object)
    expected = getattr(np.broadcast_to(src, (10, 2)), name)(axis=0)
    got = getattr(lazybcast.broadcast_to(src, (10, 2)), name)(axis=0)
    assert np.asarray(got).tolist() == np.asarray(expected).tolist()


@pytest.mark.parametrize("name", ["max", "min", "argmax"])
def test_object_comparisons_raise_as_numpy(name):
    src = np.array([_AddOnly(1)], dtype=object)
    with pytest.raises(TypeError):
        getattr(np.broadcast_to(src, (10, 1)), name)(axis=0)
    with pytest.raises(TypeError):
        getattr(lazybcast.broadcast_to(src, (10, 1)), name)(axis=0)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int64, bool])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_mean_with_integer_dtype_wraps_as_numpy(dtype, axis, keepdims):
    """NumPy sums in the integer dtype (wrapping) over the logical elements, then divides."""
    src = np.array([[100, 27]])
    expected = np.broadcast_to(src, (3, 2)).mean(axis=axis, dtype=dtype, keepdims=keepdims)
    got = lazybcast.broadcast_to(src, (3, 2)).mean(axis=axis, dtype=dtype, keepdims=keepdims)
    assert type(got) is (BroadcastView if np.ndim(expected) else type(expected))
    got = np.asarray(got)
    assert got.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("initial", [300, -129, 1.5, 2**70])
@pytest.mark.parametrize("name", ["sum", "prod"])
def test_out_of_range_initial_raises_as_numpy(name, initial):
    src = np.array([1, 2])
    n, v = np.broadcast_to(src, (3, 2)), lazybcast.broadcast_to(src, (3, 2))
    try:
        expected = getattr(n, name)(axis=0, initial=initial, dtype=np.int8)
    except Exception as exc:  # noqa: BLE001 - the oracle's exception, whatever it is
        with pytest.raises(type(exc)):
            getattr(v, name)(axis=0, initial=initial, dtype=np.int8)
    else:
        np.testing.assert_array_equal(
            np.asarray(getattr(v, name)(axis=0, initial=initial, dtype=np.int8)), expected)


# -- np.count_nonzero, np.ptp, np.isin at source cost (review F11) ------------------------------


_COUNTED = [
    (np.array([3, 0, 1]), (4, 3)), (np.array([[0.0], [np.nan], [2.0]]), (3, 5)),
    (np.array(["", "a"]), (3, 2)), (np.array([[True, False]]), (0, 2)),
    (np.array([[1, 0], [0, 0]]), (2, 2)), (np.array(5), ()),
]


@pytest.mark.parametrize("src, shape", _COUNTED)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_count_nonzero_as_numpy(src, shape, axis, keepdims):
    n, v = np.broadcast_to(src, shape), lazybcast.broadcast_to(src, shape)
    try:
        expected = np.count_nonzero(n, axis=axis, keepdims=keepdims)
    except (ValueError, TypeError) as exc:
        with pytest.raises(type(exc)):
            np.count_nonzero(v, axis=axis, keepdims=keepdims)
        return
    got = np.count_nonzero(v, axis=axis, keepdims=keepdims)
    if not isinstance(expected, np.ndarray):  # (int on NumPy 2.0.2, np.int64 on 2.4.6)
        assert type(got) is type(expected) and got == expected
    else:
        assert np.asarray(got).dtype == np.asarray(expected).dtype
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_count_nonzero_of_a_huge_view_is_at_source_cost():
    v = lazybcast.broadcast_to(np.array([3, 0, 1]), (10**17, 3))
    assert np.count_nonzero(v) == 2 * 10**17
    assert np.count_nonzero(v, axis=0).source.tolist() == [10**17, 0, 10**17]


@pytest.mark.parametrize("src, shape", [(np.array([[1.0, -2.0, 5.0]]), (4, 3)),
                                        (np.array([[1], [7]], np.int8), (2, 6))])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_ptp_as_numpy(src, shape, axis, keepdims):
    expected = np.ptp(np.broadcast_to(src, shape), axis=axis, keepdims=keepdims)
    got = np.ptp(lazybcast.broadcast_to(src, shape), axis=axis, keepdims=keepdims)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.parametrize("invert", [False, True])
def test_isin_stays_lazy(invert):
    src = np.arange(4.0)
    got = np.isin(lazybcast.broadcast_to(src, (1000, 4)), [3.0, 1.0], invert=invert)
    expected = np.isin(np.broadcast_to(src, (1000, 4)), [3.0, 1.0], invert=invert)
    assert type(got) is BroadcastView and got.source.size == 4
    np.testing.assert_array_equal(got.materialize(), expected)


@pytest.mark.parametrize("dtype, seed", [("f2", 36), ("f4", 4), ("c8", 2)])
def test_whole_float_reductions_round_once(dtype, seed):
    """view.sum() and view.mean() without options (their short path) compute in float64
    (complex128) and round once to the narrow dtype, as the general path does: equal to that
    reference, for sources whose narrow-dtype sum or mean rounds differently (NumPy's own
    float16/32 result then differs from this one)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(999) + (1j * rng.standard_normal(999) if dtype == "c8" else 0)
    src = (x * (3 if dtype == "f2" else 1000)).astype(dtype).reshape(999, 1)
    view = lazybcast.broadcast_to(src, (999, 7))
    wide = np.complex128 if dtype == "c8" else np.float64
    for got, want in [(view.sum(), np.sum(src, dtype=wide) * 7),
                      (view.mean(), np.mean(src, dtype=wide)),
                      (view.sum(axis=(0, 1)), np.sum(src, dtype=wide) * 7)]:
        assert type(got) is np.dtype(dtype).type
        assert got == np.dtype(dtype).type(want), (got, want)


@pytest.mark.parametrize("dtype", [">f2", ">f4", ">f8", ">c8", ">c16", ">i4"])
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "nansum", "max"])
def test_big_endian_sources_reduce_to_numpys_dtype(dtype, name):
    """A source in non-native byte order reduces to NumPy's result dtype (native order) on
    every path: whole array, along a repeated axis, along a kept one, keepdims."""
    src = np.array([[1.5, -2.0, 3.0]]).astype(dtype)
    view = lazybcast.broadcast_to(src, (4, 3))
    ref = np.broadcast_to(src, (4, 3))
    func = getattr(np, name)
    for kwargs in ({}, {"axis": 0}, {"axis": 1}, {"axis": 0, "keepdims": True}):
        got, want = func(view, **kwargs), func(ref, **kwargs)
        assert np.asarray(got).dtype == np.asarray(want).dtype, (kwargs, got, want)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-3)


def test_complex_sums_scale_each_part():
    """A complex sum over a repeated axis scales the real and imaginary parts on their own,
    as repeated additions do: inf + 0j summed 3 times is inf + 0j, not inf + nanj."""
    src = np.array([[np.inf + 0j], [1j]])
    for dtype in (np.complex64, np.complex128):
        view = lazybcast.broadcast_to(src.astype(dtype), (2, 3))
        ref = np.broadcast_to(src.astype(dtype), (2, 3))
        for kwargs in ({}, {"axis": 1}, {"axis": (0, 1)}):
            got, want = np.asarray(view.sum(**kwargs)), ref.sum(**kwargs)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype, seed", [("f2", 36), ("f4", 4), ("c8", 2)])
def test_repeated_float_sums_with_dtype_or_out_round_once(dtype, seed):
    """With ``dtype=`` or ``out=`` (NumPy then resolves the result dtype), a float16/32
    (complex64) sum over a repeated axis is still the source's sum and the repetition in
    float64 (complex128), rounded once: equal to that reference, on sources whose
    narrow-dtype sum rounds differently."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(999) + (1j * rng.standard_normal(999) if dtype == "c8" else 0)
    src = (x * (3 if dtype == "f2" else 1000)).astype(dtype).reshape(1, 999)
    view = lazybcast.broadcast_to(src, (7, 999))
    wide = np.complex128 if dtype == "c8" else np.float64
    want = np.dtype(dtype).type(np.sum(src, dtype=wide) * 7)
    assert np.dtype(dtype).type(np.sum(src) * 7) != want  # the narrow sum differs
    for kwargs in ({"dtype": dtype}, {"dtype": dtype, "keepdims": True},
                   {"out": np.empty((), dtype)}, {"out": np.empty((1, 1), dtype),
                                                  "keepdims": True}):
        got = view.sum(axis=(0, 1), **kwargs)
        assert np.asarray(got).dtype == np.dtype(dtype)
        assert np.asarray(got).ravel()[0] == want, (kwargs, got, want)
        if "out" in kwargs:
            assert got is kwargs["out"]


def _messages(func):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func()
    return np.asarray(result).copy(), sorted({str(w.message) for w in caught})


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8"])
@pytest.mark.parametrize("name", ["sum", "prod"])
@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"axis": 1}, {"axis": None, "dtype": "same"},
                                    {"axis": 1, "out": "same"}, {"axis": (0, 1)},
                                    {"axis": 1, "dtype": "same", "out": "wide"}])
def test_overflow_is_reported_as_numpys_reduction(dtype, name, kwargs):
    """A floating sum or product that overflows warns (or raises, under np.errstate) as
    NumPy's own reduction does, "overflow encountered in reduce", although lazybcast scales
    the source's result (with a multiply or a power, in float64 for float16/32, rounded once
    at the end), whether the scaling or the rounding overflows."""
    big = np.finfo(dtype).max / 1.5
    src = np.array([[big], [big]], dtype)
    view, ref = lazybcast.broadcast_to(src, (2, 5)), np.broadcast_to(src, (2, 5))

    def call(a):
        kw = dict(kwargs)
        if kw.get("dtype") == "same":
            kw["dtype"] = dtype
        if "out" in kw:  # "wide": NumPy computes in dtype, then casts to out's
            kw["out"] = np.empty(2, dtype if kw["out"] == "same" else np.longdouble)
        return getattr(a, name)(**kw)

    got, got_messages = _messages(lambda: call(view))
    want, want_messages = _messages(lambda: call(ref))
    np.testing.assert_array_equal(got, want)  # inf where NumPy's is inf
    assert got_messages == want_messages == ["overflow encountered in reduce"]
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="in reduce"):
        call(view)
    with np.errstate(over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        call(view)


def test_other_floating_point_errors_keep_the_callers_settings():
    """Reporting an overflow as NumPy's reduction does must not take over the other kinds:
    an underflow in a product reaches the caller's callback as NumPy's does."""
    src = np.array([1e-200])
    got, want = [], []
    with np.errstate(all="call", call=lambda *args: got.append(args[0])):
        lazybcast.broadcast_to(src, (3,)).prod()
    with np.errstate(all="call", call=lambda *args: want.append(args[0])):
        np.broadcast_to(src, (3,)).prod()
    assert got == want == ["underflow"]


NORM_ORDS = [None, 1, -1, 2, -2, 3, 0.5, 0, np.inf, -np.inf, "fro", "nuc", "x"]


@given(data=st.data())
@pytest.mark.parametrize("dtype", ["f8", "f4", "f2", "c16", "i1"])
def test_norm_is_numpys(dtype, data):
    """``np.linalg.norm`` of a view: NumPy's type, dtype, shape and values (k/8 values and
    int8 ones, whose sums of powers are exact in float64; float32 within rounding), or
    NumPy's error; lazy results cost the source."""
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        view, oracle = data.draw(views(dtype=dtype), label="view")
    else:
        view, oracle = data.draw(tame_views(dtype), label="view")
    ord_ = data.draw(st.sampled_from(NORM_ORDS), label="ord")
    axis = data.draw(st.one_of(st.none(), st.integers(-3, 3),
                               st.tuples(st.integers(-3, 3), st.integers(-3, 3))), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    got = outcome(np.linalg.norm, view, ord_, axis, keepdims)
    expected = outcome(np.linalg.norm, oracle, ord_, axis, keepdims)
    _same_norm(got, expected, ord_, dtype.kind)


@pytest.mark.skipif(not hasattr(np.linalg, "vector_norm"), reason="NumPy 2.0's names")
@given(data=st.data())
@pytest.mark.parametrize("dtype", ["f8", "f4", "c16", "i1"])
def test_vector_and_matrix_norms_are_numpys(dtype, data):
    """``np.linalg.vector_norm`` over any axes and ``np.linalg.matrix_norm`` of a view:
    NumPy's type, dtype, shape and values, or NumPy's error (as ``np.linalg.norm``)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        view, oracle = data.draw(views(dtype=dtype), label="view")
    else:
        view, oracle = data.draw(tame_views(dtype), label="view")
    keepdims = data.draw(st.booleans(), label="keepdims")
    if data.draw(st.booleans(), label="matrix"):
        ord_ = data.draw(st.sampled_from(NORM_ORDS), label="ord")
        got = outcome(np.linalg.matrix_norm, view, ord=ord_, keepdims=keepdims)
        expected = outcome(np.linalg.matrix_norm, oracle, ord=ord_, keepdims=keepdims)
    else:
        ord_ = data.draw(st.sampled_from(NORM_ORDS[1:]), label="ord")
        axis = data.draw(st.one_of(st.none(), st.integers(-3, 3),
                                   st.lists(st.integers(-3, 3), max_size=3).map(tuple)),
                         label="axis")
        got = outcome(np.linalg.vector_norm, view, axis=axis, ord=ord_, keepdims=keepdims)
        expected = outcome(np.linalg.vector_norm, oracle, axis=axis, ord=ord_,
                           keepdims=keepdims)
    _same_norm(got, expected, ord_, dtype.kind)


#: Orders whose powers of k/8 values (and their sums) are exact in float64.
_EXACT_ORDS = (None, 0, 1, 2, 3, np.inf, -np.inf, "fro", "f")


@pytest.mark.skipif(not hasattr(np.linalg, "vector_norm"), reason="NumPy 2.0's names")
def test_norms_of_an_empty_axis_are_numpys():
    """NumPy 2.3 and later give 0 for maxima over an empty axis (``initial=0``); earlier
    versions raise: the same as NumPy's, whichever runs."""
    v = lazybcast.broadcast_to(np.ones((0, 3)), (0, 3))
    ref = np.asarray(v)
    for func, kwargs in ((np.linalg.vector_norm, {"ord": np.inf, "axis": 0}),
                         (np.linalg.norm, {"ord": np.inf, "axis": 0}),
                         (np.linalg.matrix_norm, {"ord": np.inf}),
                         (np.linalg.matrix_norm, {"ord": 1})):
        got, expected = outcome(func, v, **kwargs), outcome(func, ref, **kwargs)
        if not raised_alike(got, expected):
            np.testing.assert_array_equal(np.asarray(got[1]), expected[1])


def _same_norm(got, expected, ord_, data_kind):
    """One norm outcome against NumPy's: float32/16 within their rounding; float64 sums of
    inexact powers (square roots, reciprocals, complex moduli) within float64 rounding, as
    repeated sums may differ from NumPy's in the last bits; the rest bit for bit."""
    assert got[0] == expected[0], (got, expected)
    if got[0] == "error":
        assert got[1] is expected[1], (got, expected)
        return
    g, e = got[1], expected[1]
    if type(g) is BroadcastView:
        assert isinstance(e, np.ndarray) and e.ndim > 0
        g = g.materialize()
    else:
        assert type(g) is type(e), (type(g), type(e))
    g, e = np.asarray(g), np.asarray(e)
    assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, e.dtype, g.shape, e.shape)
    if g.dtype.itemsize < 8 and g.dtype.kind == "f" and ord_ not in (np.inf, -np.inf, 0):
        # (NumPy rounds each partial sum in float32 and float16)
        np.testing.assert_allclose(g, e, rtol=2e-6 if g.dtype == np.float32 else 2e-3)
    elif data_kind == "c" or not any(ord_ is o or ord_ == o for o in _EXACT_ORDS):
        np.testing.assert_allclose(g, e, rtol=1e-13)
    else:
        np.testing.assert_array_equal(g, e)


def test_float16_norm_squares_in_float32_as_numpys_dot():
    """NumPy's whole-array norm is ``sqrt(x.dot(x))``, and its float16 dot works in float32:
    squares below float16's range still count."""
    for value in (1e-4, 3e-4):
        v = lazybcast.broadcast_to(np.array([value], np.float16), (4,))
        assert np.linalg.norm(v) == np.linalg.norm(np.asarray(v))
        assert np.linalg.norm(v).dtype == np.float16
    with pytest.raises(TypeError):
        np.linalg.norm(lazybcast.broadcast_to(np.ones(3), (2, 3)), axis=(True,))


def test_timedelta_sums_with_a_dtype_are_numpys():
    """NumPy sums timedeltas in their own dtype whatever ``dtype=`` says."""
    v = lazybcast.broadcast_to(np.array([[-5]], "m8[ms]"), (3, 3))
    ref = np.asarray(v)
    assert np.sum(v, dtype=np.float32) == np.sum(ref, dtype=np.float32)
    assert np.trace(v, dtype=np.float32) == np.trace(ref, dtype=np.float32)
    np.testing.assert_array_equal(np.sum(v, axis=0, dtype=np.float32).materialize(),
                                  np.sum(ref, axis=0, dtype=np.float32))


@given(data=st.data())
def test_average_without_weights_is_numpys_mean(data):
    view, oracle = data.draw(tame_views(np.dtype(data.draw(st.sampled_from(["f8", "f4"])))),
                             label="view")
    axis = data.draw(axes_for(view.ndim), label="axis")
    keepdims = data.draw(st.sampled_from([np._NoValue, False, True]), label="keepdims")
    for returned in (False, True):
        got = outcome(np.average, view, axis, returned=returned, keepdims=keepdims)
        expected = outcome(np.average, oracle, axis, returned=returned, keepdims=keepdims)
        assert got[0] == expected[0], (got, expected)
        if got[0] == "error":
            continue
        pairs = zip(got[1], expected[1]) if returned else [(got[1], expected[1])]
        for g, e in pairs:
            if isinstance(e, np.ndarray):
                assert type(g) is BroadcastView
                g = g.materialize()
            else:
                assert type(g) is type(e)
            np.testing.assert_array_equal(g, e)
            assert np.asarray(g).dtype == np.asarray(e).dtype


@given(data=st.data())
def test_weighted_average_is_numpys(data):
    """``np.average`` with weights (along the reduced axes, of the full shape, as a view or a
    list): NumPy's types, shapes, dtypes and errors; values within float rounding (the
    weights of a repeated axis are summed first); lazy results cost the source times the
    weights."""
    dtype = np.dtype(data.draw(st.sampled_from(["f8", "f4", "i2", "?", "c16"]), label="dtype"))
    if dtype.kind in "fc":
        view, oracle = data.draw(tame_views(dtype, nan=False), label="view")
    else:
        view, oracle = data.draw(views(dtype=dtype), label="view")
    axis = data.draw(st.one_of(st.none(), axes_for(view.ndim)), label="axis")
    axes = None if axis is None else np.lib.array_utils.normalize_axis_tuple(
        axis, view.ndim) if _valid_axes(axis, view.ndim) else None
    kind = data.draw(st.sampled_from(["along", "full", "bad", "view", "list"]), label="kind")
    wdtype = data.draw(st.sampled_from(["f8", "i4", "f4"]), label="weights dtype")
    shape = (view.shape if kind in ("full", "view") or axes is None
             else tuple(view.shape[ax] for ax in axes))
    if kind == "bad":
        shape = shape + (2,)
    w = data.draw(st.lists(st.integers(-1, 4), min_size=math.prod(shape),
                           max_size=math.prod(shape)), label="weights")
    w = np.array(w, wdtype).reshape(shape)
    if kind == "view":
        w = lazybcast.broadcast_to(w[(slice(0, 1),) * w.ndim], shape) if w.ndim else w
    elif kind == "list":
        w = w.tolist()
    w_ref = np.asarray(w) if type(w) is BroadcastView else w
    returned = data.draw(st.booleans(), label="returned")
    keepdims = data.draw(st.sampled_from([np._NoValue, False, True]), label="keepdims")
    got = outcome(np.average, view, axis, weights=w, returned=returned, keepdims=keepdims)
    expected = outcome(np.average, oracle, axis, weights=w_ref, returned=returned,
                       keepdims=keepdims)
    if raised_alike(got, expected):
        return
    pairs = zip(got[1], expected[1]) if returned else [(got[1], expected[1])]
    for g, e in pairs:
        if isinstance(e, np.ndarray):
            assert type(g) in (BroadcastView, np.ndarray), type(g)
            if type(g) is BroadcastView:
                assert g.source.size <= view.source.size * max(np.size(w), 1)
                g = g.materialize()
        else:
            assert type(g) is type(e), (type(g), type(e))
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, e.dtype, g.shape, e.shape)
        rtol = 1e-5 if g.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * float(np.max(np.abs(e),
                                                                            initial=1)))


def test_weighted_average_takes_the_axes_in_numpys_order_and_costs_the_source():
    src = np.arange(12.0).reshape(1, 3, 4)
    v = lazybcast.broadcast_to(src, (5, 3, 4))
    w = np.arange(1.0, 21.0).reshape(4, 5)  # for axes (2, 0), in that order
    np.testing.assert_allclose(np.average(v, axis=(2, 0), weights=w).materialize(),
                               np.average(np.asarray(v), axis=(2, 0), weights=w), rtol=1e-14)
    big = lazybcast.broadcast_to(np.linspace(0, 1, 1024).reshape(1, 1024), (1 << 20, 1024))
    weights = np.arange(1 << 20, dtype=np.float64) % 7
    r = np.average(big, axis=0, weights=weights)  # 8 GiB logical: only the weights are summed
    assert type(r) is BroadcastView and r.source.shape == (1024,)
    np.testing.assert_allclose(r.source, big.source[0], rtol=1e-14)


def test_weighted_average_keeps_numpys_special_values():
    """Infinities times zero weights, and products that overflow: NumPy's NaN, not the
    value that summing the weights first would give."""
    cases = [(np.array([np.inf]), (3,), None, [1.0, 0.0, 1.0]),
             (np.array([np.inf]), (3,), None, [1.0, -1.0, 1.0]),
             (np.array([1e300]), (3,), None, [1e10, -1e10, 1.0]),
             (np.array([[np.inf], [1.0]]), (2, 3), 1, [1.0, 0.0, 1.0]),
             (np.array([[2.0], [1.0]]), (2, 3), 1, [np.nan, 0.0, 1.0])]
    for src, shape, axis, w in cases:
        v = lazybcast.broadcast_to(src, shape)
        got = outcome(np.average, v, axis, weights=w)
        expected = outcome(np.average, np.asarray(v), axis, weights=w)
        if raised_alike(got, expected):
            continue
        g = got[1].materialize() if type(got[1]) is BroadcastView else got[1]
        np.testing.assert_array_equal(g, expected[1])


def _valid_axes(axis, ndim):
    try:
        np.lib.array_utils.normalize_axis_tuple(axis, ndim)
    except (TypeError, ValueError):
        return False
    return True


@given(data=st.data())
def test_nan_to_num_real_and_imag_are_elementwise(data):
    dtype = np.dtype(data.draw(st.sampled_from(["f8", "f2", "c8", "i4"])))
    view, oracle = data.draw(views(dtype=dtype), label="view")
    kwargs = data.draw(st.sampled_from([{}, {"nan": 7.0, "posinf": 1.0, "neginf": -2.0}]))
    for func, args in ((np.nan_to_num, kwargs), (np.real, {}), (np.imag, {})):
        got = outcome(func, view, **args)
        expected = outcome(func, oracle, **args)
        assert got[0] == expected[0], (func, got, expected)
        if got[0] == "ok":
            assert_same_array(got[1], expected[1])


def test_average_and_nan_to_num_leave_numpy_the_cases_it_decides():
    """Object averages with counts (NumPy raises), and replacement values of the logical
    shape (they vary along the repeated axes)."""
    v = lazybcast.broadcast_to(np.array([1, 2, 3], object), (4, 3))
    with pytest.raises(AttributeError):
        np.average(v, axis=0, returned=True)
    w = lazybcast.broadcast_to(np.array([1.0, np.nan]), (4, 2))
    nan = np.arange(8.0).reshape(4, 2)
    np.testing.assert_array_equal(np.nan_to_num(w, nan=nan),
                                  np.nan_to_num(np.asarray(w), nan=nan))


@pytest.mark.parametrize("dtype", [None, np.float16, np.float32, np.float64, np.int64])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_timedelta_mean_with_a_dtype_is_numpys(dtype, axis):
    """A timedelta64 mean with ``dtype=`` keeps NumPy's result: timedelta64 with NaT kept
    (the float path turned NaT into -9.2e18 and dropped the unit)."""
    source = np.array([0, 5, "NaT", 7], "m8[s]")
    got = outcome(lambda a: a.mean(axis=axis, dtype=dtype), lazybcast.broadcast_to(source, (3, 4)))
    want = outcome(lambda a: a.mean(axis=axis, dtype=dtype), np.broadcast_to(source, (3, 4)))
    if not raised_alike(got, want):
        got, want = np.asarray(got[1]), np.asarray(want[1])
        assert got.dtype == want.dtype and repr(got) == repr(want)


@pytest.mark.parametrize("call", [
    lambda a: a.sum(axis=[0, 1]), lambda a: a.mean(axis=[0]), lambda a: np.sum(a, axis=[0]),
    lambda a: a.max(axis=[0]), lambda a: np.var(a, axis=[1]), lambda a: np.nansum(a, axis=[0]),
    lambda a: np.median(a, axis=[0]), lambda a: np.percentile(a, 50, axis=[0, 1]),
])
def test_a_list_of_axes_is_numpys_answer(call):
    """NumPy's reductions refuse a list of axes (TypeError); its median and percentiles
    take one. The views answer alike (the reductions took the list)."""
    source = np.arange(3.0)
    got = outcome(call, lazybcast.broadcast_to(source, (2, 3)))
    want = outcome(call, np.broadcast_to(source, (2, 3)))
    if not raised_alike(got, want):
        np.testing.assert_array_equal(np.asarray(got[1]), want[1])


_CALLS = {
    "sum": lambda x, **k: x.sum(axis=0, **k), "max": lambda x, **k: x.max(axis=0, **k),
    "np.nanmax": lambda x, **k: np.nanmax(x, 0, **k), "np.nanmin": lambda x, **k: np.nanmin(x, 0, **k),
    "any": lambda x, **k: x.any(axis=0, **k), "mean": lambda x, **k: x.mean(axis=0, **k),
    "std": lambda x, **k: x.std(axis=0, **k), "np.nansum": lambda x, **k: np.nansum(x, 0, **k),
    "np.add.reduce": lambda x, **k: np.add.reduce(x, 0, **k),
}


@pytest.mark.parametrize("keepdims", [0, 1, True, 2, np.int8(1), None, 1.5, "a", []])
@pytest.mark.parametrize("call", sorted(_CALLS))
def test_keepdims_is_read_as_numpy_reads_it(call, keepdims):
    """An integer's truth; None, a float or a string raise NumPy's TypeError (None was
    read as False)."""
    source = np.arange(3.0)
    got = outcome(_CALLS[call], lazybcast.broadcast_to(source, (2, 3)), keepdims=keepdims)
    want = outcome(_CALLS[call], np.broadcast_to(source, (2, 3)), keepdims=keepdims)
    if not raised_alike(got, want):
        assert np.shape(got[1]) == np.shape(want[1])
        np.testing.assert_array_equal(np.asarray(got[1]), want[1])


@pytest.mark.parametrize("call", sorted(_CALLS))
def test_out_as_a_tuple(call):
    """``np.add.reduce(v, out=(a,))`` takes a 1-tuple, as every ufunc method does, and so do
    ``np.nanmax`` / ``np.nanmin`` (NumPy's call ``np.fmax.reduce``); ndarray's methods and
    the other functions refuse one with TypeError (the methods took it)."""
    source = np.arange(3.0)
    got_out, want_out = np.zeros(3), np.zeros(3)
    got = outcome(_CALLS[call], lazybcast.broadcast_to(source, (2, 3)), out=(got_out,))
    want = outcome(_CALLS[call], np.broadcast_to(source, (2, 3)), out=(want_out,))
    if not raised_alike(got, want):
        np.testing.assert_array_equal(got_out, want_out)
        assert got[1] is got_out


@pytest.mark.parametrize("func", [np.nanmax, np.nanmin, np.add.reduce])
@pytest.mark.parametrize("entries", [0, 2, None])
def test_an_out_tuple_of_the_wrong_kind_raises_numpys_error(func, entries):
    """``out=()``, ``out=(a, a)`` and ``out=(None,)``: NumPy's ValueError or TypeError (a
    1-tuple taken apart first turned the first two into TypeError, the last into no error)."""
    if func == np.add.reduce and entries is None:
        pytest.skip("NumPy's override protocol drops out=(None,) before asking the view")
    out = {0: (), 2: (np.zeros(3), np.zeros(3)), None: (None,)}[entries]
    got = outcome(func, lazybcast.broadcast_to(np.arange(3.0), (2, 3)), 0, out=out)
    want = outcome(func, np.broadcast_to(np.arange(3.0), (2, 3)), 0, out=out)
    assert got[0] == want[0] == "error" and got[1] is want[1], (got, want)


@pytest.mark.parametrize("axis", [True, False, np.True_, (True,), (0, True), (0, 1.5), 1.5,
                                  "x", np.array([0]), (0, np.array([1]))])
@pytest.mark.parametrize("name", ["sum", "max", "mean", "std", "any", "ptp", "nansum",
                                  "nanmean", "count_nonzero", "argmin", "nanargmax",
                                  "nanargmin"])
def test_axes_that_are_not_integers_raise_numpys_error(name, axis):
    """Bools are indices but not axes of a reduction (NumPy: TypeError; lazybcast used to
    read True as axis 1); tuples and floats given to argmin and nanargmin raise what NumPy
    raises, the NaN variants finding an all-NaN slice first (ValueError)."""
    src = np.array([[np.nan, np.nan], [1.0, np.nan]])
    v = lazybcast.broadcast_to(src, (3, 2, 2))
    func = getattr(np, name)
    with pytest.raises(Exception) as expected:
        func(np.broadcast_to(src, (3, 2, 2)), axis=axis)
    with pytest.raises(expected.type) as got:
        func(v, axis=axis)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("name", ["sum", "max", "any", "nansum", "count_nonzero", "ptp",
                                  "mean", "std"])
@pytest.mark.parametrize("axis", [np.int64(0), np.intp(-1), np.uint8(0), 0, -1])
def test_zero_d_views_take_axis_0_and_minus_1_of_any_integer_type(name, axis):
    """(NumPy's mean and std refuse them: AxisError, as the views' do.)"""
    v = lazybcast.broadcast_to(np.float64(3.0), ())
    func = getattr(np, name)
    try:
        expected = func(np.asarray(v), axis=axis)
    except np.exceptions.AxisError:
        with pytest.raises(np.exceptions.AxisError):
            func(v, axis=axis)
        return
    got = func(v, axis=axis)
    assert type(got) is type(expected) and got == expected


@pytest.mark.parametrize("name", ["nanmean", "nanvar", "nanstd"])
@pytest.mark.parametrize("kwargs", [{"out": np.zeros(3, np.int64)}, {"dtype": np.int32},
                                    {"out": np.zeros(3, bool)}])
def test_nan_moments_of_floats_refuse_integer_out_and_dtype(name, kwargs):
    """NumPy checks these first; lazybcast used to write NaN cast to an integer into out."""
    v = lazybcast.broadcast_to(np.ones((3, 1), np.float32), (3, 2))
    func = getattr(np, name)
    with pytest.raises(TypeError) as expected:
        func(np.asarray(v), axis=-1, **kwargs)
    with pytest.raises(TypeError) as got:
        func(v, axis=-1, **kwargs)
    assert str(got.value) == str(expected.value)
    ints = lazybcast.broadcast_to(np.ones((3, 1), np.int32), (3, 2))  # (not inexact: no check)
    assert np.array_equal(func(ints, axis=-1, dtype=np.float64),
                          func(np.asarray(ints), axis=-1, dtype=np.float64))


@pytest.mark.parametrize("name", ["std", "nanstd", "var", "nanvar"])
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int64, np.uint32, bool])
@pytest.mark.parametrize("kwargs", [{}, {"axis": (0, 1)}, {"ddof": 1}, {"axis": 0},
                                    {"keepdims": True}],
                         ids=["all", "all axes", "ddof", "one axis", "keepdims"])
@pytest.mark.parametrize("source", [np.array([[1], [6]], np.int16), np.array([0.5, 2.5, 7.0]),
                                    np.array([[1], [300]], np.int16), np.array([[-128], [127]], np.int8)],
                         ids=["int16 column", "float row", "wraps in int16", "wraps in int8"])
def test_std_with_an_integer_dtype_is_numpys(name, dtype, kwargs, source):
    """NumPy's std of a whole array with an integer dtype= is the square root of the integer
    variance, cast back to that type (lazybcast raised NumPy's casting error, which NumPy
    raises only for an array result); the integer variance wraps over the logical elements
    (lazybcast's, from the source's, did not)."""
    if name == "nanstd" and source.dtype.kind == "f":
        return  # (refused: test_nan_moments_of_floats_refuse_integer_out_and_dtype)
    v = lazybcast.broadcast_to(source, (2, 3))
    func = getattr(np, name)
    try:
        expected = func(np.broadcast_to(source, (2, 3)), dtype=dtype, **kwargs)
    except TypeError as error:
        with pytest.raises(type(error), match=re.escape(str(error))):
            func(v, dtype=dtype, **kwargs)
        return
    got = func(v, dtype=dtype, **kwargs)
    if isinstance(expected, np.ndarray):
        got = got.materialize() if isinstance(got, lazybcast.BroadcastView) else got
    assert type(got) is type(expected) and np.asarray(got).dtype == np.asarray(expected).dtype
    assert np.array_equal(got, expected)
