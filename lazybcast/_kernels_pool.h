/* The POSIX helper pool behind _kernels_team.h's API (included there, after LZB_TEAM_MAX;
 * not used on Windows).
 *
 * After its share of a copy a helper spins (pause loop; past LZB_SPIN_MIN_NS it yields
 * the CPU every 64 pauses, so a thread of another pool or process that wants this CPU runs
 * instead, while on an idle CPU the yield returns at once) for as long as that share took,
 * between LZB_SPIN_MIN_NS and lzb_pool.spin_max_ns (1 ms unless set), or for twice the
 * gap between the last job's end and this one's start (capped at the maximum) where that
 * gap is at most the maximum (copies at a steady pace, with work between them), waiting
 * for the next copy; then it sleeps on a condition variable (parks) until a copy wants it.
 * A copy that comes back-to-back (a loop, a data loader) finds its helper running and
 * hands it blocks at once; one that comes later wakes a parked helper, which costs the caller one futex wake
 * (~8 us on a KVM guest, where the wake sends an interrupt to an idle vCPU) instead of
 * starting a thread (~15-30 us, and its first run; benchmarks/RESULTS.md, "Parked helpers").
 * A copy wakes only as many parked helpers as it still needs (tickets, one signal each).
 * OpenMP runtimes do the same (libgomp spins up to GOMP_SPINCOUNT pauses, then sleeps on a
 * futex); here the spin is bounded by the share of work before it, or by the gap
 * between copies, and always by the maximum. A spin of 0
 * (lzb_set_helper_spin; HELPER_SPIN_US) means no pool: helpers exit after each copy.
 *
 * The guarantees of _kernels_team.h hold (lzb_team_join: no helper inside the call's job
 * once it returns, however many KeyboardInterrupts arrive). fork(): a pthread_atfork
 * prepare handler stops the helpers (waking the parked ones) and joins them before the
 * fork, so the child (and Python 3.12+'s check for other threads) finds none; the child
 * handler resets the pool. One copy at a time uses the pool: a copy that finds it in use
 * (another Python thread's copy, without the GIL) runs on its own thread.
 *
 * Two fork() calls at once (glibc 2.35+ runs their prepare handlers concurrently) are
 * serialized by lzb_fork_lock; the handlers are registered at import. A helper leaves a job
 * after its current block once a fork is stopping the pool, so a fork never waits for the
 * rest of another thread's copy. On a machine with one usable CPU helpers do not spin
 * (HELPER_SPIN_US is 0 there). Helpers are named "lazybcast-help" on Linux. The spin's
 * setting and the hooks that count helpers are in _kernels_pool_hooks.h.
 */
#ifndef LAZYBCAST_KERNELS_POOL_H
#define LAZYBCAST_KERNELS_POOL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* (sched_getcpu, CPU_SET; Python.h defines it on Linux) */
#endif
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#define LZB_SPIN_MAX_NS 1000000LL   /* 1 ms by default (lzb_set_helper_spin) */

enum { LZB_SLOT_NONE = 0, LZB_SLOT_RUNNING = 1, LZB_SLOT_EXITED = 2 };

typedef struct {
    int started;   /* helpers engaged in this call's job */
} lzb_team;

typedef struct {
    pthread_mutex_t lock;
    void (*fn)(void *);           /* the job on offer, NULL when none */
    void *arg;
    int want;                     /* helpers the job still takes */
    int active;                   /* helpers inside fn (atomic; changed under lock) */
    unsigned long gen;            /* bumped for each job (atomic; changed under lock) */
    int busy;                     /* a caller owns the pool */
    int stop;                     /* helpers leave now (atomic; the fork handler) */
    long long spin_max_ns;        /* (atomic reads while spinning) */
    long long spin_min_ns;
    long long delay_ns;           /* test hook: a helper waits this long before taking a job */
    long long delay_in_ns;        /* test hook: ... and this long after taking it */
    unsigned long taken;          /* shares of jobs taken by helpers, ever (test hook) */
    int slots;                    /* slots ever used: state[k] is NONE for k >= slots */
    int state[LZB_TEAM_MAX];      /* LZB_SLOT_* */
    unsigned long seen0[LZB_TEAM_MAX];  /* gen when the slot's thread was started */
    pthread_t thread[LZB_TEAM_MAX];
    int idle;                     /* helpers spinning for the next copy (atomic) */
    int parked;                   /* helpers asleep on `wake` (atomic; changed under lock) */
    int tickets;                  /* parked helpers a job wakes (each woken one takes one) */
    pthread_cond_t wake;          /* signalled once per ticket; broadcast to stop */
    int caller_cpu;               /* the CPU the last job's caller ran on (-1: unknown) */
    long long last_end_ns;        /* when the last job was joined (0: none yet) */
    long long gap_ns;             /* from then to the start of the job on offer (<= 0: unknown) */
} lzb_pool_t;

