/* gradcheck.c — finite-difference gradient checks for the unit tests.
 *
 * The reference derivative of loss = sum(f(x) * R) with respect to each input element is a
 * Richardson-extrapolated central difference: D(h) = (L(x+h) - L(x-h)) / (2h) has error
 * c2 h^2 + c4 h^4 + ..., so (4 D(h/2) - D(h)) / 3 cancels the h^2 term. The loss is summed in
 * double and each difference divides by the step actually taken in float32 (x + h rounds), so
 * what remains is the float32 rounding of the forward pass itself, of order 1e-7 |L| / h.
 *
 * The error of one input's gradient is max_j |analytic_j - numeric_j| / max_j |numeric_j|:
 * measured against the size of that input's whole gradient, so a backward that is off by a
 * constant factor (1.01) shows as 1e-2, and one wrong element among many still shows in full,
 * while entries near zero do not turn rounding noise into large relative errors. */
#include <stdlib.h>

#include "../common/ops.h"
#include "../common/rng.h"
#include "test.h"

/* sum(out * R) in double, so the loss itself adds little rounding to the differences. */
static double weighted_sum(const Tensor *out, const float *R) {
  double s = 0;
  for (long i = 0; i < out->size; i++) s += (double)out->data[i] * R[i];
  return s;
}

/* Central difference of the loss in x->data[j] with step h (the float32 step actually taken). */
static double central_diff(GradFn f, Tensor **inputs, void *ctx, const float *R, Tensor *x,
                           long j, double h) {
  const float orig = x->data[j];
  const float xp = (float)(orig + h), xm = (float)(orig - h);
  x->data[j] = xp;
  double lp = weighted_sum(f(inputs, ctx), R);
  x->data[j] = xm;
  double lm = weighted_sum(f(inputs, ctx), R);
  x->data[j] = orig;
  return (lp - lm) / ((double)xp - (double)xm);
}

static unsigned long g_seed = 99; /* the weights R; gradcheck_seed changes them */
void gradcheck_seed(unsigned long seed) { g_seed = seed; }

/* The worst error over the inputs; with record, a test failure at the first input above tol. */
static double check(const char *what, GradFn f, Tensor **inputs, int n, void *ctx, double eps,
                    double tol, bool record) {
  for (int i = 0; i < n; i++) {
    inputs[i]->requires_grad = true;
    inputs[i]->grad = NULL;
  }
  Rng r;
  rng_init(&r, g_seed);
  Tensor *out = f(inputs, ctx);
  float *R = malloc(sizeof(float) * (size_t)out->size);
  for (long i = 0; i < out->size; i++) R[i] = rng_uniform(&r, -1.0f, 1.0f);
  ag_backward_with(out, R);
  double worst = 0;
  bool save = ag_grad_enabled();
  ag_set_grad_enabled(false);
  for (int i = 0; i < n; i++) {
    Tensor *x = inputs[i];
    const float *analytic = tensor_grad(x);
    double *numeric = malloc(sizeof(double) * (size_t)x->size);
    double scale = 0, maxdiff = 0;
    long at = 0;
    for (long j = 0; j < x->size; j++) {
      double d1 = central_diff(f, inputs, ctx, R, x, j, eps);
      double d2 = central_diff(f, inputs, ctx, R, x, j, eps / 2);
      numeric[j] = (4 * d2 - d1) / 3;
      scale = fmax(scale, fabs(numeric[j])); /* a NaN here shows in diff below */
    }
    for (long j = 0; j < x->size; j++) {
      double diff = fabs(numeric[j] - (double)analytic[j]);
      if (isnan(diff)) { /* a NaN anywhere fails the check (comparisons would skip it) */
        maxdiff = NAN, at = j;
        break;
      }
      if (diff > maxdiff || j == 0) maxdiff = diff, at = j;
    }
    /* an all-zero gradient must be matched in absolute terms (1e-6: rounding of order-1 sums) */
    double err = maxdiff / fmax(scale, 1e-6);
    if (!(err <= worst)) worst = err;
    if (record && getenv("AL_GRADCHECK_REPORT"))
      printf("    gradcheck %s input%d: error %.3g (max |grad| %.3g)\n", what, i, err, scale);
    if (record && !(err <= tol)) {
      test_fail(__FILE__, __LINE__,
                "%s: d/d input%d[%ld]: analytic %.6g, numeric %.6g; error %.3g of max |grad| "
                "%.3g > %.3g", what, i, at, (double)analytic[at], numeric[at], err, scale, tol);
      free(numeric);
      ag_set_grad_enabled(save);
      free(R);
      return worst;
    }
    free(numeric);
  }
  ag_set_grad_enabled(save);
  free(R);
  return worst;
}

double gradcheck(const char *what, GradFn f, Tensor **inputs, int n, void *ctx, double eps,
                 double tol) {
  return check(what, f, inputs, n, ctx, eps, tol, true);
}

double gradcheck_error(GradFn f, Tensor **inputs, int n, void *ctx, double eps) {
  return check("", f, inputs, n, ctx, eps, 0, false);
}
