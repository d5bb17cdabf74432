/* Packed rows of one repeated item each, row i holding item i only ((N, 1) -> (N, k): that is
 * np.repeat), for lzb_fill_rows in _kernels_simd_fill.h, built on _kernels_simd.h.
 *
 * Contents:
 *   lzb_repeat_rows_avx2: rows of 64-128 bytes, a broadcast and aligned stores per row;
 *   lzb_repeat_packed_ssse3: rows of 1- to 4-byte items by byte shuffles with 16-byte stores
 *     (its masks, lzb_repeat_masks, built at import by lzb_kernels_init, in
 *     _kernels_simd_layout.h);
 *   lzb_repeat_packed_avx2: word permutes (4- and 8-byte items) or byte shuffles (1- and
 *     2-byte items) with 32-byte aligned stores.
 * Each returns the rows it wrote (from the first); the caller writes the rest.
 */
#ifndef LAZYBCAST_KERNELS_SIMD_PACKED_H
#define LAZYBCAST_KERNELS_SIMD_PACKED_H

#include "_kernels_simd.h"

#if defined(LZB_X86_DISPATCH)
/* A 4-, 8- or 16-byte item repeated over a 32-byte vector (one broadcast load). */
__attribute__((target("avx2")))
LZB_INLINE __m256i lzb_broadcast_item(const char *p, Py_ssize_t size) {
    if (size == 16)
        return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
    return size == 4 ? _mm256_castps_si256(_mm256_broadcast_ss((const float *)p))
                     : _mm256_castpd_si256(_mm256_broadcast_sd((const double *)p));
}

/* lzb_repeat_rows_avx2's loop, for a constant size and vecs (with both known at compile
   time it ran 22.4 us in the C model described there; with run-time counts, 44.6 us). */
__attribute__((target("avx2")))
LZB_INLINE void lzb_repeat_rows_sized(char *dst, const char *src, Py_ssize_t n,
                                      Py_ssize_t size, Py_ssize_t vecs, int phase) {
    Py_ssize_t len = 32 * vecs, i, j;
    __m256i b;
    char *q;
    if (phase == 0) {
        for (i = 0; i < n; i++) {
            b = lzb_broadcast_item(src + i * size, size);
            for (j = 0; j < vecs; j++)
                _mm256_store_si256((__m256i *)(dst + i * len + 32 * j), b);
        }
        return;
    }
    b = lzb_broadcast_item(src, size);
    _mm_store_si128((__m128i *)dst, _mm256_castsi256_si128(b));
    for (i = 0; i + 1 < n; i++) {
        __m256i next = lzb_broadcast_item(src + (i + 1) * size, size);
        q = dst + i * len + 16;
        for (j = 0; j < vecs - 1; j++)
            _mm256_store_si256((__m256i *)(q + 32 * j), b);
        _mm256_store_si256((__m256i *)(q + len - 32), _mm256_blend_epi32(b, next, 0xF0));
        b = next;
    }
    q = dst + i * len + 16;  /* the last row: its last 16 bytes end the output */
    for (j = 0; j < vecs - 1; j++)
        _mm256_store_si256((__m256i *)(q + 32 * j), b);
    _mm_store_si128((__m128i *)(q + len - 32), _mm256_castsi256_si128(b));
}

#define LZB_REPEAT_ROWS(SIZE, PHASE)                                                      \
    switch (vecs) {                                                                       \
    case 2: lzb_repeat_rows_sized(dst, src, n, SIZE, 2, PHASE); break;                    \
    case 3: lzb_repeat_rows_sized(dst, src, n, SIZE, 3, PHASE); break;                    \
    default: lzb_repeat_rows_sized(dst, src, n, SIZE, 4, PHASE); break;                   \
    }

/* Packed rows of whole 32-byte vectors (row i at dst + i * len, len = 64, 96 or 128,
   of the 4-, 8- or 16-byte item at src + i * size), the output 0 or 16 bytes into a 32-byte
   unit:
   one broadcast load per row and 32-byte aligned stores; 16 bytes in, the store across two
   rows blends the high half of the next row's vector in. No shuffles: the permutes of
   lzb_repeat_packed_avx2 (one per store) were the limit there. C model, 2 MiB of 64-byte
   rows of float32 (L3), Zen 4, memset 20.8 us: 22.3-22.7 us here at either offset;
   permutes 22.7 us aligned, 28.5 us 16 bytes in. In the library (32768 rows, 16 bytes in):
   64-byte rows of float32 31 -> 23.4 us, 96-byte 44 -> 33.7, 128-byte 57.5 -> 44.2, 64-byte
   rows of float64 32 -> 24.7; complex128 (per-row 16-byte stores before) 4 items a row
   36.5 -> 27.4 us, 6 items 90 -> 37.8, 8 items 99 -> 48.4; 32-byte rows lost (16 -> 18.6
   us: a load per store) and keep the permutes. Returns the rows written (all, or 0). */
