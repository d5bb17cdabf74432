"""Python's operators on views (``BroadcastView.__add__``, ``__eq__``, ...): the ufunc each
stands for, computed at source cost by :mod:`lazybcast._ufuncs` without the round trip
through NumPy's override protocol, and NumPy's deferrals kept (an operand that opted out of
ufuncs gets its reflected operator; an ndarray subclass whose type NumPy's results keep, or
an operand without ``__array_ufunc__`` but with an ``__array_priority__``, gets ndarray's
operator on the zero-copy arrays, which defers to it as it does for np.broadcast_to arrays).

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.arange(3), (1000, 3))
>>> binary(np.add, v, 1).source
array([[1, 2, 3]])
"""

import operator

import numpy as np

from lazybcast._ufuncs import (_NDARRAY_UFUNC, _PLAIN, _PY_SCALARS, ARRAYS, _as_numpy,
                               _keeps_its_type, elementwise)
from lazybcast._view import BroadcastView

__all__ = ["binary", "equality"]

#: Python's operator for each ufunc that BroadcastView's operators call (see binary).
_OPERATORS = {
    np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
    np.true_divide: operator.truediv, np.floor_divide: operator.floordiv,
    np.remainder: operator.mod, np.divmod: divmod, np.power: operator.pow,
    np.matmul: operator.matmul, np.left_shift: operator.lshift,
    np.right_shift: operator.rshift, np.bitwise_and: operator.and_,
    np.bitwise_or: operator.or_, np.bitwise_xor: operator.xor, np.less: operator.lt,
    np.less_equal: operator.le, np.greater: operator.gt, np.greater_equal: operator.ge,
    np.equal: operator.eq, np.not_equal: operator.ne,
}


def _scalar(x):
    """True for the exponents NumPy's ``ndarray ** x`` may take a shortcut for: 0-d ones of
    exact types (a subclass of int or float may defer, as NumPy lets it: see binary)."""
    t = type(x)
    if t in _PY_SCALARS or isinstance(x, np.generic):
        return True
    return t in ARRAYS and x.ndim == 0


#: Types whose ``__array_priority__`` NumPy never reads (its lookup skips Python's basic types).
_BASIC = frozenset((list, tuple, dict, set, frozenset, str, bytes, bytearray, memoryview,
                    range, slice, type(Ellipsis)))


def _may_defer(x):
    """Whether NumPy's legacy rule (``binop_should_defer``) may give ``x`` the operator in
    ``arr op x``: no ``__array_ufunc__`` on its type, an ``__array_priority__`` (exact NumPy
    scalars and Python's basic types aside). ndarray's own operator then decides."""
    t = type(x)
    if t in _PLAIN or t in _BASIC or hasattr(t, "__array_ufunc__"):
        return False
    if isinstance(x, np.generic) and t.__module__ == "numpy":
        return False  # (NumPy's scalars: its quick case, never deferred to)
    return getattr(x, "__array_priority__", None) is not None


def binary(ufunc, a, b):
    """``ufunc(a, b)`` for a Python operator, or NotImplemented if the other operand opted
    out of ufuncs (``__array_ufunc__ = None``), as ``NDArrayOperatorsMixin`` does.

    ``view ** x`` of a 0-d ``x`` is ndarray's ``**`` on the source, not ``np.power``: NumPy
    computes ``arr ** 2`` as ``np.square`` (for every dtype from NumPy 2.4: ``bool ** 2`` is
    int8), ``** 0.5`` as ``np.sqrt`` (for complex numbers one ULP apart from ``np.power``)
    and ``** -1`` as ``np.reciprocal``, with rules that changed in 2.3 and 2.4 (before 2.3,
    NumPy scalars and 0-d arrays took them too, so the exponent stays 0-d); the operator on
    the source follows the installed NumPy's."""
    if ufunc is np.power and type(a) is BroadcastView and _scalar(b):
        exponent = b._source if type(b) is BroadcastView else b
        return elementwise(lambda source: source ** exponent, (a,))
    other = type(b) if type(a) is BroadcastView else type(a)
    if other in _PLAIN and ufunc.signature is None:
        # What ufunc(a, b) would reach through NumPy's override protocol (__array_ufunc__,
        # then array_ufunc: nothing defers, no out=), without its cost: about 10 us less per
        # call, a fifth of a 512 x 512 float32 add (Zen 3).
        return elementwise(ufunc, (a, b))
    if type(a) is BroadcastView and _may_defer(b):
        # ndarray's operator on the zero-copy array: NumPy's legacy deferral (an operand
        # with a higher __array_priority__, such as a scipy.sparse matrix or a torch
        # tensor, gets its reflected method with that ndarray, which it knows), else
        # NumPy's ufunc (a full-size ndarray result, as np.broadcast_to's gives).
        return _OPERATORS[ufunc](_as_numpy(a), b)
    if other not in _PLAIN and getattr(other, "__array_ufunc__", _NDARRAY_UFUNC) is None:
        return NotImplemented
    if other not in _PLAIN and _keeps_its_type(other) and ufunc in _OPERATORS:
        # ndarray's operator on the zero-copy arrays, which defers to the subclass's own
        # (a masked array's __radd__ and its mask) as it does for np.broadcast_to arrays.
        return _OPERATORS[ufunc](_as_numpy(a), _as_numpy(b))
    return ufunc(a, b)


#: Operands that a structured view compares with on its compact source (see equality).
_STRUCTURED_PEERS = _PLAIN | {list, tuple}


def _compares_as_ndarray(other):
    """True unless ``other`` is an ndarray subclass (a masked array keeps its mask) or an
    object that NumPy's operators defer to or dispatch on (``__array_ufunc__``,
    ``__array_priority__``): those take the general path, as they did."""
    t = type(other)
    if t in _STRUCTURED_PEERS or isinstance(other, np.generic):
        return True
    if isinstance(other, np.ndarray):
        return False
    return not (hasattr(t, "__array_ufunc__") or hasattr(t, "__array_priority__"))


def equality(ufunc, a, b):
    """``==`` and ``!=``: elementwise; where NumPy has no loop for the dtypes, what
    ``ndarray.__eq__`` answers on the zero-copy arrays (all False, or all True for ``!=``).
    A structured view compares as ndarray's operator does, on the compact sources: field by
    field, and a TypeError against unstructured operands (``np.equal`` would compare them as
    objects), unless the other operand is one ndarray's operator leaves to its own rules
    (:func:`_compares_as_ndarray`)."""
    view, other = (a, b) if type(a) is BroadcastView else (b, a)
    if view.dtype.kind == "V" and _compares_as_ndarray(other):
        return elementwise(operator.eq if ufunc is np.equal else operator.ne, (a, b))
    try:
        return binary(ufunc, a, b)
    except TypeError:
        a, b = _as_numpy(a), _as_numpy(b)
        return a == b if ufunc is np.equal else a != b
