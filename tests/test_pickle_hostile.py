"""Pickles are untrusted input: hand-crafted payloads aimed at ``lazybcast._view._rebuild`` (the
reducer every BroadcastView pickles to) either raise ValueError/TypeError or give a view whose
every reachable element lies inside its source, checked against ``np.broadcast_to``.

(Unpickling in general can call any importable function; what lazybcast promises is that its own
reducer adds no way to build an out-of-bounds view, whatever arguments a payload hands it.)
"""

import pickle
import pickletools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from lazybcast import BroadcastView
from lazybcast._view import _rebuild


class Payload:
    """Pickles as a call ``func(*args)`` (and optional BUILD ``state``), as an attacker writes."""

    def __init__(self, func, args, state=None):
        self.func, self.args, self.state = func, args, state

    def __reduce__(self):
        if self.state is None:
            return (self.func, self.args)
        return (self.func, self.args, self.state)


def crafted(*args, state=None):
    data = pickle.dumps(Payload(_rebuild, args, state))
    assert b"_rebuild" in data and b"Payload" not in data  # a plain call of the real reducer
    return data


def assert_in_bounds(view):
    """Every axis of ``view`` either walks the source's own axis or repeats one element, and the
    values are exactly what NumPy's validated broadcast gives."""
    src = view.source
    assert isinstance(src, np.ndarray) and src.ndim == view.ndim
    for n, s, stride, sstride in zip(view.shape, src.shape, view.strides, src.strides):
        assert s in (1, n)
        assert stride == (sstride if s == n and n != 1 else 0)
    expected = np.broadcast_to(src, view.shape)
    np.testing.assert_array_equal(view.materialize(), expected)
    if view.size:
        np.testing.assert_array_equal(view[(-1,) * view.ndim], expected[(-1,) * view.ndim])


SRC = np.arange(6, dtype=np.int32).reshape(2, 3)

BAD = [
    # (args to _rebuild, why it must fail)
    ((SRC.tolist(), (2, 3), "numpy"), "source is a list"),
    ((b"\x00" * 24, (2, 3), "numpy"), "source is bytes"),
    ((bytearray(24), (2, 3), "numpy"), "source is a bytearray"),
    ((np.ma.masked_array(SRC), (2, 3), "numpy"), "an ndarray subclass"),
    ((np.memmap, (2, 3), "numpy"), "a class, not an array"),
    ((np.recarray((2, 3), dtype=[("a", "i4")]), (2, 3), "numpy"), "an ndarray subclass"),
    ((None, (2, 3), "numpy"), "no source"),
    ((Payload(np.ndarray, ((100,), "i8", bytearray(8))), (100,), "numpy"),
     "source claims more than its buffer"),
    ((Payload(np.ndarray, ((2,), "i8", bytearray(16), 0, (2**40,))), (2,), "numpy"),
     "source strides past its buffer"),
    ((SRC, (2, 4), "numpy"), "shape bigger than the source"),
    ((SRC, (5, 3), "numpy"), "shape bigger than the source"),
    ((SRC, (2, 2), "numpy"), "shape smaller than the source on an axis"),
    ((SRC, (-2, 3), "numpy"), "negative size"),
    ((SRC[:1], (-1, 3), "numpy"), "negative size against a size-1 axis"),
    ((SRC, (2, 3, 1), "numpy"), "rank mismatch"),
    ((SRC, (6,), "numpy"), "rank mismatch, same size"),
    ((SRC, (), "numpy"), "rank mismatch"),
    ((SRC[:1, :1], (2**62, 2**62), "numpy"), "element count beyond intp"),
    ((SRC[:1, :1], (2**31, 2**31), "numpy"), "byte count beyond intp"),
    ((SRC[:1, :1], (2**64, 1), "numpy"), "a size beyond intp"),
    ((SRC[:1, :1], (2**200, 3), "numpy"), "a size beyond intp"),
    ((SRC, [2, 3], "numpy"), "shape is a list"),
    ((SRC, (2.0, 3.0), "numpy"), "float sizes"),
    ((SRC, (np.int64(2), 3), "numpy"), "numpy ints"),
    ((SRC, (True, 3), "numpy"), "bool size"),
    ((SRC, "23", "numpy"), "shape is a str"),
    ((SRC, None, "numpy"), "no shape"),
    ((SRC, (2, 3), "evil"), "bad mode"),
    ((SRC, (2, 3), None), "no mode"),
    ((SRC, (2, 3), 1), "mode is an int"),
    ((SRC, (2, 3), b"numpy"), "mode is bytes"),
    ((SRC, (2, 3), "numpy", (7,)), "base_shape of the wrong size"),
    ((SRC, (2, 3), "numpy", (2**63, 0)), "base_shape beyond intp"),
    ((SRC, (2, 3), "numpy", [6]), "base_shape is a list"),
    ((SRC, (2, 3), "numpy", (6.0,)), "float base_shape"),
    ((SRC, (2, 3), "numpy", (-7,)), "negative base_shape"),
    ((SRC, (2, 3), "numpy", "6"), "base_shape is a str"),
]


