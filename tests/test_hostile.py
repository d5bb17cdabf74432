"""Bad input never crashes: every public entry point, fuzzed with hypothesis over random and
malformed shapes, modes, axes, dtypes, layouts, indices and ``out=`` buffers, either returns
NumPy's values or raises ValueError/TypeError/IndexError with a message (see ``hostile.py`` for
the generators and the independent reference; ``fuzz/fuzz_entry_points.py`` runs the same cases
under atheris)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hostile
import lazybcast

drawers = st.data()

# Each case is cheap (small shapes), so these run more examples than the profile's default.
many = settings(max_examples=max(150, settings().max_examples))


@many
@given(drawers)
def test_broadcast_fuzz(data):
    d = hostile.HypothesisDrawer(data)
    data = hostile.gen_data(d)
    axes = hostile.gen_shape_like(d) if d.integer(0, 2) == 0 else None
    hostile.check_broadcast(data, hostile.gen_shape_like(d), axes, hostile.gen_mode(d),
                            hostile.gen_axis(d))


@many
@given(drawers)
def test_broadcast_well_formed_fuzz(data):
    """Mostly valid requests, so the success path of every mode is exercised too."""
    d = hostile.HypothesisDrawer(data)
    data = hostile.gen_array(d, max_rank=3, max_dim=3)
    mode = d.choice(hostile.MODES)
    nt = d.integer(0, 4)
    target = [d.choice((1, 2, 3, 0)) for _ in range(nt)]
    axes = sorted(d.integer(0, 3) for _ in range(data.ndim)) if mode == "explicit" else None
    axis = d.choice([-1, 0, 1]) if mode == "pdpd" else -1
    hostile.check_broadcast(data, target, axes, mode, axis)


@many
@given(drawers)
def test_broadcast_to_fuzz(data):
    d = hostile.HypothesisDrawer(data)
    hostile.check_broadcast_to(hostile.gen_data(d), hostile.gen_shape_like(d, allow_int=True))


@given(drawers)
def test_broadcast_arrays_fuzz(data):
    d = hostile.HypothesisDrawer(data)
    hostile.check_broadcast_arrays([hostile.gen_data(d) for _ in range(d.integer(0, 4))])


@given(drawers)
def test_broadcast_shapes_fuzz(data):
    d = hostile.HypothesisDrawer(data)
    shapes = [hostile.gen_shape_like(d, allow_int=True) for _ in range(d.integer(0, 4))]
    hostile.check_broadcast_shapes(shapes)


def _view(d):
    data = hostile.gen_array(d, max_rank=3, max_dim=4)
    extra = [d.choice((1, 2, 3)) for _ in range(d.integer(0, 2))]
    target = extra + [n if d.integer(0, 3) else (1 if n != 1 else 3) for n in data.shape]
    target = [t if n == 1 or n == t else n for n, t in zip((1,) * len(extra) + data.shape,
                                                            target)]
    return data, lazybcast.broadcast_to(data, target)


@many
@given(drawers)
def test_indexing_fuzz(data):
    d = hostile.HypothesisDrawer(data)
    _, view = _view(d)
    hostile.check_index(view, hostile.gen_key(d, view.shape))


@given(drawers)
def test_indexing_twice_fuzz(data):
    """Indexing a view that is itself the result of basic indexing."""
    d = hostile.HypothesisDrawer(data)
    _, view = _view(d)
    first = view[tuple(d.choice([slice(None), slice(None, None, -1), None, slice(1, None)])
                       for _ in range(min(view.ndim, 2)))]
    if not isinstance(first, lazybcast.BroadcastView):
        return
    hostile.check_index(first, hostile.gen_key(d, first.shape))


@many
@given(drawers)
def test_binary_fuzz(data):
    d = hostile.HypothesisDrawer(data)
    _, view = _view(d)
    hostile.check_binary(view, d)


@many
@given(drawers)
def test_materialize_fuzz(data):
    d = hostile.HypothesisDrawer(data)
    data, view = _view(d)
    hostile.check_materialize(view, hostile.gen_out(d, view.shape, view.dtype, data),
                              hostile.gen_threads(d))


@given(drawers)
def test_iter_batches_fuzz(data):
    d = hostile.HypothesisDrawer(data)
    data, view = _view(d)
    n = view.shape[0] if view.shape else 1
    batch = d.choice([1, 2, 3, n, n + 5, 0, -1, True, 2.0, None, np.int64(2), 2**70])
    shape = ((batch,) if hostile._is_int(batch) and 0 < batch < 100 else (1,)) + view.shape[1:]
    out = hostile.gen_out(d, shape, view.dtype, data)
    hostile.check_iter_batches(view, batch, out, d.boolean(), d.choice([0, 0, 1, 2, -1, True]))


@given(drawers)
def test_row_dataset_fuzz(data):
    d = hostile.HypothesisDrawer(data)
    _, view = _view(d)
    n = view.shape[0] if view.shape else 1
    i = d.choice([0, n - 1, -n, n, -n - 1, 2**70, True, 1.5, np.int64(0), None, "0"])
    indices = d.choice([[0], [n - 1, 0], [], [n], [1.5], [2**70], np.array([0, 0]), [[0]],
                        [True], "0", None, np.array([-1], dtype=np.int8), np.uint64([0])])
    hostile.check_row_dataset(view, i, indices)


@given(drawers)
def test_pickle_roundtrip_fuzz(data):
    d = hostile.HypothesisDrawer(data)
    _, view = _view(d)
    hostile.check_pickle(view)
    key = tuple(slice(None, None, d.choice([1, -1, 2])) for _ in range(view.ndim)) + (None,)
    hostile.check_pickle(view[key])


@many
@given(drawers)
def test_any_entry_point_fuzz(data):
    """The atheris harness's case generator, driven by hypothesis."""
    d = hostile.HypothesisDrawer(data)
    hostile.run_case(d)


@pytest.mark.parametrize("bad", [None, 3, np.ones(3), [1, 2], "view", lazybcast.broadcast_to(1, ())])
def test_row_dataset_rejects(bad):
    with pytest.raises((TypeError, ValueError), match="view"):
        lazybcast.RowDataset(bad)


def test_broadcast_view_cannot_be_constructed():
    with pytest.raises(TypeError, match="cannot be created directly"):
        lazybcast.BroadcastView(np.ones(3), (3,))


def test_broadcast_view_cannot_be_subclassed():
    """A subclass instance (made by ``__new__``, which a subclass cannot stop) was no view
    to the protocols, which dispatch on the exact type: ``x == x`` and ``x + x`` recursed
    until RecursionError."""
    with pytest.raises(TypeError, match="not an acceptable base type"):
        type("Sub", (lazybcast.BroadcastView,), {})


def test_object_elements_that_look_like_lazy_results():
    """An element that is a ``(ndarray, tuple)`` pair is returned as is, never wrapped."""
    src = np.empty(3, dtype=object)
    src[:] = [(np.arange(3), (5,)), (1, 2), "x"]
    view = lazybcast.broadcast_to(src, (2, 3))
    expected = np.broadcast_to(src, (2, 3))
    for key in [(0, 0), (1, 1), (-1, 2), (np.int64(1), -3)]:
        assert view[key] is expected[key]
