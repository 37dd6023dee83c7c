/* Exercises 4.4 and 4.5 — transpose_qkv's permute as CUDA kernels (reference solution). See
 * labs/lab04/permute_kernel.cu for the statement.
 *
 * Both compute y (A, C, B, D) (+)= x (A, B, C, D) permuted by {0, 2, 1, 3}:
 *   y[a][c][b][j] = x[a][b][c][j]   (transpose_qkv: A batch, B steps, C heads, D = d)
 * and with accumulate, y += instead of y = (the backward of a permute that is not the first to
 * reach its input's gradient). */
#include "lab04/lab04_kernels.h"

#include "../../cuda/al_cuda.h"

/* ---------- 4.4: one thread per row of D floats ---------- */

/* Row r = (a, b, c) of x, D contiguous floats, goes to row (a, c, b) of y. A warp's 32 lanes
 * take 32 consecutive rows: at each j they touch 32 floats D apart in x and B * D apart in y,
 * each in a sector of its own once D >= 8 (32 sectors a request instead of 4). */
static __global__ void permute0213_naive_kernel(const float *x, float *y, int A, int B, int C,
                                                int D, bool accumulate) {
  const long rows = (long)A * B * C;
  for (long r = first_index(); r < rows; r += grid_stride()) {
    const long c = r % C, ab = r / C, b = ab % B, a = ab / B;
    const float *src = x + r * D;                      /* (D) */
    float *dst = y + ((a * C + c) * B + b) * (long)D;  /* (D) */
    for (int j = 0; j < D; j++) dst[j] = accumulate ? dst[j] + src[j] : src[j];
  }
}

int permute0213_naive_cuda(const float *x, float *y, int A, int B, int C, int D,
                           int accumulate) {
  const long rows = (long)A * B * C;
  permute0213_naive_kernel<<<ew_blocks(rows, EW_THREADS), EW_THREADS>>>(x, y, A, B, C, D,
                                                                        accumulate != 0);
  return 0;
}

/* ---------- 4.5: tiles through shared memory ---------- */

enum {
  PT_THREADS = 256, /* threads a block: 8 warps */
  PT_TILE = 1024,   /* floats of x a tile aims at (before padding) */
  PT_SHARED = 2048  /* floats of shared memory a block holds: a tile and its padding */
};

/* A tile is TB steps x TC heads x D of one batch row a. Its rows (one step each) are contiguous
 * runs of TC * D floats of x, and its heads contiguous runs of TB * D floats of y. Read: warp w
 * copies rows w, w + 8, ... into shared memory, its lanes on consecutive floats; write: warp w
 * writes heads w, w + 8, ..., its lanes on consecutive floats of the head's run. Both coalesced.
 * Row bb sits at tile[bb * L], L = TC * D + pad with L = D (mod 32): in a head's run, element
 * (bb, j) is then in bank (bb * D + j + const) mod 32, consecutive for consecutive lanes, so a
 * warp's 32 reads hit 32 banks. Unpadded (L = TC * D = 32 at lab06's D = 8), the lanes of steps
 * bb and bb + 1 would share banks: a 4-way conflict on every read. */
static __global__ void permute0213_tiled_kernel(const float *x, float *y, int A, int B, int C,
                                                int D, int TB, int TC, int L, bool accumulate) {
  __shared__ float tile[PT_SHARED]; /* (TB, L): TB rows of TC * D floats, padded */
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const long nb = (B + TB - 1) / TB, nc = (C + TC - 1) / TC, tiles = (long)A * nb * nc;
  /* t depends only on the block: every thread takes every trip and meets every barrier */
  for (long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const long a = t / (nb * nc);
    const int b0 = (int)(t / nc % nb) * TB, c0 = (int)(t % nc) * TC;
    const int nbt = B - b0 < TB ? B - b0 : TB, nct = C - c0 < TC ? C - c0 : TC; /* partial */
    const float *xs = x + ((a * B + b0) * C + c0) * (long)D; /* x[a][b0][c0][0] */
    for (int bb = warp; bb < nbt; bb += warps)
      for (int k = lane; k < nct * D; k += 32) tile[bb * L + k] = xs[(long)bb * C * D + k];
    __syncthreads(); /* the whole tile is in before any warp reads it across rows */
    float *ys = y + ((a * C + c0) * B + b0) * (long)D;       /* y[a][c0][b0][0] */
    for (int cc = warp; cc < nct; cc += warps)
      for (int k = lane; k < nbt * D; k += 32) { /* k = bb * D + j */
        const int bb = k / D, j = k - bb * D;
        const float v = tile[bb * L + cc * D + j];
        float *o = ys + (long)cc * B * D + k;
        *o = accumulate ? *o + v : v;
      }
    __syncthreads(); /* the next trip overwrites the tile */
  }
}

int permute0213_tiled_cuda(const float *x, float *y, int A, int B, int C, int D,
                           int accumulate) {
  if (D > PT_TILE) /* a row does not fit a tile (the kit sends these to its own kernel) */
    return permute0213_naive_cuda(x, y, A, B, C, D, accumulate);
  /* heads a tile: enough that a row of the tile is at least 32 floats (a warp's request) */
  int TC = (32 + D - 1) / D;
  if (TC > C) TC = C;
  const int L = TC * D + ((D - TC * D) % 32 + 32) % 32; /* L = D (mod 32), L < PT_SHARED */
  /* steps a tile: about PT_TILE floats of x, and TB * L within the shared array */
  int TB = PT_TILE / (TC * D);
  if (TB > PT_SHARED / L) TB = PT_SHARED / L;
  if (TB > B) TB = B;
  if (TB < 1) TB = 1;
  const long tiles = (long)A * ((B + TB - 1) / TB) * ((C + TC - 1) / TC);
  permute0213_tiled_kernel<<<cap_grid(tiles, 8192), PT_THREADS>>>(x, y, A, B, C, D, TB, TC, L,
                                                                  accumulate != 0);
  return 0;
}
