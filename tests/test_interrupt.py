"""Interrupts: Ctrl-C (SIGINT) during a materialize that takes seconds raises KeyboardInterrupt
within about half a second (the kernel looks at signals between 4 MB blocks), with no crash, and
the view stays usable.

The slow case is a transposed uint8 source: every element read is a cache miss, so a few hundred
MB of output take seconds without needing much memory.
"""

import math
import signal
import sys
import threading
import time

import numpy as np
import pytest

import lazybcast

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or not hasattr(signal, "pthread_kill"), reason="needs POSIX signals"
)

N = 8192
LATENCY = 0.5  # seconds from SIGINT to KeyboardInterrupt
DELAY = 0.3  # seconds into the copy when SIGINT is sent


@pytest.fixture(scope="module")
def slow():
    """``(view, src)``: a view that takes about 2.5 s to materialize on one thread."""
    src = np.arange(N * N, dtype=np.uint8).reshape(N, N).T  # 64 MB, read across rows
    probe = lazybcast.broadcast_to(src, (1, N, N))[:, : N // 8]
    start = time.perf_counter()
    probe.materialize(threads=1)
    per_layer = 8 * (time.perf_counter() - start)  # one (N, N) layer, 64 MB of output
    layers = max(2, min(32, math.ceil(2.5 / max(per_layer, 1e-3))))
    return lazybcast.broadcast_to(src, (layers, N, N)), src


def _interrupt_after(delay):
    """SIGINT to the main thread after ``delay`` s; returns a list that gets the send time."""
    sent = []
    main = threading.main_thread().ident

    def fire():
        sent.append(time.perf_counter())
        signal.pthread_kill(main, signal.SIGINT)

    timer = threading.Timer(delay, fire)
    timer.start()
    return sent, timer


def _interrupted_materialize(view, **kwargs):
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    sent, timer = _interrupt_after(DELAY)
    start = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            view.materialize(**kwargs)
            pytest.fail(f"materialize finished in {time.perf_counter() - start:.2f} s, before "
                        f"the SIGINT at {DELAY} s")  # pragma: no cover
        return time.perf_counter() - sent[0]
    finally:
        timer.cancel()
        timer.join()


def _still_usable(view, src):
    part = view[1:, ::997, -5:].materialize()
    np.testing.assert_array_equal(part, np.broadcast_to(src, view.shape)[1:, ::997, -5:])
    out = np.empty((2, 64, N), dtype=view.dtype)
    view[:2, :64].materialize(out=out, threads=2)
    np.testing.assert_array_equal(out[1, 12], src[12])


def test_ctrl_c_single_thread(slow):
    view, src = slow
    latency = _interrupted_materialize(view, threads=1)
    assert latency < LATENCY, f"KeyboardInterrupt came {latency:.2f} s after SIGINT"
    _still_usable(view, src)


@pytest.mark.parametrize("threads", [2, None], ids=["threads=2", "threads=None (2 above 32 MB)"])
def test_ctrl_c_with_helper_threads(slow, threads):
    view, src = slow
    assert view.nbytes >= 32 * 2**20
    latency = _interrupted_materialize(view, threads=threads)
    _still_usable(view, src)
    assert latency < LATENCY, f"KeyboardInterrupt came {latency:.2f} s after SIGINT"


def test_ctrl_c_then_iterate_batches(slow):
    view, src = slow
    endless = lazybcast.broadcast_to(src, (10**6, N, N))  # a million 64 MB batches
    batches = endless.iter_batches(1)
    sent, timer = _interrupt_after(DELAY)
    give_up = time.perf_counter() + 20
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in batches:
                if time.perf_counter() > give_up:  # pragma: no cover - the failure case
                    pytest.fail("no KeyboardInterrupt 20 s into the batches")
    finally:
        timer.cancel()
        timer.join()
    assert time.perf_counter() - sent[0] < LATENCY
    _still_usable(view, src)
