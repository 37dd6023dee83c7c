/* plant.h — the planted-bug kernels of tests/cuda/plants: each .cu holds one classic CUDA mistake
 * and a function that launches it on the emulated device; the line with the mistake carries a
 * comment naming the check that must catch it ("PLANT: memcheck"). tests/suites/cuda.sh runs
 * each (build/.../cuda_plants_emu NAME) and expects it to fail with that check's report naming
 * that line. counters.cu holds the profiler's kernels with known ideal counters (--counters). */
#ifndef AL_CUDA_PLANT_H
#define AL_CUDA_PLANT_H

#include "../../../cuda/al_cuda.h"

typedef void (*PlantFn)(void);
struct Plant {
  const char *name;
  PlantFn run;
  Plant *next;
  Plant(const char *n, PlantFn f);
};
#define PLANT(name) static void plant_##name(void); static Plant reg_##name(#name, plant_##name); \
  static void plant_##name(void)

/* n floats of the device's activation arena (exact bounds: a tensor's own piece), holding v */
float *plant_floats(long n, float v);
/* the same, never written: what a fresh tensor holds before its kernel runs */
float *plant_fresh(long n);
/* n floats back on the host (the caller frees) */
float *plant_to_host(const float *d, long n);

int counters_main(void); /* counters.cu */

#endif
