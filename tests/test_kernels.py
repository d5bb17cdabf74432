"""The copy kernels on their own: every path of the plan against NumPy's broadcast copy.

The view tests reach the kernels through small arrays; these reach the paths that only large
or oddly laid-out copies take: transposing tiles, replication of outer broadcast axes, the
zero-pattern memset, non-temporal stores (outputs of 8 MB and more), blocks handed to threads,
and helper threads in a child after ``fork()``.
"""

import os
import signal
import sys
import time

import numpy as np
import pytest
from _subprocess import fresh_process
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from lazybcast import _kernels

ITEM_DTYPES = [np.uint8, np.int16, np.float32, np.float64, np.complex128, "V3", "V24"]


def _data(shape, dtype):
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = (np.arange(n, dtype=np.int64) * 2654435761 % 251).astype(np.uint8)
    return raw.view(dtype).reshape(shape)


def _expected(source, shape):
    return np.ascontiguousarray(np.broadcast_to(source, shape))


def _assert_same_bytes(got, want):
    assert got.shape == want.shape
    assert np.ascontiguousarray(got).tobytes() == want.tobytes()


@st.composite
def layouts(draw):
    """A source of the output's rank (each axis the output's size or 1), with any strides."""
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(ITEM_DTYPES))
    broadcast = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
    src_shape = tuple(1 if b else n for b, n in zip(broadcast, shape))
    order = draw(st.permutations(range(ndim)))
    big = _data(tuple(src_shape[k] * 2 for k in order), dtype).transpose(np.argsort(order))
    steps = draw(st.lists(st.sampled_from([1, 2, -1, -2]), min_size=ndim, max_size=ndim))
    source = big[tuple(slice(None, n * abs(s), s) if s > 0 else slice(n * abs(s) - 1, None, s)
                       for n, s in zip(src_shape, steps))]
    assert source.shape == src_shape
    out_order = draw(st.sampled_from(["C", "F", "reversed"]))
    return source, shape, out_order


@given(layouts())
def test_copy_broadcast_matches_numpy(layout):
    source, shape, out_order = layout
    if out_order == "reversed":
        out = np.empty(shape, source.dtype)[tuple(slice(None, None, -1) for _ in shape)]
    else:
        out = np.empty(shape, source.dtype, order=out_order)
    _kernels.copy_broadcast(source, out)
    _assert_same_bytes(out, _expected(source, shape))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, np.complex128,
                                   "V3"])
@pytest.mark.parametrize("view", ["T", "T-reversed", "strided-T"])
def test_transposing_copy_uses_tiles_and_is_right(dtype, view):
    a = _data((300, 517), dtype)
    source = {"T": a.T, "T-reversed": a[::-1].T, "strided-T": a[:, ::3].T}[view]
    plan_shape, sstrides, _, _ = _kernels._plan_py(
        source.shape, source.strides, np.empty(source.shape, source.dtype).strides,
        source.dtype.itemsize)
    # the short source stride is moved next to the innermost axis (tiled pair)
    assert abs(sstrides[-2]) < abs(sstrides[-1])
    for target in (source.shape, (3,) + source.shape):
        v = lazybcast.broadcast_to(source, target)
        for threads in (1, 2):
            _assert_same_bytes(v.materialize(threads=threads), _expected(source, target))


@pytest.mark.parametrize("dtype,layers,step,paired", [
    (np.uint8, 2, 1, "rows"), (np.float32, 2, 1, "rows"), (np.uint8, 2, 2, "rows"),
    (np.float32, 2, 2, "rows"), (np.uint8, 3, 3, "rows"), (np.float32, 3, 3, "layers"),
    (np.uint8, 4, 4, "rows"), (np.float32, 4, 4, "layers")])
def test_strided_layers_pair_the_axis_that_reads_most_of_a_line(dtype, layers, step, paired):
    """Layers (k, N, N) of strides (1, step, step * N) items: the layers' axis (k items,
    contiguous) and the rows' axis (N items at ``step``) both read the source with a short
    stride. The tiles pair the rows' axis with the innermost, unless the layers' axis is
    contiguous and reads at least half as many items of each 64-byte source line (float32,
    step 3: 3 items against 5; step 4: 4 against 4). Pairing the 2 layers made uint8
    (2, 8192, 8192) 25x slower."""
    n = 96
    size = np.dtype(dtype).itemsize
    raw = _data((layers * n * n + layers * step,), dtype)
    source = np.lib.stride_tricks.as_strided(
        raw, (layers, n, n), (size, step * size, step * n * size))
    shape, sstrides, _, _ = _kernels._plan_py(
        source.shape, source.strides, np.empty(source.shape, dtype).strides, size)
    want = {"rows": (n, step * size), "layers": (layers, size)}[paired]
    assert (shape[-2], sstrides[-2]) == want and sstrides[-1] == step * n * size, (shape,
                                                                                   sstrides)
    for target in (source.shape, (2,) + source.shape):
        v = lazybcast.broadcast_to(source, target)
        for threads in (1, 2):
            _assert_same_bytes(v.materialize(threads=threads), _expected(source, target))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("step", [-3, -2, 2, 3, 7])
def test_strided_runs_gathered_into_consecutive_items(dtype, step):
    """Rows of strided items written consecutively (read from their end where the stride is
    negative and under 64 bytes, so that the reads go up): every run length from 1 to 40
    items, rows from an odd address, broadcast rows, 1 and 2 threads; NumPy's bytes."""
    dt = np.dtype(dtype)
    for n in range(1, 41):
        rows = 3
        raw = _data((rows * n * abs(step) * dt.itemsize + dt.itemsize + 1,), np.uint8)[1:]
        flat = raw[:rows * n * abs(step) * dt.itemsize].view(dt)
        source = flat.reshape(rows, n * abs(step))[:, ::step]
        assert source.shape == (rows, n)
        for target in ((rows, n), (2, rows, n), (rows, 2, n)):
            src = source if len(target) == 2 or target[0] == 2 else source[:, None, :]
            v = lazybcast.broadcast_to(src, target)
            for threads in (1, 2):
                _assert_same_bytes(v.materialize(threads=threads), _expected(src, target))


@pytest.mark.parametrize("case", ["every other item, lines in L2",
                                  "every other item, lines in one L2 set",
                                  "every other item, more lines than an eighth of L2",
                                  "every third item, lines in L2",
                                  "a line's items, lines in L2", "contiguous pair"])
def test_strided_pairs_whose_lines_stay_in_l2_walk_rows(case):
    """A float64 transpose whose paired axis steps over one item (16 bytes) and whose
    innermost axis' lines stay in L2 (at most an eighth of its lines; set by set: lines a
    multiple of the L2's set span apart share one set) is walked in plain rows: the next
    row finds the lines in L2 (float64 (56, 4, 32, 512) of strides (524288, 29360128, 16,
    -1024): 13.4 -> 6.1 ms, NumPy 5.8). Pairs that step further, or read every item, or are
    contiguous (faster tile kernels), or whose lines do not stay, keep their tiles."""
    many = (_kernels.L2_BYTES or 4 << 20) // 64 // 8 + 64
    n, step, col_stride, tiled = {
        "every other item, lines in L2": (64, 2, -1088, False),
        "every other item, lines in one L2 set": (64, 2, 256 << 10, True),
        "every other item, more lines than an eighth of L2": (many, 2, 1088, True),
        "every third item, lines in L2": (64, 3, 1088, True),
        "a line's items, lines in L2": (64, -1, 1088, True),
        "contiguous pair": (64, 1, 1088, True)}[case]
    size, strides = 8, (step * 8, col_stride)
    low = sum((k - 1) * t for k, t in zip((40, n), strides) if t < 0)
    high = sum((k - 1) * t for k, t in zip((40, n), strides) if t > 0) + size
    raw = _data((high - low,), np.uint8)
    source = np.ndarray((40, n), np.float64, raw, -low, strides)
    shape, sstrides, _, _, _, got = _kernels._plan_py(
        source.shape, source.strides, (n * size, size), size, details=True)
    assert got == tiled and sstrides[-1] == col_stride, (shape, sstrides)
    for target in (source.shape, (3,) + source.shape):
        v = lazybcast.broadcast_to(source, target)
        for threads in (1, 2):
            _assert_same_bytes(v.materialize(threads=threads), _expected(source, target))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float64])
def test_transpose_with_a_strided_pair_in_blocks_of_a_tile_height(dtype):
    """A transpose whose paired axis is strided (every other item) goes through the generic
    tile loop, in blocks of at least 128 output rows: outputs of several chunks, rows of
    more than a chunk / 128, the block edges falling inside tiles, with 1 to 3 threads."""
    size = np.dtype(dtype).itemsize
    rows, cols = 200, _kernels.CHUNK_BYTES // (64 * size) + 13  # (rows of over a 64th chunk)
    base = _data((cols, 2 * rows + 1), dtype)
    source = base[:, 1::2].T  # (rows, cols): strides (2 * size, (2 * rows + 1) * size)
    assert source.strides[0] == 2 * size
    for target in (source.shape, (2,) + source.shape):
        v = lazybcast.broadcast_to(source, target)
        for threads in (1, 2, 3):
            _assert_same_bytes(v.materialize(threads=threads), _expected(source, target))


@pytest.mark.parametrize("dtype,step", [
    (np.uint8, -2), (np.uint8, -3), (np.uint16, -2), (np.uint16, -3), (np.float32, -2),
    (np.float32, -3), (np.float64, -3), (np.complex128, -3), ("V3", -2), ("V3", -3),
    (np.uint8, -1), (np.float32, -1), (np.float64, -1), ("V3", -1)])
def test_tiles_tall_along_a_pair_read_upward(dtype, step):
    """A transpose whose paired axis reads the source downward a few items to a line (a
    step of -2 or -3 items, under 64 bytes) takes tall tiles (64 bytes of items wide, up
    to 32 kB) in bands from the last to the first: an axis of three bands, the last one
    partial (taken first), widths that no tile divides (several tiles wide for every item
    size), a broadcast copy and 1 to 3 threads (blocks shorter than a band, where tiles
    widen); a step of -1 keeps square tiles. NumPy's bytes either way: a guard of the
    path's offsets (tile shape and band order do not change values)."""
    dt = np.dtype(dtype)
    n, cols = 1100, 137
    base = _data((cols, n * abs(step)), dt)
    source = base[:, ::step].T  # (n, cols): strides (step * size, row)
    shape, sstrides, _, _, size, tiled = _kernels._plan_py(
        source.shape, source.strides, np.empty(source.shape, dt).strides, dt.itemsize,
        details=True)
    assert tiled and sstrides[-2] == step * dt.itemsize and shape[-2] == n, (shape, sstrides)
    for target in (source.shape, (2,) + source.shape):
        v = lazybcast.broadcast_to(source, target)
        for threads in (1, 2, 3):
            _assert_same_bytes(v.materialize(threads=threads), _expected(source, target))


def test_plan_merges_contiguous_and_broadcast_axes():
    # (4, 5, 6) C-contiguous float64 source into C output: one run of 120 items
    assert _kernels._plan_py((4, 5, 6), (240, 48, 8), (240, 48, 8), 8)[:3] == (
        (120,), (8,), (8,))
    # two outer broadcast axes merge into one replicated axis, size-1 axes vanish
    shape, sstrides, dstrides, dblock = _kernels._plan_py(
        (3, 1, 4, 6), (0, 0, 0, 8), (192, 192, 48, 8), 8)
    assert shape == (12, 6) and sstrides == (0, 8) and dblock == (576, 48)


@pytest.mark.parametrize("dtype,run,widened", [
    (np.uint8, 8, True), (np.uint8, 16, True), (np.uint8, 2, True), (np.uint16, 4, True),
    (np.float32, 2, True), (np.float32, 4, True), (np.float64, 2, True),
    (np.uint8, 3, False), (np.uint8, 32, False), (np.float64, 3, False), ("V3", 2, False),
    (object, 2, False)])
