"""Reductions of views at source cost: a broadcast axis only repeats values.

Reducing along a broadcast axis of size ``n`` is algebra on the source (the sums, products and
the like: :mod:`lazybcast._repetition`): a sum is ``n`` times the source's sum, a product its
``n``-th power, a minimum, maximum, ``any`` or ``all`` is unchanged, ``argmin`` / ``argmax``
along it are 0 (means and variances: :mod:`lazybcast._moments`, on this module's plan).
Everything else runs in NumPy on the compact source, so the cost
follows the source's size, not the logical size. Results that still repeat along the kept axes
are views again; 0-d results are NumPy scalars, as NumPy returns.

A ``where=`` mask that repeats too (a boolean view, a boolean array of fewer axes or with
stride-0 axes, a Python bool) is reduced with the source on their joint compact shape: each of
its cells is one logical element and its mask, repeated alike along the axes both leave
broadcast, so the algebra above holds cell by cell (:mod:`lazybcast._masks`). Other masks,
precomputed ``mean=`` and 0-d views run in NumPy on the zero-copy ``np.asarray(view)``.

>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.arange(4.0), (1000, 4))
>>> v.sum(axis=0)
BroadcastView(shape=(4,), dtype=float64, mode='numpy', source_shape=(4,), logical=32 B, held=32 B)
>>> r = v.sum(axis=1)
>>> r.shape, r.source.shape, float(r[0])
((1000,), (1,), 6.0)
>>> v.sum(), v.mean(), v.argmax()
(np.float64(6000.0), np.float64(1.5), np.int64(3))
"""

import builtins

import numpy as np

from lazybcast import _kernels
from lazybcast._axis_args import _reduction_axes, _refuse_non_axes, keepdims_flag
from lazybcast._masks import counted as _counted
from lazybcast._masks import masked as _masked
from lazybcast._masks import once as _once
from lazybcast._masks import zero_ties as _zero_ties
from lazybcast._repetition import (KIND, narrow, reported, rounded, rounded_scalar, scale,
                                   wide)
from lazybcast._ufuncs import _check_writeable, _squash
from lazybcast._view import BroadcastView, make_view

__all__ = [
    "all", "any", "max", "min", "nanmax", "nanmin", "nanprod", "nansum", "prod", "reduce", "sum",
    "ufunc_reduce",
]

_NoValue = np._NoValue

#: The NaN-ignoring NumPy function for a reduction ufunc (NaN counts as the identity).
_NAN_NAMES: dict[np.ufunc, str] = {np.add: "nansum", np.multiply: "nanprod", np.minimum: "nanmin",
              np.maximum: "nanmax"}


# -- the plan: axes, source, repeats ------------------------------------------------------------


def _source(view, axes):
    """The view's source, cut to size 0 along the view's empty axes (so NumPy sees an empty
    reduction exactly where the logical array is empty). An empty reduction gives the same
    value (identity, initial, NaN) in every cell: then one cell is computed."""
    src = view._source
    if 0 in view.shape:
        empty = builtins.any(view.shape[d] == 0 for d in axes)
        src = src[tuple(slice(0, 0) if n == 0 else slice(0, 1) if empty and d not in axes
                        else slice(None) for d, n in enumerate(view.shape))]
    return src


def _repeated(view, src, axes):
    """The axes among ``axes`` along which the view repeats each element of ``src`` (its
    source, or a cut of it)."""
    return tuple(d for d in axes if src.shape[d] == 1 and view.shape[d] > 1)


def _repeats(view, src, axes):
    """How many times each source element is repeated within one reduced cell."""
    k = 1
    for d in _repeated(view, src, axes):
        k *= view.shape[d]
    return k


def _result_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _temp(src, axes, out):
    """Keyword arguments for a source reduction that writes where ``out`` wants it: a compact
    temporary of ``out``'s dtype, so NumPy resolves the loop and checks the casting as it would
    for ``out`` itself."""
    if out is None:
        return {}
    shape = tuple(1 if d in axes else n for d, n in enumerate(src.shape))
    return {"out": np.empty(shape, out.dtype)}


