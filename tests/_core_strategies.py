"""Strategies and independent references shared by the core test files.

Used by ``test_modes``, ``test_materialize``, ``test_view_attrs`` and ``test_pickle``. The
references here are written from the specification (``../shared/spec``) and NumPy, never from
``lazybcast._rules``: a request either resolves to an output shape plus the data's *aligned*
shape (the data's shape padded with 1s to the output's rank) or it is an error.
"""

import math

import numpy as np
from hypothesis import strategies as st

#: Every kind of dtype the core must move: sizes 1, 2, 4, 8, 16 and odd fixed sizes.
DTYPES = [
    np.dtype(d)
    for d in (
        "?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
        "f2", "f4", "f8", "c8", "c16",
        "S5", "U3", "S7", "V3",
        [("a", "i2"), ("b", "f8")],  # packed structured, itemsize 10
        [("x", "u1"), ("y", "u2")],  # packed structured, itemsize 3
        "O",
    )
]

dtypes = st.sampled_from(DTYPES)

MODES = ("numpy", "explicit", "bidirectional", "pdpd")

small_dim = st.integers(0, 4)


def shapes(min_rank=0, max_rank=4, dim=small_dim):
    return st.lists(dim, min_size=min_rank, max_size=max_rank).map(tuple)


# -- values -----------------------------------------------------------------------------------


def fill(dtype, shape, seed):
    """A C-contiguous array of ``shape`` holding random, distinct-looking values."""
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    if dtype.kind == "O":
        flat = np.empty(n, dtype=object)
        for i in range(n):
            flat[i] = ("obj", int(rng.integers(1 << 30)), i)  # a fresh object per element
    elif dtype.kind == "b":
        flat = rng.integers(0, 2, n).astype(bool)
    elif dtype.kind == "U":
        chars = dtype.itemsize // 4
        flat = rng.integers(0x20, 0xD7FF, n * chars, dtype=np.uint32).view(dtype)
    else:
        flat = rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype)
    return flat.reshape(shape)


@st.composite
def laid_out(draw, shape, dtype):
    """An array of ``shape`` and ``dtype`` with drawn strides: any mix of transposed memory,
    steps (negative ones included) and zero strides (``np.broadcast_to`` inputs)."""
    n = len(shape)
    seed = draw(st.integers(0, 2**32 - 1))
    steps = draw(st.lists(st.sampled_from([1, 1, 2, -1, -3]), min_size=n, max_size=n))
    zero = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    perm = draw(st.permutations(range(n)))
    alloc = [1 if z else s * abs(k) for s, k, z in zip(shape, steps, zero)]
    memory = fill(dtype, [alloc[p] for p in perm], seed)
    if n == 0:
        return memory  # indexing a 0-d array with () would give a scalar
    arr = memory.transpose(np.argsort(perm))[tuple(slice(None, None, k) for k in steps)]
    if any(zero):
        arr = np.broadcast_to(arr, shape)
    assert arr.shape == tuple(shape), (arr.shape, shape)
    return arr


def assert_same(got, expected):
    """Same shape, dtype and bytes (NaN payloads and -0.0 included), structured arrays field
    by field; for object arrays the very same objects."""
    assert isinstance(got, np.ndarray)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    if got.dtype.names:  # field by field: padding bytes carry no value
        for name in got.dtype.names:
            assert_same(got[name], expected[name])
        return
    if got.dtype.hasobject:
        assert all(a is b for a, b in zip(got.reshape(-1), expected.reshape(-1)))
        return
    g = np.ascontiguousarray(got).reshape(-1).view(np.uint8)
    e = np.ascontiguousarray(expected).reshape(-1).view(np.uint8)
    assert np.array_equal(g, e)


# -- the modes, from the specification ----------------------------------------------------------


def ref_numpy(data_shape, target):
    """Broadcast-1 ``numpy``: exactly ``np.broadcast_to``'s acceptance."""
    try:
        np.broadcast_to(np.empty(data_shape, dtype=bool), target)
    except ValueError:
        return None
    return tuple(target), (1,) * (len(target) - len(data_shape)) + tuple(data_shape)


