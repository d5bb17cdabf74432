"""Concurrency: many threads materializing, indexing, iterating and pickling one view at once get
NumPy's values. A view is immutable; the kernels release the GIL between and inside blocks, so
these calls really overlap."""

import os
import pickle
import sys
import threading
import time

import numpy as np
import pytest

import lazybcast

THREADS = 8
ROUNDS = 6


def _hammer(work):
    """Run ``work(k)`` for k in range(THREADS) on THREADS threads released together; re-raise
    the first failure."""
    barrier = threading.Barrier(THREADS)
    errors = []

    def run(k):
        try:
            barrier.wait()
            for r in range(ROUNDS):
                work(k, r)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("dtype", [np.float64, np.uint8, np.complex128, "U4"])
def test_shared_view_from_many_threads(dtype):
    src = np.arange(3 * 257).reshape(3, 1, 257)[:, :, ::-1].astype(dtype)
    shape = (4, 3, 50, 257)
    view = lazybcast.broadcast_to(src, shape)
    expected = np.broadcast_to(src, shape)
    rows = np.array([0, 2, 1, 2, 0])

    def work(k, r):
        op = (k + r) % 6
        if op == 0:
            np.testing.assert_array_equal(view.materialize(threads=1 + k % 3), expected)
        elif op == 1:
            out = np.empty(shape[::-1], dtype=view.dtype).T  # own buffer, F layout
            view.materialize(out=out)
            np.testing.assert_array_equal(out, expected)
        elif op == 2:
            key = (slice(None, None, -1), rows, slice(k, None, 3))
            np.testing.assert_array_equal(np.asarray(view[key]), expected[key])
        elif op == 3:
            for got, want in zip(view[k % 4], expected[k % 4]):
                np.testing.assert_array_equal(got, want)
        elif op == 4:
            for i, batch in enumerate(view.iter_batches(3, prefetch=k % 2)):
                np.testing.assert_array_equal(batch, expected[3 * i:3 * i + 3])
        else:
            clone = pickle.loads(pickle.dumps(view[1:, ::2]))
            np.testing.assert_array_equal(np.array(clone), expected[1:, ::2])

    _hammer(work)


def test_large_copies_share_the_kernel_pool():
    """Eight callers each asking for two threads (the pool has one worker per CPU)."""
    src = np.arange(1024, dtype=np.float32)
    view = lazybcast.broadcast_to(src, (8 * 1024, 1024))  # 32 MB: two threads by default
    assert view.nbytes >= 32 * 2**20

    def work(k, r):
        if r >= 2:
            return
        out = view.materialize(threads=None if k % 2 else 2)
        assert out.shape == view.shape
        np.testing.assert_array_equal(out[k::997], np.broadcast_to(src, out[k::997].shape))

    _hammer(work)


def test_object_references_stay_counted():
    """The object path takes references one by one; racing copies must not lose any."""
    item = object()
    src = np.empty((3, 1), dtype=object)
    src[:, 0] = [item, "a", None]
    view = lazybcast.broadcast_to(src, (3, 500))
    base = sys.getrefcount(item)
    results = [None] * THREADS

    def work(k, r):
        results[k] = view.materialize() if r % 2 else view[[0, 0, 2]]
        assert results[k][0, -1] is item

    _hammer(work)
    held = sum(int(np.sum(res == item)) for res in results)  # references the copies hold
    assert held > 0 and sys.getrefcount(item) == base + held
    results.clear()
    assert sys.getrefcount(item) == base


def test_thread_local_out_with_one_source_being_written():
    """A writer changes the source while readers copy it (a data race the contract leaves to the
    user): no crash, right shapes, and only values that were written (aligned 8-byte items are
    not torn on the platforms CI runs on)."""
    src = np.zeros((1, 64), dtype=np.int64)
    view = lazybcast.broadcast_to(src, (2000, 64))
    stop = threading.Event()

    def writer():
        v = 0
        while not stop.is_set():
            v = (v + 1) % 5
            src[...] = v

    w = threading.Thread(target=writer)
    w.start()
    try:
        def work(k, r):
            out = view.materialize()
            assert out.shape == (2000, 64)
            assert set(np.unique(out).tolist()) <= {0, 1, 2, 3, 4}

        _hammer(work)
    finally:
        stop.set()
        w.join()


