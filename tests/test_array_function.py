"""``__array_function__``: lazy where the math allows, NumPy on ``np.asarray(view)`` for every
other function (so nothing that worked before the protocol stops working)."""

import numpy as np
import pytest
from _duck_strategies import (
    LAYOUT_DEPENDENT,
    LAYOUT_ULPS,
    assert_same_array,
    operand,
    operand_shapes,
    outcome,
    source_size,
    views,
)
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from lazybcast import BroadcastView


def _check_lazy(got, expected, *operands, func=None):
    assert got[0] == expected[0], (got, expected)
    if got[0] == "error":
        assert issubclass(got[1], expected[1]), (got, expected)
        return
    assert_same_array(got[1], expected[1], LAYOUT_ULPS if func in LAYOUT_DEPENDENT else 0)
    if type(got[1]) is BroadcastView:
        assert got[1].source.size <= source_size(*operands)


@given(st.data(), st.sampled_from(["transpose", "moveaxis", "swapaxes", "expand_dims",
                                   "squeeze", "broadcast_to"]))
def test_axis_shuffles_are_lazy(data, name):
    view, oracle = data.draw(views(), label="view")
    n = view.ndim
    axis = st.integers(-n - 1, n)  # out of range included: NumPy's AxisError
    if name == "transpose":
        args = data.draw(st.one_of(st.just(()), st.permutations(range(n)).map(lambda p: (p,)),
                                   st.lists(axis, max_size=n + 1).map(lambda p: (p,))))
    elif name in ("moveaxis", "swapaxes"):
        args = (data.draw(axis), data.draw(axis))
    elif name == "expand_dims":
        args = (data.draw(st.one_of(axis, st.lists(axis, max_size=2).map(tuple))),)
    elif name == "squeeze":
        args = data.draw(st.one_of(st.just(()), axis.map(lambda a: (a,))))
    else:
        extra = data.draw(st.lists(st.integers(0, 3), max_size=2))
        args = (tuple(extra) + tuple(n_ if data.draw(st.booleans()) else 1
                                     for n_ in view.shape),)
    func = getattr(np, name)
    got = outcome(func, view, *args)
    expected = outcome(func, oracle, *args)
    _check_lazy(got, expected, view)
    if got[0] == "ok" and np.ndim(expected[1]):
        assert type(got[1]) is BroadcastView
        assert got[1].source.size <= view.source.size  # moved, not computed


@given(st.data(), st.sampled_from(["sum", "prod", "mean", "min", "max", "amin", "amax",
                                   "any", "all", "std", "var", "argmin", "argmax"]))
def test_reductions_through_numpy_functions(data, name):
    view, oracle = data.draw(views(dtype=np.dtype("i2")), label="view")
    axis = data.draw(st.one_of(st.none(), st.integers(-view.ndim, view.ndim - 1)
                               if view.ndim else st.none()))
    got = outcome(getattr(np, name), view, axis=axis)
    expected = outcome(getattr(np, name), oracle, axis=axis)
    assert got[0] == expected[0]
    if got[0] == "ok":
        if name in ("mean", "std", "var"):
            np.testing.assert_allclose(np.asarray(got[1]), expected[1], rtol=1e-12)
            assert np.asarray(got[1]).dtype == expected[1].dtype
        else:
            _check_lazy(got, expected, view)


@given(st.data(), operand_shapes(2))
def test_elementwise_functions_are_lazy(data, shapes):
    _, (s1, s2) = shapes
    a, a_ref = data.draw(operand(s1, np.dtype("f4"), kinds=("view",)), label="a")
    b, b_ref = data.draw(operand(s2, np.dtype("f8")), label="b")
    for func, args in ((np.isclose, ()), (np.isclose, (0.5, 0.1, True)), (np.clip, (0.0,)),
                       (np.round, ())):
        if func is np.clip:
            got, expected = outcome(func, a, b, *args), outcome(func, a_ref, b_ref, *args)
            got2 = outcome(func, a, None, b)
            expected2 = outcome(func, a_ref, None, b_ref)
            _check_lazy(got2, expected2, a, b)
        elif func is np.round:
            got, expected = outcome(func, a, 2), outcome(func, a_ref, 2)
        else:
            got, expected = outcome(func, a, b, *args), outcome(func, a_ref, b_ref, *args)
        assert got[0] == expected[0]
        if got[0] == "ok":
            assert_same_array(got[1], expected[1] if np.ndim(expected[1]) else
                              np.asarray(expected[1])[()])
    for func in (np.allclose, np.array_equal):
        assert outcome(func, a, b) == outcome(func, a_ref, b_ref)


