/* Rows of one repeated item of an odd size (3, 5-7 or 9-15 bytes: packed records, RGB
 * pixels along a row), a fill kernel of lazybcast/_kernels.pyx (_rows_any), built on
 * _kernels_simd.h; items of 1, 2, 4, 8 or 16 bytes are in _kernels_simd_fill.h.
 *
 * Contents:
 *   lzb_fill_odd_rows: the entry (SSSE3), which takes
 *   - lzb_fill_odd_packed for packed rows, 16 source bytes at a time;
 *   - lzb_fill_odd_rows_ssse3 for the rest, row by row.
 */
#ifndef LAZYBCAST_KERNELS_SIMD_FILL_ODD_H
#define LAZYBCAST_KERNELS_SIMD_FILL_ODD_H

#include "_kernels_simd.h"

/* ---- Rows of one repeated item of an odd size -----------------------------------------
 * Items of 3, 5, 6, 7 or 9 to 15 bytes (a packed record, an RGB pixel), rows of len bytes
 * (k >= 2 items). The item is read by two loads of w = 2, 4 or 8 bytes that stay inside it
 * (at 0 and at size - w, w <= size <= 2w) into one vector, and byte shuffles lay it out.
 * Item byte j then sits at vector byte lzb_odd_at(j) (below); a shuffle mask over output
 * bytes o holds lzb_odd_at(o % size). Before: each copy was a few scalar stores of an item
 * built on the stack byte by byte, and the first load of it waited for those bytes (a failed
 * store forwarding): 49932 rows of four 3-byte records, 600 kB, took 395 us against a
 * 10.7 us memset (Intel Xeon family 6 model 167). */
#define LZB_ODD_GROUP_VECTORS 8  /* packed groups of at most 128 output bytes */

static inline Py_ssize_t lzb_odd_width(Py_ssize_t size) {
    return size < 4 ? 2 : size < 8 ? 4 : 8;
}

static inline unsigned char lzb_odd_at(Py_ssize_t j, Py_ssize_t size, Py_ssize_t w) {
    return (unsigned char)(j < w ? j : j + 2 * w - size);
}

/* The mask of a 16-byte store at offset `start` of a row (a pattern of period size). */
#if defined(LZB_X86_DISPATCH)
static __m128i lzb_odd_mask(Py_ssize_t start, Py_ssize_t size) {
    unsigned char m[16];
    Py_ssize_t b, w = lzb_odd_width(size);
    for (b = 0; b < 16; b++)
        m[b] = lzb_odd_at((start + b) % size, size, w);
    return _mm_loadu_si128((const __m128i *)m);
}

__attribute__((target("ssse3")))
static inline __m128i lzb_odd_item(const char *p, Py_ssize_t size, Py_ssize_t w) {
    if (w == 2) {
        uint16_t a, b;
        memcpy(&a, p, 2);
        memcpy(&b, p + size - 2, 2);
        return _mm_cvtsi32_si128((int)((uint32_t)a | ((uint32_t)b << 16)));
    }
    if (w == 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + size - 4, 4);
        return _mm_set_epi32(0, 0, (int)b, (int)a);
    } else {
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, p + size - 8, 8);
        return _mm_set_epi64x((long long)b, (long long)a);
    }
}

/* Packed rows (row i at dst + i * len, item i at src + i * size): each 16-byte load holds
   m = 16 / size whole items, whose m rows (m * len bytes, at most 128) are byte shuffles of
   it; the last vector of a group runs past it into the next group's first row, which is
   written after it. Only groups whose load and stores stay inside the n rows run here.
   Returns how many rows it wrote; the caller writes the rest. */
