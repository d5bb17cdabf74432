"""Joins, repeats and padding of views (``np.concatenate``, ``np.stack``, ``np.vstack``,
``np.hstack``, ``np.atleast_*d``, ``np.tile``, ``np.repeat``, ``np.pad``): NumPy on the ``np.broadcast_to`` equivalents
is the oracle for values, dtypes, shapes and errors; results are views whose source is no
larger than the operands' live axes where the module promises it."""

import math

import numpy as np
import pytest
from _core_strategies import shapes
from _duck_strategies import (NUMERIC, assert_same_array, operand, outcome, raised_alike,
                              views)
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from lazybcast import BroadcastView


def same(got, expected, viewed=True):
    """NumPy's outcome: the same error type, or the same array (as a view when NumPy's is a
    non-empty array and ``viewed``: a view took part)."""
    if raised_alike(got, expected):
        return
    g, e = got[1], expected[1]
    if type(g) is not BroadcastView:  # (an empty result or NumPy's path: NumPy's array)
        assert type(g) is np.ndarray and (e.size == 0 or not viewed), (type(g), e.shape)
        np.testing.assert_array_equal(g, e)
        assert g.dtype == e.dtype and g.shape == e.shape
        return
    assert_same_array(g, e)


@st.composite
def joined(draw, stacked=False):
    """``(operands, oracles, axis)``: 1-4 views and ndarrays of one rank whose shapes agree
    off ``axis`` (all of one shape if ``stacked``), each of a drawn numeric dtype."""
    base = draw(shapes(1, 4))
    axis = draw(st.integers(-len(base) - stacked, len(base) - 1 + stacked))
    dtypes = draw(st.lists(st.sampled_from(NUMERIC), min_size=1, max_size=2))
    ops, refs = [], []
    for i in range(draw(st.integers(1, 4))):
        shape = list(base)
        if not stacked:
            shape[axis % len(base)] = draw(st.integers(0, 3))
        x, ref = draw(operand(tuple(shape), dtypes[i % len(dtypes)], ("view", "view", "array")))
        ops.append(x)
        refs.append(ref)
    return ops, refs, axis


def _viewed(ops):
    return any(type(x) is BroadcastView for x in ops)


@given(case=joined(), options=st.sampled_from(
    [{}, {"dtype": np.float32}, {"dtype": np.int8, "casting": "unsafe"},
     {"dtype": np.int8}, {"casting": "no"}]))
def test_concatenate_is_numpys(case, options):
    ops, refs, axis = case
    got = outcome(np.concatenate, ops, axis=axis, **options)
    same(got, outcome(np.concatenate, refs, axis=axis, **options), _viewed(ops))
    if got[0] == "ok" and type(got[1]) is BroadcastView:
        # Each operand contributes at most its logical length along the axis times the
        # other axes' live sizes: never more than the logical result.
        assert got[1].source.size <= got[1].size


@given(case=joined(stacked=True))
def test_stack_is_numpys(case):
    ops, refs, axis = case
    same(outcome(np.stack, ops, axis=axis), outcome(np.stack, refs, axis=axis), _viewed(ops))


