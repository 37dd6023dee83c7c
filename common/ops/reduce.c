/* ops/reduce.c — sums and means, over one dim or over everything. Kernels: cpu/cpu_reduce.c.
 *
 * Reducing dim d views a tensor as (outer, n, inner): outer = the product of the dims before d,
 * n = shape[d], inner = the product of the dims after d. The output is (outer, inner), shaped
 * with d removed (or kept as size 1 with keepdim). The backward broadcasts the gradient back:
 * every one of the n elements that fed an output gets that output's gradient (times 1/n for
 * a mean).
 */
#include "front.h"

typedef struct {
  long outer, n, inner;
} ReduceView;

static ReduceView reduce_view(const Tensor *a, int d) {
  ReduceView v = {1, a->shape[d], 1};
  for (int i = 0; i < d; i++) v.outer *= a->shape[i];
  for (int i = d + 1; i < a->ndim; i++) v.inner *= a->shape[i];
  return v;
}

/* out->iarg[0] = the reduced dim (normalized), out->farg[0] = the scale (1 or 1/n). */
static void reduce_backward(Tensor *out) {
  Tensor *a = out->in[0];
  ReduceView v = reduce_view(a, out->iarg[0]);
  KERNEL(out->device, reduce_grad, tensor_grad(a), out->grad, v.outer, v.n, v.inner,
         out->farg[0]);
}

static Tensor *reduce_dim(const char *op, Tensor *a, int dim, bool keepdim, bool mean) {
  need(op, "an input", a);
  int d = dim < 0 ? dim + a->ndim : dim;
  if (d < 0 || d >= a->ndim) {
    char s[64];
    tensor_error(op, "dim %d is out of range for a tensor of shape %s; use 0..%d, or -%d..-1 "
                 "to count from the last dim", dim, shape_str(a, s, sizeof s), a->ndim - 1,
                 a->ndim);
  }
  int shape[T_MAXDIM], ndim = 0;
  for (int i = 0; i < a->ndim; i++) {
    if (i != d)
      shape[ndim++] = a->shape[i];
    else if (keepdim)
      shape[ndim++] = 1;
  }
  if (ndim == 0) shape[ndim++] = 1; /* a 1-D tensor reduces to (1): there are no 0-d tensors */
  Tensor *out = new_on(a, ndim, shape, op);
  ReduceView v = reduce_view(a, d);
  float scale = mean ? 1.0f / (float)v.n : 1.0f;
  KERNEL(a->device, reduce, a->data, out->data, v.outer, v.n, v.inner, scale);
  if (ag_needs_grad(a, NULL, NULL)) {
    ag_record(out, reduce_backward, a, NULL, NULL);
    out->iarg[0] = d;
    out->farg[0] = scale;
  }
  return out;
}

Tensor *t_sum(Tensor *a, int dim, bool keepdim) {
  return reduce_dim("t_sum", a, dim, keepdim, false);
}

Tensor *t_mean(Tensor *a, int dim, bool keepdim) {
  return reduce_dim("t_mean", a, dim, keepdim, true);
}

/* ---------- over every element -> (1) ---------- */

static void reduce_all_backward(Tensor *out) { /* every element gets scale * g */
  Tensor *a = out->in[0];
  bool fresh;
  float *ga = tensor_grad_fresh(a, &fresh);
  KERNEL(out->device, reduce_all_grad, ga, out->grad, out->farg[0], a->size, fresh);
}

static Tensor *reduce_all(const char *op, Tensor *a, bool mean) {
  need(op, "an input", a);
  Tensor *out = new_on(a, 1, (int[]){1}, op);
  float scale = mean ? 1.0f / (float)a->size : 1.0f;
  KERNEL(a->device, reduce_all, a->data, a->size, scale, out->data);
  if (ag_needs_grad(a, NULL, NULL)) {
    ag_record(out, reduce_all_backward, a, NULL, NULL);
    out->farg[0] = scale;
  }
  return out;
}

Tensor *t_sum_all(Tensor *a) { return reduce_all("t_sum_all", a, false); }
Tensor *t_mean_all(Tensor *a) { return reduce_all("t_mean_all", a, true); }
