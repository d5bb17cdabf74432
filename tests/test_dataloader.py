"""RowDataset: the map-style dataset protocol, pickling, and PyTorch's DataLoader (if installed).

NumPy's rows (``np.broadcast_to(source, shape)[i]``) are the reference.
"""

import os
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from lazybcast import RowDataset

# torch warns when a loader asks for more workers than usable CPUs (two workers on a
# one-CPU runner): not this library's concern, and the tests turn warnings into errors.
pytestmark = pytest.mark.filterwarnings(
    "ignore:This DataLoader will create:UserWarning")

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
def test_getitems_is_one_gathered_array(indices):
    ds, ref = _dataset(), _reference()
    batch = ds.__getitems__(indices)
    assert type(batch) is np.ndarray and batch.flags.c_contiguous and batch.flags.writeable
    assert batch.shape == (len(indices),) + SHAPE[1:] and batch.dtype == ref.dtype
    np.testing.assert_array_equal(batch, ref[np.asarray(indices, dtype=np.intp)])
    assert not np.shares_memory(batch, ds.view.source)


def test_getitems_of_a_1d_view_gives_a_1d_array():
    source = np.array([1.5, 2.5], dtype=np.float32)
    ds = RowDataset(lazybcast.broadcast_to(source, (2,)))
    batch = ds.__getitems__([1, 0])
    assert batch.dtype == np.float32 and batch.tolist() == [2.5, 1.5]
    assert type(ds[1]) is np.float32


class Index:
    def __init__(self, i):
        self.i = i

    def __index__(self):
        return self.i


@pytest.mark.parametrize("i", [np.int8(3), np.uint64(3), np.array(3), np.array(-2, np.int16),
                               Index(3), Index(-1)], ids=repr)
def test_getitem_takes_every_integer_numpy_takes(i):
    ds, ref = _dataset(), _reference()
    np.testing.assert_array_equal(ds[i], ref[i])


@pytest.mark.parametrize("indices", [
    np.array([[1, 2], [3, -1]]), np.array([3, 1], dtype=np.uint8), (1, 2), range(3),
    [np.int64(1), np.array(2), Index(-1)], np.arange(10)[::-3],
], ids=repr)
def test_getitems_takes_integer_sequences(indices):
    ds, ref = _dataset(), _reference()
    flat = np.array([int(i) for i in np.asarray(indices, dtype=object).reshape(-1)])
    np.testing.assert_array_equal(ds.__getitems__(indices), ref[flat])


@pytest.mark.parametrize("i", [SHAPE[0], -SHAPE[0] - 1, 10**12, 2**70, -2**70])
def test_out_of_range_is_index_error(i):
    ds = _dataset()
    with pytest.raises(IndexError):
        ds[i]
    with pytest.raises(IndexError):
        ds.__getitems__([0, i])


@pytest.mark.parametrize("indices", [[0], np.array([-1], dtype=np.int8), [Index(3)]], ids=repr)
def test_a_bad_index_is_an_index_error_however_large_the_batch(indices):
    """Rows of 768 TiB (beyond the address space a process maps, so no batch of one fits): an
    index out of range still raises NumPy's IndexError for it, not MemoryError."""
    ds = RowDataset(lazybcast.broadcast_to(np.zeros((1, 1, 1), np.complex128), (0, 3, 2**44)))
    flat = [int(i) for i in indices]
    with pytest.raises(IndexError) as numpy_error:
        np.zeros((0, 3))[flat]
    with pytest.raises(IndexError) as ours:
        ds.__getitems__(indices)
    assert str(ours.value) == str(numpy_error.value)


@pytest.mark.parametrize("take", [lambda v: RowDataset(v).__getitems__([0]),
                                  lambda v: v[[0]], lambda v: v[[0], [5]]])
def test_a_bad_index_into_object_rows_allocates_nothing(monkeypatch, take):
    """A batch of object rows: NumPy's np.empty fills it with None (every page written), so
    an index out of range must raise IndexError before the batch is made (the fuzzer's rows
    of 2**31 objects drew 16 GB, then raised). np.empty is watched for object arrays."""
    v = lazybcast.broadcast_to(np.array({"a": 1}, dtype=object), (0, 2**20))
    made = []
    empty = np.empty

    def watched(shape, dtype=float, *args, **kwargs):
        if np.dtype(dtype).hasobject:
            made.append(shape)
        return empty(shape, dtype, *args, **kwargs)

    monkeypatch.setattr(np, "empty", watched)
    with pytest.raises(IndexError):
        take(v)
    assert made == []


def test_huge_unsigned_indices_are_index_errors():
    with pytest.raises(IndexError):
        _dataset()[np.uint64(2**63 + 5)]
    with pytest.raises(IndexError):
        _dataset().__getitems__(np.array([1, 2**63 + 5], dtype=np.uint64))


@pytest.mark.parametrize("i", [1.0, "1", None, True, np.True_, np.array(True), slice(0, 2), [0],
                               np.array([1]), np.float64(1.0)], ids=repr)
def test_getitem_needs_an_int(i):
    with pytest.raises(TypeError):
        _dataset()[i]


@pytest.mark.parametrize("indices", [[0.0, 1.0], ["1"], [True, False], [Index(1), 1.5], None])
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


class Impostor:
    shape = (3, 2)


@pytest.mark.parametrize("state", [{"view": np.ones((3, 2))}, {"view": Impostor()}, {},
                                   {"view": lazybcast.broadcast_to(1.0, ())}, ["view"], 7])