@given(st.data())
def test_functions_elementwise_in_one_argument_are_lazy(data):
    """np.angle, and np.searchsorted / np.digitize / np.interp elementwise in the values
    looked up (their tables plain arrays, lists or views): NumPy's values and dtypes."""
    dtype = np.dtype(data.draw(st.sampled_from(["f8", "f4", "i2", "c8", "?"]), label="dtype"))
    view, oracle = data.draw(views(dtype=dtype), label="view")
    table = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=1, max_size=6,
                                        unique=True), label="table"), np.float64)
    table.sort()
    if data.draw(st.booleans(), label="table as a view"):
        table_arg = lazybcast.broadcast_to(table, table.shape)
    else:
        table_arg = table.tolist()
    side = data.draw(st.sampled_from(["left", "right"]), label="side")
    bins = table_arg[::-1] if data.draw(st.booleans(), label="decreasing bins") else table_arg
    calls = [
        (np.angle, (), {"deg": data.draw(st.booleans(), label="deg")}),
        (lambda x: np.searchsorted(table_arg, x, side=side), (), {}),
        (lambda x: np.digitize(x, bins, right=side == "right"), (), {}),
        (lambda x: np.interp(x, table_arg, np.arange(len(table)) * 0.5, left=-1.0), (), {}),
    ]
    for func, args, kwargs in calls:
        got = outcome(func, view, *args, **kwargs)
        expected = outcome(func, oracle, *args, **kwargs)
        _check_lazy(got, expected, view, func=func)


def test_isclose_allclose_array_equal_examples():
    v = lazybcast.broadcast_to(np.array([1.0, np.nan]), (10**6, 2))
    r = np.isclose(v, 1.0)
    assert type(r) is BroadcastView and r.source.tolist() == [[True, False]]
    assert np.isclose(v, v, equal_nan=True).all()
    assert not np.allclose(v, v) and np.allclose(v, v, equal_nan=True)
    assert np.array_equal(v, v, equal_nan=True) and not np.array_equal(v, v)
    for src in (np.array(["a", "b"]), np.array([None, 1.5], dtype=object)):
        # (isnan has no loop for these; NumPy answers the same array passed twice at once)
        n, w = np.broadcast_to(src, (3, 2)), lazybcast.broadcast_to(src, (3, 2))
        assert np.array_equal(n, n, equal_nan=True) is np.array_equal(w, w, equal_nan=True)
    assert not np.array_equal(v, v[:1])
    w = lazybcast.broadcast_to(np.arange(3), (4, 3))
    assert np.array_equal(w, np.tile(np.arange(3), (4, 1)))
    assert np.array_equal(w, w) is True


def test_where_one_argument_and_rtol_array_fall_back():
    v = lazybcast.broadcast_to(np.array([0, 3]), (2, 2))
    ref = np.broadcast_to(np.array([0, 3]), (2, 2))
    for got, expected in zip(np.where(v), np.where(ref)):
        assert np.array_equal(got, expected)
    assert np.array_equal(np.isclose(v, 3, rtol=np.array([0.0, 1.0])),
                          np.isclose(ref, 3, rtol=np.array([0.0, 1.0])))


FALLBACKS = [
    lambda v: np.concatenate([v, v]),
    lambda v: np.concatenate((v, np.ones((1, 3))), axis=0),
    lambda v: np.stack([v, v], axis=1),
    lambda v: np.ravel(v),
    lambda v: np.cumsum(v, axis=0),
    lambda v: np.sort(v, axis=0),
    lambda v: np.unique(v),
    lambda v: np.nonzero(v),
    lambda v: np.shape(v),
    lambda v: np.ndim(v),
    lambda v: np.size(v),
    lambda v: np.copy(v),
    lambda v: np.diff(v, axis=1),
    lambda v: np.flip(v),
    lambda v: np.tile(v, 2),
    lambda v: np.dot(v, np.ones(3)),
    lambda v: np.einsum("ij->j", v),
    lambda v: np.linalg.norm(v),
    lambda v: np.median(v, axis=0),
    lambda v: np.percentile(v, 50),
    lambda v: np.ptp(v, axis=0),
    lambda v: np.nan_to_num(v),
    lambda v: np.atleast_3d(v),
    lambda v: np.pad(v, 1),
    lambda v: np.take(v, [0, 2], axis=1),
    lambda v: np.isin(v, [1.0]),
    lambda v: np.histogram(v, bins=3),
    lambda v: np.cumprod(v),
    lambda v: np.result_type(v, np.int8),
    lambda v: np.reshape(v, (-1,)),
    lambda v: np.trace(v),
    lambda v: np.count_nonzero(v, axis=0),
    lambda v: np.array_equiv(v, v[0]),
    lambda v: np.nanmean(v),
    lambda v: np.average(v, axis=0, weights=[1, 2, 3, 4]),
    lambda v: np.searchsorted(v[0], 1.5),
    lambda v: np.outer(v[0], v[:, 0]),
    lambda v: np.fft.fft(v),
    lambda v: np.linalg.svd(v, compute_uv=False),
]