@pytest.mark.parametrize("args, why", BAD, ids=[why for _, why in BAD])
def test_malicious_rebuild_payload_raises_cleanly(args, why):
    data = crafted(*args)
    with pytest.raises((ValueError, TypeError)) as info:
        pickle.loads(data)
    assert str(info.value)


def test_too_many_or_too_few_arguments():
    for args in [(), (SRC,), (SRC, (2, 3), "numpy", None, "extra")]:
        with pytest.raises(TypeError):
            pickle.loads(crafted(*args))


@pytest.mark.parametrize("args", [
    (SRC, (2, 3), "numpy"),
    (SRC, (2, 3), "explicit"),
    (SRC, (2, 3), "numpy", (3, 2)),
    (SRC, (2, 3), "numpy", (6,)),
    (SRC[:, ::-2], (2, 2), "pdpd"),
    (SRC[:1], (0, 3), "numpy"),
    (SRC[:1, :1], (4, 5), "bidirectional"),
    (np.broadcast_to(SRC[:, :1], (2, 3)), (2, 3), "numpy"),  # stride-0 source
])
def test_valid_payloads_stay_in_bounds(args):
    view = pickle.loads(crafted(*args))
    assert view.mode == args[2]
    assert_in_bounds(view)


def test_base_shape_only_relabels_the_source():
    """``base_shape`` shows up as ``view.base`` but is never read through."""
    view = pickle.loads(crafted(SRC, (2, 3), "numpy", (6, 1)))
    assert view.base.shape == (6, 1)
    assert np.shares_memory(view.base, view.source) or view.base.size == view.source.size
    assert_in_bounds(view)


sizes = st.integers(0, 4)


@given(
    src_shape=st.lists(sizes, max_size=4),
    shape=st.lists(st.one_of(sizes, st.integers(-3, 10), st.sampled_from([2**31, 2**63])),
                   max_size=5),
    step=st.sampled_from([1, -1, 2]),
    mode=st.sampled_from(["numpy", "explicit", "pdpd", "bidirectional", "NUMPY", ""]),
    dtype=st.sampled_from(["u1", "<f8", ">i4", "c16", "O", "V5"]),
)
def test_random_payloads(src_shape, shape, step, mode, dtype):
    """Any (source, shape) a payload may pair gives a clean error or an in-bounds view."""
    big = np.zeros([2 * n for n in src_shape], dtype=dtype)
    src = big[tuple(slice(None, None, 2 * step) for _ in src_shape)] if src_shape else big
    data = crafted(src, tuple(shape), mode)
    # The source's real shape: a step of 2 halves each axis again (4 -> 1 element).
    valid = (len(shape) == src.ndim and mode in ("numpy", "explicit", "pdpd", "bidirectional")
             and all(0 <= t and s in (1, t) for s, t in zip(src.shape, shape))
             and int(np.prod([max(t, 1) for t in shape], dtype=object)) * src.itemsize
             < 2**63)
    if not valid:
        with pytest.raises((ValueError, TypeError)):
            pickle.loads(data)
        return
    view = pickle.loads(data)
    if view.nbytes < 10**6:
        assert_in_bounds(view)
    else:
        assert all(s in (1, t) for s, t in zip(view.source.shape, view.shape))


