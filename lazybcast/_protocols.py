"""How a broadcast view meets other array code: DLPack, casts, copies, flags, membership.

Everything here works on the compact source, or on the view's zero-copy NumPy equivalent
``np.broadcast_to(source, shape)`` (a *proxy*: the source's memory, stride 0 on broadcast axes,
read-only), so that NumPy's own rules and exceptions apply and no logical-size array is made.

**DLPack.** ``view.__dlpack__`` exports the proxy: the source's memory with the view's strides
(0 included), flagged read-only, which DLPack can say from version 1.0 on (the consumer passes
``max_version >= (1, 0)``, as NumPy >= 2.1 and torch do). An older consumer cannot be told the
memory is read-only, so the export is refused with a ``BufferError`` that names the ways out.
``torch.from_dlpack(view)`` and ``torch.asarray(view)`` are then expanded tensors over the
source (no copy); ``torch.tensor(view)`` is one copy, made by torch from that tensor. A view
with a negative stride (reversed data) exports a copy of its compact source instead, O(source):
torch aborts the process on a negative DLPack stride (NumPy's own arrays included). torch has
no read-only tensors: it accepts the read-only flag without a copy, so writing into such a
tensor writes into the array the view was made from (as ``torch.from_numpy`` of it would).

**No buffer protocol.** ``memoryview(view)`` is refused on purpose: NumPy turns any object that
exports a buffer into an array through that buffer *before* it asks ``__array__``, so a view
with a buffer would make ``np.array(view)`` a NumPy copy of a strided buffer (F-ordered when the
first axis is broadcast, and without lazybcast's kernel). ``memoryview(np.asarray(view))`` is
the zero-copy, read-only, strided buffer.

Examples
--------
>>> import numpy as np, lazybcast
>>> v = lazybcast.broadcast_to(np.arange(3.0), (1000, 3))
>>> # not run: NumPy 2.0's from_dlpack asks for no DLPack version (2.1 and later do)
>>> a = np.from_dlpack(v)  # doctest: +SKIP
>>> a.strides, a.flags.writeable, np.shares_memory(a, v.source)  # doctest: +SKIP
((0, 8), False, True)
>>> 2.0 in v, 5.0 in v
(True, False)
"""

import numpy as np

from lazybcast._view import BroadcastView

__all__ = [
    "Flags",
    "astype",
    "contains",
    "copy",
    "copy_of",
    "dlpack",
    "flags",
    "missing_attribute",
    "read_only",
    "read_only_attribute",
]

_ORDERS = ("C", "F", "A", "K")


def _proxy(view):
    return view._as_ndarray()


def dlpack(view, stream=None, max_version=None, dl_device=None, copy=None):
    """The DLPack capsule of ``view`` (see the module docstring); arguments as
    ``ndarray.__dlpack__``. Only the arguments given are passed on, so that NumPy 2.0 (which
    takes ``stream`` alone) raises ``TypeError`` for the others and a consumer can retry
    without them, as the DLPack protocol asks."""
    kwargs = {"stream": stream}
    for name, value in (("max_version", max_version), ("dl_device", dl_device)):
        if value is not None:
            kwargs[name] = value
    if copy:
        return view.materialize().__dlpack__(**kwargs)
    if copy is not None:
        kwargs["copy"] = copy
    proxy = _proxy(view)
    if copy is None and any(s < 0 and n > 1 for n, s in zip(proxy.shape, proxy.strides)):
        # torch (2.13) aborts the whole process on a negative DLPack stride, NumPy's own
        # exports included: a reversed view exports a copy of its compact source instead.
        proxy = _proxy(copy_of(view))
    try:
        return proxy.__dlpack__(**kwargs)
    except BufferError as exc:
        if "readonly" not in str(exc):
            raise
        raise BufferError(
            f"a BroadcastView is read-only, and the DLPack version the consumer asked for "
            f"(max_version={max_version!r}) cannot say so; a consumer that passes "
            f"max_version=(1, 0) or later (NumPy >= 2.1, torch) gets it without a copy, or "
            f"export a writeable copy: view.materialize() (or __dlpack__(copy=True))"
        ) from None


