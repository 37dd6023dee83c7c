/* ops/softmax.c — softmax, log-softmax, sequence masking, and the two losses.
 * Kernels: cpu/cpu_softmax.c.
 *
 * Masking uses -inf semantics: t_sequence_mask(X, valid_lens, -INFINITY) then t_softmax (the
 * student's masked_softmax, exercise 2.1) gives a masked key exp(-inf) = 0, and a row with
 * nothing left to attend to (valid length 0, or every kept score -inf) all zeros, never NaN
 * and never the uniform row d2l's -1e6 trick would give.
 *
 * Index inputs (valid lengths, labels) are checked here, on the host, before any kernel runs:
 * a front reads them on the host (host_read: the host copy a tensor sent from the host keeps,
 * else an explicit copy back) and hands the kernel whole numbers converted to int on the device
 * (index_ints).
 */
#include <math.h>
#include <string.h>

#include "front.h"

/* dx += y * (g - <g, y>): the softmax Jacobian-vector product. */
static void softmax_backward(Tensor *out) {
  bool fresh; /* nothing reached x yet: store instead of add */
  float *dx = tensor_grad_fresh(out->in[0], &fresh);
  KERNEL(out->device, softmax_grad, out->data, out->grad, dx, num_rows(out), last_dim(out),
         fresh);
}

Tensor *t_softmax(Tensor *x) {
  need("t_softmax", "x", x);
  Tensor *out = new_on(x, x->ndim, x->shape, "softmax");
  KERNEL(x->device, softmax, x->data, out->data, num_rows(x), last_dim(x));
  if (ag_needs_grad(x, NULL, NULL)) ag_record(out, softmax_backward, x, NULL, NULL);
  return out;
}

/* ---------- log-softmax ---------- */

/* y = log softmax(x) gives dx = g - softmax(x) * sum(g), with softmax(x) = exp(y). */
static void log_softmax_backward(Tensor *out) {
  bool fresh;
  float *dx = tensor_grad_fresh(out->in[0], &fresh);
  KERNEL(out->device, log_softmax_grad, out->data, out->grad, dx, num_rows(out), last_dim(out),
         fresh);
}

Tensor *t_log_softmax(Tensor *x) {
  need("t_log_softmax", "x", x);
  Tensor *out = new_on(x, x->ndim, x->shape, "log_softmax");
  KERNEL(x->device, log_softmax, x->data, out->data, num_rows(x), last_dim(x));
  if (ag_needs_grad(x, NULL, NULL)) ag_record(out, log_softmax_backward, x, NULL, NULL);
  return out;
}

/* ---------- valid lengths ---------- */

/* The valid lengths of X's rows: row r (of X viewed as (rows, keys)) keeps keys j < len[r/per].
 * A (d0) tensor gives one length per index of dim 0, a (d0, d1) tensor one per (dim 0, dim 1)
 * pair; both reduce to "one length per run of `per` consecutive rows" in row-major order.
 * Lengths must be whole numbers >= 0; a length beyond the number of keys is clamped to it
 * (it masks nothing), matching d2l's `arange(maxlen) < valid_len` test. */
Lens resolve_lens(const char *op, const Tensor *X, const Tensor *valid_lens) {
  char sx[64], sl[64];
  need(op, "valid_lens", valid_lens);
  tensor_same_device(op, X, valid_lens, NULL);
  shape_str(X, sx, sizeof sx);
  shape_str(valid_lens, sl, sizeof sl);
  if (X->ndim < 2)
    tensor_error(op, "X %s needs a batch dim before the keys to be masked by valid_lens %s", sx,
                 sl);
  bool ok = valid_lens->shape[0] == X->shape[0] &&
            (valid_lens->ndim == 1 ||
             (valid_lens->ndim == 2 && X->ndim >= 3 && valid_lens->shape[1] == X->shape[1]));
  if (!ok) {
    if (X->ndim >= 3)
      tensor_error(op, "valid_lens has shape %s but X is %s: expected (%d) (one length per batch "
                   "row) or (%d, %d) (one per batch row and query)", sl, sx, X->shape[0],
                   X->shape[0], X->shape[1]);
    tensor_error(op, "valid_lens has shape %s but X is %s: expected (%d), one length per row", sl,
                 sx, X->shape[0]);
  }
  int keys = last_dim(X);
  long nl = valid_lens->size;
  const float *vl = host_read(valid_lens);
  for (long i = 0; i < nl; i++) {
    float v = vl[i];
    if (!(v >= 0) || v != floorf(v))
      tensor_error(op, "valid_lens[%ld] = %g: a valid length is a whole number >= 0", i, (double)v);
  }
  Lens L = {index_ints(valid_lens, nl, keys), nl ? num_rows(X) / nl : 1}; /* capped at keys */
  return L;
}

/* ---------- sequence mask ---------- */

static void sequence_mask_backward(Tensor *out) {
  const Lens *L = out->aux;
  bool fresh; /* fresh: store the kept entries' gradient and zeros for the masked ones */
  float *dx = tensor_grad_fresh(out->in[0], &fresh);
  KERNEL(out->device, sequence_mask_grad, dx, out->grad, L->len, L->per, num_rows(out),
         last_dim(out), fresh);
}

