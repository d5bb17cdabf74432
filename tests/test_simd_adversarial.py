"""Adversarial checks of the SIMD kernels (_kernels_simd.h) against NumPy.

Every output is a view into a larger byte buffer (unaligned start, gaps between items and
rows, flipped and permuted axes); the bytes around and between its items are guard bytes
that must stay untouched. Sources are permuted / flipped views of buffers that they fill
exactly, so an out-of-bounds read shows up under AddressSanitizer (tests/asan/run_asan.sh).
Each test runs with the extensions the CPU has and again with SSE2 only.
"""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazybcast
from lazybcast import _kernels

DTYPES = [np.uint8, np.int16, np.float32, np.float64, np.complex128,
          np.dtype([("a", "u1"), ("b", "u1"), ("c", "u1")]), "V8", "V16", "V5"]
SIMD = [None, (), ("SSSE3",)]

# LAZYBCAST_FUZZ_EXAMPLES=2000 for a longer run
fast = settings(max_examples=int(os.environ.get("LAZYBCAST_FUZZ_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _pattern(n, seed):
    return ((np.arange(n, dtype=np.int64) * 2654435761 + seed * 97) % 251).astype(np.uint8)


def _exact_source(shape, dtype, order, flips, lead, seed):
    """An array of ``shape`` whose memory is exactly its own bytes (plus ``lead`` bytes in
    front, for an unaligned start): axes stored in ``order``, some of them flipped."""
    dtype = np.dtype(dtype)
    stored = tuple(shape[k] for k in order)
    n = int(np.prod(stored)) * dtype.itemsize
    raw = np.empty(lead + n, np.uint8)
    raw[lead:] = _pattern(n, seed)
    a = raw[lead:].view(dtype).reshape(stored).transpose(np.argsort(order))
    return a[tuple(slice(None, None, -1) if f else slice(None) for f in flips)]


def _guarded_out(shape, dtype, order, flips, gaps, lead):
    """``out`` of ``shape`` inside a byte buffer with guard bytes around it: axes laid out in
    ``order`` (outermost first), each axis's stride with ``gaps[k]`` spare items, flipped
    axes. Returns (raw buffer, out, boolean mask of the bytes out owns)."""
    dtype = np.dtype(dtype)
    size = dtype.itemsize
    strides = [0] * len(shape)
    step = size
    for k in reversed(order):
        step_k = step + gaps[k] * size
        strides[k] = step_k
        step = step_k * shape[k]
    extent = sum((n - 1) * s for n, s in zip(shape, strides)) + size if all(shape) else 0
    tail = 19
    raw = _pattern(lead + extent + tail, 7) ^ 0x5A
    out = np.ndarray(shape, dtype, buffer=raw, offset=lead, strides=strides)
    # which bytes belong to out
    idx = np.indices(shape).reshape(len(shape), -1) if shape else np.zeros((0, 1), np.intp)
    addr = lead + (np.asarray(strides, np.intp)[:, None] * idx).sum(axis=0)
    owned = np.zeros(raw.size, bool)
    if all(shape):
        owned[(addr[:, None] + np.arange(size)).ravel()] = True
    out = out[tuple(slice(None, None, -1) if f else slice(None) for f in flips)]
    return raw, out, owned


def _check(view_source, shape, raw, out, owned, threads=None):
    before = raw.copy()
    want = np.ascontiguousarray(np.broadcast_to(view_source, shape))
    got = lazybcast.broadcast_to(view_source, shape).materialize(out=out, threads=threads)
    assert got is out
    assert np.ascontiguousarray(out).tobytes() == want.tobytes()
    changed = np.nonzero((raw != before) & ~owned)[0]
    assert changed.size == 0, f"guard bytes written at {changed[:10]} (owned {owned.sum()})"


@st.composite
def cases(draw, max_side=40):
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    ndim = draw(st.integers(1, 4))
    # sides around vector widths: 1..40 items, with a bias to 2..5 (channels) and 15..17
    side = st.one_of(st.integers(1, max_side), st.sampled_from([2, 3, 4, 5, 15, 16, 17, 31, 33]))
    shape = tuple(draw(st.lists(side, min_size=ndim, max_size=ndim)))
    while np.prod(shape) > 20000:  # keep each example small
        shape = shape[1:]
        ndim -= 1
    bcast = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
    # a leading broadcast batch axis sometimes
    if draw(st.booleans()):
        shape = (draw(st.integers(1, 3)),) + shape
        bcast = [True] + bcast
        ndim += 1
    src_shape = tuple(1 if b else n for b, n in zip(bcast, shape))
    sorder = draw(st.permutations(range(ndim)))
    sflips = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
    slead = draw(st.integers(0, 17))
    src = _exact_source(src_shape, dtype, sorder, sflips, slead, draw(st.integers(0, 9)))
    oorder = draw(st.permutations(range(ndim)))
    oflips = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
    ogaps = draw(st.lists(st.sampled_from([0, 0, 0, 1, 3]), min_size=ndim, max_size=ndim))
    olead = draw(st.integers(0, 33))
    return src, shape, (dtype, oorder, oflips, ogaps, olead)


@fast
@given(cases())
def test_materialize_into_guarded_views(case):
    src, shape, (dtype, oorder, oflips, ogaps, olead) = case
    for limit in SIMD:
        _kernels._limit_simd(limit)
        try:
            raw, out, owned = _guarded_out(shape, dtype, oorder, oflips, ogaps, olead)
            _check(src, shape, raw, out, owned)
        finally:
            _kernels._limit_simd(None)


@fast
@given(st.sampled_from([np.uint8, np.int16, np.float32, np.float64, np.complex128, "V3"]),
       st.integers(1, 5), st.integers(1, 40), st.integers(1, 40), st.integers(0, 3),
       st.booleans(), st.integers(0, 17), st.integers(0, 17),
       st.sampled_from([(0, 0, 0), (0, 0, 1), (1, 0, 0), (0, 2, 0)]), st.booleans())
def test_image_layouts_guarded(dtype, c, h, w, batch, to_hwc, slead, olead, gaps, streamed):
    """(C,H,W) <-> (H,W,C), optional broadcast batch axis, unaligned and padded outputs,
    with ordinary or non-temporal stores (as past the copies' streaming threshold)."""
    copy, _ = _kernels._stream_thresholds()
    for limit in SIMD:
        _kernels._limit_simd(limit)
        _kernels._stream_thresholds(copy=0 if streamed else copy)
        try:
            if to_hwc:
                src = _exact_source((c, h, w), dtype, (0, 1, 2), (False,) * 3, slead, c)
                src = src.transpose(1, 2, 0)
            else:
                src = _exact_source((h, w, c), dtype, (0, 1, 2), (False,) * 3, slead, c)
                src = src.transpose(2, 0, 1)
            shape = src.shape
            if batch:
                src = src[None]
                shape = (batch,) + shape
            nd = len(shape)
            raw, out, owned = _guarded_out(shape, dtype, tuple(range(nd)), (False,) * nd,
                                           ((0,) * (nd - 3)) + gaps, olead)
            _check(src, shape, raw, out, owned)
        finally:
            _kernels._limit_simd(None)
            _kernels._stream_thresholds(copy=copy)


@fast
@given(st.sampled_from([np.uint8, np.int16, np.float32, np.float64, np.complex128, "V3", "V5",
                        "V7", "V12", "V15", "V16"]),
       st.integers(1, 300), st.one_of(st.integers(1, 70), st.integers(120, 260)),
       st.integers(0, 33), st.integers(0, 2),
       st.booleans())
def test_repeat_rows_guarded(dtype, rows, k, olead, gap, flip_src):
    """(N, 1) -> (N, k): overlapping stores, packed byte shuffles (n * len >= 1024; items
    of odd sizes from two groups of 16 // size rows on, groups of at most 128 bytes, the
    rest per row) and AVX2 rows (len >= 128 bytes), packed or with a gap between rows."""
    for limit in SIMD + [("SSSE3",), ("AVX2",)]:
        _kernels._limit_simd(limit)
        try:
            src = _exact_source((rows, 1), dtype, (0, 1), (flip_src, False), olead % 5, rows)
            raw, out, owned = _guarded_out((rows, k), dtype, (0, 1), (False, False),
                                           (gap, 0), olead)
            _check(src, (rows, k), raw, out, owned)
        finally:
            _kernels._limit_simd(None)


@fast
@given(st.sampled_from([np.uint8, np.int16, np.float32, np.float64, np.complex128]),
       st.integers(1, 20), st.integers(1, 20), st.integers(0, 3), st.data())
def test_fancy_indexing_matches_numpy(dtype, a, b, c, data):
    """Gathers (plans with a gather axis) over transposed / flipped / broadcast sources,
    with the channel and transposing paths on the remaining axes."""
    c = c + 1
    shape = (a, b, c)
    bcast = data.draw(st.lists(st.booleans(), min_size=3, max_size=3))
    src_shape = tuple(1 if f else n for f, n in zip(bcast, shape))
    src = _exact_source(src_shape, dtype, data.draw(st.permutations(range(3))),
                        data.draw(st.lists(st.booleans(), min_size=3, max_size=3)),
                        data.draw(st.integers(0, 9)), 3)
    ref = np.broadcast_to(src, shape)
    view = lazybcast.broadcast_to(src, shape)
    axis = data.draw(st.integers(0, 2))
    n = shape[axis]
    idx = np.asarray(data.draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=12)),
                     np.intp)
    key = [slice(None)] * 3
    key[axis] = idx
    if data.draw(st.booleans()) and axis != 2:
        key[2] = slice(None, None, -1)
    if data.draw(st.booleans()):
        other = (axis + 1) % 3
        m = shape[other]
        key[other] = np.asarray(data.draw(st.lists(st.integers(-m, m - 1), min_size=len(idx),
                                                   max_size=len(idx))), np.intp)
    key = tuple(key)
    for limit in SIMD:
        _kernels._limit_simd(limit)
        try:
            got = view[key]
            want = ref[key]
            assert got.shape == want.shape
            assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()
        finally:
            _kernels._limit_simd(None)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, np.complex128,
                                   "V3"])
