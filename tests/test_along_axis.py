"""NumPy's functions along an axis on views (``np.sort``, ``np.argsort``, ``np.cumsum``,
``np.cumprod``, ``np.diff``, ``np.median``, ``np.nanmedian``, the quantiles, ``np.unique``): NumPy on the
``np.broadcast_to`` equivalents is the oracle for values, dtypes, shapes and errors; the
results are views over the source's lanes where the module promises it."""

import warnings

import numpy as np
import pytest
from _duck_strategies import outcome, raised_alike, tame_views, views
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from lazybcast import BroadcastView

ORDERABLE = st.sampled_from([np.dtype(d) for d in ("?", "i1", "i8", "u2", "f2", "f4", "f8",
                                                   "c8")])


def same(got, expected, lazy=None):
    """``got`` is NumPy's outcome (same error type, or same type, dtype, shape and values,
    NaN equal to NaN); ``lazy``: whether it must be a view."""
    if raised_alike(got, expected):
        return
    g, e = got[1], expected[1]
    if type(e) is tuple:
        assert type(g) is tuple and len(g) == len(e)
        for a, b in zip(g, e):
            same(("ok", a), ("ok", b), lazy if isinstance(b, np.ndarray) else None)
        return
    if lazy is not None:
        assert (type(g) is BroadcastView) == lazy, (type(g), lazy)
    if type(g) is BroadcastView:
        g = g.materialize()
    elif not isinstance(e, np.ndarray):
        assert type(g) is type(e), (type(g), type(e))
    g, e = np.asarray(g), np.asarray(e)
    assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, e.dtype, g.shape, e.shape)
    if g.dtype.kind in "OV":  # (NaN objects and fields: compared by what they print)
        assert [repr(x) for x in g.ravel()] == [repr(x) for x in e.ravel()]
    else:
        with np.errstate(invalid="ignore"):  # (NumPy 2.0's assert compares complex NaNs to inf)
            np.testing.assert_array_equal(g, e)


def _axis(data, view):
    return data.draw(st.integers(-view.ndim, view.ndim - 1)) if view.ndim else 0


def _repeated(view, ax):
    return view.source.shape[ax] == 1 and view.shape[ax] > 1


@given(data=st.data())
@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_sorts_run_on_the_source(name, data):
    view, ref = data.draw(views(dtype=data.draw(ORDERABLE)))
    ax = _axis(data, view)
    kwargs = data.draw(st.sampled_from([{}, {"kind": "stable"}, {"stable": True},
                                        {"kind": "quicksort"}]))
    func = getattr(np, name)
    got = outcome(func, view, axis=ax, **kwargs)
    lazy = None
    if view.ndim and view.size:
        stable = kwargs.get("stable") or kwargs.get("kind") == "stable"
        lazy = name == "sort" or not _repeated(view, ax % view.ndim) or bool(stable)
    same(got, outcome(func, ref, axis=ax, **kwargs), lazy)
    if view.ndim:
        same(outcome(func, view, axis=None), outcome(func, ref, axis=None), False)


@given(data=st.data())
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans_along_an_axis(name, data):
    """Along a repeated axis too: the source stretched along that axis alone, scanned by
    NumPy, still repeats along the view's other broadcast axes."""
    view, ref = data.draw(views())
    ax = _axis(data, view)
    dtype = data.draw(st.sampled_from([None, np.float64, np.int32]))
    lazy = bool(view.ndim and view.size) or None
    same(outcome(getattr(np, name), view, axis=ax, dtype=dtype),
         outcome(getattr(np, name), ref, axis=ax, dtype=dtype), lazy)
    same(outcome(getattr(view, name), ax), outcome(getattr(ref, name), ax), lazy)


@pytest.mark.skipif(not hasattr(np, "cumulative_sum"), reason="NumPy 2.1's array-API scans")
@given(data=st.data())
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_array_api_scans(name, data):
    """``np.cumulative_sum`` / ``np.cumulative_prod``: views (the initial value included if
    asked, one longer along the axis); ``axis=None`` for one axis only, as NumPy."""
    view, ref = data.draw(views())
    axis = data.draw(st.one_of(st.none(), st.integers(-view.ndim, max(view.ndim - 1, 0))))
    kwargs = {"axis": axis, "dtype": data.draw(st.sampled_from([None, np.float64, np.int32])),
              "include_initial": data.draw(st.booleans())}
    lazy = None
    if view.ndim and view.size and (axis is not None or view.ndim == 1):
        lazy = True
    func = getattr(np, name)
    same(outcome(func, view, **kwargs), outcome(func, ref, **kwargs), lazy)