# ---- fork safety (issue 11, item 6) -------------------------------------------------------


def _os_threads():
    """Threads of this process as the OS counts them (what CPython 3.12+ looks at before
    warning that fork() may deadlock), or None without /proc."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


@pytest.fixture
def pool():
    """A pool with no helper left by earlier tests, whose helpers spin 50 us to 1 ms and then
    park (whatever the machine's default: no pool on one usable CPU)."""
    from lazybcast import _kernels

    before = _kernels._helper_spin()
    _kernels._helper_spin(0)
    assert _settle_helpers(_kernels) == 0
    _kernels._helper_spin(1000)
    yield _kernels
    _kernels._helper_spin(before)


def _helper_cpu_ticks():
    """CPU time (clock ticks) used so far by lazybcast's helper threads, or None without
    /proc."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    ticks = 0
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/stat") as f:
                stat = f.read()
        except OSError:  # (gone meanwhile)
            continue
        name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:]
        if name.startswith("lazybcast"):
            fields = rest.split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks


@pytest.mark.skipif(sys.platform == "win32", reason="Windows joins helpers in each call")
def test_helpers_park_after_their_spin_and_are_reused(pool):
    """After their spin (at most HELPER_SPIN_US, 1 ms) helpers sleep: they use no CPU, later
    copies wake them instead of starting threads (the process's thread count stays put over
    many copies), and a spin of 0 ends them."""
    kernels = pool

    before_py = threading.active_count()
    view = lazybcast.broadcast_to(np.arange(4096.0), (2048, 4096))  # 64 MB
    view.materialize(threads=2)
    view.materialize(threads=4)
    view.materialize()  # threads=None: two threads at this size
    view[:, np.arange(4095, -1, -1)]  # a gather of 64 MB
    assert threading.active_count() == before_py  # (C threads, unknown to Python)
    deadline = time.monotonic() + 2.0
    while kernels._helpers_parked() < kernels._helpers_alive() and time.monotonic() < deadline:
        time.sleep(0.001)
    alive = kernels._helpers_alive()
    assert alive == 3 and kernels._helpers_parked() == alive
    ticks = _helper_cpu_ticks()
    if ticks is not None:  # parked helpers use no CPU (a spinning one: 20 ticks in 0.2 s)
        time.sleep(0.2)
        assert _helper_cpu_ticks() - ticks <= 2
    threads_os = _os_threads()
    for k in range(20):  # copies after a pause, each finding the helpers parked
        time.sleep(0.003)
        got = view.materialize(threads=2 + k % 3)
        assert got[2047, 4095] == 4095.0
        assert kernels._helpers_alive() <= 3
    if threads_os is not None:
        assert _os_threads() <= threads_os
    kernels._helper_spin(0)  # no pool: parked helpers leave
    assert _settle_helpers(kernels) == 0


@pytest.mark.skipif(sys.platform == "win32", reason="Windows joins helpers in each call")
def test_a_parked_helper_takes_part_in_the_next_copy(pool):
    """A copy that finds the helper parked wakes it, and the helper takes a share (one that
    finds no CPU in time may miss some copies); the outputs have NumPy's values."""
    kernels = pool

    src = np.arange(4096.0, dtype=np.float32)
    view = lazybcast.broadcast_to(src, (1024, 4096))  # 16 MB, 16 blocks with two threads
    view.materialize(threads=2)
    for attempt in range(50):
        deadline = time.monotonic() + 2.0
        while kernels._helpers_parked() == 0 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert kernels._helpers_parked() == 1
        taken = kernels._helper_delay()
        got = view.materialize(threads=2)
        np.testing.assert_array_equal(got, np.broadcast_to(src, view.shape))
        if kernels._helper_delay() > taken:
            break
    else:
        pytest.fail("a parked helper never took part in 50 copies")


@pytest.mark.skipif(sys.platform == "win32", reason="Windows joins helpers in each call")
@pytest.mark.parametrize("max_ms,waits", [(2000, True), (39, True), (15, False)],
                         ids=["gap well within the maximum", "gap past half the maximum",
                              "gap past the maximum"])
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity")
                    else (os.cpu_count() or 1) < 2,
                    reason="one usable CPU: the spinning helper and the caller share it")
