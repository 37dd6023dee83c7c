/* nn.cu — layer norm, batch norm, embedding lookup and dropout on the GPU (CPU twin:
 * common/cpu/cpu_nn.c; fronts: common/ops/nn.c). Tested by tests/cuda/cases_nn.c.
 *
 * Both norms compute xhat = (x - mean) * rstd, rstd = 1 / sqrt(var + eps) (biased variance),
 * y = xhat * gamma + beta (gamma, beta NULL: 1 and 0), and backward
 *   dxhat = dy * gamma,  dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)).
 *
 * Grids, and why:
 *  - Layer norm (groups are rows): one warp per row, 8 warps a block; the row's sums are warp
 *    shuffles, and a warp reads 32 consecutive floats of its row (coalesced). Rows shorter than
 *    LN_WARP_MIN_D would leave most lanes idle: they take the plain kernels, one thread per row
 *    (the same arithmetic in a loop; the cases' D = 1, 2, 7 run them, D >= 16 the warp kernels).
 *  - Column sums (layer norm's dgamma/dbeta, both of batch norm's passes): one block per 32
 *    columns, 8 row groups of 32 threads; thread (group k, column c) sums rows k, k + 8, ... of
 *    column c (a warp reads 32 consecutive floats of a row), and the 8 partial sums are added in
 *    group order through shared memory. A block owns its columns outright, so the sums are
 *    deterministic (no atomics) and batch norm's forward and backward are one kernel each: the
 *    block computes its columns' statistics, then normalizes those columns. With fewer than
 *    COL_SPLIT_MIN rows the plain kernels run instead: one thread per column walking every row.
 *    Batch norm sums in double, as the CPU does (it is not a hot path: only lab06's demo).
 *  - Embedding, dropout and their gradients: one thread per element (grid-stride). The embedding
 *    gradient scatters with float atomicAdd, since token ids repeat: the order of the adds to
 *    one row of dW is the hardware's, so dW is reproducible only up to rounding.
 *  - Dropout's mask is counter-based: element i is kept when dropout_bits(i, s0, s1) >= thr,
 *    the same integer arithmetic as the CPU, so both devices drop the same elements given the
 *    same seed (the front draws it from g_rng) and a training step matches across devices.
 */
#include "kernels.cuh"

extern "C" {
#include "../common/dropout_bits.h" /* the CPU's mask bits, bit for bit */
}

enum {
  WARPS = 8,          /* warps a block for the warp-per-row kernels */
  LN_WARP_MIN_D = 16, /* rows at least this long get a warp each; shorter, a thread each */
  COLS = 32,          /* columns a block for the column sums */
  GROUPS = 8,         /* row groups a block: COLS * GROUPS = 256 threads */
  COL_SPLIT_MIN = 64  /* rows below which a column is summed by one thread (plain kernels) */
};

static unsigned cap_blocks(long b) { return cap_grid(b, 8192); }

/* ---------- layer norm: forward ---------- */

/* y (rows, D), stats (rows, 2) = mean, rstd of each row: one warp per row */
static __global__ void layer_norm_warp_kernel(const float *x, const float *gamma,
                                              const float *beta, float *y, float *stats,
                                              long rows, int D, float eps) {
  int lane = threadIdx.x % 32;
  /* r depends only on the warp: its 32 lanes take every trip together (full-mask shuffles) */
  for (long r = (long)blockIdx.x * WARPS + threadIdx.x / 32; r < rows;
       r += (long)gridDim.x * WARPS) {
    const float *xr = x + r * D;
    float s = 0.0f;
    for (int j = lane; j < D; j += 32) s += xr[j];
    float mean = warp_sum(s) / (float)D;
    float q = 0.0f; /* two passes, as the CPU: no cancellation */
    for (int j = lane; j < D; j += 32) q += (xr[j] - mean) * (xr[j] - mean);
    float rstd = 1.0f / sqrtf(warp_sum(q) / (float)D + eps);
    float *yr = y + r * D;
    for (int j = lane; j < D; j += 32)
      yr[j] = (xr[j] - mean) * rstd * (gamma ? gamma[j] : 1.0f) + (beta ? beta[j] : 0.0f);
    if (lane == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = rstd;
    }
  }
}