static lzb_pool_t lzb_pool = {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0, 0, 0, 0, 0,
                              LZB_SPIN_MAX_NS, LZB_SPIN_MIN_NS, 0, 0, 0, 0, {0}, {0}, {0},
                              0, 0, 0, PTHREAD_COND_INITIALIZER, -1};
static pthread_once_t lzb_pool_once = PTHREAD_ONCE_INIT;
/* Held from the prepare handler to the parent's: glibc 2.35+ runs the prepare handlers of
 * two concurrent fork() calls at the same time, and both would join the same helpers. */
static pthread_mutex_t lzb_fork_lock = PTHREAD_MUTEX_INITIALIZER;

static inline long long lzb_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void lzb_sleep_ns(long long ns) {
    struct timespec d;
    d.tv_sec = (time_t)(ns / 1000000000LL);
    d.tv_nsec = (long)(ns % 1000000000LL);
    while (nanosleep(&d, &d) != 0) {}
}

static inline void lzb_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Move the calling thread off `cpu` if it runs there and may run elsewhere. A woken helper
 * calls it with its caller's CPU: some kernels place a woken thread on the waker's CPU (this
 * project's KVM guests boot with sched_vcpu_pack, which packs tasks onto busy vCPUs), where
 * it would preempt the caller and then spin on the caller's CPU while the other CPU idles.
 * Narrowing the thread's affinity migrates it before sched_setaffinity returns; restoring
 * the mask leaves it where it is (RESULTS.md, "Parked helpers": 4 MiB pairs 31-40 -> 28 us). */
static void lzb_leave_cpu(int cpu) {
#if defined(__linux__)
    cpu_set_t mask, other;
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getcpu() != cpu) return;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0 || CPU_COUNT(&mask) < 2) return;
    other = mask;
    CPU_CLR(cpu, &other);
    if (CPU_COUNT(&other) == 0) return;
    if (sched_setaffinity(0, sizeof other, &other) == 0)  /* (migrates before it returns) */
        sched_setaffinity(0, sizeof mask, &mask);
#else
    (void)cpu;
#endif
}

/* How long a helper spins after a share of work that took `took` ns (called under the
 * lock): as long as the share took, at least spin_min_ns; or twice the gap before the job
 * (copies that come back at a steady pace, with work between them), where the gap is at
 * most the maximum, so the next copy finds the helper running instead of waking it. The
 * spin loop caps it at the current maximum. A gap past half the maximum thus gets a spin
 * of the maximum, which outlasts the gap unless the gap is within the helper's lead: the
 * spin starts when the helper's share ends, a little before the job's end from which the
 * gap counts (RESULTS.md, "Helpers that wait out a loop's gaps"). */
static long long lzb_spin_after(long long took) {
    long long spin = took < lzb_pool.spin_min_ns ? lzb_pool.spin_min_ns : took;
    if (lzb_pool.gap_ns > 0 && lzb_pool.gap_ns <= lzb_pool.spin_max_ns
            && 2 * lzb_pool.gap_ns > spin)
        spin = 2 * lzb_pool.gap_ns;
    return spin;
}

