"""Concurrency: many threads materializing, indexing, iterating and pickling one view at once get
NumPy's values. A view is immutable; the kernels release the GIL between and inside blocks, so
these calls really overlap."""

import os
import pickle
import sys
import threading
import time

import numpy as np
import pytest

import lazybcast

THREADS = 8
ROUNDS = 6


def _hammer(work):
    """Run ``work(k)`` for k in range(THREADS) on THREADS threads released together; re-raise
    the first failure."""
    barrier = threading.Barrier(THREADS)
    errors = []

    def run(k):
        try:
            barrier.wait()
            for r in range(ROUNDS):
                work(k, r)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("dtype", [np.float64, np.uint8, np.complex128, "U4"])
def test_shared_view_from_many_threads(dtype):
    src = np.arange(3 * 257).reshape(3, 1, 257)[:, :, ::-1].astype(dtype)
    shape = (4, 3, 50, 257)
    view = lazybcast.broadcast_to(src, shape)
    expected = np.broadcast_to(src, shape)
    rows = np.array([0, 2, 1, 2, 0])

    def work(k, r):
        op = (k + r) % 6
        if op == 0:
            np.testing.assert_array_equal(view.materialize(threads=1 + k % 3), expected)
        elif op == 1:
            out = np.empty(shape[::-1], dtype=view.dtype).T  # own buffer, F layout
            view.materialize(out=out)
            np.testing.assert_array_equal(out, expected)
        elif op == 2:
            key = (slice(None, None, -1), rows, slice(k, None, 3))
            np.testing.assert_array_equal(np.asarray(view[key]), expected[key])
        elif op == 3:
            for got, want in zip(view[k % 4], expected[k % 4]):
                np.testing.assert_array_equal(got, want)
        elif op == 4:
            for i, batch in enumerate(view.iter_batches(3, prefetch=k % 2)):
                np.testing.assert_array_equal(batch, expected[3 * i:3 * i + 3])
        else:
            clone = pickle.loads(pickle.dumps(view[1:, ::2]))
            np.testing.assert_array_equal(np.array(clone), expected[1:, ::2])

    _hammer(work)


def test_large_copies_share_the_kernel_pool():
    """Eight callers each asking for two threads (the pool has one worker per CPU)."""
    src = np.arange(1024, dtype=np.float32)
    view = lazybcast.broadcast_to(src, (8 * 1024, 1024))  # 32 MB: two threads by default
    assert view.nbytes >= 32 * 2**20

    def work(k, r):
        if r >= 2:
            return
        out = view.materialize(threads=None if k % 2 else 2)
        assert out.shape == view.shape
        np.testing.assert_array_equal(out[k::997], np.broadcast_to(src, out[k::997].shape))

    _hammer(work)


def test_object_references_stay_counted():
    """The object path takes references one by one; racing copies must not lose any."""
    item = object()
    src = np.empty((3, 1), dtype=object)
    src[:, 0] = [item, "a", None]
    view = lazybcast.broadcast_to(src, (3, 500))
    base = sys.getrefcount(item)
    results = [None] * THREADS

    def work(k, r):
        results[k] = view.materialize() if r % 2 else view[[0, 0, 2]]
        assert results[k][0, -1] is item

    _hammer(work)
    held = sum(int(np.sum(res == item)) for res in results)  # references the copies hold
    assert held > 0 and sys.getrefcount(item) == base + held
    results.clear()
    assert sys.getrefcount(item) == base


def test_thread_local_out_with_one_source_being_written():
    """A writer changes the source while readers copy it (a data race the contract leaves to the
    user): no crash, right shapes, and only values that were written (aligned 8-byte items are
    not torn on the platforms CI runs on)."""
    src = np.zeros((1, 64), dtype=np.int64)
    view = lazybcast.broadcast_to(src, (2000, 64))
    stop = threading.Event()

    def writer():
        v = 0
        while not stop.is_set():
            v = (v + 1) % 5
            src[...] = v

    w = threading.Thread(target=writer)
    w.start()
    try:
        def work(k, r):
            out = view.materialize()
            assert out.shape == (2000, 64)
            assert set(np.unique(out).tolist()) <= {0, 1, 2, 3, 4}

        _hammer(work)
    finally:
        stop.set()
        w.join()


# ---- fork safety (issue 11, item 6) -------------------------------------------------------


def _os_threads():
    """Threads of this process as the OS counts them (what CPython 3.12+ looks at before
    warning that fork() may deadlock), or None without /proc."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def test_no_helper_thread_outlives_a_call():
    """Helper threads are started by a copy and joined before it returns: none is left behind
    (a later fork() finds the process single-threaded)."""
    before_os, before_py = _os_threads(), threading.active_count()
    view = lazybcast.broadcast_to(np.arange(4096.0), (2048, 4096))  # 64 MB
    view.materialize(threads=2)
    view.materialize(threads=4)
    view.materialize()  # threads=None: two threads at this size
    view[:, np.arange(4095, -1, -1)]  # a gather of 64 MB
    assert threading.active_count() == before_py
    if before_os is not None:  # (<=: a thread of an earlier test may have ended meanwhile)
        # A thread an earlier test started (a signal sender, a prefetcher) may still be on its
        # way out: allow it 2 s to go. A helper left behind by the copies above never goes.
        deadline = time.monotonic() + 2.0
        while _os_threads() > before_os and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _os_threads() <= before_os


FORK_AFTER_THREADS = """
import os, warnings
import numpy as np
import lazybcast
view = lazybcast.broadcast_to(np.arange(4096.0), (2048, 4096))
view.materialize(threads=2)
view[:, np.arange(4096)[::-1]]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    pid = os.fork()  # Python 3.12+ warns here if another thread is alive
    if pid == 0:
        ok = view.materialize(threads=2)[2000, 4000] == 4000.0
        os._exit(0 if ok else 3)
if caught:
    raise SystemExit(f"fork() warned: {caught[0].message}")
_, status = os.waitpid(pid, 0)
raise SystemExit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_fork_after_multithreaded_copy_warns_nothing():
    """On Python 3.12+ CPython warns (DeprecationWarning) when fork() is called while other
    threads exist (with ``-W error`` it swallows the error, so the script records warnings
    instead): the script fails if a helper thread outlived its copy. On older Pythons it
    checks that the child copies with threads."""
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c",
                           FORK_AFTER_THREADS], cwd=root, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "multi-threaded" not in done.stderr
