"""Layout changes of a view (``lazybcast._layout`` and the methods that call it) against NumPy
on the ``np.broadcast_to`` equivalents: the same values and the same exceptions (type and
message), and the result is a lazy view whenever NumPy's own result would be a view."""

import pickle

import numpy as np
import pytest
from _view_strategies import NUMPY_2_1, assert_lazy, assert_same, outcome, reshaped, views
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from lazybcast import BroadcastView, _layout


def assert_like_numpy(got, expected, view):
    """Same outcome as NumPy: an equal lazy view, or the same exception."""
    kind, value = expected
    if kind == "error":
        assert got[0] == "error", f"NumPy raised {value!r}, lazybcast returned {got[1]!r}"
        assert type(got[1]) is type(value), (got[1], value)
        assert str(got[1]) == str(value)
        return
    assert got[0] == "ok", got[1]
    assert_lazy(got[1], view, value)


axes_values = st.integers(-6, 6)


@given(pair=views(), data=st.data())
def test_transpose(pair, data):
    view, ref = pair
    n = view.ndim
    axes = data.draw(st.one_of(
        st.none(),
        st.permutations(range(n)).map(tuple),
        st.lists(axes_values, max_size=n + 1).map(tuple),
    ))
    assert_like_numpy(outcome(_layout.transpose, view, axes), outcome(np.transpose, ref, axes),
                      view)
    if axes is not None:
        assert_like_numpy(outcome(view.transpose, *axes),
                          outcome(ref.transpose, *axes), view)
        assert_like_numpy(outcome(view.transpose, axes), outcome(ref.transpose, axes), view)
    assert_like_numpy(outcome(lambda: view.T), outcome(lambda: ref.T), view)
    assert_like_numpy(outcome(view.transpose), outcome(ref.transpose), view)
    assert_like_numpy(outcome(lambda: view.mT), outcome(lambda: ref.mT), view)


@given(pair=views(), a=axes_values, b=axes_values)
def test_swapaxes_and_moveaxis(pair, a, b):
    view, ref = pair
    assert_like_numpy(outcome(view.swapaxes, a, b), outcome(ref.swapaxes, a, b), view)
    assert_like_numpy(outcome(_layout.moveaxis, view, a, b), outcome(np.moveaxis, ref, a, b),
                      view)
    assert_like_numpy(outcome(_layout.moveaxis, view, (a, b), (b, a)),
                      outcome(np.moveaxis, ref, (a, b), (b, a)), view)


@given(pair=views(), data=st.data())
def test_squeeze_and_expand_dims(pair, data):
    view, ref = pair
    axis = data.draw(st.one_of(st.none(), axes_values,
                               st.lists(axes_values, max_size=3).map(tuple)))
    assert_like_numpy(outcome(view.squeeze, axis), outcome(ref.squeeze, axis), view)
    if axis is not None:
        assert_like_numpy(outcome(_layout.expand_dims, view, axis),
                          outcome(np.expand_dims, ref, axis), view)


@given(pair=views(), data=st.data())
def test_broadcast_to_composes(pair, data):
    view, ref = pair
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
    tail = [data.draw(st.sampled_from([n, 1, 2])) if n == 1 else n for n in view.shape]
    if tail and data.draw(st.booleans()):
        tail[-1] = data.draw(st.integers(0, 3))  # sometimes not broadcastable
    shape = tuple(lead + tail)
    assert_like_numpy(outcome(_layout.broadcast_to, view, shape),
                      outcome(np.broadcast_to, ref, shape), view)


