"""Counting the process's threads at the OS level (the prefetch thread of
``iter_batches`` is started with ``_thread``, so ``threading.enumerate()`` does not list it)."""

import os
import sys
import threading
import time

import pytest

needs_proc = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="counts threads in /proc/self/task (Linux)")


def os_threads():
    """The number of threads of this process, as the kernel counts them (without /proc,
    Python's own count, which misses threads started with ``_thread``)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def settles_to(baseline, within=2.0):
    """Whether the thread count comes back to ``baseline`` within ``within`` seconds (a thread
    that has finished its work still takes a moment to exit)."""
    deadline = time.monotonic() + within
    while os_threads() > baseline and time.monotonic() < deadline:
        time.sleep(0.005)
    return os_threads() <= baseline
