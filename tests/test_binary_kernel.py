"""Arithmetic and comparisons of operands that broadcast against each other, in the kernels
(lazybcast._binary, _kernels_binary.pxi). NumPy's ufunc on the same operands is the reference
for values and dtypes; NumPy under ``np.errstate(all="raise")`` is the reference for which
floating-point errors a result raises; NumPy on the ``np.broadcast_to`` arrays for warnings,
errors and ``call=`` handlers of the views' operators."""

import ctypes
import ctypes.util
import platform
import signal
import sys
import threading
import time
import warnings

import numpy as np
import pytest
from _core_strategies import laid_out
from _duck_strategies import assert_same_array
from hypothesis import given, settings
from hypothesis import strategies as st

import lazybcast
import lazybcast._binary
from lazybcast import _kernels

OPS = [getattr(np, name) for name in _kernels.BINARY_OPS]
KERNEL_DTYPES = [np.dtype(c) for c in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8")]
SPECIALS = [0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 1e-300, 1e-40, 3e38, 1e308, 7.0]


@st.composite
def operands(draw, max_rank=4, sizes=(1, 2, 3, 5, 8, 17)):
    """``(a, b)`` of one rank whose axes are each 1 or the result's, with drawn strides
    (negative and zero included) and values (floats: infinities, NaN, -0.0, values that
    overflow or underflow when combined)."""
    dtype = draw(st.sampled_from(KERNEL_DTYPES))
    shape = draw(st.lists(st.sampled_from(sizes), min_size=0, max_size=max_rank))
    arrays = []
    for _ in range(2):
        own = tuple(n if draw(st.booleans()) else 1 for n in shape)
        if dtype.kind == "f" and draw(st.booleans()):  # special values, maybe reversed
            values = draw(st.lists(st.sampled_from(SPECIALS), min_size=1, max_size=64))
            with np.errstate(all="ignore"):
                a = np.resize(np.array(values, dtype=dtype), own)  # (repeated to the size)
            if a.ndim and draw(st.booleans()):
                a = a[::-1].copy()[::-1]
        else:  # random bytes (any NaN payload, subnormals), drawn strides
            a = draw(laid_out(own, dtype))
        arrays.append(a)
    return arrays[0], arrays[1]


def _raises_in_numpy(ufunc, a, b):
    try:
        with np.errstate(all="raise"):
            ufunc(a, b)
    except FloatingPointError:
        return True
    return False


@settings(max_examples=300, deadline=None)
@given(operands(), st.sampled_from(OPS), st.sampled_from([None, 1, 2]))
def test_kernel_matches_numpy_values_and_errors(case, ufunc, threads):
    a, b = case
    with np.errstate(all="ignore"):
        expected = ufunc(a, b)
    out = np.empty(expected.shape, expected.dtype)
    flags = _kernels.binary_into(OPS.index(ufunc), a, b, out, threads=threads)
    if flags == -1:  # no loop for these: integer division, or an inner axis not contiguous
        assert ufunc is np.true_divide and a.dtype.kind in "iu" or not (
            a.flags.c_contiguous and b.flags.c_contiguous)
        return
    assert np.array_equal(out, expected, equal_nan=True), (a, b, out, expected)
    assert bool(flags) == _raises_in_numpy(ufunc, a, b), (flags, a, b)


@settings(max_examples=150, deadline=None)
@given(operands(sizes=(1, 2, 3, 40)), st.sampled_from(OPS + [np.power, np.maximum]),
       st.sampled_from(["ignore", "warn", "raise"]))
def test_views_match_numpy_with_the_kernel_for_any_size(case, ufunc, mode):
    """Through the views' operators (results of every size reach the kernel): values,
    dtypes, and NumPy's warnings and errors."""
    a_src, b_src = case
    full = np.broadcast_shapes(a_src.shape, b_src.shape)
    a, b = lazybcast.broadcast_to(a_src, full), lazybcast.broadcast_to(b_src, full)
    got = _outcome(ufunc, a, b, mode)
    expected = _outcome(ufunc, np.asarray(a), np.asarray(b), mode)
    assert got[0] == expected[0] and got[2] == expected[2], (got, expected)
    if got[0] == "ok":
        assert_same_array(got[1], expected[1])


def _outcome(ufunc, a, b, mode):
    with np.errstate(all=mode), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = "ok", ufunc(a, b)
        except Exception as e:  # noqa: BLE001 - compared with NumPy's
            result = "error", (type(e), str(e))
    return result[0], result[1], [str(w.message) for w in caught]


@pytest.mark.parametrize(("ufunc", "x", "y", "dtype", "category"), [
    (np.add, 3e38, 3e38, "f4", "over"),
    (np.subtract, np.inf, np.inf, "f8", "invalid"),
    (np.true_divide, 1.0, 0.0, "f8", "divide"),
    (np.multiply, 1e-30, 1e-30, "f4", "under"),
])
@pytest.mark.parametrize("threads_hint", ["first rows", "last rows"])
def test_errstate_is_numpys_for_every_category(ufunc, x, y, dtype, category, threads_hint):
    """A 16 MB result (two threads by default), the special values in its first or last rows
    only (the caller's blocks, or a helper's): ignore, warn, raise and call as NumPy does."""
    m, n = 2048, 2048
    a_src = np.ones((m, 1), dtype)
    b_src = np.ones((1, n), dtype)
    rows = slice(0, 3) if threads_hint == "first rows" else slice(m - 3, m)
    a_src[rows] = x
    b_src[:] = y
    a, b = lazybcast.broadcast_to(a_src, (m, n)), lazybcast.broadcast_to(b_src, (m, n))
    a_ref, b_ref = np.asarray(a), np.asarray(b)
    for mode in ("ignore", "warn", "raise", "print"):
        got = _outcome(ufunc, a, b, mode)
        expected = _outcome(ufunc, a_ref, b_ref, mode)
        assert got[0] == expected[0] and got[2] == expected[2], (mode, got, expected)
        if got[0] == "ok":
            assert_same_array(got[1], expected[1])
    seen = {}
    for key, (p, q) in (("view", (a, b)), ("numpy", (a_ref, b_ref))):
        seen[key] = []
        with np.errstate(**{category: "call"}, call=lambda *args, k=key: seen[k].append(args)):
            ufunc(p, q)
    assert seen["view"] == seen["numpy"] and seen["view"]


def test_only_flags_that_errstate_acts_on_send_the_result_back_to_numpy(monkeypatch):
    """Underflow is ignored by default: the kernel's result stands (NumPy is not called)."""
    a = lazybcast.broadcast_to(np.full((512, 1), 1e-30, np.float32), (512, 512))
    b = lazybcast.broadcast_to(np.full((1, 512), 1e-30, np.float32), (512, 512))
    calls = []
    original = lazybcast._binary._numpy_call
    monkeypatch.setattr(lazybcast._binary, "_numpy_call",
                        lambda *args: calls.append(args[0]) or original(*args))
    assert_same_array(a * b, np.asarray(a) * np.asarray(b))
    assert calls == []
    with np.errstate(under="warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a * b
    assert calls == [np.multiply]
    assert [str(w.message) for w in caught] == ["underflow encountered in multiply"]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threads_share_blocks_of_rows_and_of_long_rows(threads):
    for a_shape, b_shape in (((700, 1), (1, 3000)), ((1, 1), (1, 5_000_000)),
                             ((3, 1, 1), (1, 500, 700))):
        a = np.arange(np.prod(a_shape), dtype=np.float64).reshape(a_shape)
        b = np.linspace(-1, 1, np.prod(b_shape)).reshape(b_shape)
        expected = a - b
        out = np.full(expected.shape, np.nan)
        assert _kernels.binary_into(1, a, b, out, threads=threads) == 0
        assert np.array_equal(out, expected)
        assert _kernels._last_threads() == threads


def test_entry_point_validates_before_writing():
    a, b = np.ones((4, 1)), np.ones((1, 5))
    out = np.zeros((4, 5))
    with pytest.raises(ValueError, match="op must be in 0..9, got 10"):
        _kernels.binary_into(10, a, b, out)
    with pytest.raises(ValueError, match="rank"):
        _kernels.binary_into(0, a[0], b, out)
    with pytest.raises(ValueError, match="do not broadcast"):
        _kernels.binary_into(0, np.ones((3, 1)), b, out)
    with pytest.raises(ValueError, match="do not broadcast"):
        _kernels.binary_into(0, np.ones((1, 1)), np.ones((1, 1)), out)
    with pytest.raises(TypeError, match="threads"):
        _kernels.binary_into(0, a, b, out, threads=1.5)
    with pytest.raises(TypeError):
        _kernels.binary_into(0, None, b, out)
    # No loop: -1 and nothing written.
    for x, y, o in (
        (a.astype("c16"), b.astype("c16"), out.astype("c16")),      # dtype
        (a.astype("f2"), b.astype("f2"), out.astype("f2")),
        (a.astype(">f8"), b.astype(">f8"), out.astype(">f8")),      # byte order
        (a, b.astype("f4"), out),                                   # mixed dtypes
        (a, b, out.astype("f4")),                                   # out's dtype
        (a, b, np.zeros((5, 4)).T),                                 # out not C-contiguous
        (a, np.ones((1, 10))[:, ::2], out),                         # inner axis strided
        (a.astype("i4"), b.astype("i4"), out.astype("i4")),         # integer true_divide
    ):
        before = o.copy()
        op = 3 if x.dtype.kind == "i" else 0
        assert _kernels.binary_into(op, x, y, o) == -1
        assert np.array_equal(o, before)
    compare_out = np.zeros((4, 5), np.int8)
    assert _kernels.binary_into(4, a, b, compare_out) == -1  # a comparison writes bool
    shared = np.zeros(20)
    assert _kernels.binary_into(0, shared[:4].reshape(4, 1), b,
                                shared.reshape(4, 5)) == -1  # out overlaps an operand
    read_only = np.zeros((4, 5))
    read_only.flags.writeable = False
    assert _kernels.binary_into(0, a, b, read_only) == -1
    unaligned = np.zeros(4 * 8 + 1, np.uint8)[1:].view(np.float64).reshape(4, 1)
    assert _kernels.binary_into(0, unaligned, b, out) == -1


def test_zero_size_and_one_element():
    a, b = np.ones((0, 1)), np.ones((1, 5))
    out = np.empty((0, 5))
    assert _kernels.binary_into(0, a, b, out) == 0
    out = np.zeros((1, 1))
    assert _kernels.binary_into(2, np.full((1, 1), 3.0), np.full((1, 1), 4.0), out) == 0
    assert out[0, 0] == 12.0


def test_integers_wrap_as_numpys(simd):
    for dtype in ("i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"):
        info = np.iinfo(dtype)
        a = np.array([info.min, info.max, -1 if info.min else 1, 0], dtype).reshape(4, 1)
        b = np.array([info.min, info.max, 2, -1 if info.min else 3], dtype).reshape(1, 4)
        for op, name in enumerate(_kernels.BINARY_OPS):
            if name == "true_divide":
                continue
            expected = getattr(np, name)(a, b)
            out = np.empty_like(expected)
            assert _kernels.binary_into(op, a, b, out) == 0
            assert np.array_equal(out, expected), (dtype, name)


def test_what_the_views_hand_to_the_kernel(monkeypatch):
    """Operands that broadcast against each other, at any size; operands of one shape from
    SAME_SHAPE_BYTES; NumPy's loop for the rest (keywords, other ufuncs, other dtypes)."""
    calls = []
    original = _kernels.binary_into
    monkeypatch.setattr(_kernels, "binary_into", lambda *args: calls.append(args[0]) or
                        original(*args))
    col, row = np.ones((256, 1), np.float32), np.ones((1, 256), np.float32)
    v, w = lazybcast.broadcast_to(col, (256, 256)), lazybcast.broadcast_to(row, (256, 256))
    v - w
    v < w
    v[:2, :2] - w[:2, :2]  # 16 bytes
    assert calls == [1, 4, 1]
    calls.clear()
    np.subtract(v, w, dtype=np.float64)
    np.arctan2(v, w)
    v.astype(np.float16) - w.astype(np.float16)
    v - w.astype(np.float64)  # mixed dtypes (NumPy's promotion)
    v - 1.0
    full = lazybcast.broadcast_to(np.ones((256, 256), np.float32), (256, 256))
    full + full  # one shape, below SAME_SHAPE_BYTES (at least 128 kB)
    assert calls == []
    monkeypatch.setattr(lazybcast._binary, "SAME_SHAPE_BYTES", 1024)
    full + full
    assert calls == [0]


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_between_blocks_and_leaves_no_helper_inside(threads):
    # The SIGINT is sent once the caller has written its first block (out[0, 0], the front),
    # and a handler turns it into KeyboardInterrupt only while binary_into runs: on a loaded
    # machine the sender may get no CPU until the copy is over, and a KeyboardInterrupt
    # after it would end the whole test session. Such an attempt is tried again.
    a = np.ones((8192, 1))
    b = np.ones((1, 8192))
    out = np.empty((8192, 8192))  # 512 MiB: 128 blocks on one thread
    main = threading.main_thread().ident
    inside = threading.Event()

    def handler(signum, frame):
        if inside.is_set():
            raise KeyboardInterrupt

    def send():
        while inside.is_set() and out[0, 0] == 7.0:
            time.sleep(0.0002)
        if inside.is_set():
            signal.pthread_kill(main, signal.SIGINT)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        for attempt in range(5):
            out[...] = 7.0  # (its pages in memory before the clock starts)
            inside.set()
            sender = threading.Thread(target=send)
            sender.start()
            try:
                _kernels.binary_into(0, a, b, out, threads=threads)
            except KeyboardInterrupt:
                interrupted = True
            else:
                interrupted = False
            finally:
                inside.clear()
                sender.join()
            if interrupted:
                break
    finally:
        signal.signal(signal.SIGINT, previous)
    assert interrupted, "the SIGINT never came while binary_into ran (5 attempts)"
    assert (out == 7.0).any()  # stopped before the end
    small = np.empty((300, 4096))
    assert _kernels.binary_into(0, a[:300], b[:, :4096], small, threads=2) == 0
    assert (small == 2.0).all()


def test_out_of_the_result_shape_is_written_in_place(monkeypatch):
    """``np.subtract(v, w, out=o)`` of a column and a row writes ``o`` directly (no
    temporary); outs the kernel cannot write, and errors, are NumPy's."""
    calls = []
    original = _kernels.binary_into
    monkeypatch.setattr(_kernels, "binary_into", lambda *args: calls.append(args[3]) or
                        original(*args))
    a_src = np.linspace(-1, 1, 300).reshape(300, 1)
    b_src = np.linspace(0, 3, 400).reshape(1, 400)
    v, w = lazybcast.broadcast_to(a_src, (300, 400)), lazybcast.broadcast_to(b_src, (300, 400))
    expected = np.subtract(np.asarray(v), np.asarray(w))
    out = np.empty((300, 400))
    assert np.subtract(v, w, out=out) is out
    assert calls[-1] is out and np.array_equal(out, expected)
    for other in (np.empty((300, 400), np.float32), np.empty((400, 300)).T,
                  np.ma.masked_array(np.empty((300, 400)))):
        ref = other.copy()
        got = np.subtract(v, w, out=other)
        np.subtract(np.asarray(v), np.asarray(w), out=ref)
        assert got is other and np.array_equal(other, ref) and type(got) is type(ref)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'subtract' output"):
        np.subtract(v, w, out=np.empty((300, 400), np.int64))
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        inf = lazybcast.broadcast_to(np.full((300, 1), np.inf), (300, 400))
        np.subtract(inf, inf.T.T, out=out)


@pytest.mark.parametrize("dtype", ["f4", "f8", "i1", "i8", "u2", "u4"])
def test_long_rows_of_every_pattern_compare_as_numpys(dtype, simd):
    """Rows long enough for the vector loops (and their tails), every pattern, NaN and -0.0
    among the values (the AVX2 comparisons of doubles pack their results by hand)."""
    rng = np.random.default_rng(7)
    values = rng.integers(-3, 4, 1000).astype(dtype)
    if dtype[0] == "f":
        values[::17] = np.nan
        values[5::23] = -0.0
    col = values[:, None][:61]
    row = values[None, :]
    for a, b in ((col, row), (row, col), (row[:, :997].repeat(61, 0), row[:, 3:1000]),
                 (row[:, :999], row[:, 1:])):
        for op, ufunc in enumerate(OPS):
            if ufunc is np.true_divide and dtype[0] != "f":
                continue
            with np.errstate(all="ignore"):
                expected = ufunc(a, b)
            out = np.empty(expected.shape, expected.dtype)
            assert _kernels.binary_into(op, a, b, out) >= 0
            assert np.array_equal(out, expected, equal_nan=True), (ufunc, a.shape, b.shape)


@pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.machine() == "x86_64"),
                    reason="sets the rounding mode through glibc's fesetround (x86-64 values)")