def test_helpers_wait_out_a_steady_gap_between_copies(pool, max_ms, waits):
    """Copies 20 ms apart: where that gap is within the helpers' maximum spin, the helper
    spins through it (twice the gap, capped at the maximum) and the copies from the second
    on find it running (not parked); past it, the helper spins as long as its share took
    (at least 50 us) and the copies find it parked. The values are NumPy's either way."""
    kernels = pool
    kernels._helper_spin(max_ms * 1000)
    src = np.arange(1024.0)
    view = lazybcast.broadcast_to(src, (1024, 1024))  # 8 MB: two blocks or more
    out = np.full(view.shape, -1.0)
    rounds = []
    for attempt in range(3):  # (a round on a machine whose CPUs are busy elsewhere may miss)
        parked = []
        for k in range(6):  # (nothing but the sleep in the gap: an ASan build checks slowly)
            view.materialize(out=out, threads=2)
            time.sleep(0.02)
            parked.append(kernels._helpers_parked())
        np.testing.assert_array_equal(out, np.broadcast_to(src, view.shape))
        assert kernels._helpers_alive() == 1
        rounds.append(parked)
        # (the first copy's gap is unknown (earlier tests' copies or rounds set it): that
        # helper may or may not park. One sleep that overruns twice the one before, or a
        # helper without a CPU for 20 ms, may miss once. 39 ms: under twice the 20 ms gap,
        # so the spin is capped at the maximum, and 19 ms past the gap for a sleep that
        # overruns on a loaded machine. A helper that never spins, or always does, misses
        # in every round.)
        if parked[1:].count(0 if waits else 1) >= 4:
            break
    else:
        pytest.fail(f"helpers {'parked' if waits else 'spun'} in 3 rounds of copies 20 ms "
                    f"apart (1: parked): {rounds}")
    kernels._helper_spin(0)
    assert _settle_helpers(kernels) == 0


@pytest.fixture
def long_spin():
    """Helpers that spin for 10 s after a copy (so that a test finds them running)."""
    from lazybcast import _kernels

    before = _kernels._helper_spin()
    _kernels._helper_spin(10_000_000, min_us=10_000_000)
    yield _kernels
    _kernels._helper_spin(before)


def _settle_helpers(kernels, within=2.0):
    deadline = time.monotonic() + within
    while kernels._helpers_alive() and time.monotonic() < deadline:
        time.sleep(0.001)
    return kernels._helpers_alive()


@pytest.mark.skipif(sys.platform == "win32", reason="Windows joins helpers in each call")
def test_back_to_back_copies_reuse_the_spinning_helper(long_spin):
    """A copy hands its blocks to the helper left spinning by the previous one: no second
    helper is started, the helper takes part in copies (one that finds no CPU in time may
    miss some), and every copy writes NumPy's values into its own output."""
    kernels = long_spin
    kernels._helper_spin(0)
    assert _settle_helpers(kernels) == 0
    kernels._helper_spin(10_000_000, min_us=10_000_000)
    before_os = _os_threads()
    rng = np.random.default_rng(5)
    taken = kernels._helper_delay()
    deadline = time.monotonic() + 5
    for k in range(5000):  # 8 MB each (a helper sharing its CPU gets a turn in some; past
        # 50 us its spin yields to another process's thread on that CPU, so on a loaded
        # machine it can miss many copies in a row)
        src = rng.standard_normal(4096).astype(np.float32)
        out = lazybcast.broadcast_to(src, (512 + k % 20, 4096)).materialize(threads=2)
        np.testing.assert_array_equal(out, np.broadcast_to(src, (512 + k % 20, 4096)))
        assert kernels._helpers_alive() == 1
        if k >= 19 and (kernels._helper_delay() - taken >= 5 or time.monotonic() > deadline):
            break
    assert kernels._helper_delay() - taken >= 5
    if before_os is not None:
        assert _os_threads() <= before_os + 1
    kernels._helper_spin(0)  # a spinning helper sees the new limit and leaves
    assert _settle_helpers(kernels) == 0


