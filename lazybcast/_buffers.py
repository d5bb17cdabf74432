"""The caller's ``out=`` buffers: any writeable array, seen as an ndarray over its memory.

``materialize(out=...)`` and ``iter_batches(out=...)`` write where the loader wants the data:
an ``np.ndarray``, an object exposing DLPack (a ``torch`` tensor, pinned or not, a CuPy array
on the host...) or the buffer protocol (``memoryview``, ``bytearray``-backed views,
``array.array``). The object is seen through a zero-copy ndarray and checked as an ndarray
would be (shape, dtype, writeable); the caller gets its own object back.
"""

import numpy as np

__all__ = ["as_writeable_array"]

_KINDS = "an ndarray, or an object exposing DLPack or the buffer protocol"


def as_writeable_array(out, name="out"):
    """A zero-copy ndarray over the memory of ``out``; ``ValueError`` if it is read-only.

    Examples
    --------
    >>> import numpy as np
    >>> raw = bytearray(16)
    >>> a = as_writeable_array(memoryview(raw).cast("i"))
    >>> a[:] = 7
    >>> bytes(raw[:4])
    b'\\x07\\x00\\x00\\x00'
    >>> as_writeable_array(b"read-only")
    Traceback (most recent call last):
    ...
    ValueError: out is read-only (bytes); pass a writeable array
    """
    if isinstance(out, np.ndarray):
        array = out
    elif hasattr(out, "__dlpack__"):
        try:
            array = np.from_dlpack(out)
        except BufferError as e:  # e.g. a torch tensor that requires grad, or on a GPU
            raise TypeError(f"{name} ({type(out).__name__}) cannot be written through DLPack: "
                            f"{e}") from None
        except (TypeError, RuntimeError, ValueError) as e:
            raise TypeError(f"{name} must be {_KINDS} in host memory; NumPy cannot read "
                            f"{type(out).__name__} through DLPack: {e}") from None
    else:
        try:
            view = memoryview(out)
        except TypeError:
            raise TypeError(f"{name} must be {_KINDS}, got {type(out).__name__}") from None
        if view.readonly:
            raise ValueError(f"{name} is read-only ({type(out).__name__}); pass a writeable "
                             f"array")
        array = np.asarray(view)
    if not array.flags.writeable and not isinstance(out, np.ndarray):
        array = _writeable_alias(out, array)
    if not array.flags.writeable:
        raise ValueError(f"{name} is read-only ({type(out).__name__}); pass a writeable array")
    return array


def _writeable_alias(out, array):
    """Some DLPack importers (NumPy before 2.1) mark every import read-only; ``__array__``
    may give a writeable ndarray over the very same memory (``torch.Tensor.numpy()``)."""
    if not hasattr(out, "__array__"):
        return array
    try:
        alias = np.asarray(out)
    except Exception:  # noqa: BLE001 - no better view of it: keep the read-only one
        return array
    same = (alias.__array_interface__["data"][0] == array.__array_interface__["data"][0]
            and alias.shape == array.shape and alias.strides == array.strides
            and alias.dtype == array.dtype)
    return alias if same and alias.flags.writeable else array
