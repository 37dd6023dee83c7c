/* cuda_plants_emu — runs one planted-bug kernel (tests/cuda/plants/NAME.cu) on the emulated
 * device, or (--counters) checks the profiler's counters on kernels whose ideal is known. The
 * emulator is expected to stop a plant with its report; a plant that runs to its end prints
 * "plant NAME: not caught" and exits 3. */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "plant.h"

static Plant *g_plants;
Plant::Plant(const char *n, PlantFn f) : name(n), run(f), next(g_plants) { g_plants = this; }

float *plant_fresh(long n) { return (float *)dev_alloc(DEV_CUDA, sizeof(float) * (size_t)n); }
float *plant_floats(long n, float v) {
  float *d = plant_fresh(n), *h = (float *)malloc(sizeof(float) * (size_t)n);
  for (long i = 0; i < n; i++) h[i] = v;
  backend_of(DEV_CUDA)->from_host(d, h, sizeof(float) * (size_t)n);
  free(h);
  return d;
}
float *plant_to_host(const float *d, long n) {
  float *h = (float *)malloc(sizeof(float) * (size_t)n);
  backend_of(DEV_CUDA)->to_host(h, d, sizeof(float) * (size_t)n);
  return h;
}

int main(int argc, char **argv) {
  char err[256];
  if (!cuda_open(err, sizeof err)) {
    fprintf(stderr, "cuda_plants: %s\n", err);
    return 2;
  }
  if (argc == 2 && strcmp(argv[1], "--counters") == 0) return counters_main();
  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (Plant *p = g_plants; p; p = p->next) printf("%s\n", p->name);
    return 0;
  }
  for (Plant *p = g_plants; argc == 2 && p; p = p->next)
    if (strcmp(p->name, argv[1]) == 0) {
      p->run();
      printf("plant %s: not caught\n", p->name);
      return 3;
    }
  fprintf(stderr, "usage: %s NAME | --list | --counters\n", argv[0]);
  return 2;
}