@pytest.mark.skipif(sys.platform == "win32", reason="Windows joins helpers in each call")
def test_copies_in_a_loop_use_two_threads_from_the_l2_size(long_spin):
    """threads=None, outputs from LOOP_THREADS_BYTES to AUTO_THREADS_BYTES: one thread for a
    copy alone or in a pair; two from the third copy of a tight run (it starts a helper) and
    whenever a helper is spinning. Smaller outputs, threads=1, and helpers that do not spin
    never bring one in. Every output has NumPy's values. (What is checked is the number of
    threads each copy chose: on a loaded machine a helper may get no CPU in time to take a
    share, which is allowed.)"""
    kernels = long_spin
    if kernels.LOOP_THREADS_BYTES >= kernels.AUTO_THREADS_BYTES:
        pytest.skip("no loop rule here (LOOP_THREADS_BYTES >= AUTO_THREADS_BYTES)")
    kernels._helper_spin(0)
    assert _settle_helpers(kernels) == 0
    kernels._helper_spin(10_000_000, min_us=10_000_000)
    src = np.arange(256.0)
    rows = -(-kernels.LOOP_THREADS_BYTES // src.nbytes)  # (rounded up: at the threshold)
    view = lazybcast.broadcast_to(src, (rows, 256))
    smaller = lazybcast.broadcast_to(src, (kernels.LOOP_THREADS_BYTES // src.nbytes - 1, 256))
    chosen = []

    def copy(v, **kwargs):
        out = v.materialize(**kwargs)
        chosen.append(kernels._last_threads())
        return out

    def check(outs):
        for out in outs:
            np.testing.assert_array_equal(out, np.broadcast_to(src, out.shape))

    outs = [copy(smaller) for _ in range(20)] + [copy(view, threads=1) for _ in range(20)]
    time.sleep(0.01)  # (no tight run)
    outs += [copy(view), copy(view)]
    assert chosen == [1] * 42
    assert kernels._helpers_alive() == 0
    check(outs)
    outs = [np.empty(view.shape) for _ in range(3)]
    for attempt in range(200):  # a tight run of three (one preempted between calls is not)
        time.sleep(0.002)
        chosen.clear()
        for out in outs:
            copy(view, out=out)
        if chosen == [1, 1, 2]:
            break
        assert chosen in ([1, 1, 1], [1, 2, 2]), chosen  # (a helper from the last attempt)
    else:
        pytest.fail("200 tight runs of three copies never chose two threads")
    check(outs)
    for attempt in range(200):  # a spinning helper: a copy after a gap takes two threads
        time.sleep(0.002)
        if kernels._helpers_alive() == 1:
            chosen.clear()
            check([copy(view)])
            if chosen == [2]:
                break
    else:
        pytest.fail("a copy never chose two threads with a helper spinning")
    kernels._helper_spin(0)
    assert _settle_helpers(kernels) == 0
    chosen.clear()
    outs = []
    for _ in range(20):  # helpers that leave at once: no tight run starts one
        outs.append(copy(view))
        assert kernels._helpers_alive() == 0
    assert chosen == [1] * 20
    check(outs)


@pytest.mark.skipif(sys.platform == "win32", reason="Windows joins helpers in each call")
def test_a_parked_helper_is_woken_from_wake_threads_bytes(pool):
    """threads=None, a copy alone (after a pause): with a helper parked, one thread below
    WAKE_THREADS_BYTES and two from it; with no helper, one. NumPy's values throughout."""
    kernels = pool

    if kernels.WAKE_THREADS_BYTES >= kernels.AUTO_THREADS_BYTES:
        pytest.skip("no parked-helper rule here (WAKE_THREADS_BYTES >= AUTO_THREADS_BYTES)")
    src = np.arange(256.0)
    at = lazybcast.broadcast_to(src, (-(-kernels.WAKE_THREADS_BYTES // src.nbytes), 256))
    below = lazybcast.broadcast_to(src, (kernels.WAKE_THREADS_BYTES // src.nbytes - 1, 256))
    big = lazybcast.broadcast_to(src, (kernels.AUTO_THREADS_BYTES // src.nbytes, 256))

    def parked():
        deadline = time.monotonic() + 2.0
        while kernels._helpers_parked() == 0 and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(0.001)  # (past the loop rule's 50 us window)
        return kernels._helpers_parked()

    def chosen(view):
        np.testing.assert_array_equal(view.materialize(), np.broadcast_to(src, view.shape))
        return kernels._last_threads()

    big.materialize(threads=2)  # a helper, which parks after its spin
    assert parked() == 1
    assert chosen(below) == 1
    assert parked() == 1
    assert chosen(at) == 2
    kernels._helper_spin(0)
    assert _settle_helpers(kernels) == 0
    kernels._helper_spin(1000)
    time.sleep(0.001)
    assert chosen(at) == 1  # no helper: a copy alone does not start one


@pytest.mark.skipif(sys.platform == "win32", reason="Windows joins helpers in each call")
def test_helpers_leave_at_once_with_no_spin():
    from lazybcast import _kernels as kernels

    before = kernels._helper_spin()
    try:
        kernels._helper_spin(0)
        lazybcast.broadcast_to(np.arange(4096.0), (2048, 4096)).materialize(threads=3)
        assert _settle_helpers(kernels, within=1.0) == 0
    finally:
        kernels._helper_spin(before)


def test_many_small_shared_copies_never_mix_their_jobs(long_spin):
    """Copies of 2-4 blocks each, one after another with different sources, outputs and
    thread counts, on helpers that stay: every output has NumPy's values. (A helper running
    a withdrawn job is caught by the two tests below, not here: the Job lies at the same
    stack address on every call.)"""
    rng = np.random.default_rng(11)
    block = long_spin.THREAD_BLOCK_MIN_BYTES
    for k in range(300):
        rows = int(rng.integers(2, 5)) * block // 1024 - int(rng.integers(0, 64))
        src = rng.integers(0, 1 << 30, (1, 256), dtype=np.int32)
        threads = int(rng.integers(2, 5))
        got = lazybcast.broadcast_to(src, (rows, 256)).materialize(threads=threads)
        np.testing.assert_array_equal(got, np.broadcast_to(src, (rows, 256)))


@pytest.mark.skipif(sys.platform == "win32", reason="Windows joins helpers in each call")
def test_a_helper_late_for_a_copy_never_takes_it(long_spin):
    """A copy whose helper has not taken it when the caller is done withdraws it: the helper,
    arriving later, takes nothing (it would run a job on a frame that is gone); an on-time
    helper takes its share."""
    kernels = long_spin
    kernels._helper_spin(0)  # no helpers left by earlier tests (they would share the CPUs)
    assert _settle_helpers(kernels) == 0
    kernels._helper_spin(10_000_000, min_us=10_000_000)
    # On time, a helper takes a share, unless it is descheduled: 4 MB copies first, then 64 MB
    # ones (16 blocks: long enough for a helper that shares its CPU with other processes,
    # as on a CI runner busy with other jobs, to get a turn).
    for rows, attempts in ((256, 50), (4096, 20)):
        view = lazybcast.broadcast_to(np.arange(4096.0, dtype=np.float32), (rows, 4096))
        for attempt in range(attempts):
            taken = kernels._helper_delay()
            view.materialize(threads=2)
            if kernels._helper_delay() == taken + 1:
                break
        else:
            continue
        break
    else:
        pytest.skip("no helper got a CPU during 70 copies: the machine is too busy to set up "
                    "this check (an on-time share), which the next step needs")
    try:
        kernels._helper_delay(200_000)  # 0.2 s late, after the copy below has returned
        small = lazybcast.broadcast_to(np.arange(64.0), (2048, 64))  # 1 MB, 8 blocks
        got = small.materialize(threads=2)
        time.sleep(0.5)
        np.testing.assert_array_equal(got, np.broadcast_to(np.arange(64.0), (2048, 64)))
        assert kernels._helper_delay(0) == taken + 1
    finally:
        kernels._helper_delay(0)


@pytest.mark.skipif(sys.platform == "win32", reason="Windows joins helpers in each call")
def test_a_copy_waits_for_a_helper_inside_it(long_spin):
    """A helper that took a share is waited for, however little of it is left: the call
    returns only after the helper's 0.3 s pause inside the job (a call that returned
    earlier would let the helper run on a dead frame), with NumPy's values."""
    kernels = long_spin
    # 64 MB: 16 blocks, long enough for a helper that shares its CPU to get a turn.
    view = lazybcast.broadcast_to(np.arange(256.0, dtype=np.float32), (65536, 256))
    view.materialize(threads=2)  # a helper is spinning now
    try:
        for attempt in range(20):
            taken = kernels._helper_delay(inside_us=300_000)
            start = time.monotonic()
            got = view.materialize(threads=2)
            took = time.monotonic() - start
            if kernels._helper_delay() == taken + 1:
                break
            time.sleep(0.01)
        else:
            pytest.fail("no helper took a share of 20 copies")
        assert took >= 0.29
        np.testing.assert_array_equal(got, np.asarray(view))
    finally:
        kernels._helper_delay(inside_us=0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_fork_while_another_thread_copies_with_helpers(long_spin):
    """fork() from one thread while another copies with a helper: the fork handler stops the
    helper after its block, the copying thread does the rest (its output has NumPy's
    values), and parent and child copy with helpers afterwards."""
    kernels = long_spin
    src = np.arange(8192.0)
    view = lazybcast.broadcast_to(src, (8192, 8192))  # 512 MB
    ok = {}

    def copy():
        ok["big"] = bool((view.materialize(threads=2)[::1000] == src).all())

    taken = kernels._helper_delay()
    t = threading.Thread(target=copy)
    t.start()
    # Fork once the helper has a share: the copying thread is then in the kernel, which does
    # not allocate (a fork while another thread holds an allocator lock -- ASan's has no fork
    # handler -- would leave the child stuck in its first allocation).
    deadline = time.monotonic() + 30
    while kernels._helper_delay() == taken and t.is_alive() and time.monotonic() < deadline:
        time.sleep(0.0005)
    if kernels._helper_delay() == taken:
        t.join()
        pytest.skip("the copy ended before a helper took part (no CPU for it)")
    pid = os.fork()
    if pid == 0:
        small = lazybcast.broadcast_to(src, (1024, 8192))
        before = kernels._helper_delay()
        good = (small.materialize(threads=2) == src).all()
        os._exit(0 if good and kernels._helper_delay() > before else 3)
    t.join()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert ok["big"]
    before = kernels._helper_delay()
    small = lazybcast.broadcast_to(src, (1024, 8192))
    for attempt in range(20):
        np.testing.assert_array_equal(small.materialize(threads=2), np.asarray(small))
        if kernels._helper_delay() > before:
            break
    else:
        pytest.fail("no helper took part in the parent after the fork")


def test_concurrent_threaded_copies_share_the_pool(long_spin):
    """Python threads copying with threads=2 at the same time: one holds the helpers, the
    others run on their own thread; every output has NumPy's values."""
    views = [lazybcast.broadcast_to(np.arange(k, k + 4096, dtype=np.float64), (96, 4096))
             for k in range(THREADS)]

    def work(k, r):
        out = views[k].materialize(threads=2)
        np.testing.assert_array_equal(out, np.asarray(views[k]))

    _hammer(work)


FORK_AFTER_THREADS = """
import os, warnings
import numpy as np
import lazybcast
from lazybcast import _kernels

def helper_threads():  # lazybcast's, by name (OpenBLAS stops its own around a fork)
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    n = 0
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                n += f.read().startswith("lazybcast")
        except OSError:
            pass
    return n

if os.environ.get("LAZYBCAST_HELPER_SPIN_US"):
    # the variable sets the longest spin; make it the shortest too, so that a helper is
    # surely spinning at the fork however slow the copies (ASan)
    if _kernels._helper_spin() != int(os.environ["LAZYBCAST_HELPER_SPIN_US"]):
        raise SystemExit(f"LAZYBCAST_HELPER_SPIN_US not honoured: {_kernels._helper_spin()}")
    _kernels._helper_spin(_kernels._helper_spin(), min_us=_kernels._helper_spin())
view = lazybcast.broadcast_to(np.arange(4096.0), (2048, 4096))
view.materialize(threads=2)
view[:, np.arange(4096)[::-1]]
spinning = _kernels._helpers_alive()
if not os.environ.get("LAZYBCAST_HELPER_SPIN_US") and os.name == "posix" and _kernels._helper_spin():
    import time  # the default spin (1 ms) ends: the helper parks, and the fork wakes it
    deadline = time.monotonic() + 5
    while _kernels._helpers_parked() == 0 and time.monotonic() < deadline:
        time.sleep(0.001)
    if _kernels._helpers_parked() == 0:
        raise SystemExit("no helper parked before the fork: the test tests nothing")
at_fork = []

def after_in_parent():
    at_fork.append(helper_threads())
    _kernels._helper_delay(0)

os.register_at_fork(after_in_parent=after_in_parent)
# A stopped helper (spinning, or woken from its sleep) now takes 0.3 s to leave: unless the
# fork handler waits for it, it is still there when fork() returns.
_kernels._helper_delay(300_000)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    pid = os.fork()  # Python 3.12+ warns here if another thread is alive
    if pid == 0:
        taken = _kernels._helper_delay()
        ok = view.materialize(threads=2)[2000, 4000] == 4000.0
        helped = os.name != "posix" or _kernels._helper_delay() > taken
        os._exit(0 if ok and helped else 3)
if caught:
    raise SystemExit(f"fork() warned: {caught[0].message}")
_, status = os.waitpid(pid, 0)
if os.environ.get("LAZYBCAST_HELPER_SPIN_US") and os.name == "posix" and not spinning:
    raise SystemExit("no helper was spinning at the fork: the test tests nothing")
if at_fork != [0] and at_fork != [None]:
    raise SystemExit(f"lazybcast threads right after the fork: {at_fork}")
taken = _kernels._helper_delay()
if view.materialize(threads=2)[2000, 4000] != 4000.0:  # the parent's pool works again
    raise SystemExit(5)
if os.name == "posix" and _kernels._helper_delay() == taken:
    raise SystemExit("no helper took part in the parent's copy after the fork")
raise SystemExit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
@pytest.mark.parametrize("spin_us", [None, "10000000"])
def test_fork_after_multithreaded_copy_warns_nothing(spin_us):
    """On Python 3.12+ CPython warns (DeprecationWarning) when fork() is called while other
    threads exist (with ``-W error`` it swallows the error, so the script records warnings
    instead): the script fails if a helper was still alive at the fork (with a 10 s spin,
    one is spinning, until the fork handler stops it; with the default spin, one is parked
    by then, until the fork handler wakes and stops it). On every Python (with /proc) it counts the
    threads right after the fork, while a stopped helper is made to take 0.3 s to leave,
    and checks that the child and the parent copy with a helper after the fork."""
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    if spin_us is None:
        env.pop("LAZYBCAST_HELPER_SPIN_US", None)
    else:
        env["LAZYBCAST_HELPER_SPIN_US"] = spin_us
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c",
                           FORK_AFTER_THREADS], cwd=root, capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert "multi-threaded" not in done.stderr
