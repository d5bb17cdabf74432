# Included by _kernels.pyx: thresholds of the kernels, and what they are derived from.
#
# Nothing here is a constant tuned on one CPU: what depends on the machine is derived from the
# caches the OS reports at import (Linux sysfs; sysconf elsewhere), or measured once, the
# first time it matters, and kept for the process. LAZYBCAST_STREAM_BYTES (bytes) overrides
# the streaming threshold, LAZYBCAST_AUTO_THREADS_BYTES the two-thread one. The evidence for
# each rule is in benchmarks/RESULTS.md ("Machine-derived thresholds").

import os as _os

#: A replicated block grows by doubling until it reaches this many bytes; from then on the
#: first chunk of this size (hot in cache) is copied forward.
REPLICATE_CHUNK = 64 * 1024
#: An innermost broadcast run shorter than this many bytes is a store loop, not replication.
cdef intp_t REPLICATE_MIN = 16384
#: Work between two looks at Ctrl-C and the unit of work given to one thread.
CHUNK_BYTES = 4 * 1024 * 1024


def _cpu_list_count(text):
    """Number of CPUs in a sysfs list such as ``0-3,8``."""
    count = 0
    for part in text.strip().split(","):
        if "-" in part:
            lo, hi = part.split("-")
            count += int(hi) - int(lo) + 1
        elif part:
            count += 1
    return count


def _shared_cache():
    """``(bytes, cpus sharing it)`` of the largest cache CPU 0 reports, or ``(0, 1)``."""
    import glob
    best = (0, 1)
    for index in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            with open(index + "/size") as f:
                text = f.read().strip().upper()
            scale = 1
            for suffix, factor in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
                if text.endswith(suffix):
                    text, scale = text[:len(text) - 1], factor
            size = int(text) * scale
            try:
                with open(index + "/shared_cpu_list") as f:
                    sharing = max(1, _cpu_list_count(f.read()))
            except (OSError, ValueError):
                sharing = 1
            if size > best[0]:
                best = (size, sharing)
        except (OSError, ValueError):
            pass
    if best[0] == 0:
        try:  # glibc's sysconf (its answer can be the whole package's cache)
            best = (max(0, _os.sysconf("SC_LEVEL3_CACHE_SIZE")), _os.cpu_count() or 1)
        except (AttributeError, ValueError, OSError):
            pass
    return best


def _env_bytes(name):
    try:
        value = int(_os.environ.get(name, ""))
    except ValueError:
        return None
    return value if value >= 0 else None


def _usable_cpus():
    try:
        return len(_os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return _os.cpu_count() or 1


SHARED_CACHE_BYTES, SHARED_CACHE_CPUS = _shared_cache()
_L3 = SHARED_CACHE_BYTES or 32 << 20

#: Candidate streaming thresholds (bytes). LOW is glibc's non-temporal threshold: 3/4 of the
#: shared cache's share per CPU sharing it (12 MiB for 32 MiB shared by 2). HIGH is 1.5x the
#: shared cache, for machines whose cache keeps an output of the cache's size (measured:
#: Zen 5, ordinary stores 70 GB/s against 43 for 32 MB). Which one applies is measured once
#: (_calibrate_stream), the first time an output reaches LOW.
STREAM_BYTES_LOW = max(4 << 20, 3 * (_L3 // max(1, SHARED_CACHE_CPUS)) // 4)
STREAM_BYTES_HIGH = max(STREAM_BYTES_LOW, 3 * _L3 // 2)
#: Outputs at least this large are written with non-temporal stores (before calibration: the
#: lower candidate; stream_threshold() gives the value in use).
STREAM_BYTES = _env_bytes("LAZYBCAST_STREAM_BYTES") or STREAM_BYTES_LOW
#: Outputs at least this large use two threads when materialize() is not told how many: two
#: blocks of work, so that both threads have one, on a machine with two usable CPUs or more
#: (starting and joining a helper costs ~20 us, a 4 MB block 100-400 us).
AUTO_THREADS_BYTES = _env_bytes("LAZYBCAST_AUTO_THREADS_BYTES") or (
    2 * CHUNK_BYTES if _usable_cpus() >= 2 else 1 << 62)

cdef intp_t _replicate_chunk = REPLICATE_CHUNK
cdef intp_t _chunk_bytes = CHUNK_BYTES
cdef intp_t _stream_bytes = STREAM_BYTES
cdef intp_t _stream_low = min(STREAM_BYTES, STREAM_BYTES_LOW)
cdef intp_t _auto_threads_bytes = AUTO_THREADS_BYTES
cdef bint _stream_calibrated = _env_bytes("LAZYBCAST_STREAM_BYTES") is not None


cdef double _time_replication(char* buf, intp_t n, bint stream) noexcept:
    """Seconds to fill ``buf[chunk:n]`` from its first 64 kB chunk (the replication loop)."""
    from time import perf_counter
    cdef intp_t o
    cdef double start = perf_counter()
    with nogil:
        o = REPLICATE_MIN * 4
        while o + REPLICATE_MIN * 4 <= n:
            if stream:
                lzb_stream_copy(buf + o, buf, REPLICATE_MIN * 4)
            else:
                memcpy(buf + o, buf, REPLICATE_MIN * 4)
            o += REPLICATE_MIN * 4
        if stream:
            lzb_stream_fence()
    return perf_counter() - start


cdef int _calibrate_stream() except -1:
    """Choose between the two streaming thresholds, once: write an output of half the shared
    cache (above LOW, below HIGH) with ordinary and with non-temporal stores (best of 3 each,
    taking turns; 15-100 ms). If ordinary stores are 1.5x faster there (Zen 5: 1.6x at 32 MB),
    the cache keeps such outputs and streaming starts at STREAM_BYTES_HIGH; else (Zen 3:
    non-temporal stores 1.65x faster) at STREAM_BYTES_LOW. The margin keeps a noisy
    measurement on a busy machine from choosing HIGH where it does not hold."""
    global _stream_bytes, _stream_calibrated, STREAM_BYTES
    cdef intp_t n = _L3 // 2
    cdef char* buf
    cdef double ordinary = 1e9, streamed = 1e9
    cdef int r
    _stream_calibrated = True
    buf = <char*>malloc(n)
    if buf == NULL:
        return 0
    try:
        with nogil:
            memset(buf, 1, n)
        for r in range(3):
            ordinary = min(ordinary, _time_replication(buf, n, False))
            streamed = min(streamed, _time_replication(buf, n, True))
    finally:
        free(buf)
    _stream_bytes = STREAM_BYTES_HIGH if ordinary * 1.5 < streamed else STREAM_BYTES_LOW
    STREAM_BYTES = _stream_bytes
    return 0


def stream_threshold():
    """stream_threshold()

    The output size (bytes) from which copies use non-temporal stores on this machine,
    measuring it first if no copy has needed it yet (see ``_kernels_machine.pxi``).

    >>> stream_threshold() in (STREAM_BYTES_LOW, STREAM_BYTES_HIGH, STREAM_BYTES)
    True
    """
    if not _stream_calibrated:
        _calibrate_stream()
    return _stream_bytes
