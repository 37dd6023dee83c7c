/* softmax.cu — softmax, log-softmax, sequence masking and the two losses
 * (cross-entropy, mean squared error) on the GPU. CPU twin: common/cpu/cpu_softmax.c, whose
 * semantics these kernels copy exactly: rows are the last dim, each row subtracts its max
 * before exponentiating, a row with nothing to attend to (every score -inf) is all zeros, never
 * NaN, and sequence masking sets each key j >= len[r / per] of row r.
 * Tested by tests/cuda/cases_softmax.c (cuda_check --family softmax).
 *
 * Grids. The row ops (softmax, its gradient, log-softmax, its gradient, the cross-entropy
 * forward) come in two versions, and the launcher picks by row length:
 *  - rows of more than PLAIN_MAX_KEYS (16) keys: one warp per row, WARPS (8) rows a block of
 *    256 threads. The 32 lanes stride the row together (lane j reads keys j, j + 32, ...: one
 *    coalesced 128-byte load per step) and combine their partial max and sum with warp shuffles
 *    (warp_max, warp_sum in al_cuda.h): no shared memory, no barrier. This serves the vocab-wide
 *    rows of the cross-entropy (201 to ~10k logits) and long attention rows.
 *  - rows of at most 16 keys (lab02/lab06 attention weights over ~10 keys): one thread per row,
 *    the plain loop of the CPU kernel. A warp there would leave most lanes idle and spend five
 *    shuffle steps per reduction on a handful of numbers. This is also the version to read first.
 * The cases run both: keys 1, 10 and 13 go to the plain kernels, 17, 31, 33, 201 and 1031 to the
 * warp kernels.
 * The elementwise ops (sequence mask and its gradient, the cross-entropy and MSE gradients) are
 * one thread per element in a grid-stride loop, as in elementwise.cu. The MSE is one number:
 * one block of 256 threads summing in a fixed order (block_sum), no atomics.
 */
#include "kernels.cuh"

enum {
  WARPS = 8,             /* rows a block in the warp kernels */
  ROW_THREADS = 32 * WARPS,
  PLAIN_MAX_KEYS = 16,   /* rows up to this long: one thread per row */
  MSE_THREADS = 256
};

/* exp(x) for x <= 0, as the CPU's exp_le0: exactly 0 below -87 (and for -inf), NaN stays NaN. */
static __device__ __forceinline__ float exp_le0(float x) { return x < -87.0f ? 0.0f : expf(x); }

/* The kept length of row r: len[r / per] (len NULL: every key). The front clamps lengths to
 * [0, keys]; clamping again costs nothing and keeps a bad length inside the row. */
static __device__ __forceinline__ int row_len(const int *len, long per, long r, int keys) {
  if (!len) return keys;
  int n = len[r / per];
  return n < 0 ? 0 : n > keys ? keys : n;
}

/* Rows a warp kernel walks: warp w of block b takes rows b * WARPS + w, then steps by the grid's
 * warps. The loop bound is the same for the 32 lanes of a warp, so every lane reaches every
 * shuffle (full-mask shuffles need the whole warp). */
static __device__ __forceinline__ long first_row(void) {
  return (long)blockIdx.x * WARPS + threadIdx.x / 32;
}
static __device__ __forceinline__ long row_stride(void) { return (long)gridDim.x * WARPS; }
static inline unsigned row_blocks(long rows) {
  long b = (rows + WARPS - 1) / WARPS;
  return cap_grid(b, 8192);
}

/* ---------- softmax ---------- */

/* y = softmax(x[r, :]), zeros for a row whose max is -inf: one thread per row. */
static __global__ void softmax_plain_kernel(const float *x, float *y, long rows, int keys) {
  for (long r = first_index(); r < rows; r += grid_stride()) {
    const float *xr = x + r * keys; /* (keys) */
    float *yr = y + r * keys;       /* (keys) */
    int n = keys;
    float m = -INFINITY;
    for (int j = 0; j < n; j++) m = fmaxf(m, xr[j]);
    if (m == -INFINITY) n = 0; /* nothing to attend to (-inf - -inf would be NaN) */
    float s = 0.0f;
    for (int j = 0; j < n; j++) {
      yr[j] = exp_le0(xr[j] - m);
      s += yr[j];
    }
    float inv = 1.0f / s;
    for (int j = 0; j < keys; j++) yr[j] = j < n ? yr[j] * inv : 0.0f;
  }
}

