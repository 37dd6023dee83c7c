/* Exercise 1.1 — the four kernels (reference solution). See labs/lab01/kernels.c for the spec.
 * Each is one pass over n floats, in float32 like the book's torch code. */
#include <math.h>

#include "lab01/lab01.h"

float *gaussian_kernel(const float *u, float *out, long n, double width) {
  /* torch.exp(-x**2 / (2*sigma**2)): the scalar 2 sigma^2 is formed in double by Python and
   * rounded to float32 once; then negate the square and divide, in float. */
  const float den = (float)(2.0 * (width * width));
  for (long i = 0; i < n; i++) out[i] = expf(-(u[i] * u[i]) / den);
  return out;
}

float *boxcar_kernel(const float *u, float *out, long n, double width) {
  const float w = (float)width;
  for (long i = 0; i < n; i++) out[i] = fabsf(u[i]) < w ? 1.0f : 0.0f;
  return out;
}

float *constant_kernel(const float *u, float *out, long n, double width) {
  (void)u, (void)width;
  for (long i = 0; i < n; i++) out[i] = 1.0f;
  return out;
}

float *epanechnikov_kernel(const float *u, float *out, long n, double width) {
  /* width 1 (the book's) is a pure 1 - |u|; dividing by 1.0f is exact, so one formula serves */
  const float w = (float)width;
  for (long i = 0; i < n; i++) {
    float v = 1.0f - fabsf(u[i]) / w;
    out[i] = v > 0.0f ? v : 0.0f;
  }
  return out;
}
