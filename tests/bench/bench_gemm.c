/* bench_gemm.c — GFLOP/s of the GEMM backends on square sizes and on the products the labs run.
 *
 * Columns: the built-in kernel on 1 thread and on all OpenMP threads, OpenBLAS on 1 thread and
 * on all its threads (when the build found it), and gemm() — the dispatcher the labs call.
 * Each figure is the best of several timed batches (min time = least disturbed by the noisy,
 * shared machine). The peak line is a register-only FMA loop: what the cores can do at all.
 *
 * Usage: bench_gemm [--quick]   (--quick: fewer, shorter batches) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef AL_HAVE_CBLAS
#include <cblas.h>
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char *openblas_get_corename(void);
#endif

#include "../../common/gemm.h"
#include "../../common/util.h"

#pragma GCC optimize("fp-contract=fast") /* ISO C mode would split the peak loop's FMAs */

static int g_batches = 7;
static double g_batch_s = 0.02;

/* ---------- peak: independent vector FMAs, no memory traffic ---------- */
#if defined(__AVX512F__)
#define PEAK_VL 16
#elif defined(__AVX__)
#define PEAK_VL 8
#else
#define PEAK_VL 4
#endif
typedef float pvf __attribute__((vector_size(PEAK_VL * sizeof(float))));

static double fma_loop(long iters) {
  volatile float xs = 0.999999f, ys = 1e-7f;
  pvf x = (pvf){0} + xs, y = (pvf){0} + ys, acc[16];
  for (int i = 0; i < 16; i++) acc[i] = (pvf){0} + (float)i;
  for (long it = 0; it < iters; it++)
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) acc[i] = acc[i] * x + y;
  pvf s = (pvf){0};
  for (int i = 0; i < 16; i++) s += acc[i];
  return (double)s[0];
}

/* GFLOP/s of the FMA loop on `threads` threads at once (best of a few runs). */
static double peak_gflops(int threads) {
  long iters = 2000000;
  double best = 0;
  volatile double sink = 0;
  for (int r = 0; r < 5; r++) {
    double t0 = now_seconds();
#pragma omp parallel num_threads(threads)
    {
      double v = fma_loop(iters);
#pragma omp atomic
      sink += v;
    }
    double t = now_seconds() - t0;
    double g = (double)threads * iters * 16 * PEAK_VL * 2 / t * 1e-9;
    if (g > best) best = g;
  }
  return best;
}

/* ---------- timing one backend on one shape ---------- */
typedef enum { K_BUILTIN1, K_BUILTIN, K_BLAS1, K_BLAS, K_GEMM, K_COUNT } Kind;
static const char *kKindName[K_COUNT] = {"builtin 1T", "builtin", "OpenBLAS 1T", "OpenBLAS",
                                         "gemm()"};

typedef struct {
  const char *label;
  int m, n, k;
  bool tA, tB;
} Shape;

static int g_threads = 1;

static void set_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
#ifdef AL_HAVE_CBLAS
  openblas_set_num_threads(n);
#endif
  (void)n;
}

static void run(Kind kind, const Shape *s, const float *A, const float *B, float *C) {
  int lda = s->tA ? s->m : s->k, ldb = s->tB ? s->k : s->n;
  switch (kind) {
  case K_BUILTIN1:
  case K_BUILTIN:
    gemm_builtin(s->tA, s->tB, s->m, s->n, s->k, 1.0f, A, lda, B, ldb, 0.0f, C, s->n);
    break;
  case K_BLAS1:
  case K_BLAS:
#ifdef AL_HAVE_CBLAS
    cblas_sgemm(CblasRowMajor, s->tA ? CblasTrans : CblasNoTrans,
                s->tB ? CblasTrans : CblasNoTrans, s->m, s->n, s->k, 1.0f, A, lda, B, ldb, 0.0f,
                C, s->n);
#endif
    break;
  case K_GEMM:
    gemm(s->tA, s->tB, s->m, s->n, s->k, 1.0f, A, lda, B, ldb, 0.0f, C, s->n);
    break;
  default:
    break;
  }
}

