/* An elementwise kernel whose bound is i <= n: thread n reads one float past x. The tensors come
 * from the arena, packed one after another, so the float past x is the next tensor's: valid
 * memory to the CPU, an error only when each tensor's bounds are exact. */
#include "plant.h"

static __global__ void scale_le_kernel(const float *x, float *y, long n) {
  for (long i = first_index(); i <= n; i += grid_stride()) y[i] = 2.0f * x[i]; /* PLANT: memcheck */
}

PLANT(oob_le) {
  long n = 100;
  float *x = plant_floats(n, 1.0f), *y = plant_floats(n, 0.0f);
  plant_floats(n, 3.0f); /* a neighbour right after y */
  LAUNCH(scale_le_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, x, y, n);
}
