"""Writing where the loader wants it: ``out=`` through DLPack and the buffer protocol, and
``materialize(dtype=)`` casting in the copy pass. NumPy (``np.broadcast_to(...).astype``) is
the reference."""

import array
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazybcast
from lazybcast import _cast


def _view():
    source = np.arange(6, dtype=np.float32).reshape(2, 1, 3)
    return lazybcast.broadcast_to(source, (2, 4, 3)), np.broadcast_to(source, (2, 4, 3))


# -- out= -----------------------------------------------------------------------------------


def test_materialize_into_a_memoryview_over_a_bytearray():
    view, ref = _view()
    raw = bytearray(view.nbytes)
    out = memoryview(raw).cast("B").cast("f", (2, 4, 3))
    assert view.materialize(out=out) is out
    np.testing.assert_array_equal(np.frombuffer(raw, np.float32).reshape(2, 4, 3), ref)


def test_materialize_into_an_array_array():
    view = lazybcast.broadcast_to(np.arange(3, dtype=np.int32), (3,))
    out = array.array("i", [0, 0, 0])
    assert view.materialize(out=out) is out
    assert out.tolist() == [0, 1, 2]


@pytest.mark.parametrize("out, error, match", [
    (memoryview(bytes(96)).cast("f", (2, 4, 3)), ValueError, "out is read-only"),
    (memoryview(bytearray(96)).cast("f", (4, 2, 3)), ValueError, "shape"),
    (memoryview(bytearray(192)).cast("d", (2, 4, 3)), TypeError, "dtype"),
    (b"x" * 96, ValueError, "read-only"),
    (object(), TypeError, "DLPack or the buffer protocol"),
], ids=["readonly-memoryview", "shape", "dtype", "bytes", "object"])
def test_out_buffers_get_the_ndarray_checks(out, error, match):
    view, _ = _view()
    with pytest.raises(error, match=match):
        view.materialize(out=out)


def test_torch_out_tensors():
    torch = pytest.importorskip("torch")
    view, ref = _view()
    out = torch.empty(2, 4, 3)
    if torch.cuda.is_available():  # pinned host memory is what a loader hands to the GPU
        out = out.pin_memory()
    assert view.materialize(out=out) is out
    np.testing.assert_array_equal(out.numpy(), ref)
    with pytest.raises(TypeError, match="dtype"):
        view.materialize(out=torch.empty(2, 4, 3, dtype=torch.float64))
    with pytest.raises(TypeError, match="require.*grad|DLPack"):
        view.materialize(out=torch.empty(2, 4, 3, requires_grad=True))
    strided = torch.empty(3, 4, 2).permute(2, 1, 0)  # any layout, as for ndarrays
    assert view.materialize(out=strided) is strided
    np.testing.assert_array_equal(strided.numpy(), ref)


def test_torch_ring_for_iter_batches():
    torch = pytest.importorskip("torch")
    view, ref = _view()
    ring = [torch.zeros(1, 4, 3), torch.zeros(1, 4, 3)]
    got = []
    for i, batch in enumerate(view.iter_batches(1, out=ring, prefetch=1)):
        assert isinstance(batch, torch.Tensor) and batch.data_ptr() == ring[i % 2].data_ptr()
        got.append(batch.clone())
    np.testing.assert_array_equal(torch.cat(got).numpy(), ref)


def test_memoryview_ring_for_iter_batches_with_a_short_last_batch():
    view = lazybcast.broadcast_to(np.arange(3, dtype=np.int16), (5, 3))
    ring = [memoryview(bytearray(12)).cast("h", (2, 3)) for _ in range(2)]
    got = [np.array(b) for b in view.iter_batches(2, out=ring)]
    assert [g.shape for g in got] == [(2, 3), (2, 3), (1, 3)]
    np.testing.assert_array_equal(np.concatenate(got), np.broadcast_to(np.arange(3), (5, 3)))


# -- materialize(dtype=) ----------------------------------------------------------------------

DTYPES = ["u1", "i2", "<u4", ">i4", "f2", "f4", "<f8", ">f8", "c8", "?"]


