"""Shared test settings: hypothesis profiles (``HYPOTHESIS_PROFILE=ci|dev|thorough``), the
``simd`` fixture that runs a kernel test with and without the run-time CPU extensions, and
Python's own Ctrl-C handler."""

import os
import signal

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The Ctrl-C tests (test_interrupt.py, test_batches_ring.py, ...) send SIGINT and expect
# Python's KeyboardInterrupt. A runner that starts pytest with SIGINT ignored (a background
# job of a non-interactive shell: POSIX has it ignore SIGINT) leaves Python without its
# handler, and those tests would see nothing; put it back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def new_outputs_stream():
    """Past the streaming thresholds, the kernels write an output never written before with
    ordinary stores (``_kernels._new_outputs_stream``); the tests past the thresholds
    allocate their outputs, new pages or not as the allocator has them, so here those
    stream too, and the tests keep testing the non-temporal paths.
    ``test_outputs_never_written_take_ordinary_stores`` turns the rule back on."""
    from lazybcast import _kernels

    before = _kernels._new_outputs_stream(True)
    try:
        yield
    finally:
        _kernels._new_outputs_stream(before)


@pytest.fixture(params=["detected", "SSE2 only"])
def simd(request):
    """Run a test with the vector extensions this CPU has, and again with SSE2 alone (the
    paths a CPU without SSSE3 or AVX2 takes)."""
    from lazybcast import _kernels

    if request.param == "SSE2 only":
        _kernels._limit_simd(())
    try:
        yield request.param
    finally:
        _kernels._limit_simd(None)