/* The same, one warp per row: lane l handles keys l, l + 32, ...; the row's max and sum are
 * combined across the lanes by shuffles. */
static __global__ void softmax_warp_kernel(const float *x, float *y, long rows, int keys) {
  const int lane = threadIdx.x % 32;
  for (long r = first_row(); r < rows; r += row_stride()) {
    const float *xr = x + r * keys; /* (keys) */
    float *yr = y + r * keys;       /* (keys) */
    int n = keys;
    float m = -INFINITY;
    for (int j = lane; j < n; j += 32) m = fmaxf(m, xr[j]);
    m = warp_max(m);           /* every lane now holds the row's max */
    if (m == -INFINITY) n = 0; /* the same decision in every lane */
    float s = 0.0f;
    for (int j = lane; j < n; j += 32) {
      float e = exp_le0(xr[j] - m);
      yr[j] = e; /* read back below by this same lane */
      s += e;
    }
    float inv = 1.0f / warp_sum(s);
    for (int j = lane; j < keys; j += 32) yr[j] = j < n ? yr[j] * inv : 0.0f;
  }
}

/* x, y (rows, keys) */
static void cuda_softmax(const float *x, float *y, long rows, int keys) {
  if (rows <= 0 || keys <= 0) return;
  if (keys <= PLAIN_MAX_KEYS)
    LAUNCH(softmax_plain_kernel, ew_blocks(rows, EW_THREADS), EW_THREADS, 0, x, y, rows, keys);
  else
    LAUNCH_SYNC(softmax_warp_kernel, row_blocks(rows), ROW_THREADS, 0, x, y, rows, keys);
}

/* dx (+)= y * (g - <g, y>) per row: the softmax Jacobian-vector product. */
static __global__ void softmax_grad_plain_kernel(const float *y, const float *g, float *dx,
                                                 long rows, int keys, bool fresh) {
  for (long r = first_index(); r < rows; r += grid_stride()) {
    const float *yr = y + r * keys, *gr = g + r * keys; /* (keys) */
    float *dr = dx + r * keys;                          /* (keys) */
    float dot = 0.0f;
    for (int j = 0; j < keys; j++) dot += gr[j] * yr[j];
    for (int j = 0; j < keys; j++) {
      float d = yr[j] * (gr[j] - dot);
      dr[j] = fresh ? d : dr[j] + d;
    }
  }
}
static __global__ void softmax_grad_warp_kernel(const float *y, const float *g, float *dx,
                                                long rows, int keys, bool fresh) {
  const int lane = threadIdx.x % 32;
  for (long r = first_row(); r < rows; r += row_stride()) {
    const float *yr = y + r * keys, *gr = g + r * keys; /* (keys) */
    float *dr = dx + r * keys;                          /* (keys) */
    float dot = 0.0f;
    for (int j = lane; j < keys; j += 32) dot += gr[j] * yr[j];
    dot = warp_sum(dot);
    for (int j = lane; j < keys; j += 32) {
      float d = yr[j] * (gr[j] - dot);
      dr[j] = fresh ? d : dr[j] + d;
    }
  }
}
static void cuda_softmax_grad(const float *y, const float *g, float *dx, long rows, int keys,
                              bool fresh) {
  if (rows <= 0 || keys <= 0) return;
  if (keys <= PLAIN_MAX_KEYS)
    LAUNCH(softmax_grad_plain_kernel, ew_blocks(rows, EW_THREADS), EW_THREADS, 0, y, g, dx, rows,
           keys, fresh);
  else
    LAUNCH_SYNC(softmax_grad_warp_kernel, row_blocks(rows), ROW_THREADS, 0, y, g, dx, rows, keys,
                fresh);
}

/* ---------- log-softmax ---------- */

