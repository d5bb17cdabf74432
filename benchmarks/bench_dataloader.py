"""Data loaders end to end: a memory-mapped view through PyTorch's DataLoader.

* DataLoader epoch (shuffled, batches of 256 rows of 4 kB): ``RowDataset`` over a view of a
  ``.npy`` opened with ``mmap_mode="r"`` with ``collate_fn=lazybcast.collate``, against a
  ``TensorDataset`` over the same data materialized in memory, and against a plain loop of
  ``tensor[idx]`` over the materialized tensor (no DataLoader at all). ``num_workers`` 0 and 2
  (fork), and 2 spawned workers (startup included: the dataset is pickled to each worker).
  "floor: empty batches" is the DataLoader alone (batches of uninitialized tensors): with
  workers, the transfer of each batch to the parent costs more than gathering it.
* Pickle sizes of the dataset (by reference, and by value inside ``pickle_by_value()``).
* ``materialize(dtype=np.float32)`` of 64 uint8 HWC images to CHW float32 in one pass, against
  ``materialize().astype(np.float32)`` and NumPy's ``astype(order="C")`` of the transpose.

torch runs on one thread here (``torch.set_num_threads(1)`` for this module): with its default
of one thread per core, ``tensor[idx]`` on a shared 2-core machine was 20x slower (OpenMP
threads spinning against other processes), which would flatter every ratio against it.

Needs torch (skipped without it). The smoke run (``--benchmark-disable``) runs each case once
on a smaller file and skips the spawn cases (seconds of worker startup each).
"""

import functools
import os
import pickle
import time

import numpy as np
import pytest

import lazybcast

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

ROWS, WIDTH, COLS, BATCH = 16384, 4, 256, 256  # a 16 MiB file, a 64 MiB logical view


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def data(tmp_path_factory, smoke):
    rows = ROWS // 8 if smoke else ROWS
    path = str(tmp_path_factory.mktemp("loader") / "rows.npy")
    source = np.random.default_rng(0).standard_normal((rows, 1, COLS), dtype=np.float32)
    np.save(path, source)
    view = lazybcast.broadcast_to(np.load(path, mmap_mode="r"), (rows, WIDTH, COLS))
    tensor = torch.from_numpy(view.materialize())
    return view, tensor, path


def _epoch(loader):
    n = 0
    for batch in loader:
        n += batch[0].shape[0] if isinstance(batch, (list, tuple)) else batch.shape[0]
    return n


def _loader(kind, view, tensor, workers, context):
    generator = torch.Generator().manual_seed(0)
    extra = {"num_workers": workers, "generator": generator}
    if workers:
        extra["multiprocessing_context"] = context
    if kind == "RowDataset+collate":
        return DataLoader(lazybcast.RowDataset(view), batch_size=BATCH, shuffle=True,
                          collate_fn=lazybcast.collate, **extra)
    if kind == "TensorDataset":
        return DataLoader(TensorDataset(tensor), batch_size=BATCH, shuffle=True, **extra)
    if kind == "floor: empty batches":
        return DataLoader(_Empty(view.shape), batch_size=BATCH, shuffle=True,
                          collate_fn=_identity, **extra)
    raise ValueError(kind)


class _Empty:
    """A dataset whose batches are uninitialized tensors: what the DataLoader machinery alone
    (sampler, workers, transfer to the parent) costs per epoch."""

    def __init__(self, shape):
        self.shape = shape

    def __len__(self):
        return self.shape[0]

    def __getitems__(self, indices):
        return torch.empty((len(indices),) + tuple(self.shape[1:]))


def _identity(batch):
    return batch


def _plain_loop(tensor):
    n = 0
    for idx in torch.randperm(tensor.shape[0]).split(BATCH):
        n += tensor[idx].shape[0]
    return n


@pytest.mark.parametrize("workers, context", [(0, None), (2, "fork"), (2, "spawn")],
                         ids=["0 workers", "2 workers fork", "2 workers spawn"])
