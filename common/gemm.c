/* gemm.c — the one matrix-product entry point: C = alpha * op(A) @ op(B) + beta * C.
 *
 * gemm_builtin is a cache-blocked kernel in the BLIS style:
 *   for each KC-deep slice of k: pack (or read in place) the B slice as NR-wide column panels;
 *     for each MC-tall block of rows: pack (or read in place) A as MR-tall row panels;
 *       for each (NR panel, MR panel): the micro-kernel keeps an MR x NR tile of C in registers
 *       and streams kc rank-1 updates through it.
 * The micro-kernel uses GCC vector extensions (a vector of VL floats; VL = 16 with AVX-512,
 * 8 with AVX, 4 otherwise), so the same source compiles to zmm/ymm/xmm FMAs with -march=native.
 *
 * Packing copies an operand into the contiguous order the micro-kernel reads. It costs O(mk + kn)
 * against O(mnk) work, which matters for the thin products of these labs (k = 32, n = 32), so
 * small operands are read in place instead: the micro-kernel takes A with any row/column stride
 * and B with unit column stride; only the ragged edge panels get a zero-padded copy.
 *
 * Threads (OpenMP): a product big enough to pay for a parallel region is cut into one slab of
 * rows (or columns) per thread; each slab is an independent serial product. */
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef AL_HAVE_CBLAS
#include <cblas.h>
#endif

#include "util.h"

/* The build is ISO C (-std=c11), which turns off a*b+c -> fma contraction; the micro-kernel is
 * nothing but multiply-adds, so allow it here (same results up to rounding, twice the speed). */
#pragma GCC optimize("fp-contract=fast")

/* ---------- micro-kernel geometry ---------- */
#if defined(__AVX512F__)
#define VL 16 /* floats per vector */
#define MR 8  /* 8 x 32 tile = 16 zmm accumulators of 32 */
#elif defined(__AVX__)
#define VL 8
#define MR 6 /* 6 x 16 tile = 12 ymm accumulators of 16 */
#else
#define VL 4
#define MR 4 /* 4 x 8 tile = 8 xmm accumulators of 16 */
#endif
#define NV 2 /* vectors per tile row */
#define NR (NV * VL)
typedef float vf __attribute__((vector_size(VL * sizeof(float))));

/* Cache blocking: an MR x KC panel of A and a KC x NR panel of B sit in L1 together, an MC x KC
 * block of A in L2, a KC x NC block of B in L2/L3. */
#define KC 256
#define MC 128
#define NC 2048

/* Products below this many multiply-adds run on one thread: a parallel region costs a few
 * microseconds, as much as ~2^18 multiply-adds take on one core. (Tuned with make bench.) */
#ifndef GEMM_PAR_MIN
#define GEMM_PAR_MIN (1L << 18)
#endif

static inline int imin(int a, int b) { return a < b ? a : b; }

static inline vf vload(const float *p) {
  vf v;
  memcpy(&v, p, sizeof v); /* unaligned load */
  return v;
}
static inline void vstore(float *p, vf v) { memcpy(p, &v, sizeof v); }

/* C tile (MR x NR, row stride ldc) = acc + beta * C; beta == 0 never reads C (BLAS rule: C may
 * hold garbage or NaN then). */
static inline __attribute__((always_inline)) void store_tile(vf acc[MR][NV], float *c, long ldc,
                                                             float beta) {
  if (beta == 0.0f) {
    for (int i = 0; i < MR; i++)
      for (int v = 0; v < NV; v++) vstore(c + i * ldc + v * VL, acc[i][v]);
  } else if (beta == 1.0f) {
    for (int i = 0; i < MR; i++)
      for (int v = 0; v < NV; v++)
        vstore(c + i * ldc + v * VL, vload(c + i * ldc + v * VL) + acc[i][v]);
  } else {
    for (int i = 0; i < MR; i++)
      for (int v = 0; v < NV; v++)
        vstore(c + i * ldc + v * VL, beta * vload(c + i * ldc + v * VL) + acc[i][v]);
  }
}

/* The MR x NR micro-kernel: tile = sum_p a(:, p) b(p, :). A element (i, p) is a[i*rsa + p*csa];
 * row p of B is the NR floats at b + p*rsb. Inlined into two specialisations below so the
 * compiler sees constant strides for packed A. */
