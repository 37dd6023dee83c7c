/* gradcheck.c — central-difference gradient checks for the unit tests. */
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

double gradcheck(const char *what, GradFn f, Tensor **inputs, int n, void *ctx, double eps,
                 double tol) {
  for (int i = 0; i < n; i++) {
    inputs[i]->requires_grad = true;
    inputs[i]->grad = NULL;
  }
  Rng r;
  rng_init(&r, 99);
  Tensor *out = f(inputs, ctx);
  float *R = malloc(sizeof(float) * (size_t)out->size);
  for (long i = 0; i < out->size; i++) R[i] = rng_uniform(&r, -1.0f, 1.0f);
  ag_backward_with(out, R);
  double worst = 0;
  bool save = ag_grad_enabled();
  ag_set_grad_enabled(false);
  for (int i = 0; i < n; i++) {
    Tensor *x = inputs[i];
    float *analytic = tensor_grad(x);
    for (long j = 0; j < x->size; j++) {
      float orig = x->data[j];
      x->data[j] = orig + (float)eps;
      double lp = weighted_sum(f(inputs, ctx), R);
      x->data[j] = orig - (float)eps;
      double lm = weighted_sum(f(inputs, ctx), R);
      x->data[j] = orig;
      double numeric = (lp - lm) / (2 * eps);
      double err = fabs(numeric - analytic[j]) / fmax(1.0, fabs(numeric));
      if (err > worst) worst = err;
      if (err > tol) {
        test_fail(__FILE__, __LINE__, "%s: d/d input%d[%ld]: analytic %.6g, numeric %.6g", what,
                  i, j, (double)analytic[j], numeric);
        ag_set_grad_enabled(save);
        free(R);
        return worst;
      }
    }
  }
  ag_set_grad_enabled(save);
  free(R);
  return worst;
}
