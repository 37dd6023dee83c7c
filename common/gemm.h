/* gemm.h — the one matrix-product entry point. Row-major single precision:
 *   C (m x n) = alpha * op(A) @ op(B) + beta * C,  op(X) = X or X^T,
 * with leading dimensions lda, ldb, ldc as in CBLAS row-major. Runs the built-in cache-blocked
 * kernel; a build that found a CBLAS library (AL_HAVE_CBLAS) hands it the large products, unless
 * the built-in kernel is the AVX-512 one, which is the faster of the two here (make bench).
 * OpenMP threads where available; small products stay single-threaded, since threading them
 * costs more than it saves. */
#ifndef AL_GEMM_H
#define AL_GEMM_H

#include <stdbool.h>

void gemm(bool transA, bool transB, int m, int n, int k, float alpha, const float *A, int lda,
          const float *B, int ldb, float beta, float *C, int ldc);
/* The built-in kernel, always available (tests compare it with the naive triple loop). */
void gemm_builtin(bool transA, bool transB, int m, int n, int k, float alpha, const float *A,
                  int lda, const float *B, int ldb, float beta, float *C, int ldc);
/* Batched: count independent products with strides between consecutive A, B, C matrices. */
void gemm_batched(bool transA, bool transB, int m, int n, int k, float alpha, const float *A,
                  int lda, long strideA, const float *B, int ldb, long strideB, float beta,
                  float *C, int ldc, long strideC, int count);
const char *gemm_backend(void); /* "openblas", "accelerate" or "builtin" */
/* Floating-point operations (2 per multiply-add) of every gemm() and gemm_batched() call so far
 * in this process: the labs print the matrix products' GFLOP/s of a training run from it, so
 * make bench can set it beside the machine's measured peak. */
double gemm_flops(void);
/* Add a device's products to gemm_flops(): 2 * macs (cuda/matmul.cu, for its cuBLAS calls). */
void gemm_count_flops(double macs);
/* Call before gemm runs on two threads at once (twin_parts_run): the BLAS
 * library's own thread pool is set to one thread. gemm does it itself only outside parallel
 * regions, and two threads each calling a pooled OpenBLAS queue on its lock. */
void gemm_before_threads(void);
/* What the built-in kernel was compiled for, e.g. "AVX-512, 8x32 tile" (set by -march). */
const char *gemm_builtin_kernel(void);

#endif
