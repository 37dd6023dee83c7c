/* Exercise 1.2 — Nadaraya–Watson kernel regression (reference solution).
 * See labs/lab01/nadaraya_watson.c for the spec. Plain loops: the kernels are float functions,
 * not tensor ops, and nothing here is trained. */
#include <math.h>
#include <string.h>

#include "lab01/lab01.h"

Tensor *nadaraya_watson(Tensor *x_train, Tensor *y_train, Tensor *queries, KernelFn kernel,
                        double width, Tensor **attention_weights, int *n_unsupported) {
  char b1[48], b2[48], b3[48];
  if (x_train->ndim != 1 || !tensor_same_shape(x_train, y_train) || queries->ndim != 1)
    tensor_error("nadaraya_watson",
                 "expects x_train (n), y_train (n) and queries (m); got %s, %s and %s",
                 shape_str(x_train, b1, sizeof b1), shape_str(y_train, b2, sizeof b2),
                 shape_str(queries, b3, sizeof b3));
  if (!kernel) tensor_error("nadaraya_watson", "kernel is NULL; pass e.g. gaussian_kernel");
  const int n = (int)x_train->size, m = (int)queries->size;
  /* a host computation (the kernel is a C function on rows): explicit host copies in and out */
  const float *x = host_read(x_train), *y = host_read(y_train), *q = host_read(queries);
  float *A = arena_alloc(sizeof(float) * (size_t)m * (size_t)(n ? n : 1)); /* (queries, keys) */
  float *y_hat = arena_alloc(sizeof(float) * (size_t)(m ? m : 1));        /* (queries) */
  int unsupported = 0;
  for (int i = 0; i < m; i++) {
    float *row = A + (long)i * n;
    for (int j = 0; j < n; j++) row[j] = x[j] - q[i]; /* u = key - query, as the book */
    if (!kernel(row, row, n, width)) return NULL;     /* the kernel is still a stub */
    double s = 0;
    for (int j = 0; j < n; j++) s += row[j];
    const float sum = (float)s;
    if (!(sum > 0.0f)) { /* 0/0: no key within the kernel's support */
      memset(row, 0, sizeof(float) * (size_t)n);
      y_hat[i] = NAN;
      unsupported++;
      continue;
    }
    double acc = 0;
    for (int j = 0; j < n; j++) {
      row[j] /= sum; /* division, not a reciprocal multiply: the same rounding as torch */
      acc += (double)row[j] * y[j];
    }
    y_hat[i] = (float)acc;
  }
  if (attention_weights) *attention_weights = tensor_from(2, (int[]){m, n}, A);
  if (n_unsupported) *n_unsupported = unsupported;
  return tensor_from(1, (int[]){m}, y_hat);
}
