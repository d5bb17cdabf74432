/* Elementwise arithmetic and comparisons of two compact operands that broadcast against each
 * other (a column and a row: an outer difference), the loops of _kernels_binary.pxi.
 *
 * One inner loop per operation, item type and pattern of the innermost axis: both operands
 * contiguous (vv), the first repeated (sv: one item against a contiguous run) or the second
 * (vs). They are plain C, which the compiler vectorizes; the results are those of IEEE 754
 * arithmetic, as NumPy's loops give (no -ffast-math, and one operation per element, so no
 * contraction). With AVX2 (chosen at run time, as the copies' vector code is) the same loops
 * are compiled once more for it. Integers wrap as NumPy's do: the arithmetic is done on unsigned types, never
 * on signed ones, whose overflow C leaves undefined.
 *
 *   lzb_binary_loop_for(op, type, pattern): the loop, or NULL where there is none (division
 *     of integers: NumPy's true_divide gives floats);
 *   lzb_binary_run(job, item): one block of a job (rows, or a piece of one long row);
 *   lzb_binary_helper(job): a helper thread's share; it reports its floating-point flags;
 *   lzb_binary_run_reporting(job): the calling thread's next block, its flags reported;
 *   lzb_fp_clear / lzb_fp_raised: this thread's floating-point exception flags.
 */
#ifndef LAZYBCAST_KERNELS_BINARY_H
#define LAZYBCAST_KERNELS_BINARY_H

#include <fenv.h>
#include <stdint.h>
#include <Python.h>
#include "_kernels_simd.h"
#include "_kernels_team.h"

/* n >= 1 items: the loops may read the first item of each operand before their loop. */
typedef void (*lzb_binary_loop)(Py_ssize_t n, const char *a, const char *b, char *out);

enum { LZB_ADD, LZB_SUBTRACT, LZB_MULTIPLY, LZB_DIVIDE, LZB_LESS, LZB_LESS_EQUAL, LZB_GREATER,
       LZB_GREATER_EQUAL, LZB_EQUAL, LZB_NOT_EQUAL, LZB_NOPS };
enum { LZB_I1, LZB_I2, LZB_I4, LZB_I8, LZB_U1, LZB_U2, LZB_U4, LZB_U8, LZB_F4, LZB_F8,
       LZB_NTYPES };
enum { LZB_VV, LZB_SV, LZB_VS };

#define LZB_BINARY_MAXDIMS 64

/* The three inner loops of one operation: ``o[i] = EXPR`` with ``x`` and ``y`` the items, read
 * at ``XI`` and ``YI`` (``i``, or 0 for the operand that repeats). */
#define LZB_LOOP(NAME, SFX, ATTR, T, R, EXPR, XI, YI)                                         \
    static ATTR void NAME##_##SFX(Py_ssize_t n, const char *a_, const char *b_, char *o_) {  \
        const T *__restrict a = (const T *)a_;                                                \
        const T *__restrict b = (const T *)b_;                                                \
        R *__restrict o = (R *)o_;                                                            \
        Py_ssize_t i;                                                                         \
        for (i = 0; i < n; i++) {                                                             \
            const T x = a[XI], y = b[YI];                                                     \
            o[i] = (R)(EXPR);                                                                 \
        }                                                                                     \
    }
#define LZB_LOOPS_AT(NAME, ATTR, T, R, EXPR)                                                  \
    LZB_LOOP(NAME, vv, ATTR, T, R, EXPR, i, i)                                                \
    LZB_LOOP(NAME, sv, ATTR, T, R, EXPR, 0, i)                                                \
    LZB_LOOP(NAME, vs, ATTR, T, R, EXPR, i, 0)

/* Each loop twice on x86 with GCC or clang: as compiled (SSE2) and for AVX2, chosen at run
 * time (lzb_binary_loop_for). AVX2 doubles the width and lets comparisons of 8-byte items
 * vectorize (SSE2 has no packing that GCC uses for them: one comisd per item). */
