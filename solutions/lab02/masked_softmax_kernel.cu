/* Exercise 2.6 — masked softmax, one warp per row (reference solution; the spec is in
 * labs/lab02/masked_softmax_kernel.cu). Lane l of a row's warp takes keys l, l + 32, ...; the
 * row's max and sum are combined across the 32 lanes with __shfl_xor_sync (a butterfly: after
 * 5 steps every lane holds the result), so no shared memory and no barrier. */
#include "lab02/lab02_kernels.h"

#include "../../cuda/al_cuda.h"

enum { WARPS = 8, THREADS = 32 * WARPS }; /* rows a block, threads a block */

/* y (rows, keys) = softmax of each row of x (rows, keys) over its first len[r / per] keys
 * (len NULL: all), zeros after them; a row whose max is -inf is all zeros. */
static __global__ void masked_softmax_warp_kernel(const float *x, float *y, const int *len,
                                                  long per, long rows, int keys) {
  const int lane = threadIdx.x % 32;
  /* warp w of block b takes row b * WARPS + w, then steps by the grid's warps; the bound is
   * the same for the 32 lanes, so all of them reach every shuffle */
  for (long r = (long)blockIdx.x * WARPS + threadIdx.x / 32; r < rows;
       r += (long)gridDim.x * WARPS) {
    const float *xr = x + r * keys; /* (keys) */
    float *yr = y + r * keys;       /* (keys) */
    int n = len ? len[r / per] : keys;
    float m = -INFINITY;
    for (int j = lane; j < n; j += 32) m = fmaxf(m, xr[j]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (m == -INFINITY) n = 0; /* nothing to attend to: -inf - -inf would be NaN */
    float s = 0.0f;
    for (int j = lane; j < n; j += 32) {
      float e = expf(xr[j] - m); /* <= 1 */
      yr[j] = e;                 /* read back below by this same lane */
      s += e;
    }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    const float inv = n > 0 ? 1.0f / s : 0.0f;
    for (int j = lane; j < keys; j += 32) yr[j] = j < n ? yr[j] * inv : 0.0f;
  }
}

/* dx (rows, keys) (+)= y * (g - <g, y>) per row, one warp per row. */
static __global__ void masked_softmax_warp_backward_kernel(const float *y, const float *g,
                                                           float *dx, long rows, int keys,
                                                           bool fresh) {
  const int lane = threadIdx.x % 32;
  for (long r = (long)blockIdx.x * WARPS + threadIdx.x / 32; r < rows;
       r += (long)gridDim.x * WARPS) {
    const float *yr = y + r * keys, *gr = g + r * keys; /* (keys) */
    float *dr = dx + r * keys;                          /* (keys) */
    float dot = 0.0f;
    for (int j = lane; j < keys; j += 32) dot += gr[j] * yr[j];
    for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
    for (int j = lane; j < keys; j += 32) {
      float d = yr[j] * (gr[j] - dot);
      dr[j] = fresh ? d : dr[j] + d;
    }
  }
}

/* One warp per row, WARPS rows a block; the grid is capped (cap_grid), the loop covers the rest. */
static unsigned blocks_for(long rows) { return cap_grid((rows + WARPS - 1) / WARPS, 8192); }

int masked_softmax_cuda(const float *x, float *y, const int *len, long per, long rows, int keys) {
  masked_softmax_warp_kernel<<<blocks_for(rows), THREADS>>>(x, y, len, per, rows, keys);
  return 0;
}

int masked_softmax_cuda_backward(const float *y, const float *g, float *dx, long rows, int keys,
                                 bool fresh) {
  masked_softmax_warp_backward_kernel<<<blocks_for(rows), THREADS>>>(y, g, dx, rows, keys, fresh);
  return 0;
}
