"""Indexing a view against indexing NumPy's broadcast_to view.

Basic indexing (ints, slices, ``...``, ``None``) is lazy on both sides: a new view, no copy.
Advanced indexing (integer arrays, masks) gathers: ``view[idx]`` (our nogil gather kernel)
against ``np.broadcast_to(...)[idx]``. Each key is one group, lazybcast next to NumPy.
"""

import numpy as np
import pytest

import lazybcast

_source = np.arange(1024, dtype=np.float32)
_shape = (4096, 1024)  # 16 MiB logical
VIEW = lazybcast.broadcast_to(_source, _shape)
REF = np.broadcast_to(_source, _shape)

_rng = np.random.default_rng(0)
_rows = _rng.integers(0, _shape[0], 256)
_cols = _rng.integers(0, _shape[1], 64)
_mask = _rng.random(_shape[0]) < 0.05

BASIC = {
    "int": 5,
    "negative int": -7,
    "slice rows": slice(10, 2000),
    "strided 2-D": (slice(None, None, -3), slice(100, 900, 2)),
    "ellipsis, newaxis, int": (Ellipsis, None, 7),
    "scalar (all ints)": (-1, -1),
}

ADVANCED = {
    "256 random rows": _rows,
    "256 random rows x slice": (_rows, slice(0, 128)),
    "64 random columns": (slice(None, 512), _cols),
    "row mask (5%)": _mask,
    "rows x columns (outer)": np.ix_(_rows[:64], _cols),
}


def _values(result):
    return result.materialize() if isinstance(result, lazybcast.BroadcastView) else result


@pytest.mark.parametrize("impl", ["lazybcast", "numpy"])
@pytest.mark.parametrize("name", list(BASIC))
def test_basic(benchmark, name, impl):
    key = BASIC[name]
    benchmark.group = f"basic index: {name}"
    target = VIEW if impl == "lazybcast" else REF
    result = benchmark(target.__getitem__, key)
    want = REF[key]
    got = _values(result)
    assert np.shape(got) == np.shape(want) and np.array_equal(got, want)
    if impl == "lazybcast" and np.ndim(want):
        assert isinstance(result, lazybcast.BroadcastView), "basic indexing must stay lazy"


@pytest.mark.parametrize("impl", ["lazybcast", "numpy"])
@pytest.mark.parametrize("name", list(ADVANCED))
def test_advanced(benchmark, name, impl):
    key = ADVANCED[name]
    benchmark.group = f"gather: {name}"
    target = VIEW if impl == "lazybcast" else REF
    result = benchmark(target.__getitem__, key)
    want = REF[key]
    assert result.shape == want.shape and np.array_equal(result, want)