static inline __attribute__((always_inline)) void kernel_body(int kc, const float *restrict a,
                                                              long rsa, long csa,
                                                              const float *restrict b, long rsb,
                                                              float *restrict c, long ldc,
                                                              float beta) {
  vf acc[MR][NV];
  for (int i = 0; i < MR; i++)
    for (int v = 0; v < NV; v++) acc[i][v] = (vf){0};
  for (int p = 0; p < kc; p++) {
    vf bv[NV];
    for (int v = 0; v < NV; v++) bv[v] = vload(b + p * rsb + v * VL);
    const float *ap = a + p * csa;
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++) {
      float ai = ap[i * rsa];
      for (int v = 0; v < NV; v++) acc[i][v] += ai * bv[v];
    }
  }
  store_tile(acc, c, ldc, beta);
}

/* A packed: a[p*MR + i]. */
static void kernel_packed(int kc, const float *restrict a, const float *restrict b, long rsb,
                          float *restrict c, long ldc, float beta) {
  kernel_body(kc, a, 1, MR, b, rsb, c, ldc, beta);
}
/* A in place, row-major (not transposed): a[i*lda + p]. */
static void kernel_rows(int kc, const float *restrict a, long lda, const float *restrict b,
                        long rsb, float *restrict c, long ldc, float beta) {
  kernel_body(kc, a, lda, 1, b, rsb, c, ldc, beta);
}
/* A in place, transposed: a[p*lda + i]. */
static void kernel_cols(int kc, const float *restrict a, long lda, const float *restrict b,
                        long rsb, float *restrict c, long ldc, float beta) {
  kernel_body(kc, a, 1, lda, b, rsb, c, ldc, beta);
}

/* ---------- packing ---------- */

/* A rows [i0, i0+mc) x cols [p0, p0+kc) of op(A), times alpha, into MR-row panels
 * dst[(ir/MR) * kc*MR + p*MR + i]; rows past mc are zero. */
static void pack_A(bool tA, const float *A, long lda, int i0, int p0, int mc, int kc, float alpha,
                   float *restrict dst) {
  for (int ir = 0; ir < mc; ir += MR) {
    int mr = imin(MR, mc - ir);
    float *d = dst + (long)ir * kc;
    if (!tA) {
      for (int i = 0; i < mr; i++) {
        const float *s = A + (long)(i0 + ir + i) * lda + p0;
        for (int p = 0; p < kc; p++) d[p * MR + i] = alpha * s[p];
      }
    } else {
      for (int p = 0; p < kc; p++) {
        const float *s = A + (long)(p0 + p) * lda + i0 + ir;
        for (int i = 0; i < mr; i++) d[p * MR + i] = alpha * s[i];
      }
    }
    for (int i = mr; i < MR; i++)
      for (int p = 0; p < kc; p++) d[p * MR + i] = 0.0f;
  }
}

/* B rows [p0, p0+kc) x cols [j0, j0+nc) of op(B) into NR-column panels
 * dst[(jr/NR) * kc*NR + p*NR + j]; columns past nc are zero. */
static void pack_B(bool tB, const float *B, long ldb, int p0, int j0, int kc, int nc,
                   float *restrict dst) {
  for (int jr = 0; jr < nc; jr += NR) {
    int nr = imin(NR, nc - jr);
    float *d = dst + (long)jr * kc;
    if (!tB) {
      for (int p = 0; p < kc; p++) {
        const float *s = B + (long)(p0 + p) * ldb + j0 + jr;
        float *dp = d + p * NR;
        int j = 0;
        for (; j < nr; j++) dp[j] = s[j];
        for (; j < NR; j++) dp[j] = 0.0f;
      }
    } else {
      for (int j = 0; j < nr; j++) {
        const float *s = B + (long)(j0 + jr + j) * ldb + p0;
        for (int p = 0; p < kc; p++) d[p * NR + j] = s[p];
      }
      for (int j = nr; j < NR; j++)
        for (int p = 0; p < kc; p++) d[p * NR + j] = 0.0f;
    }
  }
}

/* ---------- per-thread scratch ---------- */
/* Each thread keeps one growing buffer for its packed panels, so the steady state of a training
 * loop allocates nothing. The pointers are also kept in a global table so leak checkers see the
 * buffers as reachable at exit. */
#define SCRATCH_SLOTS 256
static float *g_scratch_table[SCRATCH_SLOTS];
static int g_scratch_next;
static _Thread_local float *t_scratch;
static _Thread_local size_t t_scratch_cap;
static _Thread_local int t_scratch_slot = -1;

static float *scratch(size_t nfloats) {
  if (nfloats > t_scratch_cap) {
    free(t_scratch);
    size_t cap = nfloats + nfloats / 2;
    size_t bytes = (cap * sizeof(float) + 63) & ~(size_t)63;
    t_scratch = aligned_alloc(64, bytes);
    if (!t_scratch) die("gemm: out of memory for a %zu-byte packing buffer", bytes);
    t_scratch_cap = bytes / sizeof(float);
    if (t_scratch_slot < 0) {
      int s;
#pragma omp atomic capture
      s = g_scratch_next++;
      t_scratch_slot = s;
    }
    if (t_scratch_slot < SCRATCH_SLOTS) g_scratch_table[t_scratch_slot] = t_scratch;
  }
  return t_scratch;
}

