"""dask integration: a broadcast view as a chunked ``dask.array.Array``.

The graph holds the view once (it pickles as its compact source plus the shape and mode) and one
task per chunk; each task slices the view lazily and materializes that chunk with lazybcast's
kernel, on whichever worker computes it. The tasks are dask's own ``getter``, so dask fuses a
later slice of a chunk into the task: only the selected part is ever materialized. Nothing is
materialized while the graph is built, and the graph's name comes from the view's cheap
``__dask_tokenize__``, never from hashing the logical data.

Needs the ``lazybcast[dask]`` extra (``dask[array]``; ``distributed`` for a cluster).
"""

import numpy as np

from lazybcast._view import BroadcastView

__all__ = ["to_dask"]


def _materialize(view, key):
    """What ``key`` selects from ``view`` as a new array made by lazybcast's kernel (one
    thread: dask already runs chunks in parallel)."""
    part = view if isinstance(key, tuple) and not key else view[key]
    if isinstance(part, BroadcastView):
        return part.materialize(threads=1)
    return np.asarray(part)  # advanced indexing already gathered a new array; or a scalar


class _Chunks:
    """What the dask graph holds: the view behind an indexing that materializes.

    dask's ``getter`` tasks slice this object, and dask's graph optimization fuses later
    slicing of a chunk into that one index, so computing a small part of a large chunk
    materializes only that part.
    """

    __slots__ = ("view", "shape", "ndim", "dtype")

    def __init__(self, view):
        self.view = view
        self.shape = view.shape
        self.ndim = view.ndim
        self.dtype = view.dtype

    def __getitem__(self, key):
        return _materialize(self.view, key)

    def __reduce__(self):
        return (_Chunks, (self.view,))

    def __dask_tokenize__(self):
        return ("lazybcast._dask._Chunks", self.view.__dask_tokenize__())


def to_dask(view, chunks="auto"):
    """to_dask(view, chunks="auto")

    A ``dask.array.Array`` over ``view`` whose chunks are materialized lazily, each by the worker
    that computes it, through lazybcast's kernel.

    Parameters
    ----------
    view : BroadcastView
        The view to wrap; it travels to the workers by pickle as its compact source.
    chunks : "auto", int, tuple or dict
        Any chunk specification that ``dask.array.from_array`` accepts; ``"auto"`` sizes chunks
        to dask's ``array.chunk-size`` setting.

    Returns
    -------
    dask.array.Array
        Of the view's shape and dtype. Its name is deterministic: the same view (same source
        values, shape and mode) with the same chunks always gives the same graph keys.

    Raises
    ------
    TypeError
        ``view`` is not a :class:`BroadcastView`.

    Notes
    -----
    The chunk tasks are dask's own ``getter`` over the view, so dask fuses a later slice of a
    chunk (``x[5, :10]``) into the chunk's task and only the selected part is materialized.
    ``dask.array.from_array(view)`` also works; its chunks are then lazy views, turned into
    NumPy arrays by whatever consumes them.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> v = lazybcast.broadcast_to(np.arange(4.0), (1000, 4))
    >>> x = v.to_dask(chunks=(250, 4))
    >>> x.chunks
    ((250, 250, 250, 250), (4,))
    >>> float(x.sum().compute(scheduler="sync"))
    6000.0
    >>> x.name == lazybcast.broadcast_to(np.arange(4.0), (1000, 4)).to_dask((250, 4)).name
    True
    """
    import dask.array as da
    from dask.base import tokenize

    if not isinstance(view, BroadcastView):
        raise TypeError(
            f"view must be a lazybcast.BroadcastView, got {type(view).__name__}; "
            f"use dask.array.from_array for other arrays"
        )
    chunks = da.core.normalize_chunks(chunks, view.shape, dtype=view.dtype)
    name = "lazybcast-" + tokenize(view, chunks)
    meta = np.empty((0,) * view.ndim, dtype=view.dtype)
    return da.from_array(_Chunks(view), chunks=chunks, name=name, lock=False, asarray=False,
                         meta=meta)