@pytest.mark.parametrize("kind", ["RowDataset+collate", "TensorDataset", "tensor[idx] loop",
                                  "floor: empty batches"])
def test_dataloader_epoch(benchmark, smoke, data, kind, workers, context):
    view, tensor, _ = data
    if context == "spawn" and smoke:
        pytest.skip("spawned workers take seconds to start; measured in the full run")
    if kind == "tensor[idx] loop":
        if workers:
            pytest.skip("the plain loop has no workers")
        benchmark.group = "DataLoader epoch"
        assert benchmark(_plain_loop, tensor) == view.shape[0]
        return
    benchmark.group = "DataLoader epoch"
    loader = _loader(kind, view, tensor, workers, context)
    rounds = 1 if smoke else (3 if context == "spawn" else 5)
    assert benchmark.pedantic(_epoch, (loader,), rounds=rounds, iterations=1) == view.shape[0]


def test_dataloader_values(data):
    view, _, path = data
    loader = DataLoader(lazybcast.RowDataset(view), batch_size=BATCH, shuffle=False,
                        collate_fn=lazybcast.collate)
    got = torch.cat(list(loader)).numpy()
    np.testing.assert_array_equal(got, np.broadcast_to(view.source, view.shape))


def test_pickle_sizes(benchmark, note, data):
    view, _, path = data
    dataset = lazybcast.RowDataset(view)
    size = len(benchmark(pickle.dumps, dataset))
    with lazybcast.pickle_by_value():
        by_value = len(pickle.dumps(dataset))
    note("pickle_bytes", size,
         f"RowDataset over a {os.path.getsize(path) / 1e6:.1f} MB .npy "
         f"({view.nbytes / 1e6:.0f} MB logical): pickles as {size} bytes by reference, "
         f"{by_value / 1e6:.1f} MB by value")
    assert size < 1000 < by_value


# -- cast in the copy pass ---------------------------------------------------------------------

_HWC = np.random.default_rng(1).integers(0, 256, (64, 224, 224, 3), dtype=np.uint8)
_CHW = lazybcast.broadcast_to(_HWC.transpose(0, 3, 1, 2), (64, 3, 224, 224))
_OUT = np.empty((64, 3, 224, 224), np.float32)
_CASTS = {
    "materialize(out=, dtype=)": lambda: _CHW.materialize(out=_OUT, dtype=np.float32),
    "materialize(dtype=)": lambda: _CHW.materialize(dtype=np.float32),
    "materialize().astype()": lambda: _CHW.materialize().astype(np.float32),
    "numpy astype(order=C)": lambda: _HWC.transpose(0, 3, 1, 2).astype(np.float32, order="C"),
    "numpy copyto(out)": lambda: np.copyto(_OUT, _HWC.transpose(0, 3, 1, 2), casting="unsafe"),
}


@functools.cache
def _expected_cast():
    return _HWC.transpose(0, 3, 1, 2).astype(np.float32)


@pytest.mark.parametrize("impl", list(_CASTS))
def test_cast_in_copy(benchmark, note, smoke, impl):
    benchmark.group = "64 HWC uint8 images -> CHW float32 (38.5 MB)"
    result = benchmark(_CASTS[impl])
    expected = _expected_cast()
    np.testing.assert_array_equal(_OUT if result is None else result, expected)
    if impl == "materialize(out=, dtype=)":
        rounds = 3 if smoke else 15
        best = dict.fromkeys(_CASTS, float("inf"))
        for _ in range(rounds):  # interleaved, so load changes hit every case alike
            for name, fn in _CASTS.items():
                t0 = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - t0)
        ours = best["materialize(out=, dtype=)"]
        note("cast_ratios", {k: v / ours for k, v in best.items()},
             "cast in copy (best of %d, interleaved): " % rounds + ", ".join(
                 f"{k} {v * 1e3:.2f} ms ({v / ours:.2f}x)" for k, v in best.items()))