/* The same, one thread per row (short rows). */
static __global__ void layer_norm_plain_kernel(const float *x, const float *gamma,
                                               const float *beta, float *y, float *stats,
                                               long rows, int D, float eps) {
  for (long r = first_index(); r < rows; r += grid_stride()) {
    const float *xr = x + r * D;
    float s = 0.0f, q = 0.0f;
    for (int j = 0; j < D; j++) s += xr[j];
    float mean = s / (float)D;
    for (int j = 0; j < D; j++) q += (xr[j] - mean) * (xr[j] - mean);
    float rstd = 1.0f / sqrtf(q / (float)D + eps);
    for (int j = 0; j < D; j++)
      y[r * D + j] = (xr[j] - mean) * rstd * (gamma ? gamma[j] : 1.0f) + (beta ? beta[j] : 0.0f);
    stats[2 * r] = mean;
    stats[2 * r + 1] = rstd;
  }
}

static void cuda_layer_norm(const float *x, const float *gamma, const float *beta, float *y,
                            float *stats, long rows, int D, float eps) {
  if (rows <= 0 || D <= 0) return;
  if (D >= LN_WARP_MIN_D)
    LAUNCH_SYNC(layer_norm_warp_kernel, cap_blocks((rows + WARPS - 1) / WARPS), 32 * WARPS, 0, x,
                gamma, beta, y, stats, rows, D, eps);
  else
    LAUNCH(layer_norm_plain_kernel, ew_blocks(rows, EW_THREADS), EW_THREADS, 0, x, gamma, beta,
           y, stats, rows, D, eps);
}

/* ---------- layer norm: backward ---------- */

/* dx (rows, D) (+)= rstd * (dxhat - a - xhat * b), a = mean(dxhat), b = mean(dxhat * xhat),
 * dxhat = g * gamma: one warp per row */
static __global__ void layer_norm_dx_warp_kernel(const float *x, const float *gamma,
                                                 const float *stats, const float *g, float *dx,
                                                 long rows, int D, bool fresh) {
  int lane = threadIdx.x % 32;
  const float invD = 1.0f / (float)D;
  for (long r = (long)blockIdx.x * WARPS + threadIdx.x / 32; r < rows;
       r += (long)gridDim.x * WARPS) {
    const float *xr = x + r * D, *gr = g + r * D;
    const float mean = stats[2 * r], rstd = stats[2 * r + 1];
    float a = 0.0f, b = 0.0f;
    for (int j = lane; j < D; j += 32) {
      float xh = (xr[j] - mean) * rstd, dxh = gr[j] * (gamma ? gamma[j] : 1.0f);
      a += dxh;
      b += dxh * xh;
    }
    a = warp_sum(a) * invD;
    b = warp_sum(b) * invD;
    float *dr = dx + r * D;
    for (int j = lane; j < D; j += 32) {
      float xh = (xr[j] - mean) * rstd, dxh = gr[j] * (gamma ? gamma[j] : 1.0f);
      float v = rstd * (dxh - a - xh * b);
      dr[j] = fresh ? v : dr[j] + v;
    }
  }
}

/* The same, one thread per row (short rows). */
static __global__ void layer_norm_dx_plain_kernel(const float *x, const float *gamma,
                                                  const float *stats, const float *g, float *dx,
                                                  long rows, int D, bool fresh) {
  const float invD = 1.0f / (float)D;
  for (long r = first_index(); r < rows; r += grid_stride()) {
    const float *xr = x + r * D, *gr = g + r * D;
    const float mean = stats[2 * r], rstd = stats[2 * r + 1];
    float a = 0.0f, b = 0.0f;
    for (int j = 0; j < D; j++) {
      float xh = (xr[j] - mean) * rstd, dxh = gr[j] * (gamma ? gamma[j] : 1.0f);
      a += dxh;
      b += dxh * xh;
    }
    a *= invD;
    b *= invD;
    for (int j = 0; j < D; j++) {
      float xh = (xr[j] - mean) * rstd, dxh = gr[j] * (gamma ? gamma[j] : 1.0f);
      float v = rstd * (dxh - a - xh * b);
      dx[r * D + j] = fresh ? v : dx[r * D + j] + v;
    }
  }
}

/* dgamma[c] += sum_r g[r, c] * xhat[r, c], dbeta[c] += sum_r g[r, c] (either may be NULL):
 * a block per 32 columns, 8 row groups combined in shared memory in a fixed order */
