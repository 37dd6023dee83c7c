/* backend.cu — the CUDA device: its memory, its errors, and its Backend table, filled by the
 * family files (elementwise.cu, matmul.cu, ...). Compiled by nvcc for the labs and as host C++
 * against the emulator (emu.h) for the tests; the same code either way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.cuh"

[[noreturn]] void cuda_fail(const char *what, const char *err_name, const char *err_text,
                            const char *file, int line) {
  fflush(stdout);
  fprintf(stderr, "error: cuda: %s failed: %s (%s) at %s:%d\n", what, err_name, err_text, file,
          line);
  exit(1);
}

void cuda_check_launch(const char *kernel, const char *file, int line) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) cuda_fail(kernel, cudaGetErrorName(e), cudaGetErrorString(e), file, line);
#ifdef AL_CUDA_SYNC_LAUNCHES
  /* debugging: a kernel's own fault is reported at its launch, not at a later copy */
  e = cudaDeviceSynchronize();
  if (e != cudaSuccess) cuda_fail(kernel, cudaGetErrorName(e), cudaGetErrorString(e), file, line);
#endif
}

static cublasHandle_t g_blas;
cublasHandle_t cuda_blas(void) { return g_blas; }

/* ---------- memory ---------- */

static CudaCopyCounts g_copies;

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
static void cu_to_host(void *dst, const void *src, size_t bytes) {
  g_copies.to_host++;
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}
static void cu_from_host(void *dst, const void *src, size_t bytes) {
  g_copies.to_device++;
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}
static void cu_copy(void *dst, const void *src, size_t bytes) {
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
}
static void cu_zero(void *p, size_t bytes) { CUDA_CHECK(cudaMemset(p, 0, bytes)); }

extern "C" CudaCopyCounts cuda_copy_counts(void) { return g_copies; }

/* ---------- the device ---------- */

static Backend g_cuda_backend;

extern "C" bool cuda_open(char *err, size_t errlen) {
  if (backend_available(DEV_CUDA)) return true;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
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
  cublasStatus_t s = cublasCreate(&g_blas);
  if (s != CUBLAS_STATUS_SUCCESS) {
    snprintf(err, errlen, "cuBLAS did not start (%s); run with --device cpu",
             cublasGetStatusName(s));
    return false;
  }
  /* FP32 products, so GPU and CPU agree to float rounding; AL_CUDA_TF32=1 allows TF32 tensor
   * cores (about 10 significant bits in the products' inputs). */
  const char *tf32 = getenv("AL_CUDA_TF32");
  cublasSetMathMode(g_blas, tf32 && strcmp(tf32, "1") == 0 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                           : CUBLAS_DEFAULT_MATH);
  Backend *be = &g_cuda_backend;
  be->name = "cuda";
  be->alloc = cu_alloc;
  be->free = cu_free;
  be->to_host = cu_to_host;
  be->from_host = cu_from_host;
  be->copy = cu_copy;
  be->zero = cu_zero;
  cuda_register_elementwise(be);
  cuda_register_matmul(be);
  cuda_register_reduce(be);
  cuda_register_softmax(be);
  cuda_register_nn(be);
  cuda_register_shape(be);
  cuda_register_optim(be);
  cuda_register_fused(be);
  cuda_register_rnn(be);
  backend_register(DEV_CUDA, be);
  return true;
}

extern "C" const char *cuda_device_name(void) {
  static cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "unknown";
  return prop.name;
}
