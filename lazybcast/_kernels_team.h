/* Helper threads for multi-threaded copies: the API the copy job uses (_kernels_job.pxi).
 *
 *   lzb_team_start(team, n, fn, arg): offer fn(arg) to up to n helpers; returns how many
 *     take part;
 *   lzb_team_join(team): return only when no helper is inside the call's job (the job is
 *     withdrawn first, so a helper that had not yet taken it never will); the caller's
 *     buffers and its Job on the stack are never touched after it returns, and nothing -- no
 *     number of KeyboardInterrupts -- makes the caller leave earlier;
 *   lzb_next_item, lzb_cancelled, lzb_cancel: blocks of work handed out through an atomic
 *     counter, so a helper that gets no core, or arrives late, leaves its share to the
 *     others; an atomic flag stops every thread before its next block;
 *   lzb_take_front, lzb_take_back: the same blocks taken from both ends of the output, the
 *     calling thread's from the front and the helpers' from the back;
 *   lzb_helpers_idle, lzb_helpers_parked: helpers spinning for the next copy now, and
 *     helpers asleep until a copy wakes them (0 where there is no pool);
 *   lzb_now_ns: a monotonic clock in nanoseconds (the loop rule's, _kernels_job.pxi);
 *   LZB_SPIN_MIN_NS: the helpers' shortest spin after a share of work (50 us);
 *   test hooks: lzb_set_helper_spin, lzb_helper_spin, lzb_helper_delay, lzb_helpers_alive;
 *     fork handling: lzb_pool_init, lzb_pool_stopping.
 *
 * On POSIX the helpers are a pool: they spin briefly after each copy, then sleep until a
 * copy wakes them (_kernels_pool.h).
 * Windows keeps the simple scheme below: helpers started by the call and joined before it
 * returns.
 *
 * Helpers block every signal (the mask is set around their creation), so SIGINT always
 * reaches the interpreter's main thread, which checks for it between blocks.
 */
#ifndef LAZYBCAST_KERNELS_TEAM_H
#define LAZYBCAST_KERNELS_TEAM_H

#include <Python.h>

#define LZB_TEAM_MAX 255
#define LZB_SPIN_MIN_NS 50000LL     /* 50 us: covers the Python between two calls */

#if defined(_WIN32)
#include <windows.h>
#include <process.h>

typedef struct {
    void (*fn)(void *);
    void *arg;
    int started;
    HANDLE thread[LZB_TEAM_MAX];
} lzb_team;

static unsigned __stdcall lzb_team_main(void *team) {
    ((lzb_team *)team)->fn(((lzb_team *)team)->arg);
    return 0;
}

/* Start up to n helpers, each running fn(arg); returns how many started. */
static inline int lzb_team_start(lzb_team *team, int n, void (*fn)(void *), void *arg) {
    int k;
    team->fn = fn;
    team->arg = arg;
    team->started = 0;
    if (n > LZB_TEAM_MAX) n = LZB_TEAM_MAX;
    for (k = 0; k < n; k++) {
        uintptr_t h = _beginthreadex(NULL, 0, lzb_team_main, team, 0, NULL);
        if (h == 0) break;
        team->thread[team->started++] = (HANDLE)h;
    }
    return team->started;
}

/* Wait for every helper started by lzb_team_start (no GIL needed; not interruptible). */
static inline void lzb_team_join(lzb_team *team) {
    int k;
    for (k = 0; k < team->started; k++) {
        WaitForSingleObject(team->thread[k], INFINITE);
        CloseHandle(team->thread[k]);
    }
    team->started = 0;
}

static inline long long lzb_now_ns(void) {
    static LARGE_INTEGER freq;  /* (fixed at boot: racing first calls store the same value) */
    LARGE_INTEGER now;
    if (freq.QuadPart == 0) QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    return (long long)(now.QuadPart / freq.QuadPart) * 1000000000LL
           + (long long)(now.QuadPart % freq.QuadPart) * 1000000000LL / freq.QuadPart;
}

static inline void lzb_set_helper_spin(long long max_ns, long long min_ns) {
    (void)max_ns;
    (void)min_ns;
}
static inline long long lzb_helper_spin(void) { return 0; }
static inline int lzb_helpers_alive(void) { return 0; }
static inline int lzb_helpers_idle(void) { return 0; }
static inline int lzb_helpers_parked(void) { return 0; }
static inline unsigned long lzb_helper_delay(long long delay_ns, long long delay_in_ns) {
    (void)delay_ns;
    (void)delay_in_ns;
    return 0;
}
static inline void lzb_pool_init(void) {}
static inline int lzb_pool_stopping(void) { return 0; }

#else /* POSIX: a pool of helpers that spin briefly after each copy, then sleep */
#include "_kernels_pool.h"
#endif

/* The next block of work: an atomic fetch-and-add shared by the threads of one copy. */
static inline Py_ssize_t lzb_next_item(Py_ssize_t *counter) {
#if defined(_MSC_VER)
    return (Py_ssize_t)InterlockedExchangeAdd64((volatile LONG64 *)counter, 1);
#else
    return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
#endif
}

/* Blocks taken from both ends of an output (a copy's, _kernels_job.pxi; a binary ufunc's,
 * _kernels_binary.h). Every thread first claims a block through ``next`` (lzb_next_item; a
 * claim numbered n_items or more means none is left). The calling thread then takes the
 * first block not yet taken from the front (lzb_take_front, after a claim it made), a helper
 * the last not yet taken from the back (lzb_take_back, which makes the claim and returns -1
 * when none is left). At most n_items claims come out below n_items, each followed by one
 * take, so front + back never exceed n_items: the two ends never take the same block, and
 * the caller's share is one run of the output, the helpers' together another. */
static inline Py_ssize_t lzb_take_front(Py_ssize_t *front) {
    return lzb_next_item(front);
}

static inline Py_ssize_t lzb_take_back(Py_ssize_t *next, Py_ssize_t *back, Py_ssize_t n_items) {
    if (lzb_next_item(next) >= n_items) return -1;
    return n_items - 1 - lzb_next_item(back);
}

static inline int lzb_cancelled(int *flag) {
#if defined(_MSC_VER)
    return (int)InterlockedCompareExchange((volatile LONG *)flag, 0, 0);
#else
    return __atomic_load_n(flag, __ATOMIC_RELAXED);
#endif
}

static inline void lzb_cancel(int *flag) {
#if defined(_MSC_VER)
    InterlockedExchange((volatile LONG *)flag, 1);
#else
    __atomic_store_n(flag, 1, __ATOMIC_RELAXED);
#endif
}

#endif /* LAZYBCAST_KERNELS_TEAM_H */
