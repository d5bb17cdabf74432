/* The layout kernels of lazybcast/_kernels.pyx, built on _kernels_simd.h: image channels
 * interleaved and deinterleaved (CHW <-> HWC), and the module's one-time set-up of the
 * shuffle masks (lzb_kernels_init). Transposing tiles are in _kernels_simd_tiles.h.
 *
 * Contents:
 *   lzb_channels: interleave and deinterleave 2 to 4 channels (CHW <-> HWC);
 *   lzb_kernels_init: the shuffle masks of lzb_fill_rows and lzb_channels, once at import.
 */
#ifndef LAZYBCAST_KERNELS_SIMD_LAYOUT_H
#define LAZYBCAST_KERNELS_SIMD_LAYOUT_H

#include "_kernels_simd_fill.h"  /* (the masks of lzb_fill_rows, set up here) */

/* ---- Channels: interleave and deinterleave ----------------------------------------------
 * The transposes with a short side: c = 2, 3 or 4 channels of items of 1, 2 or 4 bytes
 * (image layouts CHW <-> HWC). lzb_channels(dst, dplane, src, splane, n, c, size, interleave):
 *   interleave:   dst[(i * c + j) * size] = src[j * splane + i * size]
 *   deinterleave: dst[j * dplane + i * size] = src[(i * c + j) * size]
 * for i < n pixels, j < c channels. A group of 16 / size pixels is c vectors on each side.
 * Interleaving 2 or 4 channels is unpacks (SSE2); otherwise every output vector is the OR of
 * c byte shuffles, one per input vector (SSSE3). Without SSSE3, 3 channels interleave pixel
 * by pixel and deinterleaving returns 0 (nothing done), as it does for other shapes.
 * With `stream` (an output past the copies' streaming threshold) the vector stores are
 * non-temporal where every one of them is 16-byte aligned (the output, and for deinterleave
 * its plane stride); the caller fences. Zen 5 (family 26 model 2), C model, 8192 x 4096 x 3
 * uint8 deinterleaved (101 MB), best of 5: one thread 8.2 -> 4.8-5.0 ms, two 5.5-6.2 ->
 * 4.0-5.0 ms (memcpy of the same bytes, one thread: 5.7-5.8 ms). */

/* Deinterleaving with non-temporal stores writes this many bytes of one plane in a row (16
   vectors: four 64-byte lines where the planes start on a line), then the same of the next
   plane. Storing each group's c vectors in turn keeps c lines open, each filled over four
   groups: on Zen 3 (AMD EPYC family 25 model 1, KVM, 2 vCPUs) the streamed 8192 x 4096 x 3
   uint8 deinterleave (101 MB) took 26-27 ms on one thread, 2.5x its ordinary stores
   (10.4-10.6 ms; memcpy of the same bytes 10.8-11.5). Runs of one line per plane: 18-21 ms;
   two lines 11.8-13.5; four 8.7-9.2 (two threads 5.2-5.6, against 7.7-7.8 with ordinary
   stores and 6.6 for a two-thread memcpy); eight 9.5-11; sixteen 11-14. Four lines are a
   DRAM burst's worth on every x86-64 part we know and stay well inside L1 with their inputs
   (c x 256 bytes). */
#define LZB_STREAM_RUN 256

/* A 16-byte store, non-temporal if `stream` (then `p` must be 16-byte aligned). */
#define LZB_STORE16(p, v, stream)                                                           \
    do {                                                                                    \
        if (stream)                                                                         \
            _mm_stream_si128((__m128i *)(p), (v));                                          \
        else                                                                                \
            _mm_storeu_si128((__m128i *)(p), (v));                                          \
    } while (0)

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
    for (; i + per <= end; i += per) {                                                      \
        for (k = 0; k < (C); k++)                                                           \
            in[k] = _mm_loadu_si128((const __m128i *)((INTERLEAVE)                          \
                ? src + k * splane + i * size : src + i * (C) * size + 16 * k));            \
        for (o = 0; o < (C); o++) {                                                         \
            out = _mm_shuffle_epi8(in[0], mask[o * (C)]);                                   \
            for (k = 1; k < (C); k++)                                                       \
                out = _mm_or_si128(out, _mm_shuffle_epi8(in[k], mask[o * (C) + k]));        \
            LZB_STORE16((INTERLEAVE) ? dst + i * (C) * size + 16 * o                        \
                                     : dst + o * dplane + i * size, out, stream);           \
        }                                                                                   \
    }

/* Deinterleave with non-temporal stores in runs of LZB_STREAM_RUN bytes per plane: the
   groups' vectors of one plane, then the next plane's. The inputs are loaded once per plane
   (from L1 after the first). */
