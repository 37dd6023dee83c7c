/* Attack 35 (issue 25, the observed/expected split): odd floats against the new rule that an
 * expected NaN is matched only by a NaN. Every prediction and weight is NaN, the unsupported
 * count is 1 (right for the test that expects one NaN prediction), so a comparison that let
 * NaN through (|got - want| > tol is false for NaN) or matched NaN to anything would pass.
 * Expected: only the unsupported query's NaN matches; every other value fails: wrong answer on
 * every nadaraya_watson test, 0/95. */
#include <math.h>

#include "lab01/lab01.h"

Tensor *nadaraya_watson(Tensor *x_train, Tensor *y_train, Tensor *queries, KernelFn kernel,
                        double width, Tensor **attention_weights, int *n_unsupported) {
  (void)y_train, (void)kernel, (void)width;
  int m = (int)queries->size, n = (int)x_train->size;
  Tensor *y = tensor_full(1, (int[]){m}, NAN);
  if (attention_weights) *attention_weights = tensor_full(2, (int[]){m, n}, NAN);
  if (n_unsupported) *n_unsupported = 1;
  return y;
}
