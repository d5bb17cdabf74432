"""``np.take`` and ``np.compress`` of views (lazybcast._take): NumPy's ``np.take`` and
``np.compress`` on the ``np.broadcast_to`` arrays are the reference for values, dtypes, shapes
and errors, for every mode, flat and per-axis indices, negative and out-of-range ones."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from _duck_strategies import outcome, raised_alike, views
from hypothesis import assume, given
from hypothesis import strategies as st

import lazybcast
from lazybcast import BroadcastView


def _same(got, expected):
    if raised_alike(got, expected):
        return
    g, e = got[1], expected[1]
    if type(g) is BroadcastView:
        g = g.materialize()
    assert type(np.asarray(g)) is type(np.asarray(e))
    assert np.shape(g) == np.shape(e), (np.shape(g), np.shape(e))
    assert np.asarray(g).dtype == np.asarray(e).dtype
    assert np.asarray(g).tobytes() == np.asarray(e).tobytes()
    assert np.ndim(g) or type(g) is type(e), (type(g), type(e))  # NumPy's scalar for 0-d


@given(st.data())
def test_take_is_numpys(data):
    view, oracle = data.draw(views(), label="view")
    assume(view.size <= 100_000)  # (NumPy's np.take copies the whole logical array first)
    mode = data.draw(st.sampled_from(["raise", "wrap", "clip"]), label="mode")
    axis = data.draw(st.one_of(st.none(), st.integers(-3, 3)), label="axis")
    n = view.size if axis is None else (view.shape[axis] if -view.ndim <= axis < view.ndim
                                         else 1)
    ints = st.integers(-n - 2, n + 2)
    indices = data.draw(st.one_of(
        ints, st.lists(ints, max_size=5),
        st.lists(st.lists(ints, min_size=2, max_size=2), min_size=1, max_size=3),
        st.lists(st.booleans(), max_size=4).map(lambda b: np.array(b, bool)),
        st.lists(ints, max_size=3).map(lambda i: np.array(i, np.int16))), label="indices")
    if mode == "wrap" and n == 0:
        return  # (NumPy's wrap mode may never return here; see the test below)
    _same(outcome(np.take, view, indices, axis, mode=mode),
          outcome(np.take, oracle, indices, axis, mode=mode))


@given(st.data())
def test_compress_is_numpys(data):
    view, oracle = data.draw(views(), label="view")
    assume(view.size <= 100_000)
    axis = data.draw(st.one_of(st.none(), st.integers(-3, 3)), label="axis")
    condition = data.draw(st.lists(st.integers(0, 2), max_size=8), label="condition")
    _same(outcome(np.compress, condition, view, axis),
          outcome(np.compress, condition, oracle, axis))


def test_take_gathers_only_what_it_takes():
    """32 GiB logical: taking columns or rows costs what is taken."""
    v = lazybcast.broadcast_to(np.arange(4096.0), (1 << 20, 4096))
    r = np.take(v, [3, -1], axis=1)
    assert r.shape == (1 << 20, 2) and r[0].tolist() == [3.0, 4095.0]
    assert np.take(v, [5, 7], axis=0).tolist() == [list(range(4096))] * 2
    assert np.take(v, 4096 * 3 + 10).item() == 10.0  # flat: row 3, column 10
    assert np.compress([False, True], v, axis=1).shape == (1 << 20, 1)
    # NumPy's wrap mode never returns here (an empty axis, an empty result): lazybcast does
    e = lazybcast.broadcast_to(np.zeros((1, 0, 1), np.uint32), (0, 1, 0, 1))
    r = np.take(e, [0, -1], axis=0, mode="wrap")
    assert r.shape == (2, 1, 0, 1) and r.dtype == np.uint32
    assert np.take(e, [0, -1], axis=0, mode="clip").shape == (2, 1, 0, 1)
    out = np.zeros((4, 2))
    assert np.take(v[:4], [0, 1], axis=1, out=out) is out  # out=: NumPy's own
    assert out.tolist() == [[0.0, 1.0]] * 4


@pytest.mark.parametrize("indices, axis", [([2, 4096, -4097], 1), ([[1], [-5000]], -1),
                                           (np.array([7, -4097], np.int16), 1)])
def test_an_index_out_of_range_is_numpys_error_without_the_whole_copy(indices, axis):
    """An index out of range raises NumPy's IndexError for the first bad one, as NumPy words
    it for an array with the same axis, at once: NumPy itself first copies the whole logical
    array (128 TiB here: MemoryError)."""
    huge = lazybcast.broadcast_to(np.arange(4096.0), (1 << 32, 4096))
    with pytest.raises(IndexError) as numpy_error:
        np.take(np.zeros((2, 4096)), indices, axis)
    with pytest.raises(IndexError) as ours:
        np.take(huge, indices, axis)
    assert str(ours.value) == str(numpy_error.value)
    with pytest.raises(IndexError, match=f"^index {1 << 44} is out of bounds for axis 0 with "
                                         f"size {1 << 44}$"):
        np.take(huge, [0, 1 << 44, -1 - (1 << 44)])  # flat indices


def test_compress_past_the_axis_is_numpys_error_without_the_whole_copy():
    huge = lazybcast.broadcast_to(np.arange(4.0), (1 << 40, 4))
    with pytest.raises(IndexError) as numpy_error:
        np.compress([0, 0, 0, 0, 1], np.zeros((2, 4)), axis=1)
    with pytest.raises(IndexError) as ours:
        np.compress([0, 0, 0, 0, 1], huge, axis=1)
    assert str(ours.value) == str(numpy_error.value)


def test_wrap_on_an_empty_axis_returns_however_the_mode_is_spelled():
    """NumPy's wrap mode never returns on an empty axis with an empty result; lazybcast
    answers for every spelling NumPy reads as wrap (run apart, so that a hang fails)."""
    code = textwrap.dedent("""
        import numpy as np, lazybcast
        e = lazybcast.broadcast_to(np.zeros((1, 0, 1), np.uint32), (0, 1, 0, 1))
        cases = [dict(indices=np.array([0], np.uint64), mode="wrap"),
                 dict(indices=[0], mode=np.str_("wrap")), dict(indices=[0], mode=1),
                 dict(indices=[0], mode="w"),
                 dict(indices=[0], mode="wrap", out=np.empty((1, 1, 0, 1), np.uint32))]
        for kwargs in cases:
            try:
                print(np.take(e, axis=0, **kwargs).shape)
            except (TypeError, ValueError) as error:  # (NumPy's, where it refuses the call)
                print(type(error).__name__)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("(1, 1, 0, 1)") >= 3, done.stdout


def test_bool_axis_and_array_mode_are_numpys_errors():
    v = lazybcast.broadcast_to(np.arange(4.0), (3, 4))
    with pytest.raises(TypeError):
        np.take(v, [1], axis=True)
    with pytest.raises(TypeError):
        np.compress([1], v, axis=True)
    with pytest.raises(TypeError):
        np.take(v, [1], 1, mode=np.array(["wrap", "clip"]))
