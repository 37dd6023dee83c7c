/* cpu_reduce.c — the CPU kernels of the sums and means (ops/reduce.c). A reduced tensor is
 * viewed as (outer, n, inner); long row sums accumulate in double so that a mean over many
 * elements stays exact to float precision. */
#include "kernels.h"

/* sum of x[0..n) in double. Eight independent partial sums let the compiler vectorize; one
 * running sum would be a single long dependency chain (several times slower, since without
 * -ffast-math it may not reorder the additions). */
static double sum_floats(const float *x, long n) {
  double lane[8] = {0};
  long j = 0;
  for (; j + 8 <= n; j += 8)
    for (int k = 0; k < 8; k++) lane[k] += x[j + k];
  double acc = 0;
  for (int k = 0; k < 8; k++) acc += lane[k];
  for (; j < n; j++) acc += x[j];
  return acc;
}

/* out[o, i] = scale * sum_k a[o, k, i] */
void cpu_reduce(const float *a, float *out, long outer, long n, long inner, float scale) {
  if (inner == 1) { /* reducing the last dim: one row sum per output */
    for (long o = 0; o < outer; o++) out[o] = (float)(sum_floats(a + o * n, n) * scale);
    return;
  }
  /* an inner dim: add whole rows of `inner` elements, a loop that vectorizes */
  for (long o = 0; o < outer; o++) {
    float *dst = out + o * inner;
    for (long i = 0; i < inner; i++) dst[i] = 0.0f;
    for (long k = 0; k < n; k++) {
      const float *src = a + (o * n + k) * inner;
      for (long i = 0; i < inner; i++) dst[i] += src[i];
    }
    for (long i = 0; i < inner; i++) dst[i] *= scale;
  }
}

/* ga[o, k, i] += scale * g[o, i]: every element that fed an output gets its gradient */
void cpu_reduce_grad(float *ga, const float *g, long outer, long n, long inner, float scale) {
  if (inner == 1) { /* the last dim: one gradient value per row */
    for (long o = 0; o < outer; o++) {
      float *dst = ga + o * n;
      const float d = scale * g[o];
      for (long k = 0; k < n; k++) dst[k] += d;
    }
    return;
  }
  for (long o = 0; o < outer; o++)
    for (long k = 0; k < n; k++) {
      float *dst = ga + (o * n + k) * inner;
      const float *src = g + o * inner;
      for (long i = 0; i < inner; i++) dst[i] += scale * src[i];
    }
}

/* ---------- over every element -> (1) ---------- */

void cpu_reduce_all(const float *a, long n, float scale, float *out1) {
  out1[0] = (float)(sum_floats(a, n) * scale);
}

/* every element gets scale * g (g: one element) */
void cpu_reduce_all_grad(float *ga, const float *g1, float scale, long n, bool fresh) {
  const float dg = scale * g1[0];
  if (fresh)
    for (long i = 0; i < n; i++) ga[i] = dg;
  else
    for (long i = 0; i < n; i++) ga[i] += dg;
}
