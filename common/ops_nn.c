/* ops_nn.c — layer norm, batch norm, embedding lookup and dropout.
 *
 * Both norms compute xhat = (x - mean) * rstd with rstd = 1 / sqrt(var + eps) (biased variance)
 * and y = xhat * gamma + beta. They save mean and rstd, and their backward uses the standard
 * closed form for a normalized group of n values:
 *   dxhat = dy * gamma,  dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).
 * Layer norm's groups are rows (the last dim); batch norm's groups are columns (one feature
 * over all leading positions).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops.h"
#include "rng.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static void need_cpu(const char *op, const char *what, const Tensor *t) {
  if (!t) tensor_error(op, "%s is NULL (did an unfinished exercise return NULL?)", what);
  if (t->device != DEV_CPU)
    tensor_error(op, "%s is on the GPU but this op has no CUDA kernel in this build; "
                 "move it to the CPU first", what);
}

/* gamma, beta, running stats: NULL or a (D) vector matching x's last dim. */
static void check_feature_vec(const char *op, const char *what, const Tensor *v, const Tensor *x) {
  if (!v) return;
  need_cpu(op, what, v);
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

/* ---------- layer norm ---------- */

/* Rows are split over threads when there is enough work to pay for the fork (a few us). */
#define LN_PAR_MIN 65536
/* Row sums keep LN_LANES independent partial sums (a fixed order, so results are reproducible):
 * GCC vectorizes that without -ffast-math, while one running sum is a chain of dependent adds
 * (a third of layer norm's time at the Transformer's 32 features). */
#define LN_LANES 16

/* sum_j a[j] for a row of D. */
static inline float ln_sum(const float *a, int D) {
  float acc[LN_LANES] = {0}, s = 0;
  int j = 0;
  for (; j + LN_LANES <= D; j += LN_LANES)
    for (int k = 0; k < LN_LANES; k++) acc[k] += a[j + k];
  for (; j < D; j++) s += a[j];
  for (int k = 0; k < LN_LANES; k++) s += acc[k];
  return s;
}

/* sum_j a[j] * b[j] for a row of D. */
static inline float ln_dot(const float *a, const float *b, int D) {
  float acc[LN_LANES] = {0}, s = 0;
  int j = 0;
  for (; j + LN_LANES <= D; j += LN_LANES)
    for (int k = 0; k < LN_LANES; k++) acc[k] += a[j + k] * b[j + k];
  for (; j < D; j++) s += a[j] * b[j];
  for (int k = 0; k < LN_LANES; k++) s += acc[k];
  return s;
}

/* sum_j (x[j] - mean)^2 for a row of D. */
static inline float ln_sq_dev(const float *x, float mean, int D) {
  float acc[LN_LANES] = {0}, s = 0;
  int j = 0;
  for (; j + LN_LANES <= D; j += LN_LANES)
    for (int k = 0; k < LN_LANES; k++) acc[k] += (x[j + k] - mean) * (x[j + k] - mean);
  for (; j < D; j++) s += (x[j] - mean) * (x[j] - mean);
  for (int k = 0; k < LN_LANES; k++) s += acc[k];
  return s;
}

/* gamma's data, or D ones when there is no gamma (beta: zeros), so the row loops have no
 * per-element branch. */
static const float *ln_vec(const Tensor *v, int D, float fill) {
  if (v) return v->data;
  float *f = arena_alloc(sizeof(float) * (size_t)(D ? D : 1));
  for (int j = 0; j < D; j++) f[j] = fill;
  return f;
}

static void layer_norm_backward(Tensor *out) {
  Tensor *x = out->in[0], *gamma = out->in[1], *beta = out->in[2];
  const float *stats = out->aux; /* (rows, 2): mean, rstd */
  const float *g = out->grad;
  int D = x->shape[x->ndim - 1];
  long rows = D ? x->size / D : 0;
  const float *gm = ln_vec(gamma, D, 1.0f);
  bool fresh = false; /* nothing reached x yet: its rows are stored, not added */
  float *dx = x->requires_grad ? tensor_grad_fresh(x, &fresh) : NULL;
  float *dgamma = gamma && gamma->requires_grad ? tensor_grad(gamma) : NULL;
  float *dbeta = beta && beta->requires_grad ? tensor_grad(beta) : NULL;
  /* dgamma / dbeta are sums over rows: each thread sums its rows into its own slice of
   * `part` (threads x 2D), added up below in thread order, so a run is reproducible. */
  int nt = 1;
#ifdef _OPENMP
  if (x->size >= LN_PAR_MIN) nt = omp_get_max_threads();
#endif
  float *part = (dgamma || dbeta) ? arena_calloc(sizeof(float) * (size_t)nt * 2 * D) : NULL;
  const float invD = D ? 1.0f / (float)D : 0.0f;
  /* two rows of scratch per thread: xhat and dxhat = g * gamma */
  float *xh_all = arena_alloc(sizeof(float) * (size_t)nt * 2 * (size_t)(D ? D : 1));
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    int tid = 0;
#ifdef _OPENMP
    tid = omp_get_thread_num();
#endif
    float *pg = part ? part + (size_t)tid * 2 * D : NULL, *pb = pg ? pg + D : NULL;
    float *xh = xh_all + (size_t)tid * 2 * D, *dxh = xh + D;
#pragma omp for schedule(static)
    for (long r = 0; r < rows; r++) {
      const float *xr = x->data + r * D, *gr = g + r * D;
      float mean = stats[2 * r], rstd = stats[2 * r + 1];
      for (int j = 0; j < D; j++) xh[j] = (xr[j] - mean) * rstd; /* hot */
      if (pg)
        for (int j = 0; j < D; j++) {
          pg[j] += gr[j] * xh[j];
          pb[j] += gr[j];
        }
      if (!dx) continue;
      /* a = mean(dxhat), b = mean(dxhat * xhat) */
      for (int j = 0; j < D; j++) dxh[j] = gr[j] * gm[j];
      const float a = ln_sum(dxh, D) * invD, b = ln_dot(dxh, xh, D) * invD;
      float *dr = dx + r * D;
      if (fresh)
        for (int j = 0; j < D; j++) dr[j] = rstd * (dxh[j] - a - xh[j] * b);
      else
        for (int j = 0; j < D; j++) dr[j] += rstd * (dxh[j] - a - xh[j] * b);
    }
  }
  for (int t = 0; part && t < nt; t++)
    for (int j = 0; j < D; j++) {
      if (dgamma) dgamma[j] += part[(size_t)t * 2 * D + j];
      if (dbeta) dbeta[j] += part[(size_t)t * 2 * D + D + j];
    }
}

