"""Argument rules and errors of ``broadcast`` / ``broadcast_to`` (issue 2, "Semantics").

Every error is a ValueError (bad value or shape) or a TypeError (bad type) whose message names
the argument; where OpenVINO has a message for the fault, its key phrase is checked.
"""

import array
import collections

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazybcast

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
              np.intp, np.uintp]


def _x(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)


# -- target_shape: accepted forms ------------------------------------------------------------


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_target_shape_as_integer_ndarray_of_every_dtype(dtype):
    v = lazybcast.broadcast(_x(3), np.array([2, 3], dtype=dtype))
    assert v.shape == (2, 3)
    assert all(type(n) is int for n in v.shape)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_axes_mapping_as_integer_ndarray_of_every_dtype(dtype):
    v = lazybcast.broadcast(_x(3), [2, 3, 4], np.array([1], dtype=dtype), mode="explicit")
    assert v.shape == (2, 3, 4)
    np.testing.assert_array_equal(v.materialize(), np.broadcast_to(_x(3)[:, None], (2, 3, 4)))


@pytest.mark.parametrize(
    "target",
    [[2, 3], (2, 3), np.array([2, 3]), [np.int8(2), np.uint64(3)], range(2, 4),
     np.array([2, 3])[::1]],
    ids=["list", "tuple", "ndarray", "numpy-scalars", "range", "ndarray-view"],
)
def test_target_shape_sequences(target):
    assert lazybcast.broadcast(_x(3), target).shape == (2, 3)


def test_non_contiguous_integer_ndarray_target():
    target = np.array([[2, 9], [3, 9]], dtype=np.int16)[:, 0]
    assert lazybcast.broadcast(_x(3), target).shape == (2, 3)


@pytest.mark.parametrize(
    "empty", [[], (), np.array([], dtype=np.int64), np.array([], dtype=np.uint8)], ids=repr
)
def test_empty_target_shape(empty):
    x = np.array(5.0)
    modes = (("numpy", None), ("explicit", empty), ("bidirectional", None), ("pdpd", None))
    for mode, mapping in modes:
        v = lazybcast.broadcast(x, empty, mapping, mode=mode)
        assert v.shape == ()
        assert v.materialize() == 5.0
    # bidirectional: the data's shape wins over an empty target
    assert lazybcast.broadcast(_x(2, 3), empty, mode="bidirectional").shape == (2, 3)
    with pytest.raises(ValueError):
        lazybcast.broadcast(_x(3), empty)


# -- target_shape / axes_mapping / shape: rejected forms --------------------------------------

BAD_TYPES = [
    [2.0, 3],
    [2, 3.5],
    np.array([2.0, 3.0]),
    [True, 3],
    np.array([True, False]),
    np.array([2, 3], dtype=np.float32),
    np.array(["2", "3"]),
    ["2", 3],
    "23",
    None,
    [None],
    3,
    np.int64(3),
    [1 + 2j],
    [np.float64(2.0)],
    [np.bool_(True)],
]

# Not 1-D: a TypeError, as NumPy's shape converter raises (np.empty([[2]]) and
# np.broadcast_shapes([[2]]) raise TypeError).
BAD_VALUES = [
    [[2, 3]],
    [[2], [3]],
    np.array([[2, 3]]),
    np.array([[2], [3]]),
    [np.array([2, 3])],
    np.array(3),  # 0-d: a scalar, which target_shape and axes_mapping refuse
]


@pytest.mark.parametrize("bad", BAD_TYPES, ids=repr)
def test_target_shape_bad_type(bad):
    with pytest.raises(TypeError, match="target_shape"):
        lazybcast.broadcast(_x(3), bad)


@pytest.mark.parametrize("bad", BAD_VALUES, ids=repr)
def test_target_shape_not_1d(bad):
    with pytest.raises(TypeError, match="target_shape"):
        lazybcast.broadcast(_x(3), bad)


@pytest.mark.parametrize("bad", [b for b in BAD_TYPES if b is not None], ids=repr)
def test_axes_mapping_bad_type(bad):
    with pytest.raises(TypeError, match="axes_mapping"):
        lazybcast.broadcast(_x(3), [2, 3], bad, mode="explicit")