/* ---------- the serial driver ---------- */

/* C[i, j] = beta*C + tile for an edge tile of mr x nr (tile row stride NR). */
static void merge_edge(const float *tile, int mr, int nr, float *c, long ldc, float beta) {
  for (int i = 0; i < mr; i++) {
    float *ci = c + i * ldc;
    const float *ti = tile + i * NR;
    if (beta == 0.0f)
      for (int j = 0; j < nr; j++) ci[j] = ti[j];
    else if (beta == 1.0f)
      for (int j = 0; j < nr; j++) ci[j] += ti[j];
    else
      for (int j = 0; j < nr; j++) ci[j] = beta * ci[j] + ti[j];
  }
}

/* C := beta * C (the whole product when k == 0 or alpha == 0). */
static void scale_c(int m, int n, float beta, float *C, long ldc) {
  for (int i = 0; i < m; i++) {
    float *c = C + i * ldc;
    if (beta == 0.0f)
      memset(c, 0, sizeof(float) * (size_t)n);
    else if (beta != 1.0f)
      for (int j = 0; j < n; j++) c[j] *= beta;
  }
}

static void gemm_serial(bool tA, bool tB, int m, int n, int k, float alpha, const float *A,
                        long lda, const float *B, long ldb, float beta, float *C, long ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0.0f) {
    scale_c(m, n, beta, C, ldc);
    return;
  }
  /* In-place operands: A when alpha == 1 and there are few column panels to reuse a packed copy
   * for; B when it is not transposed and small enough to stay in cache unpacked. */
  bool packA = alpha != 1.0f || n > 4 * NR;
  bool packB = tB || (long)k * n > 64L * 1024;
  int kcmax = imin(k, KC), ncmax = imin(n, NC), mcmax = imin(m, MC);
  size_t szA = (size_t)(((mcmax + MR - 1) / MR) * MR) * kcmax;
  size_t szB = (size_t)(((ncmax + NR - 1) / NR) * NR) * kcmax;
  size_t szEA = (size_t)MR * kcmax, szEB = (size_t)NR * kcmax, szT = (size_t)MR * NR;
  float *buf = scratch(szA + szB + szEA + szEB + szT);
  float *bufA = buf, *bufB = bufA + szA, *edgeA = bufB + szB, *edgeB = edgeA + szEA;
  float *tile = edgeB + szEB;

  for (int jc = 0; jc < n; jc += NC) {
    int nc = imin(NC, n - jc);
    for (int pc = 0; pc < k; pc += KC) {
      int kc = imin(KC, k - pc);
      float beta_k = pc == 0 ? beta : 1.0f; /* later k slices accumulate onto the first */
      int nr_last = nc % NR;
      if (packB)
        pack_B(tB, B, ldb, pc, jc, kc, nc, bufB);
      else if (nr_last) /* in-place B: only the ragged last panel needs a zero-padded copy */
        pack_B(false, B, ldb, pc, jc + nc - nr_last, kc, nr_last, edgeB);
      for (int ic = 0; ic < m; ic += MC) {
        int mc = imin(MC, m - ic);
        int mr_last = mc % MR;
        if (packA)
          pack_A(tA, A, lda, ic, pc, mc, kc, alpha, bufA);
        else if (mr_last)
          pack_A(tA, A, lda, ic + mc - mr_last, pc, mr_last, kc, 1.0f, edgeA);
        for (int jr = 0; jr < nc; jr += NR) {
          int nr = imin(NR, nc - jr);
          const float *bp;
          long rsb;
          if (packB) {
            bp = bufB + (long)jr * kc;
            rsb = NR;
          } else if (nr < NR) {
            bp = edgeB;
            rsb = NR;
          } else {
            bp = B + (long)pc * ldb + jc + jr;
            rsb = ldb;
          }
          for (int ir = 0; ir < mc; ir += MR) {
            int mr = imin(MR, mc - ir);
            float *c = C + (long)(ic + ir) * ldc + jc + jr;
            bool full = mr == MR && nr == NR;
            float *dst = full ? c : tile;
            long lddst = full ? ldc : NR;
            float bdst = full ? beta_k : 0.0f;
            if (packA)
              kernel_packed(kc, bufA + (long)ir * kc, bp, rsb, dst, lddst, bdst);
            else if (mr < MR)
              kernel_packed(kc, edgeA, bp, rsb, dst, lddst, bdst);
            else if (!tA)
              kernel_rows(kc, A + (long)(ic + ir) * lda + pc, lda, bp, rsb, dst, lddst, bdst);
            else
              kernel_cols(kc, A + (long)pc * lda + ic + ir, lda, bp, rsb, dst, lddst, bdst);
            if (!full) merge_edge(tile, mr, nr, c, ldc, beta_k);
          }
        }
      }
    }
  }
}

