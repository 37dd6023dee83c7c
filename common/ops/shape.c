/* ops/shape.c — reshape (a view), permute/transpose (copies), concat, slice, repeat_interleave,
 * patchify, copy and detach. Kernels: cpu/cpu_shape.c.
 *
 * Most ops here see a tensor as (outer, dim, inner): the dims before the one they work on, that
 * dim, and the dims after it. In row-major order a block of `inner` floats is contiguous, so the
 * copies are memcpy-sized runs and the backward passes add the same runs back.
 */
#include <string.h>

#include "front.h"

/* An input with a host copy (index tensors sent from the host: Tensor.host in tensor.h) gets its
 * output's host copy made too, by the CPU kernel, when a shape op only moves its values: the
 * index checks downstream then read no copy back from the device. */

/* A dim index in [-ndim, ndim) made non-negative. */
static int norm_dim(const char *op, const Tensor *t, int dim) {
  int d = dim < 0 ? dim + t->ndim : dim;
  if (d < 0 || d >= t->ndim) {
    char s[64];
    tensor_error(op, "dim %d is out of range for a tensor of shape %s (valid: %d to %d)", dim,
                 shape_str(t, s, sizeof s), -t->ndim, t->ndim - 1);
  }
  return d;
}

static long outer_of(const Tensor *t, int d) { return shape_numel(d, t->shape); }
static long inner_of(const Tensor *t, int d) {
  return shape_numel(t->ndim - d - 1, t->shape + d + 1);
}

/* A new tensor header that shares x's data (no copy). */
static Tensor *view_of(const Tensor *x, int ndim, const int *shape, const char *name) {
  Tensor *v = arena_calloc(sizeof *v);
  v->ndim = ndim;
  memcpy(v->shape, shape, sizeof(int) * (size_t)ndim);
  v->size = x->size;
  v->data = x->data;
  v->host = x->host;
  v->device = x->device;
  v->name = name;
  return v;
}

/* Backward of t_copy: the gradient passes through unchanged. */
static void identity_backward(Tensor *out) {
  bool fresh;
  float *dx = tensor_grad_fresh(out->in[0], &fresh);
  KERNEL(out->device, copy_rows, dx, 0, out->grad, 0, 1, out->size, !fresh);
}

/* ---------- reshape ---------- */

Tensor *t_reshape(Tensor *x, int ndim, const int *shape) {
  const char *op = "t_reshape";
  need(op, "x", x);
  char sx[64], want[64];
  if (ndim < 1 || ndim > T_MAXDIM)
    tensor_error(op, "a shape has 1 to %d dims, got %d (reshaping %s)", T_MAXDIM, ndim,
                 shape_str(x, sx, sizeof sx));
  /* the requested shape as text, -1 included, for the error messages */
  size_t k = (size_t)snprintf(want, sizeof want, "(");
  for (int i = 0; i < ndim; i++)
    k += (size_t)snprintf(want + k, sizeof want - k, i ? ", %d" : "%d", shape[i]);
  snprintf(want + k, sizeof want - k, ")");

  int s[T_MAXDIM], infer = -1;
  long known = 1;
  for (int i = 0; i < ndim; i++) {
    s[i] = shape[i];
    if (shape[i] == -1) {
      if (infer >= 0) tensor_error(op, "shape %s has more than one -1 dim", want);
      infer = i;
    } else if (shape[i] < 0) {
      tensor_error(op, "shape %s has a negative size (only -1, to infer one dim)", want);
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x->size % known)
      tensor_error(op, "cannot reshape %s (%ld elements) to %s: no size for the -1 dim fits",
                   shape_str(x, sx, sizeof sx), x->size, want);
    s[infer] = (int)(x->size / known);
  } else if (known != x->size) {
    tensor_error(op, "cannot reshape %s (%ld elements) to %s (%ld elements)",
                 shape_str(x, sx, sizeof sx), x->size, want, known);
  }
  Tensor *out = view_of(x, ndim, s, "reshape");
  /* the view's gradient is x's buffer itself: no zeroing, no copy back */
  if (ag_needs_grad(x, NULL, NULL)) ag_record_view(out, x);
  return out;
}

