/* exercises.cu — the kernel track's seam (cuda/README.md, "Kernel exercises"). Each kernel
 * exercise is a launcher a student writes (labs/labNN/NAME.cu; the build links the VARIANT's copy,
 * labs/ or solutions/) with the signature its lab's labNN_kernels.h declares. Here each one is
 * installed into the CUDA table entry it implements, so `--device cuda` runs the student's
 * kernel. A launcher that returns -1 (its stub) is asked once: from then on its entry runs the
 * kit's own kernel, with one note a run, so a student who has not started the kernel track
 * still runs the labs on a GPU (the grade calls the launcher directly: a stub scores 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.cuh"
#include "profile.h"
extern "C" {
#include "../labs/lab02/lab02_kernels.h"
#include "../labs/lab04/lab04_kernels.h"
#include "../labs/lab05/lab05_kernels.h"
#include "../labs/lab06/lab06_kernels.h"
}

/* The stub already said it is not implemented (exercise_todo); say what runs instead. */
static void fallback_note(const char *number, const char *what) {
  fflush(stdout);
  fprintf(stderr, "note: until exercise %s is done, --device cuda computes %s with the kit's "
          "own kernel\n", number, what);
}

/* ---------- 5.2 the positional-encoding table (lab 05) ---------- */

/* The kit's kernel: one thread per element of P (rows, d), a grid-stride loop; the angle in
 * float32 as exercise 5.1's reference computes it. */
/* local memory accepted (posenc_kit_kernel): sinf and cosf keep a small array in local memory
 * for their slow path, the reduction of huge angles (Payne-Hanek); the angles here are below
 * the table's length, which never takes it */
static __global__ void posenc_kit_kernel(float *P, int row0, int rows, int d) {
  const long n = (long)rows * d;
  for (long e = first_index(); e < n; e += grid_stride()) {
    const int r = (int)(e / d), c = (int)(e % d);
    const float x = (float)(row0 + r) / powf(10000.0f, (float)(c & ~1) / (float)d);
    P[e] = (c & 1) ? cosf(x) : sinf(x);
  }
}

static bool g_posenc_stub; /* positional_encoding_cuda returned -1: the kit's kernel runs */
static void posenc_entry(float *P, int row0, int rows, int d) {
  if (!g_posenc_stub) {
    if (positional_encoding_cuda(P, row0, rows, d) == 0) return;
    g_posenc_stub = true;
    fallback_note("5.2", "the positional-encoding table");
  }
  const long n = (long)rows * d;
  LAUNCH(posenc_kit_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, P, row0, rows, d);
}

/* ---------- 2.6 masked softmax, one warp per row (lab 02) ---------- */

/* The student's kernel is every softmax of --device cuda: the `softmax` entry (no lengths; a
 * masked softmax is exercise 2.1's composition, sequence_mask with -inf and then this) and its
 * gradient. The kit's own kernels (softmax.cu, registered before this) are the fallback. */
static void (*g_kit_softmax)(const float *, float *, long, int);
static void (*g_kit_softmax_grad)(const float *, const float *, float *, long, int, bool);
static bool g_softmax_stub, g_softmax_grad_stub;
static void softmax_entry(const float *x, float *y, long rows, int keys) {
  if (rows <= 0 || keys <= 0) return; /* the table's contract; the exercise's needs >= 1 */
  if (!g_softmax_stub) {
    if (masked_softmax_cuda(x, y, NULL, 1, rows, keys) == 0) return;
    g_softmax_stub = true;
    fallback_note("2.6", "the softmax");
  }
  g_kit_softmax(x, y, rows, keys);
}
static void softmax_grad_entry(const float *y, const float *g, float *dx, long rows, int keys,
                               bool fresh) {
  if (rows <= 0 || keys <= 0) return;
  if (!g_softmax_grad_stub) {
    if (masked_softmax_cuda_backward(y, g, dx, rows, keys, fresh) == 0) return;
    g_softmax_grad_stub = true;
    fallback_note("2.6", "the softmax's backward");
  }
  g_kit_softmax_grad(y, g, dx, rows, keys, fresh);
}

/* ---------- 6.8 fused attention (lab 06) ---------- */

