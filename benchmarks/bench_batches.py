"""Batches for training loops: iter_batches and RowDataset against the NumPy equivalents.

* ``iter_batches``: whole pass over a 16 MiB view in batches of 512 rows, with a fresh array
  per batch and with ``out=`` (one reused buffer), against slicing ``np.broadcast_to(...)``
  and copying each slice.
* ``prefetch``: the same pass with a consumer that does some work per batch (a reduction),
  where ``prefetch=2`` overlaps materializing with consuming.
* ``RowDataset.__getitems__`` (one gather for a batch of random rows, as PyTorch's DataLoader
  calls it) against ``list(np.broadcast_to(...)[indices])``.
* Two threads materializing different batches against one thread doing them all: the
  throughput ratio shows the kernels release the GIL (issue 3).
"""

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import lazybcast

ROWS, COLS, BATCH = 16384, 256, 512  # 16 MiB of float32
_source = np.arange(COLS, dtype=np.float32)
VIEW = lazybcast.broadcast_to(_source, (ROWS, COLS))
REF = np.broadcast_to(_source, (ROWS, COLS))
_indices = np.random.default_rng(0).integers(0, ROWS, 256)


def _ours_fresh():
    total = 0
    for batch in VIEW.iter_batches(BATCH):
        total += batch.shape[0]
    return total


def _numpy_fresh():
    total = 0
    for start in range(0, ROWS, BATCH):
        batch = REF[start:start + BATCH].copy()
        total += batch.shape[0]
    return total


_buffer = np.empty((BATCH, COLS), np.float32)


def _ours_out():
    total = 0
    for batch in VIEW.iter_batches(BATCH, out=_buffer):
        total += batch.shape[0]
    return total


def _numpy_out():
    total = 0
    for start in range(0, ROWS, BATCH):
        stop = min(start + BATCH, ROWS)
        batch = _buffer[:stop - start]
        np.copyto(batch, REF[start:stop])
        total += batch.shape[0]
    return total


def _consume(batch):
    return float(np.sqrt(batch).sum())


def _ours_consume(prefetch):
    total = 0.0
    for batch in VIEW.iter_batches(BATCH, prefetch=prefetch):
        total += _consume(batch)
    return total


def _numpy_consume():
    # The batch is bound to a name as in the loop above: NumPy and the allocator treat a
    # temporary passed straight into a ufunc differently, and that is not what we measure.
    total = 0.0
    for start in range(0, ROWS, BATCH):
        batch = REF[start:start + BATCH].copy()
        total += _consume(batch)
    return total


@pytest.mark.parametrize("impl", ["lazybcast", "numpy"])
def test_iter_batches(benchmark, impl):
    benchmark.group = "iter_batches: fresh array per batch"
    assert benchmark(_ours_fresh if impl == "lazybcast" else _numpy_fresh) == ROWS


@pytest.mark.parametrize("impl", ["lazybcast", "numpy"])
def test_iter_batches_out(benchmark, impl):
    benchmark.group = "iter_batches: out= buffer"
    assert benchmark(_ours_out if impl == "lazybcast" else _numpy_out) == ROWS
    assert np.array_equal(_buffer, REF[-BATCH:])


@pytest.mark.parametrize("impl", ["lazybcast prefetch=0", "lazybcast prefetch=2", "numpy"])
def test_iter_batches_prefetch(benchmark, impl):
    benchmark.group = "iter_batches: with a consumer (prefetch)"
    fn = {"lazybcast prefetch=0": lambda: _ours_consume(0),
          "lazybcast prefetch=2": lambda: _ours_consume(2),
          "numpy": _numpy_consume}[impl]
    assert benchmark(fn) == pytest.approx(_numpy_consume(), rel=1e-5)


def test_iter_batches_values():
    got = np.concatenate(list(VIEW.iter_batches(1000, prefetch=1)))
    assert np.array_equal(got, REF)


@pytest.mark.parametrize("impl", ["lazybcast", "numpy"])
def test_row_dataset_getitems(benchmark, impl):
    benchmark.group = "RowDataset.__getitems__: 256 random rows"
    dataset = lazybcast.RowDataset(VIEW)
    if impl == "lazybcast":
        rows = benchmark(dataset.__getitems__, _indices)
    else:
        rows = benchmark(lambda idx: list(REF[idx]), _indices)
    assert len(rows) == len(_indices)
    assert all(np.array_equal(r, REF[i]) for r, i in zip(rows, _indices))


@pytest.mark.parametrize("impl", ["lazybcast", "numpy"])
def test_row_dataset_getitem(benchmark, impl):
    benchmark.group = "RowDataset.__getitem__: one row"
    dataset = lazybcast.RowDataset(VIEW)
    row = benchmark(dataset.__getitem__ if impl == "lazybcast" else lambda i: REF[i].copy(), 77)
    assert np.array_equal(row, REF[77])


# -- two threads against one ----------------------------------------------------------------

# Batches of 32 RGB images 224x224 (4.8 MB each) from one pixel broadcast over an image stack:
# the small inner dimension keeps the work in the kernel, not in memory bandwidth alone.
# 128 batches per round (about 8 ms): long enough to average over the scheduler's time slices.
_IMAGES = lazybcast.broadcast_to(np.array([10, 20, 30], np.uint8), (4096, 224, 224, 3))
_IMG_BATCH = 32
_IMG_RANGES = [(s, s + _IMG_BATCH) for s in range(0, _IMAGES.shape[0], _IMG_BATCH)]


def _materialize(rng):
    start, stop = rng
    return _IMAGES[start:stop].materialize(threads=1).shape[0]


def _run_on(pool):
    return sum(pool.map(_materialize, _IMG_RANGES))


def _best_interleaved(fns, rounds):
    """Best single-call time of each callable, taking turns so load changes hit both alike."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


@pytest.mark.parametrize("workers", [1, 2])
def test_threads_materialize_batches(benchmark, note, smoke, workers):
    benchmark.group = (f"materialize {len(_IMG_RANGES)} batches of "
                       f"{_IMAGES[:_IMG_BATCH].nbytes / 1e6:.1f} MB: threads")
    with ThreadPoolExecutor(max_workers=workers) as pool:
        assert benchmark(_run_on, pool) == _IMAGES.shape[0]
    if workers == 2:
        rounds = 3 if smoke else 21
        with ThreadPoolExecutor(1) as one, ThreadPoolExecutor(2) as two:
            t1, t2 = _best_interleaved([lambda: _run_on(one), lambda: _run_on(two)], rounds)
        note("two_thread_speedup", t1 / t2,
             f"two threads materializing different batches: {t1 / t2:.2f}x one thread's "
             f"throughput (one {t1 * 1e3:.2f} ms, two {t2 * 1e3:.2f} ms for "
             f"{_IMAGES.nbytes / 1e6:.0f} MB; best of {rounds}, interleaved)")
