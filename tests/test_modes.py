"""Every broadcast mode against NumPy: values, shapes, acceptance, and zero-copy wrapping.

References (see ``_core_strategies``): numpy mode is ``np.broadcast_to``; explicit and pdpd are
``np.broadcast_to(x.reshape(aligned), out)`` with ``aligned`` worked out from the specification;
bidirectional is ``np.broadcast_to(x, np.broadcast_shapes(x.shape, target))``.
"""

import numpy as np
import pytest
from _core_strategies import (
    MODES,
    assert_same,
    call_broadcast,
    dtypes,
    expected_values,
    laid_out,
    reference,
    requests,
    shapes,
)
from hypothesis import given
from hypothesis import strategies as st

import lazybcast


@pytest.mark.parametrize("mode", MODES)
@given(data=st.data())
def test_values_match_numpy(mode, data):
    shape, target, mapping, mode, axis = data.draw(requests(mode))
    dtype = data.draw(dtypes)
    x = data.draw(laid_out(shape, dtype))
    expected = expected_values(x, target, mapping, mode, axis)
    v = call_broadcast(x, target, mapping, mode, axis)
    assert isinstance(v, lazybcast.BroadcastView)
    assert v.shape == expected.shape
    assert v.mode == mode
    assert v.base is x
    assert_same(v.materialize(), expected)
    assert_same(np.asarray(v), expected)
    if x.size and v.size:
        assert np.shares_memory(np.asarray(v), x), "the view must not copy its data"


@given(data=st.data())
def test_broadcast_to_matches_numpy(data):
    shape, target, _, _, _ = data.draw(requests("numpy"))
    x = data.draw(laid_out(shape, data.draw(dtypes)))
    v = lazybcast.broadcast_to(x, target)
    assert v.mode == "numpy"
    assert_same(v.materialize(), np.broadcast_to(x, target))


def _accepted_or_refused(data_shape, target, mapping, mode, axis):
    """``(x, view, expected)`` for a request the reference accepts; for one it refuses, check
    the ValueError and return ``(x, None, None)``."""
    expected = reference(data_shape, target, mapping, mode, axis)
    x = np.zeros(data_shape, dtype=np.int16)
    if expected is None:
        with pytest.raises(ValueError):
            call_broadcast(x, target, mapping, mode, axis)
        return x, None, None
    return x, call_broadcast(x, target, mapping, mode, axis), expected


@given(
    data_shape=shapes(0, 4, st.integers(0, 3)),
    target=shapes(0, 5, st.integers(0, 3)),
    mapping=st.lists(st.integers(-1, 5), max_size=4).map(tuple),
    axis=st.integers(-2, 5),
    mode=st.sampled_from(MODES),
)
def test_acceptance_matches_the_rules(data_shape, target, mapping, axis, mode):
    """Any request: an error exactly when the specification says so, else its shapes."""
    mapping = mapping if mode == "explicit" else None
    axis = axis if mode == "pdpd" else -1
    x, v, expected = _accepted_or_refused(data_shape, target, mapping, mode, axis)
    if v is None:
        return
    out, aligned = expected
    assert v.shape == out
    if x.size:  # NumPy gives empty arrays zero strides; then the source may be narrower
        assert v.source.shape == aligned
    assert_same(v.materialize(), np.broadcast_to(x.reshape(aligned), out))


@st.composite
def near_valid_requests(draw, mode):
    """A valid request with up to three small mutations: mostly invalid, close to the edge."""
    data_shape, target, mapping, mode, axis = draw(requests(mode))
    parts = {"data": list(data_shape), "target": list(target), "mapping": list(mapping or [])}
    for _ in range(draw(st.integers(1, 3))):
        what = draw(st.sampled_from(["data", "target", "mapping", "axis", "grow", "shrink", "dup"]))
        if what == "axis":
            axis = draw(st.integers(-2, 5))
            continue
        if what == "dup":  # repeat a neighbouring entry (a repeated or unsorted mapping)
            seq = parts[draw(st.sampled_from(["mapping", "data", "target"]))]
            if len(seq) >= 2:
                i = draw(st.integers(1, len(seq) - 1))
                swap = draw(st.booleans())
                seq[i - 1 : i + 1] = [seq[i], seq[i - 1]] if swap else [seq[i], seq[i]]
            continue
        name = draw(st.sampled_from(["data", "target", "mapping"]))
        seq = parts[what] if what in parts else parts[name]
        if what == "grow":
            seq.insert(draw(st.integers(0, len(seq))), draw(st.integers(-1, 4)))
        elif what == "shrink" and seq:
            del seq[draw(st.integers(0, len(seq) - 1))]
        elif seq:
            seq[draw(st.integers(0, len(seq) - 1))] = draw(st.sampled_from([0, 0, 1, 1, 2, 3, -1]))
    mapping = tuple(parts["mapping"]) if mode == "explicit" else None
    data_shape = tuple(max(n, 0) for n in parts["data"])
    target = tuple(max(n, 0) for n in parts["target"])
    return data_shape, target, mapping, mode, axis if mode == "pdpd" else -1


