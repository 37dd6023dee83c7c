/* kernel_test.cpp — kernel_test.h over the CUDA emulator (cuda/emu.h). Kit code: no exercise,
 * no expected value; the same in the reference and the student's runners. */
#include "kernel_test.h"

#include <cstdio>
#include <cstdlib>

#include "../../cuda/emu.h"

/* An emulator call that fails here is the test's environment, not the student's kernel. */
static void kt_check(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return;
  fflush(stdout);
  fprintf(stderr, "kernel test: %s failed: %s (%s)\n", what, cudaGetErrorName(e),
          cudaGetErrorString(e));
  exit(70);
}

/* Fresh device memory holding NaN (a GPU's holds garbage), unwritten for initcheck. */
static void *dev_bytes(size_t bytes) {
  void *p = nullptr;
  kt_check(cudaMalloc(&p, bytes ? bytes : 4), "cudaMalloc");
  emu_carve(p, bytes ? bytes : 4);
  return p;
}

extern "C" float *kt_alloc(long n) { return (float *)dev_bytes(sizeof(float) * (size_t)n); }

extern "C" float *kt_upload(const float *host, long n) {
  float *d = kt_alloc(n);
  kt_check(cudaMemcpy(d, host, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

extern "C" int *kt_upload_ints(const int *host, long n) {
  int *d = (int *)dev_bytes(sizeof(int) * (size_t)n);
  kt_check(cudaMemcpy(d, host, sizeof(int) * (size_t)n, cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

extern "C" void kt_download(float *host, const float *dev, long n) {
  kt_check(cudaMemcpy(host, dev, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost),
           "cudaMemcpy");
}

extern "C" void kt_free(void *dev) { kt_check(cudaFree(dev), "cudaFree"); }

extern "C" void kt_grid_cap(long blocks) { emu_set_grid_cap(blocks); }

extern "C" void kt_profile_begin(void) {
  emu_profile_take(nullptr, 0);
  emu_profile(true);
}

extern "C" KtCounters kt_profile_end(void) {
  emu_profile(false);
  enum { MAX = 64 };
  EmuKernelProfile p[MAX];
  int n = emu_profile_take(p, MAX);
  KtCounters c = {};
  for (int i = 0; i < n && i < MAX; i++) {
    c.launches += (double)p[i].launches;
    c.ld_req += (double)p[i].ld_req, c.ld_sectors += (double)p[i].ld_sectors;
    c.st_req += (double)p[i].st_req, c.st_sectors += (double)p[i].st_sectors;
    c.atomics += (double)p[i].atomics;
    c.sh_req += (double)p[i].sh_req, c.sh_conflicts += (double)(p[i].sh_wavefronts - p[i].sh_req);
  }
  const double bytes = 32.0 * (c.ld_sectors + c.st_sectors);
  c.kb_moved = bytes / 1024;
  c.h100_us = bytes / 3.35e6; /* 3.35e12 bytes/s, in microseconds */
  return c;
}

extern "C" void kt_counters_values(const KtCounters *c, double *out) {
  const double v[KT_NCOUNTERS] = {c->launches, c->ld_req,       c->ld_sectors, c->st_req,
                                  c->st_sectors, c->atomics,    c->sh_req,     c->sh_conflicts,
                                  c->kb_moved,   c->h100_us};
  for (int i = 0; i < KT_NCOUNTERS; i++) out[i] = v[i];
}
