# Included by _kernels.pyx: thresholds of the kernels, and what they are derived from.

#: A replicated block grows by doubling until it reaches this many bytes; from then on the
#: first chunk of this size (hot in cache) is copied forward.
REPLICATE_CHUNK = 64 * 1024
#: An innermost broadcast run shorter than this many bytes is a store loop, not replication.
cdef intp_t REPLICATE_MIN = 16384
#: Work between two looks at Ctrl-C and the unit of work given to one thread.
CHUNK_BYTES = 4 * 1024 * 1024
def _last_level_cache_bytes():
    """Size of the largest CPU cache (Linux sysfs), or 0 if unknown."""
    import glob
    largest = 0
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            with open(path) as f:
                text = f.read().strip().upper()
            scale = 1
            for suffix, factor in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
                if text.endswith(suffix):
                    text, scale = text[:len(text) - 1], factor
            largest = max(largest, int(text) * scale)
        except (OSError, ValueError):
            pass
    return largest


#: Outputs at least this large are written with non-temporal stores: 1.5x the last-level
#: cache (measured here: with a 32 MB L3, non-temporal replication wins from 64 MB on, at 43
#: against 37 GB/s, and loses below, at 43 against 70 GB/s for 32 MB). Smaller outputs use
#: ordinary stores, so that they are still in cache for the caller.
STREAM_BYTES = max(8 << 20, 3 * _last_level_cache_bytes() // 2 or 48 << 20)
#: Outputs at least this large use two threads when materialize() is not told how many.
AUTO_THREADS_BYTES = 32 * 1024 * 1024

cdef intp_t _replicate_chunk = REPLICATE_CHUNK
cdef intp_t _chunk_bytes = CHUNK_BYTES
cdef intp_t _stream_bytes = STREAM_BYTES
