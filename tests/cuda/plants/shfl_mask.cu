/* A warp sum whose shuffles pass mask 0x0000ffff while all 32 lanes take part: lanes 16-31 are
 * left out of their own mask (undefined behaviour on a GPU; the sums of lanes 0-15 then read
 * lanes that are not in the mask). */
#include "plant.h"

static __global__ void row_sum_kernel(const float *x, float *out, long rows) {
  int lane = threadIdx.x % 32;
  long r = blockIdx.x;
  float v = x[r * 32 + lane];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0x0000ffffu, v, o); /* PLANT: synccheck */
  if (lane == 0) out[r] = v;
}

PLANT(shfl_mask) {
  long rows = 4;
  float *x = plant_floats(rows * 32, 1.0f), *out = plant_floats(rows, 0.0f);
  LAUNCH_SYNC(row_sum_kernel, rows, 32, 0, x, out, rows);
}
