"""Ufuncs whose compact operands broadcast against each other (an outer sum) run with NumPy's
buffer sized to one row (lazybcast._buffering). NumPy's iterator is the reference for the row
(``np.nditer``'s inner loop), NumPy on the ``np.broadcast_to`` arrays for values, dtypes,
warnings and errors; the caller's buffer size comes back unchanged."""

import warnings

import numpy as np
import pytest
from _duck_strategies import NUMERIC, assert_same_array, outcome, raised_alike
from hypothesis import given, settings
from hypothesis import strategies as st

import lazybcast
import lazybcast._buffering
from lazybcast._buffering import core, row_buffer

BINARY = [np.add, np.subtract, np.multiply, np.true_divide, np.floor_divide, np.power,
          np.maximum, np.fmin, np.arctan2, np.less, np.equal, np.logical_and, np.bitwise_or,
          np.copysign, np.divmod]


@st.composite
def patterns(draw, n_operands=2, max_rank=4):
    """``(shape, arrays)``: C-contiguous operands, each whole or of size 1 on each axis."""
    shape = tuple(draw(st.lists(st.sampled_from([1, 2, 3, 5, 8]), min_size=1,
                                max_size=max_rank)))
    arrays = []
    for _ in range(n_operands):
        own = tuple(n if draw(st.booleans()) else 1 for n in shape)
        arrays.append(np.zeros(own, np.int8))
    shape = tuple(max(a.shape[i] for a in arrays) for i in range(len(shape)))
    return shape, arrays


@given(st.integers(1, 4).flatmap(lambda k: patterns(n_operands=k)))
def test_core_is_the_inner_loop_of_numpys_iterator(case):
    shape, arrays = case
    it = np.nditer(arrays, flags=["external_loop"], order="C")
    first = next(it)
    inner = (first[0] if type(first) is tuple else first).shape[0]
    assert core(shape, arrays) == inner, (shape, [a.shape for a in arrays])


def test_row_buffer_rule():
    col, row = np.zeros((512, 1), np.float32), np.zeros((1, 512), np.float32)
    assert row_buffer((512, 512), [col, row]) == 512
    # rows of 1000 elements: the multiple of 16 below
    assert row_buffer((1000, 1000), [np.zeros((1000, 1)), np.zeros((1, 1000))]) == 992
    # fewer than 1 kB a row, fewer than 32768 elements, or no broadcast: NumPy's buffers
    assert row_buffer((512, 512), [col.astype(np.int8), row.astype(np.int8)]) == 0
    assert row_buffer((32, 512), [col[:32], row]) == 0
    full = np.zeros((512, 512), np.float32)
    assert row_buffer((512, 512), [full, full]) == 0
    # an operand broadcast across rows only (NumPy copies its rows at memcpy speed)
    assert row_buffer((512, 512), [full, row]) == 0
    assert row_buffer((512, 512), [full, col]) == 512
    # rows of 1 kB (float32 rows of 256)
    assert row_buffer((1024, 256), [np.zeros((1024, 1), np.float32), row[:, :256]]) == 0
    # an operand that is not C-contiguous: NumPy may order the axes otherwise
    assert row_buffer((512, 512), [full.T, row]) == 0


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from(BINARY), st.sampled_from(NUMERIC), st.sampled_from(NUMERIC),
       st.integers(64, 200), st.integers(256, 2100), st.booleans())
def test_outer_operations_match_numpy(data, ufunc, dt1, dt2, m, n, swap):
    a_src = data.draw(st.sampled_from([np.arange(m), np.linspace(-3, 3, m)]), label="a")
    b_src = np.linspace(-2.5, 4, n)
    a_src = a_src.reshape(m, 1).astype(dt1)
    b_src = b_src.reshape(1, n).astype(dt2)
    a, b = lazybcast.broadcast_to(a_src, (m, n)), lazybcast.broadcast_to(b_src, (m, n))
    a_ref, b_ref = np.broadcast_to(a_src, (m, n)), np.broadcast_to(b_src, (m, n))
    if swap:
        a, b, a_ref, b_ref = b, a, b_ref, a_ref
    got, expected = outcome(ufunc, a, b), outcome(ufunc, a_ref, b_ref)
    if raised_alike(got, expected):
        return
    if type(expected[1]) is tuple:
        for g, e in zip(got[1], expected[1]):
            assert_same_array(g, e)
    else:
        assert_same_array(got[1], expected[1])