Tensor *t_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps) {
  const char *op = "t_layer_norm";
  need_cpu(op, "x", x);
  check_feature_vec(op, "gamma", gamma, x);
  check_feature_vec(op, "beta", beta, x);
  if (!(eps >= 0)) tensor_error(op, "eps = %g must be >= 0", (double)eps);
  int D = x->shape[x->ndim - 1];
  long rows = D ? x->size / D : 0;
  Tensor *out = tensor_new(x->ndim, x->shape);
  out->name = "layer_norm";
  float *stats = arena_alloc(sizeof(float) * (size_t)(2 * rows + 1));
  const float *gm = ln_vec(gamma, D, 1.0f), *bt = ln_vec(beta, D, 0.0f);
#pragma omp parallel for schedule(static) if (x->size >= LN_PAR_MIN)
  for (long r = 0; r < rows; r++) {
    const float *xr = x->data + r * D;
    float *yr = out->data + r * D;
    float mean = ln_sum(xr, D) / (float)D;
    float var = ln_sq_dev(xr, mean, D) / (float)D; /* two passes: no cancellation */
    float rstd = 1.0f / sqrtf(var + eps);
    for (int j = 0; j < D; j++) yr[j] = (xr[j] - mean) * rstd * gm[j] + bt[j]; /* hot */
    stats[2 * r] = mean;
    stats[2 * r + 1] = rstd;
  }
  if (ag_needs_grad(x, gamma, beta)) {
    out->aux = stats;
    ag_record(out, layer_norm_backward, x, gamma, beta);
  }
  return out;
}

/* ---------- batch norm ---------- */

static void batch_norm_backward(Tensor *out) {
  Tensor *x = out->in[0], *gamma = out->in[1], *beta = out->in[2];
  bool training = out->iarg[0];
  int C = x->shape[x->ndim - 1];
  long N = C ? x->size / C : 0;
  const float *mean = out->aux, *rstd = mean + C; /* per feature */
  const float *g = out->grad, *gm = gamma ? gamma->data : NULL;
  float *dx = x->requires_grad ? tensor_grad(x) : NULL;
  float *dgamma = gamma && gamma->requires_grad ? tensor_grad(gamma) : NULL;
  float *dbeta = beta && beta->requires_grad ? tensor_grad(beta) : NULL;
  /* Column sums of dy and dy * xhat, accumulated row by row to stay cache friendly. */
  double *sum_g = arena_calloc(sizeof(double) * (size_t)(2 * C + 1)), *sum_gxh = sum_g + C;
  for (long n = 0; n < N; n++)
    for (int c = 0; c < C; c++) {
      float gv = g[n * C + c];
      sum_g[c] += gv;
      sum_gxh[c] += gv * (x->data[n * C + c] - mean[c]) * rstd[c];
    }
  for (int c = 0; c < C; c++) {
    if (dgamma) dgamma[c] += (float)sum_gxh[c];
    if (dbeta) dbeta[c] += (float)sum_g[c];
  }
  if (!dx) return;
  /* With dxhat = dy * gamma: mean(dxhat) = gamma * sum_g / N, mean(dxhat xhat) = gamma * sum_gxh / N.
   * In eval mode the statistics are constants, so only dxhat * rstd remains. */
  float *a = arena_alloc(sizeof(float) * (size_t)(3 * C + 1)), *b = a + C, *k = b + C;
  for (int c = 0; c < C; c++) {
    float gc = gm ? gm[c] : 1.0f;
    k[c] = gc * rstd[c];
    a[c] = training ? (float)(sum_g[c] / (double)N) : 0.0f;
    b[c] = training ? (float)(sum_gxh[c] / (double)N) : 0.0f;
  }
  for (long n = 0; n < N; n++)
    for (int c = 0; c < C; c++) {
      float xh = (x->data[n * C + c] - mean[c]) * rstd[c];
      dx[n * C + c] += k[c] * (g[n * C + c] - a[c] - xh * b[c]);
    }
}

