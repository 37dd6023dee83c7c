/* Exercise 6.7 — layer norm as CUDA kernels (reference solution). See
 * labs/lab06/layer_norm_kernel.cu for the statement.
 *
 * x (rows, D); each row is normalized over its D features:
 *   mean = sum_j x_j / D, var = sum_j (x_j - mean)^2 / D (biased), rstd = 1 / sqrt(var + eps)
 *   y_j = (x_j - mean) * rstd * gamma_j + beta_j         (gamma, beta NULL: 1 and 0)
 * stats (rows, 2) keeps mean and rstd for the backward:
 *   dxhat_j = g_j * gamma_j,  dx_j = rstd * (dxhat_j - mean(dxhat) - xhat_j * mean(dxhat * xhat))
 *   dgamma_j += sum_rows g_j * xhat_j,  dbeta_j += sum_rows g_j                               */
#include "lab06/lab06_kernels.h"

#include "../../cuda/al_cuda.h"

enum {
  LN_MAX_THREADS = 256, /* a block per row: threads a block, at most (a power of two) */
  LN_COLS = 32,         /* the column sums: columns a block (a warp's 32 lanes) */
  LN_GROUPS = 8         /* ... and row groups a block: 256 threads */
};

/* The sum of every thread's v, returned to every thread: each thread writes its value to
 * red[tid], then half the threads add the other half's, halving until red[0] holds the sum.
 * blockDim.x must be a power of two. Every thread of the block must call it. */
static __device__ float block_reduce_sum(float v, float *red) {
  const int tid = threadIdx.x;
  red[tid] = v;
  __syncthreads(); /* every value is in */
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) red[tid] += red[tid + s];
    __syncthreads(); /* this level's sums are in before the next level reads them */
  }
  const float total = red[0];
  __syncthreads(); /* everyone has read red[0] before the next call overwrites it */
  return total;
}

/* ---------- forward: one block per row ---------- */

static __global__ void layer_norm_block_kernel(const float *x, const float *gamma,
                                               const float *beta, float *y, float *stats,
                                               long rows, int D, float eps) {
  __shared__ float red[LN_MAX_THREADS];
  /* r depends only on the block: every thread takes every trip and meets every barrier */
  for (long r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *xr = x + r * D; /* (D) */
    float s = 0.0f;
    for (int j = threadIdx.x; j < D; j += blockDim.x) s += xr[j];
    const float mean = block_reduce_sum(s, red) / (float)D;
    float q = 0.0f; /* a second pass over the row: no cancellation in E[x^2] - mean^2 */
    for (int j = threadIdx.x; j < D; j += blockDim.x) q += (xr[j] - mean) * (xr[j] - mean);
    const float rstd = 1.0f / sqrtf(block_reduce_sum(q, red) / (float)D + eps);
    float *yr = y + r * D; /* (D) */
    for (int j = threadIdx.x; j < D; j += blockDim.x)
      yr[j] = (xr[j] - mean) * rstd * (gamma ? gamma[j] : 1.0f) + (beta ? beta[j] : 0.0f);
    if (threadIdx.x == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = rstd;
    }
  }
}

/* Threads a block for rows of D: the smallest power of two >= D, from one warp to 256. */
static int ln_threads(int D) {
  int t = 32;
  while (t < D && t < LN_MAX_THREADS) t *= 2;
  return t;
}

int layer_norm_cuda(const float *x, const float *gamma, const float *beta, float *y,
                    float *stats, long rows, int D, float eps) {
  layer_norm_block_kernel<<<cap_grid(rows, 8192), ln_threads(D)>>>(x, gamma, beta, y, stats,
                                                                   rows, D, eps);
  return 0;
}

/* ---------- backward ---------- */

/* dx (rows, D), one block per row: the two means are block reductions. */
static __global__ void layer_norm_dx_block_kernel(const float *x, const float *gamma,
                                                  const float *stats, const float *g, float *dx,
                                                  long rows, int D, bool fresh) {
  __shared__ float red[LN_MAX_THREADS];
  for (long r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *xr = x + r * D, *gr = g + r * D; /* (D) each */
    const float mean = stats[2 * r], rstd = stats[2 * r + 1];
    float sa = 0.0f, sb = 0.0f;
    for (int j = threadIdx.x; j < D; j += blockDim.x) {
      const float xh = (xr[j] - mean) * rstd, dxh = gr[j] * (gamma ? gamma[j] : 1.0f);
      sa += dxh;
      sb += dxh * xh;
    }
    const float a = block_reduce_sum(sa, red) / (float)D; /* mean(dxhat) */
    const float b = block_reduce_sum(sb, red) / (float)D; /* mean(dxhat * xhat) */
    float *dr = dx + r * D;
    for (int j = threadIdx.x; j < D; j += blockDim.x) {
      const float xh = (xr[j] - mean) * rstd, dxh = gr[j] * (gamma ? gamma[j] : 1.0f);
      const float v = rstd * (dxh - a - xh * b);
      dr[j] = fresh ? v : dr[j] + v;
    }
  }
}

/* dgamma, dbeta (D) += the column sums over rows, either may be NULL. A block owns 32 columns;
 * its 8 warps each sum every 8th row of them (a warp reads 32 consecutive floats of a row),
 * then the 8 partial sums of each column are added in warp order through shared memory: no
 * atomics, the same bits every run. */
static __global__ void layer_norm_cols_block_kernel(const float *x, const float *stats,
                                                    const float *g, float *dgamma, float *dbeta,
                                                    long rows, int D) {
  __shared__ float pg[LN_GROUPS * LN_COLS]; /* (groups, cols): partial sums of g * xhat */
  __shared__ float pb[LN_GROUPS * LN_COLS]; /* (groups, cols): partial sums of g */
  const int col = threadIdx.x % LN_COLS, grp = threadIdx.x / LN_COLS;
  for (long c0 = (long)blockIdx.x * LN_COLS; c0 < D; c0 += (long)gridDim.x * LN_COLS) {
    const long c = c0 + col;
    float sg = 0.0f, sb = 0.0f;
    if (c < D)
      for (long r = grp; r < rows; r += LN_GROUPS) {
        const float gv = g[r * D + c], xh = (x[r * D + c] - stats[2 * r]) * stats[2 * r + 1];
        sg += gv * xh;
        sb += gv;
      }
    pg[grp * LN_COLS + col] = sg;
    pb[grp * LN_COLS + col] = sb;
    __syncthreads(); /* all 8 partials of every column are in */
    if (grp == 0 && c < D) {
      float tg = 0.0f, tb = 0.0f;
      for (int k = 0; k < LN_GROUPS; k++) {
        tg += pg[k * LN_COLS + col];
        tb += pb[k * LN_COLS + col];
      }
      if (dgamma) dgamma[c] += tg;
      if (dbeta) dbeta[c] += tb;
    }
    __syncthreads(); /* the partials are rewritten by the next trip */
  }
}

int layer_norm_grad_cuda(const float *x, const float *gamma, const float *stats, const float *g,
                         float *dx, float *dgamma, float *dbeta, long rows, int D, int fresh) {
  if (dx)
    layer_norm_dx_block_kernel<<<cap_grid(rows, 8192), ln_threads(D)>>>(x, gamma, stats, g, dx,
                                                                         rows, D, fresh != 0);
  if (dgamma || dbeta)
    layer_norm_cols_block_kernel<<<cap_grid((D + LN_COLS - 1) / LN_COLS, 8192),
                                   LN_COLS * LN_GROUPS>>>(x, stats, g, dgamma, dbeta, rows, D);
  return 0;
}
