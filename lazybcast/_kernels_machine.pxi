# Included by _kernels.pyx: thresholds of the kernels, and what they are derived from.
#
# Nothing here is a constant tuned on one CPU: what depends on the machine is derived from the
# caches the OS reports at import (Linux sysfs; sysconf elsewhere), or measured once, the
# first time it matters, and kept for the process (_kernels_calibrate.pxi: which of the
# candidates below apply). LAZYBCAST_STREAM_BYTES (bytes) overrides
# the streaming threshold, LAZYBCAST_AUTO_THREADS_BYTES and LAZYBCAST_LOOP_THREADS_BYTES the
# two-thread ones. The evidence for
# each rule is in benchmarks/RESULTS.md ("Machine-derived thresholds").

import os as _os

#: A broadcast block (an outer axis's run in the destination) smaller than this many bytes is
#: written once and copied into the others; a larger one is written again from its source.
REPLICATE_CHUNK = 64 * 1024
#: An innermost broadcast run shorter than this many bytes is a store loop, not replication.
cdef intp_t REPLICATE_MIN = 16384
#: A source row of at least this many bytes broadcast over the rows of an output that is not
#: streamed goes to lzb_copy_down (packed rows, two of which fit in L1: the
#: first two, then the rest swept out from them; other rows: copied into each row a chunk at
#: a time, loads from L1, aligned stores) instead of written once and replicated. Zen 4, one
#: thread, 2 MiB outputs, memset 21.3-22.6 us, replicated -> copied down a chunk at a time:
#: rows of 1024 bytes 30.0 -> 23.4-23.9 us, 1536 28.6 -> 25.6-26.1, 2000 29.9 -> 25.0-25.9,
#: 2400 28.3 -> 23.9-24.2, 2048 29.1 -> 28.8-29.6; swept: 22.2-23.2 us for rows of 1-12.5 kB
#: (benchmarks/RESULTS.md, "Replication and packed rows at the memset limit").
cdef intp_t COPY_DOWN_MIN = 1024
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


def _size_bytes(text):
    """Bytes of a sysfs cache size such as ``32768K``, ``1M`` or ``1024`` (ValueError if
    it is none of these)."""
    text = text.strip().upper()
    for suffix, shift in (("K", 10), ("M", 20), ("G", 30)):
        if text.endswith(suffix):
            return int(text[:len(text) - 1]) << shift
    return int(text)


def _shared_cache():
    """``(bytes, cpus sharing it)`` of the largest cache CPU 0 reports, or ``(0, 1)``."""
    import glob
    best = (0, 1)
    for index in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            with open(index + "/size") as f:
                size = _size_bytes(f.read())
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


def _cache_sysfs(level, attr):
    """An attribute of CPU 0's data (or unified) cache of this level, from sysfs (``size``
    in bytes, ``ways_of_associativity``), or 0 if unknown."""
    import glob
    for index in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            with open(index + "/level") as f:
                found = f.read().strip()
            with open(index + "/type") as f:
                kind = f.read().strip()
            if found != str(level) or kind not in ("Data", "Unified"):
                continue
            with open(f"{index}/{attr}") as f:
                return _size_bytes(f.read())
        except (OSError, ValueError):
            pass
    return 0