static void *lzb_pool_main(void *p) {
    int slot = (int)(intptr_t)p;
    unsigned long seen;
    long long spin, t0, took, delay;
    int woken = 0, caller_cpu = -1;
    void (*fn)(void *);
    void *arg;
    unsigned k;
#if defined(__linux__)
    pthread_setname_np(pthread_self(), "lazybcast-help");  /* (in top, py-spy, /proc) */
#endif
    pthread_mutex_lock(&lzb_pool.lock);
    seen = lzb_pool.seen0[slot];
    spin = lzb_pool.spin_max_ns;
    pthread_mutex_unlock(&lzb_pool.lock);
    for (;;) {
        t0 = lzb_now_ns();
        __atomic_add_fetch(&lzb_pool.idle, 1, __ATOMIC_RELAXED);
        for (k = 1; __atomic_load_n(&lzb_pool.gen, __ATOMIC_ACQUIRE) == seen
                    && !__atomic_load_n(&lzb_pool.stop, __ATOMIC_ACQUIRE); k++) {
            lzb_pause();
            if ((k & 63) == 0) {  /* (a new, lower maximum applies at once) */
                long long max = __atomic_load_n(&lzb_pool.spin_max_ns, __ATOMIC_RELAXED);
                long long el = lzb_now_ns() - t0;
                if (el >= (spin < max ? spin : max)) break;
                if (el >= LZB_SPIN_MIN_NS) sched_yield();  /* (others that want the CPU) */
            }
        }
        __atomic_sub_fetch(&lzb_pool.idle, 1, __ATOMIC_RELAXED);
        delay = __atomic_load_n(&lzb_pool.delay_ns, __ATOMIC_RELAXED);
        if (delay > 0) lzb_sleep_ns(delay);
        pthread_mutex_lock(&lzb_pool.lock);
        if (!lzb_pool.stop && lzb_pool.gen == seen && lzb_pool.spin_max_ns > 0) {
            /* No copy came: park until a copy gives this helper a ticket, or a fork or a
             * spin of 0 stops the pool. */
            __atomic_store_n(&lzb_pool.parked, lzb_pool.parked + 1, __ATOMIC_RELAXED);
            while (!lzb_pool.stop && lzb_pool.spin_max_ns > 0
                   && (lzb_pool.gen == seen || lzb_pool.tickets <= 0))
                pthread_cond_wait(&lzb_pool.wake, &lzb_pool.lock);
            __atomic_store_n(&lzb_pool.parked, lzb_pool.parked - 1, __ATOMIC_RELAXED);
            if (!lzb_pool.stop && lzb_pool.spin_max_ns > 0) {
                lzb_pool.tickets--;
                woken = 1;
                caller_cpu = lzb_pool.caller_cpu;
            }
            delay = lzb_pool.delay_ns;  /* (the test hook applies to a woken helper too) */
            if (delay > 0) {
                pthread_mutex_unlock(&lzb_pool.lock);
                lzb_sleep_ns(delay);
                pthread_mutex_lock(&lzb_pool.lock);
            }
        }
        if (lzb_pool.stop || lzb_pool.gen == seen) {  /* stopped, or no pool (spin 0): leave */
            lzb_pool.state[slot] = LZB_SLOT_EXITED;
            pthread_mutex_unlock(&lzb_pool.lock);
            return NULL;
        }
        seen = lzb_pool.gen;
        if (lzb_pool.fn == NULL || lzb_pool.want <= 0) {  /* enough helpers took it */
            /* (the caller took every block first: a loop's next copy still comes after
             * the same gap) */
            spin = lzb_spin_after(0);
            woken = 0;
            pthread_mutex_unlock(&lzb_pool.lock);
            continue;
        }
        fn = lzb_pool.fn;
        arg = lzb_pool.arg;
        lzb_pool.want--;
        lzb_pool.taken++;
        __atomic_store_n(&lzb_pool.active, lzb_pool.active + 1, __ATOMIC_RELEASE);
        delay = lzb_pool.delay_in_ns;
        pthread_mutex_unlock(&lzb_pool.lock);
        if (woken) {  /* (not under the lock: up to three system calls) */
            lzb_leave_cpu(caller_cpu);
            woken = 0;
        }
        if (delay > 0) lzb_sleep_ns(delay);
        t0 = lzb_now_ns();
        fn(arg);
        took = lzb_now_ns() - t0;
        pthread_mutex_lock(&lzb_pool.lock);
        __atomic_store_n(&lzb_pool.active, lzb_pool.active - 1, __ATOMIC_RELEASE);
        spin = lzb_spin_after(took);
        pthread_mutex_unlock(&lzb_pool.lock);
    }
}

