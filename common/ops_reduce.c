/* ops_reduce.c — sums and means, over one dim or over everything.
 *
 * Reducing dim d views a tensor as (outer, n, inner): outer = the product of the dims before d,
 * n = shape[d], inner = the product of the dims after d. The output is (outer, inner), shaped
 * with d removed (or kept as size 1 with keepdim). The backward broadcasts the gradient back:
 * every one of the n elements that fed an output gets that output's gradient (times 1/n for
 * a mean). Long row sums accumulate in double so that a mean over many elements stays exact
 * to float precision.
 */
#include "ops.h"

static void check_cpu(const char *op, const Tensor *t) {
  if (!t) tensor_error(op, "an input is NULL (did an unfinished exercise return NULL?)");
  if (t->device != DEV_CPU)
    tensor_error(op, "got a CUDA tensor, but this build has no CUDA kernel for %s; "
                 "run with --device cpu", op);
}

typedef struct {
  long outer, n, inner;
} ReduceView;

static ReduceView reduce_view(const Tensor *a, int d) {
  ReduceView v = {1, a->shape[d], 1};
  for (int i = 0; i < d; i++) v.outer *= a->shape[i];
  for (int i = d + 1; i < a->ndim; i++) v.inner *= a->shape[i];
  return v;
}

/* sum of x[0..n) in double. Eight independent partial sums let the compiler vectorize; one
 * running sum would be a single long dependency chain (several times slower, since without
 * -ffast-math it may not reorder the additions). */
static double sum_floats(const float *x, long n) {
  double lane[8] = {0};
  long j = 0;
  for (; j + 8 <= n; j += 8)
    for (int k = 0; k < 8; k++) lane[k] += x[j + k];
  double acc = 0;
  for (int k = 0; k < 8; k++) acc += lane[k];
  for (; j < n; j++) acc += x[j];
  return acc;
}

/* out[o, i] = scale * sum_k a[o, k, i] */
static void reduce_forward(const float *a, float *out, ReduceView v, float scale) {
  if (v.inner == 1) { /* reducing the last dim: one row sum per output */
    for (long o = 0; o < v.outer; o++) out[o] = (float)(sum_floats(a + o * v.n, v.n) * scale);
    return;
  }
  /* an inner dim: add whole rows of `inner` elements, a loop that vectorizes */
  for (long o = 0; o < v.outer; o++) {
    float *dst = out + o * v.inner;
    for (long i = 0; i < v.inner; i++) dst[i] = 0.0f;
    for (long k = 0; k < v.n; k++) {
      const float *src = a + (o * v.n + k) * v.inner;
      for (long i = 0; i < v.inner; i++) dst[i] += src[i];
    }
    for (long i = 0; i < v.inner; i++) dst[i] *= scale;
  }
}

/* out->iarg[0] = the reduced dim (normalized), out->farg[0] = the scale (1 or 1/n). */
static void reduce_backward(Tensor *out) {
  Tensor *a = out->in[0];
  ReduceView v = reduce_view(a, out->iarg[0]);
  const float scale = out->farg[0], *g = out->grad;
  float *ga = tensor_grad(a);
  if (v.inner == 1) { /* the last dim: one gradient value per row */
    for (long o = 0; o < v.outer; o++) {
      float *dst = ga + o * v.n;
      const float d = scale * g[o];
      for (long k = 0; k < v.n; k++) dst[k] += d;
    }
    return;
  }
  for (long o = 0; o < v.outer; o++)
    for (long k = 0; k < v.n; k++) {
      float *dst = ga + (o * v.n + k) * v.inner;
      const float *src = g + o * v.inner;
      for (long i = 0; i < v.inner; i++) dst[i] += scale * src[i];
    }
}

static Tensor *reduce_dim(const char *op, Tensor *a, int dim, bool keepdim, bool mean) {
  check_cpu(op, a);
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
  Tensor *out = tensor_new(ndim, shape);
  out->name = op;
  ReduceView v = reduce_view(a, d);
  float scale = mean ? 1.0f / (float)v.n : 1.0f;
  reduce_forward(a->data, out->data, v, scale);
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
  const float dg = out->farg[0] * out->grad[0];
  if (fresh)
    for (long i = 0; i < a->size; i++) ga[i] = dg;
  else
    for (long i = 0; i < a->size; i++) ga[i] += dg;
}

static Tensor *reduce_all(const char *op, Tensor *a, bool mean) {
  check_cpu(op, a);
  Tensor *out = tensor_new(1, (int[]){1});
  out->name = op;
  float scale = mean ? 1.0f / (float)a->size : 1.0f;
  out->data[0] = (float)(sum_floats(a->data, a->size) * scale);
  if (ag_needs_grad(a, NULL, NULL)) {
    ag_record(out, reduce_all_backward, a, NULL, NULL);
    out->farg[0] = scale;
  }
  return out;
}

Tensor *t_sum_all(Tensor *a) { return reduce_all("t_sum_all", a, false); }
Tensor *t_mean_all(Tensor *a) { return reduce_all("t_mean_all", a, true); }
