/* backend.cu — the CUDA device: its memory, its errors, and its Backend table, filled by the
 * family files (elementwise.cu, matmul.cu, ...). Compiled by nvcc for the labs and as host C++
 * against the emulator (emu.h) for the tests; the same code either way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef AL_CUDA_EMU
#include <dlfcn.h>
#endif

#include "kernels.cuh"
#include "profile.h"

[[noreturn]] void cuda_fail(const char *what, const char *err_name, const char *err_text,
                            const char *file, int line) {
  fflush(stdout);
  fprintf(stderr, "error: cuda: %s failed: %s (%s) at %s:%d\n", what, err_name, err_text, file,
          line);
  exit(1);
}

/* AL_CUDA_SYNC=1 in the environment (or -DAL_CUDA_SYNC_LAUNCHES at build time): every launch
 * waits for its kernel and checks it, so an asynchronous fault (an illegal address) is reported
 * at the launch that made it, with its file and line, instead of at a later copy. Read once. */
static bool sync_launches(void) {
#ifdef AL_CUDA_SYNC_LAUNCHES
  return true;
#else
  static int on = -1;
  if (on < 0) {
    const char *v = getenv("AL_CUDA_SYNC");
    on = v && *v && strcmp(v, "0") != 0;
  }
  return on;
#endif
}

void cuda_check_launch(const char *kernel, const char *file, int line) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) cuda_fail(kernel, cudaGetErrorName(e), cudaGetErrorString(e), file, line);
  if (!sync_launches()) return;
  e = cudaDeviceSynchronize();
  if (e != cudaSuccess) cuda_fail(kernel, cudaGetErrorName(e), cudaGetErrorString(e), file, line);
}

/* ---------- cuBLAS ---------- */

static CudaBlas g_blas;
const CudaBlas *cuda_blas(void) { return &g_blas; }

#ifdef AL_CUDA_EMU
extern "C" bool cuda_blas_load(char *err, size_t errlen) {
  g_blas.create = cublasCreate;
  g_blas.set_math_mode = cublasSetMathMode;
  g_blas.set_stream = cublasSetStream;
  g_blas.sgemm = cublasSgemm;
  g_blas.sgemm_strided_batched = cublasSgemmStridedBatched;
  g_blas.status_name = cublasGetStatusName;
  return true;
}
#else
#define AL_STR2(x) #x
#define AL_STR(x) AL_STR2(x)
/* The soname of the toolkit the kernels were built with; then the same file in that toolkit's
 * library folder (AL_CUDA_LIBDIR, from the Makefile), for a loader that ignores the rpath. */
#define CUBLAS_SONAME "libcublas.so." AL_STR(CUBLAS_VER_MAJOR)

template <typename F> static bool blas_sym(void *lib, const char *name, F *fn, char *err,
                                           size_t errlen) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!*fn) snprintf(err, errlen, "%s has no %s (a cuBLAS older than CUDA %d?); run with "
                     "--device cpu", CUBLAS_SONAME, name, CUBLAS_VER_MAJOR);
  return *fn != nullptr;
}