def _out_fits(out, shape):
    """None (no out), True (an ndarray of the result's shape), or False (NumPy decides: also
    for an out whose items share bytes, which NumPy's own loop writes in its order)."""
    if out is None:
        return None
    _check_writeable(out)
    return (type(out) is np.ndarray and out.shape == shape
            and not _kernels.overlaps_itself(out))


def _finish(r, view, axes, keepdims, out):
    """The compact result ``r`` (reduced axes kept, size 1) as NumPy returns it."""
    if keepdims:
        full = _result_shape(view.shape, axes, True)
    elif len(axes) == 1:  # (the common case, by slicing)
        a = axes[0]
        full = view.shape[:a] + view.shape[a + 1:]
        r = r.reshape(r.shape[:a] + r.shape[a + 1:])
    else:
        full = _result_shape(view.shape, axes, False)
        r = r.reshape([n for d, n in enumerate(r.shape) if d not in axes])
    if out is not None:
        make_view(r, r.shape, full, "numpy").materialize(out=out)
        return out
    if not full:
        return r[()]
    return make_view(r, r.shape, full, "numpy")


def _is_object(view, dtype=None):
    """Object dtype reduces in NumPy (repeated ``+`` and comparisons of the Python objects,
    which the repetition algebra would skip or replace with ``*``)."""
    return view.dtype.kind == "O" or (dtype is not None and np.dtype(dtype).kind == "O")


def _numpy(name, view, **kwargs):
    """``np.<name>`` on the zero-copy ``np.asarray(view)``; unset arguments stay unset."""
    kwargs = {k: v for k, v in kwargs.items()
              if v is not _NoValue and not (k == "dtype" and v is None)}
    _check_writeable(kwargs.get("out"))
    func = getattr(np, name) if isinstance(name, str) else name.reduce
    return func(np.asarray(view), **kwargs)


# -- ufunc.reduce and the methods built on it ----------------------------------------------------


