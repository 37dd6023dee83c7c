/* bench_gemm.c — GFLOP/s of the GEMM backends on square sizes and on the products the labs run.
 *
 * Columns: the built-in kernel on 1 thread and on all OpenMP threads; gemm(), the dispatcher
 * the labs call (gemm_batched for the batched rows); OpenBLAS on 1 thread and on all its
 * threads (when the build found it). Each figure is the best of several timed batches: the
 * minimum time is the run least disturbed by other processes on a shared machine.
 *
 * The peak row is an estimate of what the cores can do at all: a loop of 12-16 independent
 * vector FMAs on registers (no loads or stores), timed on 1 thread and on all threads at once. That is
 * the measured form of cores x FMA units x vector width x 2 x clock, without having to know the
 * clock (which a virtual machine does not report reliably).
 *
 * Usage: bench_gemm [--quick]   (--quick: fewer, shorter batches; skips the 2048^2 square) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef AL_CBLAS_ACCELERATE
#include <Accelerate/Accelerate.h> /* macOS: the CBLAS columns are Accelerate's */
#elif defined(AL_HAVE_CBLAS)
#include <cblas.h>
void openblas_set_num_threads(int num_threads);
char *openblas_get_corename(void);
#endif

#include "../../common/gemm.h"
#include "../../common/util.h"

#pragma GCC optimize("fp-contract=fast") /* ISO C mode would split the peak loop's FMAs */

static int g_batches = 7;
static double g_batch_s = 0.02;
static int g_threads = 1;

/* ---------- peak: independent vector FMAs, no memory traffic ---------- */
/* Independent chains: enough to cover FMA latency x FMA units (4 x 2), few enough to stay in
 * registers (32 zmm with AVX-512, 16 ymm/xmm otherwise, two of them hold x and y). */
#if defined(__AVX512F__)
#define PEAK_VL 16
#define PEAK_CHAINS 16
#elif defined(__AVX__)
#define PEAK_VL 8
#define PEAK_CHAINS 12
#else
#define PEAK_VL 4
#define PEAK_CHAINS 12
#endif
typedef float pvf __attribute__((vector_size(PEAK_VL * sizeof(float))));

static double fma_loop(long iters) {
  volatile float xs = 0.999999f, ys = 1e-7f;
  pvf x = (pvf){0} + xs, y = (pvf){0} + ys, acc[PEAK_CHAINS];
  for (int i = 0; i < PEAK_CHAINS; i++) acc[i] = (pvf){0} + (float)i;
  for (long it = 0; it < iters; it++)
#pragma GCC unroll 16
    for (int i = 0; i < PEAK_CHAINS; i++) acc[i] = acc[i] * x + y;
  pvf s = (pvf){0};
  for (int i = 0; i < PEAK_CHAINS; i++) s += acc[i];
  return (double)s[0];
}

/* GFLOP/s of the FMA loop on `threads` threads at once (best of a few runs). */
static double peak_gflops(int threads) {
  long iters = 2000000;
  double best = 0;
  volatile double sink = 0;
  /* best of 15: a run in which another process takes a core for a moment only lowers that run */
  for (int r = 0; r < 15; r++) {
    double t0 = now_seconds();
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
      double v = fma_loop(iters);
#ifdef _OPENMP
#pragma omp atomic
#endif
      sink += v;
    }
    double t = now_seconds() - t0;
    double g = (double)threads * iters * PEAK_CHAINS * PEAK_VL * 2 / t * 1e-9;
    if (g > best) best = g;
  }
  return best;
}

/* ---------- timing one backend on one shape ---------- */
typedef enum { K_BUILTIN1, K_BUILTIN, K_GEMM, K_BLAS1, K_BLAS, K_COUNT } Kind;
static const char *kKindName[K_COUNT] = {"builtin 1T", "builtin", "gemm()", "OpenBLAS 1T",
                                         "OpenBLAS"};

/* C (m x n) = op(A) @ op(B); count > 1: that many independent products (an attention bmm). */
typedef struct {
  const char *label;
  int m, n, k;
  bool tA, tB;
  int count;
} Shape;

static void set_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
#ifdef AL_CBLAS_OPENBLAS
  openblas_set_num_threads(n);
#endif
  (void)n;
}