@pytest.mark.parametrize("perm", [(1, 0), (2, 1, 0), (1, 2, 0), (2, 0, 1)])
def test_permuted_sources_every_small_size(dtype, perm, simd):
    """Transposed sources of every small side (tails of the 16x16 .. 2x2 register blocks),
    into a guarded, unaligned, padded output."""
    nd = len(perm)
    for n0 in (1, 2, 3, 7, 8, 9, 15, 16, 17, 33):
        for n1 in (1, 2, 4, 5, 16, 17, 31):
            shape = (n0, n1, 3)[:nd] if nd == 3 else (n0 * 5, n1 * 3)
            stored = tuple(shape[p] for p in perm)
            src = _exact_source(stored, dtype, tuple(range(nd)), (False,) * nd, 3, n0)
            src = src.transpose(np.argsort(perm))
            assert src.shape == shape
            raw, out, owned = _guarded_out(shape, dtype, tuple(range(nd)), (False,) * nd,
                                           (0,) * (nd - 1) + (0,), 5)
            _check(src, shape, raw, out, owned)
            raw, out, owned = _guarded_out(shape, dtype, tuple(range(nd)), (False,) * nd,
                                           (1,) + (0,) * (nd - 1), 16)
            _check(src, shape, raw, out, owned)


IMAGE_DTYPES = [np.uint8, np.int16, np.float32, np.float64, np.complex128,
                np.dtype([("r", "u1"), ("g", "u1"), ("b", "u1")])]


