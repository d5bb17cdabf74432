/* Helper threads for one copy (lazybcast/_kernels_team.pxi).
 *
 * A multi-threaded copy starts its helpers when it begins and joins them (pthread_join, or
 * WaitForSingleObject on Windows) before it returns or raises: no helper outlives the call
 * that started it, so a later fork() finds one thread, and nothing -- no number of
 * KeyboardInterrupts -- can make the caller leave while a helper still touches its buffers.
 * Joining is plain C without the GIL, which no signal interrupts.
 *
 * Helpers block every signal (the mask is set around their creation), so SIGINT always
 * reaches the interpreter's main thread, which checks for it between blocks.
 *
 * Blocks of work are handed out through an atomic counter (lzb_next_item), so a helper that
 * gets no core leaves its share to the others; an atomic flag (lzb_cancel) stops every
 * thread before its next block.
 */
#ifndef LAZYBCAST_KERNELS_TEAM_H
#define LAZYBCAST_KERNELS_TEAM_H

#include <Python.h>

#if defined(_WIN32)
#include <windows.h>
#include <process.h>
typedef HANDLE lzb_thread_t;
#else
#include <pthread.h>
#include <signal.h>
typedef pthread_t lzb_thread_t;
#endif

#define LZB_TEAM_MAX 255

typedef struct {
    void (*fn)(void *);
    void *arg;
    int started;
    lzb_thread_t thread[LZB_TEAM_MAX];
} lzb_team;

#if defined(_WIN32)
static unsigned __stdcall lzb_team_main(void *team) {
    ((lzb_team *)team)->fn(((lzb_team *)team)->arg);
    return 0;
}
#else
static void *lzb_team_main(void *team) {
    ((lzb_team *)team)->fn(((lzb_team *)team)->arg);
    return NULL;
}
#endif

/* Start up to n helpers, each running fn(arg); returns how many started (fewer if the
 * system refuses a thread: the caller's own loop then does more of the work). */
static inline int lzb_team_start(lzb_team *team, int n, void (*fn)(void *), void *arg) {
    int k;
    team->fn = fn;
    team->arg = arg;
    team->started = 0;
    if (n > LZB_TEAM_MAX) n = LZB_TEAM_MAX;
#if defined(_WIN32)
    for (k = 0; k < n; k++) {
        uintptr_t h = _beginthreadex(NULL, 0, lzb_team_main, team, 0, NULL);
        if (h == 0) break;
        team->thread[team->started++] = (HANDLE)h;
    }
#else
    {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        for (k = 0; k < n; k++) {
            if (pthread_create(&team->thread[team->started], NULL, lzb_team_main, team) != 0)
                break;
            team->started++;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
#endif
    return team->started;
}

/* Wait for every helper started by lzb_team_start (no GIL needed; not interruptible). */
static inline void lzb_team_join(lzb_team *team) {
    int k;
    for (k = 0; k < team->started; k++) {
#if defined(_WIN32)
        WaitForSingleObject(team->thread[k], INFINITE);
        CloseHandle(team->thread[k]);
#else
        pthread_join(team->thread[k], NULL);
#endif
    }
    team->started = 0;
}

/* The next block of work: an atomic fetch-and-add shared by the threads of one copy. */
static inline Py_ssize_t lzb_next_item(Py_ssize_t *counter) {
#if defined(_MSC_VER)
    return (Py_ssize_t)InterlockedExchangeAdd64((volatile LONG64 *)counter, 1);
#else
    return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
#endif
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