@pytest.mark.parametrize("mode", MODES)
@given(data=st.data())
def test_acceptance_at_the_edges(mode, data):
    data_shape, target, mapping, mode, axis = data.draw(near_valid_requests(mode))
    x, v, expected = _accepted_or_refused(data_shape, target, mapping, mode, axis)
    if v is None:
        return
    assert v.shape == expected[0]
    assert_same(v.materialize(), np.broadcast_to(x.reshape(expected[1]), expected[0]))


@given(data=st.data())
def test_explicit_mapping_faults(data):
    """One fault in an otherwise valid axes_mapping: counted from the end, repeated, swapped,
    out of range or of the wrong length. The data stays compatible with the target, so only
    the mapping rule can reject it."""
    shape, target, mapping, _, _ = data.draw(requests("explicit").filter(lambda r: r[2]))
    nt = len(target)
    mapping = list(mapping)
    fault = data.draw(st.sampled_from(["negative", "repeat", "swap", "range", "extra", "missing"]))
    i = data.draw(st.integers(0, len(mapping) - 1))
    if fault == "negative":
        mapping[i] -= nt  # the same axis, Python-style
    elif fault == "repeat" and len(mapping) > 1:
        j = i - 1 if i else 1
        mapping[i] = mapping[j]
        shape = tuple(1 for _ in shape)
    elif fault == "swap" and len(mapping) > 1:
        j = i - 1 if i else 1
        mapping[i], mapping[j] = mapping[j], mapping[i]
        shape = tuple(1 for _ in shape)
    elif fault == "range":
        mapping[i] = nt + data.draw(st.integers(0, 3))
    elif fault == "extra":
        mapping.append(nt)
    else:
        mapping.pop(i)
    if reference(shape, target, tuple(mapping), "explicit") is not None:
        return  # e.g. a swap of two axes that leaves one mapping entry (len 1)
    with pytest.raises(ValueError, match="axes_mapping"):
        lazybcast.broadcast(np.zeros(shape), target, mapping, mode="explicit")


@given(data_shape=shapes(0, 4, st.integers(0, 3)), target=shapes(0, 5, st.integers(0, 3)))
def test_broadcast_to_acceptance_matches_numpy(data_shape, target):
    x = np.ones(data_shape, dtype=np.uint8)
    try:
        expected = np.broadcast_to(x, target)
    except ValueError:
        with pytest.raises(ValueError):
            lazybcast.broadcast_to(x, target)
        return
    assert_same(lazybcast.broadcast_to(x, target).materialize(), expected)


@pytest.mark.parametrize(
    "data",
    [
        5,
        2.5,
        True,
        1 + 2j,
        [1, 2, 3],
        (1.0, 2.0),
        [[1], [2]],
        np.float32(3),
        b"abc",
        "xy",
        [None, "a"],
        np.arange(3).tolist(),
    ],
    ids=repr,
)
def test_array_likes_as_numpy_reads_them(data):
    x = np.asarray(data)
    target = (2,) + x.shape
    v = lazybcast.broadcast(data, list(target))
    assert_same(v.materialize(), np.broadcast_to(x, target))
    assert isinstance(v.base, np.ndarray)


def test_zero_d_data_every_mode():
    x = np.array(7, dtype=np.int32)
    modes = (("numpy", None), ("explicit", []), ("bidirectional", None), ("pdpd", None))
    for mode, mapping in modes:
        v = lazybcast.broadcast(x, [2, 3], mapping, mode=mode)
        assert_same(v.materialize(), np.full((2, 3), 7, dtype=np.int32))
        v = lazybcast.broadcast(x, [], mapping, mode=mode)
        assert v.shape == ()
        assert_same(v.materialize(), x)


