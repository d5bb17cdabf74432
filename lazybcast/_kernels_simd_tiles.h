/* The transposing tiles of lazybcast/_kernels.pyx (_kernels_tiles.pxi), built on
 * _kernels_simd.h.
 *
 * Contents:
 *   lzb_scatter_transposed: the write-out of a transposing tile, as register transposes;
 *   lzb_transpose_staged: a large transpose through a staging block, streamed out;
 *   lzb_transpose_rows: the same in the source's order, for rows that start on cache lines;
 *   lzb_stream_run: the non-temporal write-out of its short runs.
 */
#ifndef LAZYBCAST_KERNELS_SIMD_TILES_H
#define LAZYBCAST_KERNELS_SIMD_TILES_H

#include "_kernels_simd.h"

/* ---- Transposing tiles ----------------------------------------------------------------
 * lzb_scatter_transposed(buf, sr, ni, nj, dst, da, size, ahead, nahead):
 *   dst[i * da + j * size] = buf[j * sr + i * size] for i < ni, j < nj,
 * in square blocks of B x B items transposed in registers (B = 16 / size: 16x16 bytes,
 * 8x8 two-byte, 4x4 four-byte, 2x2 eight-byte items), the edges item by item; 16-byte items
 * are plain moves. buf is a tile in L1 (sr = ni * size) or the source itself. If `ahead` is
 * not NULL, the next rows to be read from memory (nahead rows sr apart, ni items each) are
 * prefetched alongside, a line of each as the rows of buf pass a line. Returns 0 (nothing
 * done) for other item sizes or without SSE2. */

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
LZB_INLINE void lzb_scatter_sized(const char *buf, Py_ssize_t sr, Py_ssize_t ni,
                                  Py_ssize_t nj, char *dst, Py_ssize_t da, Py_ssize_t size,
                                  const char *ahead, Py_ssize_t nahead) {
    Py_ssize_t i, j, k, b = 16 / size;
    __m128i r[16];
    for (i = 0; i + b <= ni; i += b) {
        if (ahead != NULL && ((i * size) & 63) == 0)
            for (k = 0; k < nahead; k++)
                _mm_prefetch(ahead + k * sr + i * size, _MM_HINT_T0);
        for (j = 0; j + b <= nj; j += b) {
            for (k = 0; k < b; k++)
                r[k] = _mm_loadu_si128((const __m128i *)(buf + (j + k) * sr + i * size));
            lzb_transpose128(r, size);
            for (k = 0; k < b; k++)
                _mm_storeu_si128((__m128i *)(dst + (i + k) * da + j * size), r[k]);
        }
        for (; j < nj; j++)
            for (k = i; k < i + b; k++)
                memcpy(dst + k * da + j * size, buf + j * sr + k * size, (size_t)size);
    }
    for (; i < ni; i++)
        for (j = 0; j < nj; j++)
            memcpy(dst + i * da + j * size, buf + j * sr + i * size, (size_t)size);
}
#endif

static inline int lzb_scatter_transposed(const char *buf, Py_ssize_t sr, Py_ssize_t ni,
                                         Py_ssize_t nj, char *dst, Py_ssize_t da,
                                         Py_ssize_t size, const char *ahead,
                                         Py_ssize_t nahead) {
#if defined(LZB_SSE2)
    switch (size) {
    case 1: lzb_scatter_sized(buf, sr, ni, nj, dst, da, 1, ahead, nahead); return 1;
    case 2: lzb_scatter_sized(buf, sr, ni, nj, dst, da, 2, ahead, nahead); return 1;
    case 4: lzb_scatter_sized(buf, sr, ni, nj, dst, da, 4, ahead, nahead); return 1;
    case 8: lzb_scatter_sized(buf, sr, ni, nj, dst, da, 8, ahead, nahead); return 1;
    case 16: {  /* one item per register: plain moves */
        Py_ssize_t i, j, k;
        for (i = 0; i < ni; i++) {
            if (ahead != NULL && (i & 3) == 0)
                for (k = 0; k < nahead; k++)
                    _mm_prefetch(ahead + k * sr + i * 16, _MM_HINT_T0);
            for (j = 0; j < nj; j++)
                _mm_storeu_si128((__m128i *)(dst + i * da + j * 16),
                                 _mm_loadu_si128((const __m128i *)(buf + j * sr + i * 16)));
        }
        return 1;
    }
    default: return 0;
    }
#else
    (void)buf; (void)sr; (void)ni; (void)nj; (void)dst; (void)da; (void)size; (void)ahead;
    (void)nahead;
    return 0;
#endif
}