@pytest.mark.parametrize("outer", ["transposed", "reversed", "broadcast-between"])
def test_short_contiguous_runs_become_one_item(dtype, run, widened, outer):
    """A last axis contiguous in both buffers whose run is 2, 4, 8 or 16 bytes is planned as
    one item of that size (the row kernels then loop over the axis before it); so is a run
    of another size under 16 bytes repeated along a short row (the axis before it broadcast:
    a fill of one odd-sized item); other runs, and objects, keep their axis. The values are
    NumPy's either way, with 1 and 2 threads, from a source at an odd byte offset."""
    dt = np.dtype(dtype)
    if outer == "broadcast-between" and dt != object and run * dt.itemsize < 16:
        widened = True
    rows, cols = 37, 41
    base = _data((rows * cols * run * dt.itemsize + 1,), np.uint8)[1:]  # (odd address)
    if dt == object:
        flat = np.array([(i * 7919) % 1000 for i in range(rows * cols * run)], dtype=object)
    else:
        flat = base.view(dt)
    grid = flat[:rows * cols * run].reshape(rows, cols, run)
    source = {"transposed": grid.transpose(1, 0, 2), "reversed": grid[::-1, ::-2],
              "broadcast-between": grid[:, :1].transpose(1, 0, 2)}[outer]
    shape = source.shape
    if outer == "broadcast-between":
        source = source[:, :, None, :]  # (1, rows, 1, run) -> (5, rows, 3, run)
        shape = (5, rows, 3, run)
    target = (2,) + shape
    ref = np.broadcast_to(source, target)
    if dt != object:  # (the plan hook knows no objects; materialize keeps their axis)
        plan_shape, _, _, _, itemsize, _ = _kernels._plan_py(
            ref.shape, ref.strides, np.empty(target, dt).strides, dt.itemsize, details=True)
        items = int(np.prod(plan_shape))  # (merging keeps the count of items)
        if widened:
            assert itemsize == run * dt.itemsize and items == ref.size // run, plan_shape
        else:
            assert itemsize == dt.itemsize and items == ref.size, plan_shape
    v = lazybcast.broadcast_to(source, target)
    for threads in (1, 2):
        got = v.materialize(threads=threads)
        if dt == object:
            assert got.tolist() == _expected(source, target).tolist()
        else:
            _assert_same_bytes(got, _expected(source, target))