#define LZB_CHANNEL_LINES(C)                                                                \
    for (; i + LZB_STREAM_RUN / 16 * per <= n; i += LZB_STREAM_RUN / 16 * per)              \
        for (o = 0; o < (C); o++)                                                           \
            for (g = 0; g < LZB_STREAM_RUN / 16; g++) {                                     \
                const char *s = src + (i + g * per) * (C) * size;                           \
                out = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)s), mask[o * (C)]);  \
                for (k = 1; k < (C); k++)                                                   \
                    out = _mm_or_si128(out, _mm_shuffle_epi8(                               \
                        _mm_loadu_si128((const __m128i *)(s + 16 * k)), mask[o * (C) + k])); \
                _mm_stream_si128((__m128i *)(dst + o * dplane + (i + g * per) * size), out); \
            }

/* From pixel i on (any: the groups' loads and stores are unaligned; with `stream`, i * size
   a multiple of 16). */
__attribute__((target("ssse3")))
static Py_ssize_t lzb_channels_ssse3(char *dst, Py_ssize_t dplane, const char *src,
                                     Py_ssize_t splane, Py_ssize_t i, Py_ssize_t n,
                                     Py_ssize_t c, Py_ssize_t size, int interleave,
                                     int stream) {
    const __m128i *mask = lzb_channel_table[interleave != 0][c - 2][lzb_log2_size(size)];
    __m128i in[4], out;
    Py_ssize_t per = 16 / size, o, k, g, end = n;
    if (!lzb_masks_ready)
        return i;
    if (stream && !interleave && (dplane & 63) == 0) {
        /* groups up to the first pixel whose stores start a line, then lines */
        end = i + (Py_ssize_t)((64 - (((size_t)dst + (size_t)(i * size)) & 63)) & 63) / size;
        end = end < n ? end : n;
        switch (c) {
        case 2: LZB_CHANNEL_GROUPS(2, 0) LZB_CHANNEL_LINES(2) break;
        case 3: LZB_CHANNEL_GROUPS(3, 0) LZB_CHANNEL_LINES(3) break;
        default: LZB_CHANNEL_GROUPS(4, 0) LZB_CHANNEL_LINES(4) break;
        }
        end = n;
    }
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
#undef LZB_CHANNEL_LINES

/* Two groups at a time in 32-byte vectors, each lane a group's vector, with the same masks:
   half the shuffles per byte of the 16-byte loop above, which bounds it when the image
   stays in the cache (Intel Xeon family 6 model 167, 512 x 512 x 3 uint8 images, 786 kB,
   one thread, against an 18.2 us copy: the 16-byte loop 35.3-36.5 us either way, this one
   26.2 us deinterleaving and 18.9 interleaving). Deinterleave: lane h of input k
   is vector k of group h (two loads), lane h of output o channel o of group h, so output o
   is 32 contiguous bytes of plane o. Interleave (3 channels; 2 and 4 unpack): the 2c output
   vectors of the two groups, in their order, are taken in pairs, one 32-byte store each;
   lane h of a pair's input k is channel k of the group of its vector h (one 16-byte load
   broadcast to both lanes, or one 32-byte load when the pair spans both groups). From
   pixel i on; returns the pixels done. Not for non-temporal stores (the caller's SSSE3 loop
   streams). The caller starts it where its stores are 32-byte aligned (lzb_channels_head):
   NumPy's large arrays start 16 bytes into a line, and there every other 32-byte store
   would straddle two lines (same images: deinterleave 33 us unaligned, 22-25 aligned). */
#define LZB_CHANNEL_PAIRS(C, INTERLEAVE)                                                    \
    for (; i + 2 * per <= n; i += 2 * per) {                                                \
        if (INTERLEAVE) {                                                                   \
            for (o = 0; o < (C); o++) {                                                     \
                Py_ssize_t glo = (2 * o) / (C), ghi = (2 * o + 1) / (C);                    \
                out = _mm256_setzero_si256();                                               \
                for (k = 0; k < (C); k++) {                                                 \
                    const char *p = src + k * splane + (i + glo * per) * size;              \
                    __m256i x = glo == ghi                                                  \
                        ? _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p))  \
                        : _mm256_loadu_si256((const __m256i *)p);                           \
                    out = _mm256_or_si256(out, _mm256_shuffle_epi8(x, mask[o * (C) + k]));  \
                }                                                                           \
                _mm256_storeu_si256((__m256i *)(dst + i * (C) * size + 32 * o), out);       \
            }                                                                               \
        } else {                                                                            \
            for (k = 0; k < (C); k++)                                                       \
                in[k] = _mm256_inserti128_si256(_mm256_castsi128_si256(                     \
                    _mm_loadu_si128((const __m128i *)(src + i * (C) * size + 16 * k))),     \
                    _mm_loadu_si128((const __m128i *)(src + (i + per) * (C) * size          \
                                                      + 16 * k)), 1);                       \
            for (o = 0; o < (C); o++) {                                                     \
                out = _mm256_shuffle_epi8(in[0], mask[o * (C)]);                            \
                for (k = 1; k < (C); k++)                                                   \
                    out = _mm256_or_si256(out, _mm256_shuffle_epi8(in[k],                   \
                                                                   mask[o * (C) + k]));     \
                _mm256_storeu_si256((__m256i *)(dst + o * dplane + i * size), out);         \
            }                                                                               \
        }                                                                                   \
    }