/* lzb_stream_copy for the short runs of a staged transpose (256 bytes), with 32-byte
   non-temporal stores where the CPU has AVX2: half the stores of the 16-byte ones, which
   matters for short runs. Zen 4, 4096x4096 float32 in a C model of lzb_transpose_staged:
   9.7-10.9 ms with 16-byte stores, 7.9-8.0 ms with 32-byte ones (64-byte AVX-512 stores:
   8.0 ms, no better); the long runs of the previous order gained nothing (10.5-11.5 ms). */
#if defined(LZB_X86_DISPATCH)
__attribute__((target("avx2")))
static void lzb_stream_run_avx2(char *dst, const char *src, size_t n) {
    size_t head = (32 - ((size_t)dst & 31)) & 31, i, blocks;
    lzb_copy_short(dst, src, head);
    dst += head; src += head; n -= head;
    blocks = n / 64;
    for (i = 0; i < blocks; i++) {
        __m256i a = _mm256_loadu_si256((const __m256i *)src);
        __m256i b = _mm256_loadu_si256((const __m256i *)(src + 32));
        _mm256_stream_si256((__m256i *)dst, a);
        _mm256_stream_si256((__m256i *)(dst + 32), b);
        src += 64; dst += 64;
    }
    lzb_copy_short(dst, src, n & 63);
}
#endif

