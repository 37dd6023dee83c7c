/* A neighbour difference through shared memory where the block's last thread reads the slot
 * after its own, which no thread writes. */
#include "plant.h"

static __global__ void diff_kernel(const float *x, float *y, long n) {
  SHARED_ARRAY(float, s, 256); /* room for the read past the last thread */
  long i = first_index();
  if (i < n) s[threadIdx.x] = x[i];
  __syncthreads();
  if (i < n) y[i] = s[threadIdx.x + 1] - s[threadIdx.x]; /* PLANT: initcheck */
}

PLANT(unwritten_shared) {
  long n = 128;
  float *x = plant_floats(n, 1.0f), *y = plant_floats(n, 0.0f);
  LAUNCH_SYNC(diff_kernel, 1, 128, 0, x, y, n);
}
