/* test_gemm.c — gemm_builtin, gemm and gemm_batched against a naive triple loop in double. */
#include <float.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/gemm.h"
#include "../../common/rng.h"
#include "../test.h"

typedef void (*GemmFn)(bool, bool, int, int, int, float, const float *, int, const float *, int,
                       float, float *, int);

/* Worst-case error bound of a k-term float dot product: ~(k+2) * eps * sum |terms|. Blocked
 * and FMA summation stay well inside it; a wrong index or a missed term lands far outside. */
static int compare_with_naive(bool tA, bool tB, int m, int n, int k, float alpha, const float *A,
                              int lda, const float *B, int ldb, float beta, const float *C0,
                              const float *C, int ldc) {
  int bad = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0, mag = 0;
      for (int p = 0; p < k; p++) {
        double a = tA ? A[(long)p * lda + i] : A[(long)i * lda + p];
        double b = tB ? B[(long)j * ldb + p] : B[(long)p * ldb + j];
        s += a * b;
        mag += fabs(a * b);
      }
      double c0 = C0[(long)i * ldc + j];
      double want = alpha * s + (beta != 0.0f ? beta * c0 : 0.0);
      mag = fabs(alpha) * mag + (beta != 0.0f ? fabs(beta * c0) : 0.0);
      double got = C[(long)i * ldc + j];
      if (!(fabs(got - want) <= (k + 2) * FLT_EPSILON * mag + 1e-30)) {
        if (bad < 3)
          test_fail(__FILE__, __LINE__,
                    "tA=%d tB=%d m=%d n=%d k=%d alpha=%g beta=%g: C[%d,%d] = %.7g, want %.7g",
                    tA, tB, m, n, k, (double)alpha, (double)beta, i, j, got, want);
        bad++;
      }
    }
  /* the padding between rows (columns n..ldc) must be untouched */
  for (int i = 0; i < m; i++)
    for (int j = n; j < ldc; j++)
      if (memcmp(&C[(long)i * ldc + j], &C0[(long)i * ldc + j], sizeof(float)) != 0) {
        if (bad < 3)
          test_fail(__FILE__, __LINE__, "m=%d n=%d: wrote into the padding at C[%d,%d]", m, n, i,
                    j);
        bad++;
      }
  return bad;
}

static float *rand_buf(long n) {
  float *p = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (long i = 0; i < n; i++) p[i] = rng_uniform(&g_rng, -1.0f, 1.0f);
  return p;
}

