"""Handing a view to torch and NumPy: a (200000, 64) float32 view of a 64-element row (51 MB
logical) against the same calls on ``np.broadcast_to``'s array.

``torch.asarray`` / ``torch.from_dlpack`` / ``torch.as_tensor`` take the view through DLPack:
an expanded tensor over the source, no copy. ``torch.tensor`` copies once, with torch's kernel
(the same cost as for NumPy's array); ``torch.from_numpy(view.materialize())`` is the fast way
to a contiguous tensor (lazybcast's kernel). The ratio note compares each to ``np.array(view)``.

Run: ``python -m pytest benchmarks/bench_torch.py`` (``--benchmark-disable`` for one pass).
"""

import time
import warnings

import numpy as np
import pytest

import lazybcast

torch = pytest.importorskip("torch", reason="torch is an optional benchmark dependency")

SHAPE = (200_000, 64)
_row = np.arange(64, dtype=np.float32)
_view = lazybcast.broadcast_to(_row, SHAPE)
_numpy = np.broadcast_to(_row, SHAPE)



def _quiet(func):
    """torch warns that NumPy's broadcast array is not writeable (the view is flagged
    read-only through DLPack instead, which torch accepts silently)."""

    def call():
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "The given NumPy array is not writable")
            return func()

    return call


# name -> (call on the view, the same call on NumPy's broadcast array)
CASES = {
    "torch.asarray": (lambda: torch.asarray(_view), _quiet(lambda: torch.asarray(_numpy))),
    "torch.from_dlpack": (lambda: torch.from_dlpack(_view), lambda: torch.from_dlpack(_numpy)),
    "torch.tensor (a copy)": (lambda: torch.tensor(_view), lambda: torch.tensor(_numpy)),
    "torch.from_numpy(materialize())": (lambda: torch.from_numpy(_view.materialize()),
                                        lambda: torch.from_numpy(np.array(_numpy))),
    "np.array (a copy)": (lambda: np.array(_view), lambda: np.array(_numpy)),
    "np.from_dlpack": (lambda: np.from_dlpack(_view), lambda: np.from_dlpack(_numpy)),
}


@pytest.mark.parametrize("impl", ["lazybcast", "numpy"])
@pytest.mark.parametrize("name", list(CASES))
def test_convert(benchmark, name, impl):
    ours, theirs = CASES[name]
    benchmark.group = f"convert (200000, 64) float32: {name}"
    result = benchmark(ours if impl == "lazybcast" else theirs)
    got = result.numpy() if isinstance(result, torch.Tensor) else np.asarray(result)
    assert got.shape == SHAPE and np.array_equal(got[-1], _row)


def _best(func, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def test_ratios_to_np_array(benchmark, note, smoke):
    """Best of 5 for each call on the view, as a ratio to ``np.array(view)`` (a full copy by
    lazybcast's kernel) measured in the same run."""
    benchmark.group = "convert (200000, 64) float32: ratios"
    benchmark.pedantic(lambda: np.array(_view), rounds=1, iterations=1)
    repeat = 1 if smoke else 5
    base = _best(lambda: np.array(_view), repeat)
    for name, (ours, _) in CASES.items():
        t = _best(ours, repeat)
        key = "ratio_" + "".join(c if c.isalnum() else "_" for c in name)
        note(key, t / base, f"{name}(view): {t * 1e3:.3f} ms = {t / base:.3g}x np.array(view) "
                            f"({base * 1e3:.2f} ms)")
