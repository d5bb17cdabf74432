"""Shape algebra: the broadcast rules of every mode, argument validation and error text.

Pure logic over tuples of ints; no buffers. Each public mode resolves to a *plan*: the output
shape plus the *aligned source shape*, the data's shape padded with size-1 axes so that it has
the output's rank and every axis is either equal to the output's or 1. The view then holds
``data.reshape(aligned)`` and gives stride 0 to every axis where the two differ.

Where OpenVINO has an error message for the same fault, the text below uses its wording
(``src/core/shape_inference/include/broadcast_shape_inference.hpp``), followed by what would be
allowed.
"""

import operator
import sys

import numpy as np

__all__ = [
    "MODES",
    "as_shape",
    "check_count",
    "check_dims",
    "check_size",
    "normalize_mode",
    "plan",
]

MODES = ("numpy", "explicit", "bidirectional", "pdpd")

#: Largest number of elements or bytes a view may describe: what ``np.intp`` can index.
MAX_INTP = sys.maxsize


def _as_index(value, name, position):
    """One integer of a shape-like argument, as NumPy's shape converter reads it: anything with
    ``__index__`` except a bool; an ``__index__`` that raises is a ``TypeError`` here."""
    if type(value) is int:
        return value
    what = name if position is None else f"{name}[{position}]"
    if isinstance(value, (bool, np.bool_)) or not hasattr(type(value), "__index__"):
        raise TypeError(
            f"{what} must be an integer, got {type(value).__name__} {value!r}; "
            f"{name} is a 1-D sequence of integers"
        )
    try:
        return operator.index(value)
    except Exception as exc:  # noqa: BLE001 - whatever __index__ raised, the value is no integer
        raise TypeError(
            f"{what} must be an integer, but {type(value).__name__}.__index__ raised "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def _is_sequence(value):
    """Python's ``PySequence_Check``, which NumPy's shape converter asks: the type has
    ``__getitem__`` and is not a mapping built on ``dict``. Sets, dicts and iterators are not
    sequences."""
    return hasattr(type(value), "__getitem__") and not isinstance(value, dict)


def as_shape(value, name="target_shape", *, allow_int=False, allow_negative=False):
    """Validate a shape-like argument and return it as a tuple of Python ints.

    The rule is NumPy's shape converter (``PyArray_IntpConverter``, behind ``np.empty``,
    ``np.reshape`` and ``np.broadcast_shapes``): a *sequence* (a type with ``__getitem__``,
    other than a dict: lists, tuples, ``range``, ``bytes``, ``array.array``, 1-D arrays of any
    dtype whose elements are integers, object arrays included) whose every element has
    ``__index__`` and is not a bool; or, where ``allow_int``, a single such integer. Dicts, sets,
    iterators and ``None`` are refused with ``TypeError``, as is an element that is itself a
    sequence (``[[2]]``).

    Parameters
    ----------
    value : sequence of int or 1-D integer ndarray
        The shape-like argument (``target_shape`` or ``axes_mapping``).
    name : str
        The argument's name, used in error messages.
    allow_int : bool
        Accept a single integer as a 1-tuple (as ``np.broadcast_to`` does).
    allow_negative : bool
        Let negative entries through (the caller reports them in its own terms).

    Examples
    --------
    >>> as_shape([1, 16, 50, 50])
    (1, 16, 50, 50)
    >>> as_shape(np.array([2, 3], dtype=np.uint8))
    (2, 3)
    >>> as_shape(5, allow_int=True)
    (5,)
    >>> as_shape(b"\\x02\\x03")
    (2, 3)
    >>> as_shape([2.0])
    Traceback (most recent call last):
    ...
    TypeError: target_shape[0] must be an integer, got float 2.0; target_shape is a 1-D sequence of integers
    >>> as_shape({2, 3})
    Traceback (most recent call last):
    ...
    TypeError: target_shape must be a 1-D sequence of integers, got set {2, 3}; sets, dicts and iterators are not sequences: pass a list or a tuple
    """
    items = None
    if type(value) is tuple or type(value) is list:
        items = value
    elif isinstance(value, np.ndarray) and value.ndim:
        if value.ndim != 1:
            raise TypeError(
                f"{name} must be a 1-D sequence of integers, got an array of shape "
                f"{value.shape}"
            )
        if value.dtype.kind in "iu":
            items = value.tolist()
        elif value.dtype.kind == "O":
            items = tuple(value)
        else:
            raise TypeError(
                f"{name} must be a 1-D sequence of integers, got an array of dtype {value.dtype}"
            )
    elif value is not None and type(value) is not int and _is_sequence(value):
        try:
            items = tuple(value)
        except Exception:  # noqa: BLE001 - not iterable after all (a NumPy scalar): an integer?
            items = None
    if items is None:
        integer = hasattr(type(value), "__index__") and not isinstance(value, (bool, np.bool_))
        if not integer:
            raise TypeError(
                f"{name} must be {'an integer or ' if allow_int else ''}a 1-D sequence of "
                f"integers, got {type(value).__name__} {value!r}"
                + ("" if value is None or isinstance(value, (bool, np.bool_, float)) else
                   "; sets, dicts and iterators are not sequences: pass a list or a tuple")
            )
        if not allow_int:
            raise TypeError(
                f"{name} must be a 1-D sequence of integers, got the scalar {value!r}; "
                f"write [{value!r}] for a 1-D shape"
            )
        items = (_as_index(value, name, None),)
    shape = []
    for i, item in enumerate(items):
        if type(item) is int:
            n = item
        elif isinstance(item, (list, tuple)) or (isinstance(item, np.ndarray) and item.ndim):
            raise TypeError(
                f"{name} must be 1-D, but {name}[{i}] is a sequence ({item!r}); "
                f"pass a flat sequence of integers"
            )
        else:
            n = _as_index(item, name, i)
        if n > MAX_INTP:  # in order with the type checks, as NumPy's converter
            raise ValueError(
                f"{name}[{i}] is {n}, more than this platform can index ({MAX_INTP}); "
                f"reduce the shape"
            )
        shape.append(n)
    if not allow_negative:
        for i, n in enumerate(shape):
            if n < 0:
                raise ValueError(
                    f"{name}[{i}] is {n}, but sizes cannot be negative; allowed values are >= 0"
                )
    return tuple(shape)


def check_dims(shape, name="target_shape"):
    """Reject a size that ``np.intp`` cannot hold (NumPy: "Maximum allowed dimension
    exceeded")."""
    for i, n in enumerate(shape):
        if n > MAX_INTP:
            raise ValueError(
                f"{name}[{i}] is {n}, more than this platform can index ({MAX_INTP}); "
                f"reduce the shape"
            )


def check_size(shape, itemsize, name="target_shape"):
    """Reject a view whose element count or byte size cannot be indexed by ``np.intp``.

    The count is the product of the sizes with zeros read as ones, as ``np.broadcast_to``
    (whose ``nditer`` refuses such shapes even when a size is 0) and ``np.asarray(view)`` need;
    for a pure shape (``broadcast_shapes``) see :func:`check_count`.
    """
    check_dims(shape, name)
    total = max(itemsize, 1)
    for n in shape:
        if n > 1:
            total *= n
    if total > MAX_INTP:
        raise ValueError(
            f"{name} {shape} describes {total} bytes (item size {itemsize}), more than this "
            f"platform can index ({MAX_INTP}); reduce the shape"
        )


def check_count(shape, name="the broadcast shape"):
    """Reject a shape whose element count ``np.intp`` cannot hold, by ``np.broadcast_shapes``'
    rule: the running product from the first axis must not overflow (so a 0 makes every later
    factor harmless, and the count of ``(2**40, 0, 2**40)`` is 0).

    >>> check_count((2**40, 0, 2**40))
    >>> check_count((2**62, 4, 0))
    Traceback (most recent call last):
    ...
    ValueError: the broadcast shape (4611686018427387904, 4, 0) is too large: the product of its first 2 sizes, 18446744073709551616, is more than this platform can index (9223372036854775807)
    """
    check_dims(shape, name)
    total = 1
    for k, n in enumerate(shape):
        total *= n
        if total > MAX_INTP:
            raise ValueError(
                f"{name} {shape} is too large: the product of its first {k + 1} sizes, {total}, "
                f"is more than this platform can index ({MAX_INTP})"
            )


def normalize_mode(mode):
    """Return the canonical lower-case mode name.

    >>> normalize_mode("Explicit")
    'explicit'
    """
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a str, one of {MODES}, got {type(mode).__name__} {mode!r}")
    lowered = mode.lower()
    if lowered not in MODES:
        raise ValueError(f"mode must be one of {MODES} (case-insensitive), got {mode!r}")
    return lowered


def plan(data_shape, target_shape, axes_mapping=None, mode="numpy", axis=-1):
    """Resolve one broadcast request into ``(output_shape, aligned_source_shape)``.

    ``target_shape`` and ``axes_mapping`` must already be tuples of ints (see
    :func:`as_shape`); ``mode`` may be in any case.

    Examples
    --------
    >>> plan((16, 1, 1), (1, 16, 50, 50))
    ((1, 16, 50, 50), (1, 16, 1, 1))
    >>> plan((16,), (1, 16, 50, 50), (1,), mode="explicit")
    ((1, 16, 50, 50), (1, 16, 1, 1))
    >>> plan((3, 1), (2, 1, 6), mode="bidirectional")
    ((2, 3, 6), (1, 3, 1))
    >>> plan((3,), (4,))
    Traceback (most recent call last):
    ...
    ValueError: Input shape dimension equal 3 cannot be broadcasted (numpy mode) to 4. Allowed input dimension value would be 1 or 4 (data axis 0, target axis 0)
    """
    mode = mode if mode in MODES else normalize_mode(mode)
    if axes_mapping is not None and mode != "explicit":
        raise ValueError(
            f"axes_mapping input should not be provided for mode other than explicit "
            f"(mode is {mode!r}, axes_mapping is {list(axes_mapping)})"
        )
    if mode != "pdpd" and axis != -1:
        raise ValueError(
            f"axis is used by mode 'pdpd' only (mode is {mode!r}, axis is {axis!r}); "
            f"leave axis at its default -1"
        )
    if mode == "numpy":
        return _plan_numpy(data_shape, target_shape)
    if mode == "explicit":
        return _plan_explicit(data_shape, target_shape, axes_mapping)
    if mode == "bidirectional":
        return _plan_bidirectional(data_shape, target_shape)
    return _plan_pdpd(data_shape, target_shape, axis)


def _plan_numpy(data_shape, target_shape):
    nd, nt = len(data_shape), len(target_shape)
    if nt < nd:
        raise ValueError(
            f"Broadcast target_shape has smaller rank {nt} than arg shape {nd} "
            f"(data shape {data_shape}, target_shape {target_shape}); numpy mode needs "
            f"len(target_shape) >= data.ndim"
        )
    start = nt - nd
    for i, d in enumerate(data_shape):
        t = target_shape[start + i]
        if d != t and d != 1:
            allowed = "1" if t == 1 else f"1 or {t}"
            raise ValueError(
                f"Input shape dimension equal {d} cannot be broadcasted (numpy mode) to {t}. "
                f"Allowed input dimension value would be {allowed} "
                f"(data axis {i}, target axis {start + i})"
            )
    return target_shape, (1,) * start + tuple(data_shape)


def _plan_explicit(data_shape, target_shape, axes_mapping):
    if axes_mapping is None:
        raise ValueError(
            "axes_mapping input should be provided if explicit mode is used: one output axis "
            f"per data axis ({len(data_shape)} for data shape {data_shape})"
        )
    nd, nt = len(data_shape), len(target_shape)
    if nd == 0 and len(axes_mapping) == 1:
        # OpenVINO treats a scalar mapped by one axis as data of shape (1,), but only onto a
        # target axis of size 1 (validate_target_shape_none); [] broadcasts it anywhere.
        a = axes_mapping[0]
        if 0 <= a < nt and target_shape[a] != 1:
            raise ValueError(
                f"Broadcast target[axes_mapping[0]]. Expected 1. Got {target_shape[a]} "
                f"(scalar data mapped to target axis {a}; use axes_mapping [] to broadcast a "
                f"scalar to any shape)"
            )
        data_shape = (1,)
        nd = 1
    if len(axes_mapping) != nd:
        raise ValueError(
            f"Broadcast axes_mapping shape ({len(axes_mapping)}) doesn't match rank of input "
            f"tensor {nd}: axes_mapping {list(axes_mapping)} must name one output axis for each "
            f"axis of data shape {data_shape}"
        )
    aligned = [1] * nt
    previous = -1
    for i, a in enumerate(axes_mapping):
        if a < 0:
            raise ValueError(
                f"Broadcast axes_mapping[{i}]: {a} is negative; axes_mapping values are output "
                f"axes counted from 0, allowed 0 to {nt - 1}" if nt else
                f"Broadcast axes_mapping[{i}]: {a} is negative; an empty target_shape allows "
                f"only scalar data and an empty axes_mapping"
            )
        if a >= nt:
            raise ValueError(
                f"Broadcast axes_mapping[{i}]: {a} exceeds target rank {nt}; allowed values are "
                f"0 to {nt - 1}" if nt else
                f"Broadcast axes_mapping[{i}]: {a} exceeds target rank 0; an empty target_shape "
                f"allows only scalar data and an empty axes_mapping"
            )
        if a <= previous:
            raise ValueError(
                f"Broadcast doesn't permit transposes. axes_mapping {list(axes_mapping)} not in "
                f"sorted order; values must be strictly increasing (axes_mapping[{i}] = {a} "
                f"follows {previous})"
            )
        previous = a
        d, t = data_shape[i], target_shape[a]
        if d != t and d != 1:
            raise ValueError(
                f"Broadcast target[axes_mapping[{i}]] Expected {d}. Got {t} "
                f"(data axis {i} of size {d} maps to target axis {a}; data size 1 would "
                f"broadcast to any size)"
            )
        aligned[a] = d
    return target_shape, tuple(aligned)


def _plan_bidirectional(data_shape, target_shape):
    n = max(len(data_shape), len(target_shape))
    data = (1,) * (n - len(data_shape)) + tuple(data_shape)
    target = (1,) * (n - len(target_shape)) + tuple(target_shape)
    out = []
    for k, (d, t) in enumerate(zip(data, target)):
        if d == t or t == 1:
            out.append(d)
        elif d == 1:
            out.append(t)
        else:
            raise ValueError(
                f"Broadcast incorrect target shape. Expecting either 1 or {d}. Got {t} "
                f"(right-aligned axis {k} of data shape {data_shape} and target_shape "
                f"{target_shape})"
            )
    return tuple(out), data


def _plan_pdpd(data_shape, target_shape, axis):
    nd, nt = len(data_shape), len(target_shape)
    start = axis if axis >= 0 else nt - nd
    if start < 0:
        raise ValueError(
            f"Broadcast start_axis must be greater than 0: data of rank {nd} does not fit "
            f"target_shape {target_shape} of rank {nt} (axis {axis})"
        )
    if start + nd > nt:
        raise ValueError(
            f"Broadcast in pdpd mode places data of rank {nd} at axis {start}, past the end of "
            f"target_shape {target_shape} (rank {nt}); allowed axis values are -1 or 0 to "
            f"{nt - nd}" if nt >= nd else
            f"Broadcast in pdpd mode needs len(target_shape) >= data.ndim, got target rank {nt} "
            f"and data rank {nd}"
        )
    out = list(target_shape)
    aligned = [1] * nt
    for i, d in enumerate(data_shape):
        t = target_shape[start + i]
        if d == 1:
            pass
        elif t == 1 or t == d:
            out[start + i] = d
        else:
            raise ValueError(
                f"Broadcast incorrect target shape. Expecting either 1 or {d} . Got {t} "
                f"(data axis {i} meets target axis {start + i})"
            )
        aligned[start + i] = d
    return tuple(out), tuple(aligned)
