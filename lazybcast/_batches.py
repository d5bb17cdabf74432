"""Feeding views to training loops: batches along axis 0 and a map-style dataset."""

import collections
import operator

import numpy as np

__all__ = ["RowDataset", "iter_batches"]


def _positive_int(value, name, minimum):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    value = operator.index(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def iter_batches(view, batch_size, *, out=None, drop_last=False, prefetch=0):
    """Validate eagerly, then return the batch generator (see BroadcastView.iter_batches)."""
    batch_size = _positive_int(batch_size, "batch_size", 1)
    prefetch = _positive_int(prefetch, "prefetch", 0)
    if not view.shape:
        raise TypeError("iter_batches() needs at least one axis; the view is 0-d")
    if out is not None:
        shape = (batch_size,) + view.shape[1:]
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out must be a numpy.ndarray, got {type(out).__name__}")
        if out.shape != shape:
            raise ValueError(f"out has shape {out.shape}; it must be (batch_size,) + "
                             f"view.shape[1:] = {shape}")
        if out.dtype != view.dtype:
            raise TypeError(f"out has dtype {out.dtype}; it must be the view's dtype {view.dtype}")
        if not out.flags.writeable:
            raise ValueError("out is read-only; pass a writeable array")
        if prefetch:
            raise ValueError("prefetch needs a fresh array per batch; it cannot be used with out=")
    n = view.shape[0]
    end = n - n % batch_size if drop_last else n
    # lazily: a view may have billions of rows (even with zero bytes)
    ranges = ((start, min(start + batch_size, n)) for start in range(0, end, batch_size))
    if out is not None:
        return _into(view, ranges, out)
    if prefetch:
        return _prefetched(view, ranges, prefetch)
    return (view[start:stop].materialize() for start, stop in ranges)


def _into(view, ranges, out):
    for start, stop in ranges:
        yield view[start:stop].materialize(out=out[:stop - start])


def _prefetched(view, ranges, depth):
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lazybcast-prefetch")
    pending = collections.deque()
    todo = iter(ranges)
    try:
        for start, stop in todo:
            pending.append(pool.submit(view[start:stop].materialize))
            if len(pending) > depth:
                break
        while pending:
            batch = pending.popleft().result()
            for start, stop in todo:
                pending.append(pool.submit(view[start:stop].materialize))
                break
            yield batch
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True)


class RowDataset:
    """A map-style dataset over the rows (axis 0) of a :class:`BroadcastView`.

    ``dataset[i]`` is row ``i`` materialized; ``dataset.__getitems__(indices)`` gathers a whole
    batch with one kernel call (PyTorch's DataLoader calls it for batched fetching). It pickles
    as the view's compact source, so multi-worker loaders are cheap.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> ds = lazybcast.RowDataset(lazybcast.broadcast_to(np.arange(3.0), (1000, 3)))
    >>> len(ds), ds[999]
    (1000, array([0., 1., 2.]))
    >>> [row.tolist() for row in ds.__getitems__([0, 5])]
    [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    """

    def __init__(self, view):
        from lazybcast._view import BroadcastView

        if not isinstance(view, BroadcastView):
            raise TypeError(f"view must be a BroadcastView, got {type(view).__name__}")
        if not view.shape:
            raise ValueError("view must have at least one axis; a 0-d view has no rows")
        self.view = view

    def __len__(self):
        return self.view.shape[0]

    def __getitem__(self, i):
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"RowDataset index must be an int, got {type(i).__name__} {i!r}")
        row = self.view[i]
        return row.materialize() if hasattr(row, "materialize") else row

    def __getitems__(self, indices):
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":
            if indices.size:
                raise IndexError(f"RowDataset indices must be integers, got {indices.dtype} "
                                 f"values {indices.ravel()[:5].tolist()}")
            indices = indices.astype(np.intp)
        rows = self.view[indices.reshape(-1)]
        return list(rows)

    def __repr__(self):
        return f"RowDataset({self.view!r})"