Tensor *t_batch_norm(Tensor *x, Tensor *gamma, Tensor *beta, Tensor *running_mean,
                     Tensor *running_var, bool training, float momentum, float eps) {
  const char *op = "t_batch_norm";
  need_cpu(op, "x", x);
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

  float *mean = arena_alloc(sizeof(float) * (size_t)(2 * C + 1)), *rstd = mean + C;
  if (training) {
    double *s = arena_calloc(sizeof(double) * (size_t)(2 * C + 1)), *ss = s + C;
    for (long n = 0; n < N; n++)
      for (int c = 0; c < C; c++) s[c] += x->data[n * C + c];
    for (int c = 0; c < C; c++) s[c] /= (double)N;
    for (long n = 0; n < N; n++)
      for (int c = 0; c < C; c++) {
        double d = x->data[n * C + c] - s[c];
        ss[c] += d * d;
      }
    for (int c = 0; c < C; c++) {
      double var = ss[c] / (double)N; /* biased: what normalizes this batch */
      mean[c] = (float)s[c];
      rstd[c] = (float)(1.0 / sqrt(var + eps));
      if (running_mean)
        running_mean->data[c] = (1 - momentum) * running_mean->data[c] + momentum * mean[c];
      if (running_var) /* unbiased, as torch keeps it */
        running_var->data[c] = (1 - momentum) * running_var->data[c] +
                               momentum * (float)(ss[c] / (double)(N - 1));
    }
  } else {
    for (int c = 0; c < C; c++) {
      mean[c] = running_mean->data[c];
      rstd[c] = 1.0f / sqrtf(running_var->data[c] + eps);
    }
  }

  Tensor *out = tensor_new(x->ndim, x->shape);
  out->name = "batch_norm";
  const float *gm = gamma ? gamma->data : NULL, *bt = beta ? beta->data : NULL;
  for (long n = 0; n < N; n++)
    for (int c = 0; c < C; c++)
      out->data[n * C + c] =
          (x->data[n * C + c] - mean[c]) * rstd[c] * (gm ? gm[c] : 1.0f) + (bt ? bt[c] : 0.0f);
  if (ag_needs_grad(x, gamma, beta)) {
    out->aux = mean; /* mean and rstd, a copy: the running stats may change before backward */
    out->iarg[0] = training;
    ag_record(out, batch_norm_backward, x, gamma, beta);
  }
  return out;
}

/* ---------- embedding ---------- */

/* Scatter-add: each output row's gradient goes back to the row of W it was copied from. */
static void embedding_backward(Tensor *out) {
  Tensor *W = out->in[0];
  const int *ids = out->aux;
  int D = W->shape[1];
  long n = D ? out->size / D : 0;
  float *dW = tensor_grad(W);
  for (long i = 0; i < n; i++) {
    float *dst = dW + (long)ids[i] * D;
    const float *src = out->grad + i * D;
    for (int j = 0; j < D; j++) dst[j] += src[j];
  }
}

