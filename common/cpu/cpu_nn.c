/* cpu_nn.c — the CPU kernels of layer norm, batch norm, embedding lookup and dropout
 * (ops/nn.c).
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

#include "../dropout_bits.h"
#include "kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif

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
static const float *ln_vec(const float *v, int D, float fill) {
  if (v) return v;
  float *f = arena_alloc(sizeof(float) * (size_t)(D ? D : 1));
  for (int j = 0; j < D; j++) f[j] = fill;
  return f;
}

/* stats (rows, 2): mean, rstd of each row; dx, dgamma, dbeta: NULL when not wanted; fresh:
 * nothing reached x yet, its rows are stored, not added */
void cpu_layer_norm_grad(const float *x, const float *gamma, const float *stats,
                         const float *g, float *dx, float *dgamma, float *dbeta, long rows, int D,
                         bool fresh) {
  const float *gm = ln_vec(gamma, D, 1.0f);
  /* dgamma / dbeta are sums over rows: each thread sums its rows into its own slice of
   * `part` (threads x 2D), added up below in thread order, so a run is reproducible. */
  int nt = 1;
#ifdef _OPENMP
  if (rows * D >= LN_PAR_MIN) nt = omp_get_max_threads();
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
      const float *xr = x + r * D, *gr = g + r * D;
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

void cpu_layer_norm(const float *x, const float *gamma, const float *beta, float *y,
                    float *stats, long rows, int D, float eps) {
  const float *gm = ln_vec(gamma, D, 1.0f), *bt = ln_vec(beta, D, 0.0f);
#pragma omp parallel for schedule(static) if (rows * D >= LN_PAR_MIN)
  for (long r = 0; r < rows; r++) {
    const float *xr = x + r * D;
    float *yr = y + r * D;
    float mean = ln_sum(xr, D) / (float)D;
    float var = ln_sq_dev(xr, mean, D) / (float)D; /* two passes: no cancellation */
    float rstd = 1.0f / sqrtf(var + eps);
    for (int j = 0; j < D; j++) yr[j] = (xr[j] - mean) * rstd * gm[j] + bt[j]; /* hot */
    stats[2 * r] = mean;
    stats[2 * r + 1] = rstd;
  }
}

/* ---------- batch norm ---------- */

/* mean_rstd (2C): the statistics the forward normalized with */
void cpu_batch_norm_grad(const float *x, const float *gamma, const float *mean_rstd,
                         const float *g, float *dx, float *dgamma, float *dbeta, long N, int C,
                         bool training) {
  const float *mean = mean_rstd, *rstd = mean + C; /* per feature */
  const float *gm = gamma;
  /* Column sums of dy and dy * xhat, accumulated row by row to stay cache friendly. */
  double *sum_g = arena_calloc(sizeof(double) * (size_t)(2 * C + 1)), *sum_gxh = sum_g + C;
  for (long n = 0; n < N; n++)
    for (int c = 0; c < C; c++) {
      float gv = g[n * C + c];
      sum_g[c] += gv;
      sum_gxh[c] += gv * (x[n * C + c] - mean[c]) * rstd[c];
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
      float xh = (x[n * C + c] - mean[c]) * rstd[c];
      dx[n * C + c] += k[c] * (g[n * C + c] - a[c] - xh * b[c]);
    }
}

void cpu_batch_norm(const float *x, const float *gamma, const float *beta,
                    float *run_mean, float *run_var, float *y, float *mean_rstd, long N, int C,
                    bool training, float momentum, float eps) {
  float *mean = mean_rstd, *rstd = mean + C;
  if (training) {
    double *s = arena_calloc(sizeof(double) * (size_t)(2 * C + 1)), *ss = s + C;
    for (long n = 0; n < N; n++)
      for (int c = 0; c < C; c++) s[c] += x[n * C + c];
    for (int c = 0; c < C; c++) s[c] /= (double)N;
    for (long n = 0; n < N; n++)
      for (int c = 0; c < C; c++) {
        double d = x[n * C + c] - s[c];
        ss[c] += d * d;
      }
    for (int c = 0; c < C; c++) {
      double var = ss[c] / (double)N; /* biased: what normalizes this batch */
      mean[c] = (float)s[c];
      rstd[c] = (float)(1.0 / sqrt(var + eps));
      if (run_mean)
        run_mean[c] = (1 - momentum) * run_mean[c] + momentum * mean[c];
      if (run_var) /* unbiased, as torch keeps it */
        run_var[c] = (1 - momentum) * run_var[c] + momentum * (float)(ss[c] / (double)(N - 1));
    }
  } else {
    for (int c = 0; c < C; c++) {
      mean[c] = run_mean[c];
      rstd[c] = 1.0f / sqrtf(run_var[c] + eps);
    }
  }

  const float *gm = gamma, *bt = beta;
  for (long n = 0; n < N; n++)
    for (int c = 0; c < C; c++)
      y[n * C + c] =
          (x[n * C + c] - mean[c]) * rstd[c] * (gm ? gm[c] : 1.0f) + (bt ? bt[c] : 0.0f);
}

/* ---------- embedding ---------- */

/* Scatter-add: each output row's gradient goes back to the row of W it was copied from. */
void cpu_embedding_grad(float *dW, const int *ids, const float *g, long n, int D) {
  for (long i = 0; i < n; i++) {
    float *dst = dW + (long)ids[i] * D;
    const float *src = g + i * D;
    for (int j = 0; j < D; j++) dst[j] += src[j];
  }
}

/* out (n, D): row i is row idx[i] of W */
void cpu_embedding(const float *W, const int *idx, float *out, long n, int D) {
  for (long i = 0; i < n; i++)
    memcpy(out + i * D, W + (long)idx[i] * D, sizeof(float) * (size_t)D);
}

/* ---------- dropout ---------- */

/* The kept mask (one byte per element) and the 1 / (1 - p) scale route the gradient. */
/* Elements above which dropout's loops are split over threads (a fork costs a few us). The
 * clause is written if (parallel: ...): a bare if on `parallel for simd` also governs the simd
 * part, and a false condition then runs the loop one element at a time, many times slower. */
#define DROPOUT_PAR_MIN 65536

void cpu_dropout_grad(float *dx, const float *g, const uint8_t *keep, float scale, long n,
                      bool fresh) {
  if (fresh) {
#pragma omp parallel for simd schedule(static) if (parallel: n >= DROPOUT_PAR_MIN)
    for (long i = 0; i < n; i++) dx[i] = g[i] * (keep[i] ? scale : 0.0f);
  } else {
#pragma omp parallel for simd schedule(static) if (parallel: n >= DROPOUT_PAR_MIN)
    for (long i = 0; i < n; i++) dx[i] += g[i] * (keep[i] ? scale : 0.0f);
  }
}

/* Element i is kept when dropout_bits(i) >= thr, the mask seeded by (s0, s1) (ops/nn.c). */
void cpu_dropout(const float *xd, float *od, uint8_t *keep, long n, uint32_t s0, uint32_t s1,
                 uint32_t thr, float scale) {
#pragma omp parallel for simd schedule(static) if (parallel: n >= DROPOUT_PAR_MIN)
  for (long i = 0; i < n; i++) { /* hot */
    uint8_t k = dropout_bits((uint32_t)i, s0, s1) >= thr;
    keep[i] = k;
    od[i] = xd[i] * (k ? scale : 0.0f);
  }
}
