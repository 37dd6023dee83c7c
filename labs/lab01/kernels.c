/* Exercise 1.1 — the four kernels (5 points: Gaussian 2, boxcar 1, constant 1, Epanechnikov 1)
 *
 * What: each function fills out[i] = K(u[i]) for i in [0, n) and returns out. u is the
 *   difference between a query and a key (q - k); `width` rescales the kernel, u -> u / width
 *   (the book's kernels have width 1).
 *     gaussian_kernel       exp(-u^2 / (2 width^2))          (the sigma of "Adapting
 *                                                             Attention Pooling" is the width)
 *     boxcar_kernel         1 if |u| < width, else 0          (strictly less: |u| = width -> 0)
 *     constant_kernel       1 for every u                     (ignores width)
 *     epanechnikov_kernel   max(0, 1 - |u| / width)
 * Shapes: plain float arrays of n elements; out may be the same array as u.
 * Hints: fabsf and expf from <math.h>. Compute in float as the book's PyTorch code does; for
 *   the Gaussian, form the denominator once, in double, as (float)(2 * (width * width)), then
 *   expf(-(u * u) / denominator) — the exact float32 operations of torch.exp(-x**2 / (2*s**2)),
 *   which the golden test compares against.
 * Tests: tests/grade/lab01/test_kernels.c. Run: make grade LAB=01.
 */
#include "lab01/lab01.h"

#include "../../common/exercise.h"

float *gaussian_kernel(const float *u, float *out, long n, double width) {
  (void)u, (void)out, (void)n, (void)width;
  EXERCISE_TODO("1.1", "gaussian_kernel");
  return NULL;
}

float *boxcar_kernel(const float *u, float *out, long n, double width) {
  (void)u, (void)out, (void)n, (void)width;
  EXERCISE_TODO("1.1", "boxcar_kernel");
  return NULL;
}

float *constant_kernel(const float *u, float *out, long n, double width) {
  (void)u, (void)out, (void)n, (void)width;
  EXERCISE_TODO("1.1", "constant_kernel");
  return NULL;
}

float *epanechnikov_kernel(const float *u, float *out, long n, double width) {
  (void)u, (void)out, (void)n, (void)width;
  EXERCISE_TODO("1.1", "epanechnikov_kernel");
  return NULL;
}
