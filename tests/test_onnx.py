"""Conformance with ONNX ``Expand`` (bidirectional broadcasting).

Two oracles from the ``onnx`` package: the node test cases it ships as code
(``onnx.backend.test.case.node.expand``) and its reference implementation
(``onnx.reference.ReferenceEvaluator``), run on ``Expand`` models built with ``onnx.helper``.
"""

import functools
import inspect

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazybcast

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

OPSET = 13  # Expand-13: every tensor type


def _node_cases():
    """``(name, node, inputs, outputs)`` of every ``Expand.export_*`` case, recorded by running
    the exporters with ONNX's ``expect`` swapped for a recorder."""
    expand = pytest.importorskip("onnx.backend.test.case.node.expand")
    recorded = []

    def record(node, inputs, outputs, name, **kwargs):
        recorded.append((name, node, list(inputs), list(outputs)))

    real_expect = expand.expect
    expand.expect = record
    try:
        for attr, export in inspect.getmembers(expand.Expand, inspect.isfunction):
            if attr.startswith("export"):
                export()
    finally:
        expand.expect = real_expect
    return recorded


NODE_CASES = _node_cases()


def test_node_cases_were_found():
    names = {name for name, *_ in NODE_CASES}
    assert {"test_expand_dim_changed", "test_expand_dim_unchanged"} <= names


@pytest.mark.parametrize("case", NODE_CASES, ids=[c[0] for c in NODE_CASES])
def test_onnx_node_case(case):
    name, node, (data, new_shape), (expected,) = case
    assert node.op_type == "Expand"
    view = lazybcast.broadcast(data, new_shape, mode="bidirectional")
    assert view.shape == expected.shape
    got = view.materialize()
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    # The same node, run by ONNX's reference implementation, agrees with the case.
    model = helper.make_model(
        helper.make_graph(
            [node],
            name,
            [_value_info(node.input[0], data.dtype), _value_info(node.input[1], np.int64)],
            [_value_info(node.output[0], data.dtype)],
        ),
        opset_imports=[helper.make_opsetid("", OPSET)],
    )
    (ref,) = ReferenceEvaluator(model).run(None, {node.input[0]: data, node.input[1]: new_shape})
    np.testing.assert_array_equal(ref, expected)


# -- randomized comparison with onnx.reference ----------------------------------------------


def _value_info(name, dtype):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
                                         None)


@functools.lru_cache(maxsize=None)
def _evaluator(dtype):
    node = helper.make_node("Expand", ["data", "shape"], ["expanded"])
    graph = helper.make_graph(
        [node], "expand",
        [_value_info("data", dtype), helper.make_tensor_value_info("shape", TensorProto.INT64,
                                                                   [None])],
        [_value_info("expanded", dtype)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    return ReferenceEvaluator(model)


DTYPES = [np.bool_, np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64,
          np.int64, np.float16, np.float32, np.float64, np.complex64, np.complex128]


@st.composite
def expand_requests(draw):
    """A data array and a target shape: mutually broadcastable most of the time, otherwise
    two independent shapes (often incompatible)."""
    if draw(st.integers(0, 3)):
        data_shape, target = draw(hnp.mutually_broadcastable_shapes(
            num_shapes=2, min_dims=0, max_dims=5, min_side=0, max_side=4)).input_shapes
    else:
        data_shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
        target = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    # The reference computes data * ones(shape). For complex numbers that product is not exact
    # (the cross terms give NaN for infinities and overflow near the largest finite values)
    # where Expand copies, so complex values stay finite and moderate.
    elements = None
    if dtype.kind == "c":
        part = st.floats(-2.0**100, 2.0**100, width=dtype.itemsize * 4)
        elements = st.builds(complex, part, part)
    data = draw(hnp.arrays(dtype, data_shape, elements=elements))
    if data.ndim and draw(st.booleans()):
        data = data[..., ::-1]  # a negative stride on the last axis
    return data, np.array(target, dtype=np.int64)


@given(expand_requests())
def test_matches_onnx_reference(request):
    data, shape = request
    try:
        (expected,) = _evaluator(data.dtype).run(None, {"data": data, "shape": shape})
    except ValueError:
        with pytest.raises(ValueError, match="Broadcast"):
            lazybcast.broadcast(data, shape, mode="bidirectional")
        return
    view = lazybcast.broadcast(data, shape, mode="bidirectional")
    assert view.shape == expected.shape
    got = view.materialize()
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    # the zero-copy path agrees too
    np.testing.assert_array_equal(np.asarray(view), expected)


def test_string_tensors_match_onnx_reference():
    data = np.array([["a"], ["bc"], [""]], dtype=object)
    shape = np.array([2, 1, 3], dtype=np.int64)
    (expected,) = _evaluator(np.dtype(object)).run(None, {"data": data, "shape": shape})
    got = lazybcast.broadcast(data, shape, mode="bidirectional").materialize()
    assert got.shape == expected.shape == (2, 3, 3)
    assert got.tolist() == expected.tolist()
