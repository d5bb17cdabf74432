/* The vector building blocks of lazybcast/_kernels.pyx.
 *
 * Each helper moves bytes its caller has already validated; none of them allocates or fails.
 * On x86-64 they use SSE2 (part of x86-64, so compiled in), and SSSE3 byte shuffles and AVX2
 * stores when the CPU has them (asked at run time with GCC or clang, so one wheel serves
 * every x86-64 CPU). Without SSE2 (other architectures) the helpers that return int return 0
 * ("not done here") and the caller's portable loop does the work. The only state is the CPU
 * answer and the shuffle masks, both set up by lzb_kernels_init() at import.
 *
 * Contents:
 *   lzb_stream_copy, lzb_stream_fill, lzb_stream_pattern, lzb_stream_fence: non-temporal
 *   copy, fill with a byte and fill with an item;
 *   lzb_fill_rows: rows of one repeated item, with overlapping word or vector stores;
 *   lzb_reverse: reversed runs;
 *   lzb_channels: interleave and deinterleave 2 to 4 channels (CHW <-> HWC);
 *   lzb_scatter_transposed: the write-out of a transposing tile, as register transposes;
 *   lzb_all_zero.
 */
#ifndef LAZYBCAST_KERNELS_SIMD_H
#define LAZYBCAST_KERNELS_SIMD_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct { unsigned char b[16]; } lzb_bytes16;

/* For the helpers called with constant sizes: inlined, so that the constants propagate. */
#if defined(__GNUC__) || defined(__clang__)
#define LZB_INLINE static inline __attribute__((always_inline))
#else
#define LZB_INLINE static inline
#endif

/* MSVC does not define __SSE2__, but every x86-64 target (and /arch:SSE2 on x86) has it. */
#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define LZB_SSE2 1
#endif

#if defined(LZB_SSE2) && (defined(__GNUC__) || defined(__clang__)) && \
    (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define LZB_X86_DISPATCH 1
/* Which extensions beyond SSE2 does this CPU have: bit 0 SSSE3, bit 1 AVX2. Asked by
   lzb_kernels_init() at import, under the GIL; after that only read (the test hook
   lzb_cpu_limit() rewrites it, also under the GIL, between copies). */
static int lzb_cpu_state = -1;
static inline int lzb_cpu(void) {
    if (lzb_cpu_state < 0) {
        __builtin_cpu_init();
        lzb_cpu_state = (__builtin_cpu_supports("ssse3") ? 1 : 0)
                        | (__builtin_cpu_supports("avx2") ? 2 : 0);
    }
    return lzb_cpu_state;
}
static int lzb_masks_ready = 0;  /* set by lzb_simd_init() */
#define lzb_has_ssse3() (lzb_cpu() & 1)
#define lzb_has_avx2() (lzb_cpu() & 2)
#endif

/* Test hook: use only the extensions in mask (bits as above), or all the CPU has for a
   negative mask; returns the extensions in use (0 without run-time dispatch). */
static inline int lzb_cpu_limit(int mask) {
#if defined(LZB_X86_DISPATCH)
    lzb_cpu_state = -1;
    if (mask >= 0)
        lzb_cpu_state = lzb_cpu() & mask;
    return lzb_cpu();
#else
    (void)mask;
    return 0;
#endif
}

/* The extensions in use (bits as above) and, bit 2, SSE2 (compiled in, not chosen). */
static inline int lzb_cpu_in_use(void) {
    int bits = 0;
#if defined(LZB_X86_DISPATCH)
    bits = lzb_cpu();
#endif
#if defined(LZB_SSE2)
    bits |= 4;
#endif
    return bits;
}

/* Copy n bytes; on x86-64 the bulk goes out with non-temporal stores, which skip the
   read-for-ownership of every destination line (the buffers must not overlap). */
static inline void lzb_stream_copy(char *dst, const char *src, size_t n) {
#if defined(LZB_SSE2)
    if (n >= 256) {
        size_t head = (16 - ((size_t)dst & 15)) & 15, i, blocks;
        memcpy(dst, src, head);
        dst += head; src += head; n -= head;
        blocks = n / 64;
        for (i = 0; i < blocks; i++) {
            __m128i a = _mm_loadu_si128((const __m128i *)src);
            __m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(src + 32));
            __m128i d = _mm_loadu_si128((const __m128i *)(src + 48));
            _mm_stream_si128((__m128i *)dst, a);
            _mm_stream_si128((__m128i *)(dst + 16), b);
            _mm_stream_si128((__m128i *)(dst + 32), c);
            _mm_stream_si128((__m128i *)(dst + 48), d);
            src += 64; dst += 64;
        }
        n &= 63;
    }
#endif
    memcpy(dst, src, n);
}

