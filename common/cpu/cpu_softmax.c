/* cpu_softmax.c — the CPU kernels of softmax, log-softmax, sequence masking and the two losses
 * (ops/softmax.c).
 *
 * All softmaxes work on rows: the last dim is the row, every leading dim is flattened into the
 * row count. Each row subtracts its max before exponentiating, so large logits never overflow.
 * Masking uses -inf semantics (t_sequence_mask with -inf, then softmax): a masked key
 * contributes exp(-inf) = 0, and a row with nothing left to attend to (every score -inf) is all
 * zeros, never NaN and never the uniform row d2l's -1e6 trick would give.
 *
 * Every error check (shapes, labels, valid lengths) runs in the front, before these kernels.
 */
#include <math.h>
#include <string.h>

#include "../fastmath.h"
#include "kernels.h"

/* Rows are spread over threads only when there is enough work to pay for the fork. */
#define PAR_MIN_ELEMS 32768

/* ---------- row kernels ---------- */
/* Written so GCC vectorizes them without -ffast-math: the exponential is a branch-free
 * polynomial instead of a call to expf, and reductions keep LANES independent partial results
 * (a fixed summation order, so results are deterministic). */

#define LANES 8

/* exp(x) for x <= 0, the only range a max-shifted softmax needs: fast_expf (within 1e-7
 * relative over [-87, 0]), with -inf and everything below -87 (exp < 2^-125) giving exactly 0;
 * NaN stays NaN. */
static inline float exp_le0(float x) { return fm_select(x < -87.0f, 0.0f, fast_expf(x)); }

/* The max of x[0..n), -inf when n == 0. A NaN is skipped here but poisons the sum later. */
static float row_max(const float *x, int n) {
  float acc[LANES], m = -INFINITY;
  for (int k = 0; k < LANES; k++) acc[k] = -INFINITY;
  int j = 0;
  for (; j + LANES <= n; j += LANES)
    for (int k = 0; k < LANES; k++) acc[k] = x[j + k] > acc[k] ? x[j + k] : acc[k];
  for (; j < n; j++) m = x[j] > m ? x[j] : m;
  for (int k = 0; k < LANES; k++) m = acc[k] > m ? acc[k] : m;
  return m;
}

/* sum of a[j] * b[j] (b == NULL: of a[j]). */
static float row_dot(const float *a, const float *b, int n) {
  float acc[LANES] = {0}, s = 0;
  int j = 0;
  if (b) {
    for (; j + LANES <= n; j += LANES)
      for (int k = 0; k < LANES; k++) acc[k] += a[j + k] * b[j + k];
    for (; j < n; j++) s += a[j] * b[j];
  } else {
    for (; j + LANES <= n; j += LANES)
      for (int k = 0; k < LANES; k++) acc[k] += a[j + k];
    for (; j < n; j++) s += a[j];
  }
  for (int k = 0; k < LANES; k++) s += acc[k];
  return s;
}

/* e[j] = exp(x[j] - m) for j < n; returns their sum. Kept out of line: inlined into the
 * cross-entropy's row loop, GCC 12 turned it into fully masked vector code, which is slower. */
__attribute__((noinline)) static float exp_shifted(const float *x, float m, float *e, int n) {
  for (int j = 0; j < n; j++) e[j] = exp_le0(x[j] - m); /* hot */
  return row_dot(e, NULL, n);
}

/* y[0..n) = softmax(x[0..n)), y[n..keys) = 0. A row whose max is -inf (empty, or all -inf)
 * has no probability mass to spread: it becomes zeros. */
static void softmax_row(const float *x, float *y, int n, int keys) {
  float m = row_max(x, n);
  if (m == -INFINITY) n = 0;
  float inv = 1.0f / exp_shifted(x, m, y, n);
  for (int j = 0; j < n; j++) y[j] *= inv;
  if (keys > n) memset(y + n, 0, sizeof(float) * (size_t)(keys - n));
}

