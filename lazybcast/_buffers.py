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
    if not array.flags.writeable:
        raise ValueError(f"{name} is read-only ({type(out).__name__}); pass a writeable array")
    return array