/* The kit's kernel is attention.cu's (the family registered it before this seam). Heads past
 * the exercise's 64 floats go to it too: its error names the limit. */
static void (*kit_attention)(const float *Q, const float *K, const float *V, const int *len,
                             long per, float *O, int B, int Tq, int Tk, int d, int dv,
                             float scale);
static bool g_flash_stub; /* flash_attention_cuda returned -1: the kit's kernel runs */
static void attention_entry(const float *Q, const float *K, const float *V, const int *len,
                            long per, float *O, int B, int Tq, int Tk, int d, int dv,
                            float scale) {
  if (!g_flash_stub && d <= 64 && dv <= 64) {
    if (flash_attention_cuda(Q, K, V, len, per, O, B, Tq, Tk, d, dv, scale) == 0) return;
    g_flash_stub = true;
    fallback_note("6.8", "the fused attention");
  }
  kit_attention(Q, K, V, len, per, O, B, Tq, Tk, d, dv, scale);
}

/* ---------- 4.4, 4.5 the permute of transpose_qkv / transpose_output (lab 04) ---------- */

/* The kit's permute (shape.cu): what runs for every other permutation, and until 4.4 is done. */
static void (*g_kit_permute)(float *in, float *outp, const int *oshape, const long *sstride,
                             PermuteMode mode);
static bool g_permute_tiled_stub, g_permute_naive_stub;

/* The student's permute0213 (the tiled one, else the naive one) on x (A, B, C, D) -> y
 * (A, C, B, D); false when neither is implemented, or when rows are longer than 4.5's tile
 * holds (D > 1024: the kit's kernel is coalesced on such rows as it is). */
static bool student_permute0213(const float *x, float *y, int A, int B, int C, int D, int acc) {
  if (D > 1024) return false;
  if (!g_permute_tiled_stub) {
    if (permute0213_tiled_cuda(x, y, A, B, C, D, acc) == 0) return true;
    g_permute_tiled_stub = true;
    fflush(stdout);
    fprintf(stderr, "note: until exercise 4.5 is done, --device cuda computes the permute of "
            "transpose_qkv with your kernel of 4.4 (until that is done too, the kit's own)\n");
  }
  if (!g_permute_naive_stub) {
    if (permute0213_naive_cuda(x, y, A, B, C, D, acc) == 0) return true;
    g_permute_naive_stub = true;
    fallback_note("4.4", "the permute of transpose_qkv");
  }
  return false;
}

/* The front's plan (ops/shape.c, permute_geometry) is the output's shape (4 dims, leading 1s)
 * and, per output dim, the input stride it steps. perm {0, 2, 1, 3} of an input (A, B, C, D)
 * is the output (A, C, B, D) with strides (B C D, D, C D, 1): the exercises' case, forward
 * (gather: outp from in) and backward (in (+)= the inverse permute of outp, which is the same
 * swap read from outp's side). Every other permutation runs the kit's kernel. */
static void permute_entry(float *in, float *outp, const int *oshape, const long *sstride,
                          PermuteMode mode) {
  const int A = oshape[0], C = oshape[1], B = oshape[2], D = oshape[3];
  const bool swap12 = sstride[3] == 1 && sstride[1] == D && sstride[2] == (long)C * D &&
                      (A == 1 || sstride[0] == (long)B * C * D);
  if (swap12 && (long)A * B * C * D > 0) {
    if (mode == PW_GATHER ? student_permute0213(in, outp, A, B, C, D, 0)
                          : student_permute0213(outp, in, A, C, B, D, mode == PW_ADD))
      return;
  }
  g_kit_permute(in, outp, oshape, sstride, mode);
}