@given(data=st.data())
def test_gradient_is_numpys(data):
    """``np.gradient`` over drawn axes, spacings (a scalar for all, one per axis: a scalar or
    coordinates, uneven too) and edge orders: NumPy's values and errors, a view per axis."""
    view, ref = data.draw(views(dtype=data.draw(st.sampled_from(
        [np.dtype(d) for d in ("i1", "u2", "i8", "f2", "f4", "f8", "c16")]))))
    axis = data.draw(st.one_of(st.none(), st.integers(-view.ndim - 1, view.ndim),
                               st.permutations(range(view.ndim)).map(tuple)))
    axes = (range(view.ndim) if axis is None else [axis] if type(axis) is int else axis)
    form = data.draw(st.sampled_from(["none", "scalar", "each", "wrong"]))
    if form == "scalar":
        varargs = (data.draw(st.sampled_from([2, 0.5, np.float32(3)])),)
    elif form == "each":
        varargs = tuple(
            data.draw(st.sampled_from(["scalar", "even", "uneven"])) for _ in axes)
        varargs = tuple(
            1.5 if kind == "scalar" or not (-view.ndim <= ax < view.ndim)
            else np.arange(view.shape[ax]) * 2 if kind == "even"
            else np.cumsum(np.arange(1, view.shape[ax] + 1) ** 2) / 3
            for kind, ax in zip(varargs, axes))
    elif form == "wrong":
        varargs = (1.0, 2.0, 3.0, 4.0, 5.0)
    else:
        varargs = ()
    edge_order = data.draw(st.sampled_from([1, 2, 3]))
    got = outcome(np.gradient, view, *varargs, axis=axis, edge_order=edge_order)
    expected = outcome(np.gradient, ref, *varargs, axis=axis, edge_order=edge_order)
    same(got, expected, view.size > 0)  # (a view per axis)


def test_gradient_refuses_as_numpy_before_computing():
    """NumPy checks the axes, spacings and ``edge_order`` before it computes: so does the
    view's gradient (``axis=()`` skipped them; a refusal after a first axis warned twice)."""
    v = lazybcast.broadcast_to(np.array([[1.0, 2.0, 4.0]]), (4, 3))
    for kwargs, error in (({"axis": (), "edge_order": 3}, ValueError),
                          ({"axis": (), "edge_order": "x"}, TypeError)):
        with pytest.raises(error):
            np.gradient(v, **kwargs)
    g = lazybcast.broadcast_to(np.array([[np.inf, 1.0]]), (3, 2))
    for a in (g, np.broadcast_to(np.array([[np.inf, 1.0]]), (3, 2))):
        with warnings.catch_warnings(record=True) as seen, pytest.raises(TypeError):
            warnings.simplefilter("always")
            np.gradient(a, np.timedelta64(1, "s"))
        if a is g:
            ours = [str(w.message) for w in seen]
    assert ours == [str(w.message) for w in seen]


def test_gradient_with_a_complex_spacing_that_overflows_when_doubled():
    """``0 / (2 dx)`` is NaN where ``2 dx`` overflows a complex: NumPy's inner values, not
    the ends' zeros repeated."""
    for a in (lazybcast.broadcast_to(np.array([1 + 0j]), (4,)), np.full(4, 1 + 0j)):
        with np.errstate(all="ignore"):
            g = np.gradient(a, 1e308 + 1e308j)
        if type(a) is BroadcastView:
            ours = np.asarray(g)
    np.testing.assert_array_equal(ours, g)


@pytest.mark.parametrize("func", [np.cumsum, np.cumprod]
                         + ([np.cumulative_sum] if hasattr(np, "cumulative_sum") else []))