@given(pair=views(), data=st.data())
def test_flips_rotations_and_diagonals(pair, data):
    view, ref = pair
    axis = data.draw(st.one_of(st.none(), axes_values,
                               st.lists(axes_values, max_size=3).map(tuple)))
    got, expected = outcome(np.flip, view, axis), outcome(np.flip, ref, axis)
    if expected[0] == "ok" and type(expected[1]) is not np.ndarray:  # 0-d: NumPy's scalar
        assert type(got[1]) is type(expected[1])
        assert got[1] == expected[1] or (got[1] != got[1] and expected[1] != expected[1])
    else:
        assert_like_numpy(got, expected, view)
    for name in ("fliplr", "flipud"):
        assert_like_numpy(outcome(getattr(np, name), view), outcome(getattr(np, name), ref),
                          view)
    k = data.draw(st.integers(-5, 5))
    axes = data.draw(st.tuples(axes_values, axes_values))
    assert_like_numpy(outcome(np.rot90, view, k, axes), outcome(np.rot90, ref, k, axes), view)
    offset = data.draw(st.integers(-4, 4))
    a, b = data.draw(axes_values), data.draw(axes_values)
    assert_like_numpy(outcome(np.diagonal, view, offset, a, b),
                      outcome(np.diagonal, ref, offset, a, b), view)
    assert_like_numpy(outcome(view.diagonal, offset, a, b), outcome(ref.diagonal, offset, a, b),
                      view)


def test_the_array_passed_by_numpys_keyword():
    v = lazybcast.broadcast_to(np.arange(3.0), (2, 3))
    ref = np.asarray(v)
    for func, kwargs in ((np.flip, {"axis": 0}), (np.fliplr, {}), (np.flipud, {}),
                         (np.rot90, {})):
        got = func(m=v, **kwargs)
        assert type(got) is BroadcastView
        assert_same(np.asarray(got), func(m=ref, **kwargs))
    assert type(np.diagonal(a=v)) is BroadcastView
    with pytest.raises(TypeError):  # (positional only, as NumPy's)
        np.matrix_transpose(x=v)


@given(pair=views(dtypes=st.just(np.dtype(np.int32))), data=st.data())
def test_trace_is_numpys(pair, data):
    """Integer traces equal NumPy's exactly (a view when the result still repeats)."""
    view, ref = pair
    offset = data.draw(st.integers(-3, 3))
    a, b = data.draw(axes_values), data.draw(axes_values)
    dtype = data.draw(st.sampled_from([None, np.int64, np.int8]))
    got = outcome(view.trace, offset, a, b, dtype)
    expected = outcome(np.trace, ref, offset, a, b, dtype)
    assert got[0] == expected[0], (got, expected)
    if got[0] == "ok":
        g = got[1].materialize() if type(got[1]) is BroadcastView else got[1]
        assert type(g) is type(expected[1]) or isinstance(expected[1], np.ndarray)
        assert_same(np.asarray(g), np.asarray(expected[1]))
    else:
        assert type(got[1]) is type(expected[1])


@given(pair=views(), data=st.data())
def test_roll_rolls_the_source(pair, data):
    view, ref = pair
    shift = data.draw(st.one_of(st.integers(-7, 7), st.lists(st.integers(-7, 7), max_size=3)))
    axis = data.draw(st.one_of(axes_values, st.lists(axes_values, max_size=3).map(tuple)))
    got, expected = outcome(np.roll, view, shift, axis), outcome(np.roll, ref, shift, axis)
    if expected[0] == "ok":
        assert got[0] == "ok", got[1]
        assert type(got[1]) is BroadcastView
        assert got[1].source.size <= max(view.source.size, 1)
        assert_same(np.asarray(got[1]), expected[1])
    else:
        assert got[0] == "error" and type(got[1]) is type(expected[1]), (got, expected)
    flat = np.roll(view, 3)  # axis=None: NumPy's flat roll
    assert type(flat) is np.ndarray
    assert_same(flat, np.roll(ref, 3))


