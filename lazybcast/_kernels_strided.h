/* Runs of strided items gathered into consecutive ones, for the row kernels of
 * lazybcast/_kernels.pyx (_kernels_rows.pxi): a row read every `step` bytes and written
 * packed, as in the strided rows of a transpose's source or the read pass of the generic
 * tile loop.
 *
 * lzb_gather_items(dst, src, n, step, size): dst[j * size] = src[j * step] for j < n, for
 * items of 1, 2, 4 and 8 bytes (returns 0, nothing done, for other sizes). The items are
 * packed into two 8-byte words and stored 16 bytes at a time: a store per item kept the
 * loads waiting (Zen 5, rows of 192 items at a stride of -2 items from 48 planes 3 MiB
 * apart, best of 5: 1-byte items 15.2 -> 6.3 ms, 2-byte 18.1 -> 10.1, 4-byte 16.8 -> 14.7,
 * 8-byte 23.4 -> 18.5; benchmarks/RESULTS.md, "Strided runs packed"). Little-endian
 * machines only (a word holds its first item in its low bytes): lzb_gather_packs(size)
 * says whether lzb_gather_items takes items of that size here. Plain C: scalar shifts and
 * two 8-byte stores per 16 bytes (GCC 12 at -O3 vectorizes only the 1-byte loop); every
 * access is a memcpy of one item or one word, so neither buffer needs any alignment, and
 * nothing outside dst[0, n * size) or the n source items is touched.
 */
#ifndef LAZYBCAST_KERNELS_STRIDED_H
#define LAZYBCAST_KERNELS_STRIDED_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#define LZB_GATHER_ITEMS(T)                                                             \
    static void lzb_gather_##T(char *dst, const char *src, Py_ssize_t n,               \
                               Py_ssize_t step) {                                       \
        const int k = (int)(8 / sizeof(T));  /* items per word */                      \
        Py_ssize_t j = 0;                                                               \
        int u;                                                                          \
        for (; j + 2 * k <= n; j += 2 * k) {                                            \
            uint64_t w0 = 0, w1 = 0;                                                    \
            for (u = 0; u < k; u++) {  /* (shifts below 64: u < k = 8 / sizeof(T)) */      \
                T a, b;                                                                 \
                memcpy(&a, src + (j + u) * step, sizeof(T));                            \
                memcpy(&b, src + (j + k + u) * step, sizeof(T));                        \
                w0 |= (uint64_t)a << (8 * sizeof(T) * u % 64);                          \
                w1 |= (uint64_t)b << (8 * sizeof(T) * u % 64);                          \
            }                                                                           \
            memcpy(dst + j * (Py_ssize_t)sizeof(T), &w0, 8);                            \
            memcpy(dst + (j + k) * (Py_ssize_t)sizeof(T), &w1, 8);                      \
        }                                                                               \
        for (; j < n; j++)                                                              \
            memcpy(dst + j * (Py_ssize_t)sizeof(T), src + j * step, sizeof(T));         \
    }

LZB_GATHER_ITEMS(uint8_t)
LZB_GATHER_ITEMS(uint16_t)
LZB_GATHER_ITEMS(uint32_t)
LZB_GATHER_ITEMS(uint64_t)

#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || defined(_WIN32)
#define LZB_GATHER_LITTLE_ENDIAN 1  /* (the words hold their items in little-endian order) */
#else
#define LZB_GATHER_LITTLE_ENDIAN 0
#endif

/* Whether lzb_gather_items packs items of `size` bytes on this machine. */
static inline int lzb_gather_packs(Py_ssize_t size) {
    return LZB_GATHER_LITTLE_ENDIAN && (size == 1 || size == 2 || size == 4 || size == 8);
}

static inline int lzb_gather_items(char *dst, const char *src, Py_ssize_t n, Py_ssize_t step,
                                   Py_ssize_t size) {
    if (!lzb_gather_packs(size))
        return 0;
    switch (size) {
    case 1: lzb_gather_uint8_t(dst, src, n, step); return 1;
    case 2: lzb_gather_uint16_t(dst, src, n, step); return 1;
    case 4: lzb_gather_uint32_t(dst, src, n, step); return 1;
    default: lzb_gather_uint64_t(dst, src, n, step); return 1;
    }
}

#endif /* LAZYBCAST_KERNELS_STRIDED_H */
