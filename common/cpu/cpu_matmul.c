/* cpu_matmul.c — the CPU kernels of the matrix products (ops/matmul.c) besides gemm itself
 * (gemm.c): the bias of t_linear, seeded into every output row and summed back. */
#include "kernels.h"

/* Every row of Y (rows, n) = b: the GEMM then accumulates onto it (beta = 1). */
void cpu_bias_rows(float *Y, const float *b, int rows, int nout) {
  for (int r = 0; r < rows; r++) cpu_copy_run(Y + (size_t)r * nout, b, nout);
}

/* db (n) += column sums of dY (rows, n) */
void cpu_bias_grad(float *db, const float *dY, int rows, int nout) {
  for (int r = 0; r < rows; r++) {
    const float *g = dY + (size_t)r * nout;
    for (int j = 0; j < nout; j++) db[j] += g[j];
  }
}