static __global__ void layer_norm_cols_kernel(const float *x, const float *stats, const float *g,
                                              float *dgamma, float *dbeta, long rows, int D) {
  SHARED_ARRAY(float, pg, GROUPS * COLS); /* (groups, cols) partial sums of g * xhat */
  SHARED_ARRAY(float, pb, GROUPS * COLS); /* (groups, cols) partial sums of g */
  const int col = threadIdx.x % COLS, grp = threadIdx.x / COLS;
  /* c0 depends only on the block: every thread takes every trip and reaches every barrier */
  for (long c0 = (long)blockIdx.x * COLS; c0 < D; c0 += (long)gridDim.x * COLS) {
    const long c = c0 + col;
    float sg = 0.0f, sb = 0.0f;
    if (c < D)
      for (long r = grp; r < rows; r += GROUPS) {
        float gv = g[r * D + c], xh = (x[r * D + c] - stats[2 * r]) * stats[2 * r + 1];
        sg += gv * xh;
        sb += gv;
      }
    pg[grp * COLS + col] = sg;
    pb[grp * COLS + col] = sb;
    __syncthreads();
    if (grp == 0 && c < D) {
      float tg = 0.0f, tb = 0.0f;
      for (int k = 0; k < GROUPS; k++) {
        tg += pg[k * COLS + col];
        tb += pb[k * COLS + col];
      }
      if (dgamma) dgamma[c] += tg;
      if (dbeta) dbeta[c] += tb;
    }
    __syncthreads(); /* the partials are rewritten by the next trip */
  }
}

/* The same sums, one thread per column walking every row (few rows). */
static __global__ void layer_norm_cols_plain_kernel(const float *x, const float *stats,
                                                    const float *g, float *dgamma, float *dbeta,
                                                    long rows, int D) {
  for (long c = first_index(); c < D; c += grid_stride()) {
    float sg = 0.0f, sb = 0.0f;
    for (long r = 0; r < rows; r++) {
      float gv = g[r * D + c], xh = (x[r * D + c] - stats[2 * r]) * stats[2 * r + 1];
      sg += gv * xh;
      sb += gv;
    }
    if (dgamma) dgamma[c] += sg;
    if (dbeta) dbeta[c] += sb;
  }
}

static void cuda_layer_norm_grad(const float *x, const float *gamma, const float *stats,
                                 const float *g, float *dx, float *dgamma, float *dbeta,
                                 long rows, int D, bool fresh) {
  if (rows <= 0 || D <= 0) return;
  if (dx) {
    if (D >= LN_WARP_MIN_D)
      LAUNCH_SYNC(layer_norm_dx_warp_kernel, cap_blocks((rows + WARPS - 1) / WARPS), 32 * WARPS,
                  0, x, gamma, stats, g, dx, rows, D, fresh);
    else
      LAUNCH(layer_norm_dx_plain_kernel, ew_blocks(rows, EW_THREADS), EW_THREADS, 0, x, gamma,
             stats, g, dx, rows, D, fresh);
  }
  if (dgamma || dbeta) {
    if (rows >= COL_SPLIT_MIN)
      LAUNCH_SYNC(layer_norm_cols_kernel, cap_blocks((D + COLS - 1) / COLS), COLS * GROUPS, 0, x,
                  stats, g, dgamma, dbeta, rows, D);
    else
      LAUNCH(layer_norm_cols_plain_kernel, ew_blocks(D, EW_THREADS), EW_THREADS, 0, x, stats, g,
             dgamma, dbeta, rows, D);
  }
}

/* ---------- batch norm ---------- */

/* Column c's statistics: training, from the batch (bmean, and ssq the sum of squared deviations,
 * in double; the running stats updated, the variance kept there unbiased, as torch keeps it);
 * eval, from the running stats. Written to mean_rstd and returned. */
static __device__ void bn_finish_column(long c, double bmean, double ssq, long N, bool training,
                                        float *run_mean, float *run_var, float momentum,
                                        float eps, float *mean_rstd, int C, float *mean_out,
                                        float *rstd_out) {
  float mean, rstd;
  if (training) {
    double var = ssq / (double)N; /* biased: what normalizes this batch */
    mean = (float)bmean;
    rstd = (float)(1.0 / sqrt(var + eps));
    if (run_mean) run_mean[c] = (1 - momentum) * run_mean[c] + momentum * mean;
    if (run_var)
      run_var[c] = (1 - momentum) * run_var[c] + momentum * (float)(ssq / (double)(N - 1));
  } else {
    mean = run_mean[c];
    rstd = 1.0f / sqrtf(run_var[c] + eps);
  }
  mean_rstd[c] = mean;
  mean_rstd[C + c] = rstd;
  *mean_out = mean;
  *rstd_out = rstd;
}