def _cache_bytes(level):
    """Size of CPU 0's data (or unified) cache of this level (sysfs; sysconf elsewhere), or
    0 if unknown."""
    found = _cache_sysfs(level, "size")
    if found:
        return found
    try:
        return max(0, _os.sysconf(f"SC_LEVEL{level}_{'DCACHE' if level == 1 else 'CACHE'}_SIZE"))
    except (AttributeError, ValueError, OSError):
        return 0


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
L1D_BYTES = _cache_bytes(1)
L2_BYTES = _cache_bytes(2)
#: In a virtual machine, at most this many times the L2 of each CPU sharing the shared cache
#: is counted as the shared cache the thresholds below derive from (L3_BYTES). A VM reports
#: its host's whole L3 as shared by its own few CPUs, while the host's other cores fill it
#: too: the Xeon VM (GenuineIntel family 6 model 167, L2 2 MiB) reports 480 MiB shared by
#: its 2 CPUs (240 MiB, 120 L2s, per CPU), yet one thread's `memset` of a non-zero byte runs
#: at 27 GB/s up to 48 MiB and at 10 GB/s from 96 MiB. Its thresholds derived from 480 MiB
#: (copies stream from 180 MiB) left a 64 MiB float32 transpose at 17-37 ms, against
#: 5.7-6.8 ms streamed. The project's EPYC VMs report 32 MiB for 2 CPUs: 16 MiB per CPU, 16
#: (Zen 4 and 5, L2 1 MiB) or 32 (Zen 3, L2 512 KiB) L2s, at or below the cap; a
#: stacked-cache Zen 3 has 24 L2s of L3 per core. On bare metal the CPUs counted as sharing
#: the cache are all that share it, so what is reported is counted whole: a
#: frequency-optimised EPYC 72F3 gives each core a 32 MiB L3 (64 L2s) of its own
#: (benchmarks/RESULTS.md, "A shared cache larger than a VM's share").
L3_PER_L2_MAX = 32