static inline void lzb_stream_run(char *dst, const char *src, size_t n) {
#if defined(LZB_X86_DISPATCH)
    if (n >= 256 && lzb_has_avx2()) {
        lzb_stream_run_avx2(dst, src, n);
        return;
    }
#endif
    lzb_stream_copy(dst, src, n);
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
                lzb_scatter_transposed(buf, ti * size, ti, tj, block + (j - j0) * size,
                                       cols * size, size, NULL, 0);
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

/* How many source rows lzb_transpose_rows reads at a time, along them (16 for bytes, the
   height of their register block). Zen 4, 64 MiB transposes, one thread, best of 5 x 5
   interleaved: float32 4096x4096 9.6-9.7 ms with 4 rows (its register block), 7.8-8.0 with
   8, 8.6 with 12, 10.8 with 16; float64 2896x2896 11.8 (2 rows), 9.4 (4), 7.7 (8), 8.2
   (16); complex128 2048x2048 12.7 (1), 9.0 (2), 7.2 (4), 6.4-7.8 (8), 8.9 (16); uint8
   8192x8192 13.6 with 16, 18.0 with 32. Eight sequential streams keep enough lines in
   flight; one or two leave the reads waiting on memory, and 16 or more are more than the
   prefetchers follow. Two-byte items take 16 rows, two of their 8 x 8 register blocks, so
   that each pass writes 32 bytes of every staging row, not 16: each staging line is then
   fetched into L1 twice instead of four times (Zen 4, one thread, best of 15 in five
   interleaved rounds: uint16 5792x5792 (64 MiB) 13.1-14.5 -> 11.1-12.0 ms; 2048x2048 and
   2080x2048 (8 MiB) within the host's noise, 0.8-2.1 ms either way; 32 rows lost on both;
   bytes with 32 rows: 8192x8192 13.3-17.0 -> 15.0-15.3 ms, so they keep 16). */
#define LZB_TRANSPOSE_STREAMS 8

/* lzb_transpose_rows(src, sb, dst, da, ni, nj, size, stage, rows, cols):
 *   dst[i * da + j * size] = src[i * size + j * sb] for i < ni, j < nj,
 * as lzb_transpose_staged, in the source's order: `cols` source rows at a time (cols * size
 * = 256 bytes, the output's runs), across them `rows` columns at a time. Each piece of
 * cols x rows items is transposed in registers straight from the source (a few rows at a
 * time: LZB_TRANSPOSE_STREAMS) into the staging block `stage` (rows x cols items, in L2),
 * whose rows are then written out with non-temporal stores (lzb_stream_run). The source is
 * read in order: 8 rows at a time (LZB_TRANSPOSE_STREAMS; 16 for bytes), along them `rows`
 * items at a time, then the next 8 (a job block holds whole source rows:
 * _tiles_in_source_order); the output is written once, in 256-byte runs that start on its
 * cache lines (the caller's condition: a run that starts inside a line writes two partial
 * lines, and 1448x1448 float32, whose rows start at every offset, took 7.5-7.9 ms instead
 * of 1.2-1.8 ms).
 * While one band of rows is read, the next (of this piece, or the next piece's first) is
 * prefetched into L1, a line of each of its rows as the band's rows pass a line: a band
 * ahead, 32 kB for float32. Zen 5 (family 26 model 2), 64 MiB transposes, one thread,
 * medians of 5 rounds' best of 15, without / with: uint8 8.46 / 7.14 ms, uint16 7.38 /
 * 4.85, float32 6.90 / 5.44, float64 6.62 / 5.17, complex128 5.49 / 4.85 (two threads: 5.06
 * / 4.42 ... 3.13 / 3.07); two bands ahead, or into L2, or non-temporal: float32 5.4-5.7
 * against 5.2-5.3 (benchmarks/RESULTS.md, "Transposes that prefetch their next band").
 * Why this order. Zen 4, 4096x4096 float32, one thread, a C model of both orders: reading
 * 256-byte pieces of every source row in turn (lzb_transpose_staged's order) took 7.1-8.2 ms
 * for the reads alone, whatever the prefetch distance, and pieces of 4-8 kB still 5.9-8.2
 * ms, against 2.0 ms for whole rows in order; non-temporal runs of 256 bytes write 64 MiB in
 * 2.6-2.7 ms (2.4 for long runs; 64-byte runs 4.9 ms). Measured in the library:
 * benchmarks/RESULTS.md, "Transposes in the source's order".
 * Returns 0 (nothing done) for items other than 1, 2, 4, 8 or 16 bytes or without SSE2. */
static inline int lzb_transpose_rows(const char *src, Py_ssize_t sb, char *dst,
                                     Py_ssize_t da, Py_ssize_t ni, Py_ssize_t nj,
                                     Py_ssize_t size, char *stage, Py_ssize_t rows,
                                     Py_ssize_t cols) {
#if defined(LZB_SSE2)
    Py_ssize_t i0, j0, j, r, ti, tj, nahead;
    Py_ssize_t band = size <= 2 ? 16 : LZB_TRANSPOSE_STREAMS;  /* (a multiple of 16 / size) */
    const char *ahead;
    if (size != 1 && size != 2 && size != 4 && size != 8 && size != 16)
        return 0;
    for (j0 = 0; j0 < nj; j0 += cols) {
        tj = nj - j0 < cols ? nj - j0 : cols;
        for (i0 = 0; i0 < ni; i0 += rows) {
            ti = ni - i0 < rows ? ni - i0 : rows;
            for (j = 0; j < tj; j += band) {
                /* the band after this one: of this piece, or the next piece's first if it
                   is as wide (none at the end of a piece's column of pieces) */
                ahead = NULL;
                nahead = 0;
                if (j + band < tj) {
                    ahead = src + i0 * size + (j0 + j + band) * sb;
                    nahead = tj - j - band < band ? tj - j - band : band;
                } else if (i0 + rows + ti <= ni) {
                    ahead = src + (i0 + rows) * size + j0 * sb;
                    nahead = tj < band ? tj : band;
                }
                lzb_scatter_transposed(src + i0 * size + (j0 + j) * sb, sb, ti,
                                       tj - j < band ? tj - j : band, stage + j * size,
                                       cols * size, size, ahead, nahead);
            }
            for (r = 0; r < ti; r++)
                lzb_stream_run(dst + (i0 + r) * da + j0 * size, stage + r * cols * size,
                               (size_t)(tj * size));
        }
    }
    return 1;
#else
    (void)src; (void)sb; (void)dst; (void)da; (void)ni; (void)nj; (void)size; (void)stage;
    (void)rows; (void)cols;
    return 0;
#endif
}

#endif /* LAZYBCAST_KERNELS_SIMD_TILES_H */