/* y = x - logsumexp(x) per row; a row of all -inf (log of a zero row) is all -inf. */
static __global__ void log_softmax_plain_kernel(const float *x, float *y, long rows, int n) {
  for (long r = first_index(); r < rows; r += grid_stride()) {
    const float *xr = x + r * n; /* (n) */
    float *yr = y + r * n;       /* (n) */
    float m = -INFINITY;
    for (int j = 0; j < n; j++) m = fmaxf(m, xr[j]);
    if (m == -INFINITY) {
      for (int j = 0; j < n; j++) yr[j] = -INFINITY;
      continue;
    }
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += exp_le0(xr[j] - m);
    float lse = m + logf(s);
    for (int j = 0; j < n; j++) yr[j] = xr[j] - lse;
  }
}
static __global__ void log_softmax_warp_kernel(const float *x, float *y, long rows, int n) {
  const int lane = threadIdx.x % 32;
  for (long r = first_row(); r < rows; r += row_stride()) {
    const float *xr = x + r * n; /* (n) */
    float *yr = y + r * n;       /* (n) */
    float m = -INFINITY;
    for (int j = lane; j < n; j += 32) m = fmaxf(m, xr[j]);
    m = warp_max(m);
    if (m == -INFINITY) { /* warp-uniform: every lane skips the shuffle below together */
      for (int j = lane; j < n; j += 32) yr[j] = -INFINITY;
      continue;
    }
    float s = 0.0f;
    for (int j = lane; j < n; j += 32) s += exp_le0(xr[j] - m);
    float lse = m + logf(warp_sum(s));
    for (int j = lane; j < n; j += 32) yr[j] = xr[j] - lse;
  }
}
static void cuda_log_softmax(const float *x, float *y, long rows, int n) {
  if (rows <= 0 || n <= 0) return;
  if (n <= PLAIN_MAX_KEYS)
    LAUNCH(log_softmax_plain_kernel, ew_blocks(rows, EW_THREADS), EW_THREADS, 0, x, y, rows, n);
  else
    LAUNCH_SYNC(log_softmax_warp_kernel, row_blocks(rows), ROW_THREADS, 0, x, y, rows, n);
}

/* dx (+)= g - softmax(x) * sum(g), with softmax(x) = exp(y) (y <= 0). */
static __global__ void log_softmax_grad_plain_kernel(const float *y, const float *g, float *dx,
                                                     long rows, int n, bool fresh) {
  for (long r = first_index(); r < rows; r += grid_stride()) {
    const float *yr = y + r * n, *gr = g + r * n; /* (n) */
    float *dr = dx + r * n;                       /* (n) */
    float gs = 0.0f;
    for (int j = 0; j < n; j++) gs += gr[j];
    for (int j = 0; j < n; j++) {
      float d = gr[j] - exp_le0(yr[j]) * gs;
      dr[j] = fresh ? d : dr[j] + d;
    }
  }
}
static __global__ void log_softmax_grad_warp_kernel(const float *y, const float *g, float *dx,
                                                    long rows, int n, bool fresh) {
  const int lane = threadIdx.x % 32;
  for (long r = first_row(); r < rows; r += row_stride()) {
    const float *yr = y + r * n, *gr = g + r * n; /* (n) */
    float *dr = dx + r * n;                       /* (n) */
    float gs = 0.0f;
    for (int j = lane; j < n; j += 32) gs += gr[j];
    gs = warp_sum(gs);
    for (int j = lane; j < n; j += 32) {
      float d = gr[j] - exp_le0(yr[j]) * gs;
      dr[j] = fresh ? d : dr[j] + d;
    }
  }
}
static void cuda_log_softmax_grad(const float *y, const float *g, float *dx, long rows, int n,
                                  bool fresh) {
  if (rows <= 0 || n <= 0) return;
  if (n <= PLAIN_MAX_KEYS)
    LAUNCH(log_softmax_grad_plain_kernel, ew_blocks(rows, EW_THREADS), EW_THREADS, 0, y, g, dx,
           rows, n, fresh);
  else
    LAUNCH_SYNC(log_softmax_grad_warp_kernel, row_blocks(rows), ROW_THREADS, 0, y, g, dx, rows, n,
                fresh);
}

/* ---------- sequence mask ---------- */

/* dst = src (rows, keys) with every key j >= len[r / per] of row r set to v: one thread per
 * element. */
