/* kernel_test.cpp — kernel_test.h over the CUDA emulator (cuda/emu.h). Kit code: no exercise,
 * no expected value; the same in the reference and the student's runners. */
#include "kernel_test.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../../cuda/emu.h"

/* An emulator call that fails here is the test's environment, not the student's kernel. */
static void kt_check(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return;
  fflush(stdout);
  fprintf(stderr, "kernel test: %s failed: %s (%s)\n", what, cudaGetErrorName(e),
          cudaGetErrorString(e));
  exit(70);
}

/* The test's own buffers (kt_alloc, kt_upload*), until kt_free: what a launcher must leave to
 * its kernels (kt_watch_end). */
struct Buf {
  const char *p;
  size_t bytes;
};
enum { MAX_BUFS = 64 };
static Buf g_bufs[MAX_BUFS];
static int g_nbufs;
static bool is_test_buf(const void *p, size_t bytes) {
  const char *c = (const char *)p;
  for (int i = 0; i < g_nbufs; i++)
    if (c < g_bufs[i].p + g_bufs[i].bytes && c + bytes > g_bufs[i].p) return true;
  return false;
}

/* Fresh device memory holding NaN (a GPU's holds garbage), unwritten for initcheck. */
static void *dev_bytes(size_t bytes) {
  void *p = nullptr;
  kt_check(cudaMalloc(&p, bytes ? bytes : 4), "cudaMalloc");
  emu_carve(p, bytes ? bytes : 4);
  if (g_nbufs < MAX_BUFS) g_bufs[g_nbufs++] = {(const char *)p, bytes ? bytes : 4};
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

extern "C" void kt_free(void *dev) {
  for (int i = 0; i < g_nbufs; i++)
    if (g_bufs[i].p == dev) g_bufs[i] = g_bufs[--g_nbufs];
  kt_check(cudaFree(dev), "cudaFree");
}

static long g_watch_launches;
static size_t g_watch_bytes;
/* launchers already called once, and the device memory they kept then (a cache is allowed) */
enum { MAX_LAUNCHERS = 16 };
static const char *g_called[MAX_LAUNCHERS];
static int g_ncalled;

extern "C" void kt_watch_begin(void) {
  g_watch_launches = emu_launch_count();
  g_watch_bytes = emu_device_bytes();
  emu_copy_log(true);
}

extern "C" int kt_watch_end(const char *launcher, char *msg, int size) {
  enum { MAX = 256 };
  EmuCopy c[MAX];
  const int n = emu_copy_log_take(c, MAX);
  emu_copy_log(false);
  const long launches = emu_launch_count() - g_watch_launches;
  const size_t bytes = emu_device_bytes();
  bool again = false;
  for (int i = 0; i < g_ncalled && !again; i++) again = strcmp(g_called[i], launcher) == 0;
  if (!again && g_ncalled < MAX_LAUNCHERS) g_called[g_ncalled++] = launcher;
  const char *host = "your launcher computed on the host: the test needs the outputs written by "
                     "a kernel";
  snprintf(msg, (size_t)size, "ran its kernels on the device");
  if (launches == 0) {
    snprintf(msg, (size_t)size, "%s (it launched no kernel)", host);
    return 0;
  }
  for (int i = 0; i < n && i < MAX; i++) {
    if (c[i].kind == cudaMemcpyDeviceToHost && is_test_buf(c[i].src, c[i].bytes)) {
      snprintf(msg, (size_t)size, "%s (it copied %zu bytes of the test's device memory to the "
               "host with cudaMemcpy: a kernel reads its inputs where they are)", host, c[i].bytes);
      return 0;
    }
    if (c[i].kind == cudaMemcpyHostToDevice && is_test_buf(c[i].dst, c[i].bytes)) {
      snprintf(msg, (size_t)size, "%s (it copied %zu bytes from the host into the test's device "
               "memory with cudaMemcpy)", host, c[i].bytes);
      return 0;
    }
  }
  if (again && bytes > g_watch_bytes) {
    snprintf(msg, (size_t)size, "a call leaves %zu more bytes of device memory allocated than "
             "before it (cudaMalloc without cudaFree): called every training step, it runs the "
             "GPU out of memory; free what you allocate, or allocate once", bytes - g_watch_bytes);
    return 0;
  }
  return 1;
}

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