def test_unpickling_validates_the_view(state):
    """A crafted pickle (copyreg's reconstructor then __setstate__) gets the constructor's
    checks."""
    import copyreg

    class Crafted:
        def __reduce__(self):
            return (copyreg._reconstructor, (RowDataset, object, None), state)

    with pytest.raises((TypeError, ValueError), match="view|state"):
        pickle.loads(pickle.dumps(Crafted()))


def test_subclass_state_round_trips():
    ds = CountingDataset(_dataset().view)
    ds.extra = 5
    back = pickle.loads(pickle.dumps(ds))
    assert type(back) is CountingDataset and back.extra == 5 and len(back) == SHAPE[0]


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
    # one worker: each spawned start imports torch anew (seconds on a loaded CI machine)
    loader = DataLoader(RowDataset(view), batch_size=4, num_workers=1,
                        multiprocessing_context="spawn")
    _loader_matches_numpy(torch, loader, ref, shuffle=False)


@pytest.mark.parametrize("workers", [0, 2])
def test_collate_turns_the_gathered_batch_into_a_tensor(workers):
    torch = _torch()
    from torch.utils.data import DataLoader

    view, ref = _distinct_rows()
    loader = DataLoader(CountingDataset(view), batch_size=4, shuffle=True, num_workers=workers,
                        collate_fn=lazybcast.collate, generator=torch.Generator().manual_seed(1))
    _loader_matches_numpy(torch, loader, ref, shuffle=True)


def test_collate_shares_memory_and_falls_back():
    torch = _torch()
    batch = _dataset().__getitems__([1, 2, 3])
    tensor = lazybcast.collate(batch)
    assert tensor.data_ptr() == batch.ctypes.data  # no copy
    rows = [np.ones(2), np.zeros(2)]  # anything else: torch's default_collate
    assert lazybcast.collate(rows).tolist() == [[1.0, 1.0], [0.0, 0.0]]
    readonly = np.ones(3)
    readonly.flags.writeable = False  # torch warns on read-only memory: default path copies
    assert lazybcast.collate(readonly).tolist() == [1.0, 1.0, 1.0]


def test_subset_with_tensor_indices():
    torch = _torch()
    from torch.utils.data import DataLoader, Subset

    view, ref = _distinct_rows()
    subset = Subset(RowDataset(view), torch.arange(10, 20))
    np.testing.assert_array_equal(subset[0], ref[10])
    np.testing.assert_array_equal(subset.__getitems__([0, 9]), ref[[10, 19]])
    batches = DataLoader(subset, batch_size=4, collate_fn=lazybcast.collate)
    np.testing.assert_array_equal(torch.cat(list(batches)).numpy(), ref[10:20])


def test_samplers_yielding_tensors():
    torch = _torch()
    from torch.utils.data import DataLoader

    view, ref = _distinct_rows()
    order = torch.randperm(SHAPE[0], generator=torch.Generator().manual_seed(2))
    # a batch sampler yielding index tensors, and a sampler yielding 0-d tensors
    by_batch = DataLoader(RowDataset(view), batch_sampler=list(order.split(5)),
                          collate_fn=lazybcast.collate)
    by_item = DataLoader(RowDataset(view), batch_size=5, sampler=list(order),
                         collate_fn=lazybcast.collate)
    for loader in (by_batch, by_item):
        np.testing.assert_array_equal(torch.cat(list(loader)).numpy(), ref[order.numpy()])
    assert RowDataset(view)[torch.tensor(3)].tolist() == ref[3].tolist()


# -- memory-mapped views in spawned workers -------------------------------------------------

_SPAWN_CHILD = """
import resource, sys
import numpy as np, torch, lazybcast
from torch.utils.data import DataLoader

path, rows, cols, step = sys.argv[1], *map(int, sys.argv[2:])
view = lazybcast.broadcast_to(np.load(path, mmap_mode="r")[:, None], (rows, 2, cols))
sample = list(range(0, rows, step))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for context in ("spawn", "forkserver"):
    loader = DataLoader(lazybcast.RowDataset(view), batch_size=64, sampler=sample,
                        collate_fn=lazybcast.collate, num_workers=1,
                        multiprocessing_context=context)
    got = torch.cat(list(loader))
    assert got.shape == (len(sample), 2, cols), got.shape
    assert (got == torch.tensor(sample, dtype=torch.float32)[:, None, None]).all(), context
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) * 1024)
"""


def test_spawn_and_forkserver_workers_get_a_memmap_view_by_reference(tmp_path):
    """A 256 MB file behind the dataset: the parent's peak RSS grows by far less than the
    file while spawn and forkserver workers start (they receive the path, not the bytes).
    One worker per context: each start imports torch anew (seconds on a loaded CI box)."""
    _torch()
    import subprocess
    import sys

    rows, cols, step = 65536, 1024, 256
    path = str(tmp_path / "rows.npy")
    data = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, cols))
    for i in range(0, rows, step):  # a sparse file: only the sampled rows are written
        data[i] = i
    data.flush()
    del data
    size = os.path.getsize(path)
    done = subprocess.run([sys.executable, "-c", _SPAWN_CHILD, path, str(rows), str(cols),
                           str(step)], capture_output=True, text=True, timeout=300,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert done.returncode == 0, done.stderr
    growth = int(done.stdout.split()[-1])
    assert growth < size / 8, (growth, size)  # by value, the pickle alone would be `size`
