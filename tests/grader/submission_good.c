/* The well-behaved submission of the fake lab 99: every exercise answered. */
#include <time.h>

#include "fake_lab.h"

double fake_square(double x) { return x * x; }
double fake_exit_zero(double x) { return x * x; }
double fake_underscore_exit(double x) { return x * x; }
double fake_print_pass(double x) { return x * x; }
double fake_flood(double x) { return x * x; }
double fake_write_results(double x) { return x * x; }
double fake_segfault(double x) { return x * x; }
double fake_recurse(double x) { return x * x; }
double fake_abort(double x) { return x * x; }
double fake_loop(double x) { return x * x; }
double fake_alloc(double x) { return x * x; }
double fake_forge_verdict(double x) { return x * x; }
double fake_grandchild(double x) { return x * x; }
double fake_poison(double x) { return x * x; }
double fake_interpose(double x) { return x * x; }
double fake_stub(double x) { return x * x; }
double fake_wrong(double x) { return x * x; }

double fake_slow(double x) {
  nanosleep(&(struct timespec){1, 200000000}, NULL);
  return x * x;
}

Tensor *fake_matrix(int pattern) {
  (void)pattern;
  Tensor *y = tensor_new(SHAPE(2, 3, 3)); /* (b, i, j) */
  for (int b = 0; b < 2; b++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        y->data[(b * 3 + i) * 3 + j] = (float)(1 + b + 0.5 * i - 0.3 * j * j + 0.1 * i * j);
  return y;
}

Tensor *fake_double(Tensor *x) {
  Tensor *y = tensor_new(x->ndim, x->shape);
  for (long i = 0; i < x->size; i++) y->data[i] = 2 * x->data[i];
  return y;
}

Tensor *fake_row_sums(Tensor *x) {
  int rows = x->shape[0], cols = x->shape[1];
  Tensor *y = tensor_new(SHAPE(rows)); /* (rows) */
  for (int i = 0; i < rows; i++) {
    float s = 0;
    for (int j = 0; j < cols; j++) s += x->data[i * cols + j];
    y->data[i] = s;
  }
  return y;
}
