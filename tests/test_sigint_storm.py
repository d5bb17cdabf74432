"""A storm of Ctrl-C (issue 13, "Keep it tested"): SIGINT every 2 ms while the main thread runs
multi-threaded copies, over and over, for a bounded time.

After every call, whether it returned or raised ``KeyboardInterrupt``, nothing may still touch
its buffers: ``out=`` keeps the bytes it had when the call ended (a helper thread still
writing would change them), no helper or prefetch thread outlives the call, and the view still
gives NumPy's values. Under AddressSanitizer (``tests/asan/run_asan.sh``, run by CI) a helper
reading freed memory (the gather's offsets table, issue 13 item 1) is reported as an error.

Each storm lasts STORM_SECONDS, so the file takes a few seconds whatever the machine's speed.
"""

import gc
import signal
import sys
import threading
import time

import numpy as np
import pytest

import lazybcast
from _threads import os_threads, settles_to

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or not hasattr(signal, "pthread_kill"), reason="needs POSIX signals"
)

STORM_SECONDS = 1.0
GAP = 0.002  # seconds between two SIGINTs, as in the reproducer
SETTLE = 0.02  # seconds a late helper would have to write (several 4 MB blocks)


def _invoke(call):
    """The frame inside which a SIGINT raises: ``call()`` and everything it calls."""
    return call()


def _inside_invoke(frame):
    while frame is not None:
        if frame.f_code is _invoke.__code__:
            return True
        frame = frame.f_back
    return False


def _storm(call, check, seconds=STORM_SECONDS):
    """Call ``call()`` in a loop while another thread sends SIGINT every GAP s for ``seconds``;
    run ``check()`` after every call, undisturbed (a signal raises only inside the call).
    Returns ``(interrupted, finished)`` counts."""
    main = threading.main_thread().ident
    stop = threading.Event()

    def handler(signum, frame):
        # Not inside the interpreter's own weakref callbacks (threading's WeakSet of threads):
        # an exception there is printed and ignored by Python, whoever's code it came from.
        if _inside_invoke(frame) and not frame.f_code.co_filename.endswith("_weakrefset.py"):
            raise KeyboardInterrupt

    def sender():
        while not stop.is_set():
            signal.pthread_kill(main, signal.SIGINT)
            time.sleep(GAP)

    before = os_threads()
    # Other libraries' gc callbacks (dask's distributed installs one) run inside the call when
    # a collection happens there; an interrupt raised in one is "ignored" (an unraisable
    # exception pytest reports), which says nothing about lazybcast: they are set aside.
    callbacks = gc.callbacks[:]
    gc.callbacks.clear()
    previous = signal.signal(signal.SIGINT, handler)
    thread = threading.Thread(target=sender, daemon=True)
    interrupted = finished = 0
    try:
        thread.start()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                result = _invoke(call)
            except KeyboardInterrupt:
                interrupted += 1
            else:
                finished += 1
                del result
            check()
    finally:
        stop.set()
        thread.join()
        time.sleep(0.01)  # signals still in flight reach the (ignoring) handler here
        signal.signal(signal.SIGINT, previous)
        gc.callbacks[:] = callbacks
    _no_extra_threads(before, within=2.0)  # nothing left running for the next test
    return interrupted, finished


def _no_extra_threads(baseline, within=1.0):
    """No thread started by the call is alive ``within`` s later (``baseline`` counts the
    storm's sender)."""
    assert settles_to(baseline, within), f"{os_threads() - baseline} threads outlived the call"


@pytest.fixture(autouse=True)
def _threads_settle():
    """Each test ends with the process's threads as it found them: a helper or prefetch thread
    that was joined may take a moment to leave the OS's list, which later tests count."""
    before = os_threads()
    yield
    gc.collect()  # an executor dropped by an interrupted generator stops its worker when freed
    _no_extra_threads(before, within=2.0)


def _transposed(n, layers):
    """A view whose copy misses the cache on every read: slow enough to be interrupted."""
    src = np.ascontiguousarray(
        (np.arange(n * n, dtype=np.uint32) % 251 + 1).astype(np.uint8).reshape(n, n)).T
    return lazybcast.broadcast_to(src, (layers, n, n)), src


def _unchanged_after(buf):
    """``check()``: ``buf`` is not written after the call that wrote it ended."""
    late = []

    def check():
        snapshot = buf.copy()
        time.sleep(SETTLE)
        if not np.array_equal(snapshot, buf):
            late.append(int((snapshot != buf).sum()))
    return check, late


def test_materialize_out_is_not_written_after_the_call():
    view, src = _transposed(2048, 8)  # 32 MB of output: 8 blocks over two threads
    buf = np.zeros(view.shape, dtype=view.dtype)
    check, late = _unchanged_after(buf)

    def call():
        buf[...] = 0
        return view.materialize(out=buf, threads=2)

    baseline = threading.active_count()
    interrupted, finished = _storm(call, check)
    assert interrupted > 0, "no call was interrupted: the storm missed"
    assert not late, f"out written after materialize ended ({late} elements changed)"
    assert threading.active_count() == baseline
    np.testing.assert_array_equal(view.materialize(out=buf, threads=2),
                                  np.broadcast_to(src, view.shape))


def test_gather_under_a_storm():
    """The issue's reproducer, at half its size: a gather across a transposed source; its
    offsets table must outlive every helper (ASan: heap-use-after-free before the fix)."""
    n = 4096
    view, src = _transposed(n, 4)  # 64 MB per gather
    idx = np.random.default_rng(0).permutation(n)
    baseline = os_threads() + 1  # the storm's sender

    def check():
        junk = [bytearray(4096) for _ in range(64)]  # reuse freed memory, as the reproducer
        del junk
        _no_extra_threads(baseline)

    interrupted, finished = _storm(lambda: view[:, :, idx], check)
    assert interrupted + finished > 0
    expected = np.broadcast_to(src, view.shape)[:2, :64, idx]
    np.testing.assert_array_equal(view[:2, :64, idx], expected)


def test_iter_batches_out_is_not_written_after_the_loop():
    view, src = _transposed(2048, 8)  # 8 batches of 4 MB
    buf = np.zeros((1,) + view.shape[1:], dtype=view.dtype)
    check, late = _unchanged_after(buf)

    def call():
        for _ in view.iter_batches(1, out=buf):
            pass

    interrupted, finished = _storm(call, check)
    assert interrupted > 0
    assert not late, f"out written after iter_batches ended ({late} elements changed)"


def test_iter_batches_prefetch_thread_ends_with_the_loop():
    view, src = _transposed(2048, 16)
    baseline = os_threads() + 1  # the storm's sender

    def call():
        batches = view.iter_batches(2, prefetch=2)
        try:
            for batch in batches:
                assert batch.shape == (2,) + view.shape[1:]
        finally:
            batches.close()

    def check():
        _no_extra_threads(baseline)  # the prefetch thread counts at the OS level

    interrupted, finished = _storm(call, check)
    assert interrupted > 0
    rows = [b for b in view[:3].iter_batches(2, prefetch=1)]
    np.testing.assert_array_equal(np.concatenate(rows), np.broadcast_to(src, (3,) + src.shape))