/* x, y (N, C); mean_rstd (2C): a block per 32 columns, 8 row groups; the block computes its
 * columns' statistics (summed per group, combined in group order) and then normalizes them */
static __global__ void batch_norm_kernel(const float *x, const float *gamma, const float *beta,
                                         float *run_mean, float *run_var, float *y,
                                         float *mean_rstd, long N, int C, bool training,
                                         float momentum, float eps) {
  SHARED_ARRAY(double, part, GROUPS * COLS); /* (groups, cols) partial sums */
  SHARED_ARRAY(double, bmean, COLS);         /* the batch mean of each column, in double */
  SHARED_ARRAY(float, stat, 2 * COLS);       /* mean, rstd of each column as normalized */
  const int col = threadIdx.x % COLS, grp = threadIdx.x / COLS;
  for (long c0 = (long)blockIdx.x * COLS; c0 < C; c0 += (long)gridDim.x * COLS) {
    const long c = c0 + col;
    const bool in = c < C;
    if (training) { /* the same for the whole block: the barriers below are reached by all */
      double s = 0;
      if (in)
        for (long r = grp; r < N; r += GROUPS) s += x[r * C + c];
      part[grp * COLS + col] = s;
      __syncthreads();
      if (grp == 0) {
        double t = 0;
        for (int k = 0; k < GROUPS; k++) t += part[k * COLS + col];
        bmean[col] = t / (double)N;
      }
      __syncthreads();
      const double m = bmean[col];
      double ss = 0;
      if (in)
        for (long r = grp; r < N; r += GROUPS) {
          double d = x[r * C + c] - m;
          ss += d * d;
        }
      part[grp * COLS + col] = ss;
      __syncthreads();
      if (grp == 0 && in) {
        double t = 0;
        for (int k = 0; k < GROUPS; k++) t += part[k * COLS + col];
        bn_finish_column(c, m, t, N, true, run_mean, run_var, momentum, eps, mean_rstd, C,
                         &stat[col], &stat[COLS + col]);
      }
    } else if (grp == 0 && in) {
      bn_finish_column(c, 0, 0, N, false, run_mean, run_var, momentum, eps, mean_rstd, C,
                       &stat[col], &stat[COLS + col]);
    }
    __syncthreads();
    if (in) {
      const float mean = stat[col], rstd = stat[COLS + col];
      const float gc = gamma ? gamma[c] : 1.0f, bc = beta ? beta[c] : 0.0f;
      for (long r = grp; r < N; r += GROUPS) y[r * C + c] = (x[r * C + c] - mean) * rstd * gc + bc;
    }
    __syncthreads(); /* part, bmean and stat are rewritten by the next trip */
  }
}

/* The same, one thread per column (few rows). */
static __global__ void batch_norm_plain_kernel(const float *x, const float *gamma,
                                               const float *beta, float *run_mean,
                                               float *run_var, float *y, float *mean_rstd,
                                               long N, int C, bool training, float momentum,
                                               float eps) {
  for (long c = first_index(); c < C; c += grid_stride()) {
    double m = 0, ss = 0;
    if (training) {
      for (long r = 0; r < N; r++) m += x[r * C + c];
      m /= (double)N;
      for (long r = 0; r < N; r++) {
        double d = x[r * C + c] - m;
        ss += d * d;
      }
    }
    float mean, rstd;
    bn_finish_column(c, m, ss, N, training, run_mean, run_var, momentum, eps, mean_rstd, C,
                     &mean, &rstd);
    const float gc = gamma ? gamma[c] : 1.0f, bc = beta ? beta[c] : 0.0f;
    for (long r = 0; r < N; r++) y[r * C + c] = (x[r * C + c] - mean) * rstd * gc + bc;
  }
}

