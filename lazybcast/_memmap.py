"""Pickling views of memory-mapped files by reference: the file's path and a region, not bytes.

A view whose compact source lies in a file mapped by ``np.memmap`` (``np.load(mmap_mode=...)``
makes one too, and so does any slice of either) pickles as a few hundred bytes: the file's
absolute path, its size, the byte offset of the source's first element, the dtype, shape and
strides. Unpickling maps the file again, read-only, after checking that every byte the strides
can reach lies inside it; a missing file or one of another size is a clear error
(``FileNotFoundError`` or ``ValueError`` naming the path and the sizes), never a read outside
the mapping.

What goes by value instead (the bytes themselves, as for any array):

- a source not backed by a file map, or mapped copy-on-write (``mode="c"``: its changes are
  private to this process), or whose dtype holds Python objects;
- everything pickled inside :func:`pickle_by_value`, for a receiver without the file.

The receiver reads the file as it is when it reads: a file rewritten with the same size is
not detected (its size is checked, its contents are not), and a file truncated while mapped
makes the reader fail with SIGBUS, as with any ``np.memmap``.
"""

import contextlib
import contextvars
import mmap
import os

import numpy as np

__all__ = ["file_token", "pickle_by_value", "reduce_by_reference"]

_BY_VALUE = contextvars.ContextVar("lazybcast_pickle_by_value", default=False)


@contextlib.contextmanager
def pickle_by_value():
    """Within this block, views over memory-mapped files pickle their bytes, not the path.

    For a receiver that cannot open the file (another machine, a container without the
    volume). The switch is per thread (a :mod:`contextvars` variable): enter it in the
    thread that pickles. A spawn ``DataLoader`` pickles its dataset when the iterator starts
    its workers, so wrap ``iter(loader)``.

    Examples
    --------
    >>> import os, pickle, tempfile, numpy as np, lazybcast
    >>> path = os.path.join(tempfile.mkdtemp(), "x.npy")
    >>> np.save(path, np.arange(100_000.0))
    >>> view = lazybcast.broadcast_to(np.load(path, mmap_mode="r"), (4, 100_000))
    >>> len(pickle.dumps(view)) < 1000
    True
    >>> with lazybcast.pickle_by_value():
    ...     len(pickle.dumps(view)) > 800_000
    True
    """
    token = _BY_VALUE.set(True)
    try:
        yield
    finally:
        _BY_VALUE.reset(token)