Tensor *t_embedding(Tensor *W, Tensor *ids) {
  const char *op = "t_embedding";
  need_cpu(op, "W", W);
  need_cpu(op, "ids", ids);
  char sw[64], si[64];
  if (W->ndim != 2)
    tensor_error(op, "W must be a (vocab, dim) table, got %s", shape_str(W, sw, sizeof sw));
  if (ids->ndim >= T_MAXDIM)
    tensor_error(op, "ids %s have too many dims: the output (..., %d) would exceed %d dims",
                 shape_str(ids, si, sizeof si), W->shape[1], T_MAXDIM);
  int V = W->shape[0], D = W->shape[1];
  int *idx = arena_alloc(sizeof(int) * (size_t)(ids->size ? ids->size : 1));
  for (long i = 0; i < ids->size; i++) idx[i] = check_index(op, "ids", i, ids->data[i], V);
  int shape[T_MAXDIM];
  memcpy(shape, ids->shape, sizeof(int) * (size_t)ids->ndim);
  shape[ids->ndim] = D;
  Tensor *out = tensor_new(ids->ndim + 1, shape);
  out->name = "embedding";
  for (long i = 0; i < ids->size; i++)
    memcpy(out->data + i * D, W->data + (long)idx[i] * D, sizeof(float) * (size_t)D);
  if (ag_needs_grad(W, NULL, NULL)) {
    out->aux = idx;
    ag_record(out, embedding_backward, W, NULL, NULL);
  }
  return out;
}

/* ---------- dropout ---------- */

/* The kept mask (one byte per element) and the 1 / (1 - p) scale route the gradient. */
/* Elements above which dropout's loops are split over threads (a fork costs a few us). The
 * clause is written if (parallel: ...): a bare if on `parallel for simd` also governs the simd
 * part, and a false condition then runs the loop one element at a time (9x slower here). */
#define DROPOUT_PAR_MIN 65536

static void dropout_backward(Tensor *out) {
  Tensor *x = out->in[0];
  const uint8_t *keep = out->aux;
  float scale = out->farg[0];
  bool fresh;
  float *dx = tensor_grad_fresh(x, &fresh);
  const float *g = out->grad;
  const long n = out->size;
  if (fresh) {
#pragma omp parallel for simd schedule(static) if (parallel: n >= DROPOUT_PAR_MIN)
    for (long i = 0; i < n; i++) dx[i] = g[i] * (keep[i] ? scale : 0.0f);
  } else {
#pragma omp parallel for simd schedule(static) if (parallel: n >= DROPOUT_PAR_MIN)
    for (long i = 0; i < n; i++) dx[i] += g[i] * (keep[i] ? scale : 0.0f);
  }
}

/* 32 well-mixed bits from element i of the mask seeded by (s0, s1): a Weyl step i * golden + s0,
 * then murmur3's 32-bit finalizer (a bijection whose output bits each depend on every input
 * bit). Only 32-bit multiplies, so the mask loop vectorizes (16 lanes with AVX-512); the
 * splitmix64 it replaces needed 64-bit multiplies, which GCC left scalar. */
static inline uint32_t dropout_bits(uint32_t i, uint32_t s0, uint32_t s1) {
  uint32_t z = (i * 0x9e3779b9u + s0) ^ s1;
  z ^= z >> 16;
  z *= 0x85ebca6bu;
  z ^= z >> 13;
  z *= 0xc2b2ae35u;
  z ^= z >> 16;
  return z;
}

Tensor *t_dropout(Tensor *x, float p, bool training) {
  need_cpu("t_dropout", "x", x);
  if (!(p >= 0 && p < 1))
    tensor_error("t_dropout", "p = %g must be in [0, 1): it is the probability of zeroing an "
                 "element", (double)p);
  if (!training || p == 0) return x; /* identity: nothing to record */
  uint8_t *keep = arena_alloc((size_t)(x->size ? x->size : 1));
  float scale = 1.0f / (1.0f - p);
  Tensor *out = tensor_new(x->ndim, x->shape);
  out->name = "dropout";
  /* Counter-based mask: element i is kept when dropout_bits(i) >= p * 2^32 (exact to 2^-32).
   * One draw of g_rng seeds it, so the --seed still fixes every mask, and elements do not
   * depend on each other: the loop vectorizes and splits over threads with the same result
   * (a serial Bernoulli draw per element was a quarter of a ViT step). The counter is 32 bits:
   * a tensor beyond 2^32 elements (16 GB) would repeat its mask. */
  const uint64_t seed = rng_next(&g_rng);
  const uint32_t s0 = (uint32_t)seed, s1 = (uint32_t)(seed >> 32);
  const uint32_t thr = (uint32_t)((double)p * 4294967296.0); /* p < 1: fits in 32 bits */
  const float *xd = x->data;
  float *od = out->data;
  const long n = x->size;
#pragma omp parallel for simd schedule(static) if (parallel: n >= DROPOUT_PAR_MIN)
  for (long i = 0; i < n; i++) { /* hot */
    uint8_t k = dropout_bits((uint32_t)i, s0, s1) >= thr;
    keep[i] = k;
    od[i] = xd[i] * (k ? scale : 0.0f);
  }
  if (ag_needs_grad(x, NULL, NULL)) {
    out->aux = keep;
    out->farg[0] = scale;
    ag_record(out, dropout_backward, x, NULL, NULL);
  }
  return out;
}
