/* The transposing tiles of lazybcast/_kernels.pyx (_kernels_tiles.pxi), built on
 * _kernels_simd.h.
 *
 * Contents:
 *   lzb_scatter_transposed: the write-out of a transposing tile, as register transposes;
 *   lzb_transpose_staged: a large transpose through a staging block, streamed out.
 */
#ifndef LAZYBCAST_KERNELS_SIMD_TILES_H
#define LAZYBCAST_KERNELS_SIMD_TILES_H

#include "_kernels_simd.h"

/* ---- Transposing tiles ----------------------------------------------------------------
 * lzb_scatter_transposed(buf, ni, nj, dst, da, size, stream):
 *   dst[i * da + j * size] = buf[(j * ni + i) * size] for i < ni, j < nj,
 * in square blocks of B x B items transposed in registers (B = 16 / size: 16x16 bytes,
 * 8x8 two-byte, 4x4 four-byte, 2x2 eight-byte items), the edges item by item; 16-byte items
 * are plain moves. With stream set and 16-byte aligned rows the blocks are written with
 * non-temporal stores. Returns 0 (nothing done) for other item sizes or without SSE2. */

#if defined(LZB_SSE2)
/* r[k] <- the k-th column of the 16 x 16 bytes (or 8 x 8 two-byte, 4 x 4 four-byte,
   2 x 2 eight-byte items) held one row per register in r[0 .. 16/size - 1]. */