static __global__ void sequence_mask_kernel(float *dst, const float *src, const int *len,
                                            long per, long rows, int keys, float v) {
  const long total = rows * keys;
  for (long i = first_index(); i < total; i += grid_stride()) {
    long r = i / keys;
    int j = (int)(i - r * keys);
    dst[i] = j < row_len(len, per, r, keys) ? src[i] : v;
  }
}
static void cuda_sequence_mask(float *dst, const float *src, const int *len, long per, long rows,
                               int keys, float v) {
  long total = rows * keys;
  if (total > 0)
    LAUNCH(sequence_mask_kernel, ew_blocks(total, EW_THREADS), EW_THREADS, 0, dst, src, len, per,
           rows, keys, v);
}

/* dx (+)= g on the kept keys; fresh: the masked keys get 0 */
static __global__ void sequence_mask_grad_kernel(float *dx, const float *g, const int *len,
                                                 long per, long rows, int keys, bool fresh) {
  const long total = rows * keys;
  for (long i = first_index(); i < total; i += grid_stride()) {
    long r = i / keys;
    int j = (int)(i - r * keys);
    bool kept = j < row_len(len, per, r, keys);
    if (fresh)
      dx[i] = kept ? g[i] : 0.0f;
    else if (kept)
      dx[i] += g[i];
  }
}
static void cuda_sequence_mask_grad(float *dx, const float *g, const int *len, long per,
                                    long rows, int keys, bool fresh) {
  long total = rows * keys;
  if (total > 0)
    LAUNCH(sequence_mask_grad_kernel, ew_blocks(total, EW_THREADS), EW_THREADS, 0, dx, g, len,
           per, rows, keys, fresh);
}

/* ---------- cross-entropy ---------- */

/* out[r] = w[r] * (logsumexp(x_r) - x_r[label[r]]); keeps e = exp(x - max) (rows, V) and
 * scale[r] = w[r] / sum(e_r) for the backward. A row of weight 0 (padding) costs exactly 0 and
 * leaves e and scale unwritten, as on the CPU (the backward never reads them). */
static __global__ void cross_entropy_plain_kernel(const float *x, const int *label,
                                                  const float *w, float *e, float *scale,
                                                  float *out, long rows, int V) {
  for (long r = first_index(); r < rows; r += grid_stride()) {
    const float wr = w ? w[r] : 1.0f;
    if (wr == 0.0f) {
      out[r] = 0.0f;
      continue;
    }
    const float *xr = x + r * V; /* (V) */
    float *er = e + r * V;       /* (V) */
    float m = -INFINITY;
    for (int j = 0; j < V; j++) m = fmaxf(m, xr[j]);
    float s = 0.0f;
    for (int j = 0; j < V; j++) {
      er[j] = exp_le0(xr[j] - m);
      s += er[j];
    }
    out[r] = (m + logf(s) - xr[label[r]]) * wr;
    scale[r] = wr / s;
  }
}
static __global__ void cross_entropy_warp_kernel(const float *x, const int *label,
                                                 const float *w, float *e, float *scale,
                                                 float *out, long rows, int V) {
  const int lane = threadIdx.x % 32;
  for (long r = first_row(); r < rows; r += row_stride()) {
    const float wr = w ? w[r] : 1.0f; /* the same in every lane: the skip is warp-uniform */
    if (wr == 0.0f) {
      if (lane == 0) out[r] = 0.0f;
      continue;
    }
    const float *xr = x + r * V; /* (V) */
    float *er = e + r * V;       /* (V) */
    float m = -INFINITY;
    for (int j = lane; j < V; j += 32) m = fmaxf(m, xr[j]);
    m = warp_max(m);
    float s = 0.0f;
    for (int j = lane; j < V; j += 32) {
      float ej = exp_le0(xr[j] - m);
      er[j] = ej;
      s += ej;
    }
    s = warp_sum(s);
    if (lane == 0) {
      out[r] = (m + logf(s) - xr[label[r]]) * wr;
      scale[r] = wr / s;
    }
  }
}
/* x, e (rows, V); label, w, scale, out (rows) */
static void cuda_cross_entropy(const float *x, const int *label, const float *w, float *e,
                               float *scale, float *out, long rows, int V) {
  if (rows <= 0 || V <= 0) return;
  if (V <= PLAIN_MAX_KEYS)
    LAUNCH(cross_entropy_plain_kernel, ew_blocks(rows, EW_THREADS), EW_THREADS, 0, x, label, w, e,
           scale, out, rows, V);
  else
    LAUNCH_SYNC(cross_entropy_warp_kernel, row_blocks(rows), ROW_THREADS, 0, x, label, w, e,
                scale, out, rows, V);
}

