# Included by _view.pyx: iterating a BroadcastView, row by row (``for row in view``) or in
# materialized batches (``iter_batches``, whose machinery is lazybcast._batches).


def _rows(view):
    """The rows of a view of rank >= 1: NumPy's items along axis 0 for rank 1, else each row
    materialized (a writeable ndarray of its own)."""
    if len(view.shape) == 1:
        values = np.broadcast_to(_source_of(view), view.shape)
        for i in range(view.shape[0]):
            yield values[i]
        return
    for i in range(view.shape[0]):
        yield view[i].materialize()


@cython.auto_pickle(False)
cdef class _Iteration(_Pickling):
    """Iteration and batches of a :class:`BroadcastView` (a base class of it; never
    instantiated on its own)."""

    def __iter__(self):
        # (not a generator itself: iter() of a 0-d view raises at once, as NumPy's does, so
        # np.iterable(view) is False)
        if not self.shape:
            raise TypeError("iteration over a 0-d BroadcastView")
        return _rows(self)

    def iter_batches(self, batch_size, *, out=None, drop_last=False, prefetch=0):
        """iter_batches(batch_size, *, out=None, drop_last=False, prefetch=0)

        Yield consecutive materialized batches along axis 0.

        Parameters
        ----------
        batch_size : int
            Rows per batch (>= 1). The last batch may be shorter.
        out : array or list of arrays, optional
            A writeable buffer of shape ``(batch_size,) + view.shape[1:]`` and the view's dtype
            (an ndarray, or any object exposing DLPack or the buffer protocol), or a ring of
            several: batch ``i`` is written into ``out[i % len(out)]`` (the last, shorter one
            into a leading slice), and ``out[k][:n]`` is yielded (the caller's type: a
            tensor for a tensor). Nothing is allocated per batch; batch ``i`` stays valid
            until batch ``i + len(out) - prefetch`` is requested (with one buffer: until the
            next one).
        drop_last : bool
            Skip a last batch shorter than ``batch_size``.
        prefetch : int
            Materialize up to this many batches ahead on a background thread, from 0 to
            ``MAX_PREFETCH`` (32), and below ``len(out)`` with a ring. Ctrl-C or closing the
            generator stops the background copy at its next kernel block (4 MiB).

        Examples
        --------
        >>> import numpy as np, lazybcast
        >>> v = lazybcast.broadcast_to(np.arange(2), (5, 2))
        >>> [b.shape for b in v.iter_batches(2)]
        [(2, 2), (2, 2), (1, 2)]
        """
        from lazybcast._batches import iter_batches
        return iter_batches(self, batch_size, out=out, drop_last=drop_last, prefetch=prefetch)
