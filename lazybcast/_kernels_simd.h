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
 *   lzb_copy_short: copies under 256 bytes (the non-temporal copies' heads and tails);
 *   lzb_page_unmapped: whether a page was never written (then no non-temporal stores);
 *   lzb_repeat64, lzb_splat128: one item repeated over a word or a vector;
 *   lzb_all_zero.
 * Rows of one repeated item are in _kernels_simd_fill.h (odd sizes:
 * _kernels_simd_fill_odd.h), a block or row repeated in _kernels_simd_repeat.h, reversed
 * runs in _kernels_simd_reverse.h.
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
/* memcpy by 32-byte aligned stores (the loads unaligned): lzb_copy's case below, and
   _kernels_simd_repeat.h. */
__attribute__((target("avx2")))
static void lzb_copy_aligned_avx2(char *dst, const char *src, size_t n) {
    size_t i = (32 - ((size_t)dst & 31)) & 31;
    if (i > n)
        i = n;
    memcpy(dst, src, i);
    for (; i + 128 <= n; i += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(src + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(src + i + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(src + i + 64));
        __m256i d = _mm256_loadu_si256((const __m256i *)(src + i + 96));
        _mm256_store_si256((__m256i *)(dst + i), a);
        _mm256_store_si256((__m256i *)(dst + i + 32), b);
        _mm256_store_si256((__m256i *)(dst + i + 64), c);
        _mm256_store_si256((__m256i *)(dst + i + 96), d);
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
            lzb_copy_aligned_avx2(dst, src, n);
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


/* Copy n < 256 bytes (buffers that do not overlap) by 16-byte loads and stores, the last
   overlapping the one before; under 16 bytes, two overlapping words of 8, 4, 2 or 1 bytes.
   Not memcpy: where GCC knows a memcpy's size to be small it inlines it as `rep movsq`
   (after the first and last 8 bytes), whose start-up dominates copies this short. */
LZB_INLINE void lzb_copy_short(char *dst, const char *src, size_t n) {
#if defined(LZB_SSE2)
    if (n >= 16) {
        size_t i;
        for (i = 0; i + 16 < n; i += 16)
            _mm_storeu_si128((__m128i *)(dst + i), _mm_loadu_si128((const __m128i *)(src + i)));
        _mm_storeu_si128((__m128i *)(dst + n - 16),
                         _mm_loadu_si128((const __m128i *)(src + n - 16)));
        return;
    }
#endif
    if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, src, 8); memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8); memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, src, 4); memcpy(&b, src + n - 4, 4);
        memcpy(dst, &a, 4); memcpy(dst + n - 4, &b, 4);
    } else if (n >= 2) {
        uint16_t a, b;
        memcpy(&a, src, 2); memcpy(&b, src + n - 2, 2);
        memcpy(dst, &a, 2); memcpy(dst + n - 2, &b, 2);
    } else if (n == 1) {
        *dst = *src;
    }
}

/* Copy n bytes; on x86-64 the bulk goes out with non-temporal stores, which skip the
   read-for-ownership of every destination line (the buffers must not overlap). */
static inline void lzb_stream_copy(char *dst, const char *src, size_t n) {
#if defined(LZB_SSE2)
    if (n >= 256) {
        size_t head = (16 - ((size_t)dst & 15)) & 15, i, blocks;
        lzb_copy_short(dst, src, head);
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
    lzb_copy_short(dst, src, n);
#else
    memcpy(dst, src, n);
#endif
}

/* Whether the page holding p is not in memory (mincore): an output never written yet, whose
 * pages the kernel zeroes through the cache as the first write to each faults it in, so that
 * ordinary stores then hit the cache and non-temporal ones write it all twice (Xeon VM, 64-256
 * MiB new outputs: 1.3x-2.4x slower streamed). 0 where the OS has no mincore, or if it
 * fails (an address not mapped: the caller's own buffer is, so this does not happen). */
#if defined(__linux__) || defined(__APPLE__) || defined(__FreeBSD__)
#include <sys/mman.h>
#include <unistd.h>
static inline int lzb_page_unmapped(const char *p) {
    long page = sysconf(_SC_PAGESIZE);
    unsigned char in_core = 1;
    if (page <= 0 || (page & (page - 1)) != 0) return 0;
    if (mincore((void *)((uintptr_t)p & ~(uintptr_t)(page - 1)), 1, (void *)&in_core) != 0)
        return 0;
    return !(in_core & 1);
}
#else
static inline int lzb_page_unmapped(const char *p) { (void)p; return 0; }
#endif

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

/* The item at item (1, 2, 4, 8 or 16 bytes) repeated over 16 bytes. */
#if defined(LZB_SSE2)
LZB_INLINE __m128i lzb_splat128(const char *item, Py_ssize_t size) {
    if (size == 16)
        return _mm_loadu_si128((const __m128i *)item);
    return _mm_set1_epi64x((long long)lzb_repeat64(item, size));
}
#endif

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
    v = lzb_splat128(item, size);
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

#endif /* LAZYBCAST_KERNELS_SIMD_H */