LZB_INLINE void lzb_transpose128(__m128i *r, Py_ssize_t size) {
    __m128i t[16];
    int k, rows = (int)(16 / size);
    if (size == 1) {
        for (k = 0; k < 8; k++) {
            t[k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
            t[k + 8] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
        }
        /* t[k] (k < 8): rows 2k, 2k+1 interleaved, bytes 0..7; t[k + 8]: bytes 8..15 */
        for (k = 0; k < 4; k++) {
            r[k] = _mm_unpacklo_epi16(t[2 * k], t[2 * k + 1]);
            r[k + 4] = _mm_unpackhi_epi16(t[2 * k], t[2 * k + 1]);
            r[k + 8] = _mm_unpacklo_epi16(t[2 * k + 8], t[2 * k + 9]);
            r[k + 12] = _mm_unpackhi_epi16(t[2 * k + 8], t[2 * k + 9]);
        }
        for (k = 0; k < 8; k += 2) {
            t[k / 2] = _mm_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
            t[k / 2 + 4] = _mm_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
            t[k / 2 + 8] = _mm_unpacklo_epi32(r[2 * k + 2], r[2 * k + 3]);
            t[k / 2 + 12] = _mm_unpackhi_epi32(r[2 * k + 2], r[2 * k + 3]);
        }
        for (k = 0; k < 4; k++) {
            r[4 * k + 0] = _mm_unpacklo_epi64(t[k], t[k + 8]);
            r[4 * k + 1] = _mm_unpackhi_epi64(t[k], t[k + 8]);
            r[4 * k + 2] = _mm_unpacklo_epi64(t[k + 4], t[k + 12]);
            r[4 * k + 3] = _mm_unpackhi_epi64(t[k + 4], t[k + 12]);
        }
        return;
    }
    if (size == 2) {
        for (k = 0; k < 4; k++) {
            t[k] = _mm_unpacklo_epi16(r[2 * k], r[2 * k + 1]);
            t[k + 4] = _mm_unpackhi_epi16(r[2 * k], r[2 * k + 1]);
        }
        for (k = 0; k < 2; k++) {
            r[k] = _mm_unpacklo_epi32(t[2 * k], t[2 * k + 1]);
            r[k + 2] = _mm_unpackhi_epi32(t[2 * k], t[2 * k + 1]);
            r[k + 4] = _mm_unpacklo_epi32(t[2 * k + 4], t[2 * k + 5]);
            r[k + 6] = _mm_unpackhi_epi32(t[2 * k + 4], t[2 * k + 5]);
        }
        for (k = 0; k < 4; k++) {
            t[2 * k] = _mm_unpacklo_epi64(r[2 * k], r[2 * k + 1]);
            t[2 * k + 1] = _mm_unpackhi_epi64(r[2 * k], r[2 * k + 1]);
        }
        for (k = 0; k < rows; k++)
            r[k] = t[k];
        return;
    }
    if (size == 4) {
        t[0] = _mm_unpacklo_epi32(r[0], r[1]); t[1] = _mm_unpackhi_epi32(r[0], r[1]);
        t[2] = _mm_unpacklo_epi32(r[2], r[3]); t[3] = _mm_unpackhi_epi32(r[2], r[3]);
        r[0] = _mm_unpacklo_epi64(t[0], t[2]); r[1] = _mm_unpackhi_epi64(t[0], t[2]);
        r[2] = _mm_unpacklo_epi64(t[1], t[3]); r[3] = _mm_unpackhi_epi64(t[1], t[3]);
        return;
    }
    t[0] = _mm_unpacklo_epi64(r[0], r[1]); t[1] = _mm_unpackhi_epi64(r[0], r[1]);
    r[0] = t[0]; r[1] = t[1];
}
#endif

#if defined(LZB_SSE2)
/* The body of lzb_scatter_transposed, inlined once per item size (a constant there). */
LZB_INLINE void lzb_scatter_sized(const char *buf, Py_ssize_t ni, Py_ssize_t nj,
                                     char *dst, Py_ssize_t da, Py_ssize_t size, int nt) {
    Py_ssize_t i, j, k, b = 16 / size;
    __m128i r[16];
    for (i = 0; i + b <= ni; i += b) {
        for (j = 0; j + b <= nj; j += b) {
            for (k = 0; k < b; k++)
                r[k] = _mm_loadu_si128((const __m128i *)(buf + ((j + k) * ni + i) * size));
            lzb_transpose128(r, size);
            for (k = 0; k < b; k++) {
                __m128i *q = (__m128i *)(dst + (i + k) * da + j * size);
                if (nt) _mm_stream_si128(q, r[k]); else _mm_storeu_si128(q, r[k]);
            }
        }
        for (; j < nj; j++)
            for (k = i; k < i + b; k++)
                memcpy(dst + k * da + j * size, buf + (j * ni + k) * size, (size_t)size);
    }
    for (; i < ni; i++)
        for (j = 0; j < nj; j++)
            memcpy(dst + i * da + j * size, buf + (j * ni + i) * size, (size_t)size);
}
#endif

static inline int lzb_scatter_transposed(const char *buf, Py_ssize_t ni, Py_ssize_t nj,
                                         char *dst, Py_ssize_t da, Py_ssize_t size,
                                         int stream) {
#if defined(LZB_SSE2)
    /* Non-temporal stores (a large output) need 16-byte aligned rows. */
    int nt = stream && ((size_t)dst & 15) == 0 && (da & 15) == 0;
    switch (size) {
    case 1: lzb_scatter_sized(buf, ni, nj, dst, da, 1, nt); return 1;
    case 2: lzb_scatter_sized(buf, ni, nj, dst, da, 2, nt); return 1;
    case 4: lzb_scatter_sized(buf, ni, nj, dst, da, 4, nt); return 1;
    case 8: lzb_scatter_sized(buf, ni, nj, dst, da, 8, nt); return 1;
    case 16: {  /* one item per register: plain moves */
        Py_ssize_t i, j;
        for (i = 0; i < ni; i++)
            for (j = 0; j < nj; j++) {
                __m128i x = _mm_loadu_si128((const __m128i *)(buf + (j * ni + i) * 16));
                __m128i *q = (__m128i *)(dst + i * da + j * 16);
                if (nt) _mm_stream_si128(q, x); else _mm_storeu_si128(q, x);
            }
        return 1;
    }
    default: return 0;
    }
#else
    (void)buf; (void)ni; (void)nj; (void)dst; (void)da; (void)size; (void)stream;
    return 0;
#endif
}

/* How far ahead lzb_transpose_staged prefetches source rows: 8 rows of a tile (1-4 kB for
   items of 1 to 16 bytes). Far enough to cover the memory's latency, near enough that the
   lines arrive just before use: rows whose stride is a power of two share a few cache sets,
   so lines prefetched a whole staging block ahead (the first version) were evicted before
   they were read. Zen 3, 64 MiB transposes, best of 11 x 4-6 interleaved runs, one thread:
   float32 4096x4096 18.1 -> 15.2-16.0 ms, uint8 8192x8192 29.1 -> 23.0 ms, float64
   2896x2896 17.0 -> 14.8 ms (4 rows: slower than 8 for float32, within noise of it for
   float64; 16 rows: no better for uint8, 32 rows: slower than no prefetch at all). */
#define LZB_TRANSPOSE_PREFETCH_ROWS 8

/* lzb_transpose_staged(src, sb, dst, da, ni, nj, size, tile, stage, cols):
 *   dst[i * da + j * size] = src[i * size + j * sb] for i < ni, j < nj,
 * for outputs that do not stay in the cache: tiles of tile x tile items (through the first
 * tile * tile * size bytes of stage, an L1-sized buffer) are transposed into a staging block
 * of tile x cols items (the rest of stage, in L2), whose rows -- runs of cols items -- are
 * then written out with non-temporal stores. The output is written once, in long runs, with
 * no read for ownership; ordinary stores read every output line first (a third more memory
 * traffic), and streaming each tile's short pieces straight out is slower still (Zen 3,
 * 4096x4096 float32: 43 against 17 ms). Source rows are prefetched a few rows ahead
 * (LZB_TRANSPOSE_PREFETCH_ROWS). Zen 3, 64 MiB transposes, medians of 15, staged against
 * tiles straight out: 1.3x-1.6x faster for items of 1 to 16 bytes, on 1 and 2 threads
 * (benchmarks/RESULTS.md, "Streamed transposes"). Returns 0 (nothing done) for items of
 * other sizes or without SSE2. */
static inline int lzb_transpose_staged(const char *src, Py_ssize_t sb, char *dst,
                                       Py_ssize_t da, Py_ssize_t ni, Py_ssize_t nj,
                                       Py_ssize_t size, Py_ssize_t tile, char *stage,
                                       Py_ssize_t cols) {
#if defined(LZB_SSE2)
    char *buf = stage, *block = stage + tile * tile * size;
    Py_ssize_t i0, j0, j, q, r, ti, tc, tj, x;
    if (size != 1 && size != 2 && size != 4 && size != 8 && size != 16)
        return 0;
    for (i0 = 0; i0 < ni; i0 += tile) {
        ti = ni - i0 < tile ? ni - i0 : tile;
        for (j0 = 0; j0 < nj; j0 += cols) {
            tc = nj - j0 < cols ? nj - j0 : cols;
            for (j = j0; j < j0 + tc; j += tile) {
                tj = j0 + tc - j < tile ? j0 + tc - j : tile;
                for (q = 0; q < tj; q++) {
                    const char *row = src + i0 * size + (j + q) * sb, *next = NULL;
                    Py_ssize_t ahead = j + q + LZB_TRANSPOSE_PREFETCH_ROWS;
                    if (ahead < nj)  /* a row of this band, or the next band's first rows */
                        next = row + LZB_TRANSPOSE_PREFETCH_ROWS * sb;
                    else if (i0 + tile < ni)
                        next = src + (i0 + tile) * size + (ahead - nj) * sb;
                    if (next != NULL)
                        for (x = 0; x < ti * size; x += 64)
                            _mm_prefetch(next + x, _MM_HINT_T1);
                    memcpy(buf + q * ti * size, row, (size_t)(ti * size));
                }
                lzb_scatter_transposed(buf, ti, tj, block + (j - j0) * size, cols * size,
                                       size, 0);
            }
            for (r = 0; r < ti; r++)
                lzb_stream_copy(dst + (i0 + r) * da + j0 * size, block + r * cols * size,
                                (size_t)(tc * size));
        }
    }
    return 1;
#else
    (void)src; (void)sb; (void)dst; (void)da; (void)ni; (void)nj; (void)size; (void)tile;
    (void)stage; (void)cols;
    return 0;
#endif
}

#endif /* LAZYBCAST_KERNELS_SIMD_TILES_H */
