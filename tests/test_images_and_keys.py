"""Images and single-int keys against NumPy: the channel axis moved last from any position
(cropped, stepped, flipped, permuted and broadcast sources, outputs cut into blocks, 1 or 2
threads, with and without the run-time CPU extensions), short repeated rows of every length,
and ``view[i]`` (its own fast path) for every dtype kind and shape."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazybcast
from lazybcast import _kernels

DTYPES = [np.uint8, np.int16, np.float32, np.float64,
          np.dtype([("a", "u1"), ("b", "<i2")]),            # 3 bytes
          np.dtype([("a", "u1"), ("b", "u1")]),             # 2 bytes (channel kernels)
          np.dtype([("a", "<i2"), ("b", "u1"), ("c", "u1")])]  # 4 bytes
SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _pattern(shape, dtype, seed=0):
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = ((np.arange(n, dtype=np.int64) * 2654435761 + seed * 97) % 251).astype(np.uint8)
    return raw.view(dtype).reshape(shape)


def _check(source, target, out_order=None, out_flips=None, threads=1):
    want = np.broadcast_to(source, target)
    nd = len(target)
    order = list(range(nd)) if out_order is None else list(out_order)
    stored = tuple(target[k] for k in order)
    out = np.empty(stored, source.dtype).transpose(np.argsort(order))
    if out_flips:
        out = out[tuple(slice(None, None, -1) if f else slice(None) for f in out_flips)]
    out[...] = np.zeros((), source.dtype)
    got = lazybcast.broadcast_to(source, target).materialize(out=out, threads=threads)
    assert got is out
    assert got.shape == want.shape
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


@st.composite
def images(draw):
    """An HWC (or CHW) image, cropped/strided/flipped, permuted; some axes set to 1 for
    broadcasting; leading batch axes; an output layout."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    c = draw(st.integers(2, 5))
    h = draw(st.integers(1, 12))
    w = draw(st.integers(1, 40))
    extra = draw(st.integers(0, 1))  # an extra axis (e.g. a depth / time axis)
    shape = [h, w, c] if not extra else [draw(st.integers(1, 4)), h, w, c]
    if draw(st.booleans()):  # planar storage instead
        stored = _pattern([shape[-1]] + shape[:-1], dtype, draw(st.integers(0, 5)))
        img = np.moveaxis(stored, 0, -1)
    else:
        img = _pattern(shape, dtype, draw(st.integers(0, 5)))
    # crop / step / flip every axis except maybe the channel one
    key = []
    for k, n in enumerate(img.shape):
        if k == img.ndim - 1 and draw(st.booleans()):
            key.append(slice(None))
            continue
        start = draw(st.integers(0, max(0, n - 1)))
        stop = draw(st.integers(start + 1, n))
        step = draw(st.sampled_from([1, 1, 1, 2, -1]))
        key.append(slice(start, stop) if step == 1 else
                   slice(stop - 1, start - 1 if start else None, -1) if step == -1 else
                   slice(start, stop, step))
    img = img[tuple(key)]
    perm = draw(st.permutations(range(img.ndim)))
    src = img.transpose(perm)
    # broadcast some axes (size 1 in the source)
    ones = draw(st.lists(st.booleans(), min_size=src.ndim, max_size=src.ndim))
    target = list(src.shape)
    for k, b in enumerate(ones):
        if b:
            target[k] = draw(st.integers(1, 5)) if src.shape[k] > 1 else draw(st.integers(1, 5))
            src = src[(slice(None),) * k + (slice(0, 1),)]
    lead = draw(st.lists(st.integers(1, 3), max_size=2))
    target = tuple(lead) + tuple(target)
    nd = len(target)
    out_order = draw(st.sampled_from([list(range(nd)), list(range(nd))[::-1]]) |
                     st.permutations(range(nd)))
    out_flips = draw(st.lists(st.booleans(), min_size=nd, max_size=nd))
    threads = draw(st.sampled_from([1, 2]))
    return src, target, out_order, out_flips, threads


def _check_drawn(args, sse2):
    """_check a drawn (source, target, out_order, out_flips, threads), with SSE2 alone or
    with the extensions the CPU has."""
    if sse2:
        _kernels._limit_simd(())
    try:
        _check(*args)
    finally:
        _kernels._limit_simd(None)


@SETTINGS
@given(images(), st.booleans())
def test_images_match_numpy(args, sse2):
    _check_drawn(args, sse2)


# ---- outputs larger than CHUNK_BYTES (blocks cut): deterministic cases --------------------

