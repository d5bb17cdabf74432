"""Views and their NumPy references, for the tests of the ndarray surface (``test_layout``,
``test_protocols``, ``test_torch_dlpack``).

A drawn view comes from any mode, over data with any strides (transposed, stepped, negative,
zero), broadcast axes anywhere and zero-size axes; half the time a basic slice with a negative
step is applied on top. Its reference is the same request answered by NumPy
(``np.broadcast_to`` of the aligned data), sliced the same way.
"""

import numpy as np
import pytest
from _core_strategies import (
    DTYPES,
    assert_same,
    call_broadcast,
    expected_values,
    laid_out,
    requests,
)
from hypothesis import strategies as st

from lazybcast import BroadcastView

__all__ = [
    "NUMPY_2_1",
    "assert_lazy",
    "assert_same",
    "numeric_dtypes",
    "outcome",
    "reshaped",
    "views",
]

#: NumPy 2.1 added ``reshape(copy=)`` and DLPack 1.0 (``__dlpack__(max_version=)``, read-only
#: export); the tests that compare against those skip on NumPy 2.0.
NUMPY_2_1 = pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0",
                               reason="needs NumPy >= 2.1 (reshape(copy=), DLPack 1.0)")

#: dtypes that NumPy casts, compares and exports by DLPack (no strings, objects or records).
numeric_dtypes = st.sampled_from([d for d in DTYPES if d.kind in "biufc"])


@st.composite
def views(draw, dtypes=st.sampled_from(DTYPES), max_rank=4):
    """``(view, reference)``: a :class:`BroadcastView` and the read-only NumPy array of the
    same values (same strides on the axes of size > 1)."""
    data_shape, target, mapping, mode, axis = draw(requests(max_rank=max_rank))
    x = draw(laid_out(data_shape, draw(dtypes)))
    view = call_broadcast(x, target, mapping, mode, axis)
    ref = expected_values(x, target, mapping, mode, axis)
    if view.ndim and draw(st.booleans()):
        key = tuple(draw(st.sampled_from([slice(None), slice(None, None, -1), slice(1, None, 2),
                                          slice(None, 1)]))
                    for _ in range(view.ndim))
        view, ref = view[key], ref[key]
    assert view.shape == ref.shape
    return view, ref


@st.composite
def reshaped(draw, shape):
    """A shape with the same number of elements as ``shape``, reached by merging adjacent axes,
    splitting an axis into two factors and adding or removing axes of size 1; sometimes one
    entry is -1."""
    dims = list(shape)
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["merge", "split", "one", "drop"]))
        if op == "merge" and len(dims) >= 2:
            i = draw(st.integers(0, len(dims) - 2))
            dims[i:i + 2] = [dims[i] * dims[i + 1]]
        elif op == "split" and dims:
            i = draw(st.integers(0, len(dims) - 1))
            d = dims[i]
            a = draw(st.sampled_from([k for k in range(1, d + 1) if d % k == 0] or [3]))
            dims[i:i + 1] = [a, d // a] if d else [a, 0]
        elif op == "one" and len(dims) < 6:
            dims.insert(draw(st.integers(0, len(dims))), 1)
        elif op == "drop" and 1 in dims:
            dims.remove(1)
    if dims and draw(st.integers(0, 3)) == 0:
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return tuple(dims)


def outcome(func, *args, **kwargs):
    """``("ok", result)`` or ``("error", exception)`` of a call."""
    try:
        return "ok", func(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the test compares whatever NumPy raised
        return "error", exc


def assert_lazy(result, view, expected):
    """``result`` is a view (not an array) holding no more source than ``view`` did, with the
    values of ``expected``."""
    assert type(result) is BroadcastView, type(result)
    assert result.source.size <= max(view.source.size, 1)
    assert_same(np.asarray(result), np.asarray(expected))