def _virtual_machine():
    """True when the CPU says it runs under a hypervisor (the ``hypervisor`` flag of Linux's
    /proc/cpuinfo, CPUID leaf 1's bit 31); False on bare metal or when it cannot tell."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return "hypervisor" in line.split()
    except (OSError, UnicodeDecodeError):
        pass
    return False


def _counted_l3(shared, cpus, l2, virtual):
    """The shared cache (bytes) the thresholds count on, of a machine reporting ``shared``
    bytes shared by ``cpus`` CPUs, each with ``l2`` bytes of L2 (0: unknown): in a
    ``virtual`` machine at most L3_PER_L2_MAX L2s per CPU sharing it, elsewhere what is
    reported; 32 MiB where nothing is reported."""
    if shared and l2 and virtual:
        shared = min(shared, L3_PER_L2_MAX * l2 * max(1, cpus))
    return shared or 32 << 20


VIRTUAL_MACHINE = _virtual_machine()
#: The shared cache the thresholds count on (_counted_l3 of what the machine reports).
L3_BYTES = _counted_l3(SHARED_CACHE_BYTES, SHARED_CACHE_CPUS, L2_BYTES, VIRTUAL_MACHINE)
#: The L2's ways of associativity (sysfs; 8 where unknown): with L2_BYTES, the sets that
#: lines a fixed stride apart fall into, which decides whether a strided walk stays in L2
#: (_lines_stay_in_l2, for the choice between tiles and rows in a transpose).
L2_WAYS = _cache_sysfs(2, "ways_of_associativity") or 8
#: Replication copies forward from a chunk of the output's first bytes this large: a quarter
#: of the L1 data cache (8 kB for 32 KiB), at least 4 kB, at most 64 kB: small enough to stay
#: in L1 while the destination's lines pass through it. A chunk from L2 reads as much as it
#: writes (Zen 3, output in L3, 1-4 MiB: 4-16 kB chunks 0.91-1.04 of a non-zero memset,
#: 64 kB chunks 0.81-0.86; benchmarks/RESULTS.md, "Machine-derived thresholds"). A block or
#: row of up to twice this is swept out from its first two copies (lzb_copy_periodic: those
#: two fit in L1).
REPLICATE_COPY_BYTES = min(64 << 10, max(4 << 10, (L1D_BYTES or 32 << 10) // 4))

#: A transpose that streams its output (see STREAM_BYTES) goes through a staging block of
#: this many bytes, a quarter of the L2 cache (128 kB for 512 KiB; at least 32 kB, at most
#: 512 kB), so that the block and the tiles passing through it stay in L2: its rows are the
#: runs written out, 1-2 kB for 4096 columns of float32 (lzb_transpose_staged), or 256 bytes
#: in the source's order (lzb_transpose_rows, whose block is rows x 256 bytes).
TRANSPOSE_STAGE_BYTES = min(512 << 10, max(32 << 10, (L2_BYTES or 256 << 10) // 4))
#: The other candidate for the transposes that read the source in its order
#: (lzb_transpose_rows): a 32 kB staging block, two thirds of a 48 KiB L1d. Which of the two
#: runs is measured once, at a process's first such transpose (_calibrate_stage). 64 MiB
#: transposes, one / two threads, ms: Xeon VM (GenuineIntel family 6 model 167, L2 2 MiB:
#: 512 kB by the rule) float32 11.4-12.7 / 5.8-6.3 with 512 kB, 8.1-9.0 / 4.2-4.6 with 32 kB,
#: uint8 15.9 / 8.4 -> 11.9 / 6.0; Zen 5 (family 26 model 2, L2 1 MiB: 256 kB) float32 5.2
#: with 256 kB, 6.4 with 32 kB (benchmarks/RESULTS.md, "A shared cache larger than a VM's
#: share"). On the Xeon VM the gain is the same for sources of 4 to 64 MiB (1.2x-1.35x), so
#: the measurement transposes a source of twice L2 whose rows are as long as the rule's
#: block holds rows (4 MiB there: 512 rows of 2048 float32).
TRANSPOSE_STAGE_SMALL_BYTES = 32 << 10

#: A transpose reads its source in the source's order (_tiles_in_source_order) only if the
#: source is larger than this, the L2 cache (and its output streams, or the first such
#: transpose measured that order faster: _calibrate_stage): one in L2 is read in any
#: order at the same cost, and the order of the output's bands then writes better. Zen 4
#: (L2 1 MiB), a 256x256 float32 plane repeated to 48 MiB, one / two threads: 5.2-5.3 /
#: 2.7 ms in the output's order, 7.8 / 5.0-5.3 ms in the source's (benchmarks/RESULTS.md,
#: "Transposes in the source's order").
ROW_ORDER_SOURCE_BYTES = L2_BYTES or (512 << 10)

#: Candidate streaming thresholds (bytes), from the shared cache counted (L3_BYTES). LOW is
#: glibc's rule for its non-temporal threshold: 3/4 of the shared cache's share per CPU
#: sharing it (12 MiB for 32 MiB shared by 2). MID is 3/4 of the whole shared cache (one
#: writer keeps it all). HIGH is 1.5x the shared cache, for machines
#: whose cache keeps an output of the cache's size (measured: Zen 5, ordinary stores 70 GB/s
#: against 43 for 32 MB). Which ones apply is measured once (_calibrate_stream), the first
#: time an output reaches LOW.
STREAM_BYTES_LOW = max(4 << 20, 3 * (L3_BYTES // max(1, SHARED_CACHE_CPUS)) // 4)
STREAM_BYTES_MID = max(STREAM_BYTES_LOW, 3 * L3_BYTES // 4)
STREAM_BYTES_HIGH = max(STREAM_BYTES_MID, 3 * L3_BYTES // 2)
#: Fills stream from here on a machine where ordinary stores fill an output of the shared
#: cache's size faster than non-temporal ones (_calibrate_fill): four times the shared cache.
#: Zen 4 (family 25 model 17, 32 MiB L3), the same output filled again, medians of 5-6
#: rounds, ordinary / non-temporal time with one thread and with two (the default there):
#: 24-32 MiB 0.89-1.04 and 0.36-0.59, 40-48 MiB 0.98-1.12 and 0.67-0.82, 64 MiB 0.98-1.03
#: and 0.80-0.95, 96-98 MiB 0.87-1.09 and 0.86-0.93, 128 MiB 1.06-1.12 and 0.97-1.02
#: (benchmarks/RESULTS.md, "Fills that stay in the cache").
STREAM_FILL_HIGH = 4 * L3_BYTES
#: Fills stream from here instead, on a machine that chose STREAM_FILL_HIGH, if with one
#: thread non-temporal stores fill an output of this size 1.15x faster than ordinary ones
#: (_calibrate_fill_beyond, the first time an output reaches it): twice the shared cache.
#: One thread tells the machines apart where two do not: same output filled again, ordinary
#: / non-temporal time, one thread: Zen 5 (family 26 model 2, 32 MiB L3) 1.20-1.30 at 64 MiB
#: (two threads 0.98-1.13), and fills of 64-128 MiB at 0.82-0.99 of the memset limit with
#: ordinary stores against 0.99-1.02 streamed; Zen 4 (family 25 model 17) 0.98-1.03 (two
#: threads 0.80-0.95: ordinary stores win there up to 96 MiB) (benchmarks/RESULTS.md,
#: "Fills beyond the cache").
STREAM_FILL_BEYOND = 2 * L3_BYTES
#: Runs of one item (memset, and `rep stos` of 2-, 4- and 8-byte items: ERMS) of
#: ITEM_RUN_MIN_BYTES or more stream only from here, on a machine that chose
#: STREAM_FILL_BEYOND, if at that size `rep stos` with the default threads fills rows of
#: ITEM_RUN_MIN_BYTES faster than non-temporal stores (_calibrate_item_beyond): three
#: times the shared cache. The string instructions write whole lines without reading them
#: and keep up with non-temporal stores further than vector stores do. Zen 5 (family 26
#: model 2, 32 MiB L3), one float32 repeated, the same output filled again, medians of
#: three rounds' best of 9, `rep stos` / non-temporal, two threads: 48 MiB 0.80 / 1.13 ms,
#: 64 MiB 1.24 / 1.50, 96 MiB 2.35 / 2.28, 128 MiB 3.35 / 3.01, 256 MiB 7.27 / 6.02 (one
#: thread alike; `memset` of 64 MiB 1.36) (benchmarks/RESULTS.md, "Runs of one item beyond
#: the cache").
STREAM_ITEM_BEYOND = 3 * L3_BYTES
#: The shortest run of one item that follows STREAM_ITEM_BEYOND (shorter ones follow the
#: fills' threshold): each run is one `rep stos`, whose start costs more than a vector
#: store loop's; a review measured column fills (N,1) -> (N,k) of 80 MiB, one thread, on the
#: same Zen 5 host with the other core busy: rows of 1.2-16 kB 1.2x-1.6x slower by `rep stos`
#: than streamed, 256 kB 1.15x. The measurement times rows of this length.
ITEM_RUN_MIN_BYTES = 64 << 10
#: A long row broadcast over several (lzb_copy_down: rows of more than two chunks of
#: REPLICATE_COPY_BYTES, or not packed together) is copied into all of them a chunk at a time
#: only in outputs below this size, LOW: this CPU's share of the shared cache. A larger output
#: is written row by row (memcpy), in the order memory takes writes best. Zen 5 (family 26
#: model 2, 32 MiB L3), C model, one thread, GB/s chunk by chunk / row by row (memcpy),
#: rows of 32 kB: 4 MiB 108 / 133, 16 MiB 86 / 118, 24 MiB 40 / 112, 33.5 MiB 27 / 55,
#: 64 MiB 24 / 38; rows of 512 kB: 105 / 72, 78 / 94, 36 / 88, 25 / 52, 24 / 43
#: (benchmarks/RESULTS.md, "Rows copied down beyond the cache"). Whether chunks pay at all,
#: even in the cache, is measured once, at the first copy that may use them
#: (_calibrate_copy_down): where rows win (Zen 5) none is copied down a chunk at a time.
COPY_DOWN_MAX_BYTES = STREAM_BYTES_LOW
#: Outputs at least this large are copied from their source with non-temporal stores (before
#: calibration: the lower candidate; stream_threshold() gives the value in use). A
#: transposing copy compares its output plus the source it reads (twice the output for a
#: plain transpose): it reads the source across rows, a few lines from each, which the
#: prefetchers do not follow, so a source that leaves the cache costs it far more than it
#: costs a copy along rows (Zen 4, family 25 model 17, one thread, 8 MiB transposes: 1.7x-3x
#: faster streamed, through the staging block, than with ordinary stores; two threads
#: 1.2x-2.2x; benchmarks/RESULTS.md, "Transposes count their source").
STREAM_BYTES = _env_bytes("LAZYBCAST_STREAM_BYTES") or STREAM_BYTES_LOW
#: Outputs at least this large are filled (one repeated item, replicated blocks: nothing is
#: read but an L1-resident chunk) with non-temporal stores: MID, or the copy threshold if
#: higher, before calibration (_calibrate_fill, which may choose STREAM_FILL_HIGH). A fill
#: that stays in the cache needs no read for ownership the second time (Zen 3, same output
#: written again: 12.6 MB rgb fill 602 -> 326 us, 16.8 MB 725 -> 392 us with ordinary
#: stores), while a copy from a source still gains from streaming there.
#: stream_threshold("fill") gives the value in use; LAZYBCAST_STREAM_BYTES sets both.
STREAM_FILL_BYTES = _env_bytes("LAZYBCAST_STREAM_BYTES") or max(STREAM_BYTES, STREAM_BYTES_MID)
#: Outputs at least this large use two threads when materialize() is not told how many, on a
#: machine with two usable CPUs or more: one block of work (CHUNK_BYTES, 4 MiB) or more, where
#: one thread writes for ~75-110 us, over twice what a call that must start its helper loses
#: (~25-40 us, median), while a helper still spinning from the previous copy takes its share
#: at once (Zen 3, loops of 4 MiB rows: 105 -> 61 us; benchmarks/RESULTS.md, "Notes on this
#: run"). Below it one-off copies would lose more than loops gain.
AUTO_THREADS_BYTES = _env_bytes("LAZYBCAST_AUTO_THREADS_BYTES") or (
    CHUNK_BYTES if _usable_cpus() >= 2 else 1 << 62)

#: Outputs from this size up to AUTO_THREADS_BYTES use two threads too, when materialize() is
#: not told how many, if they come in a loop: a helper is spinning from a previous copy, or
#: the copy is the third in a row, each started within 50 us of the previous one's end
#: (_loop_threads). One core's L2 cache, at least 128 kB. Below it two threads write faster
#: in a loop, but the output then lies half in the other core's cache, and whoever reads it
#: next on the caller's thread pays more than the write saved: Xeon VM (GenuineIntel family
#: 6 model 167, L2 2 MiB), rows of 1024 float64, loops, one / two threads, write + read
#: (`out.sum()`) right after, medians of 80, two runs (benchmarks/threads_reader.py): 512 KiB
#: 30.4-32.7 / 35.8-35.9 us, 1 MiB 44.4-50.2 / 56.4-57.9, 2 MiB 133.5-144.9 / 120.3-134.5
#: (benchmarks/RESULTS.md, "Two threads and the reader after them"). Zen 3 (L2 512 KiB),
#: the write alone, a spinning helper: 256 kB 4.6 -> 4.4 us, 512 kB 10.1 -> 7.8 us, 1 MB
#: 20.7 -> 14.3 us, 2 MB 52.8 -> 28.1 us (RESULTS.md, "Two threads in loops"). Off where
#: helpers do not spin (HELPER_SPIN_US under 50, one CPU, Windows).
LOOP_THREADS_BYTES = _env_bytes("LAZYBCAST_LOOP_THREADS_BYTES") or (
    max(128 << 10, L2_BYTES or 512 << 10) if _usable_cpus() >= 2 else 1 << 62)

#: Outputs from this size up to AUTO_THREADS_BYTES use two threads too, when materialize() is
#: not told how many, if a helper is parked (asleep after an earlier copy): waking it costs
#: the caller one futex wake, and it pays from here for a copy alone. Half of
#: AUTO_THREADS_BYTES, at least LOOP_THREADS_BYTES. Zen 5 KVM guest, one-off copies 3 ms
#: apart, the process quiet, medians of 61, one thread against two waking a parked helper
#: (benchmarks/helpers_oneoff.py; benchmarks/RESULTS.md, "Parked helpers"): output written
#: just before 1 MiB 21 / 28 us, 2 MiB 41 / 38, 4 MiB 84 / 58; output evicted 1 MiB 32 /
#: 34, 2 MiB 62 / 46. A copy that follows it finds the woken helper spinning. On the Xeon
#: VM (no halt polling in the guest) a wake costs the caller 5-55 us and the helper runs
#: 50-60 us after it, yet one thread there won only after 3 ms pauses and lost after 30 ms
#: ones, so the rule stays (RESULTS.md, "Two threads and the reader after them").
WAKE_THREADS_BYTES = max(LOOP_THREADS_BYTES, AUTO_THREADS_BYTES // 2)

#: Blocks of a copy shared among threads hold at least this many bytes (~3 us of writing,
#: against ~0.3 us to hand a block out and check for Ctrl-C).
THREAD_BLOCK_MIN_BYTES = 64 << 10

#: Helper threads spin after their share of a copy for as long as it took, at most this many
#: microseconds (and at least 50 us), waiting for the next copy; then they sleep until a
#: copy wakes them (_kernels_pool.h). Copies at a steady pace (a loop with work between
#: them) make the spin twice the last gap between copies (capped at this maximum), where
#: the gap is at most this maximum: Zen 5 KVM guest, copies 100-300 us apart, medians of
#: 300, 2 MiB 22-32 -> 12-19 us, 4 MiB 41-46 -> 27-33 us; 600-900 us apart, 4 MiB 49-54 ->
#: 34-39 us, 6.4 MB 52-61 -> 31-34 us; the second CPU then busy through the loop
#: (benchmarks/RESULTS.md, "Helpers that wait out a loop's gaps"). 0: no pool, they exit at
#: once (each multi-threaded copy starts its helpers).
#: On a machine with one usable CPU a spinning helper would only take the CPU from the
#: caller: 0 there.
HELPER_SPIN_US = _env_bytes("LAZYBCAST_HELPER_SPIN_US")
if HELPER_SPIN_US is None:
    HELPER_SPIN_US = 1000 if _usable_cpus() >= 2 else 0
HELPER_SPIN_US = min(HELPER_SPIN_US, 10 ** 9)

cdef intp_t _replicate_chunk = REPLICATE_CHUNK
cdef intp_t _l2_ways = max(1, L2_WAYS)
cdef intp_t _l2_sets = max(1, (L2_BYTES or 512 << 10) // (64 * _l2_ways))
cdef intp_t _replicate_copy = REPLICATE_COPY_BYTES
cdef intp_t _transpose_stage_bytes = TRANSPOSE_STAGE_BYTES
cdef intp_t _rows_stage_bytes = 0  # (lzb_transpose_rows' block when measured apart; 0: the above)
cdef bint _stage_calibrated = False
cdef bint _source_order_cached = False  # (measured: transposes below the streaming threshold
                                        # take the source's order too; _calibrate_stage)
cdef intp_t _row_order_source = ROW_ORDER_SOURCE_BYTES
cdef intp_t _chunk_bytes = CHUNK_BYTES
cdef intp_t _thread_block_min = THREAD_BLOCK_MIN_BYTES
cdef intp_t _stream_bytes = STREAM_BYTES
cdef intp_t _stream_fill_bytes = STREAM_FILL_BYTES
cdef intp_t _stream_low = min(STREAM_BYTES, STREAM_BYTES_LOW)
cdef bint _new_outputs_streamed = False  # (_unwritten; hook _new_outputs_stream)
cdef intp_t _copy_down_max = COPY_DOWN_MAX_BYTES
cdef bint _copy_down_calibrated = False
cdef intp_t _auto_threads_bytes = AUTO_THREADS_BYTES
cdef intp_t _loop_threads_bytes = LOOP_THREADS_BYTES
cdef intp_t _wake_threads_bytes = WAKE_THREADS_BYTES
cdef bint _stream_calibrated = _env_bytes("LAZYBCAST_STREAM_BYTES") is not None
cdef bint _fill_beyond_calibrated = _stream_calibrated
cdef intp_t _fill_beyond = STREAM_FILL_BEYOND
cdef intp_t _stream_item_bytes = 0  # (runs of one item: from _stream_fill_bytes, or this)
cdef intp_t _item_run_min = ITEM_RUN_MIN_BYTES
cdef bint _item_beyond_calibrated = _stream_calibrated
cdef int _item_calibrations = 0  # (test hook _item_measurements)
cdef int _calibrations = 0  # completed calibrations (test hook _stream_calibrations)


# ---- Test and benchmark hooks: the thresholds in use ----------------------------------

cdef intp_t _size_or(object value, intp_t current, str name) except -1:
    """A hook's argument ``name``: ``value`` checked to be a size (>= 0), or ``current``
    if it is None."""
    if value is None:
        return current
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def _rows_stage(state=None):
    """Test hook: ``(measured, nbytes)``: whether this process measured the staging block of
    transposes in the source's order (_calibrate_stage, or set by _transpose_stage), and the
    block they use (bytes). ``state``, such a pair, restores it (after _transpose_stage)."""
    global _stage_calibrated, _rows_stage_bytes
    before = (_stage_calibrated, _rows_stage_bytes or _transpose_stage_bytes)
    if state is not None:
        measured, nbytes = state
        nbytes = _size_or(nbytes, 0, "nbytes")
        _stage_calibrated = bool(measured)
        _rows_stage_bytes = 0 if nbytes == _transpose_stage_bytes else nbytes
    return before


def _source_order_in_cache(value=None):
    """Test hook: whether transposes below the streaming threshold take the source's order
    too (what _calibrate_stage measured, or ``value``: a bool sets it, and the staging
    block is then not measured any more; _rows_stage restores that). Returns the value
    before."""
    global _source_order_cached, _stage_calibrated
    before = bool(_source_order_cached)
    if value is not None:
        _source_order_cached = bool(value)
        _stage_calibrated = True
    return before


def _transpose_stage(nbytes=None):
    """Test and benchmark hook: streamed transposes go through a staging block of
    ``nbytes`` (0: none, the tiles write straight out); ``None`` leaves it. Returns the size
    in use."""
    global _transpose_stage_bytes, _rows_stage_bytes, _stage_calibrated
    if nbytes is not None:  # (set: for every staged transpose, and not measured any more)
        _transpose_stage_bytes = _size_or(nbytes, _transpose_stage_bytes, "nbytes")
        _rows_stage_bytes = 0
        _stage_calibrated = True
    return _transpose_stage_bytes


def _copy_down_max_bytes(nbytes=None):
    """Test hook: a long row broadcast over several is copied into all of them a chunk at a
    time only in outputs smaller than ``nbytes`` (0: never); ``None`` leaves it. Returns the
    size in use."""
    global _copy_down_max, _copy_down_calibrated
    if nbytes is None:
        if not _copy_down_calibrated:
            _calibrate_copy_down()
    else:
        _copy_down_max = _size_or(nbytes, _copy_down_max, "nbytes")
        _copy_down_calibrated = True
    return _copy_down_max


def _stream_thresholds(copy=None, fill=None):
    """Test and benchmark hook: copies from a source stream from ``copy`` bytes of output,
    fills from ``fill``, runs of one item included (after calibrating, as the first copies
    past each threshold would); ``None`` leaves either. Returns the pair in use."""
    global _stream_bytes, _stream_fill_bytes, _stream_item_bytes
    _calibrate(_stream_low, _fill_beyond)
    copy_bytes = _size_or(copy, _stream_bytes, "copy")
    _stream_fill_bytes = _size_or(fill, _stream_fill_bytes, "fill")
    if fill is not None:
        _stream_item_bytes = 0  # (runs of one item too: what the tests that set it expect)
    _stream_bytes = copy_bytes
    return _stream_bytes, _stream_fill_bytes
