/* Graded tests of exercise 1.1, the four kernels (labs/lab01/kernels.c). 5 points.
 * Expected values exist only in the reference build (GRADE_REF, tests/grade/grade.h). */
#include <math.h>

#include "../grade.h"
#include "lab01/lab01.h"

static const float U[7] = {-2.0f, -1.0f, -0.5f, 0.0f, 0.25f, 1.0f, 1.5f};

/* Run a kernel on a copy of U; NULL (and a failure) when it returned anything but out. */
static const float *run(KernelFn k, double width, float *out, const char *what) {
  float *got = k(U, out, 7, width);
  if (!got) {
    grade_fail(__FILE__, __LINE__, "%s: got NULL (not implemented yet?)", what);
    return NULL;
  }
  if (got != out) {
    grade_fail(__FILE__, __LINE__, "%s: must return its `out` argument", what);
    return NULL;
  }
  return got;
}

GRADED_TEST(lab01_gaussian_kernel, 2, "1.1 gaussian_kernel: exp(-u^2 / (2 width^2))") {
  static const double widths[3] = {1.0, 0.5, 2.0};
  for (int w = 0; w < 3; w++) {
    float out[7];
    char what[64];
    snprintf(what, sizeof what, "gaussian_kernel(u, width %g)", widths[w]);
    const float *got = run(gaussian_kernel, widths[w], out, what);
    if (!got) return;
#if GRADE_REF
    float want[7];
    for (int i = 0; i < 7; i++)
      want[i] = (float)exp(-(double)U[i] * U[i] / (2 * widths[w] * widths[w]));
#endif
    /* 1e-6: float32 exp, no normalizing factor 1/sqrt(2 pi) (K(0) must be exactly 1) */
    EXPECT_CLOSE(got, want, 7, 1e-6, 1e-5, what);
  }
  float inplace[3] = {0.0f, 1.0f, -3.0f}; /* out may alias u */
  float *got = gaussian_kernel(inplace, inplace, 3, 1.0);
  EXPECT_NOT_NULL(got, "gaussian_kernel in place");
  EXPECT_NEAR(inplace[1], exp(-0.5), 1e-6, "gaussian_kernel in place, u = 1");
  EXPECT_NEAR(inplace[2], exp(-4.5), 1e-6, "gaussian_kernel in place, u = -3");
}

GRADED_TEST(lab01_boxcar_kernel, 1, "1.1 boxcar_kernel: 1 if |u| < width else 0") {
  float out[7];
  const float *got = run(boxcar_kernel, 1.0, out, "boxcar_kernel(u, width 1)");
  if (!got) return;
  /* |u| = 1 is outside: the book's torch.abs(x) < 1.0 is strict */
  EXPECT_CLOSE(got, ((const float[]){0, 0, 1, 1, 1, 0, 0}), 7, 0, 0,
               "boxcar_kernel(u = {-2, -1, -0.5, 0, 0.25, 1, 1.5}, width 1) output");
  got = run(boxcar_kernel, 2.0, out, "boxcar_kernel(u, width 2)");
  if (!got) return;
  EXPECT_CLOSE(got, ((const float[]){0, 1, 1, 1, 1, 1, 1}), 7, 0, 0,
               "boxcar_kernel(u = {-2, -1, -0.5, 0, 0.25, 1, 1.5}, width 2) output");
}

GRADED_TEST(lab01_constant_kernel, 1, "1.1 constant_kernel: 1 everywhere") {
  float out[7];
  const float *got = run(constant_kernel, 0.1, out, "constant_kernel(u, width 0.1)");
  if (!got) return;
  EXPECT_CLOSE(got, ((const float[]){1, 1, 1, 1, 1, 1, 1}), 7, 0, 0,
               "constant_kernel (it ignores u and the width)");
}

GRADED_TEST(lab01_epanechnikov_kernel, 1, "1.1 epanechnikov_kernel: max(0, 1 - |u| / width)") {
  float out[7];
  const float *got = run(epanechnikov_kernel, 1.0, out, "epanechnikov_kernel(u, width 1)");
  if (!got) return;
  EXPECT_CLOSE(got, ((const float[]){0, 0, 0.5f, 1, 0.75f, 0, 0}), 7, 1e-7, 0,
               "epanechnikov_kernel(u, width 1)"); /* exact in float */
  got = run(epanechnikov_kernel, 2.0, out, "epanechnikov_kernel(u, width 2)");
  if (!got) return;
  EXPECT_CLOSE(got, ((const float[]){0, 0.5f, 0.75f, 1, 0.875f, 0.5f, 0.25f}), 7, 1e-7, 0,
               "epanechnikov_kernel(u, width 2)"); /* exact in float */
}
