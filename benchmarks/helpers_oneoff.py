"""One-off copies with two threads: waking a parked helper against starting one.

Run: ``python benchmarks/helpers_oneoff.py [--rounds N] [--gap-ms G]``. Each round copies
each size once per mode, every copy after ``G`` ms of busy waiting (long enough for the
helper's spin, at most 1 ms, to end; busy, because this VM's copies after an idle pause
run slower), the modes taking turns, and only once no other thread of the process runs
(torch's OpenMP workers spin for milliseconds after a call; a spinning worker keeps its vCPU
awake, which makes the next wake-up cheap). Modes:

* ``1t``: ``materialize(out=out, threads=1)``;
* ``2t parked``: ``threads=2`` with helpers that park after their spin (the default pool);
* ``2t start``: ``threads=2`` with ``_kernels._helper_spin(0)``: no pool, each copy starts
  its helper (what every copy that found no spinning helper did before helpers parked);
* ``torch 2t``: ``out.copy_(src.expand(shape))`` with two torch threads, if torch is
  installed (its OpenMP workers also sleep after their spin).

The table gives the 25th percentile / median in microseconds. Times move 2x between runs
on a shared VM: compare the modes within one run.
"""

import argparse
import time

import numpy as np

import lazybcast
from lazybcast import _kernels
from lazybcast._bench_machine import describe, machine_line
from lazybcast._bench_timing import _quiesce


def _busy(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=61)
    parser.add_argument("--gap-ms", type=float, default=3.0)
    parser.add_argument("--sizes-mb", type=float, nargs="+", default=[0.5, 1, 2, 4, 8, 16])
    parser.add_argument("--new-output", action="store_true",
                        help="materialize() into a new array each call (else out= one array "
                             "per size, which the other sizes' copies evict from the cache)")
    parser.add_argument("--hot", action="store_true",
                        help="write the output (one thread, untimed) just before each gap, so "
                             "the timed copy finds it in the cache")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        torch = None
    print(machine_line(describe(torch)))
    spin = _kernels._helper_spin()
    src = np.arange(1024.0)
    cases = []
    for mb in args.sizes_mb:
        shape = (int(mb * (1 << 20)) // src.nbytes, src.size)
        view = lazybcast.broadcast_to(src, shape)
        out = np.empty(shape)
        if args.new_output:
            def ours(threads, v=view):
                return v.materialize(threads=threads)
        else:
            def ours(threads, v=view, o=out):
                return v.materialize(out=o, threads=threads)
        modes = {
            "1t": (spin, lambda ours=ours: ours(1)),
            "2t parked": (spin, lambda ours=ours: ours(2)),
            "2t start": (0, lambda ours=ours: ours(2)),
        }
        if torch is not None:
            t_src, t_out = torch.from_numpy(src), torch.from_numpy(out)

            def torch_copy(t_src=t_src, t_out=t_out, shape=shape):
                torch.set_num_threads(2)
                if args.new_output:
                    return t_src.expand(shape).contiguous()
                return t_out.copy_(t_src.expand(shape))

            modes["torch 2t"] = (spin, torch_copy)
        cases.append((mb, modes, {key: [] for key in modes}))
    try:
        for _ in range(args.rounds):
            for mb, modes, times in cases:
                for key, (helper_spin, fn) in modes.items():
                    _kernels._helper_spin(helper_spin)
                    if key == "2t parked" and not _kernels._helpers_alive():
                        modes["2t parked"][1]()  # (the last "2t start" ended the pool)
                    if args.hot:
                        modes["1t"][1]()
                    _quiesce(limit=0.2)  # (torch's workers spin for milliseconds)
                    _busy(args.gap_ms / 1000)
                    t0 = time.perf_counter()
                    fn()
                    times[key].append(time.perf_counter() - t0)
    finally:
        _kernels._helper_spin(spin)
    keys = list(cases[0][1])
    print("| output | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for mb, _, times in cases:
        cells = [f"{np.percentile(times[k], 25) * 1e6:.0f} / {np.median(times[k]) * 1e6:.0f}"
                 for k in keys]
        print(f"| {mb:g} MiB | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
