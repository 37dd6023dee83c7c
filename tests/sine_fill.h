/* sine_fill.h — the tests' fixed inputs and weights: v[i] = scale * sin(a i + b), in double
 * rounded to float32. Values of order `scale`, reproducible on every machine without an RNG,
 * unrelated enough for different (a, b) that no symmetry hides a wrong index, and the same
 * numbers as gen() of the golden scripts (tests/golden/golden_common.py). Used by the graded
 * tests (tests/grade/) and, through golden_fill / golden_gen, by the unit tests. */
#ifndef AL_SINE_FILL_H
#define AL_SINE_FILL_H

#include <math.h>

#include "../common/tensor.h"

static inline void sine_fill(float *v, long n, double a, double b, double scale) {
  for (long i = 0; i < n; i++) v[i] = (float)(scale * sin(a * (double)i + b));
}

/* Fill all of t. */
static inline void sine_fill_tensor(Tensor *t, double a, double b, double scale) {
  sine_fill(t->data, t->size, a, b, scale);
}

/* A new tensor of the given shape, filled. */
static inline Tensor *sine_tensor(int ndim, const int *shape, double a, double b, double scale) {
  Tensor *t = tensor_new(ndim, shape);
  sine_fill_tensor(t, a, b, scale);
  return t;
}

#endif
