/* cpu_optim.c — the CPU kernels of minibatch SGD, Adam (as torch.optim.Adam computes it) and
 * global gradient clipping (optim.c), each over one block: a model's parameters, gradients and
 * moments are one buffer each. */
#include <math.h>

#include "kernels.h"

/* ---------- SGD ---------- */

void cpu_sgd(float *restrict w, const float *restrict g, float lr, long n) {
  for (long j = 0; j < n; j++) w[j] -= lr * g[j];
}

/* ---------- Adam ---------- */

/* m <- b1 m + (1-b1) g;  v <- b2 v + (1-b2) g^2;
 * p <- p - lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)   (eps after the sqrt, as torch);
 * step = lr / (1 - b1^t) and inv_sqrt_bc2 = 1 / sqrt(1 - b2^t) come from the front. */
void cpu_adam(float *restrict w, const float *restrict g, float *restrict m, float *restrict v,
              long n, float b1, float b2, float step, float inv_sqrt_bc2, float eps) {
  /* A pass over seven streams of n floats, between two training steps when nothing else runs:
   * both cores take half (a small but steady gain on lab06's 1.7 M parameters).
   * Each element alone, so the split changes no result. */
#pragma omp parallel for simd schedule(static) if (n >= (1L << 18))
  for (long j = 0; j < n; j++) {
    m[j] = b1 * m[j] + (1.0f - b1) * g[j];
    v[j] = b2 * v[j] + (1.0f - b2) * g[j] * g[j];
    w[j] -= step * m[j] / (sqrtf(v[j]) * inv_sqrt_bc2 + eps);
  }
}

/* ---------- gradient clipping ---------- */

/* sum of g^2 over the gradient block, for d2l's grad_clipping (optim.c) */
double cpu_sum_squares(const float *g, long n) {
  double sq = 0;
  {
    /* partial sums in double (millions of small squares), in 8 independent lanes so the loop
     * vectorizes: one running sum is a chain of dependent adds, which without -ffast-math the
     * compiler may not reorder */
    double lane[8] = {0}, s = 0;
    long j = 0;
    for (; j + 8 <= n; j += 8)
      for (int k = 0; k < 8; k++) lane[k] += (double)g[j + k] * g[j + k];
    for (; j < n; j++) s += (double)g[j] * g[j];
    for (int k = 0; k < 8; k++) s += lane[k];
    sq += s;
  }
  return sq;
}

/* g *= max_norm / ||g|| where the norm is larger; the norm to *norm */
void cpu_clip_grad(float *g, long n, float max_norm, float *norm) {
  const double nrm = sqrt(cpu_sum_squares(g, n));
  if (nrm > max_norm) cpu_unary(UN_SCALE, (float)(max_norm / nrm), g, g, n);
  *norm = (float)nrm;
}
