/* A gradient kernel that adds into its output (dx += ...) where the front handed it a fresh
 * tensor to store into: the first read is of memory nobody wrote. */
#include "plant.h"

static __global__ void relu_grad_kernel(const float *g, const float *y, float *dx, long n) {
  for (long i = first_index(); i < n; i += grid_stride())
    dx[i] += y[i] > 0.0f ? g[i] : 0.0f; /* PLANT: initcheck */
}

PLANT(uninit_global) {
  long n = 300;
  float *g = plant_floats(n, 1.0f), *y = plant_floats(n, 0.5f), *dx = plant_fresh(n);
  LAUNCH(relu_grad_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, g, y, dx, n);
}