static void run(Kind kind, const Shape *s, const float *A, const float *B, float *C) {
  int lda = s->tA ? s->m : s->k, ldb = s->tB ? s->k : s->n;
  long sA = (long)s->m * s->k, sB = (long)s->k * s->n, sC = (long)s->m * s->n;
  switch (kind) {
  case K_BUILTIN1:
  case K_BUILTIN:
    for (int i = 0; i < s->count; i++)
      gemm_builtin(s->tA, s->tB, s->m, s->n, s->k, 1.0f, A + i * sA, lda, B + i * sB, ldb, 0.0f,
                   C + i * sC, s->n);
    break;
  case K_GEMM:
    if (s->count > 1)
      gemm_batched(s->tA, s->tB, s->m, s->n, s->k, 1.0f, A, lda, sA, B, ldb, sB, 0.0f, C, s->n,
                   sC, s->count);
    else
      gemm(s->tA, s->tB, s->m, s->n, s->k, 1.0f, A, lda, B, ldb, 0.0f, C, s->n);
    break;
  case K_BLAS1:
  case K_BLAS:
#ifdef AL_HAVE_CBLAS
    for (int i = 0; i < s->count; i++)
      cblas_sgemm(CblasRowMajor, s->tA ? CblasTrans : CblasNoTrans,
                  s->tB ? CblasTrans : CblasNoTrans, s->m, s->n, s->k, 1.0f, A + i * sA, lda,
                  B + i * sB, ldb, 0.0f, C + i * sC, s->n);
#endif
    break;
  default:
    break;
  }
}

static double bench_one(Kind kind, const Shape *s, const float *A, const float *B, float *C) {
  set_threads(kind == K_BUILTIN1 || kind == K_BLAS1 ? 1 : g_threads);
  run(kind, s, A, B, C); /* warm caches, thread pools and packing buffers */
  double once = 1e30, t0;  /* the fastest of a few single calls sizes the batches: one call */
  for (int r = 0; r < 5; r++) { /* that a busy machine happened to stall would make them tiny */
    t0 = now_seconds();
    run(kind, s, A, B, C);
    double t = now_seconds() - t0;
    if (t < once) once = t;
    if (once > g_batch_s) break;
  }
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
  return 2.0 * s->m * s->n * s->k * s->count / best * 1e-9;
}

static float *rand_buf(long n) {
  float *p = aligned_alloc(64, (sizeof(float) * (size_t)n + 63) & ~(size_t)63);
  if (!p) die("bench_gemm: out of memory for %ld floats", n);
  unsigned x = 12345;
  for (long i = 0; i < n; i++) {
    x = x * 1664525u + 1013904223u;
    p[i] = (float)(x >> 8) / (float)(1u << 24) - 0.5f;
  }
  return p;
}

static void cpu_name(char *buf, size_t len) {
  snprintf(buf, len, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[256];
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "model name", 10) == 0) {
      char *v = strchr(line, ':');
      if (v) {
        v += v[1] == ' ' ? 2 : 1;
        v[strcspn(v, "\n")] = 0;
        snprintf(buf, len, "%s", v);
      }
      break;
    }
  fclose(f);
}

int main(int argc, char **argv) {
  bool quick = false, peak_only = false; /* --peak: one line, the FMA peaks (make bench rows) */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (strcmp(argv[i], "--peak") == 0)
      peak_only = true;
    else
      die("bench_gemm: unknown argument '%s' (usage: bench_gemm [--quick] [--peak])", argv[i]);
  }
  if (quick) {
    g_batches = 3;
    g_batch_s = 0.005;
  }
#ifdef _OPENMP
  g_threads = omp_get_max_threads();
#endif
  if (peak_only) {
    double p1 = peak_gflops(1), pn = g_threads > 1 ? peak_gflops(g_threads) : p1;
    printf("peak %.0f GFLOP/s on 1 thread, %.0f on %d\n", p1, pn, g_threads);
    return 0;
  }
  /* The lab shapes (m x k . k x n), from the presets: lab03 classic (batch 64, hidden 32,
   * num_steps 10, vocab 201) and d2l-1.0 (batch 128, hidden 256); lab06 classic (batch 64,
   * hidden 32, FFN 64, 4 heads of 8, num_steps 10); lab07 cpu preset (batch 128, 16 patches +
   * <cls> = 17 tokens, hidden 64, MLP 128, 4 heads of 16) and the book's (batch 128, 36 + 1
   * tokens, hidden 512, MLP 2048, 8 heads of 64). */
  static const Shape shapes[] = {
      {"square 64", 64, 64, 64, false, false, 1},
      {"square 128", 128, 128, 128, false, false, 1},
      {"square 256", 256, 256, 256, false, false, 1},
      {"square 512", 512, 512, 512, false, false, 1},
      {"square 1024", 1024, 1024, 1024, false, false, 1},
      {"square 2048", 2048, 2048, 2048, false, false, 1},
      {"lab03 GRU gates 64x32.32x96", 64, 96, 32, false, false, 1},
      {"lab03 output 640x32.32x201", 640, 201, 32, false, false, 1},
      {"  backward dX 640x201.(32x201)^T", 640, 32, 201, false, true, 1},
      {"  backward dW (640x32)^T.640x201", 32, 201, 640, true, false, 1},
      {"lab03 d2l-1.0 gates 128x256.256x768", 128, 768, 256, false, false, 1},
      {"lab06 FFN in 640x32.32x64", 640, 64, 32, false, false, 1},
      {"lab06 FFN out 640x64.64x32", 640, 32, 64, false, false, 1},
      {"lab06 Q.K^T 256 x 10x8.(10x8)^T", 10, 10, 8, false, true, 256},
      {"lab06 attn.V 256 x 10x10.10x8", 10, 8, 10, false, false, 256},
      {"lab07 FFN 2176x64.64x128", 2176, 128, 64, false, false, 1},
      {"lab07 Q.K^T 512 x 17x16.(17x16)^T", 17, 17, 16, false, true, 512},
      {"book ViT q 4736x512.512x512", 4736, 512, 512, false, false, 1},
      {"book ViT FFN 4736x512.512x2048", 4736, 2048, 512, false, false, 1},
      {"book ViT Q.K^T 1024 x 37x64.(37x64)^T", 37, 37, 64, false, true, 1024},
  };
  int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
  bool have_blas = false;