def _extent(shape, strides, itemsize):
    """Byte offsets ``(lo, hi)`` relative to the first element that the array can touch."""
    lo = hi = 0
    for n, s in zip(shape, strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + itemsize


def _anchor(array):
    """The ``np.memmap`` that owns the mapping under ``array`` (found along the ``.base``
    chain), or None."""
    a, seen = array, 0
    while a is not None and seen < 10_000:
        if isinstance(a, np.memmap) and isinstance(a.base, mmap.mmap):
            return a
        a, seen = getattr(a, "base", None), seen + 1
    return None


def _region(array):
    """``(path, offset, mode)``: the file and byte offset of ``array``'s first element, if
    ``array`` lies in a shared, file-backed map; else None."""
    if array.dtype.hasobject or array.size == 0:
        return None
    anchor = _anchor(array)
    if anchor is None or anchor.mode == "c":
        return None
    path = anchor.filename  # a str, or a resolved pathlib.Path when the map was opened by one
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        return None  # mapped from an open file NumPy knows no name of
    try:
        length = len(anchor.base)
    except ValueError:  # the map was closed under the array
        return None
    # The map starts at file offset `start` (the memmap's offset rounded down to the
    # allocation granularity, as np.memmap maps it); the anchor's data sits `offset - start`
    # bytes in.
    start = anchor.offset - anchor.offset % mmap.ALLOCATIONGRANULARITY
    map_lo = anchor.ctypes.data - (anchor.offset - start)
    first = array.ctypes.data
    lo, hi = _extent(array.shape, array.strides, array.dtype.itemsize)
    if first + lo < map_lo or first + hi > map_lo + length:
        return None  # not inside this mapping after all: go by value
    return path, start + (first - map_lo), anchor.mode



def file_token(array):
    """What identifies ``array`` if it lies in a file map (for dask's tokenize): the file's
    path, size and modification time, the region and the dtype; else None."""
    region = _region(array)
    if region is None:
        return None
    path, offset, _ = region
    try:
        st = os.stat(path)
    except OSError:
        return None
    return ("file", path, st.st_size, st.st_mtime_ns, offset, array.dtype.str,
            array.dtype.descr, tuple(array.shape), tuple(array.strides))


def reduce_by_reference(view):
    """The ``__reduce__`` value of ``view`` by reference, or None (pickle by value)."""
    if _BY_VALUE.get():
        return None
    source = view._source
    region = _region(source)
    if region is None:
        return None
    path, offset, _ = region
    try:
        size = os.stat(path).st_size
    except OSError:
        return None  # the file is gone (deleted while mapped): only its bytes can travel
    base = view.base
    base_region = None
    if base is not source and isinstance(base, np.ndarray) and base.dtype == source.dtype:
        found = _region(base)
        if found is not None and found[0] == path:
            base_region = (found[1], tuple(base.shape), tuple(base.strides))
    return (_rebuild_mapped, (path, size, source.dtype, offset, tuple(source.shape),
                              tuple(source.strides), view.shape, view.mode, base_region))


def _open(path, size, dtype, offset, shape, strides):
    """A read-only ndarray over ``path``, validated against the file on disk."""
    if not isinstance(path, str):
        raise TypeError(f"path must be a str, got {type(path).__name__}")
    for name, value in (("size", size), ("offset", offset)):
        if type(value) is not int or value < 0:
            raise ValueError(f"{name} must be an int >= 0, got {value!r}")
    if (type(shape) is not tuple or type(strides) is not tuple or len(shape) != len(strides)
            or not all(type(n) is int and n >= 0 for n in shape)
            or not all(type(s) is int for s in strides)):
        raise ValueError(f"shape and strides must be tuples of ints of one length, "
                         f"got {shape!r} and {strides!r}")
    if not isinstance(dtype, np.dtype) or dtype.hasobject:
        raise TypeError(f"dtype must be a numpy.dtype without objects, got {dtype!r}")
    if 0 in shape:
        raise ValueError(f"a source by reference is never empty, got shape {shape}")
    lo, hi = _extent(shape, strides, dtype.itemsize)
    if offset + lo < 0:
        raise ValueError(f"the region of {path!r} starts {-(offset + lo)} bytes before the "
                         f"file's start (offset {offset}, strides {strides})")
    try:
        actual = os.stat(path).st_size
    except FileNotFoundError:
        raise FileNotFoundError(
            f"cannot unpickle a view of {path!r}: the file does not exist here (it was "
            f"{size} bytes when pickled); pickle inside lazybcast.pickle_by_value() to send "
            f"the data itself") from None
    if offset + hi > actual:
        raise ValueError(
            f"cannot unpickle a view of {path!r}: it needs bytes [{offset + lo}, {offset + hi}) "
            f"but the file has {actual} bytes (it had {size} when pickled)")
    if actual != size:
        raise ValueError(
            f"cannot unpickle a view of {path!r}: the file has {actual} bytes, it had {size} "
            f"when pickled; it changed in between")
    start = (offset + lo) - (offset + lo) % mmap.ALLOCATIONGRANULARITY
    region = np.memmap(path, dtype=np.uint8, mode="r", offset=start,
                       shape=(offset + hi - start,))
    return np.ndarray(shape, dtype=dtype, buffer=region, offset=offset - start, strides=strides)


def _rebuild_mapped(path, size, dtype, offset, shape, strides, vshape, mode, base_region=None):
    """Unpickle a view by reference: map the file read-only, validate, build the view through
    the validating constructor."""
    from lazybcast._view import BroadcastView

    source = _open(path, size, dtype, offset, shape, strides)
    base = None
    if base_region is not None:
        if type(base_region) is not tuple or len(base_region) != 3:
            raise ValueError(f"base_region must be (offset, shape, strides), got {base_region!r}")
        base = _open(path, size, dtype, *base_region)
    return BroadcastView._checked(source, vshape, base, mode)
