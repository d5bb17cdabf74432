"""The materialize benchmark suite, defined once.

``python -m lazybcast bench`` and ``benchmarks/bench_materialize.py`` both read :data:`CASES`.
Each :class:`Case` is a named factory: calling it builds the source array and returns
``(name, view, tags)``. The output shape and size are known without building it, so a runner
can filter by size before allocating anything.

Tags say what a case covers (``small-inner``, ``rgb``, ``column``, ``row``, ``nchw``,
``nhwc``, ``explicit``, ``scalar``, ``long-rows``, ``bidirectional``, ``pdpd``,
``transposed``, ``image``, ``negative-stride``, ``itemsize``, ``structured``, ``sweep``),
plus ``huge`` for outputs of :data:`HUGE` bytes or more and ``quick`` for the subset
``--quick`` runs.

>>> from lazybcast._bench_cases import CASES
>>> name, view, tags = CASES[0]()
>>> name, view.shape, view.dtype
('rgb (1,1,3) u1 -> (16,16,3)', (16, 16, 3), dtype('uint8'))
>>> sorted(tags)
['quick', 'rgb', 'small-inner', 'sweep']
"""

import math

import numpy as np

from lazybcast._api import broadcast, broadcast_to

__all__ = ["CASES", "HUGE", "Case", "OpCase", "fmt_shape", "select"]

MiB = 1 << 20
HUGE = 64 * MiB
"""Outputs of this many bytes or more are tagged ``huge`` (the issue's 64 MB class)."""

# One odd item size: a packed 3-byte record.
RGB24 = np.dtype([("lo", "u1"), ("hi", "<u2")])


class Case:
    """A named benchmark case: ``case()`` builds it and returns ``(name, view, tags)``.

    Parameters
    ----------
    name : str
        Unique, human-readable: source shape, dtype, mode and output shape.
    shape : tuple of int
        The output shape (known before building).
    dtype : numpy.dtype
        The output dtype.
    tags : iterable of str
        What the case covers; ``huge`` is added for outputs of :data:`HUGE` bytes or more.
    make : callable
        ``make()`` returns the :class:`~lazybcast.BroadcastView`.
    """

    __slots__ = ("name", "shape", "dtype", "tags", "_make")

    def __init__(self, name, shape, dtype, tags, make):
        self.name = name
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        tags = set(tags)
        if self.nbytes >= HUGE:
            tags.add("huge")
        self.tags = frozenset(tags)
        self._make = make

    @property
    def nbytes(self):
        """Bytes of the materialized output."""
        return math.prod(self.shape) * self.dtype.itemsize

    def __call__(self):
        view = self._make()
        if view.shape != self.shape or view.dtype != self.dtype:
            raise AssertionError(
                f"case {self.name!r} built a {view.dtype} view of shape {view.shape}; "
                f"it declares {self.dtype} {self.shape}"
            )
        return self.name, view, self.tags

    def __repr__(self):
        return f"Case({self.name!r}, nbytes={self.nbytes})"


class OpCase:
    """A named case timing any operation against NumPy (and torch): for extra case groups.

    ``case()`` returns ``(name, impls, tags)``: ``impls`` maps ``"lazybcast"`` and ``"numpy"``
    (and optionally ``"torch"``) to callables of no argument that each return their result.
    The bench times them taking turns (``"torch"`` with one and with two threads), then checks
    each result against NumPy's (same shape, values within ``rtol``).

    Parameters
    ----------
    name : str
        Unique, human-readable.
    tags : iterable of str
        What the case covers; ``quick`` puts it in ``--quick``.
    make : callable
        ``make()`` builds the arrays and returns the ``impls`` dict.
    nbytes : int
        Bytes the case allocates (``--max-bytes`` skips larger ones).
    rtol : float
        Relative tolerance of the value check (0: exact).

    Examples
    --------
    >>> case = OpCase("sum (1000,) f8", {"quick"}, lambda: {
    ...     "lazybcast": lambda: 1000.0, "numpy": lambda: np.ones(1000).sum()}, nbytes=8000)
    >>> name, impls, tags = case()
    >>> name, sorted(impls), impls["numpy"]()
    ('sum (1000,) f8', ['lazybcast', 'numpy'], np.float64(1000.0))
    """

    __slots__ = ("name", "tags", "nbytes", "rtol", "_make")

    def __init__(self, name, tags, make, *, nbytes=0, rtol=1e-6):
        self.name = name
        self.tags = frozenset(tags)
        self.nbytes = int(nbytes)
        self.rtol = float(rtol)
        self._make = make

    def __call__(self):
        impls = dict(self._make())
        missing = {"lazybcast", "numpy"} - set(impls)
        unknown = set(impls) - {"lazybcast", "numpy", "torch"}
        if missing or unknown:
            raise ValueError(f"case {self.name!r}: impls must have 'lazybcast' and 'numpy' and "
                             f"may have 'torch'; missing {sorted(missing)}, unknown "
                             f"{sorted(unknown)}")
        return self.name, impls, self.tags

    def __repr__(self):
        return f"OpCase({self.name!r}, nbytes={self.nbytes})"


