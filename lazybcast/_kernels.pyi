# Stub for the compiled module lazybcast/_kernels.pyx. C-level types are kept as comments
# (intp_t is Py_ssize_t). The C API (Plan, plan_init, plan_run, plan_run_objects) lives in
# _kernels.pxd and is not visible from Python. Checked against the build by tests/test_stubs.py.

from typing import Any

import numpy as np

REPLICATE_CHUNK: int  # bytes; a broadcast block smaller than this is written once, then copied
REPLICATE_COPY_BYTES: int  # bytes; replication copies forward from a chunk this large (L1d / 4)
L1D_BYTES: int  # CPU 0's level-1 data cache (0 if unknown)
L2_BYTES: int  # CPU 0's level-2 cache (0 if unknown)
L2_WAYS: int  # its ways of associativity (8 if unknown)
TRANSPOSE_STAGE_BYTES: int  # bytes; a streamed transpose goes through a block this large (L2 / 4)
TRANSPOSE_STAGE_SMALL_BYTES: int  # bytes; the other block measured for transposes in the source order
ROW_ORDER_SOURCE_BYTES: int  # bytes; a larger source is transposed in its own order (L2)
CHUNK_BYTES: int  # bytes of work between two Ctrl-C checks, and per thread task
STREAM_BYTES: int  # outputs at least this large are copied with non-temporal stores
STREAM_FILL_BYTES: int  # ... and filled (one item, replicated blocks) with them
COPY_DOWN_MAX_BYTES: int
STREAM_BYTES_LOW: int  # glibc's rule on L3_BYTES: 3/4 of its share per CPU sharing it
STREAM_BYTES_MID: int  # 3/4 of the shared cache counted (L3_BYTES), as below
STREAM_BYTES_HIGH: int  # 1.5x the shared cache (where the cache keeps such outputs)
STREAM_FILL_HIGH: int  # 4x the shared cache (fills, where ordinary stores fill the cache faster)
STREAM_FILL_BEYOND: int  # 2x the shared cache (fills, where streaming wins beyond the cache)
STREAM_ITEM_BEYOND: int  # 3x the shared cache (runs of one item, where rep stos wins up to it)
ITEM_RUN_MIN_BYTES: int  # 64 kB (the shortest run of one item that follows STREAM_ITEM_BEYOND)
SHARED_CACHE_BYTES: int  # the largest cache CPU 0 reports (0 if unknown)
SHARED_CACHE_CPUS: int  # CPUs sharing it
L3_PER_L2_MAX: int  # in a VM, at most this many L2s per CPU sharing it count as shared cache
VIRTUAL_MACHINE: bool  # True under a hypervisor (the CPU's hypervisor flag)
L3_BYTES: int  # the shared cache the thresholds count on (capped in a VM; 32 MiB if unknown)
AUTO_THREADS_BYTES: int  # outputs at least this large use two threads by default
LOOP_THREADS_BYTES: int  # ... and from this size, copies in a loop
WAKE_THREADS_BYTES: int  # ... and from this size, copies that find a helper parked
THREAD_BLOCK_MIN_BYTES: int  # blocks shared among threads hold at least this many bytes
HELPER_SPIN_US: int  # helpers spin for the next copy at most this long after their share
BINARY_OPS: tuple[str, ...]  # binary_into's operations (ufunc names), by op number
FP_FLAGS: dict[str, int]  # <fenv.h> FE_* bit by np.errstate category

def stream_threshold(kind: str = "copy") -> int: ...  # "copy" or "fill"; measured once

def copy_broadcast(
    src: np.ndarray[Any, Any],  # cnp.ndarray src not None
    out: np.ndarray[Any, Any],  # cnp.ndarray out not None
    threads: int | None = None,
) -> np.ndarray[Any, Any]: ...
def overlaps_itself(a: np.ndarray[Any, Any]) -> bool: ...  # cnp.ndarray a not None
def gather(
    src: np.ndarray[Any, Any],  # cnp.ndarray src not None
    vshape: tuple[int, ...],  # tuple
    axes: tuple[int, ...],  # tuple
    indices: list[np.ndarray[Any, Any]],  # list of 1-D C-contiguous intp arrays
    out: np.ndarray[Any, Any],  # cnp.ndarray out not None
    bpos: int,  # int
    bndim: int,  # int
    report_axes: tuple[int, ...] | None = None,  # tuple, axis numbers for IndexError text
) -> np.ndarray[Any, Any]: ...
def binary_into(
    op: int,  # int, an index of BINARY_OPS
    a: np.ndarray[Any, Any],  # cnp.ndarray a not None
    b: np.ndarray[Any, Any],  # cnp.ndarray b not None
    out: np.ndarray[Any, Any],  # cnp.ndarray out not None
    threads: int | None = None,
) -> int: ...  # FE_* flags raised, or -1 (no loop for these operands; nothing written)
def check_indices(
    indices: list[np.ndarray[Any, Any]],  # list of C-contiguous intp arrays, in key order
    limits: tuple[int, ...],  # tuple, one axis size per array
    report_axes: tuple[int, ...],  # tuple, axis numbers for IndexError text
) -> None: ...
def flat_intp(arr: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]: ...  # cnp.ndarray not None
def _helper_spin(us: int | None = None, min_us: int = 50) -> int: ...
def _helpers_alive() -> int: ...
def _helpers_parked() -> int: ...
def _last_threads() -> int: ...
def _last_streamed() -> bool: ...
def _new_outputs_stream(value: bool | None = ...) -> bool: ...
def _rows_stage(state: tuple[bool, int] | None = None) -> tuple[bool, int]: ...
def _source_order_in_cache(value: bool | None = None) -> bool: ...
def _transpose_stage(nbytes: int | None = None) -> int: ...
def _copy_down_max_bytes(nbytes: int | None = None) -> int: ...
def _stream_thresholds(copy: int | None = None, fill: int | None = None) -> tuple[int, int]: ...
def _stream_calibrations() -> int: ...
def _stream_item_threshold(nbytes: int | None = None) -> int: ...
def _item_measurements() -> int: ...
def _copy_down_measured() -> bool: ...
def _fill_beyond_measured() -> bool: ...
def _transposes_staged() -> int: ...
def _transposes_in_source_order() -> int: ...
def _peel_pieces() -> int: ...
def _helper_delay(us: int | None = None, inside_us: int | None = None) -> int: ...
def _plan_py(
    shape: tuple[int, ...],  # tuple
    sstrides: tuple[int, ...],  # tuple
    dstrides: tuple[int, ...],  # tuple
    itemsize: int,  # intp_t
    details: bool = False,  # bint
) -> tuple[Any, ...]: ...  # (shape, sstrides, dstrides, dblock[, itemsize, tiled])
def simd_features() -> tuple[str, ...]: ...  # ("SSE2", "SSSE3", "AVX2", "ERMS") or fewer; () off x86-64
def _limit_simd(names: tuple[str, ...] | list[str] | set[str] | None) -> tuple[str, ...]: ...