def test_a_scan_of_a_0d_view_into_a_0d_out_raises(func):
    """NumPy crashes the interpreter on ``np.cumsum(0-d, out=0-d)``; a view raises NumPy's
    error for an out of the wrong size (a scan of one value is a vector of one)."""
    v = lazybcast.broadcast_to(np.float64(3.0), ())
    with pytest.raises(ValueError, match="wrong size"):
        func(v, out=np.empty(()))
    out = np.empty(1)
    assert func(v, out=out) is out and out[0] == 3.0  # (NumPy's, as before)


def test_gradient_keeps_the_repetition():
    w = lazybcast.broadcast_to(np.array([[[0.0]], [[np.inf]]]), (2, 10**6, 3))
    with np.errstate(invalid="ignore"):  # (inf - inf, as NumPy's warns)
        g0, g1, g2 = np.gradient(w)
        assert np.gradient(w, axis=1, edge_order=2).source.shape == (2, 10**6, 1)
    assert g0.source.shape == (2, 1, 1) and g1.source.shape == (2, 1, 1)  # (zeros: kept)
    np.testing.assert_array_equal(g2.source, [[[0.0]], [[np.nan]]])  # inf - inf, kept once
    assert g0.source.ravel().tolist() == [np.inf, np.inf]


_LANE_FUNCS = {
    "sum": lambda x: x.sum(),  # a scalar: the axis goes
    "sorted": np.sort,  # a lane of the same length
    "ends": lambda x, k=1: np.concatenate([x[:k], x[-k:]]),  # another length, kwargs
    "diag": np.diag,  # two axes in place of one
    "first": lambda x: x[0].item(),  # a Python scalar
}


@given(data=st.data())
@pytest.mark.parametrize("name", sorted(_LANE_FUNCS))
def test_apply_along_axis_is_numpys(name, data):
    """``np.apply_along_axis``: NumPy's result (values, dtype, shape, axes of the function's
    result in place of ``axis``), a view that repeats where the view's other axes do."""
    view, ref = data.draw(views(dtype=data.draw(ORDERABLE)))
    axis = data.draw(st.integers(-view.ndim - 1, view.ndim))
    func = _LANE_FUNCS[name]
    kwargs = {"k": data.draw(st.integers(1, 2))} if name == "ends" else {}
    got = outcome(np.apply_along_axis, func, axis, view, **kwargs)
    expected = outcome(np.apply_along_axis, func, axis, ref, **kwargs)
    same(got, expected, view.size > 0 and -view.ndim <= axis < view.ndim or None)


def test_apply_along_axis_calls_once_per_distinct_lane():
    """A lane along the axis repeats along the view's broadcast axes: the function sees each
    distinct lane once (NumPy: every lane), read-only as NumPy's lanes of the broadcast
    array are, so it cannot write into the caller's source."""
    src = np.arange(12.0).reshape(1, 3, 4)
    view = lazybcast.broadcast_to(src, (1000, 3, 4))
    lanes = []
    r = np.apply_along_axis(lambda x: lanes.append(x.copy()) or x[::-1], 2, view)
    assert len(lanes) == 3 and r.source.shape == (1, 3, 4)
    np.testing.assert_array_equal(r.materialize(), np.broadcast_to(src[..., ::-1], view.shape))
    with pytest.raises(ValueError, match="read-only"):
        np.apply_along_axis(np.ndarray.sort, 2, view)
    assert src[0, 0].tolist() == [0.0, 1.0, 2.0, 3.0]


@given(data=st.data())
@pytest.mark.parametrize("func", [np.sum, np.max, np.mean, lambda a, axis: np.cumsum(a, axis)])
def test_apply_over_axes_is_numpys(func, data):
    """``np.apply_over_axes``: NumPy's result, as a view (each step gets a view)."""
    view, ref = data.draw(tame_views(np.dtype("f8")))  # (sums that do not overflow)
    axes = data.draw(st.one_of(st.integers(-view.ndim, max(view.ndim - 1, 0)),
                               st.lists(st.integers(-view.ndim, max(view.ndim - 1, 0)),
                                        max_size=3)))
    got = outcome(np.apply_over_axes, func, view, axes)
    expected = outcome(np.apply_over_axes, func, ref, axes)
    if raised_alike(got, expected):
        return
    g, e = got[1], expected[1]
    assert np.shape(g) == np.shape(e) and np.asarray(g).dtype == np.asarray(e).dtype
    np.testing.assert_allclose(np.asarray(g), e, rtol=1e-12)  # (sums: as accurate)
    if view.ndim and (axes == [] or isinstance(axes, list) and not axes):
        assert g is view
    elif view.ndim and view.size:  # (an empty view's scans are NumPy's arrays)
        assert type(g) is BroadcastView, type(g)


