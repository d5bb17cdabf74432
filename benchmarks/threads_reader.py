"""Two threads and the reader after them: what a copy costs whoever reads its output next.

Run: ``python benchmarks/threads_reader.py [--rounds N] [--sizes-mb ...]``. A copy written
by two threads leaves half its output in the other core's cache; a reader on the calling
thread (here ``out.sum()``, as a model consuming a batch would) then fetches those lines
from that core. Where the output fits in one core's L2 this costs the reader more than the
second thread saved the writer (benchmarks/RESULTS.md, "Two threads and the reader after
them"): the reason ``LOOP_THREADS_BYTES`` is one core's L2 and not lower.

Each round, for each size and mode in turn: 5 untimed copies (a loop: helpers spinning,
torch's workers awake), then one timed copy and a timed ``out.sum()`` right after it. Modes:
``1t`` and ``2t`` (``materialize(out=out, threads=...)``), and ``torch 1t`` / ``torch 2t``
(``out.copy_(src.expand(shape))``) if torch is installed. The table gives medians in
microseconds: write, read, and write + read. Times move between runs on a shared VM:
compare the modes within one run.
"""

import argparse
import statistics
import time

import numpy as np

import lazybcast
from lazybcast._bench_machine import describe, machine_line


def _modes(view, out, torch):
    modes = {"1t": lambda: view.materialize(out=out, threads=1),
             "2t": lambda: view.materialize(out=out, threads=2)}
    if torch is not None:
        tout = torch.from_numpy(out)
        tsrc = torch.from_numpy(np.array(view.source)).expand(view.shape)
        for t in (1, 2):
            modes[f"torch {t}t"] = (lambda t=t: (torch.set_num_threads(t), tout.copy_(tsrc)))
    return modes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--sizes-mb", type=float, nargs="+", default=[0.5, 1, 2, 4, 8])
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        torch = None
    print(machine_line(describe(torch)))
    src = np.arange(1024.0)
    cases = []
    for mb in args.sizes_mb:
        shape = (max(1, int(mb * (1 << 20)) // src.nbytes), src.size)
        view = lazybcast.broadcast_to(src, shape)
        out = np.empty(shape)
        cases.append((mb, view, out, _modes(view, out, torch)))
    times = {(mb, mode): ([], []) for mb, _, _, modes in cases for mode in modes}
    for _ in range(args.rounds):
        for mb, view, out, modes in cases:
            for mode, fn in modes.items():
                for _ in range(5):
                    fn()
                t0 = time.perf_counter()
                fn()
                t1 = time.perf_counter()
                out.sum()
                t2 = time.perf_counter()
                write, read = times[mb, mode]
                write.append(t1 - t0)
                read.append(t2 - t1)
    if torch is not None:
        torch.set_num_threads(1)
    for mb, view, out, modes in cases:
        np.testing.assert_array_equal(out, np.broadcast_to(src, view.shape))
        cells = []
        for mode in modes:
            write, read = times[mb, mode]
            w, r = statistics.median(write) * 1e6, statistics.median(read) * 1e6
            total = statistics.median(a + b for a, b in zip(write, read)) * 1e6
            cells.append(f"{mode} {w:.1f} + {r:.1f} = {total:.1f}")
        print(f"{mb:g} MiB: " + " | ".join(cells))


if __name__ == "__main__":
    main()