def test_roundtrip_keeps_values_and_mode():
    src = np.arange(12.0).reshape(3, 1, 4)[::-1, :, ::2]
    view = lazybcast.broadcast(src, [3, 5, 2], mode="bidirectional")[1:, ::-1]
    clone = pickle.loads(pickle.dumps(view))
    assert (clone.shape, clone.mode, clone.dtype) == (view.shape, view.mode, view.dtype)
    np.testing.assert_array_equal(clone.materialize(), view.materialize())
    # a sliced view pickles its compact source only, not the whole original
    assert len(pickle.dumps(view)) < len(pickle.dumps(np.arange(12.0))) + 200


def test_bare_new_gives_an_empty_view():
    """NEWOBJ (``copyreg.__newobj__``) skips _rebuild; the object it makes holds no data."""
    data = b"\x80\x02clazybcast._view\nBroadcastView\n)\x81."  # GLOBAL, EMPTY_TUPLE, NEWOBJ
    assert "NEWOBJ" in {op.name for op, _, _ in pickletools.genops(data)}
    view = pickle.loads(data)
    assert type(view) is BroadcastView
    assert (view.shape, view.size, view.nbytes, view.strides) == ((0,), 0, 0, (0,))
    assert view.materialize().shape == (0,)
    assert list(view) == []
    with pytest.raises(IndexError):
        view[0]
    assert pickle.loads(pickle.dumps(view)).shape == (0,)


def test_build_state_cannot_overwrite_fields():
    """A payload that appends a BUILD state to overwrite shape or source fails at load."""
    for state in [{"shape": (10**6,)}, (None, {"_source": np.arange(2)}), {"strides": (8,)}]:
        with pytest.raises((AttributeError, TypeError)):
            pickle.loads(crafted(SRC[:1], (4, 3), "numpy", state=state))


def test_checked_constructor_is_the_only_way_in():
    with pytest.raises(TypeError, match="cannot be created directly"):
        BroadcastView(SRC, (2, 3))
    with pytest.raises(ValueError, match="must be 1 or 4"):
        BroadcastView._checked(SRC, (2, 4))
    with pytest.raises(TypeError, match="base must be"):
        BroadcastView._checked(SRC, (2, 3), base=[1])
    view = BroadcastView._checked(SRC[:1], (5, 3))
    assert_in_bounds(view)
    for field in ("shape", "strides", "base", "mode", "_source"):
        with pytest.raises(AttributeError):
            setattr(view, field, getattr(view, field))


def test_roundtrip_of_an_object_view_beyond_32_axes():
    """NumPy itself cannot pickle object arrays of more than 32 axes."""
    src = np.empty((2,) + (1,) * 60, dtype=object)
    src.reshape(-1)[:] = ["a", (1, 2)]
    with pytest.raises(RuntimeError):
        pickle.dumps(src)
    view = lazybcast.broadcast_to(src, (2,) + (1,) * 59 + (3,))[::-1]
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        clone = pickle.loads(pickle.dumps(view, protocol=protocol))
        assert clone.shape == view.shape
        assert clone.materialize().ravel().tolist() == [(1, 2)] * 3 + ["a"] * 3


@pytest.mark.parametrize(
    "args",
    [
        (np.zeros(1), (1,), (8, 8, 5), "numpy"),        # aligned rank 1, view rank 3
        (np.zeros(1), (1,) * 40, (5,), "numpy"),        # aligned rank 40, view rank 1
        (np.zeros(3), (3,), (4,), "numpy"),             # a source axis neither 1 nor 4
    ],
)
def test_make_view_payloads_are_refused(args):
    """lazybcast's own factory in a crafted pickle cannot make a view that reads astray."""
    import pickle

    from lazybcast._view import make_view

    class Payload:
        def __reduce__(self):
            return (make_view, args)

    with pytest.raises(ValueError):
        pickle.loads(pickle.dumps(Payload()))
