/* optim.cu — the optimizers on the GPU (CPU twin: common/cpu/cpu_optim.c): an SGD step, an
 * Adam step (as torch.optim.Adam computes it) and d2l's gradient clipping (common/optim.c),
 * each over one block of a model's parameters. Tested by tests/cuda/cases_optim.c (small
 * models trained a few steps on each device, compared).
 *
 * Grids: sgd and adam are one thread per parameter in a grid-stride loop (EW_THREADS a block;
 * each element is independent and read once). Clipping sums in two passes, so the sum has a fixed
 * order whatever the timing (no atomics: the clipped gradients are the same every run): pass 1,
 * SQ_BLOCKS blocks at most of SQ_THREADS threads, each thread sums squares in double along a
 * grid-stride loop and each block reduces its threads' sums (warp shuffles, then one warp over
 * the warps' sums) into one double of a small device buffer; pass 2, one block adds those
 * partial sums the same way and writes the norm and the gradients' factor to device memory;
 * pass 3 scales the gradients by that factor, read there. Nothing comes back to the host (as
 * llm.c keeps its clipping on the device), so a training step does not wait for the norm.
 */
#include "kernels.cuh"

/* ---------- SGD ---------- */

/* w (n) -= lr * g (n) */
static __global__ void sgd_kernel(float *w, const float *g, float lr, long n) {
  for (long j = first_index(); j < n; j += grid_stride()) w[j] -= lr * g[j];
}
static void cuda_sgd(float *w, const float *g, float lr, long n) {
  if (n > 0) LAUNCH(sgd_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, w, g, lr, n);
}

/* ---------- Adam ---------- */

/* m <- b1 m + (1-b1) g;  v <- b2 v + (1-b2) g^2;
 * w <- w - step * m / (sqrt(v) * inv_sqrt_bc2 + eps), with step = lr / (1 - b1^t) and
 * inv_sqrt_bc2 = 1 / sqrt(1 - b2^t) from the front (optim.c); all (n) */
static __global__ void adam_kernel(float *w, const float *g, float *m, float *v, long n,
                                   float b1, float b2, float step, float inv_sqrt_bc2,
                                   float eps) {
  for (long j = first_index(); j < n; j += grid_stride()) {
    float gj = g[j];
    float mj = b1 * m[j] + (1.0f - b1) * gj;
    float vj = b2 * v[j] + (1.0f - b2) * gj * gj;
    m[j] = mj;
    v[j] = vj;
    w[j] -= step * mj / (sqrtf(vj) * inv_sqrt_bc2 + eps);
  }
}
static void cuda_adam(float *w, const float *g, float *m, float *v, long n, float b1, float b2,
                      float step, float inv_sqrt_bc2, float eps) {
  if (n > 0)
    LAUNCH(adam_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, w, g, m, v, n, b1, b2, step,
           inv_sqrt_bc2, eps);
}

/* ---------- sum of squares ---------- */

/* 256 threads, and up to 128 blocks: about one a multiprocessor of an H100 (132), each thread
 * with several floats in flight along its loop; pass 2 then adds 128 partial sums. (It runs
 * once a training step: enough, and cheap to emulate, where each thread is an OS thread.) */
enum { SQ_THREADS = 256, SQ_BLOCKS = 128 };

/* The sum of a double over the block (blockDim.x a multiple of 32); thread 0 gets it. */
static __device__ double block_sum_double(double v, double *scratch32) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (lane == 0) scratch32[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch32[lane] : 0.0;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/* pass 1: partial[b] = sum of g[i]^2 over the i of block b's grid-stride loop */
static __global__ void sum_squares_kernel(const float *g, long n, double *partial) {
  SHARED_ARRAY(double, scratch, 32);
  double s = 0.0;
  for (long i = first_index(); i < n; i += grid_stride()) s += (double)g[i] * g[i];
  s = block_sum_double(s, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

/* pass 2: the sum of partial[0..count) (one block), its square root to norm[0], and the factor
 * of the gradients to scale[0]: max_norm / norm where the norm is larger, else 1 */
static __global__ void clip_norm_kernel(const double *partial, int count, float max_norm,
                                        float *norm, float *scale) {
  SHARED_ARRAY(double, scratch, 32);
  double s = 0.0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) s += partial[i];
  s = block_sum_double(s, scratch);
  if (threadIdx.x == 0) {
    double nrm = sqrt(s);
    norm[0] = (float)nrm;
    scale[0] = nrm > max_norm ? (float)(max_norm / nrm) : 1.0f;
  }
}

/* pass 3: g (n) *= scale[0], read from device memory (nothing when it is 1) */
static __global__ void clip_scale_kernel(float *g, long n, const float *scale) {
  const float s = scale[0];
  if (s == 1.0f) return;
  for (long j = first_index(); j < n; j += grid_stride()) g[j] = s * g[j];
}

/* The partial sums and the factor: SQ_BLOCKS doubles and a float of device memory, allocated on
 * the first call and kept for the process (one small buffer; the driver frees it at exit). */
static double *sq_buffer(void) {
  static double *buf;
  if (!buf) CUDA_CHECK(cudaMalloc((void **)&buf, sizeof(double) * (SQ_BLOCKS + 1)));
  return buf;
}

static void cuda_clip_grad(float *g, long n, float max_norm, float *norm) {
  double *partial = sq_buffer();
  float *scale = (float *)(partial + SQ_BLOCKS);
  long b = (n + SQ_THREADS - 1) / SQ_THREADS;
  int blocks = (int)cap_grid(b, SQ_BLOCKS);
  LAUNCH_SYNC(sum_squares_kernel, blocks, SQ_THREADS, 0, g, n, partial);
  LAUNCH_SYNC(clip_norm_kernel, 1, SQ_THREADS, 0, partial, blocks, max_norm, norm, scale);
  if (n > 0) LAUNCH(clip_scale_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, g, n, scale);
}

void cuda_register_optim(Backend *be) {
  be->sgd = cuda_sgd;
  be->adam = cuda_adam;
  be->clip_grad = cuda_clip_grad;
}