static double bench_one(Kind kind, const Shape *s, const float *A, const float *B, float *C) {
  set_threads(kind == K_BUILTIN1 || kind == K_BLAS1 ? 1 : g_threads);
  run(kind, s, A, B, C); /* warm caches, thread pools and packing buffers */
  double t0 = now_seconds();
  run(kind, s, A, B, C);
  double once = now_seconds() - t0;
  long iters = once > 0 ? (long)(g_batch_s / once) : 1000;
  if (iters < 1) iters = 1;
  if (iters > 100000) iters = 100000;
  double best = 1e30;
  for (int b = 0; b < g_batches; b++) {
    t0 = now_seconds();
    for (long i = 0; i < iters; i++) run(kind, s, A, B, C);
    double t = (now_seconds() - t0) / (double)iters;
    if (t < best) best = t;
  }
  set_threads(g_threads);
  return 2.0 * s->m * s->n * s->k / best * 1e-9;
}

static float *rand_buf(long n) {
  float *p = aligned_alloc(64, (sizeof(float) * (size_t)n + 63) & ~(size_t)63);
  if (!p) die("bench_gemm: out of memory");
  unsigned x = 12345;
  for (long i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    p[i] = (float)(x >> 8) / (float)(1u << 24) - 0.5f;
  }
  return p;
}

int main(int argc, char **argv) {
  bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  if (quick) {
    g_batches = 3;
    g_batch_s = 0.005;
  }
#ifdef _OPENMP
  g_threads = omp_get_max_threads();
#endif
  static const Shape shapes[] = {
      {"square 64", 64, 64, 64, false, false},
      {"square 128", 128, 128, 128, false, false},
      {"square 256", 256, 256, 256, false, false},
      {"square 512", 512, 512, 512, false, false},
      {"square 1024", 1024, 1024, 1024, false, false},
      {"square 2048", 2048, 2048, 2048, false, false},
      {"lab03 GRU gates 64x32.32x96", 64, 96, 32, false, false},
      {"lab03 output 640x32.32x201", 640, 201, 32, false, false},
      {"  backward dX 640x201.(32x201)^T", 640, 32, 201, false, true},
      {"  backward dW (640x32)^T.640x201", 32, 201, 640, true, false},
      {"lab06 FFN 640x64.64x32", 640, 32, 64, false, false},
      {"lab06 attn Q.K^T 10x8.(10x8)^T", 10, 10, 8, false, true},
      {"lab07 ViT qkv 2176x64.64x192", 2176, 192, 64, false, false},
      {"book ViT qkv 4736x512.512x1536", 4736, 1536, 512, false, false},
  };
  int nshapes = (int)(sizeof shapes / sizeof shapes[0]);

  printf("GEMM benchmark: gemm() backend '%s', %d thread%s", gemm_backend(), g_threads,
         g_threads == 1 ? "" : "s");
#ifdef AL_HAVE_CBLAS
  printf(", OpenBLAS core '%s'", openblas_get_corename());
#endif
  printf("\n");
  double p1 = peak_gflops(1), pn = g_threads > 1 ? peak_gflops(g_threads) : p1;
  printf("peak (register-only %d-wide FMA loop): %.0f GFLOP/s on 1 thread, %.0f on %d\n",
         PEAK_VL, p1, pn, g_threads);
  printf("GFLOP/s, best of %d batches of ~%.0f ms each\n\n", g_batches, g_batch_s * 1e3);

  bool have_blas = false;
#ifdef AL_HAVE_CBLAS
  have_blas = true;
#endif
  printf("%-34s", "shape (m x k . k x n)");
  for (int kd = 0; kd < K_COUNT; kd++)
    if (have_blas || (kd != K_BLAS1 && kd != K_BLAS)) printf(" %11s", kKindName[kd]);
  printf("\n");
  for (int i = 0; i < nshapes; i++) {
    const Shape *s = &shapes[i];
    if (quick && (long)s->m * s->n * s->k > (1L << 31)) continue;
    float *A = rand_buf((long)s->m * s->k), *B = rand_buf((long)s->k * s->n);
    float *C = rand_buf((long)s->m * s->n);
    printf("%-34s", s->label);
    fflush(stdout);
    for (int kd = 0; kd < K_COUNT; kd++) {
      if (!have_blas && (kd == K_BLAS1 || kd == K_BLAS)) continue;
      printf(" %11.1f", bench_one((Kind)kd, s, A, B, C));
      fflush(stdout);
    }
    printf("\n");
    free(A);
    free(B);
    free(C);
  }
  return 0;
}
