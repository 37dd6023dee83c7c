/* blas.c — libcublas.so.N for programs on the virtual GPU: the six cuBLAS calls the kit makes
 * (cuda/backend.cu dlopens them), each gemm done by vgpu-device (VQ_SGEMM). The program must
 * export vgpu_sgemm (libvgpu's; link with -Wl,--export-dynamic-symbol=vgpu_sgemm) and find
 * this library first (LD_LIBRARY_PATH). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto.h"

typedef struct { int math_mode; } handle_t;
enum { OK = 0, NOT_INITIALIZED = 1, INVALID_VALUE = 7, INTERNAL = 14 };

static int forward(const vq_gemm *g) {
  static int (*fn)(const vq_gemm *);
  if (!fn) *(void **)&fn = dlsym(RTLD_DEFAULT, "vgpu_sgemm");
  if (!fn) {
    fprintf(stderr, "vgpu cuBLAS: the program does not export vgpu_sgemm (link it with libvgpu "
                    "and -Wl,--export-dynamic-symbol=vgpu_sgemm)\n");
    return INTERNAL;
  }
  return fn(g);
}

int cublasCreate_v2(void **h) { *h = calloc(1, sizeof(handle_t)); return *h ? OK : INTERNAL; }
int cublasDestroy_v2(void *h) { free(h); return OK; }
int cublasSetMathMode(void *h, int mode) { ((handle_t *)h)->math_mode = mode; return OK; }
int cublasSetStream_v2(void *h, void *s) { (void)h; (void)s; return OK; }
const char *cublasGetStatusName(int s) {
  return s == OK ? "CUBLAS_STATUS_SUCCESS" : s == INVALID_VALUE ? "CUBLAS_STATUS_INVALID_VALUE"
                                           : "CUBLAS_STATUS_INTERNAL_ERROR";
}

int cublasSgemmStridedBatched(void *h, int ta, int tb, int m, int n, int k, const float *alpha,
                              const float *A, int lda, long long sa, const float *B, int ldb,
                              long long sb, const float *beta, float *C, int ldc, long long sc,
                              int batch) {
  if (!h) return NOT_INITIALIZED;
  if (ta > 1 || tb > 1) return INVALID_VALUE; /* CUBLAS_OP_N, CUBLAS_OP_T only */
  vq_gemm g = {ta, tb, m, n, k, batch, lda, ldb, ldc, 0, *alpha, *beta, (uintptr_t)A,
               (uintptr_t)B, (uintptr_t)C, sa, sb, sc};
  return forward(&g);
}

int cublasSgemm_v2(void *h, int ta, int tb, int m, int n, int k, const float *alpha,
                   const float *A, int lda, const float *B, int ldb, const float *beta, float *C,
                   int ldc) {
  return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc,
                                   0, 1);
}
