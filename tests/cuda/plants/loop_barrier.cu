/* A tiled row sum: each trip loads a tile into shared memory, waits, and lets thread 0 add the
 * tile — but nothing stops the other threads from loading the next tile over it while thread 0
 * still reads: the barrier at the end of the loop body is missing. One trip hides it. */
#include "plant.h"

enum { TILE = 64 };
static __global__ void tiled_sum_kernel(const float *x, float *out, long n) {
  SHARED_ARRAY(float, tile, TILE);
  float s = 0.0f;
  for (long base = 0; base < n; base += TILE) {
    long i = base + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f; /* PLANT: racecheck */
    __syncthreads();
    if (threadIdx.x == 0)
      for (int k = 0; k < TILE; k++) s += tile[k];
    /* missing: __syncthreads(); */
  }
  if (threadIdx.x == 0) out[0] = s;
}

PLANT(loop_barrier) {
  long n = 3 * TILE;
  float *x = plant_floats(n, 1.0f), *out = plant_floats(1, 0.0f);
  LAUNCH_SYNC(tiled_sum_kernel, 1, TILE, 0, x, out, n);
}