@pytest.mark.parametrize("bad", BAD_VALUES, ids=repr)
def test_axes_mapping_not_1d(bad):
    with pytest.raises(TypeError, match="axes_mapping"):
        lazybcast.broadcast(_x(3), [2, 3], bad, mode="explicit")


@pytest.mark.parametrize(
    "bad", [b for b in BAD_TYPES if not isinstance(b, (int, np.integer))], ids=repr
)
def test_broadcast_to_shape_bad_type(bad):
    with pytest.raises(TypeError, match="shape"):
        lazybcast.broadcast_to(_x(3), bad)


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), 3.0, np.array(3.0)], ids=repr)
def test_broadcast_to_scalar_shape_bad_type(bad):
    with pytest.raises(TypeError, match="shape"):
        lazybcast.broadcast_to(_x(3), bad)


@pytest.mark.parametrize("bad", [[[2, 3]], np.array([[2, 3]]), [[2]]], ids=repr)
def test_broadcast_to_shape_not_1d(bad):
    with pytest.raises(TypeError, match="shape"):
        lazybcast.broadcast_to(_x(3), bad)


@pytest.mark.parametrize("shape", [3, np.int64(3), np.uint8(3), np.array(3), (3,), [3]], ids=repr)
def test_broadcast_to_accepts_an_int(shape):
    v = lazybcast.broadcast_to(np.array(7, dtype=np.int8), shape)
    assert v.shape == (3,)
    np.testing.assert_array_equal(v.materialize(), np.broadcast_to(np.int8(7), 3))


def test_broadcast_alone_rejects_a_bare_int():
    with pytest.raises(TypeError, match=r"target_shape.*\[3\]"):
        lazybcast.broadcast(_x(3), 3)


# -- negative and oversized sizes -------------------------------------------------------------


@pytest.mark.parametrize(
    "target", [[-1, 3], [2, -3], np.array([-1, 3], dtype=np.int8), (-5,)], ids=repr
)
def test_negative_sizes(target):
    with pytest.raises(ValueError, match=r"target_shape\[\d\] is -\d") as e:
        lazybcast.broadcast(_x(3), target)
    assert "negative" in str(e.value)
    for mode in ("bidirectional", "pdpd"):
        with pytest.raises(ValueError, match="target_shape"):
            lazybcast.broadcast(_x(3), target, mode=mode)
    with pytest.raises(ValueError, match="target_shape"):
        lazybcast.broadcast(_x(3), target, [len(target) - 1], mode="explicit")


def test_negative_sizes_broadcast_to():
    with pytest.raises(ValueError, match="shape"):
        lazybcast.broadcast_to(_x(3), -3)
    with pytest.raises(ValueError, match="shape"):
        lazybcast.broadcast_to(_x(3), (-1, 3))


@pytest.mark.parametrize(
    "target",
    [[2**62, 4], [2**40, 2**40], np.array([2**64 - 1], dtype=np.uint64), [2**63], [2**100]],
    ids=repr,
)
def test_too_large_is_a_value_error(target):
    with pytest.raises(ValueError, match="target_shape"):
        lazybcast.broadcast(np.ones(1), target)
    with pytest.raises(ValueError, match="shape"):
        lazybcast.broadcast_to(np.ones(1), target)


def test_more_than_64_dims():
    with pytest.raises(ValueError):
        np.broadcast_to(np.ones(1), (1,) * 65)  # the reference
    with pytest.raises(ValueError, match="64"):
        lazybcast.broadcast(np.ones(1), [1] * 65)
    assert lazybcast.broadcast(np.ones(1), [1] * 64).ndim == 64