@pytest.mark.parametrize("dtype", IMAGE_DTYPES, ids=str)
@pytest.mark.parametrize("c", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("direction", ["CHW->HWC", "HWC->CHW"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.slow
def test_large_image_layouts_in_blocks(dtype, c, direction, threads):
    """Outputs above CHUNK_BYTES (cut into blocks, shared by 2 threads), with a broadcast
    batch axis in front and odd pixel counts, into a guarded unaligned output."""
    dtype = np.dtype(dtype)
    chunk = _kernels.CHUNK_BYTES
    pixels = chunk // (c * dtype.itemsize) + 37
    h = 7
    w = pixels // h + 1
    if direction == "CHW->HWC":
        src = _exact_source((c, h, w), dtype, (0, 1, 2), (False,) * 3, 3, c).transpose(1, 2, 0)
    else:
        src = _exact_source((h, w, c), dtype, (0, 1, 2), (False,) * 3, 3, c).transpose(2, 0, 1)
    assert src.nbytes > chunk
    shape = (2,) + src.shape
    raw, out, owned = _guarded_out(shape, dtype, (0, 1, 2, 3), (False,) * 4, (0, 0, 0, 0), 9)
    _check(src[None], shape, raw, out, owned, threads=threads)
    # and one image into a C-contiguous fresh output
    got = lazybcast.broadcast_to(src, src.shape).materialize(threads=threads)
    assert got.tobytes() == np.ascontiguousarray(src).tobytes()


@pytest.mark.parametrize("dtype", IMAGE_DTYPES, ids=str)
@pytest.mark.parametrize("threads", [1, 2])
def test_large_transposes_and_reversals_in_blocks(dtype, threads):
    dtype = np.dtype(dtype)
    rows = 1031
    cols = _kernels.CHUNK_BYTES // (rows * dtype.itemsize) + 19
    for src in (_exact_source((cols, rows), dtype, (0, 1), (False, False), 5, 1).T,
                _exact_source((rows, cols), dtype, (0, 1), (True, True), 5, 2),
                _exact_source((cols, rows), dtype, (0, 1), (True, False), 0, 3).T):
        got = lazybcast.broadcast_to(src, src.shape).materialize(threads=threads)
        assert got.tobytes() == np.ascontiguousarray(src).tobytes()


@fast
@given(st.sampled_from([np.uint8, np.int16, np.float32, np.float64, np.complex128, "V3"]),
       st.lists(st.integers(1, 24), min_size=1, max_size=3), st.data())
def test_self_overlapping_outputs_write_only_their_own_bytes(dtype, shape, data):
    """``out`` built with as_strided (strides of 0, of part of an item, negative): whatever
    the values (NumPy leaves them unspecified too), no byte outside out's items changes."""
    dtype = np.dtype(dtype)
    size = dtype.itemsize
    shape = tuple(shape)
    strides = tuple(data.draw(st.integers(-3 * size, 3 * size)) for _ in shape)
    lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0) + size
    lead = -lo + data.draw(st.integers(0, 17))
    raw = _pattern(lead + hi + 19, 5) ^ 0x3C
    out = np.ndarray(shape, dtype, buffer=raw, offset=lead, strides=strides)
    idx = np.indices(shape).reshape(len(shape), -1)
    addr = lead + (np.asarray(strides, np.intp)[:, None] * idx).sum(axis=0)
    owned = np.zeros(raw.size, bool)
    owned[(addr[:, None] + np.arange(size)).ravel()] = True
    src_shape = tuple(data.draw(st.sampled_from([1, n])) for n in shape)
    src = _exact_source(src_shape, dtype, data.draw(st.permutations(range(len(shape)))),
                        data.draw(st.lists(st.booleans(), min_size=len(shape),
                                           max_size=len(shape))), 1, 4)
    for limit in SIMD:
        _kernels._limit_simd(limit)
        try:
            before = raw.copy()
            lazybcast.broadcast_to(src, shape).materialize(out=out)
            assert not ((raw != before) & ~owned).any()
        finally:
            _kernels._limit_simd(None)


@pytest.mark.parametrize("target", ["CHUNK_BYTES", "AUTO_THREADS_BYTES"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
def test_large_gather_with_channels(dtype, target):
    """A gather past CHUNK_BYTES (blocks of the gather axis; past AUTO_THREADS_BYTES on two
    threads) whose remaining axes interleave channels (CHW source, HWC view)."""
    dtype = np.dtype(dtype)
    if getattr(_kernels, target) > 1 << 40:  # one usable CPU: no size uses two threads
        pytest.skip(f"{target} is off on this machine")
    c, h, w = 3, 64, 517
    src = _exact_source((c, h, w), dtype, (0, 1, 2), (False,) * 3, 1, 0).transpose(1, 2, 0)
    n = getattr(_kernels, target) // (w * c * dtype.itemsize) + 11
    idx = (np.arange(n, dtype=np.intp) * 7919) % h - h // 2
    view = lazybcast.broadcast_to(src[None], (2, h, w, c))
    got = view[1, idx]
    want = np.broadcast_to(src[None], (2, h, w, c))[1, idx]
    assert got.nbytes > _kernels.CHUNK_BYTES
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()
    got = view[:, idx, ::-1]
    want = np.broadcast_to(src[None], (2, h, w, c))[:, idx, ::-1]
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


def test_deinterleaving_plan_keeps_the_block_of_a_broadcast_batch_axis():
    """HWC -> CHW with a broadcast batch axis in front: the plan swaps its last two axes
    (pixels, channels), which must not cost the batch axis its destination block (without
    it every batch entry is deinterleaved again instead of copied from the first)."""
    shape, sstrides, dstrides, dblock = _kernels._plan_py(
        (8, 3, 1024), (0, 1, 3), (3 * 1024, 1024, 1), 1)
    assert shape == (8, 1024, 3) and sstrides == (0, 3, 1)
    assert dblock[0] == 8 * 3 * 1024
    assert dblock[1:] == (0, 0)