@settings(deadline=None, max_examples=60)
@given(
    src=st.sampled_from(DTYPES), dst=st.sampled_from(DTYPES),
    shape=st.lists(st.integers(0, 5), min_size=1, max_size=4),
    data=st.data(),
)
def test_cast_in_copy_is_numpys_astype(src, dst, shape, data):
    bcast = [data.draw(st.booleans()) for _ in shape]
    sshape = [1 if b else n for b, n in zip(bcast, shape)]
    rng = np.random.default_rng(len(shape))
    source = (rng.integers(0, 200, sshape) / 2).astype(src)  # exact in every dtype here
    if data.draw(st.booleans()) and source.ndim >= 2:
        source = source.swapaxes(0, -1).copy().swapaxes(0, -1)  # another memory order
    view = lazybcast.broadcast_to(source, tuple(shape))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        expected = np.broadcast_to(source, tuple(shape)).astype(dst)
        got = view.materialize(dtype=dst)
    assert got.dtype == np.dtype(dst) and got.flags.c_contiguous
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("block", [64, 1000, _cast.BLOCK_BYTES])
def test_hwc_to_chw_float_in_blocks(monkeypatch, block):
    monkeypatch.setattr(_cast, "BLOCK_BYTES", block)
    hwc = np.random.default_rng(0).integers(0, 256, (37, 29, 3), dtype=np.uint8)
    for shape in [(3, 37, 29), (2, 3, 37, 29)]:
        view = lazybcast.broadcast_to(hwc.transpose(2, 0, 1), shape)
        expected = np.broadcast_to(hwc.transpose(2, 0, 1), shape).astype(np.float32)
        np.testing.assert_array_equal(view.materialize(dtype=np.float32), expected)
        out = np.empty(shape[::-1], np.float32).T  # any layout
        assert view.materialize(out=out, dtype=np.float32) is out
        np.testing.assert_array_equal(out, expected)


def test_cast_checks_out_against_the_requested_dtype():
    view, ref = _view()
    with pytest.raises(TypeError, match="dtype= float64"):
        view.materialize(out=np.empty((2, 4, 3), np.float32), dtype=np.float64)
    out = np.empty((2, 4, 3), np.float64)
    assert view.materialize(out=out, dtype="f8") is out
    np.testing.assert_array_equal(out, ref)
    with pytest.raises(TypeError):
        view.materialize(dtype="not a dtype")


def test_cast_with_objects_and_overlap():
    view = lazybcast.broadcast_to(np.arange(3), (2, 3))
    got = view.materialize(dtype=object)
    assert got.dtype == object and got.tolist() == [[0, 1, 2]] * 2
    base = np.arange(6.0)
    view = lazybcast.broadcast_to(base[:3].view(np.int64), (2, 3))
    expected = np.broadcast_to(base[:3].view(np.int64), (2, 3)).astype(np.float64)
    out = base.reshape(2, 3)  # overlaps the source
    view.materialize(out=out, dtype=np.float64)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("prefetch", [0, 1])
def test_ring_buffers_whose_items_share_bytes_get_numpys_values(prefetch):
    """Ring buffers made with ``as_strided`` whose rows overlap (each row one item on from
    the last): a batch larger than a kernel block is written as ``np.copyto`` writes it,
    with or without a prefetching thread (which copies block by block)."""
    batch, cols = 2, 600_000  # a row is 4.8 MB, more than one block
    view = lazybcast.broadcast_to(np.arange(4, dtype=np.float64)[:, None], (4, cols))

    def ring():
        bases = [np.full(batch + cols, -1.0) for _ in range(2)]
        return bases, [np.lib.stride_tricks.as_strided(b[batch - 1:], (batch, cols), (-8, 8))
                       for b in bases]

    expected, outs = ring()
    np.copyto(outs[0], np.broadcast_to(view.source[:batch], (batch, cols)))
    bases, outs = ring()
    next(iter(view.iter_batches(batch, out=outs, prefetch=prefetch)))
    np.testing.assert_array_equal(bases[0], expected[0])


@pytest.mark.parametrize("prefetch", [0, 1])
def test_ring_buffer_whose_items_overlap_by_a_byte(prefetch):
    """Two int16 items one byte apart: 442211 as NumPy leaves it (the kernels left 443311)."""
    x = np.array([[0x1122], [0x3344]], dtype=np.int16)
    bufs = [bytearray(3), bytearray(3)]
    mine, numpys = (np.ndarray((2, 1), np.int16, buffer=b, offset=1, strides=(-1, 0))
                    for b in bufs)
    np.copyto(numpys, x)
    next(iter(lazybcast.broadcast_to(x, (2, 1)).iter_batches(2, out=[mine, mine.copy()]
                                                             if prefetch else mine,
                                                             prefetch=prefetch)))
    assert bytes(bufs[0]) == bytes(bufs[1])