# -- mode, axes_mapping, axis ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelling", "mode"),
    [("NUMPY", "numpy"), ("Numpy", "numpy"), ("ExPlIcIt", "explicit"),
     ("BIDIRECTIONAL", "bidirectional"), ("PdPd", "pdpd"), ("pdpd", "pdpd")],
)
def test_mode_is_case_insensitive(spelling, mode):
    mapping = [1] if mode == "explicit" else None
    v = lazybcast.broadcast(_x(3), [2, 3], mapping, mode=spelling)
    assert v.mode == mode
    np.testing.assert_array_equal(v.materialize(), np.broadcast_to(_x(3), (2, 3)))


@pytest.mark.parametrize("bad", ["foo", "", "numpy ", "none", "explicit\n", "NUMPYY"])
def test_bad_mode_value(bad):
    with pytest.raises(ValueError, match="mode") as e:
        lazybcast.broadcast(_x(3), [2, 3], mode=bad)
    for allowed in ("numpy", "explicit", "bidirectional", "pdpd"):
        assert allowed in str(e.value)
    assert repr(bad) in str(e.value)


@pytest.mark.parametrize("bad", [None, 1, b"numpy", ["numpy"]], ids=repr)
def test_bad_mode_type(bad):
    with pytest.raises(TypeError, match="mode"):
        lazybcast.broadcast(_x(3), [2, 3], mode=bad)


@pytest.mark.parametrize("mode", ["numpy", "bidirectional", "pdpd", "NUMPY"])
@pytest.mark.parametrize("mapping", [[1], [], np.array([0])], ids=repr)
def test_axes_mapping_only_with_explicit(mode, mapping):
    with pytest.raises(
        ValueError, match="axes_mapping input should not be provided for mode other than explicit"
    ):
        lazybcast.broadcast(_x(3), [2, 3], mapping, mode=mode)


@pytest.mark.parametrize("mode", ["numpy", "explicit", "bidirectional"])
@pytest.mark.parametrize("axis", [0, 1, -2, np.int64(0)], ids=repr)
def test_axis_only_with_pdpd(mode, axis):
    mapping = [1] if mode == "explicit" else None
    with pytest.raises(ValueError, match="axis"):
        lazybcast.broadcast(_x(3), [2, 3], mapping, mode=mode, axis=axis)
    # the default, spelled out, is fine
    assert lazybcast.broadcast(_x(3), [2, 3], mapping, mode=mode, axis=-1).shape == (2, 3)


@pytest.mark.parametrize("axis", [True, 1.0, "1", None, np.float64(1)], ids=repr)
def test_axis_bad_type(axis):
    with pytest.raises(TypeError, match="axis"):
        lazybcast.broadcast(_x(3), [2, 3], mode="pdpd", axis=axis)


def test_axis_numpy_integer_accepted():
    v = lazybcast.broadcast(_x(3), [3, 2], mode="pdpd", axis=np.int64(0))
    np.testing.assert_array_equal(v.materialize(), np.broadcast_to(_x(3)[:, None], (3, 2)))


def test_mode_and_axis_are_keyword_only():
    with pytest.raises(TypeError):
        lazybcast.broadcast(_x(3), [2, 3], None, "numpy")


# -- numpy mode ---------------------------------------------------------------------------


def test_numpy_rank_too_small():
    with pytest.raises(
        ValueError, match="Broadcast target_shape has smaller rank 1 than arg shape 2"
    ):
        lazybcast.broadcast(_x(2, 3), [3])


def test_numpy_dim_mismatch_wording():
    with pytest.raises(
        ValueError,
        match=r"Input shape dimension equal 3 cannot be broadcasted \(numpy mode\) to 4\. "
        r"Allowed input dimension value would be 1 or 4",
    ) as e:
        lazybcast.broadcast(_x(2, 3), [2, 4])
    assert "axis 1" in str(e.value)
    with pytest.raises(
        ValueError, match=r"to 1\. Allowed input dimension value would be 1\b(?! or)"
    ):
        lazybcast.broadcast(_x(3), [1])


def test_numpy_mode_never_shrinks_or_grows_non_one_dims():
    assert lazybcast.broadcast(_x(1, 3), [0, 3]).shape == (0, 3)
    for target in ([2, 1], [2, 0], [6, 6], [1, 3, 1]):
        with pytest.raises(ValueError):
            lazybcast.broadcast(_x(2, 3), target)
        with pytest.raises(ValueError):
            np.broadcast_to(_x(2, 3), target)