__attribute__((target("avx2")))
static Py_ssize_t lzb_channels_avx2(char *dst, Py_ssize_t dplane, const char *src,
                                    Py_ssize_t splane, Py_ssize_t i, Py_ssize_t n,
                                    Py_ssize_t c, Py_ssize_t size, int interleave) {
    const __m128i *m = lzb_channel_table[interleave != 0][c - 2][lzb_log2_size(size)];
    __m256i mask[16], in[4], out;
    Py_ssize_t per = 16 / size, o, k;
    if (!lzb_masks_ready)
        return i;
    for (o = 0; o < c; o++)
        for (k = 0; k < c; k++) {
            if (interleave) {  /* pair o: output vectors 2o and 2o + 1 of the two groups */
                __m128i lo = m[(2 * o) % c * c + k], hi = m[(2 * o + 1) % c * c + k];
                mask[o * c + k] = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
            } else {
                mask[o * c + k] = _mm256_broadcastsi128_si256(m[o * c + k]);
            }
        }
    switch (c * 2 + (interleave != 0)) {
    case 4: LZB_CHANNEL_PAIRS(2, 0) break;
    case 6: LZB_CHANNEL_PAIRS(3, 0) break;
    case 7: LZB_CHANNEL_PAIRS(3, 1) break;
    case 8: LZB_CHANNEL_PAIRS(4, 0) break;
    default: break;  /* (2 and 4 channels interleave by unpacks) */
    }
    return i;
}
#undef LZB_CHANNEL_PAIRS
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
                                               Py_ssize_t n, Py_ssize_t c, Py_ssize_t size,
                                               int stream) {
    Py_ssize_t per = 16 / size, i;
    __m128i v[4], t[4];
    for (i = 0; i + per <= n; i += per) {
        __m128i *q = (__m128i *)(dst + i * c * size);
        v[0] = _mm_loadu_si128((const __m128i *)(src + i * size));
        v[1] = _mm_loadu_si128((const __m128i *)(src + splane + i * size));
        if (c == 2) {
            LZB_STORE16(q, lzb_unpack(v[0], v[1], size, 0), stream);
            LZB_STORE16(q + 1, lzb_unpack(v[0], v[1], size, 1), stream);
            continue;
        }
        v[2] = _mm_loadu_si128((const __m128i *)(src + 2 * splane + i * size));
        v[3] = _mm_loadu_si128((const __m128i *)(src + 3 * splane + i * size));
        t[0] = lzb_unpack(v[0], v[1], size, 0);
        t[1] = lzb_unpack(v[0], v[1], size, 1);
        t[2] = lzb_unpack(v[2], v[3], size, 0);
        t[3] = lzb_unpack(v[2], v[3], size, 1);
        LZB_STORE16(q, lzb_unpack(t[0], t[2], 2 * size, 0), stream);
        LZB_STORE16(q + 1, lzb_unpack(t[0], t[2], 2 * size, 1), stream);
        LZB_STORE16(q + 2, lzb_unpack(t[1], t[3], 2 * size, 0), stream);
        LZB_STORE16(q + 3, lzb_unpack(t[1], t[3], 2 * size, 1), stream);
    }
    return i;
}
#endif

#if defined(LZB_SSE2)
/* Deinterleave 3 channels of 4-byte items (SSE2): 4 pixels are 3 vectors a, b, c =
   [r0 g0 b0 r1] [g1 b1 r2 g2] [b2 r3 g3 b3]; five float shuffles make the 3 planes' vectors
   (byte shuffles take 9 shuffles and 6 ORs). */
#define LZB_SH(x, y, i0, i1, i2, i3) _mm_shuffle_ps((x), (y), _MM_SHUFFLE(i3, i2, i1, i0))
LZB_INLINE __m128 lzb_plane3x4(const char *src, Py_ssize_t i, int o) {
    const float *p = (const float *)(src + i * 12);
    __m128 a = _mm_loadu_ps(p), b = _mm_loadu_ps(p + 4), c = _mm_loadu_ps(p + 8);
    __m128 bc = LZB_SH(b, c, 2, 3, 1, 2);   /* b2 b3 c1 c2 */
    __m128 ab = LZB_SH(a, b, 1, 2, 0, 1);   /* a1 a2 b0 b1 */
    if (o == 0)
        return LZB_SH(a, bc, 0, 3, 0, 2);
    return o == 1 ? LZB_SH(ab, bc, 0, 2, 1, 3) : LZB_SH(ab, c, 1, 3, 0, 3);
}