extern "C" bool cuda_blas_load(char *err, size_t errlen) {
  if (g_blas.sgemm) return true;
  void *lib = dlopen(CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
#ifdef AL_CUDA_LIBDIR
  if (!lib) lib = dlopen(AL_CUDA_LIBDIR "/" CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
#endif
  if (!lib) {
    snprintf(err, errlen, "cannot load cuBLAS (%s); install the CUDA %d toolkit's libcublas or "
             "add its folder to LD_LIBRARY_PATH, or run with --device cpu", dlerror(),
             CUBLAS_VER_MAJOR);
    return false;
  }
  /* cublas_v2.h maps cublasCreate and cublasSgemm onto these _v2 symbols */
  CudaBlas b = {};
  if (!blas_sym(lib, "cublasCreate_v2", &b.create, err, errlen) ||
      !blas_sym(lib, "cublasSetMathMode", &b.set_math_mode, err, errlen) ||
      !blas_sym(lib, "cublasSetStream_v2", &b.set_stream, err, errlen) ||
      !blas_sym(lib, "cublasSgemm_v2", &b.sgemm, err, errlen) ||
      !blas_sym(lib, "cublasSgemmStridedBatched", &b.sgemm_strided_batched, err, errlen) ||
      !blas_sym(lib, "cublasGetStatusName", &b.status_name, err, errlen)) {
    dlclose(lib);
    return false;
  }
  g_blas = b; /* kept loaded for the life of the process */
  return true;
}
#endif

/* ---------- memory ---------- */

static CudaCopyCounts g_copies;

/* The kit's stream. A blocking stream (not cudaStreamNonBlocking), so that anything left on the
 * legacy default stream stays ordered with it. */
static cudaStream_t g_stream;
cudaStream_t cuda_stream(void) { return g_stream; }

/* Pinned host memory that copies go through, so that a copy to the device is asynchronous (the
 * host goes on at once; the caller's memory may be reused right away: the bytes were copied
 * here) and a read back waits once, for the stream. Space is handed out in order; it is free
 * again once the host has waited for the stream (every copy made before the wait has run), and
 * a copy that finds it full waits first. */
static struct {
  char *p;
  size_t cap, used;
} g_staging;

static void staging_reset(void) { g_staging.used = 0; }

static char *staging_take(size_t bytes) {
  bytes = (bytes + 63) / 64 * 64;
  if (g_staging.used + bytes > g_staging.cap) {
    CUDA_CHECK(cudaStreamSynchronize(g_stream)); /* every copy from it has run */
    staging_reset();
    if (bytes > g_staging.cap) {
      CUDA_CHECK(cudaFreeHost(g_staging.p));
      g_staging.cap = bytes > ((size_t)16 << 20) ? bytes : (size_t)16 << 20;
      CUDA_CHECK(cudaMallocHost((void **)&g_staging.p, g_staging.cap));
    }
  }
  char *p = g_staging.p + g_staging.used;
  g_staging.used += bytes;
  return p;
}

static void *cu_alloc(size_t bytes) {
  void *p = NULL;
  cudaError_t e = cudaMalloc(&p, bytes ? bytes : 64); /* cudaMalloc aligns to 256 bytes */
  if (e != cudaSuccess) {
    fflush(stdout);
    fprintf(stderr,
            "error: cuda: out of GPU memory: cudaMalloc of %zu bytes failed (%s); use a smaller "
            "--preset or batch, or --device cpu\n",
            bytes, cudaGetErrorName(e));
    exit(1);
  }
  return p;
}
static void cu_free(void *p) { CUDA_CHECK(cudaFree(p)); }
/* A read: after the stream's work, into pinned memory, then the one wait. (One that does not
 * fit goes straight to dst: a copy to pageable memory returns when it is done, one wait too.) */
static void cu_to_host(void *dst, const void *src, size_t bytes) {
  g_copies.to_host++;
  if (g_staging.used + bytes <= g_staging.cap) {
    char *h = g_staging.p + g_staging.used; /* not taken: it is free again after the wait */
    CUDA_CHECK(cudaMemcpyAsync(h, src, bytes, cudaMemcpyDeviceToHost, g_stream));
    CUDA_CHECK(cudaStreamSynchronize(g_stream));
    memcpy(dst, h, bytes);
  } else {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, g_stream));
  }
  staging_reset();
}
static void cu_from_host(void *dst, const void *src, size_t bytes) {
  g_copies.to_device++;
  char *h = staging_take(bytes);
  memcpy(h, src, bytes);
  CUDA_CHECK(cudaMemcpyAsync(dst, h, bytes, cudaMemcpyHostToDevice, g_stream));
}
static void cu_copy(void *dst, const void *src, size_t bytes) {
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, g_stream));
}
static void cu_zero(void *p, size_t bytes) {
  CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, g_stream));
}
#ifdef AL_CUDA_EMU
static void cu_carved(void *p, size_t bytes) { emu_carve(p, bytes); }
#endif

extern "C" CudaCopyCounts cuda_copy_counts(void) { return g_copies; }

#ifdef AL_CUDA_EMU
/* One line per training step on the emulated device: what the step cost in launches, copies
 * and host waits (tests/suites/cuda_step.sh holds them to a step that waits once), and with
 * AL_CUDA_EMU_PROFILE=1 its memory traffic and the H100 estimate. */
static void cu_step_end(long const_sends) {
  static EmuCounters last;
  static long step;
  EmuCounters c = emu_counters();
  fflush(stdout);
  fprintf(stderr, "cuda step %ld: %ld launches; copies: %ld to the device (%.1f KB; %ld of them "
          "constants, sent once), %ld to the host (%.0f B); %ld host waits", ++step,
          c.launches - last.launches, c.to_device - last.to_device,
          (c.bytes_to_device - last.bytes_to_device) / 1024, const_sends, c.to_host - last.to_host,
          c.bytes_to_host - last.bytes_to_host, c.waits - last.waits);
  if (c.moved_bytes > last.moved_bytes)
    fprintf(stderr, "; %.1f MB moved, H100 est %.1f us", (c.moved_bytes - last.moved_bytes) / 1e6,
            (c.h100_seconds - last.h100_seconds) * 1e6);
  fputc('\n', stderr);
  last = c;
}
#endif

