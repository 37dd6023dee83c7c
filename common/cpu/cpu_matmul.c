/* cpu_matmul.c — the CPU kernels of the matrix products (ops/matmul.c) besides gemm itself
 * (gemm.c): the bias of t_linear, seeded into every output row and summed back, and t_linear's
 * backward, which leaves out the zero rows of the output gradient. */
#include <stdint.h>
#include <string.h>

#include "../gemm.h"
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

/* A row of dY that is exactly zero adds nothing to dW = x^T dY and makes its row of dx = dY W^T
 * zero. Training on padded batches makes many: a position past its sequence's end gets no
 * gradient (the loss weighs it 0, the attention masks it as a key), and the zeros stay exact
 * through every layer below (lab06 d2l-1.0: 11% of the source rows, 22% of the target rows
 * after the trainer's trim and cut). Where a product is large and an eighth or more of its rows
 * are zero, both products run on the live rows only, gathered; under that, or for small
 * products, the gather would cost more than it saves. Exact: only zero terms are left out (a
 * NaN or inf in x facing a zero row of dY is left out too, as it meets no gradient). */
enum { LIVE_MIN_MACS = 1 << 20 };

/* Whether g[0..n) is all zeros (+0 or -0; a NaN is not): the bits but the sign ORed together,
 * 16 floats at a time so that it vectorizes (a scalar loop with an early exit cost more than the
 * gathers: a zero row is read to its end). */
static bool row_is_zero(const float *g, int n) {
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    uint32_t acc = 0;
    for (int k = 0; k < 16; k++) {
      uint32_t u;
      memcpy(&u, g + j + k, sizeof u);
      acc |= u << 1;
    }
    if (acc) return false;
  }
  for (; j < n; j++)
    if (g[j] != 0.0f) return false;
  return true;
}

/* Indices of the rows of dY (rows, n) that are not all zeros; returns their count. */
static int live_rows(const float *dY, int rows, int n, int *idx) {
  int live = 0;
  for (int r = 0; r < rows; r++)
    if (!row_is_zero(dY + (size_t)r * n, n)) idx[live++] = r;
  return live;
}

/* rows idx[0..live) of src (, n) -> dst (live, n) */
static void gather_rows(float *dst, const float *src, const int *idx, int live, int n) {
  for (int r = 0; r < live; r++) cpu_copy_run(dst + (size_t)r * n, src + (size_t)idx[r] * n, n);
}

void cpu_linear_grad(const float *x, const float *W, const float *dY, float *dx, float dx_beta,
                     float *dW, float dW_beta, int rows, int in, int nout) {
  int live = rows;
  int *idx = NULL;
  const double macs = (double)rows * in * nout;
  if (macs >= LIVE_MIN_MACS && rows >= 8) {
    idx = arena_alloc(sizeof(int) * (size_t)rows);
    live = live_rows(dY, rows, nout, idx);
  }
  if (!idx || live > rows - rows / 8) { /* small, or (nearly) every row live: as they are */
    if (dx) /* dx (rows,in) (+)= dY (rows,out) @ W^T (out,in) */
      gemm(false, true, rows, in, nout, 1.0f, dY, nout, W, nout, dx_beta, dx, in);
    if (dW) /* dW (in,out) (+)= x^T (in,rows) @ dY (rows,out) */
      gemm(true, false, in, nout, rows, 1.0f, x, in, dY, nout, dW_beta, dW, nout);
    return;
  }
  /* scratch for dYc (live, out), xc (live, in), dxc (live, in): one block of a size class the
   * arena reclaims (1 MB and up, powers of two), given back at the end so the next call reuses
   * it instead of growing the step's arena */
  size_t need = sizeof(float) * (size_t)live * (size_t)(nout + 2 * in), bytes = (size_t)1 << 20;
  while (bytes < need) bytes <<= 1;
  float *dYc = arena_alloc(bytes), *xc = dYc + (size_t)live * nout, *dxc = xc + (size_t)live * in;
  gather_rows(dYc, dY, idx, live, nout);
  if (dx) {
    if (live) gemm(false, true, live, in, nout, 1.0f, dYc, nout, W, nout, 0.0f, dxc, in);
    for (int r = 0, i = 0; r < rows; r++) { /* scatter: dead rows get 0 (+ 0) */
      float *d = dx + (size_t)r * in;
      if (i < live && idx[i] == r) {
        const float *s = dxc + (size_t)i++ * in;
        if (dx_beta == 0.0f)
          cpu_copy_run(d, s, in);
        else
          for (int j = 0; j < in; j++) d[j] += s[j];
      } else if (dx_beta == 0.0f) {
        memset(d, 0, sizeof(float) * (size_t)in);
      }
    }
  }
  if (dW) {
    gather_rows(xc, x, idx, live, in);
    gemm(true, false, in, nout, live, 1.0f, xc, in, dYc, nout, dW_beta, dW, nout);
  }
  arena_release(dYc);
}
