/* A grid-stride loop whose step is one short: on its second trip a thread takes the element its
 * neighbour took on the first, and both write it. Only a grid smaller than the data exposes it:
 * ew_blocks gives 3000 elements 12 blocks, one trip each, unless the grid is capped lower
 * (make test's AL_CUDA_EMU_GRID_CAP=2), so this plant also checks that the cap works. */
#include "plant.h"

static __global__ void square_kernel(const float *x, float *y, long n) {
  for (long i = first_index(); i < n; i += grid_stride() - 1)
    y[i] = x[i] * x[i]; /* PLANT: racecheck */
}

PLANT(grid_stride_step) {
  long n = 3000;
  float *x = plant_floats(n, 2.0f), *y = plant_floats(n, 0.0f);
  LAUNCH(square_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, x, y, n);
}