LZB_INLINE Py_ssize_t lzb_deinterleave3x4(char *dst, Py_ssize_t dplane, const char *src,
                                          Py_ssize_t n, int stream) {
    Py_ssize_t i = 0, g, end = n;
    int o, runs = stream && (dplane & 63) == 0;
    if (runs) {  /* (to the first pixel whose stores start a line: dst is 16-byte aligned) */
        end = (Py_ssize_t)((64 - ((size_t)dst & 63)) & 63) / 4;
        end = end < n ? end : n;
    }
    for (;;) {
        for (; i + 4 <= end; i += 4)
            for (o = 0; o < 3; o++)
                LZB_STORE16(dst + o * dplane + i * 4, _mm_castps_si128(lzb_plane3x4(src, i, o)),
                            stream);
        if (!runs)
            return i;
        runs = 0;  /* runs of LZB_STREAM_RUN bytes per plane, then the rest by groups */
        for (; i + LZB_STREAM_RUN / 4 <= n; i += LZB_STREAM_RUN / 4)
            for (o = 0; o < 3; o++)
                for (g = 0; g < LZB_STREAM_RUN / 4; g += 4)
                    _mm_stream_si128((__m128i *)(dst + o * dplane + (i + g) * 4),
                                     _mm_castps_si128(lzb_plane3x4(src, i + g, o)));
        end = n;
    }
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

/* Pixels before the first whose stores (every plane's, for deinterleave) start 32 bytes
   into a line or on it: 0 to 31, or 0 when no pixel's are (planes of different alignments,
   an output not on an item boundary). */
static inline Py_ssize_t lzb_channels_head(const char *dst, Py_ssize_t dplane, Py_ssize_t c,
                                           Py_ssize_t size, int interleave) {
    Py_ssize_t h, step = interleave ? c * size : size;
    if (!interleave && (dplane & 31) != 0)
        return 0;
    for (h = 0; h < 32; h++)
        if ((((size_t)dst + (size_t)(h * step)) & 31) == 0)
            return h;
    return 0;
}

static inline int lzb_channels(char *dst, Py_ssize_t dplane, const char *src,
                               Py_ssize_t splane, Py_ssize_t n, Py_ssize_t c, Py_ssize_t size,
                               int interleave, int stream) {
    Py_ssize_t i = 0;
    if (c < 2 || c > 4 || (size != 1 && size != 2 && size != 4))
        return 0;
    /* every vector store 16-byte aligned: the output's start, and each plane's */
    stream = stream && ((size_t)dst & 15) == 0 && (interleave || (dplane & 15) == 0);
    /* Measured on 512 x 512 images (best of 60, against NumPy's copy of the same view):
       unpacks interleave 2 or 4 channels 7x-75x faster; 3 channels interleave 5x-25x faster
       (byte shuffles, or the pixel loop below: 5x-6x); byte shuffles deinterleave 1.5x-10x
       faster, and float shuffles deinterleave 3 float32 channels 3.1x faster. Without
       SSSE3 the other deinterleaves are left to the caller's strided loop (as fast as any
       scalar loop tried, about NumPy's speed). */
#if defined(LZB_SSE2)
    if (!interleave && c == 3 && size == 4) {
        i = lzb_deinterleave3x4(dst, dplane, src, n, stream);
    } else if (interleave && c != 3) {
        switch (size) {
        case 1: i = lzb_interleave_unpack(dst, src, splane, n, c, 1, stream); break;
        case 2: i = lzb_interleave_unpack(dst, src, splane, n, c, 2, stream); break;
        default: i = lzb_interleave_unpack(dst, src, splane, n, c, 4, stream); break;
        }
    } else
#endif
#if defined(LZB_X86_DISPATCH)
    if (lzb_has_ssse3()) {
        if (!stream && lzb_has_avx2() && !(interleave && c != 3)) {
            Py_ssize_t head = lzb_channels_head(dst, dplane, c, size, interleave);
            if (head < n) {
                i = lzb_channels_ssse3(dst, dplane, src, splane, 0, head, c, size,
                                       interleave, 0);
                lzb_channels_sized(dst, dplane, src, splane, i, head, c, size, interleave);
                i = lzb_channels_avx2(dst, dplane, src, splane, head, n, c, size, interleave);
            }
        }
        i = lzb_channels_ssse3(dst, dplane, src, splane, i, n, c, size, interleave, stream);
    } else
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

#endif /* LAZYBCAST_KERNELS_SIMD_LAYOUT_H */
