/* Exercise 2.6 — masked softmax as a CUDA kernel, one warp per row (8 points)
 *
 * What: write masked_softmax_cuda and masked_softmax_cuda_backward (declared, with their
 *   contract, in labs/lab02/lab02_kernels.h): exercise 2.5's loops on the GPU. x, y are device
 *   memory (rows, keys), row-major; row r keeps its first n = len[r / per] keys (len NULL: all):
 *     y[r, j] = exp(x[r, j] - m) / sum_{k < n} exp(x[r, k] - m)   for j < n
 *     y[r, j] = 0                                                 for j >= n, and for every j
 *                                                                 when m is -inf (n = 0)
 *   with m = max_{k < n} x[r, k].
 *   Backward: dx[r, j] = y[r, j] * (g[r, j] - sum_k g[r, k] y[r, k]), stored when `fresh`,
 *   added to dx[r, j] otherwise. Both return 0 (the stubs: -1).
 * How (chapters/02_scoring_functions/lab02.c, "Masked softmax as a CUDA kernel", says why):
 *   - ONE WARP PER ROW. A warp is 32 threads that run in lockstep; lane = threadIdx.x % 32 is
 *     a thread's place in it, threadIdx.x / 32 its warp in the block. The lanes stride the row
 *     together: lane l takes keys l, l + 32, l + 64, ... (consecutive lanes read consecutive
 *     floats: one coalesced load a step). Each lane keeps its partial max (then sum).
 *   - THE SHUFFLE REDUCTION: __shfl_xor_sync(0xffffffff, v, o) returns v of lane (lane ^ o);
 *       for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
 *     after the 5 steps every lane holds the row's max (the same for the sum with +). The mask
 *     0xffffffff says all 32 lanes take part: every lane must reach that line, so the row loop
 *     must give the 32 lanes of a warp the same rows (its bound depends on the warp, never on
 *     the lane), and the block size must be a multiple of 32.
 *   - the grid: blocks of 256 threads = 8 warps = 8 rows, and a GRID-STRIDE LOOP over rows:
 *       for (long r = (long)blockIdx.x * 8 + threadIdx.x / 32; r < rows; r += (long)gridDim.x * 8)
 *     launched from masked_softmax_cuda as any CUDA kernel (the emulator runs the lanes of a
 *     warp as fibers that meet at each shuffle):
 *       my_kernel<<<cap_grid((rows + 7) / 8, 8192), 256>>>(x, y, len, per, rows, keys);
 *     cap_grid (cuda/al_cuda.h) caps the blocks (the grader lowers the cap to 2, so your loop
 *     must loop).
 *   - a row's three passes as in exercise 2.5: the max over the kept keys (-INFINITY for none),
 *     the exponentials expf(x - m) written to y and summed, then y scaled by 1 / sum and the
 *     tail (j >= n) written as zeros. Masked keys are simply left out of the max and the sum:
 *     do not fill them with 0 (that is a score, and exp(0 - m) is not 0).
 *   The kernels are `static __global__ void name(...)`; in them expf and fmaxf are float32
 *   device functions.
 * Tests: tests/grade/lab02/test_masked_softmax_kernel.c.
 * Check: make grade LAB=02 runs both in the CUDA emulator with its sanitizers (memcheck: a row
 *   or key past the end; racecheck: two warps writing one row; synccheck: a shuffle whose mask
 *   leaves out a lane, or a warp that is not whole): a finding or a wrong number scores 0, with
 *   the emulator's report in the output; your kernel's memory counters are printed beside the
 *   reference's. make lab06-emu && build/emu-bin/lab06 --device cuda trains lab06 with your
 *   kernel in the emulator (every softmax of the model is yours); on a GPU: make lab06 &&
 *   ./lab06 --device cuda (cuda/README.md).
 * Until masked_softmax_cuda returns 0, --device cuda uses the kit's own softmax kernels (one
 *   note a run); the same for the backward.
 */
#include "lab02/lab02_kernels.h"

#include "../../common/exercise.h"
#include "../../cuda/al_cuda.h"

int masked_softmax_cuda(const float *x, float *y, const int *len, long per, long rows, int keys) {
  (void)x, (void)y, (void)len, (void)per, (void)rows, (void)keys;
  EXERCISE_TODO("2.6", "masked_softmax_cuda");
  return -1;
}

int masked_softmax_cuda_backward(const float *y, const float *g, float *dx, long rows, int keys,
                                 bool fresh) {
  (void)y, (void)g, (void)dx, (void)rows, (void)keys, (void)fresh;
  EXERCISE_TODO("2.6", "masked_softmax_cuda_backward");
  return -1;
}