def test_zero_size_dims():
    x = np.ones((1, 3))
    assert lazybcast.broadcast(x, [0, 3]).materialize().shape == (0, 3)
    assert lazybcast.broadcast(x, [2, 0, 3]).materialize().shape == (2, 0, 3)
    assert lazybcast.broadcast(np.ones((0, 1)), [0, 4], mode="bidirectional").shape == (0, 4)
    assert lazybcast.broadcast(np.ones((1, 4)), [0, 1], mode="bidirectional").shape == (0, 4)
    assert lazybcast.broadcast(np.ones((0,)), [1], mode="bidirectional").shape == (0,)
    assert lazybcast.broadcast(np.ones(1), [5, 0], [0], mode="explicit").shape == (5, 0)
    assert lazybcast.broadcast(np.ones(0), [5, 0], [1], mode="explicit").shape == (5, 0)
    assert lazybcast.broadcast(np.ones(0), [2, 1], mode="pdpd").shape == (2, 0)
    assert lazybcast.broadcast(np.ones(1), [2, 0], mode="pdpd").shape == (2, 0)
    with pytest.raises(ValueError):
        lazybcast.broadcast(np.ones(2), [0])  # numpy mode never shrinks a dim
    with pytest.raises(ValueError):
        lazybcast.broadcast(np.ones(0), [3], mode="pdpd")


@given(data=st.data())
def test_broadcast_of_a_view_is_numpys_of_its_array(data):
    """Every mode takes a view as its data, as it takes ``np.asarray(view)`` (what NumPy's
    ``np.broadcast_to(view, ...)`` reads): the same values, and a view of the first view's
    data whose source is no larger than the first's."""
    shape, target, mapping, mode, axis = data.draw(requests())
    inner = tuple(n if data.draw(st.booleans()) else 1 for n in shape)  # the first view's data
    x = data.draw(laid_out(inner, data.draw(dtypes)))
    if data.draw(st.booleans(), label="made by a basic key"):  # (its source made lazily)
        first = lazybcast.broadcast_to(x, (2,) + shape)[-1, ...]
    else:
        first = lazybcast.broadcast_to(x, shape)
    expected = expected_values(np.broadcast_to(x, shape), target, mapping, mode, axis)
    v = call_broadcast(first, target, mapping, mode, axis)
    assert isinstance(v, lazybcast.BroadcastView) and v.mode == mode
    assert v.base is x
    assert v.source.size <= max(first.source.size, 1)
    assert_same(v.materialize(), expected)
    if x.size and v.size:
        assert np.shares_memory(np.asarray(v), x), "the view must not copy its data"
    arrays = data.draw(st.sampled_from([(first, np.ones(shape[-1:])), (np.ones(()), first),
                                        (first, first[None])]))
    got = lazybcast.broadcast_arrays(*arrays)
    for g, e, a in zip(got, np.broadcast_arrays(*[np.asarray(a) for a in arrays]), arrays):
        assert g.base is (x if isinstance(a, lazybcast.BroadcastView) else a)
        assert_same(g.materialize(), e)


def test_broadcast_of_a_memmapped_view_pickles_by_reference(tmp_path):
    import pickle

    mm = np.memmap(tmp_path / "x.bin", dtype=np.float32, mode="w+", shape=(1000,))
    mm[:] = np.arange(1000)
    first = lazybcast.broadcast_to(mm, (50, 1000))
    v = lazybcast.broadcast_to(first, (7, 50, 1000))
    assert v.base is mm
    blob = pickle.dumps(v)
    assert len(blob) < 1000, len(blob)  # the path and a region, not 4 kB of floats
    np.testing.assert_array_equal(pickle.loads(blob), np.broadcast_to(np.arange(1000.0), v.shape))


# -- broadcast_arrays and broadcast_shapes: exactly NumPy -----------------------------------------


@st.composite
def compatible_shapes(draw, max_args=6):
    """Shapes (sometimes plain ints) that broadcast together, zero-size dims included."""
    out = draw(shapes(0, 4))
    result = []
    for _ in range(draw(st.integers(0, max_args))):
        k = draw(st.integers(0, len(out)))
        shape = tuple(d if draw(st.booleans()) else 1 for d in out[len(out) - k:])
        if len(shape) == 1 and draw(st.booleans()):
            shape = shape[0]  # an int as a shape
        result.append(shape)
    return result


