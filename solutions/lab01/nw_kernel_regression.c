/* Exercises 1.3 and 1.4 — parametric attention pooling (reference solution).
 * See labs/lab01/nw_kernel_regression.c for the spec. */
#include "lab01/lab01.h"

Tensor *NWKernelRegression_forward(NWKernelRegression *net, Tensor *queries, Tensor *keys,
                                   Tensor *values) {
  char b1[48], b2[48], b3[48];
  if (queries->ndim != 1 || keys->ndim != 2 || keys->shape[0] != queries->shape[0] ||
      !tensor_same_shape(keys, values))
    tensor_error("NWKernelRegression_forward",
                 "expects queries (m), keys (m, n), values (m, n); got %s, %s and %s",
                 shape_str(queries, b1, sizeof b1), shape_str(keys, b2, sizeof b2),
                 shape_str(values, b3, sizeof b3));
  const int m = keys->shape[0], n = keys->shape[1];
  Tensor *q = t_reshape(queries, 2, (int[]){m, 1});        /* (m, 1): broadcast over keys */
  Tensor *d = t_mul(t_sub(q, keys), net->w);                /* (m, n) (q - k) w */
  Tensor *scores = t_scale(t_square(d), -0.5f);             /* (m, n) -((q - k) w)^2 / 2 */
  net->attention_weights = t_softmax(scores);               /* (m, n) over the keys */
  Tensor *y = t_bmm(t_reshape(net->attention_weights, 3, (int[]){m, 1, n}),
                    t_reshape(values, 3, (int[]){m, n, 1})); /* (m, 1, 1) */
  return t_reshape(y, 1, (int[]){m});                       /* (m) */
}

Tensor *leave_one_out(Tensor *x) {
  char b[48];
  if (x->ndim != 1 || x->size < 2)
    tensor_error("leave_one_out", "expects a vector of at least 2 entries, got %s",
                 shape_str(x, b, sizeof b));
  const int n = (int)x->size;
  const float *xh = host_read(x); /* built on the host, then one copy to x's device */
  float *out = arena_alloc(sizeof(float) * (size_t)n * (size_t)(n - 1)); /* (n, n - 1) */
  for (int i = 0; i < n; i++) {
    float *row = out + (long)i * (n - 1);
    for (int j = 0, c = 0; j < n; j++)
      if (j != i) row[c++] = xh[j];
  }
  Tensor *t = tensor_new_on(x->device, 2, (int[]){n, n - 1});
  tensor_copy_from_host(t, out);
  return t;
}