/* ---------- the emulator's memory counters (cuda/profile.h) ---------- */
#ifdef AL_CUDA_EMU
static_assert(sizeof(CudaKernelProfile) == sizeof(EmuKernelProfile), "profile.h and emu.h differ");
extern "C" bool cuda_profile_start(void) {
  emu_profile_take(NULL, 0);
  emu_profile(true);
  return true;
}
extern "C" int cuda_profile_stop(CudaKernelProfile *out, int max) {
  emu_profile(false);
  return emu_profile_take((EmuKernelProfile *)out, max);
}
extern "C" int cuda_grid_never_capped(const char **kernels, int max) {
  return emu_grid_never_capped(kernels, max);
}
#else
extern "C" bool cuda_profile_start(void) { return false; }
extern "C" int cuda_profile_stop(CudaKernelProfile *, int) { return 0; }
extern "C" int cuda_grid_never_capped(const char **, int) { return -1; }
#endif

/* ---------- the device ---------- */

/* The line a run starts with when this build cannot run on the machine's card (pure formatting,
 * so tests/unit/test_cuda_start.c feeds it numbers without a GPU). Versions as CUDA gives them
 * (12040 is 12.4), archs as the Makefile's CUDA_ARCH ("75 80 90"). Minor-version compatibility
 * lets a 12.8 build run on a 12.4 driver, so a driver older than the runtime is only named when
 * CUDA refused it: a newer major version (a CUDA 13 build on Colab's 12.x driver). */
static void cuda_version_text(char *s, size_t n, int v) {
  snprintf(s, n, "%d.%d", v / 1000, v % 1000 / 10);
}
extern "C" void cuda_start_problem(char *err, size_t errlen, CudaStartProblem what,
                                   const char *card, int cc_major, int cc_minor, int driver,
                                   int runtime, const char *archs) {
  char dv[16], rv[16];
  cuda_version_text(dv, sizeof dv, driver);
  cuda_version_text(rv, sizeof rv, runtime);
  switch (what) {
  case CUDA_START_DRIVER:
    snprintf(err, errlen, "the NVIDIA driver runs CUDA %s at most and this build is CUDA %s's "
             "(cudaErrorInsufficientDriver): build with this machine's own nvcc (e.g. Colab's "
             "12.x: make clean && make) or update the driver; or run with --device cpu", dv, rv);
    break;
  case CUDA_START_NO_CODE:
    snprintf(err, errlen, "the %s is sm_%d%d and this build has code for CUDA_ARCH=\"%s\" only "
             "(cudaErrorNoKernelImageForDevice): rebuild with make CUDA_ARCH=%d%d, or "
             "CUDA_ARCH=native on this machine; or run with --device cpu", card, cc_major,
             cc_minor, archs, cc_major, cc_minor);
    break;
  case CUDA_START_PTX:
    snprintf(err, errlen, "the %s (sm_%d%d) has no code in this build (CUDA_ARCH=\"%s\") and "
             "its driver (CUDA %s) cannot compile the build's PTX (CUDA %s's, "
             "cudaErrorUnsupportedPtxVersion): rebuild with this machine's own nvcc and make "
             "CUDA_ARCH=%d%d; or run with --device cpu", card, cc_major, cc_minor, archs, dv, rv,
             cc_major, cc_minor);
    break;
  }
}

#ifndef AL_CUDA_EMU
#ifndef AL_CUDA_ARCHS
#define AL_CUDA_ARCHS "?" /* the Makefile names them */
#endif
/* A kernel that does nothing: launched once at start, it finds a card this build has no code
 * for (the first real launch would fail later, mid-lab, with a bare CUDA error). */
__global__ void cuda_probe_kernel(void) {}

