/* A sum over the grid where each block adds its part to the total with += instead of atomicAdd:
 * two blocks read and write one float with nothing ordering them. */
#include "plant.h"

static __global__ void total_kernel(const float *x, float *total, long n) {
  SHARED_ARRAY(float, scratch, 32);
  float s = 0.0f;
  for (long i = first_index(); i < n; i += grid_stride()) s += x[i];
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) *total += s; /* PLANT: racecheck */
}

PLANT(atomic_race) {
  long n = 4096;
  float *x = plant_floats(n, 1.0f), *total = plant_floats(1, 0.0f);
  LAUNCH_SYNC(total_kernel, 4, 256, 0, x, total, n);
}