@given(data=st.data())
def test_diff_is_numpys(data):
    view, ref = data.draw(views())
    ax = _axis(data, view)
    n = data.draw(st.integers(0, 4))
    lazy = bool(view.ndim and view.size and n > 0)
    same(outcome(np.diff, view, n=n, axis=ax), outcome(np.diff, ref, n=n, axis=ax),
         lazy or None)


@given(data=st.data())
@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_medians_are_the_sources(name, data):
    view, ref = data.draw(views(dtype=data.draw(ORDERABLE.filter(lambda d: d.kind != "b"))))
    axis = data.draw(st.one_of(st.none(), st.integers(-view.ndim, max(view.ndim - 1, 0)),
                               st.lists(st.integers(0, max(view.ndim - 1, 0)), min_size=1,
                                        max_size=2, unique=True).map(tuple)))
    keepdims = data.draw(st.booleans())
    func = getattr(np, name)
    same(outcome(func, view, axis=axis, keepdims=keepdims),
         outcome(func, ref, axis=axis, keepdims=keepdims))


_METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf",
            "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf",
            "hazen", "weibull", "median_unbiased", "normal_unbiased"]


@given(data=st.data())
@pytest.mark.parametrize("name", ["quantile", "nanquantile", "percentile", "nanpercentile"])
def test_quantiles_are_numpys(name, data):
    """Every method, scalar and array ``q``, any axes: NumPy's values, dtypes and errors
    (lazily where no lane mixes repeated and distinct values)."""
    view, ref = data.draw(views(dtype=data.draw(ORDERABLE.filter(lambda d: d.kind != "b"))))
    axis = data.draw(st.one_of(st.none(), st.integers(-view.ndim, max(view.ndim - 1, 0)),
                               st.lists(st.integers(0, max(view.ndim - 1, 0)), min_size=1,
                                        max_size=2, unique=True).map(tuple)))
    q = data.draw(st.sampled_from([0.5, 0.0, 1.0, [0.1, 0.9], [[0.25], [1.0]], 1.5]))
    q = np.asarray(q) * (100 if "percentile" in name else 1)
    kwargs = {"axis": axis, "keepdims": data.draw(st.booleans()),
              "method": data.draw(st.sampled_from(_METHODS))}
    func = getattr(np, name)
    same(outcome(func, view, q, **kwargs), outcome(func, ref, q, **kwargs))


@pytest.mark.parametrize("value", [2.5, np.inf, -np.inf, np.nan])
@pytest.mark.parametrize("method", _METHODS)
def test_quantiles_along_repeated_axes_cost_the_source(value, method):
    """A lane of one value repeated k times: NumPy's answer for any k is its answer for
    two copies (``inf`` minus itself is NaN in the interpolating methods, at any k); the
    view's is computed on two copies, not on 10^6."""
    v = lazybcast.broadcast_to(np.array([[value], [1.0]]), (2, 10**6))
    with np.errstate(invalid="ignore"):  # (inf - inf, in both)
        got = np.quantile(v, [0.0, 0.3, 1.0], axis=1, method=method)
        want = np.quantile(np.broadcast_to(np.array([[value], [1.0]]), (2, 10**3)),
                           [0.0, 0.3, 1.0], axis=1, method=method)
    assert type(got) is BroadcastView and got.source.size == 6
    np.testing.assert_array_equal(got.materialize(), want)
    rows = lazybcast.broadcast_to(np.array([3.0, 1.0, value]), (10**6, 3))
    with np.errstate(invalid="ignore"):
        assert np.percentile(rows, 50, axis=0, method=method).source.shape == (3,)
        # along an axis that does not repeat: each lane is a source lane
        assert np.percentile(rows, 50, axis=1, method=method).source.shape == (1,)