def test_helpers_compute_in_the_callers_floating_point_environment():
    """A pooled helper started under round-to-nearest still rounds upward when the caller
    does (NumPy computes in the caller's thread, so its environment is the reference)."""
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    fe_upward, fe_tonearest = 0x800, 0
    a = np.full((2048, 1), 1.0)
    b = np.full((1, 4096), 3.0)
    out = np.empty((2048, 4096))
    spin = _kernels._helper_spin()
    _kernels._helper_spin(2_000_000, 2_000_000)  # helpers wait 2 s for the next job
    try:
        took_part = False
        for _ in range(5):  # until the spinning helper takes a block (it nearly always does)
            _kernels.binary_into(3, a, b, out, threads=2)  # round-to-nearest
            shares = _kernels._helper_delay()
            libm.fesetround(fe_upward)
            try:
                _kernels.binary_into(3, a, b, out, threads=2)
                expected = a / b
            finally:
                libm.fesetround(fe_tonearest)
            took_part = _kernels._helper_delay() > shares
            assert expected[0, 0] > 1 / 3  # (rounded upward)
            assert np.array_equal(out, expected)
            if took_part:
                break
    finally:
        _kernels._helper_spin(spin)
    if not took_part:
        pytest.skip("the helper took no block in 5 tries (a busy machine)")