# -- explicit mode -------------------------------------------------------------------------


def test_explicit_requires_axes_mapping():
    with pytest.raises(
        ValueError, match="axes_mapping input should be provided if explicit mode is used"
    ):
        lazybcast.broadcast(_x(3), [2, 3], mode="explicit")


@pytest.mark.parametrize("mapping", [[], [0, 1], [0, 1, 2]], ids=repr)
def test_explicit_length_must_equal_rank(mapping):
    with pytest.raises(ValueError, match="doesn't match rank of input tensor 1"):
        lazybcast.broadcast(_x(3), [2, 3, 4], mapping, mode="explicit")


def test_explicit_length_for_scalar_data():
    x = np.array(4)
    assert lazybcast.broadcast(x, [2, 3], [], mode="explicit").shape == (2, 3)
    with pytest.raises(ValueError, match="axes_mapping"):
        lazybcast.broadcast(x, [2, 3], [0, 1], mode="explicit")


@pytest.mark.parametrize("mapping", [[1, 0], [1, 1], [2, 2], [0, 2, 1]], ids=repr)
def test_explicit_strictly_increasing(mapping):
    data = _x(*([1] * len(mapping)))
    with pytest.raises(ValueError, match="Broadcast doesn't permit transposes") as e:
        lazybcast.broadcast(data, [3, 3, 3], mapping, mode="explicit")
    assert "sorted" in str(e.value)


@pytest.mark.parametrize("mapping", [[3], [4], [-1], [-4], [2**40]], ids=repr)
def test_explicit_range(mapping):
    with pytest.raises(ValueError, match=r"axes_mapping\[0\]") as e:
        lazybcast.broadcast(_x(1), [2, 3, 4], mapping, mode="explicit")
    assert str(mapping[0]) in str(e.value)
    if mapping[0] < 0:
        assert "is negative" in str(e.value) and "allowed 0 to 2" in str(e.value)
    else:
        assert "exceeds target rank 3" in str(e.value)


def test_explicit_dim_mismatch_wording():
    with pytest.raises(
        ValueError, match=r"Broadcast target\[axes_mapping\[1\]\] Expected 3\. Got 4"
    ):
        lazybcast.broadcast(_x(2, 3), [2, 5, 4], [0, 2], mode="explicit")


@pytest.mark.parametrize(
    ("shape", "target", "mapping"),
    [((3,), [0], [0]), ((2, 3), [2, 0], [0, 1]), ((0,), [3, 1], [0])],
)
def test_explicit_never_resizes_a_non_one_dim(shape, target, mapping):
    with pytest.raises(ValueError, match="Broadcast target"):
        lazybcast.broadcast(_x(*shape), target, mapping, mode="explicit")


def test_explicit_size_one_broadcasts():
    x = _x(1, 3)
    v = lazybcast.broadcast(x, [5, 2, 3], [0, 2], mode="explicit")
    np.testing.assert_array_equal(v.materialize(), np.broadcast_to(x.reshape(1, 1, 3), (5, 2, 3)))
    v = lazybcast.broadcast(_x(1), [2, 0], [1], mode="explicit")
    assert v.shape == (2, 0)


def test_explicit_scalar_with_one_axis_follows_openvino():
    x = np.array(9)
    assert lazybcast.broadcast(x, [2, 1], [1], mode="explicit").shape == (2, 1)
    with pytest.raises(
        ValueError, match=r"Broadcast target\[axes_mapping\[0\]\]\. Expected 1\. Got 3"
    ):
        lazybcast.broadcast(x, [2, 3], [1], mode="explicit")


def test_explicit_mapping_allows_negative_input_only_to_reject_it():
    with pytest.raises(ValueError, match="axes_mapping"):
        lazybcast.broadcast(_x(3), [3, 3], np.array([-1], dtype=np.int8), mode="explicit")


# -- pdpd mode -----------------------------------------------------------------------------