def test_keywords_and_out_match_numpy():
    a_src = np.linspace(-1, 1, 300, dtype=np.float32).reshape(300, 1)
    b_src = np.linspace(0, 5, 1024, dtype=np.float32).reshape(1, 1024)
    a, b = lazybcast.broadcast_to(a_src, (300, 1024)), lazybcast.broadcast_to(b_src, (300, 1024))
    a_ref, b_ref = np.asarray(a), np.asarray(b)
    assert_same_array(np.add(a, b, dtype=np.float64), np.add(a_ref, b_ref, dtype=np.float64))
    assert_same_array(np.multiply(a, b, casting="unsafe", dtype=np.int16),
                      np.multiply(a_ref, b_ref, casting="unsafe", dtype=np.int16))
    mask = lazybcast.broadcast_to(np.arange(1024).reshape(1, 1024) % 3 == 0, (300, 1024))
    got, expected = np.full((300, 1024), 7.0), np.full((300, 1024), 7.0)
    np.subtract(a, b, out=got, where=mask)
    np.subtract(a_ref, b_ref, out=expected, where=np.asarray(mask))
    assert got.tobytes() == expected.tobytes()
    got, expected = np.empty((300, 1024)), np.empty((300, 1024))
    assert np.hypot(a, b, out=got) is got
    np.hypot(a_ref, b_ref, out=expected)
    assert got.tobytes() == expected.tobytes()
    # three dimensions: the row is the two trailing axes where both operands stay alike
    c_src = np.arange(4 * 1 * 128, dtype=np.float64).reshape(4, 1, 128)
    d_src = np.arange(1 * 96 * 128, dtype=np.float64).reshape(1, 96, 128)
    c = lazybcast.broadcast_to(c_src, (4, 96, 128))
    d = lazybcast.broadcast_to(d_src, (4, 96, 128))
    assert_same_array(c * d, np.asarray(c) * np.asarray(d))


def test_the_loop_runs_with_one_row_buffers_and_the_callers_size_comes_back():
    """NumPy calls an errstate ``call=`` handler from inside the ufunc, after its loop."""
    seen = []
    a = lazybcast.broadcast_to(np.full((200, 1), 3e38, np.float32), (200, 1024))
    b = lazybcast.broadcast_to(np.full((1, 1024), 3e38, np.float32), (200, 1024))
    old = np.setbufsize(4096)
    try:
        with np.errstate(over="call", call=lambda *args: seen.append(np.getbufsize())):
            a + b
            np.multiply(a, b, out=np.empty((200, 1024), np.float32))
            a[:, :8] + b[:, :8]  # too small: NumPy's (here the caller's) buffer
            np.power(a, b)  # a loop that gains nothing: NumPy's buffer
        assert seen == [1024, 1024, 4096, 4096]
        assert np.getbufsize() == 4096

        def interrupt(*args):
            raise KeyboardInterrupt

        with np.errstate(over="call", call=interrupt), pytest.raises(KeyboardInterrupt):
            a + b
        assert np.getbufsize() == 4096
    finally:
        np.setbufsize(old)


@pytest.mark.parametrize(("ufunc", "dtype", "switched"), [
    (np.add, "f4", True), (np.less, "i2", True), (np.bitwise_xor, "u8", True),
    (np.maximum, "f8", True), (np.fmin, "i8", True),
    (np.add, "?", False), (np.logical_and, "?", False), (np.maximum, "f4", False),
    (np.maximum, "c16", False), (np.arctan2, "f8", False), (np.hypot, "f4", False),
])
def test_only_loops_fast_on_a_stride_0_operand_switch(monkeypatch, ufunc, dtype, switched):
    calls = []
    setbufsize = np.setbufsize
    monkeypatch.setattr(np, "setbufsize", lambda size: calls.append(size) or setbufsize(size))
    a_src = np.ones((256, 1), dtype)
    b_src = np.ones((1, 1024), dtype)
    # (through the module itself: views take lazybcast._binary's kernel first, where it has one)
    got = lazybcast._buffering.call(ufunc, (a_src, b_src), {})
    expected = ufunc(np.broadcast_to(a_src, (256, 1024)), np.broadcast_to(b_src, (256, 1024)))
    assert got.dtype == expected.dtype and np.array_equal(got, expected)
    assert bool(calls) is switched, calls


def test_floating_point_warnings_and_errors_are_numpys():
    a_src = np.full((200, 1), 3e38, np.float32)
    b_src = np.linspace(0, 3e38, 1024, dtype=np.float32).reshape(1, 1024)
    a, b = lazybcast.broadcast_to(a_src, (200, 1024)), lazybcast.broadcast_to(b_src, (200, 1024))
    a_ref, b_ref = np.asarray(a), np.asarray(b)
    caught = []
    for x, y in ((a, b), (a_ref, b_ref)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x + y
        caught.append([(type(m.message), str(m.message)) for m in w])
    assert caught[0] == caught[1] == [(RuntimeWarning, "overflow encountered in add")]
    size = np.getbufsize()
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            a + b
        with pytest.raises(FloatingPointError):
            a_ref + b_ref
    assert np.getbufsize() == size
