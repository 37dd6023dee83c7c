/* Exercise 5.2 — the positional-encoding table as a CUDA kernel (4 points): your first kernel.
 *
 * What: write positional_encoding_cuda (declared in labs/lab05/lab05_kernels.h): P is device
 *   memory holding `rows` rows of num_hiddens floats, row-major; fill it with rows first_row ..
 *   first_row + rows - 1 of exercise 5.1's table:
 *     P[r, 2j]     = sin(i / 10000^(2j / d))       i = first_row + r, d = num_hiddens
 *     P[r, 2j + 1] = cos(i / 10000^(2j / d))       (an odd d: the last column is a sine)
 *   then return 0. The stub returns -1 ("not implemented").
 * How (chapters/05_self_attention_pe/lab05.c, "The table as a CUDA kernel", says why):
 *   - a kernel, `static __global__ void posenc_kernel(float *P, int first_row, int rows, int d)`,
 *     in which ONE THREAD COMPUTES ONE ELEMENT e = r * d + c of P (row r = e / d, column
 *     c = e % d): e's angle, then P[e] = sin or cos of it. No loop over columns, no shared
 *     memory: the elements are independent.
 *   - a GRID-STRIDE LOOP over the elements, so any grid covers them all:
 *       for (long e = (long)blockIdx.x * blockDim.x + threadIdx.x; e < n;
 *            e += (long)gridDim.x * blockDim.x)
 *     with n = (long)rows * d. The condition e < n is the bound: the last block is usually
 *     only partly inside P, and a thread past the end must write nothing.
 *   - the launch, from positional_encoding_cuda, in CUDA's syntax <<<blocks, threads a block>>>
 *     (nvcc compiles it; the kit turns it into the emulator's launch for the tests):
 *       posenc_kernel<<<cap_grid((n + 255) / 256, 1024), 256>>>(P, first_row, rows, d);
 *     Blocks of 256 threads (8 warps: consecutive threads write consecutive floats, so each
 *     warp's store is one coalesced 128-byte request), enough blocks to cover n, capped at 1024
 *     by cap_grid (more than a GPU runs at once only adds scheduling; the loop does the rest,
 *     and the grader lowers the cap to 2 blocks so your loop must loop).
 *   In the kernel, sinf, cosf, powf are float32 functions (device functions under nvcc).
 *   nvcc's build fails a kernel that uses local memory unless its file says why; sinf and cosf
 *   do, for huge angles only, so the line below (keep it) says so for a kernel named
 *   posenc_kernel.
 * Tests: tests/grade/lab05/test_posenc_kernel.c.
 * Check: make grade LAB=05 runs it in the CUDA emulator with its sanitizers: an element past
 *   the end of P (a missing bound) or a wrong number scores 0, with the emulator's report in
 *   the output; the memory counters of your kernel are printed beside the reference's, and one
 *   point needs your stores coalesced (at most 1.5 times the reference's store sectors).
 *   make lab05-emu && build/emu-bin/lab05 --device cuda runs the lab with your kernel in the
 *   emulator, outside the grader: a finding names its source line. On a GPU: make lab05 &&
 *   ./lab05 --device cuda (cuda/README.md).
 * Until it returns 0, --device cuda uses the kit's own kernel for the table (one note a run).
 */
#include "lab05/lab05_kernels.h"

#include "../../common/exercise.h"
#include "../../cuda/al_cuda.h"

/* local memory accepted (posenc_kernel): sinf and cosf keep a small array in local memory
 * for their slow path, the reduction of huge angles (Payne-Hanek); the angles here are below
 * the table's length, which never takes it */

int positional_encoding_cuda(float *P, int first_row, int rows, int num_hiddens) {
  (void)P, (void)first_row, (void)rows, (void)num_hiddens;
  EXERCISE_TODO("5.2", "positional_encoding_cuda");
  return -1;
}
