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
extern "C" {
#include "../labs/lab02/lab02_kernels.h"
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
    g_posenc_stub = g_softmax_stub = g_softmax_grad_stub = g_flash_stub = true;
}