def _values(shape, dtype):
    """A deterministic, non-constant source (so a broken kernel cannot pass by luck)."""
    dtype = np.dtype(dtype)
    n = math.prod(shape)
    ramp = np.arange(n, dtype=np.int64) % 251
    if dtype.names:
        out = np.zeros(n, dtype)
        for k, field in enumerate(dtype.names):
            out[field] = (ramp + 17 * k).astype(dtype[field])
        return out.reshape(shape)
    return (ramp + 1).astype(dtype).reshape(shape)


def fmt_shape(shape):
    """``(3,)``, ``(2,3)``: a shape as case names write it.

    >>> fmt_shape((3,)), fmt_shape((2, 3))
    ('(3,)', '(2,3)')
    """
    return "(" + ",".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def _short(dtype):
    dtype = np.dtype(dtype)
    if dtype.names:
        return f"rec{dtype.itemsize}"
    return dtype.str.lstrip("<>|=")


CASES: "list[Case]" = []


def _add(name, shape, dtype, tags, make):
    CASES.append(Case(name, shape, dtype, tags, make))


def _numpy_case(src_shape, dtype, out_shape, tags, *, prefix="", quick=False):
    def make():
        return broadcast_to(_values(src_shape, dtype), out_shape)

    name = f"{prefix}{fmt_shape(src_shape)} {_short(dtype)} -> {fmt_shape(out_shape)}"
    _add(name, out_shape, dtype, set(tags) | ({"quick"} if quick else set()), make)


