"""Shared helpers for the pytest-benchmark suites.

Run them for real with ``python -m pytest benchmarks`` (add ``--benchmark-only`` to skip the
plain checks, ``--benchmark-json FILE`` to save). CI runs a one-pass smoke with
``python -m pytest benchmarks --benchmark-disable -q``: every benchmarked callable runs once,
results are checked against NumPy, and cases whose output is 64 MiB or more are skipped.

Measured ratios that pytest-benchmark's table cannot show (memory per view, two-thread
throughput) are recorded with the ``note`` fixture: they go to ``benchmark.extra_info`` (and so
to ``--benchmark-json``) and are printed at the end of the run.
"""

import pytest

_NOTES = []


def benchmarks_disabled(config):
    """True when benchmarks run once as a smoke test (``--benchmark-disable``)."""
    return bool(config.getoption("benchmark_disable")) and not config.getoption(
        "benchmark_enable"
    )


@pytest.fixture(scope="session")
def smoke(request):
    """True in the one-pass smoke mode (``--benchmark-disable``)."""
    return benchmarks_disabled(request.config)


@pytest.fixture
def note(benchmark, request):
    """``note(key, value, text)``: record a measured number and print ``text`` at the end."""

    def record(key, value, text):
        benchmark.extra_info[key] = value
        _NOTES.append(f"{request.node.name}: {text}")

    return record


def pytest_terminal_summary(terminalreporter):
    if _NOTES:
        terminalreporter.section("lazybcast measurements")
        for line in _NOTES:
            terminalreporter.write_line(line)