@given(data=st.data())
def test_unique_of_the_source_with_counts(data):
    view, ref = data.draw(views(dtype=data.draw(ORDERABLE)))
    counts = data.draw(st.booleans())
    same(outcome(np.unique, view, return_counts=counts),
         outcome(np.unique, ref, return_counts=counts))
    same(outcome(np.unique, view, return_inverse=True), outcome(np.unique, ref, return_inverse=True))


def test_lazy_results_and_their_sources():
    v = lazybcast.broadcast_to(np.array([[3.0], [1.0], [2.0]]), (3, 10**6))
    assert np.sort(v, axis=0).source.shape == (3, 1)
    r = np.sort(v, axis=1)  # a lane of one repeated value is sorted: a copy of the source
    assert r.source.shape == (3, 1) and not np.shares_memory(r.source, v.source)
    assert np.argsort(v, axis=1, stable=True).source.shape == (1, 10**6)
    assert np.cumsum(v, axis=0).source.ravel().tolist() == [3.0, 4.0, 6.0]
    assert v.cumsum(axis=0).source.shape == (3, 1)
    w = lazybcast.broadcast_to(np.array([[[0.1]], [[0.2]]]), (2, 10**6, 1000))
    r = np.cumsum(w, axis=2)  # along a repeated axis: still repeats along axis 1
    assert r.shape == w.shape and r.source.shape == (2, 1, 1000)
    assert r.source[1, 0].tolist() == np.cumsum(np.full(1000, 0.2)).tolist()
    assert np.multiply.accumulate(w, axis=1, dtype=np.float32).source.shape == (2, 10**6, 1)
    assert np.diff(v, axis=1).shape == (3, 10**6 - 1) and np.diff(v, axis=1).source.size == 3
    assert np.median(v) == 2.0 and np.median(v, axis=1).source.shape == (3,)
    values, counts = np.unique(v, return_counts=True)
    assert values.tolist() == [1.0, 2.0, 3.0] and counts.tolist() == [10**6] * 3


def test_the_edges_numpy_keeps():
    """Along a repeated axis, ``inf - inf`` is NaN (as NumPy computes it, with its warning);
    ``equal_nan=False`` lists every NaN, so NumPy answers; an empty view too."""
    v = lazybcast.broadcast_to(np.array([np.inf, np.nan, 1.0]), (4, 3))
    ref = np.broadcast_to(np.array([np.inf, np.nan, 1.0]), (4, 3))
    with warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        got = np.diff(v, axis=0)
    with warnings.catch_warnings(record=True) as want_w:
        warnings.simplefilter("always")
        want = np.diff(ref, axis=0)
    np.testing.assert_array_equal(got.materialize(), want)
    assert {str(w.message) for w in got_w} == {str(w.message) for w in want_w}
    u = np.unique(v, equal_nan=False)
    np.testing.assert_array_equal(u, np.unique(ref, equal_nan=False))
    empty = lazybcast.broadcast_to(np.array([[5.0]]), (0, 3))
    same(outcome(np.median, empty, axis=1), outcome(np.median, np.broadcast_to(5.0, (0, 3)), axis=1))
    same(outcome(np.unique, empty), outcome(np.unique, np.broadcast_to(5.0, (0, 3))))


@pytest.mark.parametrize("repeats", [2, 3, 4])
@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_averages_as_numpy_does(name, repeats):
    """With an even number of repeats NumPy's middle pair is one value twice, and averaging
    it overflows for huge values: the same inf (and warning) as NumPy's; with an odd number
    the middle is one value, finite."""
    src = np.array([[1e308], [np.inf], [1.5e308], [np.nan if name == "nanmedian" else 1.0]])
    view = lazybcast.broadcast_to(src, (4, repeats))
    ref = np.broadcast_to(src, (4, repeats))
    func = getattr(np, name)
    for axis in (None, (0, 1)):
        with warnings.catch_warnings(record=True) as got_w:
            warnings.simplefilter("always")
            got = func(view, axis=axis)
        with warnings.catch_warnings(record=True) as want_w:
            warnings.simplefilter("always")
            want = func(ref, axis=axis)
        assert type(got) is type(want) and (got == want or (np.isnan(got) and np.isnan(want)))
        assert {str(w.message) for w in got_w} == {str(w.message) for w in want_w}


