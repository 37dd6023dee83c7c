/* ops/nn.c — layer norm, batch norm, embedding lookup and dropout. Kernels: cpu/cpu_nn.c.
 *
 * Both norms compute xhat = (x - mean) * rstd with rstd = 1 / sqrt(var + eps) (biased variance)
 * and y = xhat * gamma + beta. They save mean and rstd, and their backward uses the standard
 * closed form for a normalized group of n values:
 *   dxhat = dy * gamma,  dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).
 * Layer norm's groups are rows (the last dim); batch norm's groups are columns (one feature
 * over all leading positions).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../rng.h"
#include "../util.h"
#include "front.h"

/* gamma, beta, running stats: NULL or a (D) vector matching x's last dim. */
static void check_feature_vec(const char *op, const char *what, const Tensor *v, const Tensor *x) {
  if (!v) return;
  tensor_same_device(op, x, v, NULL);
  int D = x->shape[x->ndim - 1];
  if (v->ndim != 1 || v->shape[0] != D) {
    char sv[64], sx[64];
    tensor_error(op, "%s has shape %s but x is %s: it needs shape (%d), x's last dim", what,
                 shape_str(v, sv, sizeof sv), shape_str(x, sx, sizeof sx), D);
  }
}

/* An index tensor entry (token id, class) must be a whole number in [0, n). */
static int check_index(const char *op, const char *what, long i, float v, int n) {
  if (!(v >= 0 && v < (float)n && v == floorf(v)))
    tensor_error(op, "%s[%ld] = %g is not an index in [0, %d)", what, i, (double)v, n);
  return (int)v;
}

static const float *data_or_null(const Tensor *t) { return t ? t->data : NULL; }

/* ---------- layer norm ---------- */

static void layer_norm_backward(Tensor *out) {
  Tensor *x = out->in[0], *gamma = out->in[1], *beta = out->in[2];
  int D = x->shape[x->ndim - 1];
  long rows = D ? x->size / D : 0;
  bool fresh = false; /* nothing reached x yet: its rows are stored, not added */
  float *dx = x->requires_grad ? tensor_grad_fresh(x, &fresh) : NULL;
  float *dgamma = gamma && gamma->requires_grad ? tensor_grad(gamma) : NULL;
  float *dbeta = beta && beta->requires_grad ? tensor_grad(beta) : NULL;
  KERNEL(out->device, layer_norm_grad, x->data, data_or_null(gamma), out->aux, out->grad, dx,
         dgamma, dbeta, rows, D, fresh);
}

Tensor *t_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps) {
  const char *op = "t_layer_norm";
  need(op, "x", x);
  check_feature_vec(op, "gamma", gamma, x);
  check_feature_vec(op, "beta", beta, x);
  if (!(eps >= 0)) tensor_error(op, "eps = %g must be >= 0", (double)eps);
  int D = x->shape[x->ndim - 1];
  long rows = D ? x->size / D : 0;
  Tensor *out = new_on(x, x->ndim, x->shape, "layer_norm");
  float *stats = dev_alloc(x->device, sizeof(float) * (size_t)(2 * rows + 1)); /* (rows, 2) */
  KERNEL(x->device, layer_norm, x->data, data_or_null(gamma), data_or_null(beta), out->data,
         stats, rows, D, eps);
  if (ag_needs_grad(x, gamma, beta)) {
    out->aux = stats;
    ag_record(out, layer_norm_backward, x, gamma, beta);
  }
  return out;
}

/* ---------- batch norm ---------- */

static void batch_norm_backward(Tensor *out) {
  Tensor *x = out->in[0], *gamma = out->in[1], *beta = out->in[2];
  int C = x->shape[x->ndim - 1];
  long N = C ? x->size / C : 0;
  float *dx = x->requires_grad ? tensor_grad(x) : NULL;
  float *dgamma = gamma && gamma->requires_grad ? tensor_grad(gamma) : NULL;
  float *dbeta = beta && beta->requires_grad ? tensor_grad(beta) : NULL;
  KERNEL(out->device, batch_norm_grad, x->data, data_or_null(gamma), out->aux, out->grad, dx,
         dgamma, dbeta, N, C, out->iarg[0]);
}

