/* A barrier inside a branch only some threads take: the others never reach it. */
#include "plant.h"

static __global__ void half_sync_kernel(const float *x, float *y, long n) {
  long i = first_index();
  if (i < n / 2) {
    y[i] = x[i];
    __syncthreads(); /* PLANT: synccheck */
  }
}

PLANT(divergent_barrier) {
  long n = 64;
  float *x = plant_floats(n, 1.0f), *y = plant_floats(n, 0.0f);
  LAUNCH_SYNC(half_sync_kernel, 1, 64, 0, x, y, n);
}