@pytest.mark.parametrize("func", FALLBACKS, ids=range(len(FALLBACKS)))
def test_other_functions_work_on_the_zero_copy_array(func):
    src = np.array([[0.0, 1.5, 3.0]])
    view = lazybcast.broadcast_to(src, (4, 3))
    expected = func(np.broadcast_to(src, (4, 3)))
    got = func(view)
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(np.asarray(g), e)
    else:
        np.testing.assert_array_equal(np.asarray(got), expected)
        assert np.asarray(got).dtype == np.asarray(expected).dtype


def test_out_into_a_view_is_refused():
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    with pytest.raises(ValueError, match="read-only"):
        np.concatenate([np.ones(2), np.ones(1)], out=v[0])
    with pytest.raises(ValueError, match="read-only"):
        np.sum(np.ones((2, 3)), axis=0, out=v[0])


class _Other:
    """Another duck array: it implements __array_function__ for everything."""

    def __array_function__(self, func, types, args, kwargs):
        return ("other", func.__name__)


def test_defers_to_other_duck_arrays():
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    assert np.concatenate([v, _Other()]) == ("other", "concatenate")
    assert np.sum(v) == 6.0


def test_reshape_ravel_and_matrix_transpose_are_lazy():
    src = np.arange(3.0)
    v = lazybcast.broadcast_to(src, (1000, 4, 3))
    ref = np.broadcast_to(src, (1000, 4, 3))
    r = np.reshape(v, (4000, 3))
    assert type(r) is BroadcastView and r.source.shape == (1, 3)
    assert np.array_equal(r.materialize(), ref.reshape(4000, 3))
    r = np.ravel(v)
    assert type(r) is BroadcastView and np.array_equal(r.materialize(), ref.ravel())
    r = np.matrix_transpose(v)
    assert type(r) is BroadcastView and r.source.shape == (1, 3, 1)
    with pytest.raises(ValueError):
        np.reshape(v, (7, -1))


REAL = st.sampled_from([np.dtype(d) for d in ("?", "i1", "u2", "i8", "f2", "f4", "f8")])


@given(st.data())
def test_histogram_counts_every_repeat(data):
    """np.histogram of a view: NumPy's counts (or density) and edges over the logical array,
    bit for bit, from the source weighted by its repeats."""
    view, oracle = data.draw(views(dtype=data.draw(REAL)), label="view")
    bins = data.draw(st.one_of(st.integers(1, 6), st.just([-3.0, 0.0, 0.5, 100.0]),
                               st.just("auto")))
    rng = data.draw(st.sampled_from([None, (-1.0, 2.0)]))
    density = data.draw(st.sampled_from([None, False, True]))
    got = outcome(np.histogram, view, bins=bins, range=rng, density=density)
    want = outcome(np.histogram, oracle, bins=bins, range=rng, density=density)
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        for g, w in zip(got[1], want[1]):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert g.tobytes() == w.tobytes(), (g, w)


@given(st.data())
def test_bincount_counts_every_repeat(data):
    view, oracle = data.draw(views(dtype=np.dtype("u1"), max_rank=1), label="view")
    minlength = data.draw(st.integers(0, 5))
    got = outcome(np.bincount, view, minlength=minlength)
    want = outcome(np.bincount, oracle, minlength=minlength)
    assert got[0] == want[0]
    if got[0] == "ok":
        assert got[1].dtype == want[1].dtype and np.array_equal(got[1], want[1])


def test_histogram_counts_stay_exact_past_float64():
    """Counts of a huge view are integers times the repeats: exact past 2**53 (float64
    weights would round them), with NumPy's density formula on them."""
    n = 2**53 + 1
    v = lazybcast.broadcast_to(np.array([5, 7], "u1"), (n, 2))
    counts, edges = np.histogram(v, bins=2)
    assert counts.dtype == np.intp and counts.tolist() == [n, n]
    assert edges.tolist() == [5.0, 6.0, 7.0]
    density, _ = np.histogram(v, bins=2, density=True)
    np.testing.assert_array_equal(density, [0.5, 0.5])
    assert np.bincount(lazybcast.broadcast_to(np.array([2], "u1"), (n,))).tolist() == [0, 0, n]