@NUMPY_2_1
@given(pair=views(), data=st.data())
def test_reshape(pair, data):
    view, ref = pair
    shape = data.draw(st.one_of(reshaped(view.shape), st.lists(st.integers(-1, 5), max_size=4)
                                .map(tuple)))
    order = data.draw(st.sampled_from(["C", "F", "A"]))
    copy = data.draw(st.sampled_from([None, False, True]))
    expected = outcome(ref.reshape, shape, order=order, copy=copy)
    got = outcome(view.reshape, shape, order=order, copy=copy)
    if expected[0] == "error":
        assert_like_numpy(got, expected, view)
        return
    assert got[0] == "ok", got[1]
    result = got[1]
    assert type(result) is BroadcastView
    assert_same(np.asarray(result), expected[1])
    lazy = outcome(ref.reshape, shape, order=order, copy=False)[0] == "ok"
    if copy is True:
        assert result.size == 0 or not np.shares_memory(result.source, view.source)
    if lazy:  # NumPy needs no copy: neither do we
        assert result.source.size <= max(view.source.size, 1)
        if copy is not True and result.source.size and view.source.size and result.size:
            assert np.shares_memory(result.source, view.source)
    else:  # only the groups of axes NumPy cannot re-stride are materialized
        assert result.source.size <= result.size
    # the positional spellings
    if type(shape) is tuple and len(shape) > 0:
        again = outcome(view.reshape, *shape, order=order, copy=copy)
        assert again[0] == "ok"
        assert_same(np.asarray(again[1]), expected[1])


@given(pair=views(), order=st.sampled_from(["C", "F", "A", "K"]))
def test_ravel_and_flatten(pair, order):
    view, ref = pair
    got = view.ravel(order)
    assert type(got) is BroadcastView
    assert_same(np.asarray(got), ref.ravel(order))
    if order != "K":
        flat = view.flatten(order)
        assert type(flat) is np.ndarray and flat.flags.writeable
        assert_same(flat, ref.flatten(order))


# -- the lazy rule of reshape, by example ----------------------------------------------------


def test_reshape_merging_broadcast_axes_is_lazy():
    v = lazybcast.broadcast_to(np.arange(3.0), (10**6, 1000, 3))  # 24 GB logical
    r = v.reshape(-1, 3, copy=False)
    assert r.shape == (10**9, 3) and r.source.shape == (1, 3)
    r = v.reshape(10**6, 10, 100, 3, copy=False)  # splitting a broadcast axis
    assert r.source.shape == (1, 1, 1, 3)
    assert np.shares_memory(r.source, v.source)


def test_reshape_splitting_a_real_axis_is_lazy():
    x = np.arange(24.0)[::-2]
    v = lazybcast.broadcast_to(x, (1000, 12))
    r = v.reshape(1000, 3, 4, copy=False)
    assert r.source.shape == (1, 3, 4)
    assert_same(np.asarray(r), np.broadcast_to(x, (1000, 12)).reshape(1000, 3, 4))


def test_reshape_copies_only_the_group_that_needs_it():
    x = np.arange(12).reshape(4, 1, 3)
    v = lazybcast.broadcast_to(x, (1000, 4, 5, 3))  # the 1000 rows and the 5 are broadcast
    with pytest.raises(ValueError, match="Unable to avoid creating a copy while reshaping"):
        v.reshape(1000, 60, copy=False)
    r = v.reshape(1000, 60)
    assert type(r) is BroadcastView
    assert r.source.shape == (1, 60)  # the 1000 rows stay broadcast
    ref = np.broadcast_to(x, (1000, 4, 5, 3)).reshape(1000, 60)
    assert_same(np.asarray(r), ref)
    assert not np.shares_memory(r.source, x)
    assert r.base is not x
    r = v.reshape(1000, 60, order="F")
    assert_same(np.asarray(r), np.broadcast_to(x, (1000, 4, 5, 3)).reshape(1000, 60, order="F"))


def test_reshape_mixed_real_and_broadcast_merge_copies():
    x = np.arange(3.0)
    v = lazybcast.broadcast_to(x, (4, 3))
    r = v.reshape(12)
    assert r.source.shape == (12,)
    assert_same(np.asarray(r), np.tile(x, 4))


@NUMPY_2_1
def test_reshape_argument_errors_are_numpys():
    v = lazybcast.broadcast_to(np.arange(6.0), (2, 6))
    a = np.broadcast_to(np.arange(6.0), (2, 6))
    for args, kwargs in [((5,), {}), ((-1, -1), {}), ((4, -1, 5), {}), ((12,), {"order": "K"}),
                         ((12,), {"order": "X"}), ((12,), {"copy": "yes"}), ((1.5, 8), {}),
                         (("a",), {})]:
        expected = outcome(a.reshape, *args, **kwargs)
        assert expected[0] == "error", args
        assert_like_numpy(outcome(v.reshape, *args, **kwargs), expected, v)
    with pytest.raises(TypeError, match="exactly 1 argument"):
        v.reshape()