def reduce(ufunc, view, axis=0, dtype=None, out=None, keepdims=False, initial=_NoValue,
           where=True, *, nan=False):
    """``ufunc.reduce(view, ...)`` at source cost for the ufuncs in
    :data:`lazybcast._repetition.KIND`.

    Parameters are :meth:`numpy.ufunc.reduce`'s (``out`` an array: the methods refuse a
    tuple, as ndarray's do; :func:`ufunc_reduce` unpacks NumPy's). ``nan=True`` reduces as
    NumPy's NaN-ignoring function does (``np.nansum`` for ``np.add``, ...).

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> v = lazybcast.broadcast_to(np.array([100, 3], dtype=np.int8), (300, 2))
    >>> reduce(np.add, v, axis=0, dtype=np.int8).materialize()  # wraps as NumPy's sum does
    array([ 48, -124], dtype=int8)
    """
    if type(out) is tuple:  # (what ndarray's methods and NumPy's functions raise)
        raise TypeError("return arrays must be of ArrayType")
    keepdims = keepdims_flag(keepdims)
    kind = KIND.get(ufunc)
    if axis is not None and type(axis) is not int:
        _refuse_non_axes(axis, view.ndim)  # (NumPy's errors first)
    if initial is _NoValue and not nan and _whole_call(view, axis, out, keepdims, where):
        whole = _whole(ufunc, kind, view, dtype)
        if whole is not None:
            return whole
    plain = kind is not None and view.ndim > 0 and not _is_object(view, dtype)
    if plain:
        axes = _reduction_axes(axis, view.ndim)
        plain = out is None or (_out_fits(out, _result_shape(view.shape, axes, keepdims))
                                and (out.dtype.kind not in "mM" or view.dtype.kind in "mM"))
        # (numbers into a timedelta out: NumPy's loop takes no dtype= with a unit)
    masked = plain and _masked(view, where)
    if not plain or masked is None:
        return _numpy(_NAN_NAMES[ufunc] if nan else ufunc, view, axis=axis, dtype=dtype,
                      out=out, keepdims=keepdims, initial=initial, where=where)
    numpy_reduce = getattr(np, _NAN_NAMES[ufunc]) if nan else ufunc.reduce
    empty = 0 in view.shape and builtins.any(view.shape[d] == 0 for d in axes)
    mask = True
    counts = None
    if masked and not empty:  # (an empty reduction is the identity or initial, mask or not)
        src, mask = masked
        counted = (_counted(view, mask, axes) if kind == "times" or (
            kind == "same" and not _zero_ties(ufunc, nan, view._source, initial)) else None)
        if counted is not None:  # (counts of the mask where the source repeats)
            src, counts, counted_axes, mask = counted
            if kind == "same":
                # each result cell's own mask: NumPy reduces nothing into a cell that selects
                # nothing (``initial``, the identity), converting ``initial`` once and
                # warning as it does (its "All-NaN slice" too), and refuses a mask without
                # ``initial`` for ufuncs without an identity
                mask = np.broadcast_to(counts > 0, src.shape)
    else:
        src = _source(view, axes)
    masking = {} if mask is True else {"where": mask}
    if counts is None:
        k = 0 if empty else _repeats(view, src, axes)
    else:  # each cell's count of selected elements along the counted axes, times the rest
        k = counts * _repeats(view, src, tuple(d for d in axes if d not in counted_axes))
    kwargs = _temp(src, axes, out)
    if dtype is not None:
        kwargs["dtype"] = dtype
    late = None if empty else _late_out(ufunc, src, axes, kwargs.get("out"), dtype)
    start = None
    if late is not None:
        # NumPy's loop runs in another dtype than out's: it writes ``initial`` into out (in
        # out's dtype), joins the values with it in the loop's dtype and casts the result
        # into out. The values are reduced in the loop's dtype here, cast into out once.
        del kwargs["out"]
        late, loop = late
        if initial is not _NoValue:
            start = _initial(ufunc, initial, src.dtype, late.dtype, dtype).astype(loop)
            if kind in ("same", "abs"):
                kwargs["initial"] = start[()]
        kwargs.pop("dtype", None)
        if loop.kind in "mM" or src.dtype.kind in "mM":
            if loop != src.dtype or dtype is not None:
                # (NumPy's datetime loops take no dtype= with a unit: its own steps)
                return _numpy(_NAN_NAMES[ufunc] if nan else ufunc, view, axis=axis,
                              dtype=dtype, out=out, keepdims=keepdims, initial=initial,
                              where=where)
        elif nan and kind == "same":
            if loop != src.dtype:  # (np.nanmax takes no dtype=; a widening cast keeps the
                # order, so the extreme is the same value; the distinct cells only)
                src = np.broadcast_to(_squash(src).astype(loop), src.shape)
        else:  # (also the source's own dtype: without it, small integers would sum wider)
            kwargs["dtype"] = loop
    elif initial is not _NoValue and (empty or kind in ("same", "abs")):
        kwargs["initial"] = initial
    if counts is not None and kind == "times" or (counts is None and k > 1 and kind in (
            "times", "power") and src.dtype.kind in "biufc"):
        r = _scaled(numpy_reduce, src, axes, kind, k, kwargs, kwargs.get("dtype"), masking)
    else:
        r = _once(numpy_reduce, src, axes, masking, **kwargs)
        # (counted min, max, any, all: k is an array of counts, and repeats change nothing)
        if counts is None and k > 1 and kind == "abs" and masking:
            # gcd(a, a) == |a| where the mask selects something; elsewhere the cell holds
            # the identity or ``initial`` (which may be negative), as NumPy's
            np.absolute(r, out=r, where=np.logical_or.reduce(mask, axis=axes, keepdims=True))
        elif counts is None and k > 1:
            r = scale(r, kind, k)
    if initial is not _NoValue and not empty and kind not in ("same", "abs"):
        # (same and abs: ``initial`` went into the loop above)
        if start is None:
            start = _initial(ufunc, initial, src.dtype, r.dtype, dtype)
        ufunc(start, r, out=r)  # initial first, as NumPy (strings do not commute)
    if late is not None:
        np.copyto(late, r, casting="unsafe")
        r = late
    return _finish(r, view, axes, keepdims, out)


def _initial(ufunc, initial, src_dtype, out_dtype, dtype):
    """``initial`` as NumPy converts it (NEP 50: out of range raises), into out's dtype (a
    0-d array): the reduction of nothing into one."""
    return ufunc.reduce(np.empty(0, src_dtype), initial=initial, out=np.empty((), out_dtype),
                        **({} if dtype is None else {"dtype": dtype}))