/* fork(): stop every helper and join it (prepare); keep the pool stopped until the fork is
 * done, then reopen it (parent) or start it afresh (child, which has none of the threads). */
static void lzb_pool_prepare(void) {
    int slot[LZB_TEAM_MAX];
    int k, n = 0;
    pthread_mutex_lock(&lzb_fork_lock);  /* released by the parent handler */
    pthread_mutex_lock(&lzb_pool.lock);
    __atomic_store_n(&lzb_pool.stop, 1, __ATOMIC_RELEASE);  /* no thread starts from now */
    pthread_cond_broadcast(&lzb_pool.wake);  /* parked helpers leave too */
    for (k = 0; k < lzb_pool.slots; k++)
        if (lzb_pool.state[k] != LZB_SLOT_NONE) slot[n++] = k;
    pthread_mutex_unlock(&lzb_pool.lock);
    /* (a helper needs the lock to leave: not held while joining) */
    for (k = 0; k < n; k++) pthread_join(lzb_pool.thread[slot[k]], NULL);
    pthread_mutex_lock(&lzb_pool.lock);
    for (k = 0; k < n; k++) lzb_pool.state[slot[k]] = LZB_SLOT_NONE;
    pthread_mutex_unlock(&lzb_pool.lock);
}

static void lzb_pool_parent(void) {
    pthread_mutex_lock(&lzb_pool.lock);
    __atomic_store_n(&lzb_pool.stop, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lzb_pool.lock);
    pthread_mutex_unlock(&lzb_fork_lock);
}

static void lzb_pool_child(void) {
    long long spin = lzb_pool.spin_max_ns, spin_min = lzb_pool.spin_min_ns;
    unsigned long gen = lzb_pool.gen;
    memset(&lzb_pool, 0, sizeof lzb_pool);
    pthread_mutex_init(&lzb_pool.lock, NULL);
    pthread_mutex_init(&lzb_fork_lock, NULL);
    pthread_cond_init(&lzb_pool.wake, NULL);
    lzb_pool.spin_max_ns = spin;
    lzb_pool.spin_min_ns = spin_min;
    lzb_pool.gen = gen;  /* (delay_ns and taken restart at 0) */
}

static void lzb_pool_register(void) {
    pthread_atfork(lzb_pool_prepare, lzb_pool_parent, lzb_pool_child);
}

/* Register the fork handlers: at import (under the import lock, which os.fork() also
 * takes), so that no fork can start before they are in place and miss them. */
static inline void lzb_pool_init(void) {
    pthread_once(&lzb_pool_once, lzb_pool_register);
}

/* Whether the fork handler is stopping the helpers: a helper then leaves the job after its
 * current block (the caller, who may be waiting for the GIL, does the rest). */
static inline int lzb_pool_stopping(void) {
    return __atomic_load_n(&lzb_pool.stop, __ATOMIC_ACQUIRE);
}

/* Offer fn(arg) to up to n helpers (woken if parked, started if not alive); returns how
 * many take part (0 if another copy holds the pool or no thread could be started: the
 * caller's own loop then does all the work). Every helper that takes part runs fn(arg) to
 * its end; the caller must call lzb_team_join before its job goes away. */
