"""Feeding views to training loops: batches along axis 0, a map-style dataset, a collate."""

import _thread
import collections
import operator
import queue
import weakref

import numpy as np

from lazybcast import _gather, _kernels
from lazybcast._blocks import blocks

__all__ = ["MAX_PREFETCH", "RowDataset", "collate", "iter_batches"]

#: The most batches ``iter_batches`` materializes ahead (each is a batch held in memory).
MAX_PREFETCH = 32


def _positive_int(value, name, minimum, maximum=None):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    value = operator.index(value)
    if value < minimum or (maximum is not None and value > maximum):
        allowed = f">= {minimum}" if maximum is None else f"between {minimum} and {maximum}"
        raise ValueError(f"{name} must be {allowed}, got {value}")
    return value


# -- iter_batches ---------------------------------------------------------------------------


def iter_batches(view, batch_size, *, out=None, drop_last=False, prefetch=0):
    """Validate eagerly, then return the batch generator (see BroadcastView.iter_batches)."""
    batch_size = _positive_int(batch_size, "batch_size", 1)
    prefetch = _positive_int(prefetch, "prefetch", 0, MAX_PREFETCH)
    if not view.shape:
        raise TypeError("iter_batches() needs at least one axis; the view is 0-d")
    ring = None
    if out is not None:
        ring = _ring(view, batch_size, out)
        if prefetch > len(ring) - 1:
            raise ValueError(
                f"prefetch={prefetch} needs a ring of at least {prefetch + 1} buffers in out= "
                f"(a batch is written ahead into a buffer the caller no longer holds), got "
                f"{len(ring)}; with {len(ring)}, prefetch must be between 0 and {len(ring) - 1}")
    ranges = _ranges(view.shape[0], batch_size, drop_last)
    if prefetch:
        return _prefetched(view, ranges, prefetch, ring)
    if ring is not None:
        return _into(view, ranges, ring)
    return (view[start:stop].materialize() for start, stop in ranges)


def _ring(view, batch_size, out):
    """``[(caller's object, ndarray over it), ...]``: one buffer, or a list/tuple of them."""
    from lazybcast._buffers import as_writeable_array

    buffers = list(out) if isinstance(out, (list, tuple)) else [out]
    if not buffers:
        raise ValueError("out must be a buffer or a non-empty list of buffers, got []")
    shape = (batch_size,) + view.shape[1:]
    ring, seen = [], []
    for k, obj in enumerate(buffers):
        name = "out" if obj is out else f"out[{k}]"
        array = as_writeable_array(obj, name)
        if array.shape != shape:
            raise ValueError(f"{name} has shape {array.shape}; it must be (batch_size,) + "
                             f"view.shape[1:] = {shape}")
        if array.dtype != view.dtype:
            raise TypeError(f"{name} has dtype {array.dtype}; it must be the view's dtype "
                            f"{view.dtype}")
        for j, other in enumerate(seen):
            if np.may_share_memory(array, other):
                raise ValueError(f"out[{k}] overlaps out[{j}]; the buffers of a ring must be "
                                 f"distinct")
        seen.append(array)
        ring.append((obj, array))
    return ring


def _ranges(n, batch_size, drop_last):
    """``(start, stop)`` of each batch, lazily (a view may have 10**12 rows)."""
    end = n - n % batch_size if drop_last else n
    for start in range(0, end, batch_size):
        yield start, min(start + batch_size, n)


def _caller_slice(obj, array, n):
    """``obj[:n]``: the caller's buffer, of the caller's type, holding an ``n``-row batch (the
    ndarray's ``array[:n]`` if the caller's object cannot be sliced)."""
    try:
        return obj[:n]
    except Exception:  # noqa: BLE001 - a buffer that cannot be sliced: give the ndarray
        return array[:n]


