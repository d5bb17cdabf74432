"""The lazy-operation benchmark group: ufunc chains and reductions on a view, side by side with
NumPy on the same logical array (``np.broadcast_to``) and PyTorch on ``expand``.

An extra case group of ``python -m lazybcast bench`` (listed in
:data:`lazybcast._bench_groups.EXTRA_GROUPS`; its own table after the materialize suite;
``python -m lazybcast bench -k source-cost`` runs it alone). :data:`CASES` holds
:class:`~lazybcast._bench_cases.OpCase` objects: calling one builds its operands and returns
``(name, impls, tags)``, where ``impls`` maps ``"lazybcast"``, ``"numpy"`` and, when torch
imports, ``"torch"`` to zero-argument callables that compute the same result. lazybcast and
NumPy run the very same expression (a view and an ndarray answer the same methods); torch runs
its own spelling on ``torch.from_numpy(source).expand(shape)``. ``nbytes`` is the logical size
(what NumPy and torch work through); :data:`SOURCE_NBYTES` has what lazybcast works through, so
the ratio to expect is their quotient. ``benchmarks/bench_lazy_ops.py`` runs the same cases
under pytest-benchmark.

>>> from lazybcast._bench_lazy import CASES, SOURCE_NBYTES
>>> case = CASES[0]
>>> name, impls, tags = case()
>>> name, sorted(impls)[:2], case.nbytes, SOURCE_NBYTES[name]
('np.exp(v).sum(axis=1) (1024,) f4 -> (16384,1024)', ['lazybcast', 'numpy'], 67108864, 4096)
"""

import math

import numpy as np

from lazybcast._api import broadcast_to
from lazybcast._bench_cases import OpCase, fmt_shape
from lazybcast._bench_peers import load_torch

__all__ = ["CASES", "SOURCE_NBYTES", "TITLE"]

TITLE = "ufunc chains and reductions of views, at source cost (lazybcast._bench_lazy)"

MiB = 1 << 20

CASES: "list[OpCase]" = []

#: Case name -> bytes of its sources (what lazybcast computes on).
SOURCE_NBYTES: "dict[str, int]" = {}


def _case(expr, operands, dtype, op, torch_op, quick, nans=False):
    """An :class:`OpCase` for ``op(*views)`` against ``op(*arrays)`` and ``torch_op``
    (``nans``: every 7th source value NaN)."""
    dtype = np.dtype(dtype)
    src = " ".join(fmt_shape(s) for s, _ in operands)
    name = f"{expr} {src} {dtype.str[1:]} -> {fmt_shape(operands[0][1])}"

    def make():
        sources = [_values(s, dtype, k, nans) for k, (s, _) in enumerate(operands)]
        views = [broadcast_to(x, t) for x, (_, t) in zip(sources, operands)]
        arrays = [np.broadcast_to(x, t) for x, (_, t) in zip(sources, operands)]
        impls = {"lazybcast": lambda: op(*views), "numpy": lambda: op(*arrays)}
        torch = load_torch()
        if torch is not None:
            tensors = [torch.from_numpy(x).expand(t) for x, (_, t) in zip(sources, operands)]
            impls["torch"] = lambda: torch_op(*tensors)
        return impls

    nbytes = max(math.prod(t) for _, t in operands) * dtype.itemsize
    tags = {"source-cost"} | ({"quick"} if quick else set()) | (
        {"huge"} if nbytes >= 64 * MiB else set())
    CASES.append(OpCase(name, tags, make, nbytes=nbytes, rtol=1e-4))
    SOURCE_NBYTES[name] = sum(math.prod(s) for s, _ in operands) * dtype.itemsize


def _values(shape, dtype, k=0, nans=False):
    """Deterministic values in [0, 1) (no overflow in exp), distinct per operand; every 7th
    NaN if ``nans``."""
    n = math.prod(shape)
    x = ((np.arange(n) * 7 + 13 * k) % 101) / 101
    if nans:
        x[::7] = np.nan
    return x.astype(dtype).reshape(shape)


def _items(x):
    """The first-axis items of a view, an array or a tensor (a data loader's ``x[i]``)."""
    return [x[i] for i in range(len(x))]


def _torch_stack(t):
    return load_torch().stack(_items(t))


def _torch_percentiles(t):
    torch = load_torch()
    return torch.quantile(t.flatten(), torch.tensor([0.01, 0.99], dtype=t.dtype))


def _torch_nanpercentiles(t):
    torch = load_torch()
    return torch.nanquantile(t, torch.tensor([0.01, 0.99], dtype=t.dtype), dim=0)


def _torch_masked_sum(t, mask):
    torch = load_torch()
    return torch.where(torch.from_numpy(mask), t, 0).sum(dim=0)


def _torch_masked_max(t, mask, initial):
    torch = load_torch()
    return torch.where(torch.from_numpy(mask), t, initial).amax(dim=1)


def _torch_pad(t, width):
    torch = load_torch()
    return torch.nn.functional.pad(t, (width,) * 4)


def _torch_lane_ptp(t):
    return t.amax(dim=1) - t.amin(dim=1)


def _torch_einsum(subscripts, *tensors):
    return load_torch().einsum(subscripts, *tensors)


