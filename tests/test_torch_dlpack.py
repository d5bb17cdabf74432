"""A view handed to torch through DLPack: ``torch.from_dlpack`` / ``torch.asarray`` /
``torch.as_tensor`` are expanded tensors over the source (no copy, no warning), and
``torch.tensor`` is one contiguous copy; values against NumPy's ``np.broadcast_to``."""

import os

import numpy as np
import pytest
from _view_strategies import views
from hypothesis import given
from hypothesis import strategies as st

import lazybcast

torch = pytest.importorskip("torch", reason="torch is an optional test dependency")
if np.lib.NumpyVersion(np.__version__) < "2.1.0":
    pytest.skip("a read-only DLPack export needs NumPy >= 2.1", allow_module_level=True)

#: dtypes that both DLPack and torch take.
TORCH_DTYPES = st.sampled_from([np.dtype(d) for d in (
    "?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16")])


@given(pair=views(TORCH_DTYPES))
def test_from_dlpack_is_an_expanded_tensor_over_the_source(pair):
    view, ref = pair
    t = torch.from_dlpack(view)
    assert tuple(t.shape) == view.shape
    np.testing.assert_array_equal(t.numpy(), ref)  # NaNs compare equal here
    if view.size and view.source.size and min(ref.strides, default=0) >= 0:
        itemsize = view.itemsize
        for n, s, s_ref in zip(view.shape, t.stride(), ref.strides):
            if n > 1:
                assert s * itemsize == s_ref
        address = view.source.__array_interface__["data"][0]
        reach = [s * (n - 1) for s, n in zip(view.source.strides, view.source.shape)]
        lo = sum(r for r in reach if r < 0)
        hi = sum(r for r in reach if r > 0)
        assert address + lo <= t.data_ptr() <= address + hi


@pytest.mark.parametrize("convert", [torch.from_dlpack, torch.asarray, torch.as_tensor])
def test_zero_copy_conversions(convert):
    x = np.arange(64, dtype=np.float32)
    v = lazybcast.broadcast_to(x, (200_000, 64))
    t = convert(v)
    assert t.stride() == (0, 1) and t.data_ptr() == x.ctypes.data
    assert t.dtype == torch.float32 and tuple(t.shape) == (200_000, 64)
    assert torch.equal(t[199_999], torch.from_numpy(x))


def test_torch_tensor_is_one_contiguous_copy():
    x = np.arange(64, dtype=np.float32)
    v = lazybcast.broadcast_to(x, (1000, 64))
    t = torch.tensor(v)
    assert t.is_contiguous() and t.data_ptr() != x.ctypes.data
    assert torch.equal(t, torch.from_numpy(np.broadcast_to(x, (1000, 64)).copy()))
    d = torch.asarray(v, dtype=torch.float64)  # a cast: one copy, by torch
    assert d.dtype == torch.float64 and torch.equal(d, t.double())


def test_torch_writes_reach_the_source():
    """torch has no read-only tensors: it accepts DLPack's read-only flag without a copy, so
    a write through the tensor lands in the array the view was made from (documented)."""
    x = np.arange(4.0)
    t = torch.from_dlpack(lazybcast.broadcast_to(x, (3, 4)))
    t[0, 1] = 9.0
    assert x[1] == 9.0
    if os.environ.get("LAZYBCAST_UNDER_ASAN"):
        return  # torch's C++ exception aborts under an LD_PRELOADed ASan runtime (its own bug)
    with pytest.raises(RuntimeError):  # torch refuses in-place ops over the repeated rows
        t.add_(1)


def test_reversed_data_exports_a_copy_of_the_source():
    """torch aborts the process on a negative DLPack stride (also for NumPy's arrays), so a
    view over reversed data exports a copy of its compact source: O(source), still stride 0."""
    x = np.arange(12.0).reshape(3, 4)
    v = lazybcast.broadcast_to(x[::-1, ::-2], (1000, 3, 2))
    t = torch.from_dlpack(v)
    assert t.stride()[0] == 0 and min(t.stride()) >= 0
    np.testing.assert_array_equal(t.numpy(), np.broadcast_to(x[::-1, ::-2], (1000, 3, 2)))
    a = np.from_dlpack(v)
    assert not a.flags.writeable
    np.testing.assert_array_equal(a, np.broadcast_to(x[::-1, ::-2], (1000, 3, 2)))


def test_unsupported_dtypes_raise_buffer_error():
    for dtype in (object, "U3", [("a", "i4")], "M8[s]"):
        v = lazybcast.broadcast_to(np.zeros(3, dtype=dtype), (2, 3))
        with pytest.raises(BufferError, match="DLPack only supports"):
            torch.from_dlpack(v)


def test_after_a_layout_change():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    v = lazybcast.broadcast_to(x, (5, 3, 4)).transpose(2, 0, 1)
    t = torch.from_dlpack(v)
    assert t.stride() == (1, 0, 4)
    assert torch.equal(t, torch.from_numpy(np.broadcast_to(x, (5, 3, 4)).transpose(2, 0, 1)
                                           .copy()))


@pytest.mark.parametrize("op", ["add", "mul", "eq", "ne", "lt"])
def test_operators_with_tensors_are_numpys(op):
    """``view op tensor`` is what ``np.broadcast_to(...) op tensor`` gives (a tensor defers by
    ``__array_priority__``, and takes ndarrays): a Tensor, NumPy's TypeError, or torch's
    answer for ``!=`` (a bool)."""
    import operator
    import warnings

    src = np.arange(3.0)
    t = torch.tensor([0.0, 1.0, 5.0], dtype=torch.float64)
    n, v = np.broadcast_to(src, (2, 3)), lazybcast.broadcast_to(src, (2, 3))
    if os.environ.get("LAZYBCAST_UNDER_ASAN"):
        pytest.skip("torch's operators decline an ndarray they cannot take (!=, +) by a C++ "
                    "exception, which aborts under an LD_PRELOADed ASan runtime (see above)")
    func = getattr(operator, op)
    with warnings.catch_warnings():  # (torch, once per process: "array is not writable")
        warnings.filterwarnings("ignore", "The given NumPy array is not writable")
        try:
            expected = func(n, t)
        except TypeError:
            with pytest.raises(TypeError):
                func(v, t)
            return
        got = func(v, t)
    assert type(got) is type(expected)
    assert torch.equal(got, expected) if type(got) is torch.Tensor else got == expected
