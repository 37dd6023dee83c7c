/* reduce.cu — sums and means on the GPU (CPU twin: common/cpu/cpu_reduce.c). A reduced tensor is
 * viewed as (outer, n, inner). Tested by tests/cuda/cases_reduce.c.
 *
 * Grids: reducing the last dim (inner == 1), one warp per output row, 8 warps a block, the row
 * summed by a warp shuffle; reducing a middle dim, one thread per output (o, i) walking k, so a
 * warp reads 32 consecutive floats of each row (coalesced); the sum of everything, one block of
 * 256 threads (a deterministic order: no atomics) — it is one number per step, not a hot path.
 */
#include "kernels.cuh"

enum { WARPS = 8 };

/* out[o] = scale * sum_k a[o, k]: warp per row */
static __global__ void reduce_rows_kernel(const float *a, float *out, long outer, long n,
                                          float scale) {
  int lane = threadIdx.x % 32;
  for (long o = (long)blockIdx.x * WARPS + threadIdx.x / 32; o < outer;
       o += (long)gridDim.x * WARPS) {
    float s = 0.0f;
    for (long k = lane; k < n; k += 32) s += a[o * n + k];
    s = warp_sum(s);
    if (lane == 0) out[o] = s * scale;
  }
}

/* out[o, i] = scale * sum_k a[o, k, i]: thread per output */
static __global__ void reduce_mid_kernel(const float *a, float *out, long outer, long n,
                                         long inner, float scale) {
  for (long t = first_index(); t < outer * inner; t += grid_stride()) {
    long o = t / inner, i = t - o * inner;
    const float *p = a + o * n * inner + i;
    float s = 0.0f;
    for (long k = 0; k < n; k++) s += p[k * inner];
    out[t] = s * scale;
  }
}

static void cuda_reduce(const float *a, float *out, long outer, long n, long inner,
                        float scale) {
  if (outer * inner <= 0) return;
  if (inner == 1) {
    long blocks = (outer + WARPS - 1) / WARPS;
    LAUNCH_SYNC(reduce_rows_kernel, cap_grid(blocks, 8192), 32 * WARPS, 0, a,
                out, outer, n, scale);
  } else {
    LAUNCH(reduce_mid_kernel, ew_blocks(outer * inner, EW_THREADS), EW_THREADS, 0, a, out, outer,
           n, inner, scale);
  }
}

/* ga[o, k, i] += scale * g[o, i]: thread per element of ga */
static __global__ void reduce_grad_kernel(float *ga, const float *g, long outer, long n,
                                          long inner, float scale) {
  long total = outer * n * inner;
  for (long t = first_index(); t < total; t += grid_stride()) {
    long i = t % inner, o = t / (n * inner);
    ga[t] += scale * g[o * inner + i];
  }
}
static void cuda_reduce_grad(float *ga, const float *g, long outer, long n, long inner,
                             float scale) {
  long total = outer * n * inner;
  if (total > 0)
    LAUNCH(reduce_grad_kernel, ew_blocks(total, EW_THREADS), EW_THREADS, 0, ga, g, outer, n,
           inner, scale);
}

/* out1[0] = scale * sum of a: one block */
enum { ALL_THREADS = 256 };
static __global__ void reduce_all_kernel(const float *a, long n, float scale, float *out1) {
  SHARED_ARRAY(float, scratch, 32);
  float s = 0.0f;
  for (long i = threadIdx.x; i < n; i += blockDim.x) s += a[i];
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) out1[0] = s * scale;
}
static void cuda_reduce_all(const float *a, long n, float scale, float *out1) {
  LAUNCH_SYNC(reduce_all_kernel, 1, ALL_THREADS, 0, a, n, scale, out1);
}

/* ga (+)= scale * g1[0]; g1 stays on the device (read by every thread) */
static __global__ void reduce_all_grad_kernel(float *ga, const float *g1, float scale, long n,
                                              bool fresh) {
  float d = scale * g1[0];
  for (long i = first_index(); i < n; i += grid_stride()) ga[i] = fresh ? d : ga[i] + d;
}
static void cuda_reduce_all_grad(float *ga, const float *g1, float scale, long n, bool fresh) {
  if (n > 0)
    LAUNCH(reduce_all_grad_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, ga, g1, scale, n,
           fresh);
}

void cuda_register_reduce(Backend *be) {
  be->reduce = cuda_reduce;
  be->reduce_grad = cuda_reduce_grad;
  be->reduce_all = cuda_reduce_all;
  be->reduce_all_grad = cuda_reduce_all_grad;
}