static inline int lzb_team_start(lzb_team *team, int n, void (*fn)(void *), void *arg) {
    int k, started = 0;
    team->started = 0;
    if (n <= 0) return 0;
    if (n > LZB_TEAM_MAX) n = LZB_TEAM_MAX;
    pthread_once(&lzb_pool_once, lzb_pool_register);
    pthread_mutex_lock(&lzb_pool.lock);
    if (lzb_pool.busy || lzb_pool.stop) {
        pthread_mutex_unlock(&lzb_pool.lock);
        return 0;
    }
    lzb_pool.busy = 1;
    for (k = 0; k < lzb_pool.slots; k++) {  /* helpers gone: reap them (they hold stacks) */
        if (lzb_pool.state[k] == LZB_SLOT_EXITED) {
            pthread_join(lzb_pool.thread[k], NULL);
            lzb_pool.state[k] = LZB_SLOT_NONE;
        }
    }
    for (k = 0; k < n; k++) {
        if (lzb_pool.state[k] == LZB_SLOT_NONE) {
            sigset_t all, old;
            int failed;
            lzb_pool.seen0[k] = lzb_pool.gen;
            sigfillset(&all);
            pthread_sigmask(SIG_BLOCK, &all, &old);
            failed = pthread_create(&lzb_pool.thread[k], NULL, lzb_pool_main,
                                    (void *)(intptr_t)k);
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            if (failed) break;
            lzb_pool.state[k] = LZB_SLOT_RUNNING;
            if (k >= lzb_pool.slots) lzb_pool.slots = k + 1;
        }
        started++;
    }
    if (started == 0) {
        lzb_pool.busy = 0;
        pthread_mutex_unlock(&lzb_pool.lock);
        return 0;
    }
    lzb_pool.fn = fn;
    lzb_pool.arg = arg;
    lzb_pool.want = started;
    lzb_pool.gap_ns = lzb_pool.last_end_ns > 0 ? lzb_now_ns() - lzb_pool.last_end_ns : -1;
#if defined(__linux__)
    lzb_pool.caller_cpu = sched_getcpu();
#endif
    __atomic_store_n(&lzb_pool.gen, lzb_pool.gen + 1, __ATOMIC_RELEASE);
    /* Wake only the parked helpers the job still wants (a wake is a system call, ~8 us on a
     * VM; a helper woken for nothing spins 50 us, or twice the gap between copies). */
    if (lzb_pool.parked > 0) {
        int awake = -lzb_pool.parked;  /* helpers alive and not parked (spinning): they come */
        for (k = 0; k < lzb_pool.slots; k++) awake += lzb_pool.state[k] == LZB_SLOT_RUNNING;
        int wake = started - awake > 0 ? started - awake : 0;
        lzb_pool.tickets = wake < lzb_pool.parked ? wake : lzb_pool.parked;
        for (k = 0; k < lzb_pool.tickets; k++) pthread_cond_signal(&lzb_pool.wake);
    }
    pthread_mutex_unlock(&lzb_pool.lock);
    team->started = started;
    return started;
}

/* Withdraw the job and wait until no helper is inside it (no GIL needed; not
 * interruptible). A helper that had not taken the job by now never will; one inside it
 * finishes at most its current block. The wait spins for 2 ms, then sleeps in steps. */
static inline void lzb_team_join(lzb_team *team) {
    long long t0;
    unsigned k;
    if (!team->started) return;
    pthread_mutex_lock(&lzb_pool.lock);
    lzb_pool.fn = NULL;
    lzb_pool.arg = NULL;
    lzb_pool.want = 0;
    lzb_pool.tickets = 0;  /* (a helper not yet woken sleeps on) */
    pthread_mutex_unlock(&lzb_pool.lock);
    /* A helper inside the job finishes at most the block it is in (the caller cancelled
     * the job or took the last block): spin, then yield the CPU if it takes long. */
    t0 = lzb_now_ns();
    for (k = 1; __atomic_load_n(&lzb_pool.active, __ATOMIC_ACQUIRE) > 0; k++) {
        if ((k & 63) == 0 && lzb_now_ns() - t0 > 2000000LL)
            lzb_sleep_ns(20000);  /* past a block's time (<= 4 MiB): a helper without a CPU */
        else
            lzb_pause();
    }
    pthread_mutex_lock(&lzb_pool.lock);
    lzb_pool.busy = 0;
    lzb_pool.last_end_ns = lzb_now_ns();
    pthread_mutex_unlock(&lzb_pool.lock);
    team->started = 0;
}

#include "_kernels_pool_hooks.h"  /* (settings and test hooks) */

#endif /* LAZYBCAST_KERNELS_POOL_H */
