"""Generalized ufuncs on views (``@``, ``np.matmul``, ``np.vecdot``, ``np.matvec``,
``np.vecmat``, ``np.dot``): NumPy on the ``np.broadcast_to`` equivalents is the oracle for
shapes, dtypes, values and errors; results must be views computed on the compact operands.

Values are small integers (also in the floating and complex dtypes), so every product and
sum is exact in any order: NumPy's BLAS may sum a compact operand's rows in another order
than the full one's, and these values make that difference vanish."""

import math
import warnings

import numpy as np
import pytest
from _duck_strategies import NUMERIC, outcome
from hypothesis import given
from hypothesis import strategies as st

import lazybcast
from lazybcast import BroadcastView

DTYPES = st.sampled_from([d for d in NUMERIC if d.kind != "b"] + [np.dtype("?")])


@st.composite
def tame(draw, shape, dtype):
    """An array of ``shape``: integers in [-8, 8] in ``dtype`` (booleans: 0 or 1), maybe
    reversed along an axis (negative strides)."""
    seed = draw(st.integers(0, 2**32 - 1))
    x = np.random.default_rng(seed).integers(-8, 9, size=shape)
    x = (x > 0) if dtype.kind == "b" else x.astype(dtype)
    if x.ndim and draw(st.booleans()):
        x = np.flip(x, draw(st.integers(0, x.ndim - 1)))
    return x


@st.composite
def operand(draw, shape, dtype):
    """``(operand, oracle)`` of logical ``shape``: a view with broadcast axes anywhere (most
    of the time), a plain array, or a ``np.broadcast_to`` array (stride 0)."""
    kind = draw(st.sampled_from(["view", "view", "view", "array", "stride0"]))
    src_shape = tuple(n if kind == "array" or draw(st.booleans()) else 1 for n in shape)
    src = draw(tame(src_shape, dtype))
    if kind == "view":
        return lazybcast.broadcast_to(src, shape), np.broadcast_to(src, shape)
    if kind == "stride0":
        return np.broadcast_to(src, shape), np.broadcast_to(src, shape)
    return src, src


def _repeats(a, axis):
    """True when ``a`` (the oracle) is the same along ``axis``: stride 0 or size 1."""
    return a.shape[axis] == 1 or a.strides[axis] == 0


def compact_shape(refs, core_free, out_core):
    """The result's source shape the module promises: 1 on a loop axis along which every
    operand repeats, 1 on a free core axis along which its operand repeats, the full size
    elsewhere. ``core_free``: per operand, ``{axis of the operand: index in out_core}``."""
    loops = [r.shape[:r.ndim - c] for r, c in refs]
    rank = max(map(len, loops))
    full = np.broadcast_shapes(*loops)
    shape = []
    for d in range(rank):
        live = False
        for (r, c), loop in zip(refs, loops):
            k = d - (rank - len(loop))
            if k >= 0 and not _repeats(r, k):
                live = True
        shape.append(full[d] if live else 1)
    core = list(out_core)
    for (r, _), free in zip(refs, core_free):
        for axis, i in free.items():
            if _repeats(r, axis):
                core[i] = 1
    return tuple(shape) + tuple(core)


def check(got, expected, compact=None, lazy=True):
    """``got`` is NumPy's outcome: same error type, or same shape, dtype and values, as a
    view over ``compact`` (when given) for a result with axes (if ``lazy``: a view took
    part)."""
    assert got[0] == expected[0], (got, expected)
    if got[0] == "error":
        assert got[1] is expected[1], (got, expected)
        return
    g, e = got[1], expected[1]
    if isinstance(e, np.ndarray) and e.ndim and lazy:
        assert type(g) is BroadcastView, type(g)
        if compact is not None and e.size:
            assert g.source.shape == compact, (g.source.shape, compact)
        g = g.materialize()
    else:
        assert type(g) is type(e), (type(g), type(e))
    g, e = np.asarray(g), np.asarray(e)
    assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, e.dtype, g.shape, e.shape)
    np.testing.assert_array_equal(g, e)