def test_pdpd_axis_and_right_alignment():
    x = _x(3, 4)
    v = lazybcast.broadcast(x, [2, 1, 4, 5], mode="pdpd", axis=1)
    expected = np.broadcast_to(x.reshape(1, 3, 4, 1), (2, 3, 4, 5))
    np.testing.assert_array_equal(v.materialize(), expected)
    v = lazybcast.broadcast(x, [2, 3, 1], mode="pdpd")  # -1: right-aligned
    np.testing.assert_array_equal(v.materialize(), np.broadcast_to(x, (2, 3, 4)))
    v = lazybcast.broadcast(x, [3, 4, 2], mode="pdpd", axis=0)
    np.testing.assert_array_equal(v.materialize(), np.broadcast_to(x[:, :, None], (3, 4, 2)))


@pytest.mark.parametrize("axis", [3, 4, 100])
def test_pdpd_axis_past_the_end(axis):
    with pytest.raises(ValueError, match="pdpd") as e:
        lazybcast.broadcast(_x(3, 4), [2, 3, 4], mode="pdpd", axis=axis)
    assert str(axis) in str(e.value)


def test_pdpd_data_rank_larger_than_target():
    with pytest.raises(ValueError, match="Broadcast start_axis must be greater than 0"):
        lazybcast.broadcast(_x(2, 3), [3], mode="pdpd")


@pytest.mark.parametrize("axis", [-2, -3, -100])
def test_pdpd_negative_axis_other_than_minus_one(axis):
    with pytest.raises(ValueError, match="axis"):
        lazybcast.broadcast(_x(3), [2, 3], mode="pdpd", axis=axis)


@pytest.mark.parametrize(("shape", "target"), [((2,), [0]), ((0,), [3]), ((2, 3), [2, 0])])
def test_pdpd_never_resizes_a_non_one_dim_against_a_non_one_target(shape, target):
    with pytest.raises(ValueError, match="Broadcast incorrect target shape"):
        lazybcast.broadcast(_x(*shape), target, mode="pdpd")


def test_pdpd_dim_mismatch_wording():
    with pytest.raises(
        ValueError, match=r"Broadcast incorrect target shape\. Expecting either 1 or 3 \. Got 4"
    ):
        lazybcast.broadcast(_x(3), [2, 4], mode="pdpd")


# -- bidirectional mode --------------------------------------------------------------------


def test_bidirectional_mismatch_wording():
    with pytest.raises(
        ValueError, match=r"Broadcast incorrect target shape\. Expecting either 1 or 3\. Got 4"
    ):
        lazybcast.broadcast(_x(3, 1, 5), [4, 4, 5], mode="bidirectional")


def test_bidirectional_output_may_outgrow_target():
    assert lazybcast.broadcast(_x(3, 1), [2, 1, 6], mode="bidirectional").shape == (2, 3, 6)
    assert lazybcast.broadcast(_x(2, 3, 4), [3, 1], mode="bidirectional").shape == (2, 3, 4)


@pytest.mark.parametrize(
    "target",
    [(2**62, 0), (0, 2**62), (2**40, 2**40, 0), (10**18, 0), (2**60, 1), (2**59, 2), (0,) * 10],
    ids=repr,
)
def test_size_limit_like_numpy(target):
    """Zero-size or not, a shape NumPy cannot index is a ValueError; one it can is fine."""
    x = np.ones(1)
    try:
        np.broadcast_to(x, target)
    except ValueError:
        with pytest.raises(ValueError, match="shape"):
            lazybcast.broadcast_to(x, target)
    else:
        assert lazybcast.broadcast_to(x, target).shape == target


def test_zero_d_integer_arrays_are_sizes_as_in_numpy():
    x = np.ones(3)
    target = [np.array(2), np.int16(3)]
    assert lazybcast.broadcast_to(x, target).shape == np.broadcast_to(x, target).shape


def test_negative_axes_mapping_is_named_as_negative():
    with pytest.raises(ValueError, match=r"axes_mapping\[0\]: -1 is negative"):
        lazybcast.broadcast(np.ones(3), [3], [-1], mode="explicit")