/* memset, the bulk with non-temporal stores (x86-64). */
static inline void lzb_stream_fill(char *dst, int byte, size_t n) {
#if defined(LZB_SSE2)
    if (n >= 256) {
        size_t head = (16 - ((size_t)dst & 15)) & 15, i, blocks;
        __m128i v = _mm_set1_epi8((char)byte);
        memset(dst, byte, head);
        dst += head; n -= head;
        blocks = n / 64;
        for (i = 0; i < blocks; i++) {
            _mm_stream_si128((__m128i *)dst, v);
            _mm_stream_si128((__m128i *)(dst + 16), v);
            _mm_stream_si128((__m128i *)(dst + 32), v);
            _mm_stream_si128((__m128i *)(dst + 48), v);
            dst += 64;
        }
        n &= 63;
    }
#endif
    memset(dst, byte, n);
}

/* A run of len bytes at dst, all copies of the item at item (1, 2, 4, 8 or 16 bytes), with
   non-temporal 16-byte stores (a large output): a vector broadcast of the item, never a copy
   of the output onto itself. Returns 0 ("not done here") for other sizes, for short runs,
   for a dst that is not a multiple of the item size (the aligned stores would be out of
   phase with the items) and without SSE2. */
static inline int lzb_stream_pattern(char *dst, const char *item, Py_ssize_t size,
                                     Py_ssize_t len) {
#if defined(LZB_SSE2)
    Py_ssize_t o;
    __m128i v;
    if ((size & (size - 1)) != 0 || size > 16 || len < 128 || ((size_t)dst & (size_t)(size - 1)))
        return 0;
    if (size == 16) {
        v = _mm_loadu_si128((const __m128i *)item);
    } else {
        uint64_t q = 0;
        switch (size) {
        case 1: { uint8_t b; memcpy(&b, item, 1); q = b * UINT64_C(0x0101010101010101); break; }
        case 2: { uint16_t h; memcpy(&h, item, 2); q = h * UINT64_C(0x0001000100010001); break; }
        case 4: { uint32_t w; memcpy(&w, item, 4); q = w * UINT64_C(0x0000000100000001); break; }
        default: memcpy(&q, item, 8); break;
        }
        v = _mm_set1_epi64x((long long)q);
    }
    _mm_storeu_si128((__m128i *)dst, v);
    o = (Py_ssize_t)((16 - ((size_t)dst & 15)) & 15);  /* a multiple of size */
    for (; o + 64 <= len; o += 64) {
        _mm_stream_si128((__m128i *)(dst + o), v);
        _mm_stream_si128((__m128i *)(dst + o + 16), v);
        _mm_stream_si128((__m128i *)(dst + o + 32), v);
        _mm_stream_si128((__m128i *)(dst + o + 48), v);
    }
    for (; o + 16 <= len; o += 16)
        _mm_storeu_si128((__m128i *)(dst + o), v);
    if (o < len)
        _mm_storeu_si128((__m128i *)(dst + len - 16), v);
    return 1;
#else
    (void)dst; (void)item; (void)size; (void)len;
    return 0;
#endif
}