BIG = [
    # (hwc shape, crop key, permutation of the cropped hwc, broadcast axes, lead)
    ((700, 700, 3), (slice(5, 690), slice(7, 680)), (2, 0, 1), (), (4,)),
    ((700, 700, 3), (slice(5, 690), slice(7, 680)), (2, 0, 1), (1,), (3,)),  # H broadcast
    ((2, 1_500_000, 3), (slice(None), slice(1, -1)), (2, 0, 1), (), ()),  # pixel axis cut
    ((1, 1_500_010, 4), (slice(None), slice(3, -3)), (2, 0, 1), (1,), ()),
    ((300, 900, 2), (slice(None, None, -1), slice(1, 899)), (2, 0, 1), (), (9,)),
    ((60, 60, 3), (slice(1, 59), slice(2, 58)), (2, 0, 1), (1,), (700,)),  # batch broadcast
    ((8, 300, 400, 3), (slice(None), slice(3, 290), slice(4, 390)), (3, 0, 1, 2), (1,), ()),
    ((8, 300, 400, 3), (slice(None), slice(3, 290), slice(4, 390)), (0, 3, 1, 2), (2,), ()),
    ((300, 400, 4), (slice(3, 290), slice(4, 390)), (2, 0, 1), (0, 1), (30,)),
]


@pytest.mark.parametrize("case", range(len(BIG)))
@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.dtype([("a", "u1"), ("b", "u1")])])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.slow
def test_big_channel_moves(case, dtype, threads, simd):
    shape, key, perm, bcast, lead = BIG[case]
    dtype = np.dtype(dtype)
    img = _pattern(shape, dtype)[key].transpose(perm)
    target = list(img.shape)
    for k in bcast:
        img = img[(slice(None),) * k + (slice(0, 1),)]
    target = tuple(lead) + tuple(target)
    if np.prod(target) * dtype.itemsize > 80 << 20:
        pytest.skip("too large for this machine")
    _check(img, target, threads=threads)


# ---- view[i] fast path -------------------------------------------------------------------

class I(int):
    pass


KEY_DTYPES = [np.uint8, np.int16, np.float64, np.complex64, "M8[s]", "m8[ms]", "U3", "S2",
              object, np.dtype([("a", "u1"), ("b", "<f4")]), "V3", bool]


def _same_result(got, want):
    if isinstance(want, np.ndarray):
        m = got.materialize() if type(got) is lazybcast.BroadcastView else got
        assert type(m) is np.ndarray
        assert m.shape == want.shape and m.dtype == want.dtype
        assert np.ascontiguousarray(m).tobytes() == np.ascontiguousarray(want).tobytes() or \
            want.dtype == object and m.tolist() == want.tolist()
    else:
        assert type(got) is type(want), (type(got), type(want))
        if isinstance(want, np.void):
            assert got.tobytes() == want.tobytes()
        elif isinstance(want, float) and want != want or (
                isinstance(want, np.generic) and want.dtype.kind in "fc" and np.isnan(want)):
            assert np.isnan(got)
        else:
            assert got == want or got is want


def _values(shape, dtype):
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype == object:
        vals = np.empty(n, object)
        vals[:] = [(i, str(i)) if i % 2 else [i] for i in range(n)]
        return vals.reshape(shape)
    return _pattern(shape, dtype)


@pytest.mark.parametrize("dtype", KEY_DTYPES)
@pytest.mark.parametrize("src_shape, shape", [
    ((), ()), ((), (3,)), ((1,), (1,)), ((4,), (4,)), ((1,), (3,)), ((1, 1), (3, 2)),
    ((4, 1, 2), (4, 3, 2)), ((1, 3), (5, 3)), ((2, 1), (2, 0)), ((0,), (0,)),
    ((1, 0), (3, 0)), ((3,), (2, 3)), ((1, 2, 1), (4, 2, 3))])
def test_int_keys_match_numpy(dtype, src_shape, shape):
    data = _values(src_shape, dtype)
    v = lazybcast.broadcast_to(data, shape)
    want = np.broadcast_to(data, shape)
    n = shape[0] if shape else 0
    keys = list(range(-n - 2, n + 2)) + [2**63 - 1, -2**63, 2**63, -2**63 - 1, 2**70, -2**70]
    for i in keys:
        for k in (i, np.int64(i) if -2**63 <= i < 2**63 else i, I(i),
                  np.uint8(i) if 0 <= i < 256 else i):
            try:
                expected = want[k]
            except (IndexError, OverflowError):
                # (NumPy raises OverflowError for some ints >= 2**63, IndexError for others)
                with pytest.raises((IndexError, OverflowError)):
                    v[k]
                continue
            _same_result(v[k], expected)
    for k in (True, False, np.True_):
        try:
            expected = want[k]
        except Exception as e:
            with pytest.raises(type(e)):
                v[k]
            continue
        _same_result(v[k], expected)


