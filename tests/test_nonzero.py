"""``np.nonzero``, ``np.argwhere``, ``np.flatnonzero``, one-argument ``np.where`` and boolean
masks that are views (``lazybcast._nonzero``): NumPy on the ``np.broadcast_to`` equivalent is
the oracle for values, dtypes and order; the cost is the result's, so a result too large to
allocate fails at once."""

import time

import numpy as np
import pytest
from _duck_strategies import outcome, raised_alike, views
from hypothesis import given
from hypothesis import strategies as st

import lazybcast

FUNCTIONS = [np.nonzero, np.argwhere, np.flatnonzero, np.where]


def _same(got, want):
    if raised_alike(got, want):
        return
    got, want = got[1], want[1]
    if isinstance(want, tuple):
        assert type(got) is tuple and len(got) == len(want)
        pairs = list(zip(got, want))
    else:
        pairs = [(got, want)]
    for g, w in pairs:
        assert type(g) is np.ndarray and g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("func", FUNCTIONS, ids=lambda f: f.__name__)
@given(data=st.data())
def test_positions_are_numpys(func, data):
    """Every mode, layout (reversed, strided sources), zero-size and broadcast axes, bool,
    integer and float data with zeros."""
    dtype = data.draw(st.sampled_from([np.dtype("?"), np.dtype("i1"), np.dtype("f4")]))
    view, oracle = data.draw(views(dtype=dtype))
    _same(outcome(func, view), outcome(func, oracle))


@pytest.mark.parametrize("source, shape", [
    (np.array([[0, 3, 0, 5]]), (6, 4)), (np.array([[1], [0], [2]]), (3, 5)),
    (np.array([[[0, 1]], [[1, 0]]]), (2, 3, 2)), (np.array([[[1]]]), (2, 3, 4)),
    (np.array([[0]]), (3, 3)), (np.array([[1, 2]]), (0, 2)), (np.array([7]), (5,)),
    (np.array(3), ()), (np.array(0), ()),
])
@pytest.mark.parametrize("func", FUNCTIONS, ids=lambda f: f.__name__)
def test_positions_of_repeated_groups(source, shape, func):
    """Broadcast axes before, between and after real ones, all-zero and all-nonzero sources,
    an empty axis, 0-d views (NumPy's rules: an error for np.nonzero)."""
    view = lazybcast.broadcast_to(source, shape)
    _same(outcome(func, view), outcome(func, np.broadcast_to(source, shape)))


def test_a_huge_view_fails_at_once():
    """10**12 logical elements, almost all nonzero: NumPy would scan them all before it
    found that the positions cannot be allocated; the view fails in milliseconds."""
    view = lazybcast.broadcast_to(np.arange(10.0**6) % 1000, (10**6, 10**6))
    for call in (np.nonzero, np.argwhere, lambda v: v[v > 500]):
        start = time.perf_counter()
        with pytest.raises(MemoryError):
            call(view)
        assert time.perf_counter() - start < 5  # (NumPy: about half an hour)


def test_a_sparse_huge_view_lists_its_positions():
    """One nonzero column of a 10**5 x 10**5 view (10**10 logical elements): the 10**5
    positions, NumPy's order."""
    source = np.zeros(10**5)
    source[77] = 1.0
    rows, cols = np.nonzero(lazybcast.broadcast_to(source, (10**5, 10**5)))
    np.testing.assert_array_equal(rows, np.arange(10**5))
    np.testing.assert_array_equal(cols, np.full(10**5, 77))


@given(data=st.data())
def test_a_view_as_a_boolean_mask_is_numpys(data):
    """``x[mask]`` with a mask that is a view (``v[v > t]``): NumPy's values and order."""
    view, oracle = data.draw(views(dtype=np.dtype("i1")))
    threshold = data.draw(st.integers(-128, 127))
    _same(outcome(lambda v: np.asarray(v[v > threshold]), view),
          outcome(lambda v: np.asarray(v[v > threshold]), oracle))
