/* fused.cu — lab 03's additive attention scores on the GPU (CPU twin: common/cpu/cpu_fused.c;
 * front: chapters/03_bahdanau/additive_scores.c; tests: tests/cuda/cases_fused.c):
 *     scores[b, i, j] = sum_c w_v[c] * tanh(q[b, i, c] + kp[b, j, c])
 * with T[b, i, j, c] = tanh(...) kept for the backward:
 *     dt = dscores[b, i, j] * w_v[c] * (1 - t^2),  dq += sum_j dt,  dkp += sum_i dt,
 *     dw_v[c] += sum_{b, i, j} dscores[b, i, j] * t.
 *
 * Grids. Every kernel here is the plain one-thread-per-output form (no fast variant beside it):
 *  - forward: a thread per score (b, i, j), looping over c; threads of a warp share q's row
 *    (a broadcast read) and read kp rows from L1/L2 (h is the attention's hidden size, 8 to 64).
 *  - dq, dkp: a thread per gradient element, summing over the other sequence (keys for dq,
 *    queries for dkp). Each element has one owner, so no atomics and the sums are in a fixed
 *    order; consecutive threads take consecutive c, so the reads of T are coalesced.
 *  - dw_v: a block per c sums dscores * t over all (b, i, j) with block_sum (LAUNCH_SYNC).
 * All gradients add (+=): the front passes tensor_grad buffers, never fresh ones.
 */
#include "kernels.cuh"

/* ---------- forward ---------- */

/* q (B, Q, h), kp (B, K, h), w (h) -> out (B, Q, K); T (B, Q, K, h) or NULL */
static __global__ void additive_scores_kernel(const float *q, const float *kp, const float *w,
                                              float *out, float *T, int B, int Q, int K,
                                              int h) {
  const long n = (long)B * Q * K;
  for (long o = first_index(); o < n; o += grid_stride()) {
    long j = o % K, bi = o / K, b = bi / Q; /* o = (b * Q + i) * K + j, bi = b * Q + i */
    const float *qi = q + bi * h, *kj = kp + (b * K + j) * h;
    float *t = T ? T + o * h : NULL;
    float s = 0.0f;
    for (int c = 0; c < h; c++) {
      float v = tanhf(qi[c] + kj[c]);
      if (t) t[c] = v;
      s += w[c] * v;
    }
    out[o] = s;
  }
}

static void cuda_additive_scores(const float *q, const float *kp, const float *w, float *out,
                                 float *T, int B, int Q, int K, int h) {
  long n = (long)B * Q * K;
  if (n > 0)
    LAUNCH(additive_scores_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, q, kp, w, out, T, B,
           Q, K, h);
}

/* ---------- backward ---------- */

/* dq[b, i, c] += sum_j g[b, i, j] * w[c] * (1 - T[b, i, j, c]^2); g (B, Q, K), dq (B, Q, h) */
static __global__ void additive_scores_dq_kernel(const float *g, const float *T, const float *w,
                                                 float *dq, int B, int Q, int K, int h) {
  const long n = (long)B * Q * h;
  for (long e = first_index(); e < n; e += grid_stride()) {
    long c = e % h, bi = e / h; /* bi = b * Q + i */
    const float *gr = g + bi * K, *t = T + bi * K * h + c;
    float s = 0.0f;
    for (int j = 0; j < K; j++) s += gr[j] * (1.0f - t[(long)j * h] * t[(long)j * h]);
    dq[e] += w[c] * s;
  }
}

/* dkp[b, j, c] += sum_i g[b, i, j] * w[c] * (1 - T[b, i, j, c]^2); dkp (B, K, h) */
static __global__ void additive_scores_dk_kernel(const float *g, const float *T, const float *w,
                                                 float *dk, int B, int Q, int K, int h) {
  const long n = (long)B * K * h;
  for (long e = first_index(); e < n; e += grid_stride()) {
    long c = e % h, bj = e / h, j = bj % K, b = bj / K;
    const float *gc = g + b * Q * K + j;          /* g[b, i, j] at gc[i * K] */
    const float *t = T + (b * Q * K + j) * h + c; /* T[b, i, j, c] at t[i * K * h] */
    float s = 0.0f;
    for (int i = 0; i < Q; i++) {
      float v = t[(long)i * K * h];
      s += gc[(long)i * K] * (1.0f - v * v);
    }
    dk[e] += w[c] * s;
  }
}

/* dw[c] += sum over the rows r = (b, i, j) of g[r] * T[r, c]: block c, its threads striding r */
enum { DW_THREADS = 128 };
static __global__ void additive_scores_dw_kernel(const float *g, const float *T, float *dw,
                                                 long rows, int h) {
  SHARED_ARRAY(float, scratch, 32);
  for (int c = blockIdx.x; c < h; c += gridDim.x) { /* uniform over the block: no divergence */
    float s = 0.0f;
    for (long r = threadIdx.x; r < rows; r += blockDim.x) s += g[r] * T[r * h + c];
    s = block_sum(s, scratch);
    if (threadIdx.x == 0) dw[c] += s;
  }
}

/* T (B, Q, K, h): the forward's tanh values; dq, dk, dw: NULL when not wanted */
static void cuda_additive_scores_grad(const float *g, const float *T, const float *w, float *dq,
                                      float *dk, float *dw, int B, int Q, int K, int h) {
  long rows = (long)B * Q * K;
  if (rows <= 0 || h <= 0) return; /* nothing to add */
  if (dq) {
    long n = (long)B * Q * h;
    LAUNCH(additive_scores_dq_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, g, T, w, dq, B, Q,
           K, h);
  }
  if (dk) {
    long n = (long)B * K * h;
    LAUNCH(additive_scores_dk_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, g, T, w, dk, B, Q,
           K, h);
  }
  if (dw)
    LAUNCH_SYNC(additive_scores_dw_kernel, cap_grid(h, 4096), DW_THREADS, 0, g, T,
                dw, rows, h);
}

void cuda_register_fused(Backend *be) {
  be->additive_scores = cuda_additive_scores;
  be->additive_scores_grad = cuda_additive_scores_grad;
}
