/* Rows of one repeated item, the fill kernel of lazybcast/_kernels.pyx, built on
 * _kernels_simd.h: every one-item fill of 1, 2, 4, 8 or 16 bytes goes through lzb_fill_rows
 * (rows of a broadcast column, (N, 1) -> (N, k), whole outputs of one scalar); items of 3,
 * 5-7 or 9-15 bytes go through lzb_fill_odd_rows, in _kernels_simd_fill_odd.h.
 *
 * Contents:
 *   lzb_fill_rows: the entry; it picks, once per call,
 *   - packed rows (row i holds item i only) through the kernels of _kernels_simd_packed.h:
 *     rows of 64-128 bytes, 0 or 16 bytes into a 32-byte unit: one broadcast and
 *     aligned stores per row (lzb_repeat_rows_avx2);
 *   - many short packed rows (np.repeat), with 32-byte aligned stores: 32-bit word
 *     permutes of 32 source bytes for 4- and 8-byte items, byte shuffles of 16 source bytes
 *     for rows of up to 6 items of 1 or 2 bytes (lzb_repeat_packed_avx2, its index vectors
 *     built per call); for longer rows, or without AVX2, byte shuffles of 16 source bytes at
 *     a time for 1- to 4-byte items with 16-byte stores (lzb_repeat_packed_ssse3, its masks
 *     built at import by lzb_kernels_init, in _kernels_simd_layout.h);
 *   - `rep stosw` / `stosl` / `stosq` for rows from 2 kB on CPUs with ERMS;
 *   - overlapping word or vector stores (SSE2, AVX2) for the rest.
 */
#ifndef LAZYBCAST_KERNELS_SIMD_FILL_H
#define LAZYBCAST_KERNELS_SIMD_FILL_H

#include "_kernels_simd.h"
#include "_kernels_simd_packed.h"

/* ---- Rows of one repeated item --------------------------------------------------------
 * Row i is the len bytes at dst + i * dstep, all copies of the item at src + i * sstep
 * (size 1, 2, 4, 8 or 16 bytes; len a multiple of size, at least size). A word or vector
 * holding the item repeated is stored at 0, W, 2W, ... and a last time at len - W,
 * overlapping the one before: every store starts at a multiple of the item size (W is one)
 * and ends inside the row, so a row of any length takes a few stores and no loop tail. The
 * choice of store width is made once per call, not per row. */

/* Rows shorter than 16 bytes (so size <= 8): two stores of W bytes, at 0 and len - W
   (one store when len == W). */
#define LZB_SHORT_ROWS(W)                                                                 \
    for (i = 0; i < n; i++) {                                                             \
        uint64_t v = lzb_repeat64(src + i * sstep, size);                                 \
        char *d = dst + i * dstep;                                                        \
        memcpy(d, &v, W);                                                                 \
        if (len != W)                                                                     \
            memcpy(d + len - W, &v, W);                                                   \
    }

/* Rows of 16 to 64 bytes: K - 1 16-byte stores at 0, 16, .. and one at len - 16. */
#define LZB_VECTOR_ROWS(K)                                                                \
    for (i = 0; i < n; i++) {                                                             \
        __m128i v = lzb_splat128(src + i * sstep, size);                                  \
        char *d = dst + i * dstep;                                                        \
        int k;                                                                            \
        for (k = 0; k < K - 1; k++)                                                       \
            _mm_storeu_si128((__m128i *)(d + 16 * k), v);                                 \
        _mm_storeu_si128((__m128i *)(d + len - 16), v);                                   \
    }


#if defined(LZB_X86_DISPATCH)
/* Rows of 128 bytes or more: 32-byte stores, aligned to 32 bytes after the first when the
   row's address is a multiple of the item size, so that the aligned stores keep the item
   pattern in phase (unaligned 32-byte stores that straddle two cache lines cost more). */