def test_review_findings_follow_numpy():
    """Values that differ from themselves are listed once per repeat by np.unique; a sort
    is independent of the caller's array and checks its arguments; a bool axis,
    overwrite_input=True and float16 nanmedian are NumPy's."""
    def both(func, src, shape, *args, **kwargs):
        return (outcome(func, lazybcast.broadcast_to(src, shape), *args, **kwargs),
                outcome(func, np.broadcast_to(src, shape), *args, **kwargs))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cases = [
            (np.unique, np.array([np.nan], object), (3,), (), {"return_counts": True}),
            (np.unique, np.array([(0, np.nan)], "i2,f4"), (3,), (), {}),
            (np.unique, np.array(["NaT", "2020-01-01"], "M8[D]"), (3, 2), (),
             {"equal_nan": False}),
            (np.unique, np.array([np.nan, 1.0]), (3, 2), (), {"equal_nan": 0,
                                                             "return_counts": True}),
            (np.sort, np.array([[1.0, 2.0]]), (2, 2), (), {"axis": 0, "kind": "bogus"}),
            (np.sort, np.array([[1.0, 2.0]]), (2, 2), (), {"axis": 0, "kind": "stable",
                                                         "stable": True}),
            (np.argsort, np.array([[1.0, 2.0]]), (2, 2), (), {"axis": 0, "kind": "quicksort",
                                                            "stable": True}),
            (np.sort, np.array([[None]]), (2, 1), (), {"axis": 0}),
            (np.cumsum, np.array([[1.0, 2.0]]), (2, 2), (), {"axis": True}),
            (np.median, np.array([3.0, 1.0, 2.0]), (3,), (), {"overwrite_input": True}),
            (np.nanmedian, np.float16([[40000], [30000]]), (2, 600), (), {"axis": 1}),
        ]
        for func, src, shape, args, kwargs in cases:
            got, want = both(func, src, shape, *args, **kwargs)
            same(got, want)
    s = np.array([[1.0, 2.0]])
    r = np.sort(lazybcast.broadcast_to(s, (2, 2)), axis=0)
    s[0, 0] = 99.0
    assert r[0, 0] == 1.0


@given(data=st.data())
@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.subtract,
                                   np.logical_or])
def test_accumulate_along_an_axis(ufunc, data):
    view, ref = data.draw(views())
    ax = _axis(data, view)
    lazy = bool(view.ndim and view.size) or None
    same(outcome(ufunc.accumulate, view, axis=ax), outcome(ufunc.accumulate, ref, axis=ax),
         lazy)


_SPECIAL = [0.0, -0.0, 1.0, -2.5, 3.25, 1e300, -1e300, np.inf, -np.inf, np.nan,
            -np.nan, 5e-324]


def _mixed_source(data):
    """A source whose view mixes repeated and distinct values along the reduced axes."""
    dtype = data.draw(st.sampled_from([np.dtype(d) for d in ("f8", "i1", "i8", "u8", "?")]))
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    if dtype.kind == "f":
        values = st.sampled_from(_SPECIAL) | st.floats(-1e3, 1e3)
    elif dtype.kind == "b":
        values = st.booleans()
    else:
        info = np.iinfo(dtype)
        values = st.sampled_from([info.min, info.max, 0, 1]) | st.integers(info.min, info.max)
    src = np.array(data.draw(st.lists(values, min_size=int(np.prod(shape)),
                                      max_size=int(np.prod(shape)))), dtype=dtype)
    src = src.reshape(shape)
    view_shape = tuple(data.draw(st.integers(2, 5)) if n == 1 else n for n in shape)
    return src, view_shape