def _build():
    f4, f8 = np.float32, np.float64

    for rows, quick in ((16384, True), (262144, False)):  # 64 MiB and 1 GiB logical
        _case("np.exp(v).sum(axis=1)", [((1024,), (rows, 1024))], f4,
            lambda v: np.exp(v).sum(axis=1), lambda t: t.exp().sum(dim=1), quick)
    for rows, quick in ((2048, True), (32768, False)):  # 16 MiB and 256 MiB logical
        _case("(v*2+1).mean()", [((1, 1024), (rows, 1024))], f8,
            lambda v: (v * 2 + 1).mean(), lambda t: (t * 2 + 1).mean(), quick)
        _case("v.std(axis=0)", [((rows, 1), (rows, 1024))], f8,
            lambda v: v.std(axis=0), lambda t: t.std(dim=0, correction=0), quick)
        _case("(v > 0.5).any(axis=0)", [((1, 1024), (rows, 1024))], f8,
            lambda v: (v > 0.5).any(axis=0), lambda t: (t > 0.5).any(dim=0), quick)
        _case("np.nanmean(v, axis=0)", [((rows, 1), (rows, 1024))], f8,
            lambda v: np.nanmean(v, axis=0), lambda t: t.nanmean(dim=0), quick)
        _case("v.argmax()", [((1, 1024), (rows, 1024))], f8,
            lambda v: v.argmax(), lambda t: t.argmax(), quick)
    for rows, quick in ((8192, True), (131072, False)):  # a summed axis that repeats
        # (float64: NumPy's and torch's float32 sums of 10^4 equal terms drift past rtol)
        _case('np.einsum("ij->j", v)', [((1, 1024), (rows, 1024))], f8,
            lambda v: np.einsum("ij->j", v), lambda t: _torch_einsum("ij->j", t), quick)
    cols = np.arange(1024) % 3 == 0  # a where= mask that repeats with the view
    for rows, quick in ((8192, True), (131072, False)):
        _case("v.sum(axis=0, where=cols)", [((1, 1024), (rows, 1024))], f8,
            lambda v: v.sum(axis=0, where=cols), lambda t: _torch_masked_sum(t, cols), quick)
        # (a column under a mask of columns: the mask counted where the source repeats)
        _case("v.max(axis=1, where=cols)", [((rows, 1), (rows, 1024))], f8,
            lambda v: v.max(axis=1, where=cols, initial=-1.0),
            lambda t: _torch_masked_max(t, cols, -1.0), quick)
    for rows, quick in ((1024, True), (16384, False)):  # a scan along a repeated axis
        _case("np.cumsum(v, axis=1)", [((1, 1, 64), (16, rows, 64))], f8,
            lambda v: np.cumsum(v, axis=1), lambda t: t.cumsum(dim=1), quick)
    for batch, quick in ((16, True), (64, False)):  # a batch of one image, padded
        _case("np.pad(v, spatial 2)", [((1, 3, 224, 224), (batch, 3, 224, 224))], f4,
            lambda v: np.pad(v, ((0, 0), (0, 0), (2, 2), (2, 2))),
            lambda t: _torch_pad(t, 2), quick)
    for rows, quick in ((2048, True), (16384, False)):  # a function of each lane: 1 call
        _case("np.apply_along_axis(ptp, 1, v)", [((1, 1024), (rows, 1024))], f8,
            lambda v: np.apply_along_axis(np.ptp, 1, v), _torch_lane_ptp, quick)
    for rows, quick in ((4096, True), (16384, False)):  # every row sorted alike
        _case("np.sort(v, axis=1)", [((1, 1024), (rows, 1024))], f4,
            lambda v: np.sort(v, axis=1), lambda t: t.sort(dim=1).values, quick)
    for rows, quick in ((2048, True), (8192, False)):  # a column's percentiles, 1024 repeats
        _case("np.percentile(v, [1, 99])", [((rows, 1), (rows, 1024))], f8,
            lambda v: np.percentile(v, [1, 99]), _torch_percentiles, quick)
        # each of 1024 columns the same column with NaNs (NumPy: lane by lane)
        _case("np.nanpercentile(v, [1, 99], axis=0)", [((rows, 1), (rows, 1024))], f8,
            lambda v: np.nanpercentile(v, [1, 99], axis=0), _torch_nanpercentiles, quick,
            nans=True)
    for rows, quick in ((4096, True), (16384, False)):  # one row times a matrix, repeated
        _case("v @ w", [((1, 512), (rows, 512)), ((512, 512), (512, 512))], f4,
            lambda v, w: v @ w, lambda v, w: v @ w, quick)
    for batch, quick in ((16, True), (64, False)):  # a batch of images, one colour a channel
        _case("np.stack(items(v))", [((batch, 3, 1, 1), (batch, 3, 224, 224))], f4,
            lambda v: np.stack(_items(v)), _torch_stack, quick)
    for n, quick in ((1000, True), (2000, False)):  # pairwise differences (lazybcast._buffering)
        _case("a - b", [((n, 1), (n, n)), ((1, n), (n, n))], f8,
            lambda a, b: a - b, lambda a, b: a - b, quick)
    for n, quick in ((512, True), (4096, False)):  # an outer sum: the result is full size
        _case("(a + b).max()", [((n, 1), (n, n)), ((1, n), (n, n))], f4,
            lambda a, b: (a + b).max(), lambda a, b: (a + b).max(), quick)


_build()
del _build