def _late_out(ufunc, src, axes, temp, dtype):
    """``(temp, the loop's dtype)`` when NumPy's reduction into ``out`` (``temp``: its compact
    temporary from :func:`_temp`, or None) runs its
    loop in another dtype than out's (``dtype=``, or a source of a wider kind: float64 values
    summed into an int8 out are added in float64), once NumPy has checked the casting on a
    reduction of one element along the first reduced axis (empty, it would raise for
    ufuncs without an identity; by ``ufunc.reduce`` itself, which casts as the NaN-ignoring
    functions do, without their "All-NaN slice" warning); else None."""
    if temp is None:
        return None
    if dtype is not None:
        loop = np.dtype(dtype)
    else:
        try:
            loop = ufunc.resolve_dtypes((temp.dtype, src.dtype, None), casting="unsafe",
                                        reduction=True)[2]
        except (TypeError, ValueError):
            return None  # (NumPy's own error follows, from the reduction itself)
    if loop == temp.dtype:
        return None
    cut = (slice(None),) * (axes[0] if axes else 0) + (slice(0, 1),)
    with np.errstate(all="ignore"):  # (one element, written over later)
        ufunc.reduce(src[cut], axis=axes, keepdims=True, out=temp if axes else temp[cut],
                     **({} if dtype is None else {"dtype": dtype}))  # (axis=(): elementwise)
    return temp, loop


def _scaled(numpy_reduce, src, axes, kind, k, kwargs, dtype, masking):
    """The sum or product of ``k`` repetitions of the source's reduction along ``axes``
    (``kwargs``: ``dtype`` and the temporary ``out`` of :func:`_temp`, if any; ``masking``:
    the ``where=`` of a masked reduction, or nothing), computed
    in the dtype NumPy computes in: ``dtype``, else ``out``'s, else NumPy's default for the
    source. float16/32 (complex64) are computed in float64 and rounded once (NumPy rounds
    every partial sum); the result is cast into ``out``'s dtype last, as NumPy casts it."""
    if not kwargs:
        calc, calc_arg = src.dtype.newbyteorder("="), None
    else:
        # NumPy resolves the dtype (and checks out='s casting) on an empty reduction: no
        # value computed, no warning.
        cut = src[(slice(None),) * axes[0] + (slice(0, 0),)]
        calc = numpy_reduce(cut, axis=axes, keepdims=True, **kwargs).dtype
        calc = calc_arg = np.dtype(dtype) if dtype is not None else calc
    if narrow(calc):
        r = rounded(scale(_once(numpy_reduce, src, axes, masking, dtype=wide(calc)), kind, k),
                    calc)
    else:
        r = scale(_once(numpy_reduce, src, axes, masking, dtype=calc_arg), kind, k)
    temp = kwargs.get("out")
    if temp is None:
        return r
    if r.dtype.kind in "fc" and temp.dtype.kind in "fc" and r.dtype != temp.dtype:
        return rounded(r, temp.dtype, temp)  # (an overflow reported as NumPy's reduce does)
    np.copyto(temp, r, casting="unsafe")
    return temp


def _whole(ufunc, kind, view, dtype):
    """``ufunc.reduce(view, axis=None, dtype=dtype)`` without other options, for the most
    common calls (``view.max()``, ``view.sum()``, ``view.any()``, ``view.prod()``) at a
    fraction of the general path's overhead: a minimum, maximum, ``all`` or ``any`` is the
    source's own; a real floating sum (product) is the source's in float64 (or wider) times (to
    the power of) the repetition, rounded once, as the general path computes it. None for
    everything else. (A 4x4 float32 view, Zen 3: ``max`` 6.9 -> 2.0 us, ``sum`` 15.4 -> 3.2
    us; NumPy's on ``np.broadcast_to`` 1.4 us.)"""
    src = view._source
    if kind == "same" and src.dtype.kind != "O":
        return ufunc.reduce(src, axis=None, dtype=dtype)
    if kind not in ("times", "power") or dtype is not None or src.dtype.kind != "f":
        return None  # (complex sums: the general path scales each part on its own)
    k = view.size // src.size
    if k == 1:
        return ufunc.reduce(src, axis=None)
    w = wide(src.dtype)
    total = ufunc.reduce(src, axis=None, dtype=w)
    if kind == "times":  # (a float16/32 sum in float64 cannot overflow: see _repetition.times)
        return rounded_scalar(total * k if narrow(src.dtype) else
                              reported(np.multiply, total, w.type(k)), src.dtype)
    return rounded_scalar(reported(np.power, total, w.type(k)), src.dtype)