def test_transpose_spellings():
    x = np.arange(6).reshape(2, 1, 3)
    v = lazybcast.broadcast_to(x, (2, 4, 3))
    ref = np.broadcast_to(x, (2, 4, 3))
    for args in [(), (None,), ((2, 0, 1),), ([2, 0, 1],), (2, 0, 1), (-1, 0, 1)]:
        assert_lazy(v.transpose(*args), v, ref.transpose(*args))
    with pytest.raises(np.exceptions.AxisError):
        v.transpose(0, 1, 3)
    with pytest.raises(ValueError, match="repeated axis"):
        v.transpose(0, 0, 1)
    assert v.T.source.shape == (3, 1, 2)
    with pytest.raises(ValueError, match="matrix transpose"):
        lazybcast.broadcast_to(np.arange(3), (3,)).mT


def test_axis_errors_are_numpys_axis_error():
    v = lazybcast.broadcast_to(np.arange(3), (2, 3))
    for call in (lambda: v.swapaxes(0, 2), lambda: v.squeeze(5),
                 lambda: _layout.expand_dims(v, 4), lambda: _layout.moveaxis(v, 0, -3)):
        with pytest.raises(np.exceptions.AxisError) as info:
            call()
        assert isinstance(info.value, ValueError) and isinstance(info.value, IndexError)
    with pytest.raises(ValueError, match="cannot select an axis to squeeze"):
        v.squeeze(0)


def test_view_of_a_view_stays_compact():
    v = lazybcast.broadcast_to(np.arange(4.0), (1000, 4))
    w = _layout.broadcast_to(v, (50, 1000, 4))
    assert w.source.shape == (1, 1, 4) and w.base is v.base
    assert np.shares_memory(w.source, v.source)
    with pytest.raises(ValueError):
        _layout.broadcast_to(v, (1000, 5))


def test_view_as_reinterprets_bytes():
    x = np.arange(4, dtype=np.float32)
    v = lazybcast.broadcast_to(x, (1000, 4))
    w = v.view(np.uint16)
    assert w.source.shape == (1, 8)
    assert_same(np.asarray(w), np.broadcast_to(x, (1000, 4)).view(np.uint16))
    with pytest.raises(ValueError):
        lazybcast.broadcast_to(np.float32(1), (3, 4)).view(np.uint16)  # last axis broadcast


def test_layout_results_pickle_with_their_values():
    x = np.arange(6.0).reshape(2, 1, 3)
    for v in (lazybcast.broadcast_to(x, (2, 5, 3)).T, lazybcast.broadcast_to(x, (2, 5, 3))
              .reshape(10, 3)):
        back = pickle.loads(pickle.dumps(v))
        assert_same(np.asarray(back), np.asarray(v))


@NUMPY_2_1  # the oracle, ndarray.reshape(copy=), is NumPy 2.1's
@pytest.mark.parametrize("shape", [(4, 4), (1, 4, 4), (3, 4, 4)])
@pytest.mark.parametrize("copy", [None, False, True])
def test_reshape_order_a_is_decided_before_the_copy(shape, copy):
    """'A' reads F order on an F-contiguous view, also with copy=True (review F14)."""
    src = np.asfortranarray(np.arange(16).reshape(4, 4))
    src = src[None] if len(shape) == 3 else src
    n, v = np.broadcast_to(src, shape), lazybcast.broadcast_to(src, shape)
    try:
        expected = n.reshape(-1, order="A", copy=copy)
    except ValueError:
        with pytest.raises(ValueError):
            v.reshape(-1, order="A", copy=copy)
    else:
        np.testing.assert_array_equal(np.asarray(v.reshape(-1, order="A", copy=copy)), expected)