__attribute__((target("avx2")))
static Py_ssize_t lzb_repeat_rows_avx2(char *dst, const char *src, Py_ssize_t n,
                                       Py_ssize_t size, Py_ssize_t len) {
    Py_ssize_t vecs = len / 32;
    size_t phase = (size_t)dst & 31;
    if ((size != 4 && size != 8 && size != 16) || len % 32 != 0 || vecs < 2 || vecs > 4
            || n < 1 || (phase != 0 && phase != 16))
        return 0;
    if (size == 4 && phase == 0) { LZB_REPEAT_ROWS(4, 0) }
    else if (size == 4) { LZB_REPEAT_ROWS(4, 16) }
    else if (size == 8 && phase == 0) { LZB_REPEAT_ROWS(8, 0) }
    else if (size == 8) { LZB_REPEAT_ROWS(8, 16) }
    else if (phase == 0) { LZB_REPEAT_ROWS(16, 0) }
    else { LZB_REPEAT_ROWS(16, 16) }
    return n;
}
#undef LZB_REPEAT_ROWS
#endif

#if defined(LZB_X86_DISPATCH)
/* Packed short rows (row i at dst + i * len, item i at src + i * size, size <= 4): that is
   np.repeat. Each 16 source bytes (16 / size items) become k = len / size output vectors,
   each one byte shuffle of those 16 bytes; the k masks come from the table that
   lzb_simd_init() built. Returns how many rows it wrote (whole groups of 16 / size), 0
   when the table has no masks for this row; the caller writes the rest. */
#define LZB_REPEAT_KMAX 25
static __m128i lzb_repeat_pool[3 * 24 * 25 / 2];  /* k masks for each k < 25, 3 sizes */
static const __m128i *lzb_repeat_masks[3][LZB_REPEAT_KMAX];  /* [log2 size][k] */

/* The masks of rows of k items of size bytes into mask[0 .. k-1]: output byte o of a group
   is byte o % size of item o / len (len = k * size). */
static void lzb_repeat_build(__m128i *mask, Py_ssize_t size, Py_ssize_t k) {
    unsigned char m[16];
    Py_ssize_t len = k * size, v, b, item = 0, byte = 0, inrow = 0;
    for (v = 0; v < k; v++) {
        for (b = 0; b < 16; b++) {
            m[b] = (unsigned char)(item * size + byte);
            if (++byte == size) byte = 0;
            if (++inrow == len) { inrow = 0; item++; }
        }
        mask[v] = _mm_loadu_si128((const __m128i *)m);
    }
}

static inline int lzb_log2_size(Py_ssize_t size) {
    return size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
}

__attribute__((target("ssse3")))
static Py_ssize_t lzb_repeat_packed_ssse3(char *dst, const char *src, Py_ssize_t n,
                                          Py_ssize_t size, Py_ssize_t len) {
    Py_ssize_t items = 16 / size, nv = len / size, groups = n / items, p, v;
    const __m128i *mask;
    if (size > 4 || nv >= LZB_REPEAT_KMAX)
        return 0;
    mask = lzb_repeat_masks[lzb_log2_size(size)][nv];
    if (mask == NULL)
        return 0;
    for (p = 0; p < groups; p++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(src + p * 16));
        __m128i *q = (__m128i *)(dst + p * 16 * nv);
        for (v = 0; v < nv; v++)
            _mm_storeu_si128(q + v, _mm_shuffle_epi8(x, mask[v]));
    }
    return groups * items;
}
#endif