def _into(view, ranges, ring):
    for i, (start, stop) in enumerate(ranges):
        obj, array = ring[i % len(ring)]
        view[start:stop].materialize(out=array[:stop - start])
        yield _caller_slice(obj, array, stop - start)


class _Cancelled(Exception):
    pass


def _copy_in_blocks(part, out, cancelled):
    """Materialize ``part`` into ``out`` one kernel block at a time, stopping at the first
    block boundary after ``cancelled`` (a list) becomes non-empty (Ctrl-C or the generator
    closed). An ``out`` whose items share bytes is written whole, by ``np.copyto`` (through
    materialize), so that the value left where they collide is NumPy's."""
    if _kernels.overlaps_itself(out):
        part.materialize(out=out)
        return
    for key in blocks(part.shape, part.itemsize, _kernels.CHUNK_BYTES):
        if cancelled:
            raise _Cancelled
        part[key].materialize(out=out[key], threads=1)


class _Batch:
    """One prefetched batch: the worker fills ``value`` (or ``error``) and releases ``done``."""

    __slots__ = ("done", "value", "error")

    def __init__(self):
        self.done = _thread.allocate_lock()
        self.done.acquire()
        self.value = self.error = None

    def take(self):
        """The batch, once the worker has it, waking every 50 ms: a Ctrl-C delivered to
        another thread (the kernel picks any) is then still raised here promptly."""
        while not self.done.acquire(timeout=0.05):
            pass
        if self.error is not None:
            raise self.error
        value, self.value = self.value, None
        return value


class _Token:
    """An object only the prefetching generator's frame holds (see ``_prefetched``)."""

    __slots__ = ("__weakref__",)


def _prefetched(view, ranges, depth, ring):
    """Batches copied ``depth`` ahead by one background thread.

    Ctrl-C can land between any two steps of Python code in the main thread, including inside
    ``threading``'s and ``concurrent.futures``' own bookkeeping (an interrupted
    ``Thread.start()`` or ``Condition.wait()`` can leave a lock held that the other thread
    then waits on for ever). So nothing here waits on those: the thread is started with
    ``_thread.start_new_thread`` (C, no Python between creating the thread and returning),
    each batch is a plain lock and the thread's end a flag, and the stop is not Python code:
    the generator's frame alone holds ``token``, and when the frame lets go of it (the finally
    below, or the frame being cleared because an interrupt escaped, the generator was closed
    or collected), two C-level weakref callbacks flag the copy as cancelled
    (``cancelled.append``) and wake the thread (``jobs.put``): the copy stops at its next
    block (<= CHUNK_BYTES) and the thread ends. The finally then waits for it, through any
    number of interrupts. (The worker thread never runs signal handlers: only the main thread
    does.)"""
    cancelled = []  # non-empty: stop at the next block
    jobs = queue.SimpleQueue()  # (batch, (start, stop, ring slot)); anything else: stop
    token = _Token()
    callbacks = (weakref.ref(token, cancelled.append), weakref.ref(token, jobs.put))
    launched = []  # the thread's ident, appended by the thread itself
    ended = []  # non-empty once the thread has ended
    wake = _thread.allocate_lock()  # released when it ends, to wake the caller
    wake.acquire()
    pending = collections.deque()
    count = 0

    def produce(start, stop, k):
        part = view[start:stop]
        if ring is None:
            array = np.empty(part.shape, dtype=part.dtype)
            _copy_in_blocks(part, array, cancelled)
            return array
        obj, array = ring[k]
        _copy_in_blocks(part, array[:stop - start], cancelled)
        return _caller_slice(obj, array, stop - start)

    def work(callbacks):  # held here: a weakref's callback runs only while the weakref lives
        launched.append(_thread.get_ident())
        try:
            while True:
                job = jobs.get()
                if cancelled or type(job) is not tuple:
                    return
                batch, args = job
                try:
                    batch.value = produce(*args)
                except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
                    batch.error = e
                batch.done.release()
                del batch, job  # the batch is the caller's once it is taken
        finally:
            ended.append(True)
            wake.release()

    def submit():
        nonlocal count
        for start, stop in ranges:
            batch = _Batch()
            pending.append(batch)
            jobs.put((batch, (start, stop, count % len(ring) if ring else 0)))
            count += 1
            return

    worker = None
    try:
        worker = _thread.start_new_thread(work, (callbacks,))
        for _ in range(depth + 1):
            submit()
        while pending:
            # No local name holds the batch: once the caller moves on, it is the caller's.
            yield pending.popleft().take()
            submit()
    finally:
        del token  # the callbacks run here, in C: cancelled, and the thread woken
        if worker is None and launched:  # an interrupt landed just after the start
            worker = launched[0]
        if worker is not None and worker != _thread.get_ident():
            # (not when the generator is collected by its own thread's garbage collection:
            # it cannot wait for itself, and ends on its own once this returns; nor when the
            # thread, interrupted before it ran, never will: it is cancelled, touches nothing)
            _wait(ended, wake)