/* ---------- threading ---------- */

static int gemm_threads(int m, int n, int k) {
#ifdef _OPENMP
  if (omp_in_parallel()) return 1; /* e.g. inside gemm_batched's loop over the batch */
  if ((double)m * n * k < (double)GEMM_PAR_MIN) return 1;
  int t = omp_get_max_threads();
  /* every thread needs at least one full tile row/column slab */
  int slabs = m >= n ? m / MR : n / NR;
  if (t > slabs) t = slabs;
  return t < 1 ? 1 : t;
#else
  (void)m, (void)n, (void)k;
  return 1;
#endif
}

void gemm_builtin(bool transA, bool transB, int m, int n, int k, float alpha, const float *A,
                  int lda, const float *B, int ldb, float beta, float *C, int ldc) {
  int nt = gemm_threads(m, n, k);
  if (nt <= 1) {
    gemm_serial(transA, transB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  /* Split the longer side of C into nt slabs (multiples of the tile size); each thread runs an
   * independent serial product on its slab and packs its own panels. */
  bool by_rows = m >= n;
#pragma omp parallel num_threads(nt)
  {
#ifdef _OPENMP
    int t = omp_get_thread_num(), T = omp_get_num_threads();
#else
    int t = 0, T = 1;
#endif
    int len = by_rows ? m : n, unit = by_rows ? MR : NR;
    int units = (len + unit - 1) / unit;
    int u0 = (int)((long)units * t / T), u1 = (int)((long)units * (t + 1) / T);
    int s0 = imin(len, u0 * unit), s1 = imin(len, u1 * unit);
    if (s1 > s0) {
      if (by_rows) {
        const float *As = transA ? A + s0 : A + (long)s0 * lda;
        gemm_serial(transA, transB, s1 - s0, n, k, alpha, As, lda, B, ldb, beta,
                    C + (long)s0 * ldc, ldc);
      } else {
        const float *Bs = transB ? B + (long)s0 * ldb : B + s0;
        gemm_serial(transA, transB, m, s1 - s0, k, alpha, A, lda, Bs, ldb, beta, C + s0, ldc);
      }
    }
  }
}

/* ---------- the dispatcher ---------- */

#ifdef AL_HAVE_CBLAS
/* OpenBLAS 0.3.21 (Debian) on this machine runs its AVX2 "Haswell" kernel and pays a fixed
 * setup cost per call; the built-in AVX-512 kernel is faster for the small and mid-size products
 * of the labs. Crossover measured with make bench (see gemm_use_cblas). */
static bool gemm_use_cblas(int m, int n, int k) {
  (void)m, (void)n, (void)k;
  return false;
}
#endif

void gemm(bool transA, bool transB, int m, int n, int k, float alpha, const float *A, int lda,
          const float *B, int ldb, float beta, float *C, int ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0.0f) { /* also keeps CBLAS away from its lda >= max(1, k) checks */
    scale_c(m, n, beta, C, ldc);
    return;
  }
#ifdef AL_HAVE_CBLAS
  if (gemm_use_cblas(m, n, k)) {
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
#endif
  gemm_builtin(transA, transB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm_batched(bool transA, bool transB, int m, int n, int k, float alpha, const float *A,
                  int lda, long strideA, const float *B, int ldb, long strideB, float beta,
                  float *C, int ldc, long strideC, int count) {
  if (count <= 0 || m <= 0 || n <= 0) return;
#ifdef _OPENMP
  /* Many small products: one thread per share of the batch beats threading each product. */
  if (count > 1 && !omp_in_parallel() && (double)m * n * k * count >= (double)GEMM_PAR_MIN &&
      omp_get_max_threads() > 1) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < count; i++)
      gemm(transA, transB, m, n, k, alpha, A + i * strideA, lda, B + i * strideB, ldb, beta,
           C + i * strideC, ldc);
    return;
  }
#endif
  for (int i = 0; i < count; i++)
    gemm(transA, transB, m, n, k, alpha, A + i * strideA, lda, B + i * strideB, ldb, beta,
         C + i * strideC, ldc);
}

const char *gemm_backend(void) {
#ifdef AL_HAVE_CBLAS
  return "openblas";
#else
  return "builtin";
#endif
}