#if defined(LZB_X86_DISPATCH)
/* Packed rows of 1-, 2-, 4- or 8-byte items (row i at dst + i * len, item i at src + i *
   size), k = len / size items a row (k <= 32): np.repeat by units of u bytes, 4 (32-bit
   words) for 4- and 8-byte items, 1 for 1- and 2-byte ones. Output unit w holds source unit
   lzb_repeat_unit(w). The stores are 32-byte aligned: the first `head` units (up to the
   output's first 32-byte boundary) and the units after the last whole group, up to a row's
   end, are copied one by one; in between, store v of group p (v < k) writes output units
   head + (32 / u) (k p + v) onward, one shuffle of a window of source units from base[v] +
   (32 / u) p: a vpermd of 8 words, or a vpshufb of 16 bytes loaded into both 128-bit lanes
   (vpshufb picks within a lane). Every k stores the output moves on by 32 / size rows and
   the source by 32 bytes. Unaligned 32-byte stores, 16 bytes into a line as NumPy's large
   arrays start, straddled a line every other store (measured in the note above
   lzb_repeat_rows_avx2, and on the Xeon VM in benchmarks/RESULTS.md: (32768, 1) ->
   (32768, k) float32 at 0.71-0.84 of memset; SSSE3's unaligned 16-byte stores left (N, 1)
   -> (N, 4) of 1- and 2-byte items at 0.80). Returns how many rows it wrote (from the
   first), 0 when this path does not apply (items of 4 or 8 bytes and an output not 4-byte
   aligned, a store whose source units would not fit in one window, or too few rows for one
   group); the caller writes the rest. Reads only source units below n * size / u and writes
   only output units of the rows it returns. */
static inline Py_ssize_t lzb_repeat_unit(Py_ssize_t w, Py_ssize_t row_units,
                                         Py_ssize_t units) {
    return (w / row_units) * units + w % units;
}

__attribute__((target("avx2")))
static Py_ssize_t lzb_repeat_packed_avx2(char *dst, const char *src, Py_ssize_t n,
                                         Py_ssize_t size, Py_ssize_t len) {
    __m256i idx[32];
    Py_ssize_t base[32];
    union { int32_t word[8]; unsigned char byte[32]; } lane;
    Py_ssize_t u = size >= 4 ? 4 : 1, per = 32 / u, window = u == 4 ? 8 : 16;
    Py_ssize_t units = size / u, k = len / size, ru, head, groups, p, v, t, w, stop, last;
    if ((size != 1 && size != 2 && size != 4 && size != 8) || k < 1 || k > 32
            || len != k * size || n < 1 || ((uintptr_t)dst & (u - 1)) != 0)
        return 0;
    ru = k * units;  /* output units a row */
    head = (Py_ssize_t)(((32 - ((uintptr_t)dst & 31)) & 31) / u);
    for (v = 0; v < k; v++) {
        w = head + per * v;
        base[v] = (w / ru) * units;  /* the first unit of the item of the store's first unit */
        for (t = 0; t < per; t++) {
            Py_ssize_t d = lzb_repeat_unit(w + t, ru, units) - base[v];
            if (d < 0 || d >= window)
                return 0;
            if (u == 4)
                lane.word[t] = (int32_t)d;
            else
                lane.byte[t] = (unsigned char)d;
        }
        idx[v] = _mm256_loadu_si256((const __m256i *)&lane);
    }
    /* Whole groups: every window inside the source's n * units units, every store inside
       the output's n * ru units (base[] grows with v). */
    if (n * units < base[k - 1] + window || n * ru < head + per * k)
        return 0;
    groups = (n * units - base[k - 1] - window) / per + 1;
    if (groups > (n * ru - head) / (per * k))
        groups = (n * ru - head) / (per * k);
    for (w = 0; w < head; w++)
        memcpy(dst + u * w, src + u * lzb_repeat_unit(w, ru, units), (size_t)u);
    if (u == 4) {
        for (p = 0; p < groups; p++) {
            char *q = dst + 4 * head + 32 * k * p;
            const char *s = src + 32 * p;
            for (v = 0; v < k; v++)
                _mm256_store_si256((__m256i *)(q + 32 * v),
                                   _mm256_permutevar8x32_epi32(
                                       _mm256_loadu_si256((const __m256i *)(s + 4 * base[v])),
                                       idx[v]));
        }
    } else {
        for (p = 0; p < groups; p++) {
            char *q = dst + head + 32 * k * p;
            const char *s = src + 32 * p;
            for (v = 0; v < k; v++)
                _mm256_store_si256((__m256i *)(q + 32 * v),
                                   _mm256_shuffle_epi8(
                                       _mm256_broadcastsi128_si256(
                                           _mm_loadu_si128((const __m128i *)(s + base[v]))),
                                       idx[v]));
        }
    }
    last = head + per * k * groups;  /* the units written so far; finish the row they end in */
    stop = (last + ru - 1) / ru * ru;
    for (w = last; w < stop; w++)
        memcpy(dst + u * w, src + u * lzb_repeat_unit(w, ru, units), (size_t)u);
    return stop / ru;
}
#endif

#endif /* LAZYBCAST_KERNELS_SIMD_PACKED_H */
