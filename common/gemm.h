/* gemm.h — the one matrix-product entry point. Row-major single precision:
 *   C (m x n) = alpha * op(A) @ op(B) + beta * C,  op(X) = X or X^T,
 * with leading dimensions lda, ldb, ldc as in CBLAS row-major. Backed by a CBLAS library when
 * the build found one (AL_HAVE_CBLAS), else by a built-in cache-blocked kernel; OpenMP threads
 * where available. Small products stay single-threaded: threading them costs more than it saves. */
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
const char *gemm_backend(void); /* "openblas", "cblas" or "builtin" */
/* What the built-in kernel was compiled for, e.g. "AVX-512, 8x32 tile" (set by -march). */
const char *gemm_builtin_kernel(void);

#endif