# -- shape arguments: NumPy's shape converter is the oracle (issue 13, item 7) ----------------

class _Index:
    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value

    def __repr__(self):
        return f"_Index({self.value})"


class _RaisingIndex:
    def __index__(self):
        raise ZeroDivisionError("__index__ raised")


def _size():
    small = st.integers(0, 4)
    return st.one_of(
        small, small.map(np.int64), small.map(np.uint8), small.map(_Index),
        small.map(lambda n: np.array(n)), st.sampled_from([2**40, 2**62, 2**63, -1]),
        st.sampled_from([True, np.bool_(True), 2.0, np.float64(2), "2", None, [2], (2,),
                         np.array([2]), _RaisingIndex(), np.array(2, dtype=object)]),
    )


@st.composite
def shape_likes(draw):
    """Anything a caller might pass as a shape: sequences of every kind NumPy's converter
    iterates, scalars, and containers it refuses."""
    items = draw(st.lists(_size(), max_size=4))
    ints = [n for n in items if type(n) is int]
    kind = draw(st.sampled_from(["list", "tuple", "array", "objarray", "bytes", "bytearray",
                                 "array.array", "deque", "range", "dict", "set", "iter",
                                 "generator", "scalar", "none"]))
    if kind == "tuple":
        return tuple(items)
    if kind == "array" and ints == items and all(0 <= n <= 4 for n in ints):
        return np.array(items, dtype=draw(st.sampled_from([np.int64, np.uint8, np.uint64])))
    if kind == "objarray":
        out = np.empty(len(items), dtype=object)
        out[:] = items if all(not isinstance(n, (list, tuple, np.ndarray)) for n in items) \
            else [0] * len(items)
        return out
    if kind in ("bytes", "bytearray", "array.array") and ints == items \
            and all(0 <= n < 128 for n in ints):
        return {"bytes": bytes, "bytearray": bytearray,
                "array.array": lambda v: array.array("b", v)}[kind](ints)
    if kind == "deque":
        return collections.deque(items)
    if kind == "range":
        return range(draw(st.integers(0, 3)), draw(st.integers(0, 5)))
    if kind == "dict":
        return {n: 0 for n in ints}
    if kind == "set":
        return set(ints)
    if kind == "iter":
        return iter(ints)
    if kind == "generator":
        return (n for n in ints)
    if kind == "scalar":
        return items[0] if items else 3
    if kind == "none":
        return None
    return items


def _numpy_shape(value):
    """NumPy's shape converter, through ``np.broadcast_shapes`` (whose only other check is the
    element count)."""
    try:
        return np.broadcast_shapes(value), None
    except Exception as e:  # noqa: BLE001 - the oracle's exception is the expectation
        return None, e


@given(shape_likes())
def test_broadcast_shapes_reads_shapes_as_numpy(value):
    expected, error = _numpy_shape(value)
    if error is None:
        assert lazybcast.broadcast_shapes(value) == expected
        return
    with pytest.raises((TypeError, ValueError)) as info:
        lazybcast.broadcast_shapes(value)
    if isinstance(error, (TypeError, ValueError)):
        assert type(info.value) is type(error), (value, info.value, error)
    else:  # NumPy lets a raising __index__'s own exception out; lazybcast says TypeError
        assert type(info.value) is TypeError, (value, info.value, error)


@given(shape_likes())
def test_broadcast_to_reads_shapes_as_numpys_converter(value):
    expected, error = _numpy_shape(value)
    if error is None and sum(n > 4 for n in expected) == 0:
        assert lazybcast.broadcast_to(np.int8(1), value).shape == expected
        scalar = hasattr(type(value), "__index__") and np.ndim(value) == 0
        target = [value] if scalar else value  # target_shape refuses a bare integer
        assert lazybcast.broadcast(np.int8(1), target).shape == expected
    elif error is not None:
        with pytest.raises((TypeError, ValueError)) as info:
            lazybcast.broadcast_to(np.int8(1), value)
        if isinstance(error, (TypeError, ValueError)):
            assert type(info.value) is type(error), (value, info.value, error)


