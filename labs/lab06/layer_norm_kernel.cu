/* Exercise 6.7 — layer norm as CUDA kernels: a block reduction forward, column sums backward
 * (6 points).
 *
 * What: AddNorm's layer norm (t_layer_norm) on the GPU, forward and backward, as
 *   labs/lab06/lab06_kernels.h states it: x (rows, D), each row normalized over its D features,
 *     mean = sum_j x_j / D,  var = sum_j (x_j - mean)^2 / D,  rstd = 1 / sqrt(var + eps)
 *     y = (x - mean) * rstd * gamma + beta      stats[2 r] = mean, stats[2 r + 1] = rstd
 *   and backward (xhat = (x - mean) * rstd, dxhat = g * gamma; gamma, beta NULL mean 1 and 0):
 *     dx = rstd * (dxhat - mean_j(dxhat) - xhat * mean_j(dxhat * xhat))   (stored when fresh,
 *          added otherwise; dx NULL: skip)
 *     dgamma += sum over rows of g * xhat,  dbeta += sum over rows of g    (each may be NULL)
 *   Launch, return 0. The stubs return -1 ("not implemented").
 *
 * Forward, layer_norm_cuda — ONE BLOCK PER ROW, a block reduction in shared memory.
 *   - a device function `static __device__ float block_reduce_sum(float v, float *red)`: every
 *     thread writes its v to red[threadIdx.x]; __syncthreads(); then for s = blockDim.x / 2,
 *     s / 2, ..., 1: threads below s add red[tid + s] into red[tid], and __syncthreads() after
 *     each level (the next level reads what this one wrote); everyone reads red[0], and a last
 *     __syncthreads() before returning (the next call overwrites red). blockDim.x a power of two.
 *     EVERY thread of the block must call it (a barrier that some threads skip never completes).
 *   - kernel `layer_norm_block_kernel(x, gamma, beta, y, stats, rows, D, eps)`:
 *     __shared__ float red[256]; for rows r = blockIdx.x, + gridDim.x, ... (the block's
 *     loop: every thread takes every trip): each thread sums x[r][j] for j = threadIdx.x,
 *     + blockDim.x, ... < D (a warp reads 32 consecutive floats: coalesced), mean = the block's
 *     sum / D; again for sum (x - mean)^2 (a second pass, as the CPU: no cancellation); then
 *     y, and thread 0 writes stats.
 *   - launch: threads = the smallest power of two >= D, at least 32 (one warp), at most 256;
 *       layer_norm_block_kernel<<<cap_grid(rows, 8192), threads>>>(x, gamma, beta, y, stats,
 *                                                                  rows, D, eps);
 *     (The grader caps grids at 2 blocks: the row loop must loop.)
 *
 * Backward, layer_norm_grad_cuda — two kernels.
 *   - dx (if dx): the same block per row; its two means are two block_reduce_sum calls.
 *   - dgamma and dbeta (if either): sums DOWN the columns. A block of 256 threads owns 32
 *     columns: thread t is column c0 + t % 32 and row group t / 32 (8 groups); each thread sums
 *     rows grp, grp + 8, ... of its column (a warp reads 32 consecutive floats of a row:
 *     coalesced), writes its two partial sums to __shared__ float pg[8 * 32] and pb[8 * 32],
 *     __syncthreads(), then the threads of group 0 add the 8 partials of their column in group
 *     order and add the totals to dgamma[c] and dbeta[c]; __syncthreads() again before the
 *     next trip. The block loops over column blocks c0 = blockIdx.x * 32, + gridDim.x * 32, ...
 *     < D (c < D is the bound inside). No atomics: one block owns a column, so every run
 *     gives the same bits. Launch:
 *       your_cols_kernel<<<cap_grid((D + 31) / 32, 8192), 256>>>(...);
 *
 * Use the kit's cap_grid (cuda/al_cuda.h); sqrtf is
 * float32. chapters/06_transformer/lab06.c, "Layer norm as CUDA kernels", says why a block per
 * row and why the column sums are split this way.
 * Tests: tests/grade/lab06/test_layer_norm_kernel.c.
 * Check: make grade LAB=06 runs them in the CUDA emulator against the CPU's layer norm, at
 *   lab06's shape and uneven ones (D = 1, 7, 31, 33, 257: past one block's reach; rows 1, 37,
 *   more rows than blocks), with memcheck, initcheck and racecheck: a missing barrier in the
 *   reduction is a race and scores 0 with the emulator's report. make lab06-emu &&
 *   build/emu-bin/lab06 --device cuda trains lab06 with your kernels in the emulator.
 * Until it returns 0, --device cuda uses the kit's own layer norm (one note a run).
 */
#include "lab06/lab06_kernels.h"

#include "../../common/exercise.h"
#include "../../cuda/al_cuda.h"

int layer_norm_cuda(const float *x, const float *gamma, const float *beta, float *y,
                    float *stats, long rows, int D, float eps) {
  (void)x, (void)gamma, (void)beta, (void)y, (void)stats, (void)rows, (void)D, (void)eps;
  EXERCISE_TODO("6.7", "layer_norm_cuda");
  return -1;
}

int layer_norm_grad_cuda(const float *x, const float *gamma, const float *stats, const float *g,
                         float *dx, float *dgamma, float *dbeta, long rows, int D, int fresh) {
  (void)x, (void)gamma, (void)stats, (void)g, (void)dx, (void)dgamma, (void)dbeta, (void)rows,
      (void)D, (void)fresh;
  EXERCISE_TODO("6.7", "layer_norm_grad_cuda");
  return -1;
}
