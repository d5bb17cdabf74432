# Included by _view.pyx: pickling a BroadcastView (its compact source travels, or for a source
# in a memory-mapped file its path and region: lazybcast._memmap) and dask (a token from the
# source, and to_dask: lazybcast._dask).


@cython.auto_pickle(False)
cdef class _Pickling(_ArrayMethods):
    """Pickling and dask of a :class:`BroadcastView` (a base class of it; never instantiated
    on its own)."""

    def __reduce__(self):
        # A source in a memory-mapped file travels as its path and region (lazybcast._memmap).
        from lazybcast._memmap import reduce_by_reference
        by_reference = reduce_by_reference(self)
        if by_reference is not None:
            return by_reference
        base = None if self.base is _source_of(self) else self.base
        if base is not None and not _same_elements(base, _source_of(self)):
            # A sliced, transposed or reversed view: the compact source is all that travels
            # (unpickling rebuilds base as source.reshape(base_shape), in C order).
            base = None
        base_shape = None if base is None else tuple(base.shape)
        source = _source_of(self)
        if source.ndim > 32 and source.dtype.hasobject:
            source = _Squeezed(source)  # NumPy cannot pickle such an array itself
        return (_rebuild, (source, self.shape, self.mode, base_shape))

    def __dask_tokenize__(self):
        from dask.base import tokenize

        from lazybcast._memmap import file_token
        source = file_token(_source_of(self))  # a memory-mapped source: its file, not its bytes
        if source is None:
            source = tokenize(_source_of(self))
        return ("lazybcast.BroadcastView", self.shape, self.mode, source)

    def to_dask(self, chunks="auto"):
        """to_dask(chunks="auto")

        A ``dask.array.Array`` over this view; each chunk is materialized by our kernel on the
        worker that computes it. Needs the ``lazybcast[dask]`` extra.
        """
        from lazybcast._dask import to_dask
        return to_dask(self, chunks)


class _Squeezed:
    """Pickles an array of more than 32 axes (which NumPy refuses for object dtypes) as its
    squeezed form and ``numpy.reshape``."""

    def __init__(self, array):
        self.array = array

    def __reduce__(self):
        shape = self.array.shape
        return (np.reshape, (self.array.reshape([n for n in shape if n != 1]), shape))


def _same_elements(base, source):
    """Whether ``source.reshape(base.shape)`` reads ``base``'s elements in C order (same size,
    same memory, same order), so that ``base`` can be rebuilt from the source alone."""
    if base.size != source.size:
        return False
    flat = np.asarray(base).reshape(source.shape)  # a copy (O(source)) when not a plain view
    return (flat.__array_interface__["data"][0] == source.__array_interface__["data"][0]
            and all(s == t for n, s, t in zip(source.shape, flat.strides, source.strides)
                    if n > 1))

