"""What ``python -m lazybcast bench`` times next to lazybcast: PyTorch and the machine's limits.

**torch** (optional): the same copy written the way a PyTorch user writes it, into the same
output buffer (``torch.from_numpy(out)`` shares its memory), timed with
``torch.set_num_threads(1)`` and ``(2)`` (the thread count is set before each timed call,
outside the timing, followed by one untimed call so that the timed one does not pay for
re-forming the thread team). :func:`torch_copy` builds it from NumPy's broadcast view of the case:

* a broadcast (a zero stride) is ``out.copy_(src.expand(shape))``;
* a transposed or permuted source (a layout change) is ``out.copy_(src.permute(...))``: the
  source keeps its axis order (it is copied, without gaps, in the same order);
* a reversed axis (torch has no negative strides) is ``torch.flip(src, dims)``, which
  allocates its output, when nothing is broadcast, and otherwise the flip of the (small)
  source is made once, outside the timing, as the broadcast views are.

Without torch (not installed, or ``--no-torch``), or for a dtype torch lacks (structured
records), the torch columns say ``n/a``.

**The write limit** of a case is the faster of one and two threads doing the least work the
output needs:

* ``memset``: a C ``memset`` of the output with a non-zero byte (0x5A). Zero bytes are not the
  limit: some machines write zeros to memory about twice as fast as any other byte (measured
  on the project's EPYC VMs), which no copy of real data can use;
* ``copy``: a C ``memcpy`` of the same number of bytes from another buffer, for cases whose
  source is as large as the output (transposes, layout changes, reversals: every output byte
  must be read once from the source as well as written).

Two threads split the buffer in halves: the main thread does one and a helper thread the other
(``ctypes.memset`` and ``ctypes.memmove`` release the GIL).
"""

import ctypes
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["NONZERO", "Limits", "load_torch", "source_bytes", "torch_copy"]

NONZERO = 0x5A
"""The byte of the non-zero ``memset``."""


def load_torch():
    """The ``torch`` module, or None when it cannot be imported (the columns then say n/a)."""
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]
    except (ImportError, OSError):  # OSError: a broken install (a missing shared library)
        return None
    return torch


def source_bytes(ref):
    """Bytes that must be read to write NumPy's broadcast view ``ref``: its non-broadcast part.

    >>> source_bytes(np.broadcast_to(np.ones(3, np.float32), (10, 3)))
    12
    >>> source_bytes(np.ones((4, 5)).T)
    160
    """
    return ref.itemsize * math.prod(n for n, s in zip(ref.shape, ref.strides) if s != 0)


def _compact(ref):
    """(source, flipped dims, broadcast?) for NumPy's broadcast view ``ref``: the source holds
    each distinct element once (size 1 on broadcast axes), with non-negative strides, in the
    same axis order as ``ref``'s source, and is writable (torch warns on read-only arrays)."""
    broadcast = any(s == 0 and n > 1 for n, s in zip(ref.shape, ref.strides))
    c = ref[tuple(slice(0, 1) if s == 0 and n > 1 else slice(None)
                  for n, s in zip(ref.shape, ref.strides))]
    flips = tuple(d for d, (n, s) in enumerate(zip(c.shape, c.strides)) if s < 0 and n > 1)
    if flips:
        c = c[tuple(slice(None, None, -1) if d in flips else slice(None) for d in range(c.ndim))]
    order = sorted(range(c.ndim), key=lambda d: (-abs(c.strides[d]), d))
    src = c.transpose(order).copy(order="C").transpose(np.argsort(order))
    return src, flips, broadcast


def torch_copy(torch, ref, out):
    """torch_copy(torch, ref, out)

    ``(fn, what)``: ``fn()`` writes NumPy's broadcast view ``ref`` into ``out`` the PyTorch
    way and returns the tensor it wrote (``out`` itself, or a new tensor for ``torch.flip``);
    ``what`` says how. ``(None, reason)`` when torch cannot (a dtype it lacks).
    """
    if ref.dtype.names or ref.dtype.kind not in "biufc":
        return None, f"torch has no {ref.dtype} dtype"
    try:
        tout = torch.from_numpy(out)
    except (TypeError, RuntimeError) as exc:
        return None, f"torch cannot take a {ref.dtype} array: {exc}"
    src, flips, broadcast = _compact(ref)
    tsrc = torch.from_numpy(src)
    shape = tuple(ref.shape)
    axes = [d for d in range(src.ndim) if src.shape[d] > 1]
    permuted = sorted(axes, key=lambda d: -src.strides[d]) != axes
    if flips and not broadcast:
        return (lambda: torch.flip(tsrc, flips)), \
            f"torch.flip(src, {flips}) (a new output each call)"
    what = "out.copy_(src" + (f".flip({flips})" if flips else "") \
        + (".permute(...)" if permuted else "") + (".expand(shape)" if broadcast else "") + ")"
    tview = (torch.flip(tsrc, flips) if flips else tsrc).expand(shape)

    def fn():
        return tout.copy_(tview)

    return fn, what


class Limits:
    """The write limit's callables: ``memset`` / ``copy`` with one or two threads.

    Use as a context manager (the helper thread is stopped on exit).
    """

    def __init__(self):
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lazybcast-bench")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self._pool.shutdown(wait=True)

    def _halves(self, call, address, nbytes, src=None):
        half = (nbytes // 2) & ~4095  # split on a page boundary
        rest = nbytes - half
        pool = self._pool
        if src is None:
            def run():
                job = pool.submit(call, address + half, NONZERO, rest)
                call(address, NONZERO, half)
                job.result()
        else:
            def run():
                job = pool.submit(call, address + half, src + half, rest)
                call(address, src, half)
                job.result()
        return run

    def memset(self, out):
        """{"memset 1t": fn, "memset 2t": fn}: a non-zero ``memset`` of ``out``'s bytes."""
        address, nbytes, memset = out.ctypes.data, out.nbytes, ctypes.memset
        return {"memset 1t": lambda: memset(address, NONZERO, nbytes),
                "memset 2t": self._halves(memset, address, nbytes)}

    def copy(self, out, src):
        """{"copy 1t": fn, "copy 2t": fn}: a ``memcpy`` of ``src``'s bytes into ``out``."""
        if src.nbytes != out.nbytes:
            raise ValueError(f"copy limit: src has {src.nbytes} bytes, out {out.nbytes}; "
                             f"they must be equal")
        address, source, nbytes, memmove = out.ctypes.data, src.ctypes.data, out.nbytes, \
            ctypes.memmove
        return {"copy 1t": lambda: memmove(address, source, nbytes),
                "copy 2t": self._halves(memmove, address, nbytes, source)}
