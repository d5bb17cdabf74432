"""Accuracy of floating reductions of a view against NumPy's, both against an exact reference.

Run: ``python benchmarks/accuracy_reductions.py``. For each case the table gives the error of
lazybcast and of NumPy (on ``np.broadcast_to`` of the same source) relative to the exact
value, in units of the result dtype's machine epsilon (the largest over the result's cells;
absolute where the exact value is 0).
The exact value comes from :class:`fractions.Fraction` arithmetic on the source (a sum over
repeated rows is ``k`` times the source's exact sum; moments likewise), so it does not depend
on either implementation.
"""

import math
from fractions import Fraction

import numpy as np

import lazybcast


def _exact_sum(values):
    return sum((Fraction(float(x)) for x in values.ravel()), Fraction(0))


def _exact(name, src, k, ddof=0):
    """Exact sum / mean / var of a 1-D ``src`` repeated ``k`` times."""
    n = src.size * k
    total = _exact_sum(src) * k
    if name == "sum":
        return total
    mean = total / n
    if name == "mean":
        return mean
    ss = sum(((Fraction(float(x)) - mean) ** 2 for x in src.ravel()), Fraction(0)) * k
    var = ss / (n - ddof)
    return var if name == "var" else Fraction(math.sqrt(var))  # sqrt: float64 is enough


def _err(got, exact, dtype):
    got = np.asarray(got, dtype=np.float64).ravel()
    eps = np.finfo(dtype).eps
    # relative error; absolute where the exact value is 0 (the std of repeated values)
    return max(abs(Fraction(float(g)) - e) / (abs(e) if e else 1)
               for g, e in zip(got, exact)) / Fraction(float(eps))


def measure(dtype, name, rows, cols, axis, seed=0, ddof=0):
    rng = np.random.default_rng(seed)
    src = (rng.standard_normal(cols) * 3 + 1).astype(dtype)
    view = lazybcast.broadcast_to(src, (rows, cols))
    ref = np.broadcast_to(src, (rows, cols))
    kwargs = {"axis": axis} | ({"ddof": ddof} if name in ("var", "std") else {})
    ours = getattr(np, name)(view, **kwargs)
    ours = ours.materialize() if type(ours) is lazybcast.BroadcastView else ours
    theirs = getattr(np, name)(ref, **kwargs)
    if axis is None:  # everything: src repeated `rows` times
        exact = [_exact(name, src, rows, ddof)]
    elif axis == 0:  # each column: one value repeated `rows` times
        exact = [_exact(name, src[j:j + 1], rows, ddof) for j in range(cols)]
    else:  # each row: the source once
        exact = [_exact(name, src, 1, ddof)]
        ours, theirs = np.asarray(ours)[:1], np.asarray(theirs)[:1]
    return float(_err(ours, exact, dtype)), float(_err(theirs, exact, dtype))


CASES = [
    ("float32", "sum", 100_000, 1000, None),
    ("float32", "sum", 100_000, 10, 0),
    ("float32", "mean", 100_000, 1000, None),
    ("float32", "mean", 1_000_000, 10, 0),
    ("float32", "var", 10_000, 1000, None),
    ("float32", "std", 1_000_000, 10, 0),
    ("float64", "sum", 100_000, 1000, None),
    ("float64", "mean", 1_000_000, 10, 0),
    ("float64", "var", 10_000, 1000, None),
]


def main():
    print(f"{'case':44} {'lazybcast':>10} {'numpy':>10}   (max error / eps)")
    for dtype, name, rows, cols, axis in CASES:
        ours, theirs = measure(np.dtype(dtype), name, rows, cols, axis)
        case = f"{dtype} {name}(axis={axis}) ({cols},) -> ({rows},{cols})"
        print(f"{case:44} {ours:10.3g} {theirs:10.3g}")


if __name__ == "__main__":
    main()