#ifdef AL_HAVE_CBLAS
  have_blas = true;
#endif

  char cpu[128];
  cpu_name(cpu, sizeof cpu);
  printf("GEMM benchmark on %s, %d thread%s; built-in kernel: %s; gemm() backend '%s'", cpu,
         g_threads, g_threads == 1 ? "" : "s", gemm_builtin_kernel(), gemm_backend());
#ifdef AL_CBLAS_OPENBLAS
  printf(" (OpenBLAS core '%s')", openblas_get_corename());
#elif defined(AL_CBLAS_ACCELERATE)
  printf(" (CBLAS: Apple Accelerate; its columns say OpenBLAS)");
#else
  printf(" (no CBLAS found: OpenBLAS columns left out)");
#endif
  printf("\nGFLOP/s, best of %d batches of ~%.0f ms each; other processes on the machine lower "
         "them, the threaded columns most\n\n",
         g_batches, g_batch_s * 1e3);

  double p1 = peak_gflops(1), pn = g_threads > 1 ? peak_gflops(g_threads) : p1;
  if (pn < p1) pn = g_threads > 1 ? peak_gflops(g_threads) : p1; /* disturbed: measure again */
  printf("%-38s", "shape (m x k . k x n)");
  for (int kd = 0; kd < K_COUNT; kd++)
    if (have_blas || (kd != K_BLAS1 && kd != K_BLAS)) printf(" %11s", kKindName[kd]);
  printf("\n%-38s", "peak estimate (register FMA loop)");
  for (int kd = 0; kd < K_COUNT; kd++)
    if (have_blas || (kd != K_BLAS1 && kd != K_BLAS))
      printf(" %11.1f", kd == K_BUILTIN1 || kd == K_BLAS1 ? p1 : pn);
  printf("\n");
  fflush(stdout);

  /* OpenBLAS's worker threads spin for a while after each threaded call and would steal the
   * second core from the OpenMP columns measured next, so every OpenBLAS column is measured after
   * all the others, and the table is printed at the end. */
  enum { MAX_SHAPES = 32 };
  double gf[MAX_SHAPES][K_COUNT] = {{0}};
  if (nshapes > MAX_SHAPES) die("bench_gemm: more than %d shapes", MAX_SHAPES);
  const Kind order[][3] = {{K_BUILTIN1, K_BUILTIN, K_GEMM}, {K_BLAS1, K_COUNT, K_COUNT},
                           {K_BLAS, K_COUNT, K_COUNT}};
  fprintf(stderr, "measuring");
  for (int pass = 0; pass < (have_blas ? 3 : 1); pass++)
    for (int i = 0; i < nshapes; i++) {
      const Shape *s = &shapes[i];
      if (quick && (long)s->m * s->n * s->k * s->count > 6000000000L) continue; /* 2048^2 */
      long nA = (long)s->m * s->k * s->count, nB = (long)s->k * s->n * s->count;
      float *A = rand_buf(nA), *B = rand_buf(nB), *C = rand_buf((long)s->m * s->n * s->count);
      for (int j = 0; j < 3 && order[pass][j] != K_COUNT; j++)
        gf[i][order[pass][j]] = bench_one(order[pass][j], s, A, B, C);
      free(A);
      free(B);
      free(C);
      fprintf(stderr, ".");
    }
  fprintf(stderr, "\n");
  for (int i = 0; i < nshapes; i++) {
    if (gf[i][K_BUILTIN1] == 0) continue; /* skipped (--quick) */
    printf("%-38s", shapes[i].label);
    for (int kd = 0; kd < K_COUNT; kd++)
      if (have_blas || (kd != K_BLAS1 && kd != K_BLAS)) printf(" %11.1f", gf[i][kd]);
    printf("\n");
  }
  printf("\npeak: %.0f GFLOP/s measured on 1 thread, %.0f on %d together (%.0f if they scaled "
         "perfectly)\n",
         p1, pn, g_threads, p1 * g_threads);
  return 0;
}
