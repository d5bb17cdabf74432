"""dask integration: ``view.to_dask()``, ``dask.array.from_array(view)`` and the view's token.

The reference is NumPy (``np.broadcast_to``) computed in this process. A real
``distributed.LocalCluster`` with two worker processes checks that chunks are materialized on
the workers, by lazybcast's kernel, from a view that travelled by pickle.
"""

import logging
import os
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazybcast

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
from dask.base import normalize_token, tokenize  # noqa: E402

DTYPES = [np.uint8, np.int16, np.float32, np.int64, np.complex128, np.dtype("V3")]


@st.composite
def views(draw):
    """``(view, expected ndarray)``: numpy or bidirectional broadcasts of arbitrary sources
    (any dtype size, negative and non-contiguous strides, zero-size axes)."""
    shape, target = draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=5)
    ).input_shapes
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    n = int(np.prod(shape))
    raw = np.random.default_rng(n).integers(0, 256, size=2 * n * dtype.itemsize, dtype=np.uint8)
    data = raw.view(dtype)[::2].reshape(shape)
    if draw(st.booleans()) and data.ndim:
        data = data[::-1]
    out_shape = np.broadcast_shapes(shape, target)
    if draw(st.booleans()):
        view = lazybcast.broadcast(data, target, mode="bidirectional")
    else:
        view = lazybcast.broadcast_to(data, out_shape)
    return view, np.broadcast_to(data, out_shape)


def _chunks(draw, shape):
    return tuple(draw(st.integers(1, max(n, 1))) for n in shape)


@given(st.data())
def test_to_dask_compute_matches_numpy(data):
    view, expected = data.draw(views())
    chunks = _chunks(data.draw, view.shape)
    x = view.to_dask(chunks)
    assert x.shape == expected.shape and x.dtype == expected.dtype
    assert x.chunksize == tuple(min(c, n) for c, n in zip(chunks, view.shape))
    got = x.compute(scheduler="threads")
    assert type(got) is np.ndarray
    assert got.tobytes() == np.ascontiguousarray(expected).tobytes()
    assert got.shape == expected.shape


@given(st.data())
def test_from_array_view_matches_numpy(data):
    view, expected = data.draw(views())
    chunks = _chunks(data.draw, view.shape)
    x = da.from_array(view, chunks=chunks)
    assert x.shape == expected.shape and x.dtype == expected.dtype
    got = np.asarray(x.compute(scheduler="sync"))
    assert got.tobytes() == np.ascontiguousarray(expected).tobytes()


def test_from_array_meta_probe_is_empty():
    view = lazybcast.broadcast(np.arange(6.0).reshape(2, 3), [4, 2, 3])
    x = da.from_array(view, chunks=(1, 2, 2))
    assert x._meta.shape == (0, 0, 0)
    assert x._meta.dtype == np.float64
    expected = np.broadcast_to(np.arange(6.0).reshape(2, 3), (4, 2, 3))
    np.testing.assert_array_equal(x.sum(axis=(0, 2)).compute(scheduler="threads"),
                                  expected.sum(axis=(0, 2)))
    np.testing.assert_array_equal(x[1:, ::-1, 1].compute(scheduler="threads"),
                                  expected[1:, ::-1, 1])