@st.composite
def matmul_case(draw):
    dtype = draw(DTYPES)
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n, k, m = (draw(st.integers(1, 4)) for _ in range(3))
    if draw(st.integers(0, 9)) == 0:
        n, k, m = (draw(st.integers(0, 2)) for _ in range(3))  # empty operands: NumPy's path
    a_vec, b_vec = draw(st.booleans()) and draw(st.booleans()), draw(st.integers(0, 3)) == 0
    a_shape = (k,) if a_vec else batch[draw(st.integers(0, len(batch))):] + (n, k)
    b_shape = (k,) if b_vec else batch[draw(st.integers(0, len(batch))):] + (k, m)
    if draw(st.integers(0, 9)) == 0:  # a contracted axis that does not match: NumPy raises
        b_shape = b_shape[:-2] + (k + 1, m) if not b_vec else (k + 1,)
    a, a_ref = draw(operand(a_shape, dtype))
    b, b_ref = draw(operand(b_shape, draw(DTYPES) if draw(st.booleans()) else dtype))
    return a, a_ref, b, b_ref


def _matmul_compact(a_ref, b_ref):
    refs = [(a_ref, 1 if a_ref.ndim == 1 else 2), (b_ref, 1 if b_ref.ndim == 1 else 2)]
    out_core, free = [], [{}, {}]
    if a_ref.ndim > 1:
        free[0][a_ref.ndim - 2] = len(out_core)
        out_core.append(a_ref.shape[-2])
    if b_ref.ndim > 1:
        free[1][b_ref.ndim - 1] = len(out_core)
        out_core.append(b_ref.shape[-1])
    return compact_shape(refs, free, out_core)


@given(matmul_case())
def test_matmul_is_numpys_on_the_compact_operands(case):
    """``np.matmul`` and ``@``: NumPy's shapes, dtypes, values and errors, computed once
    along every axis where the operands repeat (loop axes, rows of the first, columns of the
    second)."""
    a, a_ref, b, b_ref = case
    expected = outcome(np.matmul, a_ref, b_ref)
    compact = _matmul_compact(a_ref, b_ref) if expected[0] == "ok" else None
    lazy = BroadcastView in (type(a), type(b))
    check(outcome(np.matmul, a, b), expected, compact, lazy)
    check(outcome(lambda: a @ b), expected, compact, lazy)
    if a.ndim <= 2 and b.ndim <= 2:  # np.dot is matmul there
        check(outcome(np.dot, a, b), outcome(np.dot, a_ref, b_ref), compact, lazy)


@st.composite
def vector_case(draw, func):
    """Operands for vecdot ``(n),(n)->()``, matvec ``(m,n),(n)->(m)`` or vecmat
    ``(n),(n,m)->(m)``, with loop axes."""
    dtype = draw(DTYPES)
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n, m = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    cores = {"vecdot": [(n,), (n,)], "matvec": [(m, n), (n,)], "vecmat": [(n,), (n, m)]}[func]
    ops = [draw(operand(batch[draw(st.integers(0, len(batch))):] + c, dtype)) for c in cores]
    return ops


@pytest.mark.parametrize("func", ["vecdot", "matvec", "vecmat"])
@given(data=st.data())
def test_vector_products_are_numpys_on_the_compact_operands(func, data):
    if not hasattr(np, func):
        pytest.skip(f"np.{func} needs a newer NumPy")
    (a, a_ref), (b, b_ref) = data.draw(vector_case(func))
    expected = outcome(getattr(np, func), a_ref, b_ref)
    refs = [(a_ref, 2 if func == "matvec" else 1), (b_ref, 2 if func == "vecmat" else 1)]
    out_core, free = [], [{}, {}]
    if func == "matvec":  # rows of the matrix are free
        out_core, free[0] = [a_ref.shape[-2]], {a_ref.ndim - 2: 0}
    elif func == "vecmat":  # columns of the matrix are free
        out_core, free[1] = [b_ref.shape[-1]], {b_ref.ndim - 1: 0}
    compact = compact_shape(refs, free, out_core) if expected[0] == "ok" else None
    check(outcome(getattr(np, func), a, b), expected, compact,
          BroadcastView in (type(a), type(b)))