/* ---------- permute / transpose ---------- */

/* out dim k is input dim perm[k]; padded to 4 dims with leading size-1 dims. */
static void permute_geometry(const Tensor *x, const int *perm, int *oshape, long *sstride) {
  long istride[T_MAXDIM];
  long st = 1;
  for (int i = x->ndim - 1; i >= 0; i--) {
    istride[i] = st;
    st *= x->shape[i];
  }
  int pad = T_MAXDIM - x->ndim;
  for (int k = 0; k < T_MAXDIM; k++) {
    oshape[k] = k < pad ? 1 : x->shape[perm[k - pad]];
    sstride[k] = k < pad ? 0 : istride[perm[k - pad]];
  }
}

static void permute_backward(Tensor *out) {
  Tensor *x = out->in[0];
  int oshape[T_MAXDIM];
  long sstride[T_MAXDIM];
  permute_geometry(x, out->iarg, oshape, sstride);
  bool fresh; /* a permutation reaches every input element once: store when fresh */
  float *dx = tensor_grad_fresh(x, &fresh);
  KERNEL(out->device, permute, dx, out->grad, oshape, sstride, fresh ? PW_STORE : PW_ADD);
}

Tensor *t_permute(Tensor *x, const int *perm) {
  const char *op = "t_permute";
  need(op, "x", x);
  int p[T_MAXDIM] = {0}, seen[T_MAXDIM] = {0};
  for (int k = 0; k < x->ndim; k++) {
    p[k] = norm_dim(op, x, perm[k]);
    if (seen[p[k]]++) {
      char s[64];
      tensor_error(op, "perm names dim %d twice; it must list each dim of %s exactly once", p[k],
                   shape_str(x, s, sizeof s));
    }
  }
  int oshape[T_MAXDIM], shape[T_MAXDIM];
  long sstride[T_MAXDIM];
  permute_geometry(x, p, oshape, sstride);
  for (int k = 0; k < x->ndim; k++) shape[k] = x->shape[p[k]];
  Tensor *out = new_on(x, x->ndim, shape, "permute");
  KERNEL(x->device, permute, x->data, out->data, oshape, sstride, PW_GATHER);
  if (x->host && out->size <= TENSOR_HOST_COPY_MAX) { /* token ids made time-major (lab 03) */
    /* the host copy follows, permuted by the CPU's kernel: the host copy is host memory */
    float *h = arena_alloc(sizeof(float) * (size_t)(out->size ? out->size : 1));
    KERNEL(DEV_CPU, permute, (float *)x->host, h, oshape, sstride, PW_GATHER);
    out->host = h;
  }
  if (ag_needs_grad(x, NULL, NULL)) {
    memcpy(out->iarg, p, sizeof(int) * (size_t)x->ndim);
    ag_record(out, permute_backward, x, NULL, NULL);
  }
  return out;
}

Tensor *t_transpose(Tensor *x, int d0, int d1) {
  need("t_transpose", "x", x);
  int a = norm_dim("t_transpose", x, d0), b = norm_dim("t_transpose", x, d1);
  int p[T_MAXDIM] = {0, 1, 2, 3};
  p[a] = b;
  p[b] = a;
  return t_permute(x, p);
}

/* ---------- concat ---------- */

/* The inputs live in aux (there can be more than the three in[] slots). */
typedef struct {
  Tensor **xs;
  int n, dim;
} CatSaved;

static void concat_backward(Tensor *out) {
  const CatSaved *s = out->aux;
  long outer = outer_of(out, s->dim), inner = inner_of(out, s->dim);
  long orow = (long)out->shape[s->dim] * inner, off = 0;
  for (int k = 0; k < s->n; k++) {
    Tensor *x = s->xs[k];
    long row = (long)x->shape[s->dim] * inner;
    if (x->requires_grad) { /* input k is every row's k-th run: stored when fresh */
      bool fresh;
      float *dx = tensor_grad_fresh(x, &fresh);
      KERNEL(out->device, copy_rows, dx, row, out->grad + off, orow, outer, row, !fresh);
    }
    off += row;
  }
}

