/* runtime.c — libvgpu: the CUDA runtime calls an nvcc-compiled host object makes, served by
 * vgpu-device over a socket. Link a host object against it instead of cudart. The first call
 * connects: to the socket whose descriptor is in VGPU_FD (a device a grader started), or to a
 * vgpu-device this library starts itself (VGPU_DEVICE, else the path it was built with).
 * Every copy and launch is synchronous, so streams are only handles; a kernel's fault is
 * sticky (as a card's context is lost) and returned by every later call. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto.h"

#ifndef VGPU_DEVICE_PATH
#define VGPU_DEVICE_PATH "vgpu-device"
#endif

static int dev_fd = -1;
static pid_t dev_pid;
static cudaError_t last_error;

static int io(int write_, void *buf, size_t n) {
  for (char *p = buf; n;) {
    ssize_t r = write_ ? write(dev_fd, p, n) : read(dev_fd, p, n);
    if (r <= 0) return -1;
    p += r; n -= (size_t)r;
  }
  return 0;
}

static void bye(void) {
  if (dev_fd < 0) return;
  vq_req q = {.op = VQ_BYE};
  vq_rep r;
  if (!io(1, &q, sizeof q)) (void)io(0, &r, sizeof r);
  close(dev_fd);
  dev_fd = -1;
  if (dev_pid > 0) waitpid(dev_pid, NULL, 0);
}

static void connect_device(void) {
  const char *fd = getenv("VGPU_FD");
  if (fd) { dev_fd = atoi(fd); atexit(bye); return; }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) { perror("vgpu: socketpair"); exit(1); }
  const char *path = getenv("VGPU_DEVICE");
  if (!path) path = VGPU_DEVICE_PATH;
  dev_pid = fork();
  if (dev_pid == 0) {
    char arg[16];
    int child = dup(sv[1]); /* without CLOEXEC */
    snprintf(arg, sizeof arg, "%d", child);
    execl(path, "vgpu-device", arg, (char *)NULL);
    fprintf(stderr, "vgpu: cannot start the device %s (set VGPU_DEVICE)\n", path);
    _exit(127);
  }
  close(sv[1]);
  dev_fd = sv[0];
  atexit(bye);
}

static cudaError_t exchange(uint32_t op, uint64_t a, uint64_t b, uint64_t c, const void *out,
                            uint32_t out_len, void *in, uint32_t in_cap, uint64_t *val);
/* One request and its reply; payload in and out. Returns the device's error. */
static cudaError_t call(uint32_t op, uint64_t a, uint64_t b, uint64_t c, const void *out,
                        uint32_t out_len, void *in, uint32_t in_cap, uint64_t *val) {
  static pthread_mutex_t bus = PTHREAD_MUTEX_INITIALIZER; /* one request at a time */
  pthread_mutex_lock(&bus);
  cudaError_t e = exchange(op, a, b, c, out, out_len, in, in_cap, val);
  pthread_mutex_unlock(&bus);
  return e;
}

static cudaError_t exchange(uint32_t op, uint64_t a, uint64_t b, uint64_t c, const void *out,
                            uint32_t out_len, void *in, uint32_t in_cap, uint64_t *val) {
  if (dev_fd < 0) connect_device();
  vq_req q = {op, out_len, a, b, c};
  vq_rep r;
  if (io(1, &q, sizeof q) || (out_len && io(1, (void *)out, out_len)) || io(0, &r, sizeof r)) {
    fprintf(stderr, "vgpu: the device process is gone\n");
    exit(1);
  }
  if (r.len) {
    char *tmp = r.len <= in_cap ? in : malloc(r.len);
    if (io(0, tmp, r.len)) exit(1);
    if (tmp != in) free(tmp);
  }
  if (val) *val = r.val;
  if (r.err) last_error = (cudaError_t)r.err;
  return (cudaError_t)r.err;
}

/* The fake cuBLAS (blas.c, a libcublas.so.N of its own) reaches the device through this. */
__attribute__((visibility("default"))) int vgpu_sgemm(const vq_gemm *g) {
  return (int)call(VQ_SGEMM, 0, 0, 0, g, sizeof *g, NULL, 0, NULL);
}