static void cuda_batch_norm(const float *x, const float *gamma, const float *beta,
                            float *run_mean, float *run_var, float *y, float *mean_rstd, long N,
                            int C, bool training, float momentum, float eps) {
  if (C <= 0) return;
  if (N >= COL_SPLIT_MIN)
    LAUNCH_SYNC(batch_norm_kernel, cap_blocks((C + COLS - 1) / COLS), COLS * GROUPS, 0, x, gamma,
                beta, run_mean, run_var, y, mean_rstd, N, C, training, momentum, eps);
  else
    LAUNCH(batch_norm_plain_kernel, ew_blocks(C, EW_THREADS), EW_THREADS, 0, x, gamma, beta,
           run_mean, run_var, y, mean_rstd, N, C, training, momentum, eps);
}

/* dgamma[c] += sum_r g * xhat, dbeta[c] += sum_r g (double sums); dx += k * (g - a - xhat * b)
 * with k = gamma * rstd and, in training, a = sum g / N, b = sum g * xhat / N (in eval the
 * statistics are constants: a = b = 0). Layout as batch_norm_kernel. dx is always added (the
 * front passes a zeroed gradient). */
static __device__ void bn_grad_column(long c, double sg, double sgx, long N, bool training,
                                      const float *gamma, const float *rstd, float *dgamma,
                                      float *dbeta, float *k, float *a, float *b) {
  if (dgamma) dgamma[c] += (float)sgx;
  if (dbeta) dbeta[c] += (float)sg;
  *k = (gamma ? gamma[c] : 1.0f) * rstd[c];
  *a = training ? (float)(sg / (double)N) : 0.0f;
  *b = training ? (float)(sgx / (double)N) : 0.0f;
}

static __global__ void batch_norm_grad_kernel(const float *x, const float *gamma,
                                              const float *mean_rstd, const float *g, float *dx,
                                              float *dgamma, float *dbeta, long N, int C,
                                              bool training) {
  SHARED_ARRAY(double, pg, GROUPS * COLS);  /* partial sums of g */
  SHARED_ARRAY(double, pgx, GROUPS * COLS); /* partial sums of g * xhat */
  SHARED_ARRAY(float, coef, 3 * COLS);      /* k, a, b of each column */
  const float *mean = mean_rstd, *rstd = mean_rstd + C;
  const int col = threadIdx.x % COLS, grp = threadIdx.x / COLS;
  for (long c0 = (long)blockIdx.x * COLS; c0 < C; c0 += (long)gridDim.x * COLS) {
    const long c = c0 + col;
    const bool in = c < C;
    double sg = 0, sgx = 0;
    if (in)
      for (long r = grp; r < N; r += GROUPS) {
        float gv = g[r * C + c];
        sg += gv;
        sgx += gv * (x[r * C + c] - mean[c]) * rstd[c];
      }
    pg[grp * COLS + col] = sg;
    pgx[grp * COLS + col] = sgx;
    __syncthreads();
    if (grp == 0 && in) {
      double tg = 0, tgx = 0;
      for (int q = 0; q < GROUPS; q++) {
        tg += pg[q * COLS + col];
        tgx += pgx[q * COLS + col];
      }
      bn_grad_column(c, tg, tgx, N, training, gamma, rstd, dgamma, dbeta, &coef[col],
                     &coef[COLS + col], &coef[2 * COLS + col]);
    }
    __syncthreads();
    if (in && dx) {
      const float k = coef[col], a = coef[COLS + col], b = coef[2 * COLS + col];
      for (long r = grp; r < N; r += GROUPS) {
        float xh = (x[r * C + c] - mean[c]) * rstd[c];
        dx[r * C + c] += k * (g[r * C + c] - a - xh * b);
      }
    }
    __syncthreads(); /* the partials and coefficients are rewritten by the next trip */
  }
}

/* The same, one thread per column (few rows). */
static __global__ void batch_norm_grad_plain_kernel(const float *x, const float *gamma,
                                                    const float *mean_rstd, const float *g,
                                                    float *dx, float *dgamma, float *dbeta,
                                                    long N, int C, bool training) {
  const float *mean = mean_rstd, *rstd = mean_rstd + C;
  for (long c = first_index(); c < C; c += grid_stride()) {
    double sg = 0, sgx = 0;
    for (long r = 0; r < N; r++) {
      float gv = g[r * C + c];
      sg += gv;
      sgx += gv * (x[r * C + c] - mean[c]) * rstd[c];
    }
    float k, a, b;
    bn_grad_column(c, sg, sgx, N, training, gamma, rstd, dgamma, dbeta, &k, &a, &b);
    if (dx)
      for (long r = 0; r < N; r++) {
        float xh = (x[r * C + c] - mean[c]) * rstd[c];
        dx[r * C + c] += k * (g[r * C + c] - a - xh * b);
      }
  }
}