def test_a_repeated_row_times_a_matrix_is_one_product():
    """The motivating case: 4096 copies of one row times a matrix computes one row."""
    row = np.arange(512, dtype=np.float32) / 512
    w = np.random.default_rng(0).standard_normal((512, 64)).astype(np.float32)
    v = lazybcast.broadcast_to(row, (4096, 512))
    r = v @ w
    assert type(r) is BroadcastView and r.shape == (4096, 64) and r.source.shape == (1, 64)
    np.testing.assert_allclose(r.materialize(), np.broadcast_to(row, (4096, 512)) @ w,
                               rtol=1e-5, atol=1e-5)


def test_a_broadcast_batch_of_matrices():
    """A batch that repeats one matrix, and a contracted axis that repeats (expanded: its
    repeats count)."""
    m = np.arange(12.0).reshape(1, 3, 4)
    v = lazybcast.broadcast_to(m, (100, 3, 4))
    w = lazybcast.broadcast_to(np.array([[1.0], [2.0], [3.0], [4.0]]), (4, 5))
    r = v @ w
    assert r.source.shape == (1, 3, 1)
    np.testing.assert_array_equal(r.materialize(), np.asarray(v) @ np.asarray(w))
    k = lazybcast.broadcast_to(np.array([[2.0]]), (4, 5))  # every entry 2, along k too
    np.testing.assert_array_equal((v @ k).materialize(), np.asarray(v) @ np.full((4, 5), 2.0))


def test_options_and_out_are_numpys():
    v = lazybcast.broadcast_to(np.array([1, 2, 3], dtype=np.int8), (4, 3))
    ref = np.asarray(v)
    w = np.ones((3, 2), dtype=np.int8)
    r = np.matmul(v, w, dtype=np.float32)
    assert type(r) is BroadcastView and r.source.shape == (1, 2) and r.dtype == np.float32
    np.testing.assert_array_equal(r.materialize(), np.matmul(ref, w, dtype=np.float32))
    out = np.zeros((4, 2), dtype=np.int8)
    assert np.matmul(v, w, out=out) is out
    np.testing.assert_array_equal(out, ref @ w)
    assert v.dot(w, out=np.zeros((4, 2), np.int8)).sum() == (ref @ w).sum()
    got = np.matmul(v, w.T, axes=[(-2, -1), (-1, -2), (-2, -1)])
    np.testing.assert_array_equal(got, np.matmul(ref, w.T, axes=[(-2, -1), (-1, -2), (-2, -1)]))
    with pytest.raises(ValueError, match="out= is a BroadcastView"):
        np.matmul(v, w, out=lazybcast.broadcast_to(np.zeros(2, np.int8), (4, 2)))


def test_dot_and_the_array_api_names():
    v = lazybcast.broadcast_to(np.array([1.0, 2.0]), (5, 2))
    ref = np.asarray(v)
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    for got, want in [(np.dot(v, m), np.dot(ref, m)), (v.dot(m), ref.dot(m)),
                      (np.dot(v, np.float32(2)), np.dot(ref, np.float32(2))),
                      (np.dot(3, v), np.dot(3, ref)),
                      (np.linalg.matmul(v, m), np.linalg.matmul(ref, m)),
                      (np.linalg.vecdot(v, m[0]), np.linalg.vecdot(ref, m[0]))]:
        assert type(got) is BroadcastView and got.source.size <= 2, got
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.materialize(), want)
    # A vecdot along another axis, and N-d dot: NumPy's, on the zero-copy arrays.
    np.testing.assert_array_equal(np.linalg.vecdot(v, v, axis=0), np.linalg.vecdot(ref, ref, axis=0))
    cube = lazybcast.broadcast_to(np.arange(6.0).reshape(1, 2, 3), (2, 2, 3))
    np.testing.assert_array_equal(np.dot(cube, np.ones((3, 2))), np.dot(np.asarray(cube), np.ones((3, 2))))