Tensor *t_concat(Tensor **xs, int n, int dim) {
  const char *op = "t_concat";
  if (n < 1) tensor_error(op, "needs at least one tensor, got %d", n);
  for (int k = 0; k < n; k++) {
    need(op, "an input", xs[k]);
    tensor_same_device(op, xs[0], xs[k], NULL);
  }
  int d = norm_dim(op, xs[0], dim);
  int shape[T_MAXDIM];
  memcpy(shape, xs[0]->shape, sizeof shape);
  shape[d] = 0;
  bool grad = false;
  for (int k = 0; k < n; k++) {
    const Tensor *x = xs[k];
    bool ok = x->ndim == xs[0]->ndim;
    for (int i = 0; ok && i < x->ndim; i++) ok = i == d || x->shape[i] == xs[0]->shape[i];
    if (!ok) {
      char s0[64], sk[64];
      tensor_error(op, "input %d has shape %s, input 0 has %s: they must match in every dim "
                   "except dim %d", k, shape_str(x, sk, sizeof sk), shape_str(xs[0], s0, sizeof s0),
                   d);
    }
    shape[d] += x->shape[d];
    grad = grad || x->requires_grad;
  }
  Tensor *out = new_on(xs[0], xs[0]->ndim, shape, "concat");
  long outer = outer_of(out, d), inner = inner_of(out, d);
  long orow = (long)shape[d] * inner, off = 0;
  for (int k = 0; k < n; k++) {
    long row = (long)xs[k]->shape[d] * inner;
    KERNEL(out->device, copy_rows, out->data + off, orow, xs[k]->data, row, outer, row, false);
    off += row;
  }
  if (grad && ag_grad_enabled()) {
    CatSaved *s = arena_alloc(sizeof *s);
    s->xs = arena_alloc(sizeof(Tensor *) * (size_t)n);
    memcpy(s->xs, xs, sizeof(Tensor *) * (size_t)n);
    s->n = n;
    s->dim = d;
    out->aux = s;
    ag_record(out, concat_backward, xs[0], n > 1 ? xs[1] : NULL, n > 2 ? xs[2] : NULL);
  }
  return out;
}

Tensor *t_cat2(Tensor *a, Tensor *b, int dim) { return t_concat((Tensor *[]){a, b}, 2, dim); }

/* ---------- slice ---------- */

static void slice_backward(Tensor *out) {
  Tensor *x = out->in[0];
  int d = out->iarg[0], start = out->iarg[1];
  long outer = outer_of(x, d), inner = inner_of(x, d);
  long xrow = (long)x->shape[d] * inner, orow = (long)out->shape[d] * inner;
  KERNEL(out->device, copy_rows, tensor_grad(x) + start * inner, xrow, out->grad, orow, outer,
         orow, true);
}

Tensor *t_slice(Tensor *x, int dim, int start, int end) {
  const char *op = "t_slice";
  need(op, "x", x);
  int d = norm_dim(op, x, dim), n = x->shape[d];
  /* negative bounds count from the end, as in Python */
  int s = start < 0 ? start + n : start, e = end < 0 ? end + n : end;
  if (s < 0 || e > n || s > e) {
    char sx[64];
    tensor_error(op, "range [%d, %d) is not within dim %d (size %d) of %s", start, end, d, n,
                 shape_str(x, sx, sizeof sx));
  }
  int shape[T_MAXDIM];
  memcpy(shape, x->shape, sizeof shape);
  shape[d] = e - s;
  Tensor *out = new_on(x, x->ndim, shape, "slice");
  long outer = outer_of(x, d), inner = inner_of(x, d);
  long xrow = (long)n * inner, orow = (long)(e - s) * inner;
  KERNEL(x->device, copy_rows, out->data, orow, x->data + s * inner, xrow, outer, orow, false);
  if (ag_needs_grad(x, NULL, NULL)) {
    out->iarg[0] = d;
    out->iarg[1] = s;
    ag_record(out, slice_backward, x, NULL, NULL);
  }
  return out;
}