/* dx[r, j] (+)= g[r] * w[r] * (softmax_j - [j == label[r]]) = g[r] scale[r] e[r, j], minus
 * g[r] w[r] at the label; rows of weight 0 get nothing (fresh: zeros). One thread per element,
 * in the CPU's order of operations (add c * e, then subtract at the label). */
static __global__ void cross_entropy_grad_kernel(float *dx, const float *g, const float *e,
                                                 const float *scale, const int *label,
                                                 const float *w, long rows, int V, bool fresh) {
  const long total = rows * V;
  for (long i = first_index(); i < total; i += grid_stride()) {
    long r = i / V;
    int j = (int)(i - r * V);
    const float wr = w ? w[r] : 1.0f;
    if (wr == 0.0f) { /* padding: e and scale were never written for this row */
      if (fresh) dx[i] = 0.0f;
      continue;
    }
    float c = g[r] * scale[r];
    float d = fresh ? c * e[i] : dx[i] + c * e[i];
    if (j == label[r]) d -= g[r] * wr;
    dx[i] = d;
  }
}
static void cuda_cross_entropy_grad(float *dx, const float *g, const float *e,
                                    const float *scale, const int *label, const float *w,
                                    long rows, int V, bool fresh) {
  long total = rows * V;
  if (total > 0)
    LAUNCH(cross_entropy_grad_kernel, ew_blocks(total, EW_THREADS), EW_THREADS, 0, dx, g, e,
           scale, label, w, rows, V, fresh);
}

/* ---------- mean squared error ---------- */

/* out1[0] = mean of (p - t)^2 over n: one block; each thread sums a strided slice, block_sum
 * adds the slices in a fixed tree (deterministic). The CPU sums in double; float partial sums
 * of a few hundred terms each stay within a few ulps. n == 0 gives 0/0 = NaN, as on the CPU. */
static __global__ void mse_kernel(const float *p, const float *t, long n, float *out1) {
  SHARED_ARRAY(float, scratch, 32);
  float s = 0.0f;
  for (long i = threadIdx.x; i < n; i += blockDim.x) {
    float d = p[i] - t[i];
    s += d * d;
  }
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) out1[0] = s / (float)n;
}
static void cuda_mse(const float *p, const float *t, long n, float *out1) {
  LAUNCH_SYNC(mse_kernel, 1, MSE_THREADS, 0, p, t, n, out1);
}

/* dp += c (p - t), dt -= c (p - t) with c = 2 g1[0] / n; dp or dt may be NULL. g1 stays on the
 * device (every thread reads it). */
static __global__ void mse_grad_kernel(float *dp, float *dt, const float *g1, const float *p,
                                       const float *t, long n) {
  const float c = 2.0f * g1[0] / (float)n;
  for (long i = first_index(); i < n; i += grid_stride()) {
    float d = c * (p[i] - t[i]);
    if (dp) dp[i] += d;
    if (dt) dt[i] -= d;
  }
}
static void cuda_mse_grad(float *dp, float *dt, const float *g1, const float *p, const float *t,
                          long n) {
  if (n > 0 && (dp || dt))
    LAUNCH(mse_grad_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, dp, dt, g1, p, t, n);
}

void cuda_register_softmax(Backend *be) {
  be->softmax = cuda_softmax;
  be->softmax_grad = cuda_softmax_grad;
  be->log_softmax = cuda_log_softmax;
  be->log_softmax_grad = cuda_log_softmax_grad;
  be->sequence_mask = cuda_sequence_mask;
  be->sequence_mask_grad = cuda_sequence_mask_grad;
  be->cross_entropy = cuda_cross_entropy;
  be->cross_entropy_grad = cuda_cross_entropy_grad;
  be->mse = cuda_mse;
  be->mse_grad = cuda_mse_grad;
}
