"""Every example of the specification documents (``../shared/spec/``), one test each.

The examples are written out here so that the tests run from a bare clone; when the spec
directory is present, ``test_examples_are_the_documents_own`` checks that the lists below are
exactly what the documents say.
"""

import itertools
import pathlib
import re

import numpy as np
import pytest

import lazybcast

SPEC = pathlib.Path(__file__).resolve().parents[2] / "shared" / "spec"

# Broadcast-1 (000/001) and Broadcast-3 (003) XML examples: (mode, data, target, axes_mapping, out)
BROADCAST_1 = [
    ("numpy", (16, 1, 1), [1, 16, 50, 50], None, (1, 16, 50, 50)),
    ("explicit", (16,), [1, 16, 50, 50], [1], (1, 16, 50, 50)),
    ("explicit", (50, 50), [1, 50, 50, 16], [1, 2], (1, 50, 50, 16)),
]
# Broadcast-3 repeats them and adds a bidirectional one: data [16, 1, 1], a 4-element target
# ([1, 1, 50, 50] in the published page; the plain-text copy keeps only the port sizes) and
# output [1, 16, 50, 50], larger than the target.
BROADCAST_3 = BROADCAST_1 + [
    ("bidirectional", (16, 1, 1), [1, 1, 50, 50], None, (1, 16, 50, 50)),
]

# Broadcast rules for element-wise operations (002): (A, B, result or None for "won't happen")
RULES = [
    ((), (), ()),
    ((2, 3), (1,), (2, 3)),
    ((3,), (2, 3), (2, 3)),
    ((2, 3, 5), (), (2, 3, 5)),
    ((2, 1, 5), (1, 4, 5), (2, 4, 5)),
    ((6, 5), (2, 1, 5), (2, 6, 5)),
    ((2, 1, 5), (4, 1), (2, 4, 5)),
    ((3, 2, 1, 4), (5, 4), (3, 2, 5, 4)),
    ((1, 5, 3), (5, 2, 1, 3), (5, 2, 5, 3)),
    ((3,), (2,), None),
    ((3, 1, 5), (4, 4, 5), None),
]