def astype(view, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """``view.astype``: the compact source cast by NumPy (its casting rules and errors)."""
    dtype = np.dtype(dtype)
    source = view.source
    if not copy and dtype == source.dtype:
        source.astype(dtype, order=order, casting=casting, subok=subok, copy=False)  # checks
        return view
    return BroadcastView._checked(
        source.astype(dtype, order=order, casting=casting, subok=subok, copy=True),
        view.shape, None, view.mode)


def copy(view, order="C"):
    """``view.copy``: a view over a C-contiguous copy of the compact source."""
    if order not in _ORDERS:
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    return copy_of(view)


def copy_of(view):
    """A view over a C-contiguous copy of ``view``'s compact source (O(source))."""
    return BroadcastView._checked(view.source.copy(), view.shape, None, view.mode)


class Flags:
    """``view.flags``: NumPy's flags of the equivalent ``np.broadcast_to`` array, to read
    (``flags.c_contiguous``, ``flags["C"]``, ...); setting one raises ``ValueError``, since
    a view is always read-only (NumPy would let ``writeable`` be set on that array)."""

    __slots__ = ("_flags",)

    def __init__(self, flags):
        object.__setattr__(self, "_flags", flags)

    def __getattr__(self, name):
        return getattr(self._flags, name)

    def __getitem__(self, key):
        return self._flags[key]

    def __setattr__(self, name, value):
        raise ValueError(
            f"cannot set the {name} flag of a BroadcastView: a view is read-only; use "
            f"view.materialize() for a writeable array"
        )

    __setitem__ = __setattr__

    def __eq__(self, other):
        return self._flags == (other._flags if isinstance(other, Flags) else other)

    __hash__ = None  # type: ignore[assignment]  # compared by value, like NumPy's flags

    def __repr__(self):
        return repr(self._flags)


def flags(view):
    """``view.flags`` (see :class:`Flags`)."""
    return Flags(_proxy(view).flags)


def contains(view, value):
    """``value in view``, as ``(array == value).any()`` on the ``np.broadcast_to``
    equivalent. Every source element appears in a non-empty view, so a scalar is looked for in
    the source alone."""
    if view.size and np.ndim(value) == 0:
        return value in view.source
    return value in _proxy(view)


def read_only(name):
    """The error for an in-place method (``fill``, ``sort``, ...) of a read-only view: a
    ``ValueError``, as NumPy raises for a read-only array."""
    return ValueError(
        f"BroadcastView.{name}() would write in place, but a BroadcastView is read-only (its "
        f"elements share memory with the broadcast source); use view.materialize() for a "
        f"writeable copy"
    )


def read_only_attribute(view, name):
    """The error for assigning ``view.real`` or ``view.imag``: NumPy's ``ValueError`` for a
    read-only array (``TypeError`` for the imaginary part of a real view, as NumPy's)."""
    if name == "imag" and view.dtype.kind != "c":
        try:  # NumPy's own TypeError, in its own words (they differ between versions)
            np.empty(0, view.dtype).imag = 0
        except TypeError as error:
            return error
    return ValueError(
        f"BroadcastView.{name} cannot be assigned: a BroadcastView is read-only (its elements "
        f"share memory with the broadcast source); assign into view.materialize() instead"
    )


def missing_attribute(name):
    """The ``AttributeError`` for an ndarray attribute a view does not have: it names the
    cheap ways to get one."""
    return AttributeError(
        f"'BroadcastView' object has no attribute {name!r} (an ndarray attribute): "
        f"np.asarray(view).{name} works on the zero-copy, read-only ndarray of the view, and "
        f"view.materialize().{name} on a writeable copy"
    )