__attribute__((target("avx2")))
static void lzb_fill_rows_avx2(char *dst, Py_ssize_t dstep, const char *src, Py_ssize_t sstep,
                               Py_ssize_t n, Py_ssize_t size, Py_ssize_t len) {
    Py_ssize_t i, o;
    for (i = 0; i < n; i++) {
        char *d = dst + i * dstep;
        __m256i v = _mm256_broadcastsi128_si256(lzb_splat128(src + i * sstep, size));
        _mm256_storeu_si256((__m256i *)d, v);
        o = ((size_t)d & (size_t)(size - 1)) ? 32 : (Py_ssize_t)((32 - ((size_t)d & 31)) & 31);
        for (; o + 32 < len; o += 32)
            _mm256_storeu_si256((__m256i *)(d + o), v);
        _mm256_storeu_si256((__m256i *)(d + len - 32), v);
    }
}
#endif

/* The per-row stores of lzb_fill_rows, inlined once per item size (a constant there). */
LZB_INLINE void lzb_fill_rows_sized(char *dst, Py_ssize_t dstep, const char *src,
                                       Py_ssize_t sstep, Py_ssize_t n, Py_ssize_t size,
                                       Py_ssize_t len) {
    Py_ssize_t i;
    if (len < 16) {  /* size <= 8 here */
        if (len >= 8) { LZB_SHORT_ROWS(8) }
        else if (len >= 4) { LZB_SHORT_ROWS(4) }
        else if (len >= 2) { LZB_SHORT_ROWS(2) }
        else { LZB_SHORT_ROWS(1) }
        return;
    }
#if defined(LZB_SSE2)
    if (len <= 16) { LZB_VECTOR_ROWS(1) }
    else if (len <= 32) { LZB_VECTOR_ROWS(2) }
    else if (len <= 48) { LZB_VECTOR_ROWS(3) }
    else if (len <= 64) { LZB_VECTOR_ROWS(4) }
    else {
        for (i = 0; i < n; i++) {
            __m128i v = lzb_splat128(src + i * sstep, size);
            char *d = dst + i * dstep;
            Py_ssize_t o;
            for (o = 0; o + 16 < len; o += 16)
                _mm_storeu_si128((__m128i *)(d + o), v);
            _mm_storeu_si128((__m128i *)(d + len - 16), v);
        }
    }
#endif
}

#if defined(LZB_X86_DISPATCH) && defined(__x86_64__)
/* Rows of one 2-, 4- or 8-byte item of at least this many bytes are `rep stos` fills on CPUs
   with ERMS: glibc's memset switches to `rep stosb` from the same 2 kB
   (__x86_rep_stosb_threshold). */
#define LZB_REP_STOS_MIN 2048

/* n rows (row i at dst + i * dstep, len bytes, a multiple of size) of the item at
   src + i * sstep, by `rep stosw` / `stosl` / `stosq`. With ERMS the string microcode writes
   whole cache lines without reading them first, as memset's `rep stosb` does; vector stores
   read each destination line for ownership, a third more traffic for an output that is not
   in L1. Zen 3, 4 MB in L3, best of 200 fills, three runs taking turns: `rep stosq` 57-75 us,
   memset 56-74 us, AVX2 stores 72-84 us (benchmarks/RESULTS.md, "Fills by rep stos"). */
static void lzb_fill_rows_stos(char *dst, Py_ssize_t dstep, const char *src,
                               Py_ssize_t sstep, Py_ssize_t n, Py_ssize_t size,
                               Py_ssize_t len) {
    Py_ssize_t i;
    for (i = 0; i < n; i++) {
        void *d = dst + i * dstep;
        size_t count = (size_t)(len / size);
        if (size == 8) {
            uint64_t v;
            memcpy(&v, src + i * sstep, 8);
            __asm__ volatile("rep stosq" : "+D"(d), "+c"(count) : "a"(v) : "memory");
        } else if (size == 4) {
            uint32_t v;
            memcpy(&v, src + i * sstep, 4);
            __asm__ volatile("rep stosl" : "+D"(d), "+c"(count) : "a"(v) : "memory");
        } else {
            uint16_t v;
            memcpy(&v, src + i * sstep, 2);
            __asm__ volatile("rep stosw" : "+D"(d), "+c"(count) : "a"(v) : "memory");
        }
    }
}
#endif

