# Stub for the compiled module lazybcast/_kernels.pyx. C-level types are kept as comments
# (intp_t is Py_ssize_t). The C API (Plan, plan_init, plan_run, plan_run_objects) lives in
# _kernels.pxd and is not visible from Python. Checked against the build by tests/test_stubs.py.

from typing import Any

import numpy as np

REPLICATE_CHUNK: int  # bytes; a replicated block grows by doubling up to this size
CHUNK_BYTES: int  # bytes of work between two Ctrl-C checks, and per thread task
STREAM_BYTES: int  # outputs at least this large are written with non-temporal stores
AUTO_THREADS_BYTES: int  # outputs at least this large use two threads by default

def copy_broadcast(
    src: np.ndarray[Any, Any],  # cnp.ndarray src not None
    out: np.ndarray[Any, Any],  # cnp.ndarray out not None
    threads: int | None = None,
) -> np.ndarray[Any, Any]: ...
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
def _plan_py(
    shape: tuple[int, ...],  # tuple
    sstrides: tuple[int, ...],  # tuple
    dstrides: tuple[int, ...],  # tuple
    itemsize: int,  # intp_t
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]: ...
def simd_features() -> tuple[str, ...]: ...  # ("SSE2", "SSSE3", "AVX2") or fewer; () off x86-64
def _limit_simd(names: tuple[str, ...] | list[str] | set[str] | None) -> tuple[str, ...]: ...
