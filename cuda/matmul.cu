/* matmul.cu — the matrix products on the GPU (CPU twins: common/cpu/gemm.c for gemm and
 * gemm_batched, common/cpu/cpu_matmul.c for the bias and backward of t_linear). Tested by
 * tests/cuda/cases_matmul.c (t_matmul, t_bmm, t_bmm_nt, t_linear forward and backward, so every
 * combination of transpose flags the fronts use).
 *
 * The products are cuBLAS's. The kit's matrices are row-major (gemm.h); cuBLAS's are
 * column-major. A row-major X (r x c, leading dimension ld) is, byte for byte, the column-major
 * X^T (c x r, same ld). So C = op(A) op(B) is computed as the column-major C^T = op(B)^T op(A)^T:
 * the operands swap places (B first), m and n swap, and each transpose flag and leading
 * dimension passes through unchanged. Every product of the kit (these two entries and rnn.cu's)
 * goes through cuda_blas_product(), which also handles the sizes cuBLAS rejects or the fronts
 * produce at the edges: m or n of 0 (nothing to do), k of 0 or alpha of 0 (C = beta C, whose
 * leading dimensions of 0 cuBLAS would refuse).
 *
 * bias_rows: one thread per element of Y in a grid-stride loop. bias_grad (column sums): a
 * block of 256 threads takes 32 columns, its 8 warps each sum every 8th row (a warp reads 32
 * consecutive floats of a row: coalesced), then one warp adds the 8 partial sums in shared
 * memory — a fixed order, no atomics, so the result is the same every run. Under 64 rows there
 * is too little to split and the plain kernel (a thread per column, summing the rows in order,
 * as the CPU does) runs instead: the cases' shapes exercise both.
 */
#include <stdio.h>

#include "kernels.cuh"

extern "C" {
#include "../common/gemm.h"
}

/* ---------- the products: row-major onto column-major cuBLAS ---------- */

/* C[b] (m x n) = beta * C[b] for every b < count (k == 0 or alpha == 0: no product to add);
 * beta == 0 stores 0 without reading C, as BLAS does (C may hold garbage). */
static __global__ void scale_c_kernel(float *C, int m, int n, int ldc, long strideC, int count,
                                      float beta) {
  long mn = (long)m * n, total = mn * count;
  for (long t = first_index(); t < total; t += grid_stride()) {
    long b = t / mn, r = t - b * mn, i = r / n, j = r - i * n;
    float *c = C + b * strideC + i * ldc + j;
    *c = beta == 0.0f ? 0.0f : beta * *c;
  }
}

/* The one place the kit calls cuBLAS: count products C[b] = alpha op(A[b]) op(B[b]) + beta C[b]
 * in gemm.h's row-major conventions (count 1: a single cublasSgemm). */
void cuda_blas_product(const char *entry, bool transA, bool transB, int m, int n, int k,
                       float alpha, const float *A, int lda, long strideA, const float *B, int ldb,
                       long strideB, float beta, float *C, int ldc, long strideC, int count) {
  if (m <= 0 || n <= 0 || count <= 0) return;
  if (k > 0) gemm_count_flops((double)m * n * k * count); /* the labs' GFLOP/s, as on the CPU */
  if (k <= 0 || alpha == 0.0f) {
    long total = (long)m * n * count;
    LAUNCH(scale_c_kernel, ew_blocks(total, EW_THREADS), EW_THREADS, 0, C, m, n, ldc, strideC,
           count, beta);
    return;
  }
  cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  const CudaBlas *blas = cuda_blas();
  cublasStatus_t s;
  if (count == 1) /* C^T (n x m) = op(B)^T (n x k) op(A)^T (k x m), column-major */
    s = blas->sgemm(blas->handle, opB, opA, n, m, k, &alpha, B, ldb, A, lda, &beta, C, ldc);
  else
    s = blas->sgemm_strided_batched(blas->handle, opB, opA, n, m, k, &alpha, B, ldb, strideB, A,
                                    lda, strideA, &beta, C, ldc, strideC, count);
  if (s != CUBLAS_STATUS_SUCCESS) {
    char what[320];
    snprintf(what, sizeof what,
             "%s: %d product(s) C (%d x %d, ldc %d) = op(A) (%d x %d%s, lda %d) @ op(B) "
             "(%d x %d%s, ldb %d), row-major (the op front passed sizes cuBLAS rejects)",
             entry, count, m, n, ldc, m, k, transA ? ", A stored transposed" : "", lda, k, n,
             transB ? ", B stored transposed" : "", ldb);
    cuda_fail(what, blas->status_name(s), "cuBLAS refused the product", __FILE__, __LINE__);
  }
}