def test_an_unknown_gufunc_expands_its_core_axes():
    """A gufunc this module does not know (a determinant, ``(m,m)->()``): its core axes are
    expanded (they might not be elementwise), its loop axes stay compact."""
    det = getattr(getattr(np.linalg, "_umath_linalg", None), "det", None)
    if not isinstance(det, np.ufunc):
        pytest.skip("NumPy's private determinant gufunc is not there")
    m = np.array([[[2.0, 1.0]], [[1.0, 3.0]]]).reshape(1, 2, 2)
    v = lazybcast.broadcast_to(m, (50, 2, 2))
    r = det(v)
    assert type(r) is BroadcastView and r.shape == (50,) and r.source.shape == (1,)
    np.testing.assert_allclose(r.materialize(), det(np.asarray(v)))
    col = lazybcast.broadcast_to(np.array([[1.0], [2.0]]), (7, 2, 2))  # rows repeat in the core
    np.testing.assert_allclose(np.asarray(det(col)), det(np.asarray(col)))


def test_errors_are_numpys():
    v = lazybcast.broadcast_to(np.ones(3), (4, 3))
    ref = np.asarray(v)
    for args in [(v, np.ones((4, 2))), (v, 2.0), (np.ones(2), v)]:
        refs = tuple(ref if a is v else a for a in args)
        check(outcome(np.matmul, *args), outcome(np.matmul, *refs))
    assert math.prod((v @ np.ones(3)).source.shape) == 1