@pytest.mark.parametrize("kind", ["copy", "rows", "one item"])
def test_outputs_never_written_take_ordinary_stores(kind):
    """Past the streaming thresholds, an output whose pages were never written (a new
    anonymous mapping, as NumPy's large allocations are) is written with ordinary stores;
    once written, the same output streams. The values are NumPy's both times."""
    import mmap

    shape = (256, 1024)
    source = {"copy": np.arange(shape[0] * shape[1], dtype=np.float32).reshape(shape),
              "rows": np.arange(shape[1], dtype=np.float32).reshape(1, -1),
              "one item": np.full((1, 1), 2.5, np.float32)}[kind]
    copy, fill = _kernels._stream_thresholds()
    item = _kernels._stream_item_threshold()
    private = {"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS} if hasattr(mmap, "MAP_PRIVATE") else {}
    buffer = mmap.mmap(-1, 4 * shape[0] * shape[1], **private)  # (new pages, as NumPy's are)
    rule = _kernels._new_outputs_stream(False)  # (conftest turns it off for other tests)
    out = None
    try:
        _kernels._stream_thresholds(copy=0, fill=0)
        out = np.frombuffer(buffer, np.float32).reshape(shape)
        _kernels.copy_broadcast(source, out, 1)
        fresh = _kernels._last_streamed()
        np.testing.assert_array_equal(out, np.broadcast_to(source, shape))
        out[...] = -1
        _kernels.copy_broadcast(source, out, 1)
        written = _kernels._last_streamed()
        np.testing.assert_array_equal(out, np.broadcast_to(source, shape))
    finally:
        _kernels._stream_thresholds(copy=copy, fill=fill)
        _kernels._stream_item_threshold(item)
        _kernels._new_outputs_stream(rule)
        del out
        buffer.close()
    # (where the kernel does not ask the OS, it streamed both times)
    asked = sys.platform.startswith(("linux", "darwin", "freebsd"))
    assert (fresh, written) == ((False, True) if asked else (True, True))


@pytest.fixture
def fills_stream_early():
    """Fills stream from the lower threshold they had before _calibrate_fill could raise it
    to four times the shared cache (the higher of MID and the copies' threshold), so that
    the tests past it stay at tens of MiB on every machine."""
    _, fill = _kernels._stream_thresholds()
    _kernels._stream_thresholds(fill=min(fill, max(_kernels.stream_threshold(),
                                                   _kernels.STREAM_BYTES_MID)))
    yield
    assert _kernels._stream_thresholds(fill=fill)[1] == fill


@pytest.mark.parametrize("value", [0, 7])
@pytest.mark.parametrize("kind", ["one item", "rows"])
def test_large_replicated_outputs(value, kind, fills_stream_early):
    """Past the fill threshold: non-temporal stores; an all-zero pattern becomes one memset."""
    items = _kernels.stream_threshold("fill") // 4
    shape = (items + 3,) if kind == "one item" else (items // 2001 + 3, 1, 2001)
    last = shape[-1] if len(shape) > 1 else 1
    source = np.full((1,) * (len(shape) - 1) + (last,), value, dtype=np.float32)
    if value:
        source += np.arange(last, dtype=np.float32)
    target = shape
    out = lazybcast.broadcast_to(source, target).materialize()
    _assert_same_bytes(out, _expected(source, target))


@pytest.mark.parametrize("delta", [-8, -1, 0, 1, 8, 1000])
@pytest.mark.parametrize("count", [1, 2, 3, 7, 40])
def test_replication_around_its_chunk_size(delta, count):
    """Blocks just under, at and over the chunk replication copies forward from
    (REPLICATE_COPY_BYTES), and over the largest block it replicates (REPLICATE_CHUNK)."""
    for size in (_kernels.REPLICATE_COPY_BYTES, _kernels.REPLICATE_CHUNK):
        block = max(1, size + delta)
        source = _data((1, block), np.uint8)
        target = (count, block)
        _assert_same_bytes(lazybcast.broadcast_to(source, target).materialize(),
                           _expected(source, target))
        rows = _data((block // 4 + 1, 1), np.float32)  # (N, 1) -> (N, count): short blocks
        _assert_same_bytes(lazybcast.broadcast_to(rows, (3, rows.shape[0], count)).materialize(),
                           _expected(rows, (3, rows.shape[0], count)))


@pytest.fixture(params=["in the cache", "beyond it"])
def copy_down_max(request):
    """Outputs copied down a chunk at a time (as in the cache, where this machine's
    measurement chose chunks), or row by row (as outputs of COPY_DOWN_MAX_BYTES or more are,
    and all outputs where the measurement chose rows)."""
    default = _kernels._copy_down_max_bytes()
    _kernels._copy_down_max_bytes(
        _kernels.COPY_DOWN_MAX_BYTES if request.param == "in the cache" else 0)
    yield
    assert _kernels._copy_down_max_bytes(default) == default


@pytest.mark.parametrize("nbytes", [1023, 1024, 1500, 2048, 4095, 4096, 4097, 8191, 8192,
                                    8192 + 5, 16_384, 16_385, 20_000, 65_536 + 31])
def test_one_row_copied_down_a_column(nbytes, simd, copy_down_max):
    """A row of 1 kB or more (COPY_DOWN_MIN) broadcast over a few rows, (L,) -> (n, L), below
    the streaming threshold, is copied a chunk at a time into every row in an output that
    stays in the cache (row by row beyond it), or, for three rows or more packed together
    and no longer than two chunks, into the first two and swept out from them (AVX2; row by
    row otherwise; shorter rows are replicated): rows packed, padded (a slice of a wider
    parent) or in reverse order, at several offsets of the output in its line, one and two
    threads. NumPy's values; nothing outside the rows is written (the padding between them,
    the bytes around the output)."""
    source = _data((nbytes,), np.uint8)
    for n in (2, 3, 17):
        want = np.broadcast_to(source, (n, nbytes))
        for pad, reverse in ((0, False), (37, False), (64, True)):
            for offset in (0, 16, 33):
                raw, lined = _lined(n * (nbytes + pad), offset)
                parent = lined.reshape(n, nbytes + pad)
                out = parent[::-1, :nbytes] if reverse else parent[:, :nbytes]
                expected = raw.copy()
                start = lined.ctypes.data - raw.ctypes.data
                expected[start:start + lined.size].reshape(n, nbytes + pad)[:, :nbytes] = want
                for threads in (1, 2):
                    lazybcast.broadcast_to(source, (n, nbytes)).materialize(out=out,
                                                                            threads=threads)
                    assert raw.tobytes() == expected.tobytes(), (n, pad, reverse, offset)
                    lined[...] = 0xA5


@pytest.mark.parametrize("dtype", ["V3", "S5", "V12", "V24", [("r", "u1"), ("g", "u1"), ("b", "u1")]])
@pytest.mark.parametrize("items", [341, 342, 700, 2731])
def test_rows_of_odd_items_copied_down_a_column(dtype, items, simd):
    """Rows of items of any size (3, 5, 12, 24 bytes, a structured pixel) take the same
    copy-down as rows of 1-16 byte items once they reach COPY_DOWN_MIN bytes: NumPy's
    bytes, packed or padded rows, at several offsets in the line; nothing written around
    the rows."""
    dtype = np.dtype(dtype)
    source = _data((items,), dtype)
    nbytes = items * dtype.itemsize
    for n in (2, 3, 9):
        want = np.broadcast_to(source, (n, items))
        for pad in (0, 2):
            for offset in (0, 16, 45):
                raw, lined = _lined(n * (items + pad) * dtype.itemsize, offset)
                out = lined.view(dtype).reshape(n, items + pad)[:, :items]
                expected = raw.copy()
                start = lined.ctypes.data - raw.ctypes.data
                expected[start:start + lined.size].view(dtype).reshape(n, items + pad)[
                    :, :items] = want
                lazybcast.broadcast_to(source, (n, items)).materialize(out=out, threads=1)
                assert raw.tobytes() == expected.tobytes(), (n, pad, offset, nbytes)
                lined[...] = 0xA5


@pytest.mark.parametrize("block", [3, 12, 16, 24, 31, 32, 33, 64, 96, 100, 512, 513, 520,
                                   1000, 1024, 1056, 4095, 4097, 8191, 8192, 8193, 12544, 16384,
                                   16385])
def test_patterns_copied_forward_from_a_short_distance(block, simd):
    """Below the streaming threshold a block repeated over the output is copied forward
    from a few hundred bytes back, a multiple of the block and of 32 bytes, or, where that
    distance would pass 1 kB, swept out from its first two copies for blocks up to twice
    REPLICATE_COPY_BYTES (with AVX2; longer blocks, and SSE2 alone, copy from the start):
    for any block size, any offset of ``out`` in its cache line, outputs that end one to a
    few blocks past the doubled region (inside the first 32-byte store, for blocks under 32
    bytes, or the 128-byte loop) or far past it, one and two threads. Nothing is written
    outside ``out``."""
    doubled = 1  # blocks written once doubling reaches REPLICATE_COPY_BYTES (_replicate)
    while doubled * block < _kernels.REPLICATE_COPY_BYTES:
        doubled *= 2
    for more in (1, 2, 3, 5, 4096 // block + 1, 200_000 // block + 7):
        n = doubled + more  # copied forward: more * block bytes past the doubled region
        source = _data((1, block), np.uint8)
        want = _expected(source, (n, block)).tobytes()
        for offset in (0, 1, 16, 31, 61):
            raw, lined = _lined(n * block, offset)
            out = lined.reshape(n, block)
            for threads in (1, 2):
                lazybcast.broadcast_to(source, (n, block)).materialize(out=out, threads=threads)
                assert out.tobytes() == want, (more, offset, threads)
                start = lined.ctypes.data - raw.ctypes.data
                assert (raw[:start] == 0xA5).all() and (raw[start + n * block:] == 0xA5).all()
                lined[...] = 0xA5


@pytest.mark.parametrize("distance", [1, 7, 8, 16, 33, 63, 64, 4095])
@pytest.mark.parametrize("nbytes", [2047, 2048, 2049, 4096 + 77, 32768])
def test_runs_just_past_a_4096_multiple_of_their_source(distance, nbytes, simd):
    """Contiguous runs whose destination is 1 to 63 bytes past a multiple of 4096 from the
    source take a vector loop instead of memcpy (glibc's is 12x-25x slower there on AMD);
    every length, tail included, and nothing written around the output."""
    source = _data((nbytes,), np.uint8)
    raw = np.zeros(3 * 4096 + 4 * nbytes + 64, dtype=np.uint8)
    start = (source.ctypes.data + distance - raw.ctypes.data) % 4096 + 4096
    out = raw[start:start + 4 * nbytes].reshape(4, nbytes)
    assert (out.ctypes.data - source.ctypes.data) % 4096 == distance % 4096
    lazybcast.broadcast_to(source, (4, nbytes)).materialize(out=out, threads=1)
    _assert_same_bytes(out, _expected(source, (4, nbytes)))
    assert not raw[:start].any() and not raw[start + 4 * nbytes:].any()


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
@pytest.mark.parametrize("source_shape", [(1, 3001), (1001, 1)])
def test_blocks_and_threads_cover_every_byte(threads, source_shape):
    # 24 MB output with rows that do not divide the 4 MB blocks evenly; the caller takes
    # blocks from the front and helpers from the back: with a value per row (1001, 1), a
    # block written at the wrong rows would show
    source = _data(source_shape, np.float64)
    v = lazybcast.broadcast_to(source, (1001, 3001))
    out = np.full(v.shape, np.nan)
    v.materialize(out=out, threads=threads)
    _assert_same_bytes(out, _expected(source, v.shape))


def test_object_items_keep_reference_counts():
    items = [object() for _ in range(4)]
    source = np.array(items, dtype=object)
    before = [sys.getrefcount(o) for o in items]
    out = lazybcast.broadcast_to(source, (50, 4)).materialize()
    assert [sys.getrefcount(o) for o in items] == [b + 50 for b in before]
    lazybcast.broadcast_to(source[::-1], (50, 4)).materialize(out=out)  # overwrite: old refs go
    assert [sys.getrefcount(o) for o in items] == [b + 50 for b in before]
    del out
    assert [sys.getrefcount(o) for o in items] == before


def test_bad_kernel_arguments_are_refused():
    with pytest.raises(ValueError, match="rank"):
        _kernels.copy_broadcast(np.zeros((2, 3)), np.zeros(6))
    with pytest.raises(ValueError, match="axis 1"):
        _kernels.copy_broadcast(np.zeros((2, 2)), np.zeros((2, 3)))
    with pytest.raises(TypeError, match="dtype"):
        _kernels.copy_broadcast(np.zeros(3, np.float32), np.zeros(3))
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        _kernels.copy_broadcast(np.zeros(3), ro)
    with pytest.raises(ValueError, match="threads"):
        _kernels.copy_broadcast(np.zeros(3), np.zeros(3), threads=0)
    with pytest.raises(TypeError, match="threads"):
        _kernels.copy_broadcast(np.zeros(3), np.zeros(3), threads=2.0)


# ---- every exported entry point validates (issue 13, item 2) ------------------------------

REFERENCE_DTYPES = [
    pytest.param(np.dtype([("a", "O"), ("b", "i4")]), id="structured-with-object"),
    pytest.param(np.dtypes.StringDType(), id="StringDType"),
]


def _gather_args(src, out=None, indices=None):
    """Arguments of a valid 1-axis gather of 3 rows from ``src`` (2-D)."""
    if indices is None:
        indices = [np.array([2, 0, 1], dtype=np.intp)]
    if out is None:
        out = np.empty((3, src.shape[1]), dtype=src.dtype)
    return src, tuple(src.shape), (0,), indices, out, 0, 1


@pytest.mark.parametrize("dtype", REFERENCE_DTYPES)
def test_kernels_refuse_items_holding_references(dtype):
    """Items holding references (other than plain object arrays) are never read as bytes or
    as PyObject*: the kernels refuse them (the public API copies them through NumPy)."""
    src = np.array([("x", 1), ("y", 2), ("z", 3)] * 2, dtype=dtype) if dtype.names else \
        np.array(["x", "yy" * 20, "z"] * 2, dtype=dtype)
    src = src.reshape(3, 2)
    with pytest.raises(TypeError, match="references"):
        _kernels.gather(*_gather_args(src))
    with pytest.raises(TypeError, match="references"):
        _kernels.copy_broadcast(src[:1], np.empty((3, 2), dtype=dtype))
    view = lazybcast.broadcast_to(src[:1], (3, 2))  # the public paths give NumPy's values
    np.testing.assert_array_equal(view.materialize(), np.broadcast_to(src[:1], (3, 2)))
    np.testing.assert_array_equal(view[[2, 0]], np.broadcast_to(src[:1], (3, 2))[[2, 0]])


def test_gather_of_objects_keeps_reference_counts():
    items = [object() for _ in range(4)]
    src = np.empty((4, 1), dtype=object)
    src[:, 0] = items
    before = [sys.getrefcount(o) for o in items]
    out = _kernels.gather(*_gather_args(src))
    assert list(out[:, 0]) == [items[2], items[0], items[1]]
    assert [sys.getrefcount(o) for o in items] == [b + (i in (0, 1, 2)) for i, b in
                                                   enumerate(before)]


def test_gather_refuses_bad_arguments():
    src = np.arange(12.0).reshape(4, 3)
    good = _gather_args(src)
    np.testing.assert_array_equal(_kernels.gather(*good), src[[2, 0, 1]])

    def call(**changes):
        args = dict(zip(["src", "vshape", "axes", "indices", "out", "bpos", "bndim"], good))
        args.update(changes)
        return _kernels.gather(*args.values())

    ro = np.empty((3, 3))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        call(out=ro)
    with pytest.raises(ValueError, match="C-contiguous"):
        call(out=np.empty((3, 3)).T)
    with pytest.raises(TypeError, match="dtype"):
        call(out=np.empty((3, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="out axis 1"):
        call(out=np.empty((3, 4)))
    with pytest.raises(ValueError, match="rank"):
        call(out=np.empty(3))
    with pytest.raises(ValueError, match="src axis 1"):
        call(vshape=(4, 5))
    with pytest.raises(ValueError, match="sizes >= 0"):
        call(vshape=(4, -3))
    with pytest.raises(TypeError):
        call(vshape=(4, 3.0))
    with pytest.raises(TypeError):
        call(vshape=None)
    with pytest.raises(ValueError, match="axes"):
        call(axes=(2,))
    with pytest.raises(ValueError, match="one index array"):
        call(indices=[])
    with pytest.raises(TypeError, match="ndarray"):
        call(indices=[[2, 0, 1]])
    with pytest.raises(TypeError, match="ndarray"):
        call(indices=[None])
    for bad in (np.array([2, 0, 1], dtype=np.int32),                    # not intp
                np.array([2, 0, 1], dtype=np.dtype(np.intp).newbyteorder()),  # swapped
                np.array([2, 0, 1, 1], dtype=np.intp),                  # wrong length
                np.array([2, 9, 0, 9, 1, 9], dtype=np.intp)[::2],       # strided
                np.frombuffer(np.zeros(25, np.uint8), np.intp, 3, 1)):  # misaligned
        with pytest.raises(ValueError, match="indices"):
            call(indices=[bad])
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 4"):
        call(indices=[np.array([0, 4, 1], dtype=np.intp)])
    np.testing.assert_array_equal(call(indices=[np.array([-1, -4, 0], dtype=np.intp)]),
                                  src[[-1, -4, 0]])
    with pytest.raises(ValueError, match="bpos|rank"):
        call(bpos=2)


def test_gather_into_its_own_source():
    """``out`` overlapping ``src`` reads the source as it was (as copy_broadcast does)."""
    buf = np.arange(12.0)
    src = buf.reshape(4, 3)
    expected = src[[3, 2, 1, 0]].copy()
    out = buf.reshape(4, 3)
    _kernels.gather(src, (4, 3), (0,), [np.array([3, 2, 1, 0], dtype=np.intp)], out, 0, 1)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_threads_work_in_a_forked_child():
    """A forked child of a process that made multi-threaded copies makes them too (it has no
    helper threads to inherit: each copy starts and joins its own)."""
    v = lazybcast.broadcast_to(np.arange(2048.0), (2048, 2048))
    v.materialize(threads=2)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            ok = v.materialize(threads=2)[1000, 7] == 7.0
        finally:
            os._exit(0 if ok else 1)
    deadline = time.monotonic() + 30
    while True:  # a hang in the child must fail the test, not stall the suite
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("materialize(threads=2) hung in a forked child")
        time.sleep(0.05)
    assert os.waitstatus_to_exitcode(status) == 0


def test_check_indices_raises_what_gather_raises():
    """The bounds check a compact gather runs first: the first bad value of the first bad array,
    in the words of the gather's own error; nothing for values in [-n, n)."""
    a = np.array([[0, -3], [2, 1]], dtype=np.intp)
    b = np.array([3, -5, 9], dtype=np.intp)
    assert _kernels.check_indices([a, np.array([-4, 3], dtype=np.intp)], (3, 4), (0, 1)) is None
    with pytest.raises(IndexError, match="^index -5 is out of bounds for axis 7 with size 4$"):
        _kernels.check_indices([a, b], (3, 4), (2, 7))
    with pytest.raises(IndexError, match="^index -3 is out of bounds for axis 2 with size 2$"):
        _kernels.check_indices([a, b], (2, 4), (2, 7))
    with pytest.raises(IndexError, match="with size 0"):
        _kernels.check_indices([np.zeros(1, dtype=np.intp)], (0,), (0,))
    assert _kernels.check_indices([np.zeros(0, dtype=np.intp)], (0,), (0,)) is None
    with pytest.raises(ValueError, match="one limit and one axis"):
        _kernels.check_indices([a], (3, 4), (0,))
    with pytest.raises(ValueError, match="sizes >= 0"):
        _kernels.check_indices([a], (-1,), (0,))
    with pytest.raises(TypeError, match="ndarray"):
        _kernels.check_indices([[0, 1]], (3,), (0,))
    for bad in (a.astype(np.int32), a.T, a.astype(a.dtype.newbyteorder())):
        with pytest.raises(ValueError, match="intp"):
            _kernels.check_indices([bad], (3,), (0,))


@pytest.mark.parametrize("make", [
    lambda v: v.astype(np.intp),                                # as it is
    lambda v: v.astype(np.intp).reshape(2, 3),                  # n-d: a flat view
    lambda v: v.astype(np.int8),                                # cast
    lambda v: v.astype(np.uint64),                              # 2**64 - 1 reads as -1
    lambda v: v.astype(np.dtype(np.intp).newbyteorder()),       # swapped
    lambda v: np.repeat(v.astype(np.intp), 2)[::2],             # strided
    lambda v: v.astype(np.intp).reshape(3, 2).T,                # transposed
])
def test_flat_intp_gives_the_values_as_the_kernel_reads_them(make):
    values = np.array([0, 5, -1, 3, -6, 2])
    arr = make(values)
    flat = _kernels.flat_intp(arr)
    assert flat.dtype.num == np.dtype(np.intp).num and flat.dtype.isnative
    assert flat.ndim == 1 and flat.flags.c_contiguous and flat.flags.aligned
    np.testing.assert_array_equal(flat, arr.reshape(-1).astype(np.intp))
    if arr.dtype.num == np.dtype(np.intp).num and arr.dtype.isnative and arr.flags.c_contiguous:
        assert np.shares_memory(flat, arr)  # no copy when none is needed
    with pytest.raises(TypeError):
        _kernels.flat_intp([1, 2])


def test_gather_refuses_a_short_report_axes():
    with pytest.raises(ValueError, match="report_axes"):
        _kernels.gather(np.arange(3.0), (3,), (0,), [np.array([5], dtype=np.intp)],
                        np.empty(1), 0, 1, ())


@pytest.fixture
def transpose_stage():
    """Sets the staging block of streamed transposes for one test, then restores it."""
    default, rows = _kernels._transpose_stage(), _kernels._rows_stage()
    yield _kernels._transpose_stage
    assert _kernels._transpose_stage(default) == default
    _kernels._rows_stage(rows)  # (what this process measured, or not yet)


@pytest.mark.parametrize("stage", [None, 40000, 0])
@pytest.mark.parametrize("dtype, cols", [(np.uint8, 6421), (np.int16, 4099), (np.float32, 3203),
                                         (np.float64, 2601), (np.uint8, 4096),
                                         (np.complex128, 1031), ("V3", 3001)])
@pytest.mark.slow
def test_large_transposing_copy_with_streaming_stores(dtype, cols, stage, transpose_stage):
    """Past the streaming threshold the tiles go through a staging block written out in
    non-temporal runs (items of 1 to 16 bytes; the default block, one a few tiles wide, and
    none); rows whose sizes are not multiples of the tiles, the staging block or the 16x16
    (8x8, 4x4, 2x2) register blocks take the tails."""
    transpose_stage(stage)
    rows = _kernels.stream_threshold() // (cols * np.dtype(dtype).itemsize) + 3  # odd tails
    shape = (rows, cols)
    a = _data(shape[::-1], dtype)
    source = a.T
    view = lazybcast.broadcast_to(source, shape)
    assert view.nbytes >= _kernels.stream_threshold()
    for threads in (1, 2):
        staged = _kernels._transposes_staged()
        _assert_same_bytes(view.materialize(threads=threads), _expected(source, shape))
        # items of 1-16 bytes with a staging block take it; others, and no block, do not
        takes = stage != 0 and np.dtype(dtype).itemsize in (1, 2, 4, 8, 16)
        assert (_kernels._transposes_staged() > staged) == takes


@pytest.fixture(params=["default", "4 MiB"])
def copy_threshold(request):
    """The copies' streaming threshold as this machine chose it, or STREAM_BYTES_LOW's value
    on common CPUs (4 MiB: Zen 3 chooses LOW; Zen 5 HIGH, 48 MiB)."""
    copy, _ = _kernels._stream_thresholds()
    if request.param != "default":
        _kernels._stream_thresholds(copy=4 << 20)
    yield _kernels.stream_threshold()
    assert _kernels._stream_thresholds(copy=copy)[0] == copy


@pytest.mark.slow
def test_large_transposes_of_strided_and_broadcast_sources(transpose_stage, copy_threshold):
    """Streamed transposes whose source rows are not contiguous (a column step), whose
    planes repeat along a broadcast axis, or with too few rows or columns for a staging
    block (these take the tiles that write straight out). Repeated planes into one
    contiguous output: the first plane alone is transposed, then copied into the others
    (_run_plan), so it is staged only if it streams on its own (plane and source together
    past the threshold)."""
    transpose_stage(40000)
    n = copy_threshold // 4
    cols = 1500
    planes = n // (700 * cols) + 2
    for source, shape in [(_data((cols, 2 * (n // cols + 3)), np.float32)[:, ::2].T, None),
                          (_data((cols, 700), np.float32).T[None], (planes, 700, cols)),
                          (_data((40, n // 40 + 5), np.float32).T, None),
                          (_data((n // 40 + 5, 40), np.float32).T, None)]:
        shape = shape or source.shape
        view = lazybcast.broadcast_to(source, shape)
        assert view.nbytes >= _kernels.stream_threshold()
        # (only the repeated plane has contiguous rows on both sides and a tile's size)
        takes = source.ndim == 3 and 2 * 700 * cols * 4 >= copy_threshold
        for threads in (1, 2):
            staged = _kernels._transposes_staged()
            _assert_same_bytes(view.materialize(threads=threads), _expected(source, shape))
            assert (_kernels._transposes_staged() > staged) == takes


def test_transposes_count_their_source_against_the_streaming_threshold():
    """A transposing copy reads its source across rows, so the source it reads counts with
    its output: a plain transpose streams (through the staging block) from half the
    threshold; one whose planes repeat one source plane counts that plane once; one whose
    output and source together stay under the threshold does not stream."""
    half = _kernels.stream_threshold() // 2
    cols = 1531
    for rows, planes, takes in [(half // (4 * cols) + 7, 1, True),  # output + source >= T
                                (half // (4 * cols) - 7, 1, False),  # output + source < T
                                (half // (8 * cols) + 7, 2, False)]:  # one plane, repeated
        source = _data((cols, rows), np.float32).T
        shape = (planes, rows, cols) if planes > 1 else (rows, cols)
        view = lazybcast.broadcast_to(source, shape)
        assert view.nbytes < 2 * half  # (under the threshold as an output alone)
        for threads in (1, 2):
            staged = _kernels._transposes_staged()
            _assert_same_bytes(view.materialize(threads=threads), _expected(source, shape))
            assert (_kernels._transposes_staged() > staged) == takes, (rows, planes, threads)


def _lined(nbytes, offset):
    """A buffer of ``nbytes`` bytes of 0xA5 that starts ``offset`` bytes past a 64-byte
    line, with 64 more bytes of 0xA5 after it (to see that nothing is written past it)."""
    raw = np.full(nbytes + 192, 0xA5, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    return raw, raw[start:start + nbytes]


def _packed_out(want, offset):
    """``(raw, out, expected)``: a packed output of ``want``'s shape and dtype ``offset``
    bytes past a line of a guarded buffer (_lined), and the buffer's bytes once ``want`` is
    written into it."""
    want = np.ascontiguousarray(want)
    raw, lined = _lined(want.nbytes, offset)
    out = lined.view(want.dtype).reshape(want.shape)
    expected = raw.copy()
    start = lined.ctypes.data - raw.ctypes.data
    expected[start:start + want.nbytes] = want.reshape(-1).view(np.uint8)
    return raw, out, expected


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
@pytest.mark.parametrize("channels", [2, 3, 4])
@pytest.mark.parametrize("to_chw", [True, False], ids=["HWC -> CHW", "CHW -> HWC"])
def test_channels_from_every_phase_of_a_line(dtype, channels, to_chw, copies_stream):
    """Image channels moved (CHW <-> HWC) into outputs that start at every item of the first
    32 bytes of a line: the 32-byte vector loop starts where its stores are aligned, after
    a head of pixels through the 16-byte loop, whatever the phase; streamed, deinterleaving
    writes runs of 256 bytes per plane from the first pixel whose stores start a line, after
    a head by groups; on 1 and 2 threads (each block of pixels starts anew). NumPy's values;
    nothing around the output written."""
    dt = np.dtype(dtype)
    h, w = 192, 256  # (2 threads: blocks of at least 64 kB)
    hwc = _data((h, w, channels), dt)
    source = hwc.transpose(2, 0, 1) if to_chw else np.ascontiguousarray(
        hwc.transpose(2, 0, 1)).transpose(1, 2, 0)
    for offset in range(0, 64 if copies_stream == "streamed" else 32, dt.itemsize):
        raw, out, expected = _packed_out(source, offset)
        for threads in (1, 2):
            raw[:] = 0xA5
            lazybcast.broadcast_to(source, source.shape).materialize(out=out, threads=threads)
            assert raw.tobytes() == expected.tobytes(), (offset, threads)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, np.complex128])
@pytest.mark.slow
def test_transposes_in_the_source_order_stay_in_their_rows(dtype, simd):
    """Streamed transposes whose output rows start on cache lines go in the source's order:
    the items before the output's first line boundary on their own, then blocks of whole
    source rows in runs that start on the lines. For several offsets of the output in its
    line, with tails of every kind (source rows not a whole number of runs or blocks,
    columns not a whole number of staging rows), on 1 and 2 threads, the values are
    NumPy's and the bytes between the rows (a column slice of a wider output) and past the
    output stay as they were. Rows that start at other offsets go in the output's order.
    (With and without AVX2: the short runs go out with 32- or 16-byte stores.)"""
    dtype = np.dtype(dtype)
    size = dtype.itemsize
    ni = 1003  # source columns: output rows
    nj = _kernels.stream_threshold() // 2 // (ni * size) + 29  # source rows: output columns
    source = _data((nj, ni), dtype).T
    lined_width = (nj * size + 127) // 64 * 64 // size  # rows of whole lines, >= nj + 64 B
    for width in (lined_width, lined_width + 1):
        for offset in sorted({0, size, 16, 64 - size}):  # the output's offset in its line
            nbytes = ni * width * size
            for threads in (1, 2):
                raw, lined = _lined(nbytes, 0)
                parent = lined.view(dtype).reshape(ni, width)
                out = parent[:, offset // size:offset // size + nj]
                expected = raw.copy()
                start = lined.ctypes.data - raw.ctypes.data
                wanted = expected[start:start + nbytes].view(dtype).reshape(ni, width)
                wanted[:, offset // size:offset // size + nj] = source
                in_source_order = _kernels._transposes_in_source_order()
                lazybcast.broadcast_to(source, (ni, nj)).materialize(out=out, threads=threads)
                case = (width, offset, threads)
                assert raw.tobytes() == expected.tobytes(), case
                assert _kernels._last_threads() == threads, case
                # the blocks of the copy (2 or more), and the rows before the first line
                blocks = _kernels._transposes_in_source_order() - in_source_order
                assert (blocks >= 2) if width == lined_width else (blocks == 0), case


@pytest.fixture
def source_order():
    """Sets whether transposes below the streaming threshold take the source's order, for
    one test, then restores what this process measured (or that it has not yet)."""
    rows, cached = _kernels._rows_stage(), _kernels._source_order_in_cache()
    yield _kernels._source_order_in_cache
    _kernels._source_order_in_cache(cached)
    _kernels._rows_stage(rows)


@pytest.mark.parametrize("in_cache", [False, True], ids=["streamed only", "in the cache too"])
@pytest.mark.parametrize("ni, nj, repeated", [
    (700, 1536, True),  # a plane larger than L2: transposed alone, then copied
    (256, 256, True),  # a plane that stays in L2: the output's order
    (40, 64, True),  # small planes, written once and copied: the output's order
    (40, 64, False),  # distinct planes, each 16 bytes further into a line
])
@pytest.mark.slow
def test_planes_transposed_in_the_source_order(ni, nj, repeated, in_cache, simd,
                                               copy_threshold, source_order):
    """Transposed planes, one plane repeated along a broadcast axis or one plane per source
    plane, into rows that start on cache lines, with or without the output starting on one
    (NumPy's arrays start 16 bytes into a line). The source's order is for sources larger
    than L2 (ROW_ORDER_SOURCE_BYTES) that stream, or that do not where the machine measured
    it faster (set here both ways); a repeated plane of 64 kB or more is transposed once,
    alone (in the source's order if the plane alone would take it: a plane and its source
    past the threshold, or not), and copied into the others (_run_plan); smaller ones are
    written once per block of work and copied, in the output's order. With distinct planes
    whose stride is not a multiple of 64 bytes, the planes after the first start inside a
    line (the short runs' unaligned heads and tails). Values are
    NumPy's; nothing before or after the output, or between its planes, is written."""
    planes = copy_threshold // (4 * ni * nj) + 2
    source_bytes = ni * nj * 4 * (1 if repeated else planes)
    streams = (2 * ni * nj * 4 if repeated else planes * ni * nj * 4) >= copy_threshold
    takes = (streams or in_cache) and source_bytes > _kernels.ROW_ORDER_SOURCE_BYTES
    source_order(in_cache)
    shape = (planes, ni, nj)
    if repeated:
        source = _data((nj, ni), np.float32).T[None]
    else:
        source = _data((planes, nj, ni), np.float32).transpose(0, 2, 1)
    plane = ni * nj * 4 + (0 if repeated else 16)  # bytes from one plane to the next
    for offset in (16, 0):
        raw, lined = _lined(planes * plane, offset)
        start = lined.ctypes.data - raw.ctypes.data
        out = np.lib.stride_tricks.as_strided(lined.view(np.float32), shape,
                                              (plane, nj * 4, 4))
        for threads in (1, 2):
            raw[:] = 0xA5
            in_source_order = _kernels._transposes_in_source_order()
            lazybcast.broadcast_to(source, shape).materialize(out=out, threads=threads)
            _assert_same_bytes(out, _expected(source, shape))
            blocks = _kernels._transposes_in_source_order() - in_source_order
            assert (blocks >= 2) if takes else (blocks == 0), (offset, threads, blocks)
            assert (raw[:start] == 0xA5).all() and (raw[start + lined.size:] == 0xA5).all()
            if not repeated:  # the padding between planes
                gaps = lined[:(planes - 1) * plane].reshape(planes - 1, plane)[:, -16:]
                assert (gaps == 0xA5).all()


@pytest.mark.parametrize("planes, ni, nj", [(5, 2048, 768), (64, 256, 256)])
def test_the_rows_before_the_first_line_go_in_pieces(planes, ni, nj):
    """A transpose in the source's order into an output 16 bytes into a line first copies the
    source rows before the line boundary of every plane: a few bytes of every output row, the
    first touch of every page of a fresh output. That peel runs in pieces whose output spans
    at most CHUNK_BYTES (whole planes together, or one plane cut along its output rows),
    with a Ctrl-C check after each; the values are NumPy's and nothing outside is written."""
    copy, _ = _kernels._stream_thresholds()
    _kernels._stream_thresholds(copy=4 << 20)
    try:
        source = _data((planes, nj, ni), np.float32).transpose(0, 2, 1)
        raw, lined = _lined(planes * ni * nj * 4, 16)
        out = lined.view(np.float32).reshape(planes, ni, nj)
        pieces, in_order = _kernels._peel_pieces(), _kernels._transposes_in_source_order()
        lazybcast.broadcast_to(source, source.shape).materialize(out=out, threads=1)
        pieces = _kernels._peel_pieces() - pieces
        assert _kernels._transposes_in_source_order() - in_order >= 2
    finally:
        _kernels._stream_thresholds(copy=copy)
    _assert_same_bytes(out, source)
    assert (raw[:(-raw.ctypes.data) % 64 + 16] == 0xA5).all()
    assert (raw[(-raw.ctypes.data) % 64 + 16 + lined.size:] == 0xA5).all()
    chunk, plane = _kernels.CHUNK_BYTES, ni * nj * 4
    if plane <= chunk // 2:
        assert pieces == -(-planes // (chunk // plane))
    else:
        assert pieces == planes * -(-ni // (chunk // (nj * 4)))
    assert pieces >= 2


@pytest.mark.parametrize("text, nbytes", [("32768K\n", 32 << 20), ("1M", 1 << 20), ("48k", 48 << 10),
                                          ("2G", 2 << 30), (" 1024 ", 1024)])
def test_cache_sizes_read_from_sysfs_in_every_unit(text, nbytes):
    """sysfs gives cache sizes in K (``32768K``), but other kernels and platforms write M or
    plain bytes; each is read (the L1/L2 reader used to take only K and bytes, and fell
    back to sysconf on ``1M``)."""
    assert _kernels._size_bytes(text) == nbytes


def test_cache_size_text_that_is_not_a_size_raises():
    with pytest.raises(ValueError):
        _kernels._size_bytes("large")


@pytest.mark.parametrize("layout", ["transposed", "CHW->HWC", "HWC->CHW"])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("threads", [1, 2])
def test_layout_changes_broadcast_over_a_batch(layout, dtype, threads, copies_stream):
    """A layout change (transposing tiles, image channels) broadcast over a batch axis, with
    blocks from 64 kB up to L2 and past it: the first block is written by the kernel and
    copied into the others (_run_plan: the output is one contiguous block). Ordinary and
    non-temporal stores; NumPy's bytes, nothing written around the output."""
    item = np.dtype(dtype).itemsize
    for block in (64 << 10, _kernels.ROW_ORDER_SOURCE_BYTES, 2 * _kernels.ROW_ORDER_SOURCE_BYTES):
        if layout == "transposed":
            n = int((block // item) ** 0.5) + 3
            src = _data((n + 1, n), dtype).T[None]            # (1, n, n + 1), read across
        else:
            side = int((block // (3 * item)) ** 0.5) + 2
            if layout == "CHW->HWC":
                src = _data((3, side, side + 1), dtype).transpose(1, 2, 0)[None]
            else:
                src = _data((side, side + 1, 3), dtype).transpose(2, 0, 1)[None]
        target = (5,) + src.shape[1:]
        raw, out, expected = _packed_out(np.broadcast_to(src, target), 16)
        lazybcast.broadcast_to(src, target).materialize(out=out, threads=threads)
        assert raw.tobytes() == expected.tobytes(), block


@pytest.mark.parametrize("layout", ["transposed", "CHW->HWC", "HWC->CHW"])
@pytest.mark.parametrize("batch", [2, 3, 17])
@pytest.mark.parametrize("order", ["packed", "reversed", "padded"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_layout_batch_copies_its_first_image(layout, batch, order, threads):
    """A layout change broadcast over the outermost axis into one contiguous output runs the
    kernel on the first image (64 kB or more) and copies that image into the others
    (_run_plan): batches of 2 (one image copied), 3 and 17, into a packed output, one whose
    batch axis is reversed (the plan walks it from its other end: the view's last image is
    the one written by the kernel), and one with padding between the images (not one block:
    each image by the kernel). NumPy's bytes; the padding and the bytes around the output
    (random, so that a copy of the padding would show) unchanged."""
    if layout == "transposed":
        src = _data((163, 131), np.float32).T[None]                     # (1, 131, 163)
    elif layout == "CHW->HWC":
        src = _data((3, 161, 151), np.uint8).transpose(1, 2, 0)[None]   # (1, 161, 151, 3)
    else:
        src = _data((161, 151, 4), np.uint8).transpose(2, 0, 1)[None]   # (1, 4, 161, 151)
    target = (batch,) + src.shape[1:]
    want = np.broadcast_to(src, target)
    image = want[0].nbytes
    stride = image + (48 if order == "padded" else 0)
    assert image >= _kernels.REPLICATE_CHUNK
    raw, lined = _lined(batch * stride, 16)
    raw[:] = np.random.default_rng(batch).integers(0, 256, raw.size, dtype=np.uint8)
    start = lined.ctypes.data - raw.ctypes.data
    inner = np.empty(target[1:], want.dtype).strides  # (C order within an image)
    out = np.ndarray(target, want.dtype, buffer=lined, strides=(stride,) + inner)
    if order == "reversed":
        out = out[::-1]
    expected = raw.copy()
    inside = expected[start:start + batch * stride].reshape(batch, stride)
    inside[:, :image] = np.ascontiguousarray(want).reshape(-1).view(np.uint8).reshape(batch, -1)
    lazybcast.broadcast_to(src, target).materialize(out=out, threads=threads)
    assert raw.tobytes() == expected.tobytes()


@pytest.mark.parametrize("h, w", [(5, 7), (3, 5), (16, 3), (4, 4), (1, 17)])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32])
def test_streamed_deinterleave_into_planes_off_the_vector_grid(h, w, dtype):
    """Past the streaming threshold (set to 0 here) a deinterleave stores non-temporally
    only if every plane starts 16-byte aligned: an output that starts on a line, with
    planes of h * w items whose bytes are not a multiple of 16 (5 x 7 uint8: 35 bytes),
    takes ordinary stores (non-temporal ones would fault on the second plane); planes of a
    multiple of 16 bytes stream. NumPy's bytes either way, nothing written around them."""
    copy, _ = _kernels._stream_thresholds()
    _kernels._stream_thresholds(copy=0)
    try:
        src = _data((h, w, 3), dtype)
        for threads in (1, 2):
            raw, out, expected = _packed_out(src.transpose(2, 0, 1), 0)
            lazybcast.broadcast_to(src.transpose(2, 0, 1), (3, h, w)).materialize(
                out=out, threads=threads)
            assert raw.tobytes() == expected.tobytes()
    finally:
        _kernels._stream_thresholds(copy=copy)


def test_copy_down_hook_rejects_negative_sizes():
    with pytest.raises(ValueError, match="nbytes must be >= 0, got -1"):
        _kernels._copy_down_max_bytes(-1)


def test_copy_down_stops_at_the_cache_share():
    """Outputs copied down a chunk at a time stop at glibc's non-temporal threshold (this
    CPU's share of the shared cache), or are never copied a chunk at a time, as this
    machine measured."""
    assert _kernels.COPY_DOWN_MAX_BYTES == _kernels.STREAM_BYTES_LOW
    assert _kernels._copy_down_max_bytes() in (0, _kernels.COPY_DOWN_MAX_BYTES)


def test_the_first_long_row_copied_down_chooses_chunks_or_rows():
    """A process measures how long rows are copied down at its first copy that may use
    chunks (a row of 1 kB or more broadcast over rows, not packed and short), not before
    (at import, or for packed short rows, which are swept out either way), and not again;
    the copy and those after it have NumPy's values. Where no AVX2 kernel is in use there is
    nothing to choose."""
    out = fresh_process(
        "import numpy as np, lazybcast\n"
        "from lazybcast import _kernels\n"
        "seen = [_kernels._copy_down_measured()]\n"
        "short = np.arange(512.0)\n"
        "ok = (lazybcast.broadcast_to(short, (16, 512)).materialize() == short).all()\n"
        "seen.append(_kernels._copy_down_measured())\n"
        "items = 2 * _kernels.REPLICATE_COPY_BYTES // 8 + 512  # (longer than two chunks)\n"
        "src = np.arange(float(items))\n"
        "for n in (16, 5):\n"
        "    ok &= (lazybcast.broadcast_to(src, (n, items)).materialize() == src).all()\n"
        "    seen.append(_kernels._copy_down_measured())\n"
        "print(*seen, ok, _kernels._copy_down_max_bytes() in (0, _kernels.COPY_DOWN_MAX_BYTES))\n"
    ).split()
    assert out[:2] == ["False", "False"]
    assert out[4:] == ["True", "True"]
    assert out[2:4] == (["True", "True"] if "AVX2" in _kernels.simd_features()
                        else ["False", "False"])


def test_copy_down_hook_settles_the_choice():
    """A size set through the hook is kept: no later measurement replaces it."""
    out = fresh_process(
        "import numpy as np, lazybcast\n"
        "from lazybcast import _kernels\n"
        "_kernels._copy_down_max_bytes(12345)\n"
        "src = np.arange(4096.0)\n"
        "ok = (lazybcast.broadcast_to(src, (2, 4096)).materialize() == src).all()\n"
        "print(_kernels._copy_down_measured(), _kernels._copy_down_max_bytes(), ok)\n"
    ).split()
    assert out == ["True", "12345", "True"]


def test_stream_thresholds_hook_rejects_negative_sizes():
    with pytest.raises(ValueError, match="fill must be >= 0, got -1"):
        _kernels._stream_thresholds(fill=-1)
    with pytest.raises(ValueError, match="copy must be >= 0, got -2"):
        _kernels._stream_thresholds(copy=-2)


def test_fill_threshold_is_a_calibrated_candidate():
    """The fills' threshold is one of the three rules' (MID, twice or four times the shared
    cache) or the copies' when that is higher, never below the copies'."""
    if os.environ.get("LAZYBCAST_STREAM_BYTES"):
        pytest.skip("LAZYBCAST_STREAM_BYTES sets both thresholds")
    copy, fill = _kernels.stream_threshold(), _kernels.stream_threshold("fill")
    assert fill >= copy
    assert fill in (max(copy, _kernels.STREAM_BYTES_MID), max(copy, _kernels.STREAM_FILL_BEYOND),
                    max(copy, _kernels.STREAM_FILL_HIGH))
    assert _kernels.STREAM_FILL_BEYOND == 2 * _kernels.STREAM_FILL_HIGH // 4


@pytest.mark.parametrize("shared, cpus, l2, virtual, counted", [
    (480 << 20, 2, 2 << 20, True, 128 << 20),  # a VM on a 128-core Xeon socket: its 2 CPUs' share
    (32 << 20, 2, 1 << 20, True, 32 << 20),    # Zen 4 / Zen 5 VMs (L2 1 MiB): as reported
    (32 << 20, 2, 512 << 10, True, 32 << 20),  # Zen 3 VMs (L2 512 KiB): as reported (the cap)
    (96 << 20, 16, 512 << 10, True, 96 << 20),  # a stacked-cache Zen 3 (24 L2s per core)
    (480 << 20, 0, 2 << 20, True, 64 << 20),   # no count of CPUs sharing it: one
    (480 << 20, 2, 0, True, 480 << 20),        # no L2 reported: nothing to cap by
    (0, 1, 1 << 20, True, 32 << 20),           # nothing reported: 32 MiB
    (32 << 20, 1, 512 << 10, False, 32 << 20),  # bare metal EPYC 72F3 (one core per 32 MiB)
    (32 << 20, 1, 512 << 10, True, 16 << 20),   # ... the same report in a VM: capped
    (480 << 20, 2, 2 << 20, False, 480 << 20),  # bare metal: what is reported, whatever it is
    (0, 1, 1 << 20, False, 32 << 20),           # nothing reported: 32 MiB
])
def test_the_shared_cache_counted_in_a_vm_is_at_most_32_l2s_per_cpu_sharing_it(
        shared, cpus, l2, virtual, counted):
    assert _kernels._counted_l3(shared, cpus, l2, virtual) == counted


def test_a_virtual_machine_is_what_the_cpu_flags_say():
    """VIRTUAL_MACHINE is the ``hypervisor`` flag of /proc/cpuinfo (False without one)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = [line.split() for line in f if line.startswith("flags")]
    except OSError:
        flags = []
    assert _kernels.VIRTUAL_MACHINE is bool(flags and "hypervisor" in flags[0])


def test_thresholds_derive_from_the_shared_cache_counted():
    l3 = _kernels.L3_BYTES
    assert l3 == _kernels._counted_l3(_kernels.SHARED_CACHE_BYTES, _kernels.SHARED_CACHE_CPUS,
                                      _kernels.L2_BYTES, _kernels.VIRTUAL_MACHINE)
    assert _kernels.STREAM_BYTES_MID == max(_kernels.STREAM_BYTES_LOW, 3 * l3 // 4)
    assert _kernels.STREAM_FILL_BEYOND == 2 * l3 and _kernels.STREAM_FILL_HIGH == 4 * l3


def _fresh_process(code):
    """``code``'s printed words in a new interpreter, whose first large copy calibrates."""
    env = dict(os.environ)
    env.pop("LAZYBCAST_STREAM_BYTES", None)
    return fresh_process(code, env=env).split()


def test_first_large_copy_reports_its_own_threads():
    """The calibration inside a process's first large copy runs copies of its own; the copy
    still reports the threads it chose (the calibration used to overwrite them)."""
    out = _fresh_process(
        "import numpy as np, lazybcast\n"
        "from lazybcast import _kernels\n"
        "rows = _kernels.STREAM_BYTES_LOW // 256 + 1  # (the calibration's trigger)\n"
        "v = lazybcast.broadcast_to(np.ones((1, 64), np.float32), (rows, 64))\n"
        "v.materialize(threads=3)\n"
        "print(_kernels._stream_calibrations(), _kernels._last_threads())\n")
    assert out == ["1", "3"]


def test_transposes_measure_their_staging_block_at_the_first_in_the_source_order():
    """The staging block of transposes in the source's order (and whether those below the
    streaming threshold take that order) is measured once, by the first transpose that
    could take it, a source larger than L2 whether it streams or not (not by a smaller
    one), and is then one of the two candidates; the transposes hold NumPy's values before
    and after, and a transpose past the threshold measures nothing more."""
    out = _fresh_process(
        "import math, numpy as np, lazybcast\n"
        "from lazybcast import _kernels\n"
        "def transpose(n):\n"
        "    src = np.arange(n * n, dtype=np.float32).reshape(n, n).T\n"
        "    return np.array_equal(lazybcast.broadcast_to(src, src.shape).materialize(), src)\n"
        "small = transpose(256)\n"
        "before = _kernels._rows_stage()[0]\n"
        "mid = transpose((math.isqrt(_kernels.ROW_ORDER_SOURCE_BYTES // 4) // 64 + 1) * 64)\n"
        "measured, block = _kernels._rows_stage()\n"
        "in_cache = _kernels._source_order_in_cache()\n"
        "n = (math.isqrt(_kernels.stream_threshold() // 8) // 64 + 1) * 64  # (reach past it)\n"
        "print(small, before, mid, measured,\n"
        "      block in (_kernels.TRANSPOSE_STAGE_BYTES, _kernels.TRANSPOSE_STAGE_SMALL_BYTES),\n"
        "      transpose(n), _kernels._rows_stage() == (measured, block),\n"
        "      _kernels._source_order_in_cache() == in_cache)\n")
    assert out == ["True", "False", "True", "True", "True", "True", "True", "True"]


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.complex128])
def test_transposes_in_the_source_order_through_the_small_block(dtype, transpose_stage):
    """Whichever block this machine measured, transposes in the source's order through the
    small one (TRANSPOSE_STAGE_SMALL_BYTES: a few staging rows, columns not a whole number of
    them) hold NumPy's values, on 1 and 2 threads."""
    copy, _ = _kernels._stream_thresholds()
    _kernels._stream_thresholds(copy=4 << 20)
    _kernels._rows_stage((True, _kernels.TRANSPOSE_STAGE_SMALL_BYTES))
    try:
        size = np.dtype(dtype).itemsize
        line = 64 // size  # (output rows of whole lines; not a whole number of staging rows)
        ni, nj = 1003, ((6 << 20) // (1003 * size) // 128 * 128 + line)
        source = _data((nj, ni), dtype).T
        for threads in (1, 2):
            in_order = _kernels._transposes_in_source_order()
            raw, out, expected = _packed_out(source, 16)
            lazybcast.broadcast_to(source, source.shape).materialize(out=out, threads=threads)
            assert raw.tobytes() == expected.tobytes()
            assert _kernels._transposes_in_source_order() - in_order >= 2
    finally:
        _kernels._stream_thresholds(copy=copy)
    assert _kernels._rows_stage()[1] == _kernels.TRANSPOSE_STAGE_SMALL_BYTES


def test_a_staging_block_set_by_the_hook_is_not_measured(transpose_stage):
    stage = _kernels._transpose_stage()
    transpose_stage(48 << 10)
    assert _kernels._rows_stage() == (True, 48 << 10)
    transpose_stage(stage)
    assert _kernels._rows_stage() == (True, stage)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")
def test_interrupted_calibration_measures_again():
    """Ctrl-C during the calibration of the first large copy raises KeyboardInterrupt and
    leaves the thresholds unmeasured: the next large copy measures them (it used to keep the
    pre-calibration fill threshold for the rest of the process)."""
    out = _fresh_process(
        "import signal, numpy as np, lazybcast\n"
        "from lazybcast import _kernels\n"
        "inside = []\n"
        "def handler(signum, frame):\n"
        "    if inside and inside.pop():\n"
        "        raise KeyboardInterrupt\n"
        "signal.signal(signal.SIGALRM, handler)\n"
        "src = np.arange(1024, dtype=np.float32)[None]\n"
        "v = lazybcast.broadcast_to(src, (_kernels.STREAM_BYTES_LOW // 4096 + 1, 1024))\n"
        "inside.append(True)\n"
        "try:\n"
        "    signal.setitimer(signal.ITIMER_REAL, 0.001)  # (in the copies' part: no checks)\n"
        "    v.materialize()\n"
        "    print('finished')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', _kernels._stream_calibrations())\n"
        "inside.clear()\n"
        "ok = np.array_equal(v.materialize(), np.broadcast_to(src, v.shape))\n"
        "fill = _kernels.stream_threshold('fill')\n"
        "print(_kernels._stream_calibrations(), ok,\n"
        "      fill in (_kernels.STREAM_BYTES_MID, _kernels.STREAM_FILL_BEYOND,\n"
        "               _kernels.STREAM_FILL_HIGH, _kernels.stream_threshold()),\n"
        "      fill == _kernels.STREAM_FILL_BYTES)\n")
    if out[0] == "finished":
        pytest.skip("the signal came after the first copy")  # pragma: no cover
    assert out == ["interrupted", "0", "1", "True", "True", "True"]


def test_fills_beyond_the_cache_are_measured_at_the_first_such_output():
    """The fills' threshold beyond the cache is measured once, by the first output of
    STREAM_FILL_BEYOND or more (not by smaller ones), after which the fills' threshold is
    one of the rules' and what STREAM_FILL_BYTES says; the output holds NumPy's values."""
    out = _fresh_process(
        "import numpy as np, lazybcast\n"
        "from lazybcast import _kernels\n"
        "src = np.arange(64, dtype=np.float32)\n"
        "rows = _kernels.stream_threshold() // 256 + 1\n"
        "small = lazybcast.broadcast_to(src, (rows, 64)).materialize()\n"
        "before = _kernels._fill_beyond_measured()\n"
        "shape = (_kernels.STREAM_FILL_BEYOND // 256 + 3, 64)\n"
        "ok = np.array_equal(lazybcast.broadcast_to(src, shape).materialize(),\n"
        "                    np.broadcast_to(src, shape))\n"
        "copy, fill = _kernels._stream_thresholds()\n"
        "item = _kernels._stream_item_threshold()\n"
        "beyond = max(copy, _kernels.STREAM_FILL_BEYOND)\n"
        "print(before, _kernels._fill_beyond_measured(), ok, _kernels._stream_calibrations(),\n"
        "      fill in {max(copy, t) for t in (_kernels.STREAM_BYTES_MID,\n"
        "               _kernels.STREAM_FILL_BEYOND, _kernels.STREAM_FILL_HIGH)},\n"
        "      fill == _kernels.STREAM_FILL_BYTES,\n"
        "      item == fill or (fill == beyond and item == _kernels.STREAM_ITEM_BEYOND\n"
        "                       and 'ERMS' in _kernels.simd_features()))\n")
    assert out == ["False", "True", "True", "1", "True", "True", "True"]


@pytest.mark.parametrize("dtype", ["u1", "u2", "f4", "f8", "c16", "S3"])
@pytest.mark.parametrize("item_streams", [False, True])
def test_runs_of_one_item_stream_by_their_own_threshold(dtype, item_streams, simd):
    """Fills stream (small thresholds through the hooks) while runs of one item do or do not
    (their own threshold: `rep stos` where it beats non-temporal stores; items over 8 bytes
    always follow the fills): one item over a long run, per row, per plane, a scalar, and
    rows of several items beside them, all with NumPy's values, nothing written around."""
    copy, fill = _kernels._stream_thresholds()
    item = _kernels._stream_item_threshold()
    item = item if item > fill else 0  # (the hook gives the higher of the two)
    try:
        _kernels._stream_thresholds(fill=0)
        _kernels._stream_item_threshold(0 if item_streams else 1 << 40)
        for src_shape, shape in (((7, 1, 1), (7, 9, 700)), ((1,), (6000,)), ((5, 1), (5, 3001)),
                                 ((), (3, 2100)), ((1, 1, 4), (3, 700, 4))):
            src = _data(src_shape, np.dtype(dtype))
            raw, lined = _lined(int(np.prod(shape)) * np.dtype(dtype).itemsize, 8)
            out = lined.view(dtype).reshape(shape)
            for threads in (1, 2):
                raw[...] = 0xA5
                lined[...] = 0
                lazybcast.broadcast_to(src, shape).materialize(out=out, threads=threads)
                assert out.tobytes() == np.broadcast_to(src, shape).tobytes()
                start = lined.ctypes.data - raw.ctypes.data
                assert set(raw[:start].tobytes() + raw[start + lined.size:].tobytes()) <= {0xA5}
    finally:
        _kernels._stream_thresholds(copy=copy, fill=fill)  # (sets runs of one item's to 0)
        _kernels._stream_item_threshold(item)
    assert _kernels._stream_thresholds() == (copy, fill)
    assert _kernels._stream_item_threshold() == max(fill, item)


def test_stream_item_hook_rejects_negative_sizes():
    with pytest.raises(ValueError, match="nbytes must be >= 0, got -3"):
        _kernels._stream_item_threshold(-3)


def test_a_transposes_source_does_not_count_towards_fills_beyond_the_cache():
    """A transposing copy counts the source it reads against the copies' threshold, but the
    fills beyond the cache are measured at an output of STREAM_FILL_BEYOND: a transpose of
    a smaller output, whose source takes it past that size, does not measure them."""
    out = _fresh_process(
        "import numpy as np, lazybcast\n"
        "from lazybcast import _kernels\n"
        "n = int((_kernels.STREAM_FILL_BEYOND * 3 // 4 // 4) ** 0.5)\n"
        "src = np.arange(n * n, dtype=np.float32).reshape(n, n).T\n"
        "ok = np.array_equal(lazybcast.broadcast_to(src, src.shape).materialize(), src)\n"
        "print(ok, 2 * src.nbytes >= _kernels.STREAM_FILL_BEYOND > src.nbytes,\n"
        "      _kernels._stream_calibrations(), _kernels._fill_beyond_measured())\n")
    assert out == ["True", "True", "1", "False"]


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")
def test_interrupted_fill_measurement_beyond_the_cache_measures_again():
    """Ctrl-C while the first output past STREAM_FILL_BEYOND measures fills (rows, then runs
    of one item: the delays land in either) raises KeyboardInterrupt and leaves what was
    not measured for the next such output. A signal may also land after the measurement, in
    the copy itself (how long each takes depends on the host): that run must report the
    measurement done, and at least one of the delays must land inside it."""
    outcomes = []
    for delay in (0.002, 0.01, 0.03, 0.07):
        out = _fresh_process(
            "import signal, numpy as np, lazybcast\n"
            "from lazybcast import _kernels\n"
            "_kernels.stream_threshold()\n"
            "if _kernels.STREAM_FILL_BYTES < _kernels.STREAM_FILL_HIGH:\n"
            "    print('nothing-to-measure')  # (fills stream from MID here)\n"
            "    raise SystemExit\n"
            "inside = []\n"
            "def handler(signum, frame):\n"
            "    if inside and inside.pop():\n"
            "        raise KeyboardInterrupt\n"
            "signal.signal(signal.SIGALRM, handler)\n"
            "src = np.arange(64, dtype=np.float32)\n"
            "v = lazybcast.broadcast_to(src, (_kernels.STREAM_FILL_BEYOND // 256 + 1, 64))\n"
            "inside.append(True)\n"
            f"signal.setitimer(signal.ITIMER_REAL, {delay})\n"
            "try:\n"
            "    v.materialize()\n"
            "    print('finished')\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted', _kernels._fill_beyond_measured())\n"
            "signal.setitimer(signal.ITIMER_REAL, 0)  # (a late signal would end the process)\n"
            "inside.clear()\n"
            "ok = np.array_equal(v.materialize(), np.broadcast_to(src, v.shape))\n"
            "print(_kernels._fill_beyond_measured(), ok)\n")
        if out[0] == "nothing-to-measure":
            pytest.skip("fills stream from MID here")  # pragma: no cover
        if out[0] == "finished":
            continue  # (the signal came after the copy)
        assert out[0] == "interrupted" and out[1] in ("False", "True") and \
            out[2:] == ["True", "True"], (delay, out)
        outcomes.append(out[1])
    assert "False" in outcomes, f"no delay landed inside the measurement: {outcomes}"


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")
def test_interrupted_item_measurement_measures_again():
    """Ctrl-C after the fills beyond the cache are measured, while runs of one item are
    (_calibrate_item_beyond), leaves that measurement for the next such output (an earlier
    version marked the fills measured and never measured the runs again)."""
    out = _fresh_process(
        "import signal, numpy as np, lazybcast\n"
        "from lazybcast import _kernels\n"
        "_kernels.stream_threshold()\n"
        "if _kernels.STREAM_FILL_BYTES < _kernels.STREAM_FILL_HIGH:\n"
        "    print('low-from-the-start')  # (the handler would fire in the copy itself)\n"
        "    raise SystemExit\n"
        "armed = []\n"
        "def handler(signum, frame):  # (once the fills' threshold came down: the runs')\n"
        "    if armed and _kernels.STREAM_FILL_BYTES < _kernels.STREAM_FILL_HIGH:\n"
        "        armed.clear()\n"
        "        raise KeyboardInterrupt\n"
        "signal.signal(signal.SIGALRM, handler)\n"
        "src = np.arange(64, dtype=np.float32)\n"
        "v = lazybcast.broadcast_to(src, (_kernels.STREAM_FILL_BEYOND // 256 + 1, 64))\n"
        "armed.append(True)\n"
        "signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)\n"
        "try:\n"
        "    v.materialize()\n"
        "    print('finished')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', _kernels._fill_beyond_measured())\n"
        "signal.setitimer(signal.ITIMER_REAL, 0)\n"
        "armed.clear()\n"
        "ok = np.array_equal(v.materialize(), np.broadcast_to(src, v.shape))\n"
        "fill = _kernels.STREAM_FILL_BYTES\n"
        "print(_kernels._fill_beyond_measured(), ok, _kernels._item_measurements(),\n"
        "      _kernels._stream_item_threshold() in (fill, _kernels.STREAM_ITEM_BEYOND))\n")
    if out[0] == "finished" or out[0] == "low-from-the-start":
        pytest.skip("fills beyond the cache did not come down here, or runs of one item are "
                    "not measured (no ERMS), or the first calibration already chose a "
                    "lower threshold for fills (a loaded machine)")  # pragma: no cover
    assert out == ["interrupted", "False", "True", "True", "1", "True"]


def test_transpose_stage_hook_rejects_negative_sizes():
    with pytest.raises(ValueError, match="nbytes must be >= 0, got -1"):
        _kernels._transpose_stage(-1)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64, np.complex128])
def test_large_reversed_run_with_streaming_stores(dtype):
    """A reversed run of a large output goes through a buffer and non-temporal stores."""
    n = _kernels.stream_threshold() // np.dtype(dtype).itemsize + 4099  # not a multiple of the buffer
    source = np.arange(n).astype(dtype)[::-1]
    out = lazybcast.broadcast_to(source, (n,)).materialize(threads=1)
    _assert_same_bytes(out, _expected(source, (n,)))


def test_simd_features_can_be_limited_and_restored():
    detected = _kernels.simd_features()
    assert set(detected) <= {"SSE2", "SSSE3", "AVX2", "ERMS"}
    compiled = tuple(f for f in detected if f == "SSE2")
    try:
        assert _kernels._limit_simd(()) == compiled
        assert _kernels._limit_simd(["AVX2"]) == tuple(f for f in detected if f in ("SSE2", "AVX2"))
        assert _kernels._limit_simd(["ERMS"]) == tuple(f for f in detected if f in ("SSE2", "ERMS"))
        with pytest.raises(ValueError, match="AVX512"):
            _kernels._limit_simd(["AVX512"])
    finally:
        assert _kernels._limit_simd(None) == detected


@pytest.mark.parametrize("dtype", ITEM_DTYPES)
def test_repeated_item_rows_stay_inside_their_rows(dtype, simd):
    """(N, 1) -> (N, k) rows are written with overlapping word or vector stores, or (packed
    rows) with byte shuffles of 16-byte groups of items or (4- and 8-byte items, AVX2) word
    permutes of 32-byte groups: every k from 1 to 70, with a row count that leaves a partial
    group, must fill its rows and touch nothing around them."""
    for rows in (37, 1037):
        source = _data((rows, 1), dtype)
        for k in range(1, 71):
            want = _expected(source, (rows, k))
            # rows apart: a strided output with a guard column on each side
            guarded = _data((rows, k + 2), dtype)[::-1]
            before = guarded.copy()
            out = guarded[:, 1:k + 1]
            lazybcast.broadcast_to(source, (rows, k)).materialize(out=out)
            _assert_same_bytes(out, want)
            _assert_same_bytes(guarded[:, [0, k + 1]], before[:, [0, k + 1]])
            # packed rows: a C-contiguous output with a guard item on each side
            flat = _data((rows * k + 2,), dtype)[::-1].copy()
            before = flat.copy()
            out = flat[1:-1].reshape(rows, k)
            lazybcast.broadcast_to(source, (rows, k)).materialize(out=out)
            _assert_same_bytes(out, want)
            _assert_same_bytes(flat[[0, -1]], before[[0, -1]])


def _check_packed_columns(dtype, ks, rows_for, offsets):
    """(N, 1) -> (N, k) into packed outputs ``offset`` bytes past a line of a guarded buffer
    (_lined), for each k in ``ks``, N in ``rows_for(k)`` and each offset, on one and two
    threads: NumPy's values, and the bytes around the output untouched."""
    size = dtype.itemsize
    for k in ks:
        for rows in rows_for(k):
            source = _data((rows, 1), dtype)
            want = _expected(source, (rows, k)).tobytes()
            for offset in offsets:
                raw, lined = _lined(rows * k * size, offset)
                out = np.ndarray((rows, k), dtype, lined)  # (maybe off an item's alignment)
                for threads in (1, 2):
                    lazybcast.broadcast_to(source, (rows, k)).materialize(out=out,
                                                                          threads=threads)
                    case = (k, rows, offset, threads)
                    assert out.tobytes() == want, case
                    start = lined.ctypes.data - raw.ctypes.data
                    assert (raw[:start] == 0xA5).all(), case
                    assert (raw[start + rows * k * size:] == 0xA5).all(), case
                    lined[...] = 0xA5


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_packed_rows_of_whole_vectors_at_every_line_offset(dtype, simd):
    """Packed (N, 1) -> (N, k) rows of 64, 96 or 128 bytes of a 4-, 8- or 16-byte item are
    one broadcast and aligned 32-byte stores per row when the output starts 0 or 16 bytes
    into a 32-byte unit (16 bytes in, a store spans two rows); other offsets and row lengths
    take the permutes or per-row stores. Every row length from 1 to 40 items, row counts
    down to the fewest the kernel takes, offsets 0, 8, 16, 48 and the item size, one and two
    threads."""
    dtype = np.dtype(dtype)
    size = dtype.itemsize
    _check_packed_columns(dtype, range(1, 41),
                          lambda k: sorted({-(-4096 // (k * size)), 33, 1037}),
                          sorted({0, 8, 16, 48, size}))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_word_permutes_from_every_word_offset(dtype, simd):
    """Packed (N, 1) -> (N, k) rows of 4- and 8-byte items (k up to 32) are word permutes
    with 32-byte aligned stores (AVX2): the words before the output's first 32-byte boundary
    and after its last whole group are copied one by one. Every word offset in a 32-byte
    unit (8-byte items 4 bytes off their alignment too), every k from 1 to 33 (k = 1 is a
    plain copy), row counts from the fewest that reach the kernel (4096 bytes of output,
    and at least one group of 32 source bytes plus the words the last store loads) to a
    partial group, and outputs of three blocks or more (192 kB), which two threads share
    from both ends. (A store that would need more than 8 source words makes the kernel
    decline: only an 8-byte item at k = 1, which never reaches it.)"""
    dtype = np.dtype(dtype)
    size = dtype.itemsize
    fewest = 8 // (size // 4) + 8
    _check_packed_columns(dtype, range(1, 34),
                          lambda k: sorted({max(-(-4096 // (k * size)), fewest), 1037,
                                            -(-(3 << 16) // (k * size)) + 37}),
                          range(0, 32, 4))


def test_streamed_row_copies_of_every_short_length():
    """Rows copied with non-temporal stores (forced here: the copies' streaming threshold
    at 0) that are shorter than 256 bytes, or end in fewer than 64 bytes past the streamed
    part, are 16-byte loads and stores, the last overlapping the one before
    (lzb_copy_short): every row length from 1 to 330 bytes, rows 8 bytes apart in the
    output's offset, gaps between rows untouched."""
    copy, _ = _kernels._stream_thresholds()
    _kernels._stream_thresholds(copy=0)
    try:
        for length in range(1, 331):
            rows = 5
            source = _data((rows, length), np.uint8)
            for offset in (0, 8, 13):
                pitch = length + 24
                raw, lined = _lined(rows * pitch, offset)
                out = np.lib.stride_tricks.as_strided(lined, (rows, length), (pitch, 1))
                lazybcast.broadcast_to(source, (rows, length)).materialize(out=out)
                want = np.full(rows * pitch, 0xA5, np.uint8).reshape(rows, pitch)
                want[:, :length] = source
                assert lined.tobytes() == want.tobytes(), (length, offset)
                assert (raw[:(-raw.ctypes.data) % 64 + offset] == 0xA5).all()
                assert (raw[(-raw.ctypes.data) % 64 + offset + rows * pitch:] == 0xA5).all()
    finally:
        _kernels._stream_thresholds(copy=copy)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16])
@pytest.mark.parametrize("level", [None, ("SSSE3",)])
def test_byte_shuffles_from_every_byte_offset(dtype, level):
    """Packed (N, 1) -> (N, k) rows of up to 24 items of 1 or 2 bytes are byte shuffles:
    up to 6 items a row with AVX2, of 16 source bytes loaded into both lanes,
    with 32-byte aligned stores (the bytes before the output's first 32-byte boundary and
    after its last whole group copied one by one); else, or with SSSE3 alone, 16-byte
    stores. Every byte offset in a
    32-byte unit, every k from 1 to 26 (past the shuffles' longest row), row counts from the
    fewest that reach the kernels (4096 bytes of output) to a partial group, and outputs
    two threads share from both ends. (An AVX2 store whose bytes would need more than 16
    source bytes makes the kernel decline, and the SSSE3 shuffles write the rows: k = 1,
    and k = 2 from offsets that are odd (1-byte items) or not a multiple of 4 (2-byte
    items).)"""
    dtype = np.dtype(dtype)
    size = dtype.itemsize
    _kernels._limit_simd(level)
    try:
        _check_packed_columns(dtype, range(1, 27),
                              lambda k: sorted({-(-4096 // (k * size)), 1037,
                                                -(-(3 << 16) // (k * size)) + 37}),
                              range(32))
    finally:
        _kernels._limit_simd(None)


@pytest.mark.parametrize("dtype", [np.int16, np.float32, np.float64])
@pytest.mark.parametrize("level", [None, ("SSSE3", "AVX2"), ()])
def test_long_item_rows_stay_inside_their_rows(dtype, level):
    """Rows of one 2-, 4- or 8-byte item from 2 kB are `rep stos` fills where the CPU has
    ERMS, AVX2 stores without it, SSE2 stores without either (each level run here): lengths
    around that threshold, rows apart (a guard column on each side) and at every item offset
    of a packed output (guard items around it), must give NumPy's bytes and leave every guard
    as it was."""
    _kernels._limit_simd(level)
    try:
        _check_long_item_rows(dtype)
    finally:
        _kernels._limit_simd(None)


def _check_long_item_rows(dtype):
    size = np.dtype(dtype).itemsize
    for k in sorted({2048 // size - 1, 2048 // size, 2048 // size + 1, 4096 // size + 3}):
        source = _data((5, 1), dtype)
        want = _expected(source, (5, k))
        guarded = _data((5, k + 2), dtype)[::-1]
        before = guarded.copy()
        out = guarded[:, 1:k + 1]
        lazybcast.broadcast_to(source, (5, k)).materialize(out=out)
        _assert_same_bytes(out, want)
        _assert_same_bytes(guarded[:, [0, k + 1]], before[:, [0, k + 1]])
        for offset in range(1, 9):  # one long run: a scalar filling a whole packed output
            flat = _data((k + offset + 3,), dtype)
            before = flat.copy()
            out = flat[offset:offset + k]
            lazybcast.broadcast_to(source[2, 0], (k,)).materialize(out=out)
            _assert_same_bytes(out, np.full(k, source[2, 0], dtype))
            _assert_same_bytes(flat[:offset], before[:offset])
            _assert_same_bytes(flat[offset + k:], before[offset + k:])


@pytest.mark.parametrize("dtype", ITEM_DTYPES)
def test_reversed_runs_of_every_length(dtype, simd):
    """Reversed runs go 32 (AVX2, runs of 256 bytes or more) or 16 bytes at a time through a
    register, the tail item by item: every length up to 80 items."""
    base = _data((3, 80), dtype)
    for n in range(1, 81):
        for source in (base[0, n - 1::-1], base[:, n - 1::-1], base[::-1, n - 1::-1]):
            shape = (2,) + source.shape
            _assert_same_bytes(lazybcast.broadcast_to(source, shape).materialize(),
                               _expected(source, shape))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64])
def test_long_reversed_runs_at_every_output_offset(dtype, simd):
    """Runs of 256 bytes and more go 32 bytes at a time (AVX2), four registers per step, after
    a head that aligns the stores to 32 bytes when the items reach the boundary exactly: at
    every byte offset of the output (items aligned or not), lengths around the steps must
    give NumPy's bytes and leave the guard bytes around the output untouched."""
    size = np.dtype(dtype).itemsize
    source_all = _data((700 // size,), dtype)
    for n in sorted({256 // size - 1, 256 // size, 256 // size + 1, 384 // size + 3,
                     512 // size - 1, 640 // size + 1}):
        source = source_all[n - 1::-1]
        for offset in range(33):
            raw = _data((n * size + 80,), np.uint8)
            before = raw.copy()
            out = raw[16 + offset:16 + offset + n * size].view(dtype)
            lazybcast.broadcast_to(source, (n,)).materialize(out=out, threads=1)
            _assert_same_bytes(out, source[::1].copy())
            _assert_same_bytes(raw[:16 + offset], before[:16 + offset])
            _assert_same_bytes(raw[16 + offset + n * size:], before[16 + offset + n * size:])


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, "V3"])
@pytest.mark.parametrize("direction", ["CHW->HWC", "HWC->CHW"])
def test_channel_transposes(dtype, direction, simd):
    """Images between planar and interleaved layouts (1 to 5 channels, pixel counts that
    leave partial vector groups): interleaving and deinterleaving kernels for 2 to 4
    channels of 1-, 2- and 4-byte items, strided loops otherwise; guard items around a
    packed output stay untouched."""
    for c in range(1, 6):
        for h, w in ((1, 1), (3, 7), (5, 33), (17, 19)):
            if direction == "CHW->HWC":
                source = _data((c, h, w), dtype).transpose(1, 2, 0)
            else:
                source = _data((h, w, c), dtype).transpose(2, 0, 1)
            want = _expected(source, source.shape)
            flat = _data((source.size + 2,), dtype)[::-1].copy()
            before = flat.copy()
            out = flat[1:-1].reshape(source.shape)
            lazybcast.broadcast_to(source, source.shape).materialize(out=out)
            _assert_same_bytes(out, want)
            _assert_same_bytes(flat[[0, -1]], before[[0, -1]])
            # a broadcast batch axis in front, as a data loader's stacked copies
            target = (2,) + source.shape
            _assert_same_bytes(lazybcast.broadcast_to(source, target).materialize(),
                               _expected(source, target))


@pytest.fixture(params=["ordinary", "streamed"])
def copies_stream(request):
    """Copies from a source with ordinary stores, or non-temporal ones (as past the copies'
    streaming threshold, set to 0 here)."""
    copy, _ = _kernels._stream_thresholds()
    _kernels._stream_thresholds(copy=copy if request.param == "ordinary" else 0)
    yield request.param
    assert _kernels._stream_thresholds(copy=copy)[0] == copy


@pytest.mark.parametrize("direction", ["CHW->HWC", "HWC->CHW"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("offset", [0, 1, 16])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.slow
def test_large_channel_transposes_in_blocks(direction, threads, offset, dtype, copies_stream):
    """Past CHUNK_BYTES the work is cut into blocks (shared among threads) along the pixels,
    every block with all the channels of its pixels (a multiple of 64 pixels, so that
    non-temporal stores stay aligned: speed only, not seen here): an
    output at 0, 1 and 16 bytes into a line, with ordinary and non-temporal stores (planes
    of a multiple of 16 bytes, as deinterleaving needs for them); NumPy's bytes, nothing
    written around the output."""
    h, w = 1024, (_kernels.CHUNK_BYTES // (3 * 1024) // 16 + 1) * 16
    if direction == "CHW->HWC":
        source = _data((3, h, w), dtype).transpose(1, 2, 0)
    else:
        source = _data((h, w, 3), dtype).transpose(2, 0, 1)
    assert source.nbytes > _kernels.CHUNK_BYTES
    raw, out, expected = _packed_out(source, offset)
    lazybcast.broadcast_to(source, source.shape).materialize(out=out, threads=threads)
    assert raw.tobytes() == expected.tobytes()


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_cropped_images_take_the_channel_kernels(dtype, simd):
    """A crop keeps the rows of an image apart, so the pixel axes do not merge: the channel
    axis is moved last past them, and each row of pixels is one call of the kernel."""
    hwc = _data((40, 50, 3), dtype)
    for source in (hwc[5:37, 7:40].transpose(2, 0, 1), hwc[::-2, 3:41:3].transpose(2, 0, 1),
                   _data((3, 40, 50), dtype)[:, 5:37, 7:40].transpose(1, 2, 0)):
        for target in (source.shape, (4,) + source.shape):
            _assert_same_bytes(lazybcast.broadcast_to(source, target).materialize(),
                               _expected(source, target))
    source = hwc[5:37, 7:40].transpose(2, 0, 1)
    shape, sstrides, dstrides, _ = _kernels._plan_py(
        source.shape, source.strides, np.empty(source.shape, dtype).strides,
        source.dtype.itemsize)
    assert shape[-2:] == (33, 3) and sstrides[-1] == source.dtype.itemsize


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("offset", [0, 1], ids=["aligned", "misaligned out"])
def test_fill_with_one_item_past_the_streaming_threshold(dtype, offset, fills_stream_early):
    """A scalar broadcast to a large output is written with vector broadcast stores
    (non-temporal past the threshold), never by copying the output onto itself; an out whose
    address is not a multiple of the item size takes the replication path."""
    dtype = np.dtype(dtype)
    n = _kernels.stream_threshold("fill") // dtype.itemsize + 7
    value = _data((1,), dtype)
    raw = np.zeros(n * dtype.itemsize + 16, dtype=np.uint8)
    out = np.ndarray((n,), dtype, buffer=raw, offset=offset)
    for threads in (1, 2):
        out[...] = 0
        lazybcast.broadcast_to(value, (n,)).materialize(out=out, threads=threads)
        _assert_same_bytes(out, np.broadcast_to(value, (n,)))
        assert not raw[n * dtype.itemsize + offset:].any()  # nothing written past the end


@pytest.mark.parametrize("block", [3, 5, 12, 24, 100, 4097, 65535])
@pytest.mark.parametrize("offset", [0, 1, 16, 61])
@pytest.mark.slow
def test_replicated_patterns_past_the_streaming_threshold(block, offset, fills_stream_early):
    """A short block (an rgb pixel, a row of a few items) repeated over a large output is
    replicated with non-temporal stores in whole cache lines, the chunks read at the
    pattern's phase: any block size, any alignment of ``out``, with one and two threads (the
    job's blocks start at arbitrary bytes); nothing is written outside ``out``."""
    n = _kernels.stream_threshold("fill") // block + 5
    source = _data((1, block), np.uint8)
    raw = np.zeros(n * block + 128, dtype=np.uint8)
    out = np.ndarray((n, block), np.uint8, buffer=raw, offset=offset)
    want = _expected(source, (n, block)).tobytes()
    for threads in (1, 2):
        raw[...] = 0
        lazybcast.broadcast_to(source, (n, block)).materialize(out=out, threads=threads)
        assert out.tobytes() == want
        assert not raw[:offset].any() and not raw[offset + n * block:].any()


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("pad", [0, 1], ids=["aligned rows", "rows off by one byte"])
def test_rows_of_one_item_past_the_streaming_threshold(dtype, pad, fills_stream_early):
    """Rows each filled with one item (channel planes), streamed past the threshold; rows
    whose addresses are not multiples of the item size fall back to ordinary stores."""
    dtype = np.dtype(dtype)
    cols = 4099
    rows = _kernels.stream_threshold("fill") // (cols * dtype.itemsize) + 3
    rowbytes = cols * dtype.itemsize + pad
    raw = np.zeros(rows * rowbytes + 16, dtype=np.uint8)
    out = np.ndarray((rows, cols), dtype, buffer=raw, strides=(rowbytes, dtype.itemsize))
    source = _data((rows, 1), dtype)
    lazybcast.broadcast_to(source, (rows, cols)).materialize(out=out, threads=2)
    _assert_same_bytes(out, np.broadcast_to(source, (rows, cols)))


@pytest.mark.parametrize("dtype, run", [(np.uint8, 3), (np.uint8, 7), (np.uint8, 15),
                                        (np.int16, 3), (np.int16, 5), (np.float32, 3)])
@pytest.mark.parametrize("width", [1, 2, 5, 40, 2047 // 3, 700])
@pytest.mark.parametrize("threads", [1, 2])
def test_pixels_repeated_along_rows(dtype, run, width, threads, simd):
    """(H, 1, C) -> (H, W, C), a pixel of C channels repeated along each row: under 16 bytes
    a pixel and rows under ODD_ROW_MAX_BYTES (2048), the pixel is one item of the row kernels
    (an odd size: byte shuffles); longer rows keep their items. NumPy's values, written into
    a column slice of a wider output (the bytes around it unchanged) and into a packed one."""
    dt = np.dtype(dtype)
    pixel = run * dt.itemsize
    rows = 67
    source = _data((rows, 1, run), dt)
    target = (rows, width, run)
    plan = _kernels._plan_py(target, (run * dt.itemsize, 0, dt.itemsize),
                             np.empty(target, dt).strides, dt.itemsize, details=True)
    if 1 < width and width * pixel < 2048 and pixel < 16:
        assert plan[0] == (rows, width) and plan[4] == pixel, plan
    elif width * pixel >= 2048:
        assert plan[4] == dt.itemsize, plan
    view = lazybcast.broadcast_to(source, target)
    _assert_same_bytes(view.materialize(threads=threads), _expected(source, target))
    wide = np.full((rows, width + 2, run), 7, dt)
    view.materialize(out=wide[:, 1:-1], threads=threads)
    assert (wide[:, [0, -1]] == 7).all()
    _assert_same_bytes(np.ascontiguousarray(wide[:, 1:-1]), _expected(source, target))


@pytest.mark.parametrize("size", [3, 5, 6, 7, 9, 12, 13, 15, 24])
@pytest.mark.parametrize("copies", [1, 2, 3, 4, 5, 8, 17])
@pytest.mark.parametrize("rows", [1, 9, 37, 203])
@pytest.mark.parametrize("packed", [False, True], ids=["column slice", "packed"])
def test_runs_of_one_odd_sized_item_stay_in_their_rows(size, copies, rows, packed, simd):
    """(N, 1) -> (N, k) of items of odd sizes: the copies of a row are written with stores
    wider than an item, overlapping the next copy, and packed rows as byte shuffles whose
    last store runs into the next row; each row's last copy is exact, so the bytes between
    rows (a column slice of a wider output) and past the output stay as they were. (The
    source ends where its last item does: an over-read shows under ASan, in CI.)"""
    dtype = np.dtype(f"V{size}")
    source = np.frombuffer(_data((rows * size,), np.uint8).tobytes(), dtype).reshape(rows, 1)
    wide, first = (copies, 0) if packed else (copies + 2, 1)
    guard = np.full(rows * wide * size + 64, 0xA5, np.uint8)
    out = guard[:rows * wide * size].view(dtype).reshape(rows, wide)[:, first:first + copies]
    lazybcast.broadcast_to(source, (rows, copies)).materialize(out=out)
    expected = np.full_like(guard, 0xA5)
    expected[:rows * wide * size].view(dtype).reshape(rows, wide)[:, first:first + copies] = (
        source)
    assert guard.tobytes() == expected.tobytes()
