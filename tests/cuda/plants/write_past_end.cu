/* A kernel that writes one element past its output: out has n floats, the last thread writes
 * out[n]. */
#include "plant.h"

static __global__ void shift_kernel(const float *x, float *out, long n) {
  for (long i = first_index(); i < n; i += grid_stride())
    out[i + 1] = x[i]; /* PLANT: memcheck */
}

PLANT(write_past_end) {
  long n = 64;
  float *x = plant_floats(n, 1.0f), *out = plant_floats(n, 0.0f);
  plant_floats(16, 0.0f);
  LAUNCH(shift_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, x, out, n);
}