def _data(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


@pytest.mark.parametrize(("mode", "shape", "target", "mapping", "out"), BROADCAST_3)
def test_broadcast_xml_examples(mode, shape, target, mapping, out):
    x = _data(shape)
    v = lazybcast.broadcast(x, target, mapping, mode=mode)
    assert v.shape == out
    # Replication along the other axes (the documents' "replicates data"): the reference places
    # data axis i at output axis mapping[i] (explicit) or right-aligns it.
    if mapping is None:
        aligned = (1,) * (len(out) - len(shape)) + shape
    else:
        aligned = [1] * len(out)
        for i, a in enumerate(mapping):
            aligned[a] = shape[i]
    expected = np.broadcast_to(x.reshape(aligned), out)
    np.testing.assert_array_equal(v.materialize(), expected)
    # the same example as a 1-D integer tensor of another dtype, and mode in upper case
    v2 = lazybcast.broadcast(
        x,
        np.array(target, dtype=np.int32),
        None if mapping is None else np.array(mapping, dtype=np.int64),
        mode=mode.upper(),
    )
    np.testing.assert_array_equal(v2.materialize(), expected)


def test_explicit_examples_cannot_be_numpy_mode():
    """'such operations cannot be expressed with ... numpy'."""
    with pytest.raises(ValueError):
        lazybcast.broadcast(_data((16,)), [1, 16, 50, 50])
    with pytest.raises(ValueError):
        lazybcast.broadcast(_data((50, 50)), [1, 50, 50, 16])


def test_explicit_example_values_are_replicated_along_other_axes():
    """[C] -> [N, C, H, W] with axes_mapping [1]: out[n, c, h, w] == data[c]."""
    x = _data((16,))
    out = lazybcast.broadcast(x, [1, 16, 50, 50], [1], mode="explicit").materialize()
    for n, c, h, w in [(0, 0, 0, 0), (0, 15, 49, 49), (0, 7, 3, 41)]:
        assert out[n, c, h, w] == x[c]
    x = _data((50, 50))
    out = lazybcast.broadcast(x, [1, 50, 50, 16], [1, 2], mode="explicit").materialize()
    for n, h, w, c in [(0, 0, 0, 0), (0, 49, 49, 15), (0, 12, 31, 7)]:
        assert out[n, h, w, c] == x[h, w]


def test_bidirectional_example_also_with_full_target():
    v = lazybcast.broadcast(_data((16, 1, 1)), [1, 16, 50, 50], mode="bidirectional")
    assert v.shape == (1, 16, 50, 50)


@pytest.mark.parametrize(("a", "b", "result"), RULES)
def test_broadcast_rules_examples(a, b, result):
    x, y = _data(a, np.int32), _data(b, np.int32) + 100
    if result is None:
        with pytest.raises(ValueError):
            lazybcast.broadcast_shapes(a, b)
        with pytest.raises(ValueError):
            lazybcast.broadcast_arrays(x, y)
        with pytest.raises(ValueError, match="Broadcast incorrect target shape"):
            lazybcast.broadcast(x, list(b), mode="bidirectional")
        return
    assert lazybcast.broadcast_shapes(a, b) == result
    va, vb = lazybcast.broadcast_arrays(x, y)
    np.testing.assert_array_equal(va.materialize(), np.broadcast_to(x, result))
    np.testing.assert_array_equal(vb.materialize(), np.broadcast_to(y, result))
    # Bidirectional broadcast: numpy.array(input) * numpy.ones(target_shape)
    bidi = lazybcast.broadcast(x, list(b), mode="bidirectional").materialize()
    np.testing.assert_array_equal(bidi, np.array(x) * np.ones(b, dtype=np.int32))
    assert bidi.shape == result
    # One-directional (numpy mode): A goes to B only where B is the result
    if tuple(b) == result:
        np.testing.assert_array_equal(
            lazybcast.broadcast(x, list(b)).materialize(), np.broadcast_to(x, result)
        )
    else:
        with pytest.raises(ValueError):
            lazybcast.broadcast(x, list(b))


def test_rank_zero_gives_a_scalar():
    """Rule 5: when both inputs are of rank 0 the result is a scalar."""
    v = lazybcast.broadcast(np.float64(2.5), [], mode="bidirectional")
    assert v.shape == () and v.ndim == 0
    assert v.materialize().shape == ()
    assert v.materialize()[()] == 2.5


def test_bidirectional_output_differs_from_desired_shape():
    """Rule 4: the output differs from the desired shape when it has 1s or a smaller rank."""
    assert lazybcast.broadcast(_data((2, 3)), [1, 1], mode="bidirectional").shape == (2, 3)
    assert lazybcast.broadcast(_data((2, 3, 4)), [4], mode="bidirectional").shape == (2, 3, 4)


# -- SONNX N-ary Broadcast (004) ----------------------------------------------------------


SONNX = [
    [(2, 3, 4)],
    [(2, 1, 4), (3, 1), (4,)],
    [(5,), (), (1, 5), (3, 1, 1)],
    [(1, 1), (1,), ()],
    [(2, 1, 3, 1), (1, 4, 1, 5), (4, 3, 1), (1,)],
]


def _f(a, size_n, size):
    """SONNX: f(a, B, C) = a if B == C, and the first index if B == 1."""
    if size_n == size:
        return a
    assert size_n == 1
    return 0


@pytest.mark.parametrize("shape_list", SONNX, ids=repr)
def test_sonnx_nary_broadcast(shape_list):
    inputs = [_data(s, np.int64) + 1000 * k for k, s in enumerate(shape_list)]
    outputs = lazybcast.broadcast_arrays(*inputs)
    n_z = max(len(s) for s in shape_list)
    # "dimensions to be completed are those of lower indexes ... set to 1"
    padded = [(1,) * (n_z - len(s)) + s for s in shape_list]
    # "a dimension size equal to the maximum of the dimension sizes"
    d_z = tuple(max(p[i] for p in padded) for i in range(n_z))
    assert len(outputs) == len(inputs)
    for x, p, z in zip(inputs, padded, outputs):
        assert z.shape == d_z
        got = z.materialize()
        y = x.reshape(p)
        for idx in itertools.product(*(range(n) for n in d_z)):
            assert got[idx] == y[tuple(_f(a, b, c) for a, b, c in zip(idx, p, d_z))]


def test_sonnx_constraint_c1():
    """C1: every dimension is the common size or 1; otherwise no broadcast."""
    with pytest.raises(ValueError):
        lazybcast.broadcast_arrays(_data((2, 3)), _data((3, 3)), _data((3,)))


# -- the examples above are the documents' own --------------------------------------------------


@pytest.mark.skipif(not SPEC.is_dir(), reason="the specification directory is not next to the repo")
def test_examples_are_the_documents_own():
    rules = (SPEC / "002_38ca088f58e9a6c7.txt").read_text()
    found = []
    pattern = r"A: Shape\(([^)]*)\).*?B: Shape\(([^)]*)\).*?Result: ([^\n]*)"
    for block in re.findall(pattern, rules, re.S):
        a, b, result = block
        parse = lambda s: tuple(int(n) for n in s.replace(" ", "").split(",") if n)  # noqa: E731
        res = re.match(r"Shape\(([^)]*)\)", result)
        found.append((parse(a), parse(b), parse(res.group(1)) if res else None))
    assert found == RULES

    xml = (SPEC / "000_3e6cf45f37fe0ec2.txt").read_text()
    layers = re.findall(r'<data mode="(\w+)"/>(.*?)</layer>', xml, re.S)
    assert [m for m, _ in layers] == [e[0] for e in BROADCAST_1]
    for (mode, body), (_, shape, target, mapping, out) in zip(layers, BROADCAST_1):
        ports = re.findall(r"<port[^>]*>(.*?)</port>", body, re.S)
        dims = [tuple(int(d) for d in re.findall(r"<dim>(\d+)</dim>", p)) for p in ports]
        assert dims[0] == shape
        assert dims[-1] == out
        contents = re.findall(r"contains \d+ elements: \[([^\]]*)\]", body)
        assert [int(n) for n in contents[0].split(",")] == target
        if mapping is not None:
            assert [int(n) for n in contents[1].split(",")] == mapping

    b3 = (SPEC / "003_ece0cbba5cb063a0.txt").read_text()
    numbers = re.search(r"```xml(.*?)```", b3, re.S).group(1).split()
    # the stripped XML keeps the port sizes: data dims, target length, [mapping length], output
    expected = []
    for _, shape, target, mapping, out in BROADCAST_3:
        expected += [*shape, len(target)] + ([] if mapping is None else [len(mapping)]) + [*out]
    assert [int(n) for n in numbers] == expected
