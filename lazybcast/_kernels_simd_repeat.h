/* A block or a row written once and repeated, for lazybcast/_kernels_rows.pxi, built on
 * _kernels_simd.h. Every helper returns 0 (or its distance 0: "not done here") without AVX2,
 * and the caller copies with lzb_copy.
 *
 * Contents:
 *   lzb_forward_distance, lzb_copy_forward: a short periodic pattern copied forward from a
 *   few hundred bytes back;
 *   lzb_copy_periodic: a longer pattern swept out in order from its first two periods;
 *   lzb_copy_down: one row copied into several.
 *
 * Each aims at memset's speed: one aligned 32-byte store per 32 bytes of output, loaded from
 * lines that stay in L1. Measured in C models (2 MiB outputs, in L3, starting 16 bytes into
 * a line as NumPy's large arrays do; best of 300-400; Zen 4): benchmarks/RESULTS.md,
 * "Replication and packed rows at the memset limit".
 */
#ifndef LAZYBCAST_KERNELS_SIMD_REPEAT_H
#define LAZYBCAST_KERNELS_SIMD_REPEAT_H

#include "_kernels_simd.h"

/* ---- A periodic pattern copied forward, from a short distance ---------------------------
 * dst[done:total] from the pattern in dst[0:done] (its period divides done), by 32-byte
 * aligned stores of what lies `dist` bytes back: a distance that is a multiple of both the
 * period and 32 bytes, at least LZB_FORWARD_MIN. The loaded lines were written a few hundred
 * bytes earlier and are still in L1, and loads and stores share their alignment. Measured
 * (C model, 2 MiB output starting 16 bytes into a line, so in L3; best of 300; Zen 4):
 * distance 512 or 576 bytes 20.7-21.3 us, as fast as memset (20.8-21.1); 256 bytes 22.4-22.7;
 * 1-6 kB 21-33 us (unsteady); 8 kB (memcpy from the doubled region, what _replicate did)
 * 29-32 us; 64 kB 41 us. Distances that are not a multiple of 32 bytes are slow (264 bytes
 * 60 us, 516 or 528 bytes 34 us): the loads then straddle lines still being written.
 * lzb_forward_distance gives the distance for a period, 0 when this path does not apply
 * (no AVX2, or a distance above LZB_FORWARD_MAX, whose loads no longer measured better). */
#define LZB_FORWARD_MIN 512
#define LZB_FORWARD_MAX 1024

static inline size_t lzb_forward_distance(size_t period) {
#if defined(LZB_X86_DISPATCH)
    size_t g = period, b = 32, t, l;
    if (period == 0 || !lzb_has_avx2())
        return 0;
    while (b) { t = g % b; g = b; b = t; }
    l = period / g * 32;  /* lcm(period, 32) */
    l *= (LZB_FORWARD_MIN + l - 1) / l;
    return l <= LZB_FORWARD_MAX ? l : 0;
#else
    (void)period;
    return 0;
#endif
}

#if defined(LZB_X86_DISPATCH)
/* The copy: dist from lzb_forward_distance (a multiple of 32, at least 512), done >= dist. */
__attribute__((target("avx2")))
static void lzb_copy_forward(char *dst, size_t done, size_t total, size_t dist) {
    size_t x = done + ((0 - (size_t)(dst + done)) & 31);
    if (x > total)
        x = total;
    memcpy(dst + done, dst + done - dist, x - done);  /* < 32 bytes: no overlap */
    for (; x + 128 <= total; x += 128) {
        const char *s = dst + x - dist;
        __m256i a = _mm256_loadu_si256((const __m256i *)s);
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + 64));
        __m256i d = _mm256_loadu_si256((const __m256i *)(s + 96));
        _mm256_store_si256((__m256i *)(dst + x), a);
        _mm256_store_si256((__m256i *)(dst + x + 32), b);
        _mm256_store_si256((__m256i *)(dst + x + 64), c);
        _mm256_store_si256((__m256i *)(dst + x + 96), d);
    }
    memcpy(dst + x, dst + x - dist, total - x);  /* < 128 bytes: no overlap */
}
#else
static inline void lzb_copy_forward(char *dst, size_t done, size_t total, size_t dist) {
    (void)dst; (void)done; (void)total; (void)dist;  /* (never called: distance 0) */
}
#endif

/* ---- A longer periodic pattern, swept out in order --------------------------------------
 * dst[done:total] from the pattern in dst[0:done] (period `period`, which divides done;
 * done >= 2 * period; period >= 32): the output is swept in order with 32-byte aligned
 * stores, each loaded from the first two periods at its phase, so loads never wrap and
 * stay in L1, and every 32 bytes of output take one store, also across the joins of rows
 * that do not start on 32 bytes. C model, Zen 4, best of 400 (memset 20.8 us), periods of
 * 520-8192 bytes: 21.4-22.4 us; copying 8 kB chunks back from the output's start (what
 * _copy_forward did past LZB_FORWARD_MAX) 27.9-28.9; row by row from the source
 * (lzb_copy_down) 21.9-27.7, 26.6-27.7 for rows of 1, 2 or 4 kB. */