#if defined(LZB_X86_DISPATCH)
#define LZB_LOOPS(NAME, T, R, EXPR)                                                           \
    LZB_LOOPS_AT(NAME, , T, R, EXPR)                                                          \
    LZB_LOOPS_AT(NAME##_avx2, __attribute__((target("avx2"))), T, R, EXPR)
#else
#define LZB_LOOPS(NAME, T, R, EXPR) LZB_LOOPS_AT(NAME, , T, R, EXPR)
#endif

/* Comparisons give NumPy's bool (one byte, 0 or 1). */
#define LZB_COMPARISONS(S, T)                                                                 \
    LZB_LOOPS(lzb_less_##S, T, uint8_t, x < y)                                                \
    LZB_LOOPS(lzb_less_equal_##S, T, uint8_t, x <= y)                                         \
    LZB_LOOPS(lzb_greater_##S, T, uint8_t, x > y)                                             \
    LZB_LOOPS(lzb_greater_equal_##S, T, uint8_t, x >= y)                                      \
    LZB_LOOPS(lzb_equal_##S, T, uint8_t, x == y)                                              \
    LZB_LOOPS(lzb_not_equal_##S, T, uint8_t, x != y)

/* Integers: wrapping arithmetic on an unsigned type U at least as wide as T (and as int, so
 * that no operand is promoted to a signed int). */
#define LZB_INTEGERS(S, T, U)                                                                 \
    LZB_LOOPS(lzb_add_##S, T, T, (U)x + (U)y)                                                 \
    LZB_LOOPS(lzb_subtract_##S, T, T, (U)x - (U)y)                                            \
    LZB_LOOPS(lzb_multiply_##S, T, T, (U)x * (U)y)                                            \
    LZB_COMPARISONS(S, T)

#define LZB_ARITHMETIC(S, T)                                                                  \
    LZB_LOOPS(lzb_add_##S, T, T, x + y)                                                       \
    LZB_LOOPS(lzb_subtract_##S, T, T, x - y)                                                  \
    LZB_LOOPS(lzb_multiply_##S, T, T, x * y)                                                  \
    LZB_LOOPS(lzb_divide_##S, T, T, x / y)
#define LZB_FLOATS(S, T) LZB_ARITHMETIC(S, T) LZB_COMPARISONS(S, T)

#if defined(LZB_X86_DISPATCH)
/* Comparisons of doubles under AVX2, written out: GCC packs four 8-byte masks into bytes
 * slowly (1000 x 1000 float64 `<`, one thread: 153 us against NumPy's 118). Here 16 items at
 * a time: four vcmppd (ordered or unordered quiet predicates, as C's operators on NaN give),
 * whose all-ones or zero quadwords are narrowed by signed saturation (vpackssdw, vpacksswb:
 * each result then fills two bytes), put in order across the lanes (vpermd), halved
 * (vpshufb, vpermq) and masked to 0 or 1. */
__attribute__((target("avx2")))
static inline void lzb_store16_pd(uint8_t *o, __m256d m0, __m256d m1, __m256d m2, __m256d m3) {
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const __m256i even = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1,
                                          -1, 0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1,
                                          -1, -1);
    __m256i p01 = _mm256_packs_epi32(_mm256_castpd_si256(m0), _mm256_castpd_si256(m1));
    __m256i p23 = _mm256_packs_epi32(_mm256_castpd_si256(m2), _mm256_castpd_si256(m3));
    __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p01, p23), order);
    bytes = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(bytes, even), 0x08);
    _mm_storeu_si128((__m128i *)o, _mm_and_si128(_mm256_castsi256_si128(bytes),
                                                 _mm_set1_epi8(1)));
}

#define LZB_CMP16(X, Y, PRED)                                                                 \
    lzb_store16_pd(o + i, _mm256_cmp_pd(X(0), Y(0), PRED), _mm256_cmp_pd(X(4), Y(4), PRED),   \
                   _mm256_cmp_pd(X(8), Y(8), PRED), _mm256_cmp_pd(X(12), Y(12), PRED))
#define LZB_LOAD_A(k) _mm256_loadu_pd(a + i + (k))
#define LZB_LOAD_B(k) _mm256_loadu_pd(b + i + (k))
#define LZB_ONE_A(k) xs
#define LZB_ONE_B(k) ys

#define LZB_CMP_F8_LOOP(NAME, SFX, PRED, EXPR, XS, YS, XI, YI)                                \
    __attribute__((target("avx2")))                                                           \
    static void NAME##_avx2_##SFX(Py_ssize_t n, const char *a_, const char *b_, char *o_) {  \
        const double *a = (const double *)a_, *b = (const double *)b_;                        \
        const __m256d xs = _mm256_set1_pd(a[0]), ys = _mm256_set1_pd(b[0]);                   \
        (void)xs; (void)ys;  /* (each pattern uses one of them, or neither) */               \
        uint8_t *o = (uint8_t *)o_;                                                           \
        Py_ssize_t i = 0;                                                                     \
        for (; i + 16 <= n; i += 16) LZB_CMP16(XS, YS, PRED);                                 \
        for (; i < n; i++) {                                                                  \
            const double x = a[XI], y = b[YI];                                                \
            o[i] = (uint8_t)(EXPR);                                                           \
        }                                                                                     \
    }
#define LZB_CMP_F8_AVX2(NAME, PRED, EXPR)                                                     \
    LZB_CMP_F8_LOOP(NAME, vv, PRED, EXPR, LZB_LOAD_A, LZB_LOAD_B, i, i)                       \
    LZB_CMP_F8_LOOP(NAME, sv, PRED, EXPR, LZB_ONE_A, LZB_LOAD_B, 0, i)                        \
    LZB_CMP_F8_LOOP(NAME, vs, PRED, EXPR, LZB_LOAD_A, LZB_ONE_B, i, 0)

#define LZB_COMPARISONS_F8                                                                    \
    LZB_LOOPS_AT(lzb_less_f8, , double, uint8_t, x < y)                                       \
    LZB_LOOPS_AT(lzb_less_equal_f8, , double, uint8_t, x <= y)                                \
    LZB_LOOPS_AT(lzb_greater_f8, , double, uint8_t, x > y)                                    \
    LZB_LOOPS_AT(lzb_greater_equal_f8, , double, uint8_t, x >= y)                             \
    LZB_LOOPS_AT(lzb_equal_f8, , double, uint8_t, x == y)                                     \
    LZB_LOOPS_AT(lzb_not_equal_f8, , double, uint8_t, x != y)                                 \
    LZB_CMP_F8_AVX2(lzb_less_f8, _CMP_LT_OQ, x < y)                                           \
    LZB_CMP_F8_AVX2(lzb_less_equal_f8, _CMP_LE_OQ, x <= y)                                    \
    LZB_CMP_F8_AVX2(lzb_greater_f8, _CMP_GT_OQ, x > y)                                        \
    LZB_CMP_F8_AVX2(lzb_greater_equal_f8, _CMP_GE_OQ, x >= y)                                 \
    LZB_CMP_F8_AVX2(lzb_equal_f8, _CMP_EQ_OQ, x == y)                                         \
    LZB_CMP_F8_AVX2(lzb_not_equal_f8, _CMP_NEQ_UQ, x != y)
#else
#define LZB_COMPARISONS_F8 LZB_COMPARISONS(f8, double)
#endif

LZB_INTEGERS(i1, int8_t, uint32_t)
LZB_INTEGERS(i2, int16_t, uint32_t)
LZB_INTEGERS(i4, int32_t, uint32_t)
LZB_INTEGERS(i8, int64_t, uint64_t)
LZB_INTEGERS(u1, uint8_t, uint32_t)
LZB_INTEGERS(u2, uint16_t, uint32_t)
LZB_INTEGERS(u4, uint32_t, uint32_t)
LZB_INTEGERS(u8, uint64_t, uint64_t)
LZB_FLOATS(f4, float)
LZB_ARITHMETIC(f8, double)
LZB_COMPARISONS_F8

#define LZB_ROW(NAME, X) {NAME##X##_vv, NAME##X##_sv, NAME##X##_vs}
#define LZB_NONE {NULL, NULL, NULL}
#define LZB_OPS_INT(S, X)                                                                     \
    {LZB_ROW(lzb_add_##S, X), LZB_ROW(lzb_subtract_##S, X), LZB_ROW(lzb_multiply_##S, X),     \
     LZB_NONE, LZB_ROW(lzb_less_##S, X), LZB_ROW(lzb_less_equal_##S, X),                      \
     LZB_ROW(lzb_greater_##S, X), LZB_ROW(lzb_greater_equal_##S, X),                          \
     LZB_ROW(lzb_equal_##S, X), LZB_ROW(lzb_not_equal_##S, X)}
#define LZB_OPS_FLOAT(S, X)                                                                   \
    {LZB_ROW(lzb_add_##S, X), LZB_ROW(lzb_subtract_##S, X), LZB_ROW(lzb_multiply_##S, X),     \
     LZB_ROW(lzb_divide_##S, X), LZB_ROW(lzb_less_##S, X), LZB_ROW(lzb_less_equal_##S, X),    \
     LZB_ROW(lzb_greater_##S, X), LZB_ROW(lzb_greater_equal_##S, X),                          \
     LZB_ROW(lzb_equal_##S, X), LZB_ROW(lzb_not_equal_##S, X)}
#define LZB_TABLE(X)                                                                          \
    {LZB_OPS_INT(i1, X), LZB_OPS_INT(i2, X), LZB_OPS_INT(i4, X), LZB_OPS_INT(i8, X),          \
     LZB_OPS_INT(u1, X), LZB_OPS_INT(u2, X), LZB_OPS_INT(u4, X), LZB_OPS_INT(u8, X),          \
     LZB_OPS_FLOAT(f4, X), LZB_OPS_FLOAT(f8, X)}

/* [type][op][pattern] */
static const lzb_binary_loop lzb_binary_table[LZB_NTYPES][LZB_NOPS][3] = LZB_TABLE();
#if defined(LZB_X86_DISPATCH)
static const lzb_binary_loop lzb_binary_table_avx2[LZB_NTYPES][LZB_NOPS][3] =
    LZB_TABLE(_avx2);
#endif

static inline lzb_binary_loop lzb_binary_loop_for(int op, int type, int pattern) {
    if (op < 0 || op >= LZB_NOPS || type < 0 || type >= LZB_NTYPES || pattern < 0 || pattern > 2)
        return NULL;
#if defined(LZB_X86_DISPATCH)
    if (lzb_has_avx2())
        return lzb_binary_table_avx2[type][op][pattern];
#endif
    return lzb_binary_table[type][op][pattern];
}

/* One call: the result's axes after merging (the last is the inner loop's, of ``n``
 * items), each operand's byte strides on the outer axes (0 where it repeats), and the
 * blocks that threads claim through ``next``: the calling thread takes them from the front
 * (``front``), helpers from the back (``back``), as a copy's blocks (_kernels_job.pxi's
 * _helper): the caller's share is one run of the output, the helpers' together another.
 * Validated by _kernels_binary.pxi before any loop runs: every address a block computes is
 * an item of its array. */
typedef struct {
    lzb_binary_loop loop;
    const char *a, *b;
    char *out;
    int outer;                                /* outer axes */
    Py_ssize_t shape[LZB_BINARY_MAXDIMS];     /* the outer axes' sizes */
    Py_ssize_t sa[LZB_BINARY_MAXDIMS], sb[LZB_BINARY_MAXDIMS], so[LZB_BINARY_MAXDIMS];
    Py_ssize_t n;                             /* items of the inner axis */
    Py_ssize_t ia, ib, io;                    /* the inner axis's byte strides (0 or item) */
    Py_ssize_t rows;                          /* product of the outer sizes */
    Py_ssize_t rows_per_item;                 /* > 1: each block is that many whole rows */
    Py_ssize_t cols_per_item;                 /* < n: each block is a piece of one row */
    Py_ssize_t pieces;                        /* blocks per row (1 for whole rows) */
    Py_ssize_t n_items;
    Py_ssize_t next;                          /* blocks claimed so far (atomic) */
    Py_ssize_t front;                         /* ... by the caller: blocks 0, 1, ... (atomic) */
    Py_ssize_t back;                          /* ... by helpers: the last ones down (atomic) */
    int cancelled;                            /* no thread starts a block once set */
    int flags;                                /* the threads' floating-point flags (atomic OR) */
    fenv_t env;                               /* the caller's floating-point environment */
} lzb_binary_job;

/* Block ``item``: rows r0 .. r0+count-1, or columns c0 .. c0+cols-1 of one row. */
static inline void lzb_binary_run(const lzb_binary_job *job, Py_ssize_t item) {
    Py_ssize_t r0, count, c0, cols, r, rest, i;
    int d;
    if (job->pieces > 1) {
        r0 = item / job->pieces;
        c0 = (item % job->pieces) * job->cols_per_item;
        cols = job->n - c0 < job->cols_per_item ? job->n - c0 : job->cols_per_item;
        count = 1;
    } else {
        r0 = item * job->rows_per_item;
        count = job->rows - r0 < job->rows_per_item ? job->rows - r0 : job->rows_per_item;
        c0 = 0;
        cols = job->n;
    }
    for (r = r0; r < r0 + count; r++) {
        const char *a = job->a + c0 * job->ia;
        const char *b = job->b + c0 * job->ib;
        char *o = job->out + c0 * job->io;
        rest = r;
        for (d = job->outer - 1; d >= 0; d--) {
            i = rest % job->shape[d];
            rest /= job->shape[d];
            a += i * job->sa[d];
            b += i * job->sb[d];
            o += i * job->so[d];
        }
        job->loop(cols, a, b, o);
    }
}

#define LZB_FP_FLAGS (FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW)

static inline void lzb_fp_clear(void) { feclearexcept(FE_ALL_EXCEPT); }
static inline int lzb_fp_raised(void) { return fetestexcept(LZB_FP_FLAGS); }

/* Floating-point flags join the job's (helpers run concurrently: an atomic OR). */
static inline void lzb_binary_report(lzb_binary_job *job, int raised) {
#if defined(_MSC_VER)
    InterlockedOr((volatile LONG *)&job->flags, raised);  /* (windows.h, as _kernels_team.h) */
#else
    __atomic_fetch_or(&job->flags, raised, __ATOMIC_RELAXED);
#endif
}

/* The calling thread's block for a claim it made (the first not yet taken from the front):
 * its flags cleared before and reported right after, before the caller checks for signals
 * (a Python signal handler may clear or raise this thread's flags between two blocks). */
static void lzb_binary_run_reporting(lzb_binary_job *job) {
    lzb_fp_clear();
    lzb_binary_run(job, lzb_take_front(&job->front));
    lzb_binary_report(job, lzb_fp_raised());
}

/* A helper thread: blocks until none is left or the job is cancelled (or a fork() stops the
 * helpers: the caller then does the rest). It computes in the caller's floating-point
 * environment (rounding, flush-to-zero and denormals-are-zero: a pooled helper keeps the
 * settings of the thread that started it, and NumPy computes in the caller's), with its
 * flags cleared; its flags join the job's, and its own environment comes back after. */
static void lzb_binary_helper(void *arg) {
    lzb_binary_job *job = (lzb_binary_job *)arg;
    Py_ssize_t item;
    fenv_t own;
    int raised;
    fegetenv(&own);
    fesetenv(&job->env);
    lzb_fp_clear();
    while (!lzb_cancelled(&job->cancelled) && !lzb_pool_stopping()) {
        item = lzb_take_back(&job->next, &job->back, job->n_items);
        if (item < 0) break;
        lzb_binary_run(job, item);
    }
    raised = lzb_fp_raised();
    fesetenv(&own);
    lzb_binary_report(job, raised);
}

#endif /* LAZYBCAST_KERNELS_BINARY_H */
