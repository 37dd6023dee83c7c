/* warp_sum (full-mask shuffles) in a kernel launched with 48 threads a block: the second warp has
 * 16 lanes, and its shuffles name 16 lanes that do not exist. */
#include "plant.h"

static __global__ void block48_sum_kernel(const float *x, float *out, long n) {
  long i = first_index();
  float v = i < n ? x[i] : 0.0f;
  v = warp_sum(v); /* PLANT: synccheck */
  if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}

PLANT(partial_warp) {
  long n = 96;
  float *x = plant_floats(n, 1.0f), *out = plant_floats(1, 0.0f);
  LAUNCH_SYNC(block48_sum_kernel, 2, 48, 0, x, out, n);
}