@given(data=st.data())
@pytest.mark.parametrize("name", ["quantile", "nanquantile", "percentile", "nanpercentile"])
def test_quantiles_over_lanes_that_mix_repeats(name, data):
    """Each source value k times among others in a lane: NumPy's values to the bit (NaNs of
    both signs, signed zeros, infinities, subnormals, integer extremes), dtype, type, shape
    and warnings, with float64, float32 and float16 ``q``; computed from the source's sorted
    lanes (the linear method) or by NumPy (the others)."""
    src, shape = _mixed_source(data)
    view, ref = lazybcast.broadcast_to(src, shape), np.broadcast_to(src, shape)
    axes = data.draw(st.one_of(st.none(), st.lists(st.integers(0, len(shape) - 1), min_size=1,
                                                   max_size=len(shape), unique=True).map(tuple)))
    scale = 100 if "percentile" in name else 1
    q = data.draw(st.sampled_from([0.5, 0.0, 1.0, 0.999, 1 / 3, [0.1, 0.9], [[0.25], [1.0]],
                                   np.float64(0.7), np.array(0.2), 1, 0, 2.0, np.float32(0.3),
                                   np.array([0.1, 0.7], np.float32), np.float16(0.5)]))
    q = q * scale if isinstance(q, (float, int, np.generic, np.ndarray)) else \
        [np.multiply(x, scale).tolist() for x in q]
    kwargs = {"axis": axes, "keepdims": data.draw(st.booleans()),
              "method": data.draw(st.sampled_from(["linear", "linear", "lower", "hazen"]))}
    got, expected = _same_quantiles(getattr(np, name), view, ref, q, kwargs)
    if got is not None:
        assert np.array_equal(np.signbit(got), np.signbit(expected))  # (NaNs' signs too)


def _same_quantiles(func, view, ref, q, kwargs):
    """``func`` of the view and of NumPy's array: the same outcome (values, dtype, type,
    shape or exception) and the same warnings (each recorded, the call going on); the two
    results as arrays (None, None after an exception)."""
    results = []
    for target in (ref, view):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = "ok", func(target, q, **kwargs)
            except Exception as e:  # noqa: BLE001 - the type is compared against NumPy's
                result = "error", type(e)
        results.append((result, sorted({(w.category.__name__, str(w.message))
                                         for w in caught})))
    (expected, expected_warnings), (got, got_warnings) = results
    same(got, expected)
    assert got_warnings == expected_warnings
    if got[0] != "ok":
        return None, None
    return (np.asarray(got[1].materialize() if type(got[1]) is BroadcastView else got[1]),
            np.asarray(expected[1]))


@given(data=st.data())
@pytest.mark.parametrize("name", ["nanquantile", "nanpercentile"])
def test_nan_quantiles_over_lanes_holding_nans(name, data):
    """The NaN variants drop each lane's NaNs, so each lane has its own count of values:
    NumPy's values to the bit, dtype, shape and warnings ("All-NaN slice encountered" for a
    lane of NaNs only), with lanes that mix repeated values, NaNs of both signs and lanes of
    NaNs only; at source cost (NumPy's nanquantile goes lane by lane over the full view)."""
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    values = st.sampled_from([np.nan, -np.nan, np.nan, 1.0, -2.5, 0.5, 5e-324]) | st.floats(
        -1e3, 1e3).filter(lambda x: x != 0)
    src = np.array(data.draw(st.lists(values, min_size=int(np.prod(shape)),
                                      max_size=int(np.prod(shape)))), dtype=np.float64)
    src = src.reshape(shape)
    view_shape = tuple(data.draw(st.integers(2, 5)) if n == 1 else n for n in shape)
    view, ref = lazybcast.broadcast_to(src, view_shape), np.broadcast_to(src, view_shape)
    axes = data.draw(st.one_of(st.none(), st.lists(st.integers(0, len(shape) - 1), min_size=1,
                                                   max_size=len(shape), unique=True).map(tuple)))
    q = data.draw(st.sampled_from([0.5, 0.0, 1.0, 0.999, 1 / 3, [0.1, 0.9, 0.5],
                                   np.float64(0.7)]))
    if name == "nanpercentile":
        q = np.multiply(q, 100).tolist() if isinstance(q, list) else q * 100
    kwargs = {"axis": axes, "keepdims": data.draw(st.booleans())}
    got, expected = _same_quantiles(getattr(np, name), view, ref, q, kwargs)
    assert got.tobytes() == expected.tobytes()  # (all-NaN lanes too: they only warn)


