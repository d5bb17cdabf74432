"""Random layouts the suite does not hold: a scan for slow plans.

Run: ``python benchmarks/layout_scan.py [--seed S] [--cases N] [--mib M]``. Each case takes a
random 2-4-d array (item sizes 1 to 16 bytes), slices its axes with steps of -2 to 3,
permutes them, and sometimes broadcasts a new axis of 2-4, so that the output has about
``M`` MiB (1 to 96); then it times, best of 5, ``materialize(out=out)`` with one and with two
threads, NumPy's ``np.copyto(out, view)`` and a ``memmove`` of the output's bytes, and checks
the bytes written with each thread count against NumPy's (distinct bytes in the source, the
output scribbled over before each check). It prints the cases slower than NumPy (one thread
against NumPy's one) and the ten slowest against the copy; it exits with 1 if a byte was
wrong.

This is how the tile-axis choice and the generic tile loop's blocks were found
(benchmarks/RESULTS.md, "Layouts outside the suite"). Times move between runs on a shared
VM: compare the columns of one row.
"""

import argparse
import ctypes
import random
import sys
import time

import numpy as np

import lazybcast
from lazybcast._bench_machine import describe, machine_line


def _best(fn, n=5):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _layout(rng, mib):
    """A random source view and the shape it is broadcast to, or None (too large)."""
    dtype = np.dtype(rng.choice(["u1", "u2", "f4", "f8", "c16"]))
    ndim = rng.choice([2, 3, 3, 4])
    steps = [rng.choice([1, 1, 1, 2, 3, -1, -2]) for _ in range(ndim)]
    sizes = [rng.choice([2, 3, 4, 7, 16, 64, 100, 256, 1000]) for _ in range(ndim)]
    while np.prod(sizes) * dtype.itemsize < mib << 20:
        sizes[rng.randrange(ndim)] *= 2
    full = [n * abs(s) for n, s in zip(sizes, steps)]
    if np.prod(full) * dtype.itemsize > 256 << 20:
        return None
    nbytes = int(np.prod(full)) * dtype.itemsize
    base = (np.arange(nbytes, dtype=np.int64) * 2654435761 % 251).astype(np.uint8)
    base = base.view(dtype).reshape(full)  # (distinct bytes: a misplaced item shows)
    view = base[tuple(slice(None, None, s) for s in steps)]
    perm = list(range(ndim))
    rng.shuffle(perm)
    view = view.transpose(perm)
    shape = view.shape
    if rng.random() < 0.3:
        at = rng.randrange(ndim + 1)
        view = np.expand_dims(view, at)
        shape = view.shape[:at] + (rng.choice([2, 3, 4]),) + view.shape[at + 1:]
    return view, shape


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=60)
    parser.add_argument("--mib", type=int, default=16)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(machine_line(describe()))
    rows, wrong = [], []
    for _ in range(args.cases):
        made = _layout(rng, args.mib)
        if made is None:
            continue
        source, shape = made
        ref = np.broadcast_to(source, shape)
        out = np.empty(shape, source.dtype)
        if not (1 << 20) <= out.nbytes <= 96 << 20:
            continue
        view = lazybcast.broadcast_to(source, shape)
        plain = np.ones(out.nbytes, np.uint8)
        want = np.ascontiguousarray(ref).view(np.uint8)
        times = []
        for threads in (1, 2):
            out.view(np.uint8).fill(0xA5)  # (so that bytes left unwritten show)
            view.materialize(out=out, threads=threads)
            if not np.array_equal(out.view(np.uint8), want):
                wrong.append(f"{source.dtype.str} {shape} {ref.strides} threads={threads}")
            times.append(_best(lambda: view.materialize(out=out, threads=threads)))
        one, two = times
        numpy = _best(lambda: np.copyto(out, ref))
        copy = _best(lambda: ctypes.memmove(out.ctypes.data, plain.ctypes.data, out.nbytes))
        rows.append((f"{source.dtype.str} {shape} strides {ref.strides}", out.nbytes, one, two,
                     numpy, copy))
    header = f"{'layout':64} {'MiB':>5} {'1t ms':>7} {'2t ms':>7} {'numpy':>7} {'copy':>6}"

    def show(title, chosen):
        print(f"\n{title}\n{header}")
        for name, nbytes, one, two, numpy, copy in chosen:
            print(f"{name:64} {nbytes / 2**20:5.1f} {one * 1e3:7.2f} {two * 1e3:7.2f} "
                  f"{numpy * 1e3:7.2f} {copy * 1e3:6.2f}")

    show("slower than NumPy (one thread):", [r for r in rows if r[2] > r[4]])
    show("slowest against a copy (one thread):",
         sorted(rows, key=lambda r: r[2] / r[5], reverse=True)[:10])
    print(f"\n{len(rows)} layouts; wrong values: {wrong or 'none'}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