static void cuda_batch_norm_grad(const float *x, const float *gamma, const float *mean_rstd,
                                 const float *g, float *dx, float *dgamma, float *dbeta, long N,
                                 int C, bool training) {
  if (C <= 0) return;
  if (N >= COL_SPLIT_MIN)
    LAUNCH_SYNC(batch_norm_grad_kernel, cap_blocks((C + COLS - 1) / COLS), COLS * GROUPS, 0, x,
                gamma, mean_rstd, g, dx, dgamma, dbeta, N, C, training);
  else
    LAUNCH(batch_norm_grad_plain_kernel, ew_blocks(C, EW_THREADS), EW_THREADS, 0, x, gamma,
           mean_rstd, g, dx, dgamma, dbeta, N, C, training);
}

/* ---------- embedding ---------- */

/* out (n, D): row i is row idx[i] of W; one thread per output element */
static __global__ void embedding_kernel(const float *W, const int *idx, float *out, long n,
                                        int D) {
  for (long t = first_index(); t < n * D; t += grid_stride()) {
    long i = t / D, j = t - i * D;
    out[t] = W[(long)idx[i] * D + j];
  }
}
static void cuda_embedding(const float *W, const int *idx, float *out, long n, int D) {
  if (n * D > 0)
    LAUNCH(embedding_kernel, ew_blocks(n * D, EW_THREADS), EW_THREADS, 0, W, idx, out, n, D);
}

/* dW[idx[i], j] += g[i, j]: ids repeat, so the adds are float atomics (their order is the
 * hardware's) */
static __global__ void embedding_grad_kernel(float *dW, const int *idx, const float *g, long n,
                                             int D) {
  for (long t = first_index(); t < n * D; t += grid_stride()) {
    long i = t / D, j = t - i * D;
    atomicAdd(&dW[(long)idx[i] * D + j], g[t]);
  }
}
static void cuda_embedding_grad(float *dW, const int *idx, const float *g, long n, int D) {
  if (n * D > 0)
    LAUNCH(embedding_grad_kernel, ew_blocks(n * D, EW_THREADS), EW_THREADS, 0, dW, idx, g, n, D);
}

/* ---------- dropout ---------- */

/* keep[i] = bits(i) >= thr; y[i] = kept ? x[i] * scale : 0 */
static __global__ void dropout_kernel(const float *x, float *y, uint8_t *keep, long n,
                                      uint32_t s0, uint32_t s1, uint32_t thr, float scale) {
  for (long i = first_index(); i < n; i += grid_stride()) {
    uint8_t k = dropout_bits((uint32_t)i, s0, s1) >= thr;
    keep[i] = k;
    y[i] = x[i] * (k ? scale : 0.0f);
  }
}
static void cuda_dropout(const float *x, float *y, uint8_t *keep, long n, uint32_t s0,
                         uint32_t s1, uint32_t thr, float scale) {
  if (n > 0)
    LAUNCH(dropout_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, x, y, keep, n, s0, s1, thr,
           scale);
}

static __global__ void dropout_grad_kernel(float *dx, const float *g, const uint8_t *keep,
                                           float scale, long n, bool fresh) {
  for (long i = first_index(); i < n; i += grid_stride()) {
    float v = g[i] * (keep[i] ? scale : 0.0f);
    dx[i] = fresh ? v : dx[i] + v;
  }
}
static void cuda_dropout_grad(float *dx, const float *g, const uint8_t *keep, float scale, long n,
                              bool fresh) {
  if (n > 0)
    LAUNCH(dropout_grad_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, dx, g, keep, scale, n,
           fresh);
}

void cuda_register_nn(Backend *be) {
  be->layer_norm = cuda_layer_norm;
  be->layer_norm_grad = cuda_layer_norm_grad;
  be->batch_norm = cuda_batch_norm;
  be->batch_norm_grad = cuda_batch_norm_grad;
  be->embedding = cuda_embedding;
  be->embedding_grad = cuda_embedding_grad;
  be->dropout = cuda_dropout;
  be->dropout_grad = cuda_dropout_grad;
}