__attribute__((target("ssse3")))
static Py_ssize_t lzb_fill_odd_packed(char *dst, const char *src, Py_ssize_t n,
                                      Py_ssize_t size, Py_ssize_t len) {
    __m128i mask[LZB_ODD_GROUP_VECTORS];
    unsigned char m[16];
    Py_ssize_t items = 16 / size, span = items * len, nv = (span + 15) / 16, v, b, g, groups;
    if (nv > LZB_ODD_GROUP_VECTORS || n < 2 * items)
        return 0;
    for (v = 0; v < nv; v++) {
        for (b = 0; b < 16; b++) {
            Py_ssize_t o = 16 * v + b;
            m[b] = (unsigned char)(o < span ? (o / len) * size + (o % len) % size : 0x80);
        }
        mask[v] = _mm_loadu_si128((const __m128i *)m);
    }
    /* group g loads bytes [g * items * size, + 16) and stores [g * span, + 16 * nv) */
    groups = (n * size - 16) / (items * size) + 1;
    if (groups * span + (16 * nv - span) > n * len)
        groups = (n * len - 16 * nv) / span + 1;
    if (groups * items > n)
        groups = n / items;
    for (g = 0; g < groups; g++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(src + g * items * size));
        char *q = dst + g * span;
        for (v = 0; v < nv; v++)
            _mm_storeu_si128((__m128i *)(q + 16 * v), _mm_shuffle_epi8(x, mask[v]));
    }
    return groups * items;
}

/* Any rows: rows of 16 bytes or more take 16-byte stores at every multiple of the largest
   whole number of items in 16 bytes (the same mask each) and one at len - 16; shorter rows
   (len >= 2 * size >= 6) two stores of 4 or 8 bytes at 0 and len - 4 or 8. Nothing outside
   a row is written, nothing outside an item read. */
__attribute__((target("ssse3")))
static void lzb_fill_odd_rows_ssse3(char *dst, Py_ssize_t dstep, const char *src,
                                    Py_ssize_t sstep, Py_ssize_t n, Py_ssize_t size,
                                    Py_ssize_t len) {
    Py_ssize_t w = lzb_odd_width(size), step = 16 / size * size, i, o;
    Py_ssize_t W = len >= 16 ? 16 : len >= 8 ? 8 : 4;
    __m128i head = lzb_odd_mask(0, size), tail = lzb_odd_mask(len - W, size);
    for (i = 0; i < n; i++) {
        __m128i x = lzb_odd_item(src + i * sstep, size, w);
        __m128i a = _mm_shuffle_epi8(x, head), z = _mm_shuffle_epi8(x, tail);
        char *d = dst + i * dstep;
        if (W == 16) {
            for (o = 0; o + 16 < len; o += step)
                _mm_storeu_si128((__m128i *)(d + o), a);
            _mm_storeu_si128((__m128i *)(d + len - 16), z);
        } else if (W == 8) {
            _mm_storel_epi64((__m128i *)d, a);
            _mm_storel_epi64((__m128i *)(d + len - 8), z);
        } else {
            int lo = _mm_cvtsi128_si32(a), hi = _mm_cvtsi128_si32(z);
            memcpy(d, &lo, 4);
            memcpy(d + len - 4, &hi, 4);
        }
    }
}
#endif

/* Rows of one item of an odd size under 16 bytes (3, 5, 6, 7, 9 to 15), len = k * size with
   k >= 2: 1 when written, 0 ("not done here") for other sizes and without SSSE3. */
static inline int lzb_fill_odd_rows(char *dst, Py_ssize_t dstep, const char *src,
                                    Py_ssize_t sstep, Py_ssize_t n, Py_ssize_t size,
                                    Py_ssize_t len) {
#if defined(LZB_X86_DISPATCH)
    if (size < 3 || size > 15 || (size & (size - 1)) == 0 || len < 2 * size || n < 1
            || !lzb_has_ssse3())
        return 0;
    if (dstep == len && sstep == size) {
        Py_ssize_t done = lzb_fill_odd_packed(dst, src, n, size, len);
        dst += done * dstep;
        src += done * sstep;
        n -= done;
    }
    lzb_fill_odd_rows_ssse3(dst, dstep, src, sstep, n, size, len);
    return 1;
#else
    (void)dst; (void)dstep; (void)src; (void)sstep; (void)n; (void)size; (void)len;
    return 0;
#endif
}

#endif /* LAZYBCAST_KERNELS_SIMD_FILL_ODD_H */