/* ---- memory ---- */
cudaError_t cudaMalloc(void **p, size_t size) {
  uint64_t v = 0;
  cudaError_t e = call(VQ_MALLOC, size, 0, 0, NULL, 0, NULL, 0, &v);
  *p = e ? NULL : (void *)(uintptr_t)v;
  return e;
}
cudaError_t cudaFree(void *p) { return p ? call(VQ_FREE, (uintptr_t)p, 0, 0, NULL, 0, NULL, 0, NULL) : cudaSuccess; }
cudaError_t cudaMallocHost(void **p, size_t size) { *p = malloc(size ? size : 1); return *p ? cudaSuccess : cudaErrorMemoryAllocation; }
cudaError_t cudaHostAlloc(void **p, size_t size, unsigned flags) { (void)flags; return cudaMallocHost(p, size); }
cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }

static int is_device(const void *p) {
  uintptr_t a = (uintptr_t)p;
  return a >= 0x300000000000ull && a < 0x400000000000ull;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  if (kind == cudaMemcpyDefault)
    kind = is_device(dst) ? (is_device(src) ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                          : (is_device(src) ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  if (!n) return cudaSuccess;
  if (n > VGPU_MAX_PAYLOAD) return last_error = cudaErrorInvalidValue;
  switch (kind) {
  case cudaMemcpyHostToDevice: return call(VQ_H2D, (uintptr_t)dst, 0, 0, src, (uint32_t)n, NULL, 0, NULL);
  case cudaMemcpyDeviceToHost: return call(VQ_D2H, (uintptr_t)src, n, 0, NULL, 0, dst, (uint32_t)n, NULL);
  case cudaMemcpyDeviceToDevice: return call(VQ_D2D, (uintptr_t)dst, (uintptr_t)src, n, NULL, 0, NULL, 0, NULL);
  case cudaMemcpyHostToHost: memmove(dst, src, n); return cudaSuccess;
  default: return last_error = cudaErrorInvalidMemcpyDirection;
  }
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s) {
  (void)s;
  return cudaMemcpy(dst, src, n, kind);
}
cudaError_t cudaMemset(void *p, int v, size_t n) {
  return n ? call(VQ_MEMSET, (uintptr_t)p, (uint8_t)v, n, NULL, 0, NULL, 0, NULL) : cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s) { (void)s; return cudaMemset(p, v, n); }

/* ---- synchronization, streams, errors ---- */
cudaError_t cudaDeviceSynchronize(void) { return call(VQ_SYNC, 0, 0, 0, NULL, 0, NULL, 0, NULL); }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return cudaDeviceSynchronize(); }
cudaError_t cudaStreamCreate(cudaStream_t *s) { *s = (cudaStream_t)malloc(16); return cudaSuccess; }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f) { (void)f; return cudaStreamCreate(s); }
cudaError_t cudaStreamDestroy(cudaStream_t s) { free(s); return cudaSuccess; }
cudaError_t cudaGetLastError(void) { cudaError_t e = last_error; last_error = cudaSuccess; return e; }
cudaError_t cudaPeekAtLastError(void) { return last_error; }
cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }

/* What a program may ask of the card: the limits the device enforces. */
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d) {
  if (d != 0) return last_error = cudaErrorInvalidDevice;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "attention-lab virtual GPU (PTX interpreter)");
  p->major = 8; p->minor = 0;
  p->totalGlobalMem = 2ull << 30;
  p->sharedMemPerBlock = 48 * 1024;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024; p->maxThreadsDim[1] = 1024; p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647; p->maxGridSize[1] = 65535; p->maxGridSize[2] = 65535;
  p->multiProcessorCount = 1;
  p->maxThreadsPerMultiProcessor = 2048;
  return cudaSuccess;
}