#if defined(LZB_X86_DISPATCH)
__attribute__((target("avx2")))
static void lzb_copy_periodic_avx2(char *dst, size_t done, size_t total, size_t period) {
    size_t i = done + ((0 - (size_t)(dst + done)) & 31), ph, units, left, k;
    const char *p;
    char *q;
    if (i > total)
        i = total;
    memcpy(dst + done, dst, i - done);  /* < 32 bytes at phase 0: no overlap */
    ph = i - done;                      /* i's phase in the pattern */
    while (i + 32 <= total) {
        /* Units from phase ph up to the first that reaches into the next period: the last
           loads bytes below ph + 32 * units < period + 32 <= 2 * period <= done. */
        units = (period - ph + 31) / 32;
        left = (total - i) / 32;
        if (units > left)
            units = left;
        p = dst + ph;
        q = dst + i;
        for (k = 0; k + 4 <= units; k += 4) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(p + 32 * k));
            __m256i b = _mm256_loadu_si256((const __m256i *)(p + 32 * k + 32));
            __m256i c = _mm256_loadu_si256((const __m256i *)(p + 32 * k + 64));
            __m256i d = _mm256_loadu_si256((const __m256i *)(p + 32 * k + 96));
            _mm256_store_si256((__m256i *)(q + 32 * k), a);
            _mm256_store_si256((__m256i *)(q + 32 * k + 32), b);
            _mm256_store_si256((__m256i *)(q + 32 * k + 64), c);
            _mm256_store_si256((__m256i *)(q + 32 * k + 96), d);
        }
        for (; k < units; k++)
            _mm256_store_si256((__m256i *)(q + 32 * k),
                               _mm256_loadu_si256((const __m256i *)(p + 32 * k)));
        i += 32 * units;
        ph += 32 * units;
        if (ph >= period)
            ph -= period;
    }
    memcpy(dst + i, dst + ph, total - i);  /* < 32 bytes from below done <= i: no overlap */
}
#endif

/* Returns 0 (nothing done) without AVX2 or outside the conditions above. */
static inline int lzb_copy_periodic(char *dst, size_t done, size_t total, size_t period) {
#if defined(LZB_X86_DISPATCH)
    if (!lzb_has_avx2() || period < 32 || done < 2 * period || done % period != 0)
        return 0;
    lzb_copy_periodic_avx2(dst, done, total, period);
    return 1;
#else
    (void)dst; (void)done; (void)total; (void)period;
    return 0;
#endif
}

/* ---- One row copied down a column ------------------------------------------------------
 * n rows of len bytes, row i at dst + i * dstep, each a copy of the len bytes at src (a long
 * row broadcast over a few: (L,) -> (n, L)), in chunks of `chunk` bytes: each chunk of the
 * source is read once into L1 and copied into every row, with 32-byte aligned stores.
 * Row by row, each row reads the whole source back from L2 (memcpy, or a vector loop: the
 * same). C model, Zen 4, rows of 32 kB from a source 16 bytes into a line, output 16 bytes
 * in, best of 200: 16 rows (512 kB, in L2) 9.97-10.00 us row by row, 8.02-8.73 in 8 kB
 * chunks (memset 5.61-5.85); 128 rows (4 MiB) 93.9-99.5 -> 77.6-78.2 us (memset 45-47);
 * rows of 8 kB (256) 36.2-37.2 by memcpy, 29.5-30.4 by the aligned loop (memset 22.5-23.9).
 * Rows that follow each other (dstep == len) and fit in a chunk go through
 * lzb_copy_periodic_avx2 instead: from a source 48 bytes into a line, rows of 1, 2 and
 * 4 kB written row by row took 26.6-27.7 us against 21.4-21.5 swept (memset 20.8).
 * Chunk by chunk only if `chunked` (the output stays in the cache: beyond it, the chunks
 * written to many rows in turn reach memory at half the rate of whole rows; see
 * COPY_DOWN_MAX_BYTES in _kernels_machine.pxi).
 * Returns 0 (nothing done) without AVX2, or for rows not swept out if not `chunked`. */

static inline int lzb_copy_down(char *dst, Py_ssize_t dstep, const char *src, Py_ssize_t n,
                                size_t len, size_t chunk, int chunked) {
#if defined(LZB_X86_DISPATCH)
    size_t c, k;
    Py_ssize_t i;
    if (!lzb_has_avx2() || chunk == 0)
        return 0;
    if ((size_t)dstep == len && len <= 2 * chunk && len >= 32 && n >= 3) {
        /* Rows that follow each other, two of them within L1 (chunk is a quarter of it):
           the first two, then the rest swept out from them. */
        lzb_copy_aligned_avx2(dst, src, len);
        lzb_copy_aligned_avx2(dst + len, src, len);
        lzb_copy_periodic_avx2(dst, 2 * len, (size_t)n * len, len);
        return 1;
    }
    if (!chunked)
        return 0;
    for (c = 0; c < len; c += chunk) {
        k = len - c < chunk ? len - c : chunk;
        for (i = 0; i < n; i++)
            lzb_copy_aligned_avx2(dst + i * dstep + c, src + c, k);
    }
    return 1;
#else
    (void)dst; (void)dstep; (void)src; (void)n; (void)len; (void)chunk; (void)chunked;
    return 0;
#endif
}

#endif /* LAZYBCAST_KERNELS_SIMD_REPEAT_H */