/* ---------- repeat_interleave ---------- */

/* Output index i along dim came from input index i / repeats: its gradients sum back there. */
static void repeat_interleave_backward(Tensor *out) {
  Tensor *x = out->in[0];
  int d = out->iarg[0];
  KERNEL(out->device, repeat_interleave_grad, tensor_grad(x), out->grad, outer_of(x, d),
         x->shape[d], out->iarg[1], inner_of(x, d));
}


Tensor *t_repeat_interleave(Tensor *x, int repeats, int dim) {
  const char *op = "t_repeat_interleave";
  need(op, "x", x);
  int d = norm_dim(op, x, dim);
  if (repeats < 1) tensor_error(op, "repeats = %d must be >= 1", repeats);
  int shape[T_MAXDIM];
  memcpy(shape, x->shape, sizeof shape);
  shape[d] = x->shape[d] * repeats;
  Tensor *out = new_on(x, x->ndim, shape, "repeat_interleave");
  KERNEL(x->device, repeat_interleave, x->data, out->data, outer_of(x, d), x->shape[d], repeats,
         inner_of(x, d));
  if (x->host && out->size <= TENSOR_HOST_COPY_MAX) {
    /* valid lengths repeated per head (d2l's MultiHeadAttention): their host copy follows, so
     * the attention's index check reads no copy back from the device */
    float *h = arena_alloc(sizeof(float) * (size_t)(out->size ? out->size : 1));
    KERNEL(DEV_CPU, repeat_interleave, x->host, h, outer_of(x, d), x->shape[d], repeats,
           inner_of(x, d));
    out->host = h;
  }
  if (ag_needs_grad(x, NULL, NULL)) {
    out->iarg[0] = d;
    out->iarg[1] = repeats;
    ag_record(out, repeat_interleave_backward, x, NULL, NULL);
  }
  return out;
}

/* ---------- patchify ---------- */

/* Patch (ph, pw) of image b is output row b * (gh*gw) + ph*gw + pw; its feature
 * c*p*p + i*p + j is pixel (c, ph*p + i, pw*p + j) (the kernel moves rows of p floats). */
static void patchify_backward(Tensor *out) {
  Tensor *x = out->in[0];
  KERNEL(out->device, patchify, tensor_grad(x), out->grad, x->shape, out->iarg[0], true);
}

Tensor *t_patchify(Tensor *images, int p) {
  const char *op = "t_patchify";
  need(op, "images", images);
  char s[64];
  if (images->ndim != 4)
    tensor_error(op, "images must be (batch, channels, height, width), got %s",
                 shape_str(images, s, sizeof s));
  int C = images->shape[1], H = images->shape[2], W = images->shape[3];
  if (p < 1) tensor_error(op, "patch size %d must be >= 1", p);
  if (H % p || W % p)
    tensor_error(op, "images %s: height %d and width %d must both be divisible by the patch "
                 "size %d (resize the images or pick another patch size)",
                 shape_str(images, s, sizeof s), H, W, p);
  Tensor *out = new_on(images, 3, (int[]){images->shape[0], (H / p) * (W / p), C * p * p},
                       "patchify");
  KERNEL(images->device, patchify, images->data, out->data, images->shape, p, false);
  if (ag_needs_grad(images, NULL, NULL)) {
    out->iarg[0] = p;
    ag_record(out, patchify_backward, images, NULL, NULL);
  }
  return out;
}

/* ---------- copy / detach ---------- */

Tensor *t_copy(Tensor *x) {
  need("t_copy", "x", x);
  Tensor *out = new_on(x, x->ndim, x->shape, "copy");
  KERNEL(x->device, copy_rows, out->data, 0, x->data, 0, 1, x->size, false);
  if (ag_needs_grad(x, NULL, NULL)) ag_record(out, identity_backward, x, NULL, NULL);
  return out;
}

Tensor *t_detach(Tensor *x) {
  need("t_detach", "x", x);
  return view_of(x, x->ndim, x->shape, "detach");
}
