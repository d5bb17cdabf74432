"""The public broadcast functions: argument handling on top of the rules in ``_rules``."""

import numpy as np

from lazybcast._rules import MODES, as_shape, check_count, check_dims, check_size, normalize_mode, plan
from lazybcast._view import BroadcastView, make_view

__all__ = ["broadcast", "broadcast_arrays", "broadcast_shapes", "broadcast_to"]

_MAXDIMS = 64


def _as_array(data):
    """``data`` as an ndarray or a view: ndarrays and their subclasses as they are
    (``make_view`` reads a subclass through ``np.asarray`` and refuses a masked array), views
    as they are (:func:`_finish` broadcasts their compact source), anything else through
    ``np.asarray``."""
    if isinstance(data, (np.ndarray, BroadcastView)):
        return data
    return np.asarray(data)


def _finish(data, aligned, shape, mode, name="target_shape"):
    if len(shape) > _MAXDIMS:
        raise ValueError(
            f"the broadcast result would have {len(shape)} dimensions; at most {_MAXDIMS} are "
            f"allowed"
        )
    check_size(shape, data.dtype.itemsize, name)
    if isinstance(data, BroadcastView):
        # A view of a view, as np.broadcast_to(view, shape) gives: the zero-copy array of
        # the view (stride 0 on its broadcast axes) collapses back to its compact source,
        # and the new view keeps the array the first was made of (a memory map stays one).
        return make_view(data._as_ndarray(), aligned, shape, mode, data.base)
    return make_view(data, aligned, shape, mode)


def broadcast(data, target_shape, axes_mapping=None, *, mode="numpy", axis=-1):
    """broadcast(data, target_shape, axes_mapping=None, *, mode="numpy", axis=-1)

    Broadcast ``data`` to ``target_shape`` as a lazy :class:`BroadcastView` (OpenVINO
    Broadcast-1/-3).

    Parameters
    ----------
    data : array_like or BroadcastView
        Any array NumPy accepts, with any dtype and strides; ndarrays are not copied, and a
        view is broadcast further from its compact source.
    target_shape : sequence of int or 1-D integer ndarray
        The requested output shape.
    axes_mapping : sequence of int or 1-D integer ndarray, optional
        For ``mode="explicit"`` only (and required there): the output axis of each data axis,
        strictly increasing.
    mode : {"numpy", "explicit", "bidirectional", "pdpd"}
        The broadcast rule (case-insensitive):

        * ``numpy``: one-directional NumPy rules; the output shape is ``target_shape``.
        * ``explicit``: data axis ``i`` goes to output axis ``axes_mapping[i]``; its size must
          equal the target's or be 1.
        * ``bidirectional``: NumPy rules in both directions (ONNX Expand); the output may be
          larger than ``target_shape``.
        * ``pdpd``: data axes are aligned from output axis ``axis`` (``-1``: right-aligned);
          1 on either side takes the other side's size.
    axis : int
        For ``mode="pdpd"`` only: the output axis of data axis 0.

    Returns
    -------
    BroadcastView

    Raises
    ------
    ValueError
        The shapes cannot be broadcast under ``mode``, or an argument has a bad value.
    TypeError
        An argument has a bad type.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> lazybcast.broadcast(np.ones((16, 1, 1)), [1, 16, 50, 50]).shape
    (1, 16, 50, 50)
    >>> lazybcast.broadcast(np.ones(16), [1, 16, 50, 50], [1], mode="explicit").shape
    (1, 16, 50, 50)
    >>> lazybcast.broadcast(np.ones((50, 50)), [1, 50, 50, 16], [1, 2], mode="explicit").shape
    (1, 50, 50, 16)
    >>> lazybcast.broadcast(np.ones((3, 1)), [2, 1, 6], mode="bidirectional").shape
    (2, 3, 6)
    """
    data = _as_array(data)
    if type(mode) is not str or mode not in MODES:
        mode = normalize_mode(mode)
    target = as_shape(target_shape, "target_shape")
    if axes_mapping is not None:
        axes_mapping = as_shape(axes_mapping, "axes_mapping", allow_negative=True)
    if type(axis) is not int:
        if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"axis must be an int, got {type(axis).__name__} {axis!r}")
        axis = int(axis)
    if mode == "pdpd" and axis < -1:
        raise ValueError(
            f"axis must be -1 (right-align) or a non-negative output axis, got {axis}"
        )
    shape, aligned = plan(data.shape, target, axes_mapping, mode, axis)
    return _finish(data, aligned, shape, mode)