def test_long_against_longlong_keeps_numpys_result_type():
    a = np.arange(1000, dtype="l").reshape(1000, 1)
    b = np.arange(100, dtype="q").reshape(1, 100)
    for x, y in ((a, b), (b, a)):
        got = lazybcast.broadcast_to(x, (1000, 100)) + lazybcast.broadcast_to(y, (1000, 100))
        assert got.dtype.char == (x + y).dtype.char


def test_no_loop_is_minus_one_even_for_an_empty_result():
    ints = np.ones((0, 1), np.int16), np.ones((1, 3), np.int16), np.empty((0, 3), np.int16)
    assert _kernels.binary_into(_kernels.BINARY_OPS.index("true_divide"), *ints) == -1


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")
@pytest.mark.parametrize("rows, calls", [(1, 3000), (64, 20)], ids=["one item", "many items"])
def test_flags_survive_a_signal_handler_that_clears_them(rows, calls):
    """A Python signal handler runs where the caller checks for Ctrl-C, between items and
    after the last; one that uses NumPy clears this thread's floating-point flags. Each
    item's flags are taken before that check (they were read once at the end, and inf - inf
    then went unreported: 487 calls in 20,000 with one item, every call with many)."""
    def handler(signum, frame):
        np.add(np.ones(3), 1.0)  # (NumPy clears the flags around its own loop)

    previous = signal.signal(signal.SIGALRM, handler)
    col = np.ones((rows, 1))
    row = np.ones((1, 100_000 if rows > 1 else 60_000))
    col[0, 0] = row[0, 0] = np.inf
    out = np.empty((rows, row.shape[1]))
    lost = 0
    try:
        signal.setitimer(signal.ITIMER_REAL, 5e-4, 5e-4)
        for _ in range(calls):
            lost += not _kernels.binary_into(_kernels.BINARY_OPS.index("subtract"), col, row, out,
                                             1) & _kernels.FP_FLAGS["invalid"]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert lost == 0
