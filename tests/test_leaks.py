"""Leak budget (issue 13, "Keep it tested"): many iterations of every public operation leave
no references, Python allocations or resident memory behind.

Each operation runs WARMUP times (caches, free lists, lazily imported modules settle), then
WINDOWS windows of ROUNDS calls while three things are watched:

* the reference counts of the user's objects (source array, index array, out buffer): a
  missed decref in compiled code shows up as a count that grows with the iterations;
* ``tracemalloc``: Python-level allocations still alive after the rounds (budget: a few kB,
  whatever the number of rounds);
* the process's resident set (RSS), for allocations tracemalloc cannot see (NumPy's data
  buffers, the kernels' C buffers): budget 8 MB over WINDOWS * ROUNDS iterations that each
  allocate a fresh result, so a leaked result of any size would blow it.

The whole file runs in a few seconds.
"""

import gc
import os
import pickle
import sys
import tracemalloc

import numpy as np
import pytest

import lazybcast

WARMUP = 50
ROUNDS = 400
WINDOWS = 3  # windows of ROUNDS calls; the quietest one is judged
PY_BUDGET = 16 * 1024  # bytes of Python allocations left alive by ROUNDS iterations
RSS_BUDGET = 8 * 2**20  # bytes of resident memory gained over all the windows


#: Under AddressSanitizer (tests/asan/run_asan.sh) freed memory sits in a quarantine of up to
#: 256 MB, so resident memory grows without a leak: the RSS budgets are checked without it.
UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")


def _rss():
    """Resident set size in bytes (Linux; None elsewhere and under ASan)."""
    if UNDER_ASAN:
        return None
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096
    except OSError:
        return None


SOURCE = np.arange(64, dtype=np.float64).reshape(1, 64)  # 512 B
VIEW = lazybcast.broadcast_to(SOURCE, (256, 64))  # 128 kB logical
INDEX = np.array([3, 1, 255, 0, 7], dtype=np.intp)
MASK = np.arange(256) % 3 == 0
OUT = np.empty(VIEW.shape, dtype=VIEW.dtype)
BATCH = np.empty((32, 64), dtype=VIEW.dtype)
class _Item:
    """An element of the object array: its own object, so its count is the view's alone
    (None, small ints and interned strings are shared with the whole interpreter)."""


OBJECTS = np.array([_Item(), (_Item(), 1), _Item(), [_Item()]], dtype=object).reshape(1, 4)
OBJ_VIEW = lazybcast.broadcast_to(OBJECTS, (8, 4))


def _drain(iterator):
    for _ in iterator:
        pass


OPERATIONS = {
    "broadcast_to": lambda: lazybcast.broadcast_to(SOURCE, (256, 64)),
    "broadcast explicit": lambda: lazybcast.broadcast(SOURCE[0], [4, 64, 2], [1],
                                                      mode="explicit"),
    "broadcast_arrays": lambda: lazybcast.broadcast_arrays(SOURCE, np.ones((3, 1))),
    "broadcast_shapes": lambda: lazybcast.broadcast_shapes((256, 1), (64,), range(1, 2)),
    "refused shape": lambda: _raises(lambda: lazybcast.broadcast_to(SOURCE, {1: 2})),
    "view[i]": lambda: VIEW[3],
    "view[i, j]": lambda: VIEW[3, 5],
    "view[slices]": lambda: VIEW[1:200:3, ::-2],
    "view[..., None]": lambda: VIEW[..., None],
    "view[idx] (gather)": lambda: VIEW[INDEX],
    "view[:, idx] (gather)": lambda: VIEW[:, INDEX[:2]],
    "view[mask]": lambda: VIEW[MASK],
    "view[range, True]": lambda: VIEW[range(3), True],
    "view[out of range]": lambda: _raises(lambda: VIEW[[0, 256]]),
    "object gather": lambda: OBJ_VIEW[[0, 7], 1:],
    "materialize": lambda: VIEW.materialize(),
    "materialize(out=)": lambda: VIEW.materialize(out=OUT),
    "materialize(threads=2)": lambda: VIEW.materialize(threads=2),
    "object materialize": lambda: OBJ_VIEW.materialize(),
    "np.asarray": lambda: np.asarray(VIEW),
    "np.array (copy)": lambda: np.array(VIEW),
    "iterate": lambda: _drain(VIEW[:16]),
    "iter_batches": lambda: _drain(VIEW.iter_batches(64)),
    "iter_batches(out=)": lambda: _drain(VIEW.iter_batches(32, out=BATCH)),
    "iter_batches(prefetch=2)": lambda: _drain(VIEW.iter_batches(64, prefetch=2)),
    "RowDataset": lambda: lazybcast.RowDataset(VIEW).__getitems__([0, 5, 9]),
    "pickle": lambda: pickle.loads(pickle.dumps(VIEW)),
    "pickle objects": lambda: pickle.loads(pickle.dumps(OBJ_VIEW)),
    "repr": lambda: repr(VIEW),
}


def _raises(call):
    try:
        call()
    except (ValueError, TypeError, IndexError):
        return
    raise AssertionError("expected an error")


def _refcounts():
    return [sys.getrefcount(x) for x in (SOURCE, VIEW, INDEX, MASK, OUT, BATCH, OBJECTS,
                                         OBJ_VIEW)] + [sys.getrefcount(x) for x in
                                                       OBJECTS.ravel()]


def _python_growth(op):
    """Bytes of Python allocations still alive after ROUNDS calls of ``op``, for the quietest of
    WINDOWS consecutive windows. A leak of ``b`` bytes per call shows as ``ROUNDS * b`` in every
    window; the interpreter's own one-off growth (a cache or free list resizing once, which
    Python 3.13 does within a few hundred pickles of a plain ndarray: measured 4-23 kB) lands in
    one window only."""
    growths = []
    tracemalloc.start()
    try:
        for _ in range(WINDOWS):
            before = tracemalloc.take_snapshot()
            for _ in range(ROUNDS):
                op()
            gc.collect()
            after = tracemalloc.take_snapshot()
            growths.append(sum(stat.size_diff for stat in after.compare_to(before, "filename")))
    finally:
        tracemalloc.stop()
    return min(growths)


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_leak_budget(name):
    op = OPERATIONS[name]
    for _ in range(WARMUP):
        op()
    gc.collect()
    counts = _refcounts()
    rss = _rss()
    grown = _python_growth(op)
    assert _refcounts() == counts, f"{name}: reference counts changed"
    assert grown < PY_BUDGET, f"{name}: {grown} bytes of Python allocations left alive"
    if rss is not None:
        gained = _rss() - rss
        assert gained < RSS_BUDGET, f"{name}: resident memory grew by {gained} bytes"


def test_rss_over_a_large_gather_loop():
    """Results of 1 MB each, 300 times: a leaked result would add 300 MB."""
    view = lazybcast.broadcast_to(np.arange(2048.0), (4096, 2048))
    idx = np.arange(0, 4096, 64)  # 64 rows of 16 kB: 1 MB per gather
    for _ in range(20):
        view[idx]
        view[:64].materialize(threads=2)
    gc.collect()
    rss = _rss()
    if rss is None:
        pytest.skip("no resident set size (no /proc/self/statm, or under ASan)")
    for _ in range(300):
        view[idx]
        view[:64].materialize(threads=2)
    gc.collect()
    assert _rss() - rss < RSS_BUDGET