Tensor *t_batch_norm(Tensor *x, Tensor *gamma, Tensor *beta, Tensor *running_mean,
                     Tensor *running_var, bool training, float momentum, float eps) {
  const char *op = "t_batch_norm";
  need(op, "x", x);
  check_feature_vec(op, "gamma", gamma, x);
  check_feature_vec(op, "beta", beta, x);
  check_feature_vec(op, "running_mean", running_mean, x);
  check_feature_vec(op, "running_var", running_var, x);
  if (!(eps >= 0)) tensor_error(op, "eps = %g must be >= 0", (double)eps);
  int C = x->shape[x->ndim - 1];
  long N = C ? x->size / C : 0;
  char sx[64];
  if (training && N < 2)
    tensor_error(op, "training needs more than one value per feature, x is %s "
                 "(batch statistics of one sample are meaningless)", shape_str(x, sx, sizeof sx));
  if (!training && (!running_mean || !running_var))
    tensor_error(op, "eval mode normalizes with the running statistics: pass running_mean and "
                 "running_var");
  if (training && !(momentum >= 0 && momentum <= 1))
    tensor_error(op, "momentum = %g must be in [0, 1]", (double)momentum);
  Tensor *out = new_on(x, x->ndim, x->shape, "batch_norm");
  /* mean and rstd (2C), a copy: the running stats may change before backward */
  float *mean_rstd = dev_alloc(x->device, sizeof(float) * (size_t)(2 * C + 1));
  KERNEL(x->device, batch_norm, x->data, data_or_null(gamma), data_or_null(beta),
         running_mean ? running_mean->data : NULL, running_var ? running_var->data : NULL,
         out->data, mean_rstd, N, C, training, momentum, eps);
  if (ag_needs_grad(x, gamma, beta)) {
    out->aux = mean_rstd;
    out->iarg[0] = training;
    ag_record(out, batch_norm_backward, x, gamma, beta);
  }
  return out;
}

/* ---------- embedding ---------- */

/* Scatter-add: each output row's gradient goes back to the row of W it was copied from. */
static void embedding_backward(Tensor *out) {
  Tensor *W = out->in[0];
  int D = W->shape[1];
  long n = D ? out->size / D : 0;
  KERNEL(out->device, embedding_grad, tensor_grad(W), out->aux, out->grad, n, D);
}

Tensor *t_embedding(Tensor *W, Tensor *ids) {
  const char *op = "t_embedding";
  need(op, "W", W);
  need(op, "ids", ids);
  tensor_same_device(op, W, ids, NULL);
  char sw[64], si[64];
  if (W->ndim != 2)
    tensor_error(op, "W must be a (vocab, dim) table, got %s", shape_str(W, sw, sizeof sw));
  if (ids->ndim >= T_MAXDIM)
    tensor_error(op, "ids %s have too many dims: the output (..., %d) would exceed %d dims",
                 shape_str(ids, si, sizeof si), W->shape[1], T_MAXDIM);
  int V = W->shape[0], D = W->shape[1];
  const float *id = host_read(ids);
  for (long i = 0; i < ids->size; i++) check_index(op, "ids", i, id[i], V);
  int *didx = index_ints(ids, ids->size, V);
  int shape[T_MAXDIM];
  memcpy(shape, ids->shape, sizeof(int) * (size_t)ids->ndim);
  shape[ids->ndim] = D;
  Tensor *out = new_on(W, ids->ndim + 1, shape, "embedding");
  KERNEL(W->device, embedding, W->data, didx, out->data, ids->size, D);
  if (ag_needs_grad(W, NULL, NULL)) {
    out->aux = didx;
    ag_record(out, embedding_backward, W, NULL, NULL);
  }
  return out;
}

/* ---------- dropout ---------- */

/* The kept mask (one byte per element) and the 1 / (1 - p) scale route the gradient. */
static void dropout_backward(Tensor *out) {
  bool fresh;
  float *dx = tensor_grad_fresh(out->in[0], &fresh);
  KERNEL(out->device, dropout_grad, dx, out->grad, out->aux, out->farg[0], out->size, fresh);
}

