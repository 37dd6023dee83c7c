/* cpu_shape.c — the CPU kernels of the shape ops (ops/shape.c): permute/transpose, concat,
 * slice, repeat_interleave, patchify and copy.
 *
 * Most ops here see a tensor as (outer, dim, inner): the dims before the one they work on, that
 * dim, and the dims after it. In row-major order a block of `inner` floats is contiguous, so the
 * copies are memcpy-sized runs and the backward passes add the same runs back.
 */
#include <string.h>

#include "kernels.h"

/* dst[i] += src[i] for n floats. */
static void add_into(float *dst, const float *src, long n) {
  for (long i = 0; i < n; i++) dst[i] += src[i];
}

static inline void add_run(float *restrict dst, const float *restrict src, int n) {
  int j = 0;
  for (; j + 8 <= n; j += 8)
    for (int k = 0; k < 8; k++) dst[j + k] += src[j + k];
  for (; j < n; j++) dst[j] += src[j];
}

/* ---------- permute / transpose ---------- */

/* What permute_walk does at each element: forward copies in -> outp; backward adds outp (the
 * output gradient) into in (the input gradient), or stores it there when that gradient is
 * fresh (a permutation reaches every input element exactly once). */

/* Walk the output (shape oshape, 4 dims after padding) in row-major order; output index
 * (i0..i3) reads input offset sum(i_k * sstride[k]). When the last dim stays last
 * (sstride[3] == 1, e.g. transpose_qkv's (B,T,H,D) -> (B,H,T,D)) each innermost run is
 * contiguous on both sides: memcpy-like loops the compiler vectorizes. */
/* Permutes of at least this many floats are shared across the threads (every mode writes each
 * element once: a permutation), smaller ones run on one thread: the ViT's transpose_qkv moves
 * 8704 runs of 16 floats per call, and serial it kept the second core waiting. */
#define PERMUTE_PAR_MIN 65536

void cpu_permute(float *in, float *outp, const int *oshape, const long *sstride,
                 PermuteMode mode) {
  const long st = sstride[3];
  const int n = oshape[3], nc = oshape[2];
  const long outer = (long)oshape[0] * oshape[1];
  /* threads share the (a, b) pairs; the runs inside one pair stay in order */
#pragma omp parallel for schedule(static) if (outer * nc * n >= PERMUTE_PAR_MIN)
  for (long ab = 0; ab < outer; ab++) {
    const long a = ab / oshape[1], b = ab % oshape[1];
    float *o = outp + ab * nc * n;
    for (int c = 0; c < nc; c++, o += n) {
      float *base = in + a * sstride[0] + b * sstride[1] + c * sstride[2];
      if (st == 1) {
        if (mode == PW_GATHER)
          cpu_copy_run(o, base, n);
        else if (mode == PW_STORE)
          cpu_copy_run(base, o, n);
        else
          add_run(base, o, n);
      } else if (mode == PW_GATHER) {
        for (int d = 0; d < n; d++) o[d] = base[d * st];
      } else if (mode == PW_STORE) {
        for (int d = 0; d < n; d++) base[d * st] = o[d];
      } else {
        for (int d = 0; d < n; d++) base[d * st] += o[d];
      }
    }
  }
}

/* ---------- concat ---------- */

/* ---------- repeat_interleave ---------- */

/* Output index i along dim came from input index i / repeats: its gradients sum back there. */
void cpu_repeat_interleave_grad(float *dx, const float *g, long outer, int n, int reps,
                                long inner) {
  for (long o = 0; o < outer; o++)
    for (int i = 0; i < n; i++)
      for (int r = 0; r < reps; r++, g += inner) add_into(dx + (o * n + i) * inner, g, inner);
}

/* out (outer, n * repeats, inner): input run i along the dim repeated `repeats` times */
void cpu_repeat_interleave(const float *x, float *out, long outer, int n, int repeats,
                           long inner) {
  float *dst = out;
  for (long o = 0; o < outer; o++)
    for (int i = 0; i < n; i++)
      for (int r = 0; r < repeats; r++, dst += inner)
        memcpy(dst, x + (o * n + i) * inner, sizeof(float) * (size_t)inner);
}

/* ---------- patchify ---------- */

/* Patch (ph, pw) of image b is output row b * (gh*gw) + ph*gw + pw; its feature
 * c*p*p + i*p + j is pixel (c, ph*p + i, pw*p + j). Each (c, i) is a run of p contiguous pixels,
 * so forward and backward move rows of p floats. */
void cpu_patchify(float *img, float *patches, const int *shape, int p, bool backward) {
  int B = shape[0], C = shape[1], H = shape[2], W = shape[3], gh = H / p, gw = W / p;
  float *dst = patches;
  for (int b = 0; b < B; b++)
    for (int ph = 0; ph < gh; ph++)
      for (int pw = 0; pw < gw; pw++)
        for (int c = 0; c < C; c++)
          for (int i = 0; i < p; i++, dst += p) {
            float *src = img + (((long)b * C + c) * H + ph * p + i) * W + (long)pw * p;
            if (backward)
              add_into(src, dst, p);
            else
              memcpy(dst, src, sizeof(float) * (size_t)p);
          }
}

/* ---------- strided rows: concat, slice, copy ---------- */

/* rows of n floats: dst[r * dstride + j] = src[r * sstride + j], or += with add */
void cpu_copy_rows(float *dst, long dstride, const float *src, long sstride, long rows, long n,
                   bool add) {
  for (long o = 0; o < rows; o++) {
    if (add)
      add_into(dst + o * dstride, src + o * sstride, n);
    else
      memcpy(dst + o * dstride, src + o * sstride, sizeof(float) * (size_t)n);
  }
}

void cpu_index_ints(const float *x, int *out, long n, int max) {
  for (long i = 0; i < n; i++) out[i] = x[i] > (float)max ? max : (int)x[i];
}