@pytest.mark.parametrize("value, expected", [
    (np.array([2, 3], dtype=object), (2, 3)),
    (b"\x02\x03", (2, 3)),
    (bytearray(b"\x02"), (2,)),
    (collections.deque([2]), (2,)),
    (array.array("i", [2, 3]), (2, 3)),
    (memoryview(np.array([2, 3])), (2, 3)),
])
def test_shape_sequences_numpy_accepts(value, expected):
    assert np.broadcast_shapes(value) == expected
    assert lazybcast.broadcast_shapes(value) == expected
    assert lazybcast.broadcast_to(np.int8(1), value).shape == expected
    assert lazybcast.broadcast(np.int8(1), value).shape == expected


@pytest.mark.parametrize("value", [{2: 0}, {2}, frozenset([2]), iter([2]), {2: 0}.values(),
                                   [[2]], np.array([[2]]), [_RaisingIndex()], _RaisingIndex()],
                         ids=repr)
def test_shape_forms_numpy_refuses_are_type_errors(value):
    with pytest.raises(TypeError, match="shapes\\[0\\]"):
        lazybcast.broadcast_shapes(value)
    with pytest.raises(TypeError, match="shape"):
        lazybcast.broadcast_to(np.ones(1), value)
    with pytest.raises(TypeError, match="target_shape"):
        lazybcast.broadcast(np.ones(1), value)


def test_broadcast_shapes_counts_elements_as_numpy():
    for shape in [(2**40, 0, 2**40), (0, 2**62, 4), (2**62, 0, 4)]:
        assert lazybcast.broadcast_shapes(shape) == np.broadcast_shapes(shape) == shape
    for shape in [(2**62, 4), (2**62, 4, 0), (2**31, 2**31, 2, 0)]:
        with pytest.raises(ValueError):
            np.broadcast_shapes(shape)
        with pytest.raises(ValueError, match="too large"):
            lazybcast.broadcast_shapes(shape)


# -- ndarray subclasses as data (issue 13, item 8) --------------------------------------------


class _Tagged(np.ndarray):
    """A user subclass."""


def test_masked_arrays_are_refused():
    data = np.ma.masked_array([1, 2, 3], mask=[0, 1, 0])
    for call in (lambda: lazybcast.broadcast_to(data, (2, 3)),
                 lambda: lazybcast.broadcast(data, [2, 3]),
                 lambda: lazybcast.broadcast_arrays(data, np.ones((2, 1)))):
        with pytest.raises(TypeError, match="mask"):
            call()
    v = lazybcast.broadcast_to(np.ma.getdata(data), (2, 3))  # the documented way out
    np.testing.assert_array_equal(v.materialize(), [[1, 2, 3]] * 2)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize("make", [
    lambda: np.matrix([[1, 2], [3, 4]]),
    lambda: np.arange(4).view(_Tagged).reshape(2, 2),
], ids=["matrix", "user-subclass"])
def test_other_subclasses_are_read_as_plain_arrays(make):
    import pickle

    data = make()
    v = lazybcast.broadcast_to(data, (3, 2, 2))
    assert v.base is data  # the user's object
    assert type(v.source) is np.ndarray and np.shares_memory(v.source, data)
    expected = np.broadcast_to(np.asarray(data), (3, 2, 2))
    np.testing.assert_array_equal(v.materialize(), expected)
    assert all(type(row) is np.ndarray for row in v)
    assert type(v[0, 0]) is lazybcast.BroadcastView and type(v[[0, 1]]) is np.ndarray
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(v)).materialize(), expected)


def test_memmap_sources_stay_memmaps(tmp_path):
    mm = np.memmap(tmp_path / "data.bin", dtype=np.float32, mode="w+", shape=(4,))
    mm[:] = np.arange(4)
    v = lazybcast.broadcast_to(mm, (3, 4))
    assert isinstance(v.base, np.memmap) and type(v.source) is np.ndarray
    assert np.shares_memory(v.source, mm)
    np.testing.assert_array_equal(v.materialize(), np.broadcast_to(np.arange(4.0), (3, 4)))