@given(data=st.data())
@pytest.mark.parametrize("name", ["vstack", "hstack", "atleast_1d", "atleast_2d", "atleast_3d"])
def test_stacks_of_any_rank_are_numpys(name, data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    ops, refs = [], []
    for _ in range(data.draw(st.integers(1, 3))):
        x, ref = data.draw(operand(data.draw(shapes(0, 3)), dtype, ("view", "view", "array")))
        ops.append(x)
        refs.append(ref)
    func = getattr(np, name)
    if name.startswith("atleast"):
        got, expected = outcome(func, *ops), outcome(func, *refs)
        if got[0] == "ok" and type(expected[1]) is not tuple:
            # One operand: itself when it has the rank (a view stays that very view).
            got, expected = ("ok", (got[1],)), ("ok", (expected[1],))
        assert got[0] == expected[0]
        for g, e, x in zip(got[1], expected[1], ops):
            if type(x) is BroadcastView:
                assert_same_array(g, e)
            else:
                assert type(g) is np.ndarray and g.shape == e.shape
                with np.errstate(invalid="ignore"):  # (NumPy 2.0 compares a signaling NaN
                    np.testing.assert_array_equal(g, e)  # with the flag raised)
        return
    same(outcome(func, ops), outcome(func, refs), _viewed(ops))


@given(data=st.data())
def test_tile_is_numpys(data):
    view, ref = data.draw(views())
    reps = data.draw(st.one_of(st.integers(-1, 3), st.lists(st.integers(0, 3), max_size=5)))
    got = outcome(np.tile, view, reps)
    same(got, outcome(np.tile, ref, reps))
    if got[0] == "ok" and type(got[1]) is BroadcastView:
        # Broadcast axes and new leading axes repeat nothing: the source grows by the
        # repetitions of its real axes only.
        real = tuple(r for r in (reps if isinstance(reps, list) else [reps])[::-1])
        growth = math.prod(r for r, m in zip(real, view.source.shape[::-1]) if m > 1)
        assert got[1].source.size <= view.source.size * max(growth, 1)


@given(data=st.data())
def test_repeat_is_numpys(data):
    view, ref = data.draw(views())
    axis = data.draw(st.one_of(st.none(), st.integers(-view.ndim - 1, view.ndim)))
    length = view.shape[axis] if axis is not None and -view.ndim <= axis < view.ndim else 1
    repeats = data.draw(st.one_of(st.integers(-1, 3),
                                  st.lists(st.integers(-1, 3), min_size=length,
                                           max_size=length + data.draw(st.sampled_from([0, 0, 1])))))
    if isinstance(repeats, list) and data.draw(st.booleans(), label="as an int array"):
        repeats = np.array(repeats, dtype=np.int64)  # (an empty one too: [] is float64)
    got = outcome(np.repeat, view, repeats, axis=axis)
    expected = outcome(np.repeat, ref, repeats, axis=axis)
    if axis is None:  # (a flat result: NumPy's)
        assert got[0] == expected[0]
        if got[0] == "ok":
            np.testing.assert_array_equal(got[1], expected[1])
        return
    same(got, expected, not isinstance(repeats, bool))  # (bool repeats: NumPy's path)
    same(outcome(view.repeat, repeats, axis), expected, not isinstance(repeats, bool))


@st.composite
def pad_widths(draw, ndim):
    """A ``pad_width`` in one of NumPy's forms: an int, ``(n,)``, ``(before, after)``,
    ``((n,),) * ndim`` or ``((before, after),) * ndim`` with zeros on some axes (any of them
    an integer array), now and then a negative or float width NumPy refuses."""
    small = st.integers(0, 3)
    form = draw(st.sampled_from(["int", "one", "pair", "per-axis", "per-axis-one", "bad"]))
    if form == "int":
        w = draw(small)
    elif form == "one":
        w = (draw(small),)
    elif form == "pair":
        w = (draw(small), draw(small))
    elif form == "per-axis-one":
        w = tuple((draw(small),) for _ in range(ndim))
    elif form == "per-axis":
        w = tuple((draw(small), draw(small)) if draw(st.booleans()) else (0, 0)
                  for _ in range(ndim))
    else:
        w = draw(st.sampled_from([-1, (1, -1), 1.5, ((1, 1),) * (ndim + 1)]))
    return np.array(w) if form != "bad" and draw(st.booleans()) else w


_PAD_KWARGS = {"constant": [{}, {"constant_values": 7}, {"constant_values": ((1, 2),)}],
               "edge": [{}], "wrap": [{}], "empty": [{}],
               "linear_ramp": [{}, {"end_values": (5, -5)}],
               "maximum": [{}, {"stat_length": 2}], "minimum": [{}, {"stat_length": (1, 2)}],
               "median": [{}, {"stat_length": 2}], "mean": [{}, {"stat_length": 2}],
               "reflect": [{}, {"reflect_type": "odd"}],
               "symmetric": [{}, {"reflect_type": "odd"}]}


@given(data=st.data())
@pytest.mark.parametrize("mode", sorted(_PAD_KWARGS))
def test_pad_is_numpys(mode, data):
    """``np.pad`` in every mode: NumPy's values (a view of the padded shape, whose axes that
    are not padded still repeat; ``mean`` is NumPy's own, ``empty`` leaves values unset)."""
    view, ref = data.draw(views(dtype=data.draw(st.sampled_from(
        [np.dtype(d) for d in ("?", "i1", "u2", "i8", "f2", "f4", "f8", "c16")]))))
    width = data.draw(pad_widths(view.ndim))
    kwargs = data.draw(st.sampled_from(_PAD_KWARGS[mode]))
    got = outcome(np.pad, view, width, mode, **kwargs)
    expected = outcome(np.pad, ref, width, mode, **kwargs)
    if mode == "empty":  # (unset values: only the array's kind)
        assert got[0] == expected[0]
        if got[0] == "ok":
            assert got[1].shape == expected[1].shape and got[1].dtype == expected[1].dtype
        return
    lazy = mode != "mean" and view.ndim > 0 and view.size > 0
    same(got, expected, lazy)
    if lazy and got[0] == "ok":
        assert type(got[1]) is BroadcastView
        copies = mode in ("edge", "wrap", "reflect", "symmetric") and not kwargs
        for d in range(view.ndim):  # (an axis not padded, or padded by copies, repeats)
            if view.source.shape[d] == 1 < view.shape[d] and (
                    copies or got[1].shape[d] == view.shape[d]):
                assert got[1].source.shape[d] == 1, (d, got[1].source.shape)


def test_pad_keeps_the_repetition():
    """A batch of images of one colour per channel, padded on the spatial axes: the source
    grows by the padding of those axes only, the batch axis still repeats."""
    colours = np.arange(3.0).reshape(1, 3, 1, 1)
    batch = lazybcast.broadcast_to(colours, (64, 3, 224, 224))
    r = np.pad(batch, ((0, 0), (0, 0), (2, 2), (2, 2)), constant_values=-1.0)
    assert r.shape == (64, 3, 228, 228) and r.source.shape == (1, 3, 228, 228)
    np.testing.assert_array_equal(r[5].materialize(), np.pad(
        np.broadcast_to(colours[0], (3, 224, 224)), ((0, 0), (2, 2), (2, 2)),
        constant_values=-1.0))
    huge = lazybcast.broadcast_to(np.array([[2.5]]), (10**6, 10**6))  # 8 TB logical
    r = np.pad(huge, ((1, 2), (3, 0)), mode="edge")  # copies of the one value: still one
    assert r.shape == (10**6 + 3, 10**6 + 3) and r.source.shape == (1, 1)
    assert r[0, 0] == r[-1, -1] == 2.5
    small = lazybcast.broadcast_to(colours, (2, 3, 4, 4))  # a function as mode: NumPy's
    assert type(np.pad(small, 1, mode=lambda v, w, i, k: None)) is np.ndarray


@pytest.mark.parametrize("repeats", [np.array([], dtype=np.int64), [], np.array([], np.uint8)])
def test_repeat_of_an_empty_axis_with_no_repeats(repeats):
    """An empty integer array of repeats for an axis of size 0 gives NumPy's empty result
    (it raised "zero-size array to reduction operation maximum")."""
    view = lazybcast.broadcast_to(np.zeros((1, 3)), (0, 3))
    same(outcome(np.repeat, view, repeats, axis=0),
         outcome(np.repeat, np.broadcast_to(np.zeros((1, 3)), (0, 3)), repeats, axis=0))


def test_a_stacked_batch_keeps_its_broadcast_axes():
    """64 images that repeat one value per channel stack into a view of a (64, 3, 1, 1)
    source, and concatenating features along the last axis keeps the rows broadcast."""
    colours = np.arange(64 * 3, dtype=np.float32).reshape(64, 3, 1, 1)
    items = [lazybcast.broadcast_to(c, (3, 224, 224)) for c in colours]
    batch = np.stack(items)
    assert type(batch) is BroadcastView and batch.source.shape == (64, 3, 1, 1)
    np.testing.assert_array_equal(batch.materialize(),
                                  np.broadcast_to(colours, (64, 3, 224, 224)))
    a = lazybcast.broadcast_to(np.arange(3.0), (1000, 3))
    b = lazybcast.broadcast_to(np.array([7.0]), (1000, 2))
    r = np.concatenate([a, b], axis=1)
    assert r.source.shape == (1, 5)
    np.testing.assert_array_equal(r.source, [[0, 1, 2, 7, 7]])
    t = np.tile(a, (8, 2, 1))
    assert t.shape == (8, 2000, 3) and t.source.shape == (1, 1, 3)
    assert np.repeat(a, 5, axis=0).source.shape == (1, 3)


def test_results_are_new_arrays_as_numpys_are():
    """NumPy's tile, repeat and joins copy: writing into the caller's source afterwards
    changes none of their results (a flip is a view in both)."""
    s = np.arange(3.0)
    v = lazybcast.broadcast_to(s, (4, 3))
    results = [np.tile(v, (2, 1)), np.repeat(v, 2, axis=0), v.repeat(3, axis=1),
               np.stack([v, v]), np.concatenate([v, v])]
    before = [r.materialize() for r in results]
    s[:] = -1
    for r, b in zip(results, before):
        np.testing.assert_array_equal(r.materialize(), b)


def test_results_too_large_to_index_get_numpys_error():
    v = lazybcast.broadcast_to(np.array([1.0]), (3,))
    big = lazybcast.broadcast_to(np.array([1.0]), (2**29, 2**30))
    for func in (lambda x: np.tile(x, (2**40, 2**40)), lambda x: np.repeat(x, 2**62, axis=0),
                 lambda x: np.stack([x] * 64)):
        for x in (v, big):
            got = outcome(func, x)
            expected = outcome(func, np.asarray(x))
            assert got[0] == expected[0], (got, expected)
            if got[0] == "ok":  # (small enough: the lazy result)
                assert type(got[1]) is BroadcastView and got[1].shape == expected[1].shape
            else:
                assert got[1] is expected[1] or issubclass(got[1], (MemoryError, ValueError))


def test_repeat_along_a_broadcast_axis_allocates_nothing_per_repeat():
    v = lazybcast.broadcast_to(np.array([1.0]), (1000,))
    r = np.repeat(v, 10**9, axis=0)
    assert r.shape == (10**12,) and r.source.shape == (1,)


def test_arguments_numpy_refuses_are_refused():
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    with pytest.raises(TypeError):
        np.concatenate(arrays=[v, v])
    z = lazybcast.broadcast_to(np.array(5.0), ())
    assert np.stack([z, z]).source.tolist() == [5.0, 5.0]
    assert np.repeat(z, 3, axis=0).shape == (3,)
