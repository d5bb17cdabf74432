"""The copy-then-read benchmark group: a materialized copy and a read of its output right
after, on the calling thread, as a data loader's consumer reads a batch it was just handed.

An extra case group of ``python -m lazybcast bench`` (listed in
:data:`lazybcast._bench_groups.EXTRA_GROUPS`; its own table after the materialize suite;
``python -m lazybcast bench -k "then out.sum"`` runs it alone). Each case times, for each peer, one
copy into its own preallocated output and ``out.sum()`` (NumPy's, on the calling thread, the
same reader for every peer) right after it: ``view.materialize(out=out)`` with lazybcast's
default threads, ``np.copyto(out, np.broadcast_to(...))``, and ``out.copy_(src.expand(shape))``
with torch's one and two threads.

Why: the materialize suite times the copy alone, where a second thread always looks like a
gain. A line written by the other core has to come from that core's cache when the calling
thread reads it, and for outputs that fit in one core's L2 this cost the reader more than the
second thread saved (benchmarks/RESULTS.md, "Two threads and the reader after them"): the
reason lazybcast keeps one thread below ``LOOP_THREADS_BYTES`` (one core's L2) while torch
takes two. This group shows that trade in the suite's own conditions (calls in a loop, so
helpers and torch's workers are awake). The cases are outputs of 0.5-2 MB, the sizes where
the suite's copies alone come closest to torch with two threads (``(7,) c16 -> (9362,7)`` is
one of the suite's), plus 4 MiB, where lazybcast takes two threads too.
``benchmarks/threads_reader.py`` splits the same times into write and read, with medians.

>>> from lazybcast._bench_reader import CASES
>>> name, impls, tags = CASES[0]()
>>> name, sorted(impls)[:2], "reader" in tags
('copy then out.sum(): (7,) c16 -> (9362,7)', ['lazybcast', 'numpy'], True)
"""

import math

import numpy as np

from lazybcast._api import broadcast_to
from lazybcast._bench_cases import OpCase, fmt_shape
from lazybcast._bench_peers import load_torch

__all__ = ["CASES", "SHAPES", "TITLE", "source"]

TITLE = ("a copy, then out.sum() on the calling thread: what the next reader pays "
         "(lazybcast._bench_reader)")

CASES: "list[OpCase]" = []

#: Case name -> ``(source shape, output shape, dtype)``.
SHAPES: "dict[str, tuple]" = {}


def source(shape, dtype):
    """The source of a case: values in [1, 2), 97 distinct ones (exact sums in float64)."""
    n = math.prod(shape)
    return (np.arange(n) % 97 / 97 + 1).astype(dtype).reshape(shape)


def _case(src_shape, shape, dtype, quick=False):
    dtype = np.dtype(dtype)
    name = f"copy then out.sum(): {fmt_shape(src_shape)} {dtype.str[1:]} -> {fmt_shape(shape)}"

    def make():
        src = source(src_shape, dtype)
        view, ref = broadcast_to(src, shape), np.broadcast_to(src, shape)
        outs = {peer: np.empty(shape, dtype) for peer in ("lazybcast", "numpy", "torch")}

        def ours():
            view.materialize(out=outs["lazybcast"])
            return outs["lazybcast"].sum()

        def numpys():
            np.copyto(outs["numpy"], ref)
            return outs["numpy"].sum()

        impls = {"lazybcast": ours, "numpy": numpys}
        torch = load_torch()
        if torch is not None:
            expanded = torch.from_numpy(src).expand(shape)
            out = torch.from_numpy(outs["torch"])

            def torchs():
                out.copy_(expanded)
                return outs["torch"].sum()  # NumPy's sum: the same reader for every peer

            impls["torch"] = torchs
        return impls

    tags = {"reader"} | ({"quick"} if quick else set())
    CASES.append(OpCase(name, tags, make, nbytes=math.prod(shape) * dtype.itemsize))
    SHAPES[name] = (src_shape, shape, dtype)


def _build():
    # 0.5-2 MB, where the suite's copies come closest to torch's two threads (one thread here)
    _case((7,), (9362, 7), np.complex128, quick=True)
    _case((32768, 1), (32768, 15), np.float32)
    _case((1024,), (64, 1024), np.float64)
    _case((1024,), (128, 1024), np.float64)
    _case((1024,), (256, 1024), np.float64)
    # 4 MiB: two threads for lazybcast too
    _case((64,), (16384, 64), np.float32)
    _case((1024,), (512, 1024), np.float64)


_build()
del _build