def broadcast_to(data, shape):
    """broadcast_to(data, shape)

    Lazy ``np.broadcast_to``: ``data`` broadcast to ``shape`` under NumPy's rules.

    Parameters
    ----------
    data : array_like or BroadcastView
        The source; ndarrays are not copied, and a view is broadcast further from its
        compact source.
    shape : int or sequence of int
        The output shape.

    Returns
    -------
    BroadcastView

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> v = lazybcast.broadcast_to(np.arange(3, dtype=np.uint8), (2, 3))
    >>> v
    BroadcastView(shape=(2, 3), dtype=uint8, mode='numpy', source_shape=(3,), logical=6 B, held=3 B)
    >>> lazybcast.broadcast_to(7, 4).materialize()
    array([7, 7, 7, 7])
    """
    data = _as_array(data)
    target = as_shape(shape, "shape", allow_int=True)
    out, aligned = plan(data.shape, target)
    return _finish(data, aligned, out, "numpy", "shape")


def broadcast_shapes(*shapes):
    """broadcast_shapes(*shapes)

    The shape that ``shapes`` broadcast to, exactly as ``np.broadcast_shapes``.

    Examples
    --------
    >>> import lazybcast
    >>> lazybcast.broadcast_shapes((6, 5), (2, 1, 5))
    (2, 6, 5)
    >>> lazybcast.broadcast_shapes()
    ()
    """
    # Not np.broadcast_shapes itself: it raises RuntimeError beyond 32 dimensions.
    parsed = []
    for i, s in enumerate(shapes):
        shape = as_shape(s, f"shapes[{i}]", allow_int=True)
        if len(shape) > _MAXDIMS:
            raise ValueError(f"shapes[{i}] has {len(shape)} dimensions; at most {_MAXDIMS} are "
                             f"allowed")
        check_dims(shape, f"shapes[{i}]")
        parsed.append(shape)
    out = [1] * max((len(s) for s in parsed), default=0)
    for j, shape in enumerate(parsed):
        for k, n in enumerate(shape, len(out) - len(shape)):
            if n != out[k] and n != 1:
                if out[k] != 1:
                    first = next(j for j, s in enumerate(parsed)
                                 if len(s) >= len(out) - k and s[k - len(out)] == out[k])
                    raise ValueError(
                        f"shape mismatch: objects cannot be broadcast to a single shape. "
                        f"Mismatch is between arg {first} with shape {parsed[first]} and arg "
                        f"{j} with shape {shape}."
                    )
                out[k] = n
    out = tuple(out)
    check_count(out)  # the actual count: (2**40, 0, 2**40) has none, as in NumPy
    return out


def broadcast_arrays(*arrays):
    """broadcast_arrays(*arrays)

    Broadcast any number of arrays against each other (SONNX N-ary Broadcast) as lazy views.

    Parameters
    ----------
    *arrays : array_like or BroadcastView
        ndarrays are not copied; a view is broadcast further from its compact source.

    Returns
    -------
    tuple of BroadcastView
        One view per input, all of the common shape.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> a, b = lazybcast.broadcast_arrays(np.ones((2, 1, 5)), np.ones((4, 1)))
    >>> a.shape, b.shape
    ((2, 4, 5), (2, 4, 5))
    """
    datas = [_as_array(a) for a in arrays]
    shape = broadcast_shapes(*(d.shape for d in datas))
    views = []
    for d in datas:
        aligned = (1,) * (len(shape) - d.ndim) + d.shape
        views.append(_finish(d, aligned, shape, "numpy", "the broadcast shape"))
    return tuple(views)