def test_nan_quantiles_over_lanes_holding_nans_cost_the_source():
    """Columns with NaNs (one of NaNs only), repeated 10^5 times: NumPy's values, computed in
    less memory than a copy of the view (64 MB) would take."""
    import tracemalloc

    col = np.random.default_rng(3).standard_normal(40)
    col[::3] = np.nan
    src = np.stack([col, np.full(40, np.nan)]).reshape(2, 40, 1)
    v, ref = lazybcast.broadcast_to(src, (2, 40, 10**5)), np.broadcast_to(src, (2, 40, 10**5))
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        want = np.nanpercentile(ref, [5, 50, 95], axis=(1, 2))
    tracemalloc.start()
    try:
        with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
            got = np.nanpercentile(v, [5, 50, 95], axis=(1, 2))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    got = np.asarray(got.materialize() if type(got) is BroadcastView else got)
    assert got.tobytes() == want.tobytes() and np.isnan(got[:, 1]).all()


def test_quantiles_over_mixed_lanes_cost_the_source():
    """A column repeated 1000 times: NumPy's percentiles to the bit at 10^7 logical values;
    at 10^9 (8 GB for NumPy to copy) the value of Hyndman and Fan's definition 7, computed
    apart in exact arithmetic, from 10^6 sorted source values."""
    from fractions import Fraction

    col = np.sort(np.random.default_rng(7).standard_normal(10**4)).reshape(-1, 1)
    v, ref = lazybcast.broadcast_to(col, (10**4, 1000)), np.broadcast_to(col, (10**4, 1000))
    q = [0.5, 1, 37.5, 99, 99.9]
    assert np.percentile(v, q).materialize().tobytes() == np.percentile(ref, q).tobytes()
    assert np.quantile(v, 0.999, axis=(1, 0)) == np.quantile(ref, 0.999, axis=(1, 0))

    col = np.linspace(-1.0, 1.0, 10**6).reshape(-1, 1)
    got = np.percentile(lazybcast.broadcast_to(col, (10**6, 10**3)), 99.5)
    h = (10**9 - 1) * Fraction(0.995)  # (the 0-based rank of definition 7)
    i = int(h)
    lo, hi = Fraction(float(col[i // 1000, 0])), Fraction(float(col[(i + 1) // 1000, 0]))
    want = float(lo + (h - i) * (hi - lo))
    # (NumPy's rank (10^9 - 1) * 0.995 is a float64 near 10^9, within 2^-24 of h)
    assert abs(got - want) <= float(hi - lo) * 2.0**-23 + 2 * np.spacing(want)


@pytest.mark.parametrize("src, shape, name, q", [
    (np.arange(10.0).reshape(10, 1), (10, 100_000), "percentile", np.float32(70)),
    (np.array([[0.0], [1.0], [3.0]]), (3, 2), "percentile", np.array([10, 90], np.float32)),
    (np.array([[np.nan], [-np.nan]]), (2, 3), "quantile", 0.5),
    (np.array([[-128], [127]], np.int8), (2, 3), "quantile", 0.5),
    (np.array([[1.0], [-np.inf]]), (2, 3), "quantile", 0.25),
    (np.array([[1e308], [-1e308]]), (2, 3), "nanquantile", 0.75),
    (np.array([np.nan]), (3,), "nanquantile", 0.5),
    (np.array([[np.nan, 1.0], [np.nan, np.nan]]).reshape(2, 1, 2), (2, 3, 2), "nanpercentile",
     [50.0, 90.0]),
], ids=["float32 percentile", "float32 q array", "NaNs of both signs", "int8 span overflows",
        "infinity", "float span overflows", "one lane of NaNs only", "lanes of NaNs only"])
def test_quantiles_of_mixed_lanes_in_numpys_corners(src, shape, name, q):
    """NumPy 2.0 widens a float32 percentile; NumPy's partition picks which NaN ends a lane;
    NumPy's interpolation warns about an overflowing or infinite difference in words that
    depend on its version and on whether it works on scalars: all NumPy's, to the bit and
    the warning (a review found each of them wrong)."""
    func = getattr(np, name)
    outcomes = []
    for target in (np.broadcast_to(src, shape), lazybcast.broadcast_to(src, shape)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = func(target, q)
        r = np.asarray(r.materialize() if type(r) is BroadcastView else r)
        outcomes.append((r.dtype, r.shape, r.tobytes(), sorted(str(w.message) for w in caught)))
    assert outcomes[1] == outcomes[0]
