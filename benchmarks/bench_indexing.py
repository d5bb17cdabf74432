"""Indexing a view against indexing NumPy's broadcast_to view.

Basic indexing (ints, slices, ``...``, ``None``) is lazy on both sides: a new view, no copy.
Advanced indexing (integer arrays, masks) gathers: ``view[idx]`` (our nogil gather kernel)
against ``np.broadcast_to(...)[idx]``. Each key is one group, lazybcast next to NumPy and, when
torch is installed, ``tensor[key]`` on the expanded tensor (``src.expand(shape)``, the key's
arrays made tensors beforehand; torch's default thread count). torch has no negative slice
steps: that key is skipped for it.
"""

import numpy as np
import pytest

import lazybcast
from lazybcast._bench_peers import load_torch

IMPLS = ["lazybcast", "numpy", "torch"]

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
    if isinstance(result, lazybcast.BroadcastView):
        return result.materialize()
    if hasattr(result, "numpy") and not isinstance(result, np.generic):  # a torch tensor
        return result.numpy()
    return result


def _torch_target(key):
    """(expanded tensor, key with tensors for arrays), skipping what torch cannot index."""
    torch = load_torch()
    if torch is None:
        pytest.skip("torch is not installed")
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, slice) and (k.step or 1) < 0 for k in parts):
        pytest.skip("torch has no negative slice steps")
    parts = tuple(torch.from_numpy(np.ascontiguousarray(k)) if isinstance(k, np.ndarray) else k
                  for k in parts)
    target = torch.from_numpy(_source.copy()).expand(_shape)
    return target, (parts if isinstance(key, tuple) else parts[0])


def _target(impl, key):
    if impl == "torch":
        return _torch_target(key)
    return (VIEW if impl == "lazybcast" else REF), key


# Warm-up rounds: without them pytest-benchmark calibrated the first key's first callable
# (lazybcast) to one call per round, timer included: 230 against 112 ns for the same call.
@pytest.mark.benchmark(warmup=True)
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("name", list(BASIC))
def test_basic(benchmark, name, impl):
    benchmark.group = f"basic index: {name}"
    want = REF[BASIC[name]]
    target, key = _target(impl, BASIC[name])
    result = benchmark(target.__getitem__, key)
    got = _values(result)
    assert np.shape(got) == np.shape(want) and np.array_equal(got, want)
    if impl == "lazybcast" and np.ndim(want):
        assert isinstance(result, lazybcast.BroadcastView), "basic indexing must stay lazy"


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("name", list(ADVANCED))
def test_advanced(benchmark, name, impl):
    benchmark.group = f"gather: {name}"
    want = REF[ADVANCED[name]]
    target, key = _target(impl, ADVANCED[name])
    result = _values(benchmark(target.__getitem__, key))
    assert result.shape == want.shape and np.array_equal(result, want)
