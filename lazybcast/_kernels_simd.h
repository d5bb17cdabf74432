/* The vector building blocks of lazybcast/_kernels.pyx.
 *
 * Each helper moves bytes its caller has already validated; none of them allocates or fails.
 * On x86-64 they use SSE2 (part of x86-64, so compiled in), and SSSE3 byte shuffles and AVX2
 * stores when the CPU has them (asked at run time with GCC or clang, so one wheel serves
 * every x86-64 CPU). Without SSE2 (other architectures) the helpers that return int return 0
 * ("not done here") and the caller's portable loop does the work. The only state is the CPU
 * answer and the shuffle masks, both set up by lzb_kernels_init() (in _kernels_simd_layout.h,
 * with the channel and transpose kernels) at import.
 *
 * Contents:
 *   lzb_copy: memcpy, avoiding glibc's slow case on AMD (see there);
 *   lzb_stream_copy, lzb_stream_fill, lzb_stream_pattern, lzb_stream_fence: non-temporal
 *   copy, fill with a byte and fill with an item;
 *   lzb_fill_rows: rows of one repeated item, with overlapping word or vector stores, or
 *   `rep stos` for long rows on CPUs with ERMS;
 *   lzb_all_zero.
 * Reversed runs are in _kernels_simd_reverse.h.
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
#include <cpuid.h>
#define LZB_X86_DISPATCH 1
/* ERMS (enhanced rep movsb/stosb): CPUID leaf 7, EBX bit 9. */
static inline int lzb_cpuid_erms(void) {
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && ((b >> 9) & 1);
}
/* Which extensions beyond SSE2 does this CPU have: bit 0 SSSE3, bit 1 AVX2, bit 3 ERMS
   (bit 2 is SSE2 in lzb_cpu_in_use). Asked by lzb_kernels_init() at import, under the GIL;
   after that only read (the test hook lzb_cpu_limit() rewrites it, also under the GIL,
   between copies). */
static int lzb_cpu_state = -1;
static inline int lzb_cpu(void) {
    if (lzb_cpu_state < 0) {
        __builtin_cpu_init();
        lzb_cpu_state = (__builtin_cpu_supports("ssse3") ? 1 : 0)
                        | (__builtin_cpu_supports("avx2") ? 2 : 0)
#if defined(__x86_64__)  /* (the rep stos fills are x86-64 code) */
                        | (lzb_cpuid_erms() ? 8 : 0)
#endif
                        ;
    }
    return lzb_cpu_state;
}
static int lzb_masks_ready = 0;  /* set by lzb_simd_init() */
#define lzb_has_ssse3() (lzb_cpu() & 1)
#define lzb_has_avx2() (lzb_cpu() & 2)
#define lzb_has_erms() (lzb_cpu() & 8)
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

#if defined(LZB_X86_DISPATCH)
__attribute__((target("avx2")))
static void lzb_copy_avx2(char *dst, const char *src, size_t n) {
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(src + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(src + i + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(src + i + 64));
        __m256i d = _mm256_loadu_si256((const __m256i *)(src + i + 96));
        _mm256_storeu_si256((__m256i *)(dst + i), a);
        _mm256_storeu_si256((__m256i *)(dst + i + 32), b);
        _mm256_storeu_si256((__m256i *)(dst + i + 64), c);
        _mm256_storeu_si256((__m256i *)(dst + i + 96), d);
    }
    memcpy(dst + i, src + i, n - i);
}
#endif

/* memcpy (the buffers must not overlap), except for a destination 1 to 63 bytes past a
   multiple of 4096 from the source: there glibc's memcpy (2.36, `rep movsb` between about
   4 kB and its non-temporal threshold) ran 12x-25x slower on Zen 3 (16 runs of 32 kB: 11 us
   at distance 0 or 64, 172-175 us at 8 or 16; a 4 kB run 3.7 against 88-92 us), and hit
   NumPy as much as us. A plain vector loop there: 5.6-7.5 us for the 4 kB runs. */
static inline void lzb_copy(char *dst, const char *src, size_t n) {
#if defined(LZB_SSE2)
    size_t distance = ((size_t)dst - (size_t)src) & 4095;
    if (n >= 2048 && distance != 0 && distance < 64) {
        size_t i = 0;
#if defined(LZB_X86_DISPATCH)
        if (lzb_has_avx2()) {
            lzb_copy_avx2(dst, src, n);
            return;
        }
#endif
        for (; i + 64 <= n; i += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
            __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
            _mm_storeu_si128((__m128i *)(dst + i), a);
            _mm_storeu_si128((__m128i *)(dst + i + 16), b);
            _mm_storeu_si128((__m128i *)(dst + i + 32), c);
            _mm_storeu_si128((__m128i *)(dst + i + 48), d);
        }
        memcpy(dst + i, src + i, n - i);
        return;
    }
#endif
    memcpy(dst, src, n);
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

#if defined(LZB_X86_DISPATCH)
/* Packed rows of 4- or 8-byte items (row i at dst + i * len, item i at src + i * size; an
   8-byte item is two 32-bit words): each 32 source bytes (8 / (size / 4) items) become
   k = len / size output vectors, each one vpermd of them. The k index vectors (k <= 32) are
   built per call. Returns how many rows it wrote (whole groups); the caller writes the rest.
   Reads at most n * size source bytes and writes at most n * len. */
__attribute__((target("avx2")))
static Py_ssize_t lzb_repeat_packed_avx2(char *dst, const char *src, Py_ssize_t n,
                                         Py_ssize_t size, Py_ssize_t len) {
    __m256i idx[32];
    int32_t lane[8];
    Py_ssize_t words = size / 4, k = len / size, items, groups, p, v, t, g;
    if ((size != 4 && size != 8) || k < 1 || k > 32 || len != k * size)
        return 0;
    items = 8 / words;
    groups = n / items;
    for (v = 0; v < k; v++) {
        for (t = 0; t < 8; t++) {
            g = v * 8 + t;  /* output word g of a group comes from word g % words of item
                               g / (k * words) */
            lane[t] = (int32_t)((g / (k * words)) * words + g % words);
        }
        idx[v] = _mm256_loadu_si256((const __m256i *)lane);
    }
    for (p = 0; p < groups; p++) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(src + p * 32));
        char *q = dst + p * 32 * k;
        for (v = 0; v < k; v++)
            _mm256_storeu_si256((__m256i *)(q + 32 * v), _mm256_permutevar8x32_epi32(x, idx[v]));
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
       4- and 8-byte items up to 128 bytes go first through AVX2 word permutes (Zen 3, (N, 1)
       -> (N, k), 0.3-4.8 MB, interleaved best of 300 against these paths: 1.03x-1.77x
       faster, k = 2 to 24). */
    if ((size == 4 || size == 8) && len <= 128 && dstep == len && sstep == size
            && n * len >= 4096 && lzb_has_avx2()) {
        Py_ssize_t done = lzb_repeat_packed_avx2(dst, src, n, size, len);
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

#endif /* LAZYBCAST_KERNELS_SIMD_H */