static void cuda_gemm(bool transA, bool transB, int m, int n, int k, float alpha, const float *A,
                      int lda, const float *B, int ldb, float beta, float *C, int ldc) {
  cuda_blas_product("gemm", transA, transB, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc,
                    0, 1);
}

static void cuda_gemm_batched(bool transA, bool transB, int m, int n, int k, float alpha,
                              const float *A, int lda, long strideA, const float *B, int ldb,
                              long strideB, float beta, float *C, int ldc, long strideC,
                              int count) {
  cuda_blas_product("gemm_batched", transA, transB, m, n, k, alpha, A, lda, strideA, B, ldb,
                    strideB, beta, C, ldc, strideC, count);
}

/* t_linear's backward: its two products as they are (the CPU's skips the zero rows of dY; here
 * finding them would cost a device-to-host read per layer) */
static void cuda_linear_grad(const float *x, const float *W, const float *dY, float *dx,
                             float dx_beta, float *dW, float dW_beta, int rows, int in, int nout) {
  if (dx) /* dx (rows,in) (+)= dY (rows,out) @ W^T (out,in) */
    cuda_gemm(false, true, rows, in, nout, 1.0f, dY, nout, W, nout, dx_beta, dx, in);
  if (dW) /* dW (in,out) (+)= x^T (in,rows) @ dY (rows,out) */
    cuda_gemm(true, false, in, nout, rows, 1.0f, x, in, dY, nout, dW_beta, dW, nout);
}

/* ---------- the bias of t_linear ---------- */

/* Y (rows, n): every row = b (n); the GEMM then accumulates onto it (beta = 1) */
static __global__ void bias_rows_kernel(float *Y, const float *b, long total, int n) {
  for (long t = first_index(); t < total; t += grid_stride()) Y[t] = b[t % n];
}
static void cuda_bias_rows(float *Y, const float *b, int rows, int n) {
  long total = (long)rows * n;
  if (total > 0)
    LAUNCH(bias_rows_kernel, ew_blocks(total, EW_THREADS), EW_THREADS, 0, Y, b, total, n);
}

/* db (n) += column sums of dY (rows, n), plain: a thread per column, rows added in order onto
 * db[j] (the CPU's order exactly) */
static __global__ void bias_grad_plain_kernel(float *db, const float *dY, int rows, int n) {
  for (long j = first_index(); j < n; j += grid_stride()) {
    float s = db[j];
    for (long r = 0; r < rows; r++) s += dY[r * n + j];
    db[j] = s;
  }
}

/* db (n) += column sums of dY (rows, n), split: 32 columns a block, warp w sums rows w, w+8, ...
 * and the partial sums (8, 32) meet in shared memory */
enum { BG_ROWS = 8, BG_THREADS = 32 * BG_ROWS, BG_SPLIT_MIN = 64 };
static __global__ void bias_grad_kernel(float *db, const float *dY, int rows, int n) {
  SHARED_ARRAY(float, part, BG_THREADS); /* (BG_ROWS, 32) */
  int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  /* the loop bound is the same for the whole block, so every thread reaches both barriers */
  for (long j0 = (long)blockIdx.x * 32; j0 < n; j0 += (long)gridDim.x * 32) {
    long j = j0 + lane;
    float s = 0.0f;
    if (j < n)
      for (long r = w; r < rows; r += BG_ROWS) s += dY[r * n + j];
    part[w * 32 + lane] = s;
    __syncthreads();
    if (w == 0 && j < n) {
      float t = 0.0f;
      for (int q = 0; q < BG_ROWS; q++) t += part[q * 32 + lane];
      db[j] += t;
    }
    __syncthreads(); /* part is rewritten by the next 32 columns */
  }
}

static void cuda_bias_grad(float *db, const float *dY, int rows, int n) {
  if (n <= 0 || rows <= 0) return;
  if (rows < BG_SPLIT_MIN) {
    LAUNCH(bias_grad_plain_kernel, ew_blocks(n, EW_THREADS), EW_THREADS, 0, db, dY, rows, n);
  } else {
    long blocks = ((long)n + 31) / 32;
    LAUNCH_SYNC(bias_grad_kernel, cap_grid(blocks, 8192), BG_THREADS, 0, db,
                dY, rows, n);
  }
}

void cuda_register_matmul(Backend *be) {
  be->gemm = cuda_gemm;
  be->gemm_batched = cuda_gemm_batched;
  be->bias_rows = cuda_bias_rows;
  be->bias_grad = cuda_bias_grad;
  be->linear_grad = cuda_linear_grad;
}