/* Softmax of rows [r0, r1) of x (rows of `keys`) into y. Short rows (attention over a few keys)
 * would leave every exp in the scalar remainder of a vector loop, so they go in three passes:
 * the max-shifted rows, one exp over the whole block, which vectorizes, and the per-row
 * normalization. A row with nothing to attend to (max -inf) sums to 0 and stays all 0. */
#define SHORT_ROW 16
#define ROW_BLOCK 256 /* rows per block: 16 KB of a short-row block stays in L1 */

static void softmax_rows(const float *x, float *y, long r0, long r1, int keys) {
  if (keys >= SHORT_ROW) {
    for (long r = r0; r < r1; r++) softmax_row(x + r * keys, y + r * keys, keys, keys);
    return;
  }
  for (long r = r0; r < r1; r++) {
    const float *xr = x + r * keys;
    float *yr = y + r * keys;
    int n = keys;
    float m = row_max(xr, n);
    if (m == -INFINITY) n = 0; /* nothing to attend to (-inf - -inf would be NaN) */
    for (int j = 0; j < keys; j++) yr[j] = fm_select(j < n, xr[j] - m, -INFINITY);
  }
  float *yb = y + r0 * keys;
  const long cnt = (r1 - r0) * keys;
  for (long i = 0; i < cnt; i++) yb[i] = exp_le0(yb[i]); /* hot */
  for (long r = r0; r < r1; r++) {
    float *yr = y + r * keys;
    float sum = row_dot(yr, NULL, keys);
    if (sum > 0) {
      float inv = 1.0f / sum;
      for (int j = 0; j < keys; j++) yr[j] *= inv;
    }
  }
}

/* Softmax over every row of x (rows, keys), blocks of rows split over threads when there is
 * enough work. */
void cpu_softmax(const float *x, float *y, long rows, int keys) {
  long nblk = (rows + ROW_BLOCK - 1) / ROW_BLOCK;
#pragma omp parallel for schedule(static) if (rows * keys >= PAR_MIN_ELEMS)
  for (long b = 0; b < nblk; b++) {
    long r0 = b * ROW_BLOCK, r1 = r0 + ROW_BLOCK < rows ? r0 + ROW_BLOCK : rows;
    softmax_rows(x, y, r0, r1, keys);
  }
}

/* dx += y * (g - <g, y>): the softmax Jacobian-vector product. */
void cpu_softmax_grad(const float *y, const float *g, float *dx, long rows, int keys,
                      bool fresh) {
#pragma omp parallel for schedule(static) if (rows * keys >= PAR_MIN_ELEMS)
  for (long r = 0; r < rows; r++) {
    const float *yr = y + r * keys, *gr = g + r * keys;
    float *dr = dx + r * keys;
    float dot = row_dot(gr, yr, keys);
    if (fresh)
      for (int j = 0; j < keys; j++) dr[j] = yr[j] * (gr[j] - dot);
    else
      for (int j = 0; j < keys; j++) dr[j] += yr[j] * (gr[j] - dot);
  }
}

/* ---------- log-softmax ---------- */

/* y = log softmax(x) gives dx = g - softmax(x) * sum(g), with softmax(x) = exp(y). */
void cpu_log_softmax_grad(const float *y, const float *g, float *dx, long rows, int n,
                          bool fresh) {
#pragma omp parallel for schedule(static) if (rows * n >= PAR_MIN_ELEMS)
  for (long r = 0; r < rows; r++) {
    const float *yr = y + r * n, *gr = g + r * n;
    float *dr = dx + r * n;
    float gs = row_dot(gr, NULL, n);
    if (fresh)
      for (int j = 0; j < n; j++) dr[j] = gr[j] - exp_le0(yr[j]) * gs; /* y <= 0 */
    else
      for (int j = 0; j < n; j++) dr[j] += gr[j] - exp_le0(yr[j]) * gs;
  }
}

