# Included by _view.pyx: the operators of a BroadcastView, as NumPy's NDArrayOperatorsMixin
# gives them to a duck array (a cdef class cannot inherit that Python mixin). Each is a one-line
# delegation: the logic is in lazybcast._ufuncs (__array_ufunc__: elementwise, at source cost),
# lazybcast._operators (the operators) and lazybcast._functions (NumPy's functions on views).


@cython.auto_pickle(False)
cdef class _ArrayOperators(_Materializing):
    """The ``__array_ufunc__`` / ``__array_function__`` protocols and Python's operators of a
    :class:`BroadcastView` (a base class of it; never instantiated on its own)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _mod(1).array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _mod(3).array_function(func, types, args, kwargs)

    def __add__(self, other): return _mod(5).binary(np.add, self, other)
    def __radd__(self, other): return _mod(5).binary(np.add, other, self)
    def __sub__(self, other): return _mod(5).binary(np.subtract, self, other)
    def __rsub__(self, other): return _mod(5).binary(np.subtract, other, self)
    def __mul__(self, other): return _mod(5).binary(np.multiply, self, other)
    def __rmul__(self, other): return _mod(5).binary(np.multiply, other, self)
    def __truediv__(self, other): return _mod(5).binary(np.true_divide, self, other)
    def __rtruediv__(self, other): return _mod(5).binary(np.true_divide, other, self)
    def __floordiv__(self, other): return _mod(5).binary(np.floor_divide, self, other)
    def __rfloordiv__(self, other): return _mod(5).binary(np.floor_divide, other, self)
    def __mod__(self, other): return _mod(5).binary(np.remainder, self, other)
    def __rmod__(self, other): return _mod(5).binary(np.remainder, other, self)
    def __divmod__(self, other): return _mod(5).binary(np.divmod, self, other)
    def __rdivmod__(self, other): return _mod(5).binary(np.divmod, other, self)
    def __pow__(self, other, mod=None):
        return NotImplemented if mod is not None else _mod(5).binary(np.power, self, other)
    def __rpow__(self, other, mod=None):
        return NotImplemented if mod is not None else _mod(5).binary(np.power, other, self)
    def __matmul__(self, other): return _mod(5).binary(np.matmul, self, other)
    def __rmatmul__(self, other): return _mod(5).binary(np.matmul, other, self)
    def __lshift__(self, other): return _mod(5).binary(np.left_shift, self, other)
    def __rlshift__(self, other): return _mod(5).binary(np.left_shift, other, self)
    def __rshift__(self, other): return _mod(5).binary(np.right_shift, self, other)
    def __rrshift__(self, other): return _mod(5).binary(np.right_shift, other, self)
    def __and__(self, other): return _mod(5).binary(np.bitwise_and, self, other)
    def __rand__(self, other): return _mod(5).binary(np.bitwise_and, other, self)
    def __or__(self, other): return _mod(5).binary(np.bitwise_or, self, other)
    def __ror__(self, other): return _mod(5).binary(np.bitwise_or, other, self)
    def __xor__(self, other): return _mod(5).binary(np.bitwise_xor, self, other)
    def __rxor__(self, other): return _mod(5).binary(np.bitwise_xor, other, self)
    def __lt__(self, other): return _mod(5).binary(np.less, self, other)
    def __le__(self, other): return _mod(5).binary(np.less_equal, self, other)
    def __gt__(self, other): return _mod(5).binary(np.greater, self, other)
    def __ge__(self, other): return _mod(5).binary(np.greater_equal, self, other)
    def __eq__(self, other): return _mod(5).equality(np.equal, self, other)
    def __ne__(self, other): return _mod(5).equality(np.not_equal, self, other)
    # In place: NumPy's ufunc with out=self, which raises NumPy's read-only ValueError.
    def __iadd__(self, other): return _in_place(np.add, self, other)
    def __isub__(self, other): return _in_place(np.subtract, self, other)
    def __imul__(self, other): return _in_place(np.multiply, self, other)
    def __itruediv__(self, other): return _in_place(np.true_divide, self, other)
    def __ifloordiv__(self, other): return _in_place(np.floor_divide, self, other)
    def __imod__(self, other): return _in_place(np.remainder, self, other)
    def __ipow__(self, other, mod=None): return _in_place(np.power, self, other)
    def __imatmul__(self, other): return _in_place(np.matmul, self, other)
    def __ilshift__(self, other): return _in_place(np.left_shift, self, other)
    def __irshift__(self, other): return _in_place(np.right_shift, self, other)
    def __iand__(self, other): return _in_place(np.bitwise_and, self, other)
    def __ior__(self, other): return _in_place(np.bitwise_or, self, other)
    def __ixor__(self, other): return _in_place(np.bitwise_xor, self, other)
    def __neg__(self): return np.negative(self)
    def __pos__(self): return np.positive(self)
    def __abs__(self): return np.absolute(self)
    def __invert__(self): return np.invert(self)

    __hash__ = None  # elementwise ==, as ndarray


def _in_place(ufunc, view, other):
    """``view <op>= other``: a view is read-only, so this raises NumPy's error for a read-only
    array (rather than Python's fallback ``view = view <op> other``, a silent rebinding)."""
    raise ValueError(
        f"output array is read-only: a BroadcastView cannot be updated in place "
        f"(np.{ufunc.__name__} with out=view); use view.materialize() for a writeable copy, "
        f"or write view = view <op> other for a new lazy view"
    )