/* One product with padded leading dimensions (pad extra floats per row). */
static void check_one(GemmFn f, bool tA, bool tB, int m, int n, int k, float alpha, float beta,
                      int pad) {
  int ar = tA ? k : m, ac = tA ? m : k, br = tB ? n : k, bc = tB ? k : n;
  int lda = ac + pad, ldb = bc + pad, ldc = n + pad;
  float *A = rand_buf((long)ar * lda), *B = rand_buf((long)br * ldb);
  float *C0 = rand_buf((long)m * ldc), *C = malloc(sizeof(float) * (size_t)(m * ldc + 1));
  if (beta == 0.0f) /* beta = 0 must ignore C entirely, NaN included (BLAS rule) */
    for (long i = 0; i < (long)m * ldc; i++)
      if ((i % ldc) < n) C0[i] = NAN;
  memcpy(C, C0, sizeof(float) * (size_t)m * ldc);
  f(tA, tB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  compare_with_naive(tA, tB, m, n, k, alpha, A, lda, B, ldb, beta, C0, C, ldc);
  free(A);
  free(B);
  free(C0);
  free(C);
}

/* Sizes around every blocking boundary: the micro-tile (up to 8 x 32), the k slice (256), the
 * row block (128), plus the lab shapes. */
static const int kSizes[][3] = {
    {1, 1, 1},    {1, 7, 3},    {5, 1, 9},    {3, 5, 1},    {7, 33, 17},  {8, 32, 32},
    {9, 31, 5},   {13, 65, 40}, {6, 16, 256}, {17, 47, 257}, {130, 20, 11}, {64, 96, 32},
    {33, 129, 300}, {40, 201, 32}, {2, 130, 70},
    /* the short path's cases: lab03's attention backward (1 x 32 . (10 x 32)^T: dot products
     * straight from B), its forward (10 x 1 . 1 x 32: B read in place, no copy), m = 4 */
    {1, 10, 32},  {10, 32, 1},  {4, 16, 24},  {4, 3, 40},
};

static void check_all(GemmFn f) {
  const float alphas[] = {1.0f, -0.5f};
  const float betas[] = {0.0f, 1.0f, 0.25f};
  int nsizes = (int)(sizeof kSizes / sizeof kSizes[0]);
  for (int s = 0; s < nsizes; s++)
    for (int t = 0; t < 4; t++)
      for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
          check_one(f, t & 1, t & 2, kSizes[s][0], kSizes[s][1], kSizes[s][2], alphas[a],
                    betas[b], (s + t) % 3 == 0 ? 0 : 3);
}

TEST(gemm_builtin_matches_naive) { check_all(gemm_builtin); }
TEST(gemm_dispatch_matches_naive) { check_all(gemm); }

/* Big enough for the threaded path (and the packed, multi-slice path): tall (split by rows),
 * wide (split by columns), and more columns than one NC block (2048). */
TEST(gemm_threaded_and_large) {
  for (int t = 0; t < 4; t++) {
    check_one(gemm_builtin, t & 1, t & 2, 200, 150, 270, 1.0f, 0.0f, 1);
    check_one(gemm_builtin, t & 1, t & 2, 40, 300, 100, 0.5f, 1.0f, 0);
    check_one(gemm, t & 1, t & 2, 129, 160, 64, 1.0f, 0.5f, 2);
    check_one(gemm, t & 1, t & 2, 160, 130, 110, 1.0f, 1.0f, 1); /* > 2^21: CBLAS in some builds */
  }
  check_one(gemm_builtin, false, false, 3, 2100, 5, 1.0f, 0.0f, 0);
  check_one(gemm_builtin, true, true, 9, 2085, 20, 2.0f, 1.0f, 1);
}

TEST(gemm_degenerate_sizes) {
  /* k = 0: C = beta * C; alpha = 0: the same without reading A or B */
  float C[6] = {1, 2, 3, 4, 5, 6};
  gemm(false, false, 2, 3, 0, 1.0f, NULL, 1, NULL, 3, 0.5f, C, 3);
  CHECK_NEAR(C[5], 3.0f, 0); /* exact: one multiply by 0.5 */
  gemm_builtin(true, true, 2, 3, 4, 0.0f, NULL, 2, NULL, 4, 0.0f, C, 3);
  CHECK_NEAR(C[0], 0.0f, 0);
  CHECK_NEAR(C[5], 0.0f, 0);
  /* m = 0 or n = 0: nothing happens (C may be NULL) */
  gemm(false, false, 0, 3, 4, 1.0f, NULL, 4, NULL, 3, 0.0f, NULL, 3);
  gemm_builtin(false, false, 3, 0, 4, 1.0f, NULL, 4, NULL, 1, 0.0f, NULL, 1);
  gemm_batched(false, false, 2, 2, 2, 1.0f, NULL, 2, 4, NULL, 2, 4, 0.0f, NULL, 2, 4, 0);
}

TEST(gemm_small_exact) {
  /* [[1,2],[3,4]] @ [[5,6],[7,8]] = [[19,22],[43,50]]: integers, exact in float */
  float A[4] = {1, 2, 3, 4}, B[4] = {5, 6, 7, 8}, C[4];
  gemm(false, false, 2, 2, 2, 1.0f, A, 2, B, 2, 0.0f, C, 2);
  CHECK_NEAR(C[0], 19, 0);
  CHECK_NEAR(C[1], 22, 0);
  CHECK_NEAR(C[2], 43, 0);
  CHECK_NEAR(C[3], 50, 0);
  /* A^T @ B = [[1,3],[2,4]] @ B = [[26,30],[38,44]] */
  gemm_builtin(true, false, 2, 2, 2, 1.0f, A, 2, B, 2, 0.0f, C, 2);
  CHECK_NEAR(C[0], 26, 0);
  CHECK_NEAR(C[3], 44, 0);
  /* A @ B^T = [[17,23],[39,53]] */
  gemm_builtin(false, true, 2, 2, 2, 1.0f, A, 2, B, 2, 0.0f, C, 2);
  CHECK_NEAR(C[1], 23, 0);
  CHECK_NEAR(C[2], 39, 0);
}

static void check_batched(bool tA, bool tB, int m, int n, int k, int count, float beta) {
  int ar = tA ? k : m, ac = tA ? m : k, br = tB ? n : k, bc = tB ? k : n;
  /* strides larger than one matrix: batches need not be packed back to back */
  long sA = (long)ar * ac + 5, sB = (long)br * bc + 3, sC = (long)m * n + 7;
  float *A = rand_buf(sA * count), *B = rand_buf(sB * count);
  float *C0 = rand_buf(sC * count), *C = malloc(sizeof(float) * (size_t)(sC * count));
  memcpy(C, C0, sizeof(float) * (size_t)(sC * count));
  gemm_batched(tA, tB, m, n, k, 0.75f, A, ac, sA, B, bc, sB, beta, C, n, sC, count);
  for (int i = 0; i < count; i++)
    compare_with_naive(tA, tB, m, n, k, 0.75f, A + i * sA, ac, B + i * sB, bc, beta, C0 + i * sC,
                       C + i * sC, n);
  for (int i = 0; i < count; i++) /* the gaps between matrices are untouched */
    for (long j = (long)m * n; j < sC; j++) CHECK(C[i * sC + j] == C0[i * sC + j]);
  free(A);
  free(B);
  free(C0);
  free(C);
}

TEST(gemm_batched_matches_naive) {
  for (int t = 0; t < 4; t++) {
    check_batched(t & 1, t & 2, 10, 10, 8, 5, 0.0f);   /* attention scores: tiny, serial */
    check_batched(t & 1, t & 2, 37, 45, 33, 7, 1.0f);   /* parallel over the batch */
  }
}

/* Is a shared library whose file name contains `name` mapped into this process? */
static bool library_mapped(const char *name) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return false;
  char line[512];
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) found = strstr(line, name) != NULL;
  fclose(f);
  return found;
}