/* false: err is the one line (cuda_start_problem's when the cause is the build vs the card) */
static bool cuda_probe(cudaError_t count_error, char *err, size_t errlen) {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  if (count_error == cudaErrorInsufficientDriver && driver > 0) {
    cuda_start_problem(err, errlen, CUDA_START_DRIVER, "", 0, 0, driver, runtime, AL_CUDA_ARCHS);
    return false;
  }
  if (count_error != cudaSuccess) return true; /* cuda_open names it */
  cuda_probe_kernel<<<1, 1>>>();
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e == cudaSuccess) return true;
  cudaDeviceProp prop = {};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
    snprintf(prop.name, sizeof prop.name, "card");
  if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction)
    cuda_start_problem(err, errlen, CUDA_START_NO_CODE, prop.name, prop.major, prop.minor, driver,
                       runtime, AL_CUDA_ARCHS);
  else if (e == cudaErrorUnsupportedPtxVersion || e == cudaErrorInvalidPtx)
    cuda_start_problem(err, errlen, CUDA_START_PTX, prop.name, prop.major, prop.minor, driver,
                       runtime, AL_CUDA_ARCHS);
  else
    snprintf(err, errlen, "a first kernel on CUDA device 0 failed (%s: %s); run with --device cpu",
             cudaGetErrorName(e), cudaGetErrorString(e));
  return false;
}
#endif

static Backend g_cuda_backend;

extern "C" bool cuda_open(char *err, size_t errlen) {
  if (backend_available(DEV_CUDA)) return true;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
#ifndef AL_CUDA_EMU
  if (e != cudaSuccess && !cuda_probe(e, err, errlen)) return false;
#endif
  if (e != cudaSuccess || n == 0) {
    snprintf(err, errlen, "no CUDA device (%s: %s); run with --device cpu",
             cudaGetErrorName(e == cudaSuccess ? cudaErrorNoDevice : e),
             e == cudaSuccess ? "no CUDA-capable device is detected" : cudaGetErrorString(e));
    return false;
  }
  e = cudaSetDevice(0);
  if (e != cudaSuccess) {
    snprintf(err, errlen, "cannot use CUDA device 0 (%s: %s); run with --device cpu",
             cudaGetErrorName(e), cudaGetErrorString(e));
    return false;
  }
#ifndef AL_CUDA_EMU
  if (!cuda_probe(cudaSuccess, err, errlen)) return false; /* a card this build cannot run on */
#endif
  if (!cuda_blas_load(err, errlen)) return false;
  cublasStatus_t s = g_blas.create(&g_blas.handle);
  if (s != CUBLAS_STATUS_SUCCESS) {
    snprintf(err, errlen, "cuBLAS did not start (%s); run with --device cpu",
             g_blas.status_name(s));
    return false;
  }
  /* FP32 products, so GPU and CPU agree to float rounding; AL_CUDA_TF32=1 allows TF32 tensor
   * cores (about 10 significant bits in the products' inputs). */
  e = cudaStreamCreateWithFlags(&g_stream, 0);
  if (e != cudaSuccess) {
    snprintf(err, errlen, "cannot create a CUDA stream (%s: %s); run with --device cpu",
             cudaGetErrorName(e), cudaGetErrorString(e));
    return false;
  }
  g_blas.set_stream(g_blas.handle, g_stream); /* the products go on the kit's stream too */
  g_staging.cap = (size_t)16 << 20; /* a step's batch; it grows for a larger copy */
  e = cudaMallocHost((void **)&g_staging.p, g_staging.cap);
  if (e != cudaSuccess) {
    snprintf(err, errlen, "cannot allocate %zu MB of pinned host memory (%s); run with --device "
             "cpu", g_staging.cap >> 20, cudaGetErrorName(e));
    return false;
  }
  const char *tf32 = getenv("AL_CUDA_TF32");
  g_blas.set_math_mode(g_blas.handle, tf32 && strcmp(tf32, "1") == 0
                                          ? CUBLAS_TF32_TENSOR_OP_MATH
                                          : CUBLAS_DEFAULT_MATH);
  Backend *be = &g_cuda_backend;
  be->name = "cuda";
  be->alloc = cu_alloc;
  be->free = cu_free;
  be->to_host = cu_to_host;
  be->from_host = cu_from_host;
  be->copy = cu_copy;
  be->zero = cu_zero;
#ifdef AL_CUDA_EMU
  be->carved = cu_carved; /* exact bounds for memcheck */
  be->step_end = cu_step_end;
#endif
  cuda_register_elementwise(be);
  cuda_register_matmul(be);
  cuda_register_reduce(be);
  cuda_register_softmax(be);
  cuda_register_nn(be);
  cuda_register_shape(be);
  cuda_register_optim(be);
  cuda_register_fused(be);
  cuda_register_rnn(be);
  cuda_register_attention(be);
  cuda_register_exercises(be);
  backend_register(DEV_CUDA, be);
  return true;
}

extern "C" const char *cuda_device_name(void) {
  static cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "unknown";
  return prop.name;
}