/* One kernel's permute on fresh device memory, profiled (profile.h). */
extern "C" int cuda_permute0213_profile(PermuteKernel which, int A, int B, int C, int D,
                                        CudaKernelProfile *out) {
  const long n = (long)A * B * C * D;
  float *x, *y;
  CUDA_CHECK(cudaMalloc((void **)&x, sizeof(float) * (size_t)n));
  CUDA_CHECK(cudaMalloc((void **)&y, sizeof(float) * (size_t)n));
  CUDA_CHECK(cudaMemset(x, 0, sizeof(float) * (size_t)n));
  int rc = 0;
  if (!cuda_profile_start()) {
    rc = -2;
  } else {
    if (which == PERMUTE_BY_KIT) {
      const int oshape[T_MAXDIM] = {A, C, B, D};
      const long sstride[T_MAXDIM] = {(long)B * C * D, D, (long)C * D, 1};
      g_kit_permute(x, y, oshape, sstride, PW_GATHER);
    } else {
      rc = (which == PERMUTE_BY_TILED ? permute0213_tiled_cuda : permute0213_naive_cuda)(
          x, y, A, B, C, D, 0);
    }
    enum { MAX = 8 };
    CudaKernelProfile p[MAX];
    const int k = cuda_profile_stop(p, MAX);
    CudaKernelProfile sum = {};
    sum.kernel = k ? p[0].kernel : "";
    for (int i = 0; i < k; i++) {
      sum.launches += p[i].launches, sum.threads += p[i].threads;
      sum.ld_req += p[i].ld_req, sum.ld_sectors += p[i].ld_sectors;
      sum.st_req += p[i].st_req, sum.st_sectors += p[i].st_sectors;
      sum.atomics += p[i].atomics, sum.sh_req += p[i].sh_req;
      sum.sh_wavefronts += p[i].sh_wavefronts;
    }
    *out = sum;
  }
  CUDA_CHECK(cudaFree(x));
  CUDA_CHECK(cudaFree(y));
  return rc;
}

/* ---------- 6.7 layer norm (lab 06) ---------- */

static void (*g_kit_layer_norm)(const float *x, const float *gamma, const float *beta, float *y,
                                float *stats, long rows, int D, float eps);
static void (*g_kit_layer_norm_grad)(const float *x, const float *gamma, const float *stats,
                                     const float *g, float *dx, float *dgamma, float *dbeta,
                                     long rows, int D, bool fresh);
static bool g_ln_stub, g_ln_grad_stub;

static void layer_norm_entry(const float *x, const float *gamma, const float *beta, float *y,
                             float *stats, long rows, int D, float eps) {
  if (rows > 0 && D > 0 && !g_ln_stub) {
    if (layer_norm_cuda(x, gamma, beta, y, stats, rows, D, eps) == 0) return;
    g_ln_stub = true;
    fallback_note("6.7", "layer norm");
  }
  g_kit_layer_norm(x, gamma, beta, y, stats, rows, D, eps);
}

static void layer_norm_grad_entry(const float *x, const float *gamma, const float *stats,
                                  const float *g, float *dx, float *dgamma, float *dbeta,
                                  long rows, int D, bool fresh) {
  if (rows > 0 && D > 0 && !g_ln_grad_stub) {
    if (layer_norm_grad_cuda(x, gamma, stats, g, dx, dgamma, dbeta, rows, D, fresh) == 0) return;
    g_ln_grad_stub = true;
    fallback_note("6.7", "layer norm's backward");
  }
  g_kit_layer_norm_grad(x, gamma, stats, g, dx, dgamma, dbeta, rows, D, fresh);
}

void cuda_register_exercises(Backend *be) {
  be->positional_encoding = posenc_entry;
  kit_attention = be->attention;
  be->attention = attention_entry;
  g_kit_softmax = be->softmax, g_kit_softmax_grad = be->softmax_grad;
  be->softmax = softmax_entry, be->softmax_grad = softmax_grad_entry;
  /* AL_CUDA_KIT_KERNELS=1: every entry runs the kit's own kernel, as for stubs, without the
   * notes (tests/suites/cuda.sh checks the fallbacks this way: the solutions' build never
   * reaches them otherwise) */
  const char *kit = getenv("AL_CUDA_KIT_KERNELS");
  if (kit && strcmp(kit, "1") == 0)
    g_posenc_stub = g_softmax_stub = g_softmax_grad_stub = g_flash_stub = g_permute_tiled_stub =
        g_permute_naive_stub = g_ln_stub = g_ln_grad_stub = true;
  g_kit_permute = be->permute, be->permute = permute_entry;
  g_kit_layer_norm = be->layer_norm, be->layer_norm = layer_norm_entry;
  g_kit_layer_norm_grad = be->layer_norm_grad, be->layer_norm_grad = layer_norm_grad_entry;
}