TEST(gemm_backend_name) {
  /* The name must say which code computes a large product, checked by what the process does,
   * not by the #ifdef that picks the name: gemm() on a product far above the CBLAS threshold
   * either is the built-in kernel (bit for bit, the same code and blocking) or is not (another
   * summation order changes some of the 128 x 128 sums of 1024 products), and "openblas"
   * needs libopenblas mapped into the process. */
  const char *b = gemm_backend();
  CHECK(strcmp(b, "builtin") == 0 || strcmp(b, "openblas") == 0);
  enum { M = 128, N = 128, K = 1024 };
  float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
  float *C1 = malloc(sizeof(float) * M * N), *C2 = malloc(sizeof(float) * M * N);
  Rng r;
  rng_init(&r, 5);
  for (int i = 0; i < M * K; i++) A[i] = rng_uniform(&r, -1.0f, 1.0f);
  for (int i = 0; i < K * N; i++) B[i] = rng_uniform(&r, -1.0f, 1.0f);
  gemm(false, false, M, N, K, 1.0f, A, K, B, N, 0.0f, C1, N);
  gemm_builtin(false, false, M, N, K, 1.0f, A, K, B, N, 0.0f, C2, N);
  const bool same_as_builtin = memcmp(C1, C2, sizeof(float) * M * N) == 0;
  if (strcmp(b, "builtin") == 0) CHECK(same_as_builtin);
  else {
    CHECK(!same_as_builtin);
    CHECK(library_mapped("libopenblas"));
  }
  free(A), free(B), free(C1), free(C2);
}