def test_to_dask_reductions_and_slices_threaded():
    src = np.random.default_rng(0).standard_normal((7, 1, 5)).astype(np.float32)
    view = lazybcast.broadcast(src, [3, 7, 11, 5], mode="bidirectional")
    expected = np.broadcast_to(src, (3, 7, 11, 5))
    x = view.to_dask(chunks=(2, 3, 4, 5))
    assert x._meta.shape == (0, 0, 0, 0) and type(x._meta) is np.ndarray
    np.testing.assert_allclose(x.sum().compute(scheduler="threads"),
                               expected.sum(dtype=np.float64), rtol=1e-5)
    np.testing.assert_allclose(x.mean(axis=(0, 2)).compute(scheduler="threads"),
                               expected.mean(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_array_equal(x[:, 2:6:3, ::-2].compute(scheduler="threads"),
                                  expected[:, 2:6:3, ::-2])
    np.testing.assert_array_equal(x.max(axis=1).compute(scheduler="threads"),
                                  expected.max(axis=1))


def test_to_dask_auto_chunks_and_zero_dims():
    view = lazybcast.broadcast_to(np.arange(3, dtype=np.int8), (5, 3))
    x = view.to_dask()
    assert x.chunks == ((5,), (3,))
    np.testing.assert_array_equal(x.compute(), np.broadcast_to(np.arange(3), (5, 3)))
    scalar = lazybcast.broadcast_to(np.float32(2.5), ())
    assert scalar.to_dask().compute() == np.float32(2.5)
    empty = lazybcast.broadcast_to(np.ones((0, 1)), (0, 4))
    assert empty.to_dask().compute().shape == (0, 4)


def test_to_dask_rejects_other_arrays():
    from lazybcast._dask import to_dask

    with pytest.raises(TypeError, match="view must be a lazybcast.BroadcastView, got ndarray"):
        to_dask(np.ones(3))


@pytest.fixture
def materialized(monkeypatch):
    """Shapes of everything lazybcast materializes for dask in this process."""
    import lazybcast._dask

    shapes = []
    real = lazybcast._dask._materialize

    def recording(view, key):
        out = real(view, key)
        shapes.append(out.shape)
        return out

    monkeypatch.setattr(lazybcast._dask, "_materialize", recording)
    return shapes


def test_to_dask_terabyte_view_materializes_only_what_is_asked(materialized):
    # 1.2 TB logical from 24 bytes, in 2.4 GB chunks: building the graph costs nothing, and
    # dask fuses a slice into the chunk task, so only the selected elements are materialized.
    view = lazybcast.broadcast(np.arange(3.0), [10**5, 5 * 10**5, 3])
    x = view.to_dask(chunks=(1000, 10**5, 3))
    assert x.nbytes == 10**5 * 5 * 10**5 * 3 * 8
    assert x.npartitions == 100 * 5
    assert materialized == []
    np.testing.assert_array_equal(x[12345, 7:9].compute(scheduler="sync"),
                                  np.broadcast_to(np.arange(3.0), (2, 3)))
    assert materialized == [(2, 3)]


def test_to_dask_slices_are_fused_into_chunk_tasks(materialized):
    src = np.arange(16.0)
    view = lazybcast.broadcast(src, [4, 16, 50, 60], [1], mode="explicit")
    expected = np.broadcast_to(src[None, :, None, None], (4, 16, 50, 60))
    x = view.to_dask(chunks=(1, 16, 50, 60))
    np.testing.assert_array_equal(x[:, 2:5, :3, 1::20].compute(scheduler="sync"),
                                  expected[:, 2:5, :3, 1::20])
    assert materialized == [(1, 3, 3, 3)] * 4
    materialized.clear()
    assert x.sum().compute(scheduler="sync") == expected.sum()
    assert materialized == [(1, 16, 50, 60)] * 4


# -- tokens ---------------------------------------------------------------------------------


def test_tokenize_is_deterministic_and_value_based():
    a = np.arange(12).reshape(3, 4)
    v1 = lazybcast.broadcast_to(a, (2, 3, 4))
    v2 = lazybcast.broadcast_to(a.copy(), (2, 3, 4))
    assert tokenize(v1) == tokenize(v2) == tokenize(pickle.loads(pickle.dumps(v1)))
    assert v1.to_dask((1, 3, 2)).name == v2.to_dask((1, 3, 2)).name
    different = [
        lazybcast.broadcast_to(a, (5, 3, 4)),                          # shape
        lazybcast.broadcast_to(a + 1, (2, 3, 4)),                      # values
        lazybcast.broadcast_to(a.astype(np.int32), (2, 3, 4)),         # dtype
        lazybcast.broadcast(a, [2, 3, 4], mode="bidirectional"),       # mode
        lazybcast.broadcast_to(a[:, ::-1], (2, 3, 4)),                 # strides
    ]
    tokens = {tokenize(v) for v in different} | {tokenize(v1)}
    assert len(tokens) == len(different) + 1
    assert v1.to_dask((1, 3, 2)).name != v1.to_dask((2, 3, 4)).name


def test_tokenize_does_not_touch_logical_data():
    # 2.4e16 bytes (24 PB) logical: hashing the logical data could never finish.
    view = lazybcast.broadcast(np.ones(3), [10**5, 10**5, 10**5, 3])
    assert view.nbytes == 24 * 10**15
    token = tokenize(view)
    assert token == tokenize(view)
    # What dask hashes is a few scalars and the 24-byte source's token, not the data.
    assert len(pickle.dumps(normalize_token(view))) < 500
    assert len(pickle.dumps(view)) < 500


# -- a real cluster -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        worker_dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def test_cluster_reductions_and_slices(client):
    src = np.random.default_rng(1).integers(-50, 50, size=(9, 1, 6)).astype(np.int32)
    view = lazybcast.broadcast(src[::-1], [4, 9, 13, 6], mode="numpy")
    expected = np.broadcast_to(src[::-1], (4, 9, 13, 6))
    x = view.to_dask(chunks=(3, 4, 5, 6))
    assert x.sum().compute() == expected.sum()
    np.testing.assert_allclose(x.mean(axis=(1, 3)).compute(), expected.mean(axis=(1, 3)))
    np.testing.assert_array_equal(x[1:3, ::2, 7].compute(), expected[1:3, ::2, 7])
    np.testing.assert_array_equal(x.compute(), expected)
    y = da.from_array(view, chunks=(2, 5, 7, 3))
    assert y.sum().compute() == expected.sum()
    np.testing.assert_array_equal(y[::-1, 3].compute(), expected[::-1, 3])


def _block_facts(block):
    return os.getpid(), block.flags.c_contiguous, block.flags.writeable, block.shape


def test_cluster_chunks_materialized_on_workers(client):
    view = lazybcast.broadcast(np.arange(5, dtype=np.int16), [2, 6, 5], mode="bidirectional")
    x = view.to_dask(chunks=(1, 3, 5))
    worker_pids = set(client.run(os.getpid).values())
    assert len(worker_pids) == 2 and os.getpid() not in worker_pids
    facts = dask.compute(*[dask.delayed(_block_facts)(b) for b in x.to_delayed().ravel()])
    assert len(facts) == 4
    for pid, c_contiguous, writeable, shape in facts:
        # A kernel-made chunk: a fresh C-contiguous writeable array, made in a worker process
        # (np.broadcast_to would have given a read-only zero-stride view).
        assert pid in worker_pids
        assert c_contiguous and writeable and shape == (1, 3, 5)