@pytest.mark.parametrize("key", [0, np.int64(0), (0,), (0, 1)])
@pytest.mark.parametrize("first", [None, np.s_[1:], np.s_[::-1, None]])
def test_structured_elements_are_read_only(key, first):
    """A structured element (np.void) refers to the source's memory: as from NumPy's
    read-only broadcast_to, writing through it raises instead of changing the user's array,
    also from a view that a basic key made (whose source is not made yet)."""
    data = np.zeros((3, 2), dtype=[("a", "u1"), ("b", "<f4")])
    if not isinstance(key, tuple) or len(key) == 1:
        data = data[:, 0]
    want = np.broadcast_to(data, data.shape)
    v = lazybcast.broadcast_to(data, data.shape)
    if first is not None:
        want, v = want[first], v[first]
        if want.ndim > data.ndim:
            key = (0,) + (key if isinstance(key, tuple) else (key,))
    with pytest.raises(ValueError, match="read-only"):
        want[key]["a"] = 5
    with pytest.raises(ValueError, match="read-only"):
        v[key]["a"] = 5
    assert (data["a"] == 0).all()


@st.composite
def channel_images(draw):
    """Sources whose plan moves the channel axis last: HWC(-like) storage, channels packed
    (source stride = item size), the output's innermost axis the pixel (W) axis; the other
    axes cropped / stepped / flipped / broadcast / permuted, in source and output."""
    dtype = np.dtype(draw(st.sampled_from([np.uint8, np.int16, np.float32,
                                            np.dtype([("a", "u1"), ("b", "u1")]),
                                            np.dtype([("a", "<i2"), ("b", "u1"), ("c", "u1")])])))
    c = draw(st.integers(2, 4))
    n_other = draw(st.integers(1, 3))  # axes before W (H, depth, ...)
    other = [draw(st.integers(1, 7)) for _ in range(n_other)]
    w = draw(st.integers(2, 70))
    img = _pattern(other + [w, c], dtype, draw(st.integers(0, 9)))
    key = []
    for n in other:
        start = draw(st.integers(0, n - 1))
        stop = draw(st.integers(start + 1, n))
        step = draw(st.sampled_from([1, 1, 2, -1]))
        key.append(slice(start, stop, step) if step > 0 else
                   slice(stop - 1, start - 1 if start else None, -1))
    ws = draw(st.integers(0, w - 2))
    we = draw(st.integers(ws + 2, w))
    wflip = draw(st.booleans())
    key.append(slice(we - 1, ws - 1 if ws else None, -1) if wflip else slice(ws, we))
    key.append(slice(None))
    img = img[tuple(key)]
    nd = img.ndim
    perm = draw(st.permutations(range(nd)))
    src = img.transpose(perm)
    wpos = perm.index(nd - 2)
    target = list(src.shape)
    for k in range(nd):
        if k != wpos and perm[k] != nd - 1 and draw(st.booleans()):
            target[k] = draw(st.integers(1, 5))
            src = src[(slice(None),) * k + (slice(0, 1),)]
    lead = draw(st.lists(st.integers(1, 3), max_size=2))
    target = tuple(lead) + tuple(target)
    wpos += len(lead)
    nd = len(target)
    rest = draw(st.permutations([k for k in range(nd) if k != wpos]))
    order = list(rest) + [wpos]
    flips = draw(st.lists(st.booleans(), min_size=nd, max_size=nd))
    flips[wpos] = wflip  # keep the pixel axis read forwards
    threads = draw(st.sampled_from([1, 2]))
    return src, target, order, flips, threads


@SETTINGS
@given(channel_images(), st.booleans())
def test_channel_images_match_numpy(args, sse2):
    _check_drawn(args, sse2)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, "V16", "V3"])
def test_repeat_rows_every_length(dtype, simd):
    """(N, 1) -> (N, k): the np.repeat shuffle masks for every row length and a ragged N."""
    for n in (1, 15, 16, 17, 33, 64, 257):
        col = _pattern((n, 1), dtype, n)
        for k in range(1, 30):
            _check(col, (n, k))
            _check(col[::-1], (n, k))
            _check(col, (2, n, k), out_order=(1, 0, 2))