def _wait(ended, wake):
    """Wait until the prefetch thread has ended (``ended`` non-empty), however many Ctrl-C
    arrive meanwhile; the first one is raised afterwards. The lock only wakes this thread:
    the flag decides, so an interrupt landing just after a successful acquire cannot make
    the wait miss the end. (Were an interrupt to escape this Python code at its entry or its
    loop's back edge, the thread, already cancelled, still ends after at most one block.)"""
    interrupted = None
    while not ended:
        try:
            wake.acquire(timeout=0.05)
        except KeyboardInterrupt as e:
            if interrupted is None:
                interrupted = e
    if interrupted is not None:
        raise interrupted


# -- RowDataset -----------------------------------------------------------------------------


def _row_index(i):
    """An integer row index by NumPy's rules for a single integer: ``int``, NumPy integers,
    0-d integer arrays and anything with ``__index__`` (0-d ``torch`` tensors); bools (which
    NumPy reads as masks) are refused."""
    if type(i) is int:
        return i
    if isinstance(i, (bool, np.bool_)) or (isinstance(i, np.ndarray) and i.dtype == bool):
        raise TypeError(f"RowDataset index must be an integer, got a boolean {i!r}")
    try:
        return operator.index(i)
    except TypeError:
        raise TypeError(f"RowDataset index must be an integer (int, NumPy integer, 0-d integer "
                        f"array or tensor, or an object with __index__), got "
                        f"{type(i).__name__} {i!r}") from None


def _row_indices(indices):
    """A 1-D C-contiguous ``intp`` array of the batch's row indices."""
    idx = np.asarray(indices) if not isinstance(indices, np.ndarray) else indices
    if idx.dtype.kind not in "iu":
        if idx.dtype == object or (idx.size and idx.dtype.kind not in "biuf"):
            # e.g. a list of 0-d tensors (torch's Subset.__getitems__ passes one)
            try:
                flat = [_row_index(i) for i in np.asarray(indices, dtype=object).reshape(-1)]
            except TypeError:
                raise TypeError(f"RowDataset indices must be integers, got "
                                f"{idx.dtype} {indices!r}") from None
            try:
                return np.array(flat, dtype=np.intp).reshape(-1)
            except OverflowError:
                raise IndexError(f"index {max(flat, key=abs)} is out of bounds for axis 0 "
                                 f"(it does not fit an intp)") from None
        if idx.size:
            raise TypeError(f"RowDataset indices must be integers, got {idx.dtype} {indices!r}")
        idx = idx.astype(np.intp)
    if idx.dtype != np.intp or idx.ndim != 1 or not idx.flags.c_contiguous:
        if idx.dtype.kind == "u" and idx.size and idx.max() > np.iinfo(np.intp).max:
            raise IndexError(f"index {idx.max()} is out of bounds for axis 0")
        idx = np.ascontiguousarray(idx, dtype=np.intp).reshape(-1)
    return idx


