"""``python -m lazybcast bench``: materialize() against NumPy, side by side in one process."""

import time

import numpy as np

from lazybcast import broadcast, broadcast_to

__all__ = ["run"]


def _best(fn, repeat, budget=0.5):
    fn()
    best = float("inf")
    deadline = time.perf_counter() + budget
    for i in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        if i >= 2 and time.perf_counter() > deadline:
            break
    return best


def _cases(quick):
    rgb = np.arange(3, dtype=np.uint8).reshape(1, 1, 3)
    yield "(1,1,3) u1 -> (512,512,3)", broadcast_to(rgb, (512, 512, 3))
    col = np.arange(100 * 3, dtype=np.uint8).reshape(100, 1, 3)
    yield "(100,1,3) u1 -> (100,100,3)", broadcast_to(col, (100, 100, 3))
    t = np.ones((1024, 1024), dtype=np.float32).T
    yield "transposed f4 (1024,1024)", broadcast_to(t, (1024, 1024))
    yield "(16,) f4 explicit -> (8,16,64,64)", broadcast(
        np.ones(16, np.float32), (8, 16, 64, 64), (1,), mode="explicit")
    yield "(N,1) f8 -> (100000,8)", broadcast_to(np.ones((100000, 1)), (100000, 8))
    yield "scalar f8 -> (4096,4096)", broadcast_to(np.float64(1), (4096, 4096))


def run(quick=False):
    """Print a table of best-of-N times and ratios; returns a process exit code."""
    rows = []
    header = f"{'case':36} {'out':>9} {'lazybcast':>11} {'numpy':>11} {'speedup':>8}"
    print(header)
    print("-" * len(header))
    ratios = []
    for name, view in _cases(quick):
        out = np.empty(view.shape, view.dtype)
        ref = np.broadcast_to(view.source, view.shape)
        ours = _best(lambda: view.materialize(out=out), 50)
        theirs = _best(lambda: np.copyto(out, ref), 50)
        ratios.append(theirs / ours)
        rows.append(name)
        print(f"{name:36} {out.nbytes / 1e6:7.2f}MB {ours * 1e6:9.1f}us {theirs * 1e6:9.1f}us "
              f"{theirs / ours:7.2f}x", flush=True)
    geo = float(np.exp(np.mean(np.log(ratios))))
    print(f"geometric-mean speedup over NumPy: {geo:.2f}x")
    return 0
