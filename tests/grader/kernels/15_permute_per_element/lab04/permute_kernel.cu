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

/* ---------- 4.5 ---------- */

/* PLANT: a thread per element instead of the tile: coalesced stores, reads in runs of D */
static __global__ void permute0213_element_kernel(const float *x, float *y, int A, int B, int C,
                                                  int D, bool accumulate) {
  const long n = (long)A * B * C * D;
  for (long t = first_index(); t < n; t += grid_stride()) {
    const long j = t % D, q = t / D, b = q % B, q2 = q / B, c = q2 % C, a = q2 / C;
    const float v = x[((a * B + b) * C + c) * D + j];
    y[t] = accumulate ? y[t] + v : v;
  }
}
int permute0213_tiled_cuda(const float *x, float *y, int A, int B, int C, int D,
                           int accumulate) {
  const long n = (long)A * B * C * D;
  permute0213_element_kernel<<<ew_blocks(n, EW_THREADS), EW_THREADS>>>(x, y, A, B, C, D,
                                                                       accumulate != 0);
  return 0;
}
