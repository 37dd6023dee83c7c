/* cpu_matmul.c — the CPU kernels of the matrix products (ops/matmul.c) besides gemm itself
 * (gemm.c): the bias of t_linear, seeded into every output row and summed back. */
#include <string.h>

#include "kernels.h"

/* dst[0..n) = src[0..n) in blocks of 8 floats (one vector move each), the last block
 * overlapping the one before: rows are short, and memcpy (which GCC would also make of a plain
 * copy loop) costs a library call per row. */
static inline void copy_row(float *restrict dst, const float *restrict src, int n) {
  if (n < 8) {
    memcpy(dst, src, sizeof(float) * (size_t)n);
    return;
  }
  int j = 0;
  for (; j + 8 <= n; j += 8)
    for (int k = 0; k < 8; k++) dst[j + k] = src[j + k];
  if (j < n)
    for (int k = 0; k < 8; k++) dst[n - 8 + k] = src[n - 8 + k];
}
/* Every row of Y (rows, n) = b: the GEMM then accumulates onto it (beta = 1). */
void cpu_bias_rows(float *Y, const float *b, int rows, int nout) {
  for (int r = 0; r < rows; r++) copy_row(Y + (size_t)r * nout, b, nout);
}

/* db (n) += column sums of dY (rows, n) */
void cpu_bias_grad(float *db, const float *dY, int rows, int nout) {
  for (int r = 0; r < rows; r++) {
    const float *g = dY + (size_t)r * nout;
    for (int j = 0; j < nout; j++) db[j] += g[j];
  }
}