/* Make non-temporal stores visible before anyone reads the output. */
static inline void lzb_stream_fence(void) {
#if defined(LZB_SSE2)
    _mm_sfence();
#endif
}

static inline int lzb_all_zero(const char *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) if (p[i]) return 0;
    return 1;
}

/* ---- Rows of one repeated item --------------------------------------------------------
 * Row i is the len bytes at dst + i * dstep, all copies of the item at src + i * sstep
 * (size 1, 2, 4, 8 or 16 bytes; len a multiple of size, at least size). A word or vector
 * holding the item repeated is stored at 0, W, 2W, ... and a last time at len - W,
 * overlapping the one before: every store starts at a multiple of the item size (W is one)
 * and ends inside the row, so a row of any length takes a few stores and no loop tail. The
 * choice of store width is made once per call, not per row. */

/* The item at p (1, 2, 4 or 8 bytes) repeated over 8 bytes. */
LZB_INLINE uint64_t lzb_repeat64(const char *p, Py_ssize_t size) {
    uint8_t b; uint16_t h; uint32_t w; uint64_t q;
    switch (size) {
    case 1: memcpy(&b, p, 1); return b * UINT64_C(0x0101010101010101);
    case 2: memcpy(&h, p, 2); return h * UINT64_C(0x0001000100010001);
    case 4: memcpy(&w, p, 4); return w * UINT64_C(0x0000000100000001);
    default: memcpy(&q, p, 8); return q;
    }
}

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

#if defined(LZB_SSE2)
LZB_INLINE __m128i lzb_splat128(const char *item, Py_ssize_t size) {
    if (size == 16)
        return _mm_loadu_si128((const __m128i *)item);
    return _mm_set1_epi64x((long long)lzb_repeat64(item, size));
}
#endif

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