def _build():
    u1, f4, f8 = np.uint8, np.float32, np.float64

    # Size sweeps, 768 B .. 256 MiB: the worst NumPy case (RGB pixels) and 256-byte rows.
    for side in (16, 128, 512, 2048, 8192):
        _numpy_case((1, 1, 3), u1, (side, side, 3), {"small-inner", "rgb", "sweep"},
                    prefix="rgb ", quick=side in (16, 512))
    _numpy_case((100, 1, 3), u1, (100, 100, 3), {"small-inner", "rgb"}, prefix="rgb ",
                quick=True)
    for rows in (4, 64, 1024, 16384, 262144, 1048576):
        _numpy_case((64,), f4, (rows, 64), {"row", "sweep"}, prefix="row ",
                    quick=rows in (4, 16384))

    # Small inner dims: (N,1) -> (N,k) columns and (k,) -> (N,k) rows, k in 1..16.
    n = 32768
    for k in range(1, 17):
        _numpy_case((n, 1), f4, (n, k), {"small-inner", "column"}, prefix="column ",
                    quick=k == 3)
    for k in range(1, 17):
        _numpy_case((k,), f4, (n, k), {"small-inner", "row"}, prefix="row ", quick=k == 3)

    # Channel vectors to NCHW and NHWC (explicit mode), from 4 KiB to ~100 MB.
    for out_shape, quick in (((1, 16, 8, 8), False), ((8, 64, 56, 56), True),
                             ((32, 64, 112, 112), False)):
        c = out_shape[1]
        _add(f"nchw ({c},) f4 explicit [1] -> {fmt_shape(out_shape)}", out_shape, f4,
             {"nchw", "explicit"} | ({"quick"} if quick else set()),
             lambda c=c, s=out_shape: broadcast(_values((c,), f4), s, [1], mode="explicit"))
    for out_shape, quick in (((1, 8, 8, 16), False), ((8, 56, 56, 64), True),
                             ((32, 112, 112, 64), False)):
        c = out_shape[3]
        _add(f"nhwc ({c},) f4 explicit [3] -> {fmt_shape(out_shape)}", out_shape, f4,
             {"nhwc", "explicit", "small-inner"} | ({"quick"} if quick else set()),
             lambda c=c, s=out_shape: broadcast(_values((c,), f4), s, [3], mode="explicit"))

    # Scalar fills.
    for dtype, out_shape, quick in ((u1, (1024,), True), (f8, (512, 512), True),
                                    (f8, (4096, 4096), False), (u1, (16384, 16384), False)):
        _add(f"scalar {_short(dtype)} -> {fmt_shape(out_shape)}", out_shape, dtype,
             {"scalar"} | ({"quick"} if quick else set()),
             lambda d=dtype, s=out_shape: broadcast_to(_values((), d), s))

    # Long rows.
    for rows, cols, quick in ((16, 4096, False), (64, 65536, True), (256, 131072, False)):
        _numpy_case((cols,), f8, (rows, cols), {"long-rows"}, prefix="long ", quick=quick)

    # Bidirectional (Broadcast-3, ONNX Expand): the output may outgrow the target.
    for src_shape, target, out_shape, quick in (
        ((1, 5, 3), (5, 2, 1, 3), (5, 2, 5, 3), False),
        ((1, 50, 3), (500, 1, 1, 3), (500, 1, 50, 3), True),
        ((64, 1, 1), (1, 256, 256), (64, 256, 256), False),
        ((256, 1, 1), (1, 256, 256), (256, 256, 256), False),
    ):
        _add(f"bidirectional {fmt_shape(src_shape)} f4 [{fmt_shape(target)[1:-1]}] -> "
             f"{fmt_shape(out_shape)}",
             out_shape, f4, {"bidirectional"} | ({"quick"} if quick else set()),
             lambda a=src_shape, t=target: broadcast(_values(a, f4), t, mode="bidirectional"))

    # PDPD: data axes start at output axis `axis` (-1: right-aligned).
    for src_shape, target, axis, out_shape, quick in (
        ((3, 4), (2, 1, 4, 5), 1, (2, 3, 4, 5), False),
        ((64, 128), (8, 1, 128, 32), 1, (8, 64, 128, 32), True),
        ((1, 64), (1024, 16, 1), -1, (1024, 16, 64), False),
    ):
        _add(f"pdpd {fmt_shape(src_shape)} f4 [{fmt_shape(target)[1:-1]}] axis={axis} -> "
             f"{fmt_shape(out_shape)}", out_shape, f4, {"pdpd"} | ({"quick"} if quick else set()),
             lambda a=src_shape, t=target, ax=axis: broadcast(_values(a, f4), t, mode="pdpd",
                                                               axis=ax))

    # Transposed sources (a plain strided copy, and strided + broadcast).
    for src_shape, dtype, out_shape, quick in (
        ((1024, 1024), f4, (1024, 1024), True),
        ((2048, 2048), u1, (2048, 2048), False),
        ((2048, 2048), np.uint16, (2048, 2048), False),
        ((256, 1024), f4, (4, 1024, 256), False),
        ((4096, 4096), f4, (4096, 4096), False),
    ):
        _add(f"transposed {fmt_shape(src_shape)}.T {_short(dtype)} -> {fmt_shape(out_shape)}",
             out_shape, dtype, {"transposed"} | ({"quick"} if quick else set()),
             lambda a=src_shape, d=dtype, s=out_shape: broadcast_to(_values(a, d).T, s))

    # Image layouts: planar (CHW) and interleaved (HWC) pixels, one way and the other, as a
    # data loader converts them; a batch; a broadcast batch axis.
    for src_shape, axes, dtype, out_shape, quick in (
        ((3, 512, 512), (1, 2, 0), u1, (512, 512, 3), True),
        ((512, 512, 3), (2, 0, 1), u1, (3, 512, 512), True),
        ((512, 512, 4), (2, 0, 1), u1, (4, 512, 512), False),
        ((512, 512, 3), (2, 0, 1), f4, (3, 512, 512), False),
        ((64, 224, 224, 3), (0, 3, 1, 2), u1, (64, 3, 224, 224), False),
        ((3, 224, 224), (1, 2, 0), f4, (32, 224, 224, 3), False),
        ((8192, 4096, 3), (2, 0, 1), u1, (3, 8192, 4096), False),
    ):
        layout = "HWC -> CHW" if axes[-1] != 0 else "CHW -> HWC"
        _add(f"image {fmt_shape(src_shape)} {_short(dtype)} {layout} {fmt_shape(out_shape)}",
             out_shape, dtype, {"image", "transposed"} | ({"quick"} if quick else set()),
             lambda a=src_shape, x=axes, d=dtype, s=out_shape: broadcast_to(
                 _values(a, d).transpose(x), s))

    # Negative strides (reversed sources).
    for src_shape, dtype, out_shape, quick in (
        ((1024,), f8, (512, 1024), True),
        ((1024, 1024), f4, (1024, 1024), False),
        ((2048, 2048), u1, (2048, 2048), False),
        ((2048,), f8, (4096, 2048), False),
        ((4096, 4096), f4, (4096, 4096), False),
    ):
        rev = "[::-1]" if len(src_shape) == 1 else "[::-1,::-1]"
        _add(f"reversed {fmt_shape(src_shape)}{rev} {_short(dtype)} -> {fmt_shape(out_shape)}",
             out_shape, dtype, {"negative-stride"} | ({"quick"} if quick else set()),
             lambda a=src_shape, d=dtype, s=out_shape: broadcast_to(
                 _values(a, d)[(slice(None, None, -1),) * len(a)], s))

    # Every item size (1, 2, 4, 8, 16 bytes) plus a packed 3-byte record, ~1 MiB outputs.
    for dtype in (u1, np.uint16, f4, f8, np.complex128, RGB24):
        itemsize = np.dtype(dtype).itemsize
        tags = {"itemsize"} | ({"structured"} if np.dtype(dtype).names else set())
        rows = MiB // (7 * itemsize)
        _numpy_case((7,), dtype, (rows, 7), tags | {"row"}, prefix=f"itemsize {itemsize} ",
                    quick=dtype is RGB24)
        _numpy_case((rows, 1), dtype, (rows, 4), tags | {"column"},
                    prefix=f"itemsize {itemsize} ")