void cpu_log_softmax(const float *x, float *y, long rows, int n) {
#pragma omp parallel for schedule(static) if (rows * n >= PAR_MIN_ELEMS)
  for (long r = 0; r < rows; r++) {
    const float *xr = x + r * n;
    float *yr = y + r * n;
    float m = row_max(xr, n);
    if (m == -INFINITY) { /* log of a zero row: every entry is log 0 */
      for (int j = 0; j < n; j++) yr[j] = -INFINITY;
      continue;
    }
    float lse = m + logf(exp_shifted(xr, m, yr, n)); /* yr holds the exponentials for now */
    for (int j = 0; j < n; j++) yr[j] = xr[j] - lse;
  }
}

/* ---------- sequence mask ---------- */

/* dst = src (rows x keys), then each row's entries from its valid length on set to v. Rows are
 * short (a few keys): one copy of the whole block and short fills beat a copy per row. */
void cpu_sequence_mask(float *restrict dst, const float *restrict src, const int *len, long per,
                       long rows, int keys, float v) {
  memcpy(dst, src, sizeof(float) * (size_t)rows * (size_t)keys);
  for (long r = 0; r < rows; r++)
    for (int j = len[r / per]; j < keys; j++) dst[r * keys + j] = v;
}

/* fresh: store the kept entries' gradient and zeros for the masked ones */
void cpu_sequence_mask_grad(float *dx, const float *g, const int *len, long per, long rows,
                            int keys, bool fresh) {
  if (fresh) {
    cpu_sequence_mask(dx, g, len, per, rows, keys, 0.0f);
    return;
  }
  for (long r = 0; r < rows; r++) {
    int n = len[r / per];
    for (int j = 0; j < n; j++) dx[r * keys + j] += g[r * keys + j];
  }
}

/* ---------- cross-entropy ---------- */

/* d loss_r / d x_rj = w_r * (softmax_j - [j == label_r]). */
/* fresh: every row is stored, padding rows (w = 0) as zeros; w NULL means 1 */
void cpu_cross_entropy_grad(float *dx, const float *g, const float *e, const float *scale,
                            const int *label, const float *w, long rows, int V, bool fresh) {
#pragma omp parallel for schedule(static) if (rows * V >= PAR_MIN_ELEMS)
  for (long r = 0; r < rows; r++) {
    float *dr = dx + r * V;
    const float wr = w ? w[r] : 1.0f;
    if (wr == 0) { /* padding: no gradient */
      if (fresh) memset(dr, 0, sizeof(float) * (size_t)V);
      continue;
    }
    const float *er = e + r * V;
    float c = g[r] * scale[r];
    if (fresh)
      for (int j = 0; j < V; j++) dr[j] = c * er[j];
    else
      for (int j = 0; j < V; j++) dr[j] += c * er[j];
    dr[label[r]] -= g[r] * wr;
  }
}

void cpu_cross_entropy(const float *x, const int *label, const float *w, float *e, float *scale,
                       float *out, long rows, int V) {
#pragma omp parallel for schedule(static) if (rows * V >= PAR_MIN_ELEMS)
  for (long r = 0; r < rows; r++) {
    const float *xr = x + r * V;
    const float wr = w ? w[r] : 1.0f;
    if (wr == 0) { /* padding costs nothing and is exactly 0 */
      out[r] = 0;
      continue;
    }
    float m = row_max(xr, V);
    float sum = exp_shifted(xr, m, e + r * V, V);
    out[r] = (m + logf(sum) - xr[label[r]]) * wr;
    scale[r] = wr / sum;
  }
}
/* ---------- mean squared error ---------- */

/* dp += c (p - t), dt -= c (p - t) with c = 2 g / n; dp or dt may be NULL */
void cpu_mse_grad(float *dp, float *dt, const float *g1, const float *p, const float *t,
                  long n) {
  float c = 2.0f * g1[0] / (float)n;
  for (long i = 0; i < n; i++) {
    float d = c * (p[i] - t[i]);
    if (dp) dp[i] += d;
    if (dt) dt[i] -= d;
  }
}

void cpu_mse(const float *p, const float *t, long n, float *out1) {
  double s = 0;
  for (long i = 0; i < n; i++) {
    double d = (double)p[i] - t[i];
    s += d * d;
  }
  out1[0] = (float)(s / (double)n);
}
