"""Smallest end-to-end check: a view materializes to NumPy's values."""

import numpy as np

import lazybcast


def test_broadcast_to_matches_numpy():
    x = np.arange(6).reshape(2, 1, 3)
    got = lazybcast.broadcast_to(x, (4, 2, 5, 3)).materialize()
    np.testing.assert_array_equal(got, np.broadcast_to(x, (4, 2, 5, 3)))