def _whole_call(view, axis, out, keepdims, where):
    """True for a call over the whole of a non-empty view without options (``axis=None``,
    no ``out``, ``keepdims`` or ``where``): the short paths' case."""
    return (axis is None and out is None and not keepdims and where is True and view.ndim > 0
            and 0 not in view.shape)


def _one_array(outs):
    """True for a tuple ``out=`` that NumPy's ufunc methods take apart: one array."""
    return len(outs) == 1 and type(outs[0]) in (np.ndarray, BroadcastView)


def ufunc_reduce(ufunc, inputs, kwargs):
    """``ufunc.reduce`` from ``__array_ufunc__``: lazy for a view, NumPy's otherwise."""
    out = kwargs.get("out")
    if len(inputs) != 1 or type(inputs[0]) is not BroadcastView or (
            type(out) is tuple and not _one_array(out)):
        from lazybcast._ufuncs import _numpy as numpy_method

        return numpy_method(ufunc, "reduce", inputs, kwargs)
    if type(out) is tuple:  # (NumPy passes out= to the protocol as a tuple)
        kwargs = {**kwargs, "out": out[0]}
    return reduce(ufunc, inputs[0], **kwargs)


def sum(view, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """``view.sum()``: ``numpy.ndarray.sum`` at source cost."""
    return reduce(np.add, view, axis, dtype, out, keepdims, initial, where)


def prod(view, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """``view.prod()``: ``numpy.ndarray.prod`` at source cost."""
    return reduce(np.multiply, view, axis, dtype, out, keepdims, initial, where)


def min(view, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """``view.min()``: ``numpy.ndarray.min`` at source cost."""
    return reduce(np.minimum, view, axis, None, out, keepdims, initial, where)


def max(view, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """``view.max()``: ``numpy.ndarray.max`` at source cost."""
    return reduce(np.maximum, view, axis, None, out, keepdims, initial, where)


def any(view, axis=None, out=None, keepdims=False, *, where=True):
    """``view.any()``: ``numpy.ndarray.any`` at source cost."""
    return reduce(np.logical_or, view, axis, bool, out, keepdims, _NoValue, where)


def all(view, axis=None, out=None, keepdims=False, *, where=True):
    """``view.all()``: ``numpy.ndarray.all`` at source cost."""
    return reduce(np.logical_and, view, axis, bool, out, keepdims, _NoValue, where)


# -- NaN-ignoring variants (np.nansum, ...): the same algebra, NaN counted as absent -----------


def nansum(view, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
           where=True):
    """``np.nansum(view)`` at source cost."""
    return reduce(np.add, view, axis, dtype, out, keepdims, initial, where, nan=True)


def nanprod(view, axis=None, dtype=None, out=None, keepdims=False, initial=_NoValue,
            where=True):
    """``np.nanprod(view)`` at source cost."""
    return reduce(np.multiply, view, axis, dtype, out, keepdims, initial, where, nan=True)


def nanmin(view, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """``np.nanmin(view)`` at source cost (``out`` may be a 1-tuple: NumPy's calls
    ``np.fmin.reduce``)."""
    return _nan_extreme("nanmin", np.minimum, view, axis, out, keepdims, initial, where)


def nanmax(view, axis=None, out=None, keepdims=False, initial=_NoValue, where=True):
    """``np.nanmax(view)`` at source cost (``out`` may be a 1-tuple, as for ``nanmin``)."""
    return _nan_extreme("nanmax", np.maximum, view, axis, out, keepdims, initial, where)


def _nan_extreme(name, ufunc, view, axis, out, keepdims, initial, where):
    if type(out) is tuple:
        if not _one_array(out):
            # (NumPy's own error: a tuple of another length, or of something not an array)
            return _numpy(name, view, axis=axis, out=out, keepdims=keepdims, initial=initial,
                          where=where)
        out = out[0]
    return reduce(ufunc, view, axis, None, out, keepdims, initial, where, nan=True)