def ref_explicit(data_shape, target, mapping):
    """Broadcast-1/-3 ``explicit``: data axis ``i`` goes to output axis ``mapping[i]``.

    Scalar data takes ``[]``; as in OpenVINO's shape inference it may also name one axis, whose
    target size must then be 1 (``Broadcast target[axes_mapping[0]]. Expected 1``).
    """
    if len(data_shape) == 0 and len(mapping) == 1:
        a = mapping[0]
        if 0 <= a < len(target) and target[a] == 1:
            return tuple(target), (1,) * len(target)
        return None
    if len(mapping) != len(data_shape):
        return None
    if any(a < 0 or a >= len(target) for a in mapping):
        return None
    if any(b <= a for a, b in zip(mapping, mapping[1:])):
        return None
    aligned = [1] * len(target)
    for d, a in zip(data_shape, mapping):
        if d not in (1, target[a]):
            return None
        aligned[a] = d
    return tuple(target), tuple(aligned)


def ref_bidirectional(data_shape, target):
    """Broadcast-3 ``bidirectional``: ``np.array(input) * np.ones(target_shape)``."""
    try:
        out = np.broadcast_shapes(tuple(data_shape), tuple(target))
    except ValueError:
        return None
    return out, (1,) * (len(out) - len(data_shape)) + tuple(data_shape)


def ref_pdpd(data_shape, target, axis):
    """OpenVINO's ``pdpd``: data axis ``i`` meets target axis ``start + i``."""
    nd, nt = len(data_shape), len(target)
    if axis < -1:
        return None  # OpenVINO: only -1 means "right-align"; other negatives fail start_axis >= 0
    start = axis if axis >= 0 else nt - nd
    if start < 0 or start + nd > nt:
        return None
    out = list(target)
    aligned = [1] * nt
    for i, d in enumerate(data_shape):
        t = target[start + i]
        if d == 1:
            out[start + i] = t
        elif t == 1 or t == d:
            out[start + i] = d
        else:
            return None
        aligned[start + i] = d
    return tuple(out), tuple(aligned)


def reference(data_shape, target, mapping=None, mode="numpy", axis=-1):
    if mode == "numpy":
        return ref_numpy(data_shape, target)
    if mode == "explicit":
        return ref_explicit(data_shape, target, mapping)
    if mode == "bidirectional":
        return ref_bidirectional(data_shape, target)
    return ref_pdpd(data_shape, target, axis)


def expected_values(x, target, mapping=None, mode="numpy", axis=-1):
    """The reference result as a read-only NumPy array (reshape + ``np.broadcast_to``)."""
    if mode == "numpy":
        return np.broadcast_to(x, target)
    if mode == "bidirectional":
        return np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(target)))
    out, aligned = reference(x.shape, target, mapping, mode, axis)
    return np.broadcast_to(x.reshape(aligned), out)


@st.composite
def requests(draw, mode=None, max_rank=4):
    """A *valid* request ``(data_shape, target, mapping, mode, axis)``, built from the rules."""
    mode = draw(st.sampled_from(MODES)) if mode is None else mode
    if mode == "bidirectional":
        out = draw(shapes(0, max_rank))
        dk = draw(st.integers(0, len(out)))
        tk = draw(st.integers(0, len(out)))
        data = tuple(d if draw(st.booleans()) else 1 for d in out[len(out) - dk:])
        target = tuple(d if draw(st.booleans()) else 1 for d in out[len(out) - tk:])
        return data, target, None, mode, -1
    target = draw(shapes(0, max_rank))
    if mode == "numpy":
        k = draw(st.integers(0, len(target)))
        data = tuple(t if draw(st.booleans()) else 1 for t in target[len(target) - k:])
        return data, target, None, mode, -1
    if mode == "explicit":
        k = draw(st.integers(0, len(target)))
        mapping = tuple(sorted(draw(st.permutations(range(len(target))))[:k]))
        data = tuple(target[a] if draw(st.booleans()) else 1 for a in mapping)
        return data, target, mapping, mode, -1
    # pdpd
    nd = draw(st.integers(0, len(target)))
    start = draw(st.integers(0, len(target) - nd))
    axis = -1 if start == len(target) - nd and draw(st.booleans()) else start
    data = []
    target = list(target)
    for i in range(nd):
        kind = draw(st.sampled_from(["equal", "data1", "target1"]))
        t = target[start + i]
        if kind == "equal":
            data.append(t)
        elif kind == "data1":
            data.append(1)
        else:
            data.append(t)
            target[start + i] = 1
    return tuple(data), tuple(target), None, mode, axis


def call_broadcast(x, target, mapping, mode, axis):
    """``lazybcast.broadcast`` with the arguments a drawn request uses in its mode."""
    import lazybcast

    if mode == "pdpd":
        return lazybcast.broadcast(x, target, mode=mode, axis=axis)
    return lazybcast.broadcast(x, target, mapping, mode=mode)