Tensor *t_dropout(Tensor *x, float p, bool training) {
  need("t_dropout", "x", x);
  if (!(p >= 0 && p < 1))
    tensor_error("t_dropout", "p = %g must be in [0, 1): it is the probability of zeroing an "
                 "element", (double)p);
  if (!training || p == 0) return x; /* identity: nothing to record */
  uint8_t *keep = dev_alloc(x->device, (size_t)(x->size ? x->size : 1));
  float scale = 1.0f / (1.0f - p);
  Tensor *out = new_on(x, x->ndim, x->shape, "dropout");
  /* Counter-based mask: element i is kept when a hash of (i, seed) >= p * 2^32 (exact to
   * 2^-32). One draw of the thread's generator (g_rng, or a twin's) seeds it, so the --seed
   * still fixes every mask, and elements do not depend on each other: the kernel vectorizes and
   * splits over threads with the same result (a serial Bernoulli draw per element was a quarter
   * of a ViT step). The counter is 32 bits: a tensor beyond 2^32 elements (16 GB) would repeat
   * its mask. */
  const uint64_t seed = rng_next(rng_current());
  const uint32_t s0 = (uint32_t)seed, s1 = (uint32_t)(seed >> 32);
  const uint32_t thr = (uint32_t)((double)p * 4294967296.0); /* p < 1: fits in 32 bits */
  KERNEL(x->device, dropout, x->data, out->data, keep, x->size, s0, s1, thr, scale);
  if (ag_needs_grad(x, NULL, NULL)) {
    out->aux = keep;
    out->farg[0] = scale;
    ag_record(out, dropout_backward, x, NULL, NULL);
  }
  return out;
}

/* ---------- positional encoding (lab 05) ---------- */

/* The tables this thread has compared with their device kernel (most recent first). A table
 * is one (pointer, max_len, d): the chapters build a few and keep them for the program. */
#define PE_CHECKED 8
static _Thread_local struct {
  const float *table;
  int max_len, d;
} pe_checked[PE_CHECKED];

/* The device kernel stands in for exercise 5.1's host table: before its rows are used, the
 * whole table it computes is compared with the host's, once per table. Rounding: both compute
 * the angle i / 10000^(2j/d) in float32, but a GPU's powf and sinf may differ from the host's by
 * a few ulps of the angle, which is below max_len. */
static void pe_check_device(const char *op, const float *table, int max_len, int d, Device dev) {
  for (int k = 0; k < PE_CHECKED; k++)
    if (pe_checked[k].table == table && pe_checked[k].max_len == max_len && pe_checked[k].d == d)
      return;
  Tensor *full = tensor_new_on(dev, 2, (const int[]){max_len, d}); /* (max_len, d) */
  KERNEL(dev, positional_encoding, full->data, 0, max_len, d);
  float *got = xmalloc(sizeof(float) * (size_t)max_len * (size_t)d);
  tensor_to_host(full, got);
  const double tol = 1e-5 + 8.0 * FLT_EPSILON * max_len;
  long bad = -1;
  for (long e = 0; e < (long)max_len * d && bad < 0; e++)
    if (!(fabs((double)got[e] - table[e]) <= tol)) bad = e;
  if (bad >= 0) {
    const double g = got[bad], w = table[bad];
    free(got);
    tensor_error(op,
                 "the %s device's positional-encoding kernel (exercise 5.2, "
                 "labs/lab05/posenc_kernel.cu) and the host table (exercise 5.1) disagree at "
                 "P[%ld, %ld] of the (%d, %d) table: %.7g on the device, %.7g on the host "
                 "(tolerance %.2g). Fix the one that is wrong: make grade LAB=05 checks both",
                 backend_of(dev)->name, bad / d, bad % d, max_len, d, g, w, tol);
  }
  free(got);
  memmove(pe_checked + 1, pe_checked, sizeof pe_checked - sizeof pe_checked[0]);
  pe_checked[0].table = table, pe_checked[0].max_len = max_len, pe_checked[0].d = d;
}

Tensor *t_positional_encoding(const float *table, int max_len, int d, int offset, int steps,
                              Device dev) {
  const char *op = "t_positional_encoding";
  if (!table) tensor_error(op, "the table is NULL");
  if (max_len < 1 || d < 1 || steps < 1 || offset < 0 || offset + steps > max_len)
    tensor_error(op, "rows %d..%d of a (%d, %d) table: out of range", offset,
                 offset + steps - 1, max_len, d);
  Tensor *P = tensor_new_on(dev, 2, (const int[]){steps, d}); /* (steps, d) */
  if (!backend_of(dev)->positional_encoding) { /* the CPU: the host table's rows */
    tensor_copy_from_host(P, table + (long)offset * d);
    return P;
  }
  pe_check_device(op, table, max_len, d, dev);
  KERNEL(dev, positional_encoding, P->data, offset, steps, d);
  return P;
}