static const struct { cudaError_t e; const char *name, *text; } errs[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {cudaErrorMisalignedAddress, "cudaErrorMisalignedAddress", "misaligned address"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};
const char *cudaGetErrorName(cudaError_t e) {
  for (size_t i = 0; i < sizeof errs / sizeof *errs; i++) if (errs[i].e == e) return errs[i].name;
  return "cudaErrorUnknown";
}
const char *cudaGetErrorString(cudaError_t e) {
  for (size_t i = 0; i < sizeof errs / sizeof *errs; i++) if (errs[i].e == e) return errs[i].text;
  return "unknown error";
}

/* ---- registration and launches (what nvcc's host stubs call) ---- */
typedef struct { const void *host; char *name; uint32_t nparams, off[64], size[64]; int known; } kfun;
static kfun *funs;
static int nfuns;

void **__cudaRegisterFatBinary(void *fatbin) { static void *handle; (void)fatbin; return &handle; }
void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
void __cudaUnregisterFatBinary(void **h) { (void)h; }
void __cudaRegisterFunction(void **h, const char *host, char *dev, const char *name, int limit,
                            uint3 *tid, uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize) {
  (void)h; (void)dev; (void)limit; (void)tid; (void)bid; (void)bdim; (void)gdim; (void)wsize;
  funs = realloc(funs, (size_t)(nfuns + 1) * sizeof *funs);
  funs[nfuns++] = (kfun){.host = host, .name = strdup(name)};
}
/* __device__/__constant__ variables live in the device's module (their PTX initializers);
 * kernels use them as they are. The host-side symbol calls (cudaMemcpyToSymbol, ...) are not
 * provided: a program using them fails to link, naming the call. */
void __cudaRegisterVar(void **h, char *host, char *dev, const char *name, int ext, size_t size,
                       int constant, int global) {
  (void)h; (void)host; (void)dev; (void)name; (void)ext; (void)size; (void)constant; (void)global;
}

static dim3 cfg_grid, cfg_block;
static size_t cfg_shared;
unsigned __cudaPushCallConfiguration(dim3 g, dim3 b, size_t shared, struct CUstream_st *s) {
  (void)s;
  cfg_grid = g; cfg_block = b; cfg_shared = shared;
  return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3 *g, dim3 *b, size_t *shared, void *s) {
  *g = cfg_grid; *b = cfg_block; *shared = cfg_shared;
  *(cudaStream_t *)s = NULL;
  return cudaSuccess;
}

static kfun *lookup(const void *host) {
  for (int i = 0; i < nfuns; i++) if (funs[i].host == host) return &funs[i];
  return NULL;
}

cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *host) {
  kfun *f = lookup(host);
  *k = (cudaKernel_t)f;
  return f ? cudaSuccess : cudaErrorInvalidDeviceFunction;
}

static cudaError_t launch(kfun *f, dim3 g, dim3 b, void **args, size_t shared) {
  if (!f) return last_error = cudaErrorInvalidDeviceFunction;
  if (!f->known) { /* the parameter layout, from the device's PTX */
    uint32_t buf[1 + 2 * 64];
    cudaError_t e = call(VQ_PARAMS, 0, 0, 0, f->name, (uint32_t)strlen(f->name), buf, sizeof buf, NULL);
    if (e) return e;
    f->nparams = buf[0];
    for (uint32_t i = 0; i < f->nparams; i++) { f->off[i] = buf[1 + 2 * i]; f->size[i] = buf[2 + 2 * i]; }
    f->known = 1;
  }
  uint32_t plen = f->nparams ? f->off[f->nparams - 1] + f->size[f->nparams - 1] : 0;
  size_t nl = strlen(f->name), total = sizeof(vq_launch) + nl + plen;
  uint8_t *msg = calloc(1, total);
  vq_launch h = {{g.x, g.y, g.z}, {b.x, b.y, b.z}, (uint32_t)shared, (uint32_t)nl, plen, 0};
  if (shared > 0xffffffffu) h.dyn_shared = 0xffffffffu;
  memcpy(msg, &h, sizeof h);
  memcpy(msg + sizeof h, f->name, nl);
  for (uint32_t i = 0; i < f->nparams; i++) memcpy(msg + sizeof h + nl + f->off[i], args[i], f->size[i]);
  cudaError_t e = call(VQ_LAUNCH, 0, 0, 0, msg, (uint32_t)total, NULL, 0, NULL);
  free(msg);
  return e;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t shared, cudaStream_t s) {
  (void)s;
  return launch((kfun *)k, g, b, args, shared);
}
cudaError_t cudaLaunchKernel(const void *host, dim3 g, dim3 b, void **args, size_t shared, cudaStream_t s) {
  (void)s;
  return launch(lookup(host), g, b, args, shared);
}
