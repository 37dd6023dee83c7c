/* A shared tile sized for 32 threads, launched with 64: threads 32-63 store past its end (on a
 * GPU into whatever the block keeps after it, or out of the block's shared memory). */
#include "plant.h"

static __global__ void reverse_kernel(const float *x, float *y, long n) {
  SHARED_ARRAY(float, tile, 32);
  long i = first_index();
  tile[threadIdx.x] = i < n ? x[i] : 0.0f; /* PLANT: memcheck */
  __syncthreads();
  if (i < n) y[i] = tile[blockDim.x - 1 - threadIdx.x];
}

PLANT(shared_oob) {
  long n = 64;
  float *x = plant_floats(n, 1.0f), *y = plant_floats(n, 0.0f);
  LAUNCH_SYNC(reverse_kernel, 1, 64, 0, x, y, n);
}