any_shape = st.one_of(st.integers(0, 3), shapes(0, 4, st.integers(0, 3)))


@given(shape_list=st.one_of(compatible_shapes(), st.lists(any_shape, max_size=5)))
def test_broadcast_shapes_is_numpy(shape_list):
    try:
        expected = np.broadcast_shapes(*shape_list)
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        with pytest.raises(type(e)):
            lazybcast.broadcast_shapes(*shape_list)
        return
    got = lazybcast.broadcast_shapes(*shape_list)
    assert got == expected
    assert type(got) is tuple and all(type(n) is int for n in got)


@pytest.mark.parametrize(
    "bad",
    [((3,), (4,)), ((2, 3), (3, 2)), ((-1,),), ((2.0,),),
     pytest.param((None,), marks=pytest.mark.skipif(
         np.lib.NumpyVersion(np.__version__) < "2.3.0",
         reason="NumPy before 2.3 reads a None shape as () (measured: 2.0.2, 2.1.3, 2.2.6); "
                "lazybcast follows NumPy 2.3+, which raises TypeError")),
     ("ab",), ([[1]],), ((True,),)],
    ids=repr,
)
def test_broadcast_shapes_errors_like_numpy(bad):
    with pytest.raises(Exception) as expected:
        np.broadcast_shapes(*bad)
    with pytest.raises(type(expected.value)):
        lazybcast.broadcast_shapes(*bad)


def test_broadcast_shapes_edge_cases():
    assert lazybcast.broadcast_shapes() == ()
    assert lazybcast.broadcast_shapes(3, (2, 1)) == (2, 3)
    assert lazybcast.broadcast_shapes(np.int64(4)) == (4,)
    assert lazybcast.broadcast_shapes((0,), (1,)) == (0,)
    assert lazybcast.broadcast_shapes((1, 0), (5, 1)) == (5, 0)
    many = [(1,) * 5 + (i % 3 + 1 if i % 3 == 2 else 1,) for i in range(40)] + [(7, 1, 1, 1, 1, 3)]
    assert lazybcast.broadcast_shapes(*many) == np.broadcast_shapes(*many)


@given(data=st.data(), shape_list=compatible_shapes())
def test_broadcast_arrays_is_numpy(data, shape_list):
    inputs = []
    for s in shape_list:
        s = (s,) if isinstance(s, int) else s
        inputs.append(data.draw(laid_out(s, data.draw(dtypes))))
    expected = np.broadcast_arrays(*inputs)
    got = lazybcast.broadcast_arrays(*inputs)
    assert type(got) is tuple and len(got) == len(inputs)
    for g, e, x in zip(got, expected, inputs):
        assert isinstance(g, lazybcast.BroadcastView)
        assert g.base is x
        assert_same(g.materialize(), e)


def test_broadcast_arrays_edge_cases():
    assert lazybcast.broadcast_arrays() == ()
    (one,) = lazybcast.broadcast_arrays(np.arange(3))
    assert_same(one.materialize(), np.arange(3))
    # Python scalars and lists, as NumPy takes them
    got = lazybcast.broadcast_arrays(1.5, [[1], [2]], np.zeros((0, 1, 3)))
    for g, e in zip(got, np.broadcast_arrays(1.5, [[1], [2]], np.zeros((0, 1, 3)))):
        assert_same(g.materialize(), e)
    assert got[0].shape == (0, 2, 3)


def test_broadcast_arrays_many_arguments():
    rng = np.random.default_rng(0)
    arrays = []
    for i in range(40):
        shape = [1, 1, 1]
        shape[i % 3] = (2, 3, 4)[i % 3]
        arrays.append(rng.integers(0, 100, shape[i % 2 :]))
    got = lazybcast.broadcast_arrays(*arrays)
    expected = np.broadcast_arrays(*arrays)
    assert len(got) == 40
    for g, e in zip(got, expected):
        assert_same(g.materialize(), e)


@pytest.mark.parametrize(
    "arrays",
    [
        (np.ones(3), np.ones(4)),
        (np.ones((2, 3)), np.ones((3, 2))),
        (np.ones(2), 1, np.ones((3, 1, 5))),
    ],
)
def test_broadcast_arrays_mismatch_like_numpy(arrays):
    with pytest.raises(Exception) as expected:
        np.broadcast_arrays(*arrays)
    with pytest.raises(type(expected.value)):
        lazybcast.broadcast_arrays(*arrays)