static inline int lzb_fill_rows(char *dst, Py_ssize_t dstep, const char *src, Py_ssize_t sstep,
                                Py_ssize_t n, Py_ssize_t size, Py_ssize_t len) {
#if defined(LZB_SSE2)
    if ((size & (size - 1)) != 0 || size > 16 || len < size)
        return 0;
#if defined(LZB_X86_DISPATCH)
    /* Measured (C loop, ns per row, every row length below 64 bytes): shuffles win for
       rows of up to 24 bytes of 1-byte items (1 byte: 0.03 against 0.23; 16 bytes: 0.25
       against 0.38), 48 bytes of 2-byte items and 20 bytes of 4-byte items; per-row stores
       win above that (63 bytes: 0.95 against 0.65) and for 8-byte items. Packed rows of
       4-, 8- and 16-byte items up to 128 bytes go first through AVX2: rows of 64, 96 or
       128 bytes 0 or 16 bytes into a 32-byte unit as broadcasts (lzb_repeat_rows_avx2),
       the others of 4 and 8 bytes through word permutes (Zen 3, (N, 1) -> (N, k), 0.3-4.8
       MB, interleaved best of 300 against the paths below: 1.03x-1.77x faster, k = 2 to
       24). Packed rows of up to 6 items of 1 or 2 bytes go through AVX2 byte shuffles
       first, with aligned stores (lzb_repeat_packed_avx2): Xeon VM, (N, 1) -> (N, k) of
       600 kB, best of 400, 2-5 runs taking turns against SSSE3 alone: k = 2-6 1.01x-1.45x
       faster (k = 4, both sizes: 13.3-13.4 -> 12.0-12.7 us), k = 7-10 mostly within 5%
       either way (one run of k = 7 15% faster), k = 12-24 slower (up to 1.3x). The AVX2
       kernel holds 12.0-12.7 us from k = 3 to 10 where SSSE3's time falls with k, its one
       load a group shared by more stores (benchmarks/RESULTS.md, "The reader in the
       suite"). */
    if (((size >= 4 && len <= 128) || len <= (size == 1 ? 6 : size == 2 ? 12 : 0))
            && dstep == len && sstep == size && n * len >= 4096 && lzb_has_avx2()) {
        Py_ssize_t done;
        if (lzb_repeat_rows_avx2(dst, src, n, size, len) == n)
            return 1;
        done = lzb_repeat_packed_avx2(dst, src, n, size, len);  /* (0 for 16-byte items) */
        dst += done * dstep;
        src += done * sstep;
        n -= done;
    }
    if (len <= (size == 1 ? 24 : size == 2 ? 48 : size == 4 ? 20 : 0) && dstep == len
            && sstep == size && n >= 32 / size && lzb_has_ssse3()) {
        Py_ssize_t done = lzb_repeat_packed_ssse3(dst, src, n, size, len);
        dst += done * dstep;
        src += done * sstep;
        n -= done;
    }
#if defined(__x86_64__)
    if (len >= LZB_REP_STOS_MIN && size >= 2 && size <= 8 && lzb_has_erms()) {
        lzb_fill_rows_stos(dst, dstep, src, sstep, n, size, len);
        return 1;
    }
#endif
    if (len >= 128 && lzb_has_avx2()) {
        lzb_fill_rows_avx2(dst, dstep, src, sstep, n, size, len);
        return 1;
    }
#endif
    switch (size) {
    case 1: lzb_fill_rows_sized(dst, dstep, src, sstep, n, 1, len); break;
    case 2: lzb_fill_rows_sized(dst, dstep, src, sstep, n, 2, len); break;
    case 4: lzb_fill_rows_sized(dst, dstep, src, sstep, n, 4, len); break;
    case 8: lzb_fill_rows_sized(dst, dstep, src, sstep, n, 8, len); break;
    default: lzb_fill_rows_sized(dst, dstep, src, sstep, n, 16, len); break;
    }
    return 1;
#else
    (void)dst; (void)dstep; (void)src; (void)sstep; (void)n; (void)size; (void)len;
    return 0;
#endif
}

#endif /* LAZYBCAST_KERNELS_SIMD_FILL_H */