static inline int lzb_fill_rows(char *dst, Py_ssize_t dstep, const char *src, Py_ssize_t sstep,
                                Py_ssize_t n, Py_ssize_t size, Py_ssize_t len) {
#if defined(LZB_SSE2)
    if ((size & (size - 1)) != 0 || size > 16 || len < size)
        return 0;
#if defined(LZB_X86_DISPATCH)
    /* Measured (C loop, ns per row, every row length below 64 bytes): shuffles win for
       rows of up to 24 bytes of 1-byte items (1 byte: 0.03 against 0.23; 16 bytes: 0.25
       against 0.38), 48 bytes of 2-byte items and 20 bytes of 4-byte items; per-row stores
       win above that (63 bytes: 0.95 against 0.65) and for 8-byte items. */
    if (len <= (size == 1 ? 24 : size == 2 ? 48 : size == 4 ? 20 : 0) && dstep == len
            && sstep == size && n >= 32 / size && lzb_has_ssse3()) {
        Py_ssize_t done = lzb_repeat_packed_ssse3(dst, src, n, size, len);
        dst += done * dstep;
        src += done * sstep;
        n -= done;
    }
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

/* ---- Reversed runs ---------------------------------------------------------------------
 * lzb_reverse(dst, src, n, size): dst[j * size] = src[-j * size] for j < n (src points at
 * the first item to copy, the run goes down from it), 16 bytes at a time reversed in a
 * register for items of 1, 2, 4 and 8 bytes. Returns 0 (nothing done) for other sizes or
 * without SSE2. (Measured on 16 kB rows: 8x a byte loop for 1-byte items, 1.7x for 2-byte
 * ones; for 4- and 8-byte items the compiler already vectorizes the loop as well.) */

#if defined(LZB_SSE2)
LZB_INLINE __m128i lzb_reverse128(__m128i x, Py_ssize_t size) {
    if (size == 8)
        return _mm_shuffle_epi32(x, 0x4E);
    if (size == 4)
        return _mm_shuffle_epi32(x, 0x1B);
    x = _mm_shuffle_epi32(_mm_shufflehi_epi16(_mm_shufflelo_epi16(x, 0x1B), 0x1B), 0x4E);
    if (size == 2)
        return x;
    return _mm_or_si128(_mm_slli_epi16(x, 8), _mm_srli_epi16(x, 8));  /* bytes in pairs */
}

LZB_INLINE void lzb_reverse_sized(char *dst, const char *src, Py_ssize_t n,
                                     Py_ssize_t size) {
    Py_ssize_t b = 16 / size, j;
    for (j = 0; j + b <= n; j += b) {
        __m128i x = _mm_loadu_si128((const __m128i *)(src - (j + b - 1) * size));
        _mm_storeu_si128((__m128i *)(dst + j * size), lzb_reverse128(x, size));
    }
    for (; j < n; j++)
        memcpy(dst + j * size, src - j * size, (size_t)size);
}
#endif

static inline int lzb_reverse(char *dst, const char *src, Py_ssize_t n, Py_ssize_t size) {
#if defined(LZB_SSE2)
    switch (size) {
    case 1: lzb_reverse_sized(dst, src, n, 1); return 1;
    case 2: lzb_reverse_sized(dst, src, n, 2); return 1;
    case 4: lzb_reverse_sized(dst, src, n, 4); return 1;
    case 8: lzb_reverse_sized(dst, src, n, 8); return 1;
    default: return 0;
    }
#else
    (void)dst; (void)src; (void)n; (void)size;
    return 0;
#endif
}

/* ---- Channels: interleave and deinterleave ----------------------------------------------
 * The transposes with a short side: c = 2, 3 or 4 channels of items of 1, 2 or 4 bytes
 * (image layouts CHW <-> HWC). lzb_channels(dst, dplane, src, splane, n, c, size, interleave):
 *   interleave:   dst[(i * c + j) * size] = src[j * splane + i * size]
 *   deinterleave: dst[j * dplane + i * size] = src[(i * c + j) * size]
 * for i < n pixels, j < c channels. A group of 16 / size pixels is c vectors on each side.
 * Interleaving 2 or 4 channels is unpacks (SSE2); otherwise every output vector is the OR of
 * c byte shuffles, one per input vector (SSSE3). Without SSSE3, 3 channels interleave pixel
 * by pixel and deinterleaving returns 0 (nothing done), as it does for other shapes. */

#if defined(LZB_X86_DISPATCH)
/* mask[o * c + k]: the bytes of output vector o that come from input vector k, 0x80 (zero)
   elsewhere. Interleave: output byte g is byte g % size of pixel g / size / c, channel
   g / size % c, i.e. input vector (channel) k at index pixel * size + g % size.
   Deinterleave: output vector o is channel o; its byte b is pixel b / size, whose byte
   g = ((b / size) * c + o) * size + b % size of the interleaved input is in vector g / 16. */
static void lzb_channel_masks(__m128i *mask, Py_ssize_t c, Py_ssize_t size,
                                     int interleave) {
    unsigned char m[16];
    Py_ssize_t o, k, b, g, from, at;
    for (o = 0; o < c; o++) {
        for (k = 0; k < c; k++) {
            for (b = 0; b < 16; b++) {
                if (interleave) {
                    g = 16 * o + b;
                    from = g / size % c;
                    at = g / size / c * size + g % size;
                } else {
                    g = ((b / size) * c + o) * size + b % size;
                    from = g / 16;
                    at = g % 16;
                }
                m[b] = (unsigned char)(from == k ? at : 0x80);
            }
            mask[o * c + k] = _mm_loadu_si128((const __m128i *)m);
        }
    }
}

/* [interleave][c - 2][log2 size]: the c * c masks, built by lzb_simd_init(). */
static __m128i lzb_channel_table[2][3][3][16];

/* The group loop for constant c and direction (inlined into each case below). */
#define LZB_CHANNEL_GROUPS(C, INTERLEAVE)                                                   \
    for (i = 0; i + per <= n; i += per) {                                                   \
        for (k = 0; k < (C); k++)                                                           \
            in[k] = _mm_loadu_si128((const __m128i *)((INTERLEAVE)                          \
                ? src + k * splane + i * size : src + i * (C) * size + 16 * k));            \
        for (o = 0; o < (C); o++) {                                                         \
            out = _mm_shuffle_epi8(in[0], mask[o * (C)]);                                   \
            for (k = 1; k < (C); k++)                                                       \
                out = _mm_or_si128(out, _mm_shuffle_epi8(in[k], mask[o * (C) + k]));        \
            _mm_storeu_si128((__m128i *)((INTERLEAVE)                                       \
                ? dst + i * (C) * size + 16 * o : dst + o * dplane + i * size), out);       \
        }                                                                                   \
    }

__attribute__((target("ssse3")))
static Py_ssize_t lzb_channels_ssse3(char *dst, Py_ssize_t dplane, const char *src,
                                     Py_ssize_t splane, Py_ssize_t n, Py_ssize_t c,
                                     Py_ssize_t size, int interleave) {
    const __m128i *mask = lzb_channel_table[interleave != 0][c - 2][lzb_log2_size(size)];
    __m128i in[4], out;
    Py_ssize_t per = 16 / size, i = 0, o, k;
    if (!lzb_masks_ready)
        return 0;
    switch (c * 2 + (interleave != 0)) {
    case 4: LZB_CHANNEL_GROUPS(2, 0) break;
    case 5: LZB_CHANNEL_GROUPS(2, 1) break;
    case 6: LZB_CHANNEL_GROUPS(3, 0) break;
    case 7: LZB_CHANNEL_GROUPS(3, 1) break;
    case 8: LZB_CHANNEL_GROUPS(4, 0) break;
    default: LZB_CHANNEL_GROUPS(4, 1) break;
    }
    return i;
}
#endif

#if defined(LZB_SSE2)
/* Interleave 2 or 4 channels (SSE2): unpacks of the items, then (4 channels) of the pairs. */
LZB_INLINE __m128i lzb_unpack(__m128i a, __m128i b, Py_ssize_t bytes, int high) {
    switch (bytes) {
    case 1: return high ? _mm_unpackhi_epi8(a, b) : _mm_unpacklo_epi8(a, b);
    case 2: return high ? _mm_unpackhi_epi16(a, b) : _mm_unpacklo_epi16(a, b);
    case 4: return high ? _mm_unpackhi_epi32(a, b) : _mm_unpacklo_epi32(a, b);
    default: return high ? _mm_unpackhi_epi64(a, b) : _mm_unpacklo_epi64(a, b);
    }
}

LZB_INLINE Py_ssize_t lzb_interleave_unpack(char *dst, const char *src, Py_ssize_t splane,
                                               Py_ssize_t n, Py_ssize_t c, Py_ssize_t size) {
    Py_ssize_t per = 16 / size, i;
    __m128i v[4], t[4];
    for (i = 0; i + per <= n; i += per) {
        __m128i *q = (__m128i *)(dst + i * c * size);
        v[0] = _mm_loadu_si128((const __m128i *)(src + i * size));
        v[1] = _mm_loadu_si128((const __m128i *)(src + splane + i * size));
        if (c == 2) {
            _mm_storeu_si128(q, lzb_unpack(v[0], v[1], size, 0));
            _mm_storeu_si128(q + 1, lzb_unpack(v[0], v[1], size, 1));
            continue;
        }
        v[2] = _mm_loadu_si128((const __m128i *)(src + 2 * splane + i * size));
        v[3] = _mm_loadu_si128((const __m128i *)(src + 3 * splane + i * size));
        t[0] = lzb_unpack(v[0], v[1], size, 0);
        t[1] = lzb_unpack(v[0], v[1], size, 1);
        t[2] = lzb_unpack(v[2], v[3], size, 0);
        t[3] = lzb_unpack(v[2], v[3], size, 1);
        _mm_storeu_si128(q, lzb_unpack(t[0], t[2], 2 * size, 0));
        _mm_storeu_si128(q + 1, lzb_unpack(t[0], t[2], 2 * size, 1));
        _mm_storeu_si128(q + 2, lzb_unpack(t[1], t[3], 2 * size, 0));
        _mm_storeu_si128(q + 3, lzb_unpack(t[1], t[3], 2 * size, 1));
    }
    return i;
}
#endif

#if defined(LZB_X86_DISPATCH)
/* Build the shuffle masks (the kernels' only state besides lzb_cpu_state). Called once
   when the module is imported, before any kernel can run; until then the shuffle kernels
   return 0 and their callers take the other paths. */
static void lzb_simd_init(void) {
    Py_ssize_t used = 0, k, c, sz;
    int lg, dir;
    lzb_cpu();
    for (lg = 0; lg < 3; lg++) {
        sz = (Py_ssize_t)1 << lg;
        /* rows of up to 24 items of 1, 2 or 4 bytes (see lzb_fill_rows) */
        for (k = 1; k < LZB_REPEAT_KMAX; k++) {
            if (used + k > (Py_ssize_t)(sizeof(lzb_repeat_pool) / sizeof(__m128i)))
                break;
            lzb_repeat_build(lzb_repeat_pool + used, sz, k);
            lzb_repeat_masks[lg][k] = lzb_repeat_pool + used;
            used += k;
        }
    }
    for (dir = 0; dir < 2; dir++)
        for (c = 2; c <= 4; c++)
            for (lg = 0; lg < 3; lg++)
                lzb_channel_masks(lzb_channel_table[dir][c - 2][lg], c, (Py_ssize_t)1 << lg,
                                  dir);
    lzb_masks_ready = 1;
}
#endif

/* The module's one-time set-up (nothing to do without the shuffle kernels). */
static inline void lzb_kernels_init(void) {
#if defined(LZB_X86_DISPATCH)
    lzb_simd_init();
#endif
}

#if defined(LZB_SSE2)
/* Deinterleave 3 channels of 4-byte items (SSE2): 4 pixels are 3 vectors a, b, c =
   [r0 g0 b0 r1] [g1 b1 r2 g2] [b2 r3 g3 b3]; five float shuffles make the 3 planes' vectors
   (byte shuffles take 9 shuffles and 6 ORs). */
#define LZB_SH(x, y, i0, i1, i2, i3) _mm_shuffle_ps((x), (y), _MM_SHUFFLE(i3, i2, i1, i0))
LZB_INLINE Py_ssize_t lzb_deinterleave3x4(char *dst, Py_ssize_t dplane, const char *src,
                                          Py_ssize_t n) {
    Py_ssize_t i;
    for (i = 0; i + 4 <= n; i += 4) {
        const float *p = (const float *)(src + i * 12);
        __m128 a = _mm_loadu_ps(p), b = _mm_loadu_ps(p + 4), c = _mm_loadu_ps(p + 8);
        __m128 bc = LZB_SH(b, c, 2, 3, 1, 2);   /* b2 b3 c1 c2 */
        __m128 ab = LZB_SH(a, b, 1, 2, 0, 1);   /* a1 a2 b0 b1 */
        _mm_storeu_ps((float *)(dst + i * 4), LZB_SH(a, bc, 0, 3, 0, 2));
        _mm_storeu_ps((float *)(dst + dplane + i * 4), LZB_SH(ab, bc, 0, 2, 1, 3));
        _mm_storeu_ps((float *)(dst + 2 * dplane + i * 4), LZB_SH(ab, c, 1, 3, 0, 3));
    }
    return i;
}
#undef LZB_SH
#endif

/* Pixel by pixel: one pass over both buffers (for interleave: over the c planes at once). */
LZB_INLINE void lzb_channels_sized(char *dst, Py_ssize_t dplane, const char *src,
                                      Py_ssize_t splane, Py_ssize_t i, Py_ssize_t n,
                                      Py_ssize_t c, Py_ssize_t size, int interleave) {
    Py_ssize_t j;
    for (; i < n; i++)
        for (j = 0; j < c; j++) {
            if (interleave)
                memcpy(dst + (i * c + j) * size, src + j * splane + i * size, (size_t)size);
            else
                memcpy(dst + j * dplane + i * size, src + (i * c + j) * size, (size_t)size);
        }
}

static inline int lzb_channels(char *dst, Py_ssize_t dplane, const char *src,
                               Py_ssize_t splane, Py_ssize_t n, Py_ssize_t c, Py_ssize_t size,
                               int interleave) {
    Py_ssize_t i = 0;
    if (c < 2 || c > 4 || (size != 1 && size != 2 && size != 4))
        return 0;
    /* Measured on 512 x 512 images (best of 60, against NumPy's copy of the same view):
       unpacks interleave 2 or 4 channels 7x-75x faster; 3 channels interleave 5x-25x faster
       (byte shuffles, or the pixel loop below: 5x-6x); byte shuffles deinterleave 1.5x-10x
       faster, and float shuffles deinterleave 3 float32 channels 3.1x faster. Without
       SSSE3 the other deinterleaves are left to the caller's strided loop (as fast as any
       scalar loop tried, about NumPy's speed). */
#if defined(LZB_SSE2)
    if (!interleave && c == 3 && size == 4) {
        i = lzb_deinterleave3x4(dst, dplane, src, n);
    } else if (interleave && c != 3) {
        switch (size) {
        case 1: i = lzb_interleave_unpack(dst, src, splane, n, c, 1); break;
        case 2: i = lzb_interleave_unpack(dst, src, splane, n, c, 2); break;
        default: i = lzb_interleave_unpack(dst, src, splane, n, c, 4); break;
        }
    } else
#endif
#if defined(LZB_X86_DISPATCH)
    if (lzb_has_ssse3())
        i = lzb_channels_ssse3(dst, dplane, src, splane, n, c, size, interleave);
    else
#endif
    if (!interleave)
        return 0;
    /* the pixel loop for constant c and size (a loop over c items costs 2x-3x) */
#define LZB_PIXELS(C, S) lzb_channels_sized(dst, dplane, src, splane, i, n, C, S, interleave)
    switch (c * 8 + size) {
    case 17: LZB_PIXELS(2, 1); break;
    case 18: LZB_PIXELS(2, 2); break;
    case 20: LZB_PIXELS(2, 4); break;
    case 25: LZB_PIXELS(3, 1); break;
    case 26: LZB_PIXELS(3, 2); break;
    case 28: LZB_PIXELS(3, 4); break;
    case 33: LZB_PIXELS(4, 1); break;
    case 34: LZB_PIXELS(4, 2); break;
    default: LZB_PIXELS(4, 4); break;
    }
#undef LZB_PIXELS
    return 1;
}

/* ---- Transposing tiles ----------------------------------------------------------------
 * lzb_scatter_transposed(buf, ni, nj, dst, da, size, stream):
 *   dst[i * da + j * size] = buf[(j * ni + i) * size] for i < ni, j < nj,
 * in square blocks of B x B items transposed in registers (B = 16 / size: 16x16 bytes,
 * 8x8 two-byte, 4x4 four-byte, 2x2 eight-byte items), the edges item by item. With stream
 * set and 16-byte aligned rows the blocks are written with non-temporal stores. Returns 0
 * (nothing done) for other item sizes or without SSE2. */

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
    default: return 0;
    }
#else
    (void)buf; (void)ni; (void)nj; (void)dst; (void)da; (void)size; (void)stream;
    return 0;
#endif
}

#endif /* LAZYBCAST_KERNELS_SIMD_H */
