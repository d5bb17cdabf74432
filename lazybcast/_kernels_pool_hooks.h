/* The helper pool's setting and test hooks (included by _kernels_pool.h, after the pool):
 * how long helpers spin (lzb_set_helper_spin, HELPER_SPIN_US), a delay before they take a
 * job, and how many are spinning, parked or alive. */
#ifndef LAZYBCAST_KERNELS_POOL_HOOKS_H
#define LAZYBCAST_KERNELS_POOL_HOOKS_H

/* How long helpers spin after a share of work: as long as it took, at least min_ns, at
 * most max_ns (0: no pool, they leave at once, parked ones too). A spinning helper sees a
 * new max_ns at once. */
static inline void lzb_set_helper_spin(long long max_ns, long long min_ns) {
    if (max_ns < 0) max_ns = 0;
    if (min_ns < 0) min_ns = 0;
    pthread_mutex_lock(&lzb_pool.lock);
    __atomic_store_n(&lzb_pool.spin_max_ns, max_ns, __ATOMIC_RELAXED);
    lzb_pool.spin_min_ns = min_ns < max_ns ? min_ns : max_ns;
    if (max_ns == 0) pthread_cond_broadcast(&lzb_pool.wake);  /* parked helpers leave */
    pthread_mutex_unlock(&lzb_pool.lock);
}

static inline long long lzb_helper_spin(void) { return lzb_pool.spin_max_ns; }

/* Test hook: helpers wait delay_ns before taking a job; returns the shares taken so far. */
static inline unsigned long lzb_helper_delay(long long delay_ns, long long delay_in_ns) {
    unsigned long taken;
    pthread_mutex_lock(&lzb_pool.lock);
    if (delay_ns >= 0) __atomic_store_n(&lzb_pool.delay_ns, delay_ns, __ATOMIC_RELAXED);
    if (delay_in_ns >= 0) lzb_pool.delay_in_ns = delay_in_ns;
    taken = lzb_pool.taken;
    pthread_mutex_unlock(&lzb_pool.lock);
    return taken;
}

/* Helper threads spinning now, waiting for the next copy (a hint: one may leave at once). */
static inline int lzb_helpers_idle(void) {
    return __atomic_load_n(&lzb_pool.idle, __ATOMIC_RELAXED);
}

/* Helper threads asleep, waiting for the next copy (a hint). */
static inline int lzb_helpers_parked(void) {
    return __atomic_load_n(&lzb_pool.parked, __ATOMIC_RELAXED);
}

/* Helper threads alive now (spinning, parked or working). */
static inline int lzb_helpers_alive(void) {
    int k, n = 0;
    pthread_mutex_lock(&lzb_pool.lock);
    for (k = 0; k < lzb_pool.slots; k++) n += lzb_pool.state[k] == LZB_SLOT_RUNNING;
    pthread_mutex_unlock(&lzb_pool.lock);
    return n;
}

#endif /* LAZYBCAST_KERNELS_POOL_HOOKS_H */
