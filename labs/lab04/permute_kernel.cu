/* Exercises 4.4 and 4.5 — transpose_qkv's permute as CUDA kernels: naive, then tiled (8 points:
 * 4.4 2, 4.5 6).
 *
 * What: transpose_qkv (exercise 4.1) is a reshape, a permute {0, 2, 1, 3}, and a reshape; the
 *   permute is the one copy, and it runs on every attention call (transpose_output's is the
 *   same permute, the other way). Write it for the GPU, twice (labs/lab04/lab04_kernels.h):
 *     x (A, B, C, D) -> y (A, C, B, D):  y[a][c][b][j] = x[a][b][c][j]
 *     (transpose_qkv: A batch, B steps, C heads, D = num_hiddens / heads: D contiguous floats
 *     on both sides), or y[a][c][b][j] += x[a][b][c][j] when accumulate is 1 (a backward pass
 *     adding into a gradient). Launch, return 0. The stubs return -1 ("not implemented").
 *
 * 4.4 permute0213_naive_cuda — the CPU loop on the GPU: ONE THREAD PER ROW of D floats.
 *   - kernel `static __global__ void permute0213_naive_kernel(const float *x, float *y, int A,
 *     int B, int C, int D, bool accumulate)`: thread r (a grid-stride loop over the A * B * C
 *     rows of x; the bound r < rows) takes row r = (a * B + b) * C + c of x and copies its D
 *     floats, j = 0 .. D - 1, to row (a * C + c) * B + b of y.
 *   - launch: permute0213_naive_kernel<<<ew_blocks(rows, EW_THREADS), EW_THREADS>>>(x, y, A, B,
 *     C, D, accumulate != 0);  (256 threads a block; ew_blocks caps the grid and the grader
 *     lowers the cap to 2 blocks, so the loop must loop).
 *   It is correct and it is slow: the 32 lanes of a warp handle 32 different rows, so each of
 *   their loads is 32 floats D apart, each in a 32-byte sector of its own (32 sectors a request
 *   instead of 4). ./lab04 --device cuda on the emulated device prints its counters.
 *
 * 4.5 permute0213_tiled_cuda — COALESCED reads AND writes, through a tile in shared memory.
 *   A tile is TB steps x TC heads x D floats of one batch row a. Its TB rows (one a step) are
 *   contiguous runs of TC * D floats of x; its TC heads are contiguous runs of TB * D floats of
 *   y. So: read the tile row by row (lanes on consecutive floats of x), __syncthreads(), write
 *   it head by head (lanes on consecutive floats of y).
 *   - launcher: TC = ceil(32 / D) heads, at most C (a tile row is then >= 32 floats, a warp's
 *     request); TB = 1024 / (TC * D) steps, at most B and at least 1 (about 1024 floats a
 *     tile). Rows of the tile lie L floats apart in shared memory, L = TC * D + pad with
 *     pad = ((D - TC * D) % 32 + 32) % 32, so that L = D (mod 32) (why: below). Tiles:
 *     A * ceil(B / TB) * ceil(C / TC). Launch:
 *       permute0213_tiled_kernel<<<cap_grid(tiles, 8192), 256>>>(x, y, A, B, C, D, TB, TC, L,
 *                                                                accumulate != 0);
 *     256 threads (8 warps) a block, one block per tile in a grid-stride loop over the tiles
 *     (for (long t = blockIdx.x; t < tiles; t += gridDim.x): every thread of the block takes
 *     every trip, so every thread meets every barrier). Also TB * L <= 2048: keep TB at most
 *     2048 / L.
 *   - kernel: __shared__ float tile[2048]; per tile: its corner (b0 = tile's step * TB,
 *     c0 = its head * TC), and how much of it lies inside x (the last tiles are partial: nbt
 *     steps, nct heads). Then
 *       read:  warp w copies tile rows bb = w, w + 8, ...: its lanes k = lane, lane + 32, ...
 *              < nct * D:  tile[bb * L + k] = x[((a * B + b0 + bb) * C + c0) * D + k]
 *       __syncthreads()   (every row is in before any warp reads across rows)
 *       write: warp w writes heads cc = w, w + 8, ...: lanes k = lane, lane + 32, ... < nbt * D,
 *              bb = k / D, j = k % D:  y[((a * C + c0 + cc) * B + b0) * D + k] (+)=
 *                                      tile[bb * L + cc * D + j]
 *       __syncthreads()   (every warp is done before the next trip overwrites the tile)
 *   - why L = D (mod 32): shared memory has 32 banks of 4-byte words; lanes reading different
 *     words of one bank wait for each other (a bank conflict). Writing a head, lane k reads row
 *     bb = k / D; with L = D (mod 32) the word bb * L + cc * D + j sits in bank
 *     (k + cc * D) mod 32: 32 lanes, 32 banks. With L = TC * D (no pad: 32 at lab06's D = 8)
 *     the lanes of steps 0..3 would share banks: every read a 4-way conflict.
 *   D <= 1024 here (the kit gives longer rows to its own kernel).
 *
 * Use the kit's helpers from cuda/al_cuda.h: first_index(), grid_stride(), ew_blocks,
 * cap_grid, EW_THREADS. There is no min/max for ints: write a ? b : c.
 *
 * Tests: tests/grade/lab04/test_permute_kernel.c.
 * Check: make grade LAB=04 runs both in the CUDA emulator, against the CPU's permute, at the
 *   labs' shapes and uneven ones (1, 31, 33, primes, more tiles than blocks), with memcheck,
 *   initcheck and racecheck on: a wrong number, a missing bound or a missing barrier scores 0
 *   for that test, with the emulator's report. 4.5's other points need its memory counters
 *   within a factor of the reference's (the grade prints both). make lab04-emu &&
 *   build/emu-bin/lab04 --device cuda runs the lab with your kernels in the emulator and prints
 *   their counters beside the reference's. chapters/04_multihead_attention/lab04.c, "The
 *   permute as a CUDA kernel", says why the tile and the padding.
 * Until 4.5 returns 0, --device cuda uses your 4.4 for the permute, and until 4.4 does, the
 * kit's own kernel (one note a run).
 */
#include "lab04/lab04_kernels.h"

#include "../../common/exercise.h"
#include "../../cuda/al_cuda.h"

int permute0213_naive_cuda(const float *x, float *y, int A, int B, int C, int D,
                           int accumulate) {
  (void)x, (void)y, (void)A, (void)B, (void)C, (void)D, (void)accumulate;
  EXERCISE_TODO("4.4", "permute0213_naive_cuda");
  return -1;
}

int permute0213_tiled_cuda(const float *x, float *y, int A, int B, int C, int D,
                           int accumulate) {
  (void)x, (void)y, (void)A, (void)B, (void)C, (void)D, (void)accumulate;
  EXERCISE_TODO("4.5", "permute0213_tiled_cuda");
  return -1;
}