def _check_view(view):
    from lazybcast._view import BroadcastView

    if not isinstance(view, BroadcastView):
        raise TypeError(f"view must be a BroadcastView, got {type(view).__name__}")
    if not view.shape:
        raise ValueError("view must have at least one axis; a 0-d view has no rows")
    return view


class RowDataset:
    """A map-style dataset over the rows (axis 0) of a :class:`BroadcastView`.

    ``dataset[i]`` is row ``i`` materialized (``i`` any integer NumPy accepts: ``int``, NumPy
    integers, 0-d arrays and tensors, ``__index__`` objects). ``dataset.__getitems__(indices)``
    gathers a whole batch with one kernel call into one array of shape
    ``(len(indices),) + view.shape[1:]``; PyTorch's ``DataLoader`` calls it for batched
    fetching, and :func:`collate` turns the batch into a tensor without copying.

    It pickles as its view: the compact source (or the file and region of a memory-mapped
    source), so multi-worker loaders are cheap. Unpickling checks that the view is a
    :class:`BroadcastView` with at least one axis, as the constructor does.

    Examples
    --------
    >>> import numpy as np, lazybcast
    >>> ds = lazybcast.RowDataset(lazybcast.broadcast_to(np.arange(3.0), (1000, 3)))
    >>> len(ds), ds[999], ds[np.array(-1)]
    (1000, array([0., 1., 2.]), array([0., 1., 2.]))
    >>> ds.__getitems__([0, 5])
    array([[0., 1., 2.],
           [0., 1., 2.]])
    """

    def __init__(self, view):
        self.view = _check_view(view)

    def __len__(self):
        return self.view.shape[0]

    def __getitem__(self, i):
        row = self.view[_row_index(i)]
        return row.materialize() if hasattr(row, "materialize") else row

    def __getitems__(self, indices):
        view = self.view
        idx = _row_indices(indices)
        dtype = view.dtype
        if dtype.hasobject and dtype.type is not np.object_:
            return view[idx]  # structured with objects: NumPy's gather (see _indexing)
        out = _gather.result_array((idx.shape[0],) + view.shape[1:], dtype, [idx],
                                   [view.shape[0]], [0])
        return _kernels.gather(view.source, view.shape, (0,), [idx], out, 0, 1)

    def __setstate__(self, state):
        # Unpickling: the same checks as the constructor, whatever the pickle holds.
        if type(state) is not dict or "view" not in state:
            raise TypeError(f"RowDataset state must be a dict with a 'view', got "
                            f"{type(state).__name__}")
        _check_view(state["view"])
        self.__dict__.update(state)

    def __repr__(self):
        return f"RowDataset({self.view!r})"


def collate(batch):
    """A ``DataLoader`` ``collate_fn`` for :class:`RowDataset`: a batch that is one ndarray
    becomes a tensor sharing its memory (``torch.from_numpy``, no per-row step; a read-only or
    byte-swapped array is copied once first); anything else (and dtypes torch has no tensor
    type for) goes to torch's ``default_collate``.

    Examples
    --------
    Needs torch (the example is not run where torch is not installed):

    >>> import numpy as np, lazybcast
    >>> ds = lazybcast.RowDataset(lazybcast.broadcast_to(np.arange(3.0), (10, 3)))
    >>> t = lazybcast.collate(ds.__getitems__([1, 2]))  # doctest: +SKIP
    >>> t.shape, t.dtype  # doctest: +SKIP
    (torch.Size([2, 3]), torch.float64)
    """
    import torch
    from torch.utils.data import default_collate

    if type(batch) is np.ndarray:
        if not (batch.flags.writeable and batch.dtype.isnative):
            batch = batch.astype(batch.dtype.newbyteorder("="))  # one copy torch can own
        try:
            return torch.from_numpy(batch)
        except TypeError:  # a dtype torch has no tensor type for
            pass
    return default_collate(batch)