Tensor *t_sequence_mask(Tensor *X, Tensor *valid_lens, float value) {
  need("t_sequence_mask", "X", X);
  if (!valid_lens) return t_copy(X);
  Lens L = resolve_lens("t_sequence_mask", X, valid_lens);
  Tensor *out = new_on(X, X->ndim, X->shape, "sequence_mask");
  KERNEL(X->device, sequence_mask, out->data, X->data, L.len, L.per, num_rows(X), last_dim(X),
         value);
  if (ag_needs_grad(X, NULL, NULL)) {
    Lens *saved = arena_alloc(sizeof *saved);
    *saved = L;
    out->aux = saved;
    ag_record(out, sequence_mask_backward, X, NULL, NULL);
  }
  return out;
}

/* ---------- cross-entropy ---------- */

/* What the fused backward needs, per row (device memory): the label, w / sum(exp), the
 * exponentials, and the weights (NULL: 1). */
typedef struct {
  int *label;
  const float *w;
  float *scale; /* w / sum_j exp(x_j - max) */
  float *e;     /* (rows, V): exp(x_j - max) */
} CeSaved;

/* d loss_r / d x_rj = w_r * (softmax_j - [j == label_r]). */
static void cross_entropy_backward(Tensor *out) {
  Tensor *logits = out->in[0];
  const CeSaved *s = out->aux;
  bool fresh; /* fresh: every row is stored, padding rows as zeros */
  float *dx = tensor_grad_fresh(logits, &fresh);
  KERNEL(out->device, cross_entropy_grad, dx, out->grad, s->e, s->scale, s->label, s->w,
         out->size, last_dim(logits), fresh);
}

/* labels / weights must have logits' leading dims ((1) when logits is a single row (V)). */
static void check_token_shape(const char *what, const Tensor *t, const Tensor *logits) {
  char st[64], sl[64];
  need("t_cross_entropy", what, t);
  bool ok = logits->ndim == 1 ? (t->ndim == 1 && t->shape[0] == 1)
                              : (t->ndim == logits->ndim - 1 &&
                                 memcmp(t->shape, logits->shape, sizeof(int) * (size_t)t->ndim) == 0);
  if (!ok)
    tensor_error("t_cross_entropy", "%s has shape %s but logits are %s: %s needs the logits' "
                 "shape without its last (vocabulary) dim", what, shape_str(t, st, sizeof st),
                 shape_str(logits, sl, sizeof sl), what);
}

Tensor *t_cross_entropy(Tensor *logits, Tensor *labels, Tensor *weights) {
  const char *op = "t_cross_entropy";
  need(op, "logits", logits);
  check_token_shape("labels", labels, logits);
  if (weights) check_token_shape("weights", weights, logits);
  tensor_same_device(op, logits, labels, weights);
  const Device dev = logits->device;
  int V = last_dim(logits);
  long rows = labels->size;
  size_t nr = (size_t)(rows ? rows : 1);

  const float *lab = host_read(labels);
  for (long r = 0; r < rows; r++) {
    float v = lab[r];
    if (!(v >= 0 && v < (float)V && v == floorf(v)))
      tensor_error(op, "labels[%ld] = %g is not a class index in [0, %d) (the logits' last dim)",
                   r, (double)v, V);
  }
  CeSaved s = {index_ints(labels, rows, V), weights ? weights->data : NULL,
               dev_alloc(dev, sizeof(float) * nr),
               dev_alloc(dev, sizeof(float) * (size_t)(logits->size ? logits->size : 1))};

  Tensor *out = new_on(logits, labels->ndim, labels->shape, "cross_entropy");
  KERNEL(dev, cross_entropy, logits->data, s.label, s.w, s.e, s.scale, out->data, rows, V);
  if (ag_needs_grad(logits, NULL, NULL)) {
    CeSaved *saved = arena_alloc(sizeof *saved);
    *saved = s;
    out->aux = saved;
    ag_record(out, cross_entropy_backward, logits, NULL, NULL);
  }
  return out;
}

/* ---------- mean squared error ---------- */

static void mse_backward(Tensor *out) {
  Tensor *p = out->in[0], *t = out->in[1];
  float *dp = p->requires_grad ? tensor_grad(p) : NULL;
  float *dt = t->requires_grad ? tensor_grad(t) : NULL;
  KERNEL(out->device, mse_grad, dp, dt, out->grad, p->data, t->data, p->size);
}

Tensor *t_mse(Tensor *pred, Tensor *target) {
  need("t_mse", "pred", pred);
  need("t_mse", "target", target);
  if (!tensor_same_shape(pred, target)) {
    char a[64], b[64];
    tensor_error("t_mse", "pred %s and target %s must have the same shape (no broadcasting)",
                 shape_str(pred, a, sizeof a), shape_str(target, b, sizeof b));
  }
  tensor_same_device("t_mse", pred, target, NULL);
  Tensor *out = new_on(pred, 1, (int[]){1}, "mse");
  KERNEL(pred->device, mse, pred->data, target->data, pred->size, out->data);
  if (ag_needs_grad(pred, target, NULL)) ag_record(out, mse_backward, pred, target, NULL);
  return out;
}