_build()
del _build

_names = [case.name for case in CASES]
if len(set(_names)) != len(_names):  # pragma: no cover - a guard for whoever edits the list
    raise AssertionError("benchmark case names must be unique")
del _names


def select(*, quick=False, max_bytes=None, pattern=None, cases=None):
    """The cases to run, in suite order.

    Parameters
    ----------
    quick : bool
        Only the cases tagged ``quick``.
    max_bytes : int, optional
        Drop cases whose output is larger.
    pattern : str, optional
        Keep cases whose name or one of whose tags contains this text (case-insensitive).
    cases : list, optional
        Choose among these (default :data:`CASES`), e.g. an extra group's.

    Examples
    --------
    >>> from lazybcast._bench_cases import select
    >>> [c.name for c in select(pattern="pdpd", max_bytes=1 << 20)]
    ['pdpd (3,4) f4 [2,1,4,5] axis=1 -> (2,3,4,5)']
    """
    chosen = []
    for case in CASES if cases is None else cases:
        if quick and "quick" not in case.tags:
            continue
        if max_bytes is not None and case.nbytes > max_bytes:
            continue
        if pattern is not None:
            p = pattern.lower()
            if p not in case.name.lower() and not any(p in t for t in case.tags):
                continue
        chosen.append(case)
    return chosen
