"""RowDataset: the map-style dataset protocol, pickling, and PyTorch's DataLoader (if installed).

NumPy's rows (``np.broadcast_to(source, shape)[i]``) are the reference.
"""

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from lazybcast import RowDataset

SHAPE = (37, 3, 2)


def _source():
    # a non-contiguous, negatively strided source, broadcast along the row axis
    return np.arange(12.0).reshape(3, 4)[::-1, ::2][None]


def _dataset():
    return RowDataset(lazybcast.broadcast_to(_source(), SHAPE))


def _reference():
    return np.broadcast_to(_source(), SHAPE)


# -- the protocol, without torch ----------------------------------------------------------


def test_len_and_getitem():
    ds, ref = _dataset(), _reference()
    assert len(ds) == SHAPE[0]
    for i in [0, 5, SHAPE[0] - 1, -1, -SHAPE[0], np.int64(3)]:
        row = ds[i]
        assert type(row) is np.ndarray and row.flags.c_contiguous and row.flags.writeable
        np.testing.assert_array_equal(row, ref[i])
        assert row.shape == ref[i].shape and row.dtype == ref.dtype


@given(st.lists(st.integers(-SHAPE[0], SHAPE[0] - 1), max_size=10))
def test_getitems_is_the_list_of_rows(indices):
    ds, ref = _dataset(), _reference()
    rows = ds.__getitems__(indices)
    assert type(rows) is list and len(rows) == len(indices)
    for row, i in zip(rows, indices):
        assert type(row) is np.ndarray and row.flags.writeable
        np.testing.assert_array_equal(row, ref[i])
        assert not np.shares_memory(row, ds.view.source)


def test_getitems_of_a_1d_view_gives_numpy_scalars():
    source = np.array([1.5, 2.5], dtype=np.float32)
    ds = RowDataset(lazybcast.broadcast_to(source, (2,)))
    assert [type(x) for x in ds.__getitems__([1, 0])] == [np.float32, np.float32]
    assert ds.__getitems__([1, 0]) == [np.float32(2.5), np.float32(1.5)]
    assert type(ds[1]) is np.float32


@pytest.mark.parametrize("i", [SHAPE[0], -SHAPE[0] - 1, 10**12])
def test_out_of_range_is_index_error(i):
    ds = _dataset()
    with pytest.raises(IndexError):
        ds[i]
    with pytest.raises(IndexError):
        ds.__getitems__([0, i])


@pytest.mark.parametrize("i", [1.0, "1", None, True, slice(0, 2), [0]])
def test_getitem_needs_an_int(i):
    with pytest.raises(TypeError):
        _dataset()[i]


@pytest.mark.parametrize("indices", [[0.0, 1.0], ["1"], [True, False]])
def test_getitems_needs_ints(indices):
    with pytest.raises(TypeError):
        _dataset().__getitems__(indices)


def test_constructor_errors():
    with pytest.raises(TypeError):
        RowDataset(np.zeros((3, 2)))
    with pytest.raises(ValueError):
        RowDataset(lazybcast.broadcast_to(np.float64(1.0), ()))


def test_pickle_is_compact_and_round_trips():
    source = np.arange(1000.0)  # 8 kB
    view = lazybcast.broadcast_to(source, (10**9, 1000))  # 8 TB logical
    ds = RowDataset(view)
    blob = pickle.dumps(ds, protocol=pickle.HIGHEST_PROTOCOL)
    assert len(blob) < 2 * source.nbytes
    back = pickle.loads(blob)
    assert type(back) is RowDataset and len(back) == 10**9
    np.testing.assert_array_equal(back[123456789], source)


# -- PyTorch's DataLoader ------------------------------------------------------------------


def _torch():
    """torch, or a skip: not installed, or installed but failing to import (best-effort CI)."""
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
        pytest.skip(f"torch is not importable: {e!r}")
    return torch


class CountingDataset(RowDataset):
    """Counts batched fetches; a per-item fetch is an error (so workers prove it too)."""

    batched_calls = 0

    def __getitem__(self, i):
        raise AssertionError("DataLoader fetched one item at a time instead of __getitems__")

    def __getitems__(self, indices):
        type(self).batched_calls += 1
        return super().__getitems__(indices)


def _loader_matches_numpy(torch, loader, ref, shuffle):
    seen = []
    for batch in loader:
        assert isinstance(batch, torch.Tensor)
        assert batch.shape[1:] == ref.shape[1:] and batch.shape[0] <= 4
        seen.append(batch.numpy())
    got = np.concatenate(seen)
    assert got.shape == ref.shape
    if shuffle:  # every row once, in some order (row i starts with 10 * i)
        got = got[np.argsort(got[:, 0, 0], kind="stable")]
    np.testing.assert_array_equal(got, ref)


def _distinct_rows():
    # rows differ (source varies along axis 0) and the last axes are broadcast
    source = np.arange(37.0).reshape(37, 1, 1) * 10 + np.array([[0.0, 1.0]])
    return lazybcast.broadcast_to(source, SHAPE), np.broadcast_to(source, SHAPE)


@pytest.mark.parametrize("shuffle", [False, True])
def test_torch_dataloader_in_process(shuffle):
    torch = _torch()
    from torch.utils.data import DataLoader

    view, ref = _distinct_rows()
    CountingDataset.batched_calls = 0
    loader = DataLoader(CountingDataset(view), batch_size=4, shuffle=shuffle, num_workers=0)
    _loader_matches_numpy(torch, loader, ref, shuffle)
    assert CountingDataset.batched_calls == -(-SHAPE[0] // 4)


def test_torch_dataloader_two_workers():
    torch = _torch()
    from torch.utils.data import DataLoader

    view, ref = _distinct_rows()
    loader = DataLoader(CountingDataset(view), batch_size=4, shuffle=True, num_workers=2,
                        generator=torch.Generator().manual_seed(0))
    _loader_matches_numpy(torch, loader, ref, shuffle=True)


def test_torch_dataloader_spawned_workers_unpickle_the_dataset():
    torch = _torch()
    from torch.utils.data import DataLoader

    view, ref = _distinct_rows()
    loader = DataLoader(RowDataset(view), batch_size=4, num_workers=2,
                        multiprocessing_context="spawn")
    _loader_matches_numpy(torch, loader, ref, shuffle=False)
