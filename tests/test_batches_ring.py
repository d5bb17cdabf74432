"""iter_batches for training loops: rings of reused buffers with prefetch, bounds, Ctrl-C and
batch lifetimes. NumPy's rows (``np.broadcast_to(source, shape)[start:stop]``) are the
reference."""

import gc
import signal
import threading
import time
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazybcast
from _threads import needs_proc, os_threads, settles_to
from lazybcast import _batches


def _view(rows=23, cols=5):
    source = np.arange(rows * cols, dtype=np.int32).reshape(rows, 1, cols)
    return lazybcast.broadcast_to(source, (rows, 3, cols)), np.broadcast_to(source,
                                                                            (rows, 3, cols))


@settings(deadline=None, max_examples=40)
@given(batch_size=st.integers(1, 9), ring=st.integers(1, 4), data=st.data(),
       drop_last=st.booleans())
def test_ring_with_prefetch_yields_numpys_rows(batch_size, ring, data, drop_last):
    prefetch = data.draw(st.integers(0, ring - 1))
    view, ref = _view()
    buffers = [np.full((batch_size, 3, 5), -1, dtype=np.int32) for _ in range(ring)]
    held = []  # every batch the contract says is still valid
    n = 0
    for i, batch in enumerate(view.iter_batches(batch_size, out=buffers, drop_last=drop_last,
                                                prefetch=prefetch)):
        assert batch.base is buffers[i % ring]
        held.append((i, batch))
        # batch j stays valid until batch j + len(ring) - prefetch is requested
        held = [(j, b) for j, b in held if i < j + ring - prefetch]
        for j, b in held:
            np.testing.assert_array_equal(b, ref[j * batch_size:(j + 1) * batch_size])
        n += 1
    rows = ref.shape[0]
    assert n == (rows // batch_size if drop_last else -(-rows // batch_size))


def test_single_buffer_keeps_its_meaning():
    view, ref = _view()
    out = np.empty((4, 3, 5), dtype=np.int32)
    got = [b.copy() for b in view.iter_batches(4, out=out)]
    np.testing.assert_array_equal(np.concatenate(got), ref)
    with pytest.raises(ValueError, match=r"prefetch=1 needs a ring of at least 2 buffers"):
        view.iter_batches(4, out=out, prefetch=1)
    with pytest.raises(ValueError, match=r"between 0 and 1"):
        view.iter_batches(4, out=[out, out.copy()], prefetch=2)


@pytest.mark.parametrize("prefetch, error", [
    (-1, ValueError), (_batches.MAX_PREFETCH + 1, ValueError), (10**9, ValueError),
    (True, TypeError), (1.0, TypeError), (None, TypeError),
])
def test_prefetch_is_bounded(prefetch, error):
    view, _ = _view()
    with pytest.raises(error, match=f"prefetch must be|prefetch must be an int"):
        view.iter_batches(2, prefetch=prefetch)
    if error is ValueError:
        with pytest.raises(ValueError, match=f"between 0 and {_batches.MAX_PREFETCH}"):
            view.iter_batches(2, prefetch=prefetch)


def test_prefetch_upper_bound_is_accepted():
    view, ref = _view()
    got = list(view.iter_batches(1, prefetch=_batches.MAX_PREFETCH))
    np.testing.assert_array_equal(np.concatenate(got), ref)


@pytest.mark.parametrize("bad, error, match", [
    ([], ValueError, "non-empty"),
    (lambda b: [b, b], ValueError, "overlaps"),
    (lambda b: [b, np.empty((4, 3, 6), np.int32)], ValueError, r"out\[1\] has shape"),
    (lambda b: [b, np.empty((4, 3, 5), np.int64)], TypeError, r"out\[1\] has dtype"),
    (lambda b: [b, np.zeros((4, 3, 5), np.int32)[...].view()], None, None),
    (lambda b: (b, 3), TypeError, r"out\[1\] must be"),
])
def test_ring_checks_every_buffer(bad, error, match):
    view, _ = _view()
    b = np.empty((4, 3, 5), np.int32)
    out = bad(b) if callable(bad) else bad
    if error is None:
        list(view.iter_batches(4, out=out, prefetch=1))
        return
    with pytest.raises(error, match=match):
        view.iter_batches(4, out=out)


def test_read_only_buffer_in_a_ring_is_value_error():
    view, _ = _view()
    ro = np.empty((4, 3, 5), np.int32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"out\[1\] is read-only"):
        view.iter_batches(4, out=[np.empty_like(ro), ro])


@pytest.mark.parametrize("prefetch", [0, 2])
def test_no_reference_to_a_batch_the_caller_moved_past(prefetch):
    view = lazybcast.broadcast_to(np.arange(100.0), (50, 100))
    gen = view.iter_batches(5, prefetch=prefetch)
    refs = []
    for _ in range(4):
        refs.append(weakref.ref(next(gen)))  # the caller drops each batch at once
    gc.collect()
    # all but the last yielded batch are gone; the generator keeps none of them
    assert [r() is None for r in refs[:-1]] == [True, True, True]
    next(gen)
    gc.collect()
    assert refs[-1]() is None
    gen.close()


@needs_proc
@pytest.mark.parametrize("deliver", ["main-thread", "raise-in-timer-thread"])
def test_ctrl_c_during_prefetch_stops_within_one_block(deliver):
    """The main thread waits for a large batch being prefetched; Ctrl-C there must return at
    once and the background copy must stop at its next block, not finish the batch."""
    rows, cols = 4096, 1 << 16  # one batch: 4096 rows of 64 kB = 256 MB of float32
    view = lazybcast.broadcast_to(np.arange(cols, dtype=np.float32), (rows * 2, cols))
    baseline = os_threads()
    gen = view.iter_batches(rows, prefetch=1)
    if deliver == "main-thread":
        main = threading.main_thread().ident
        timer = threading.Timer(0.05, signal.pthread_kill, (main, signal.SIGINT))
    else:  # the signal lands on another thread; the waiting main thread must still see it
        timer = threading.Timer(0.05, signal.raise_signal, (signal.SIGINT,))
    started = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        for _ in gen:
            pass
    # The interrupt may land in this loop's own frame (between two next() calls: the slower
    # the build, the likelier, e.g. under ASan) rather than inside the generator; then the
    # generator is only closed by close() or its collection, as any Python generator.
    gen.close()
    elapsed = time.perf_counter() - started
    timer.cancel()
    timer.join()
    assert settles_to(baseline)  # the thread is gone once the generator is closed
    # A full batch pair is 512 MB (about 0.1-1 s here); stopping at a 4 MiB block is far less.
    # Not a benchmark: a generous bound only catches "waited for the whole batch".
    assert elapsed < 2, elapsed


def test_cancelled_copy_stops_at_a_block_boundary():
    # White-box: with the cancel flag set, the blockwise copy writes nothing more.
    view = lazybcast.broadcast_to(np.arange(8.0), (64, 8))
    out = np.zeros((64, 8))
    with pytest.raises(_batches._Cancelled):
        _batches._copy_in_blocks(view, out, ["cancelled"])
    assert not out.any()