def test_empty_results_compute_no_element_numpy_would_not():
    """An empty view's source may hold values (a (1, 2) source of a (0, 2) view): they are
    not logical elements, so computing with them must not warn where NumPy does not."""
    src = np.full((1, 2), 3e38, np.float32)  # one row times ones would overflow
    v = lazybcast.broadcast_to(src, (0, 2))
    w = np.ones((2, 2), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = v @ w
        want = np.asarray(v) @ w
    assert type(got) is BroadcastView and got.shape == want.shape == (0, 2)
    assert got.dtype == want.dtype
    with pytest.warns(RuntimeWarning, match="overflow"):  # the same rows, not empty: it warns
        lazybcast.broadcast_to(src, (3, 2)) @ w


def test_scalar_core_signatures():
    """A gufunc with a scalar core ``()`` among its inputs gets all its operands (an earlier
    parser lost one), and a view's loop axes stay compact."""
    from lazybcast._gufuncs import _parse

    assert _parse("(i),()->()") == (((("i", False),), ()), ((),))
    assert _parse("(),(i)->()")[0] == ((), (("i", False),))
    tests = pytest.importorskip("numpy._core._umath_tests")
    v = lazybcast.broadcast_to(np.arange(3.0), (4, 3))
    gufunc = getattr(tests, "always_error_gufunc", None)
    if gufunc is not None:
        check(outcome(gufunc, v, np.float64(1.0)), outcome(gufunc, np.asarray(v), np.float64(1.0)))
    inner = getattr(tests, "inner1d", None)
    if inner is not None:
        r = inner(v, np.ones(3))
        assert type(r) is BroadcastView and r.source.shape == (1,)
        np.testing.assert_array_equal(r.materialize(), inner(np.asarray(v), np.ones(3)))


def test_other_array_types_keep_numpys_answer():
    """np.matrix, masked arrays and other dtypes: NumPy's result (type, mask, dtype, error),
    as on the zero-copy arrays."""
    v = lazybcast.broadcast_to(np.array([1.0, 2.0]), (3, 2))
    ref = np.asarray(v)
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        matrix = np.matrix(m)
    for other in (matrix, np.ma.masked_array(m, mask=[[0, 1], [0, 0]])):
        for func in (np.dot, np.matmul, lambda a, b: a @ b):
            got, want = outcome(func, v, other), outcome(func, ref, other)
            assert got[0] == want[0], (got, want)
            if got[0] == "ok":
                assert type(got[1]) is type(want[1])
                np.testing.assert_array_equal(np.ma.getdata(got[1]), np.ma.getdata(want[1]))
                assert np.array_equal(np.ma.getmaskarray(got[1]), np.ma.getmaskarray(want[1]))
            else:
                assert got[1] is want[1]
    td = lazybcast.broadcast_to(np.array([1, 2], dtype="m8[s]"), (3, 2))
    for b in (np.array([[1, 0], [0, 1]]), 2):
        got, want = outcome(np.dot, td, b), outcome(np.dot, np.asarray(td), b)
        assert got[0] == want[0] and (got[0] == "error" or np.array_equal(got[1], want[1]))


@st.composite
def einsum_case(draw):
    """``(subscripts, operands, oracles, compact)``: 1-3 operands over letters ``a``-``d``
    (sizes 0-3, an operand's axis sometimes of size 1: einsum broadcasts it), an implicit or
    explicit output, and the result's source shape the module promises (1 on an output
    letter along which every operand that has it repeats)."""
    dtype = draw(DTYPES)
    sizes = {c: draw(st.integers(1, 3)) for c in "abcd"}
    if draw(st.integers(0, 9)) == 0:
        sizes["a"] = 0  # empty: NumPy's path
    terms, ops, refs = [], [], []
    for _ in range(draw(st.integers(1, 3))):
        term = "".join(draw(st.permutations("abcd"))[:draw(st.integers(0, 3))])
        shape = tuple(1 if draw(st.integers(0, 4)) == 0 else sizes[c] for c in term)
        x, ref = draw(operand(shape, draw(DTYPES) if draw(st.booleans()) else dtype))
        terms.append(term)
        ops.append(x)
        refs.append(ref)
    used = sorted(set("".join(terms)))
    if draw(st.booleans()):
        output = "".join(draw(st.permutations(used))[:draw(st.integers(0, len(used)))])
        subscripts = ",".join(terms) + "->" + output
    else:
        output = "".join(c for c in used if "".join(terms).count(c) == 1)
        subscripts = ",".join(terms)
    compact = tuple(1 if all(_repeats(r, t.index(c)) for t, r in zip(terms, refs) if c in t)
                    else max(r.shape[t.index(c)] for t, r in zip(terms, refs) if c in t)
                    for c in output)
    return subscripts, ops, refs, compact


@given(einsum_case(), st.sampled_from([False, False, True, "greedy", "optimal"]))
def test_einsum_is_numpys_on_the_compact_operands(case, optimize):
    """``np.einsum``: NumPy's shapes, dtypes, values and errors; an output axis along which
    every operand repeats is computed once. With ``optimize``, the pairwise contractions run
    in NumPy's order for the logical shapes (each step promotes and wraps on its own)."""
    subscripts, ops, refs, compact = case
    lazy = any(type(x) is BroadcastView for x in ops)
    check(outcome(np.einsum, subscripts, *ops, optimize=optimize),
          outcome(np.einsum, subscripts, *refs, optimize=optimize), compact, lazy)


def test_einsum_options_and_other_spellings_are_numpys():
    v = lazybcast.broadcast_to(np.arange(3.0), (4, 3))
    ref = np.asarray(v)
    for args, kwargs in ((("ij,ij->i", v, v), {"dtype": np.float32, "casting": "same_kind"}),
                         (("ii->i", lazybcast.broadcast_to(np.arange(3.0), (3, 3))), {}),
                         (("...j->...", v), {}), (("ij->i", v), {"optimize": True}),
                         (("ij,jk", v, np.ones((3, 2))), {"casting": "no"})):
        expected = np.einsum(*(np.asarray(a) if type(a) is BroadcastView else a
                               for a in args), **kwargs)
        got = np.einsum(*args, **kwargs)
        got = got.materialize() if type(got) is BroadcastView else got
        np.testing.assert_array_equal(got, expected)
        assert np.asarray(got).dtype == expected.dtype
    out = np.empty(4)
    assert np.einsum("ij->i", v, out=out) is out
    np.testing.assert_array_equal(out, ref.sum(axis=1))


def test_einsum_contracts_in_numpys_order_for_the_logical_shapes():
    """An int8 step that wraps in another order: NumPy's path is the logical shapes' one."""
    a, b = np.full(2, 100, np.int8), np.ones((2, 2), np.uint8)
    c = lazybcast.broadcast_to(np.full((1, 2), 100, np.int8), (2, 2))
    got = np.einsum("k,ik,jk->ij", a, b, c, optimize=True)
    expected = np.einsum("k,ik,jk->ij", a, b, np.asarray(c), optimize=True)
    assert type(got) is BroadcastView and got.dtype == expected.dtype
    np.testing.assert_array_equal(got.materialize(), expected)


class _EinsumSpy:
    """``numpy`` for lazybcast._gufuncs, recording the operand shapes of each np.einsum."""

    def __init__(self):
        self.shapes = []

    def __getattr__(self, name):
        return getattr(np, name)

    def einsum(self, *args, **kwargs):
        self.shapes.append([np.shape(a) for a in args[1:]])
        return np.einsum(*args, **kwargs)


@pytest.mark.parametrize("subscripts, source, shape, operand", [
    ("ij->j", np.arange(4.0), (10**6, 4), (1, 4)),
    ("ij->", np.arange(4.0), (10**6, 4), (1, 4)),
    ("ij->i", np.arange(3.0).reshape(3, 1), (3, 10**6), (3, 1)),
    ("ijk->k", np.arange(2.0).reshape(1, 1, 2), (1000, 1000, 2), (1, 1, 2)),
])
def test_einsum_sums_a_repeated_axis_once(monkeypatch, subscripts, source, shape, operand):
    """A summed letter along which the operand repeats is summed once and scaled: NumPy's
    einsum sees the source, not the logical operand (it expanded it, at full cost)."""
    import lazybcast._gufuncs as gufuncs

    spy = _EinsumSpy()
    monkeypatch.setattr(gufuncs, "np", spy)
    got = np.einsum(subscripts, lazybcast.broadcast_to(source, shape))
    assert spy.shapes == [[operand]]
    letters, output = subscripts.split("->")
    source = source.reshape((1,) * (len(shape) - source.ndim) + source.shape)
    expected = np.einsum(subscripts, source) * math.prod(
        n for c, n, m in zip(letters, shape, source.shape) if c not in output and m == 1)
    np.testing.assert_array_equal(np.asarray(got), np.broadcast_to(expected, np.shape(got)))


@pytest.mark.parametrize("dtype, value", [
    (np.int8, 100), (np.uint8, 200), (np.int64, 2**62), (np.bool_, True), (np.float16, 60000.0),
    (np.float32, 0.1), (np.complex64, 1 + 2j), (np.float16, 0.0), (np.float16, 1e-3),
    (np.complex128, np.inf), (np.complex64, complex(np.inf, -np.inf)), (np.float64, np.nan),
])
def test_einsum_scaled_sums_wrap_and_overflow_as_numpys(dtype, value):
    """Integers wrap as NumPy's sum of the repeats does, booleans stay True, float16
    overflows to inf without a warning (as NumPy's einsum does); a size past float16's range
    (90000 terms) scales a float16 value correctly (it was cast to float16 first: inf, or NaN
    for 0), and infinite complex parts stay so (``inf + 0j`` gained a NaN part)."""
    source = np.full((1, 3), value, dtype)
    view = lazybcast.broadcast_to(source, (30000, 3))  # (90000 terms for "ij->")
    ref = np.broadcast_to(source, (30000, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for subscripts in ("ij->j", "ij->", "ij"):
            got, want = np.einsum(subscripts, view), np.einsum(subscripts, ref)
            got = np.asarray(got)
            assert got.dtype == want.dtype and got.shape == want.shape
            if got.dtype.kind not in "fc":
                np.testing.assert_array_equal(got, want)
                continue
            # NumPy adds float16 and float32 terms in their own precision, and drifts (float16
            # 0.001 x 90000: 8.0); lazybcast's is the sum in float64 rounded once.
            wide = np.complex128 if got.dtype.kind == "c" else np.float64
            with np.errstate(over="ignore"):  # (float16 60000 x 300: inf, as NumPy's)
                exact = np.einsum(subscripts, ref.astype(wide)).astype(got.dtype)
            np.testing.assert_allclose(got, exact, rtol=1e-3 if dtype == np.float16 else 1e-6)
