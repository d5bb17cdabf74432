"""Pickling: round trips for every mode, sliced views and object dtype; a pickle carries the
compact source and the parameters, never the materialized data."""

import pickle

import numpy as np
import pytest
from _core_strategies import MODES, assert_same, dtypes, expected_values, laid_out, requests
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from lazybcast import _view

PROTOCOLS = list(range(pickle.HIGHEST_PROTOCOL + 1))


def _call(x, target, mapping, mode, axis):
    if mode == "pdpd":
        return lazybcast.broadcast(x, target, mode=mode, axis=axis)
    return lazybcast.broadcast(x, target, mapping, mode=mode)


def _roundtrip(v, protocol=pickle.HIGHEST_PROTOCOL):
    return pickle.loads(pickle.dumps(v, protocol=protocol))


@pytest.mark.parametrize("mode", MODES)
@given(data=st.data(), protocol=st.sampled_from(PROTOCOLS))
def test_roundtrip_every_mode(mode, data, protocol):
    shape, target, mapping, mode, axis = data.draw(requests(mode))
    x = data.draw(laid_out(shape, data.draw(dtypes)))
    v = _call(x, target, mapping, mode, axis)
    r = _roundtrip(v, protocol)
    assert type(r) is lazybcast.BroadcastView
    assert (r.shape, r.dtype, r.mode, r.ndim, r.size, r.nbytes) == (
        v.shape, v.dtype, v.mode, v.ndim, v.size, v.nbytes)
    for n, a, b in zip(v.shape, r.strides, v.strides):
        assert (a == 0) == (b == 0) or n <= 1  # the same axes are broadcast
    if x.size and all(s or n <= 1 for n, s in zip(x.shape, x.strides)):
        # (a stride-0 input travels collapsed to its distinct elements; its base shape is lost)
        assert r.base.shape == x.shape
    expected = expected_values(x, target, mapping, mode, axis)
    if x.dtype.hasobject:
        assert r.materialize().tolist() == expected.tolist()  # equal copies of the objects
    else:
        assert_same(r.materialize(), expected)


def test_roundtrip_keeps_source_shape_in_repr():
    x = np.arange(6, dtype=np.int16).reshape(2, 1, 3)
    v = lazybcast.broadcast_to(x, (4, 2, 5, 3))
    assert repr(_roundtrip(v)) == repr(v)
    v = lazybcast.broadcast(np.ones(16), [1, 16, 50, 50], [1], mode="explicit")
    assert repr(_roundtrip(v)) == repr(v)


@pytest.mark.parametrize(
    "key",
    [np.s_[1:], np.s_[::-1, 2], np.s_[..., ::2], np.s_[:, None, 1:3], np.s_[0], np.s_[1:1],
     np.s_[::-2, :, -1:, ::3]],
    ids=repr,
)
def test_roundtrip_sliced_views(key):
    x = np.arange(12.0).reshape(3, 1, 4)
    v = lazybcast.broadcast_to(x, (2, 3, 5, 4))
    s = v[key]
    expected = np.broadcast_to(x, (2, 3, 5, 4))[key]
    assert isinstance(s, lazybcast.BroadcastView)
    r = _roundtrip(s)
    assert r.shape == expected.shape
    assert_same(r.materialize(), expected)


def test_sliced_view_pickle_is_small():
    big = np.arange(10**6, dtype=np.float64)
    v = lazybcast.broadcast_to(big, (1000, 10**6))[:, 10:15]
    data = pickle.dumps(v)
    assert len(data) < 2000, len(data)
    r = pickle.loads(data)
    assert_same(r.materialize(), np.broadcast_to(big, (1000, 10**6))[:, 10:15])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_object_dtype_roundtrip(protocol):
    x = np.array([None, "s", (1, 2), {"k": [3]}], dtype=object).reshape(2, 2)[:, ::-1]
    v = lazybcast.broadcast(x, [3, 2, 2], mode="bidirectional")
    r = _roundtrip(v, protocol)
    assert r.materialize().tolist() == np.broadcast_to(x, (3, 2, 2)).tolist()


@pytest.mark.parametrize("mode", MODES)
def test_pickle_size_is_that_of_the_source(mode):
    x = np.arange(10.0)
    target, mapping = [10**8, 10], None
    if mode == "explicit":
        mapping = [1]
    v = lazybcast.broadcast(x, target, mapping, mode=mode)
    assert v.size == 10**9
    for protocol in PROTOCOLS:
        data = pickle.dumps(v, protocol=protocol)
        assert len(data) < 2000, (protocol, len(data))
    r = pickle.loads(data)
    assert r.shape == (10**8, 10)
    np.testing.assert_array_equal(r[12345678].materialize(), x)


def test_pickle_of_a_zero_stride_source_stays_compact():
    x = np.broadcast_to(np.arange(4.0), (10**7, 4))  # 320 MB logically, 32 B held
    v = lazybcast.broadcast_to(x, (3, 10**7, 4))
    assert len(pickle.dumps(v)) < 2000
    np.testing.assert_array_equal(_roundtrip(v)[2, -1].materialize(), np.arange(4.0))


def test_unpickling_validates_its_input():
    """A crafted pickle cannot build a view whose stride map leaves its buffer."""
    src = np.arange(3.0)
    with pytest.raises(ValueError):
        _view._rebuild(src, (5,), "numpy")  # axis of 3 cannot become 5
    with pytest.raises(ValueError):
        _view._rebuild(src, (2, 3), "numpy")  # rank mismatch
    with pytest.raises(ValueError):
        _view._rebuild(src.reshape(1, 3), (-1, 3), "numpy")
    with pytest.raises(ValueError):
        _view._rebuild(src, (3,), "nonsense")
    with pytest.raises(TypeError):
        _view._rebuild(src.tolist(), (3,), "numpy")
    with pytest.raises(TypeError):
        _view._rebuild(src, [3], "numpy")
    with pytest.raises(TypeError):
        _view._rebuild(src, (3.0,), "numpy")
    with pytest.raises(ValueError):
        _view._rebuild(src.reshape(1, 3), (2**62, 3), "numpy")
    with pytest.raises(ValueError):
        _view._rebuild(src, (3,), "numpy", (2, 2))  # base shape of another size


@pytest.mark.parametrize("make", [
    lambda v: v,
    lambda v: v.T,
    lambda v: v[:, :, ::-1],
    lambda v: v[:, ::-1],
    lambda v: v.transpose(0, 2, 1),
])
def test_base_survives_pickling_in_its_own_order(make):
    """A view whose source reads its base in another order (transposed, reversed) must not
    bring its base back scrambled: the base is either rebuilt with its own elements or
    dropped (the source alone travels)."""
    data = np.arange(12.0).reshape(3, 4)
    view = make(lazybcast.broadcast_to(data, (2, 3, 4)))
    back = pickle.loads(pickle.dumps(view))
    np.testing.assert_array_equal(np.asarray(back), np.asarray(view))
    if back.base.shape == data.shape:
        np.testing.assert_array_equal(back.base, data)
