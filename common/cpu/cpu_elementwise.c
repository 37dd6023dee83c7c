/* cpu_elementwise.c — the CPU kernels of the elementwise ops (ops/elementwise.c): broadcast
 * binary ops walked row by row along a Broadcast plan, and the unary ops and activations.
 * Within a row each operand steps by 1, or by 0 when it is repeated along the row, so the
 * inner loops are index-free and vectorize. */
#include <math.h>
#include <string.h>

#include "../fastmath.h"
#include "kernels.h"

/* Advance the operand offsets to the next row: an odometer over the outer dims. */
static void next_row(const Broadcast *bc, long idx[T_MAXDIM], long off[2]) {
  for (int k = 1; k < bc->nd; k++) {
    off[ARG_A] += bc->stride[ARG_A][k];
    off[ARG_B] += bc->stride[ARG_B][k];
    if (++idx[k] < bc->len[k]) return;
    idx[k] = 0;
    off[ARG_A] -= bc->stride[ARG_A][k] * bc->len[k];
    off[ARG_B] -= bc->stride[ARG_B][k] * bc->len[k];
  }
}

/* ---------- forward row kernels ---------- */
/* out[j] = x OP y over one row, where x steps through a by ia and y through b by ib (1 or 0).
 * One loop per stride pattern, so the compiler sees unit-stride loops it can vectorize. */
typedef void (*RowKernel)(float *restrict out, const float *a, int ia, const float *b, int ib,
                          long n);

#define DEFINE_ROW_KERNEL(name, EXPR)                                                          \
  static void name(float *restrict out, const float *a, int ia, const float *b, int ib,        \
                   long n) {                                                                   \
    if (ia && ib) {                                                                            \
      for (long j = 0; j < n; j++) {                                                           \
        float x = a[j], y = b[j];                                                              \
        out[j] = (EXPR);                                                                       \
      }                                                                                        \
    } else if (ia) {                                                                           \
      const float y = b[0];                                                                    \
      for (long j = 0; j < n; j++) {                                                           \
        float x = a[j];                                                                        \
        out[j] = (EXPR);                                                                       \
      }                                                                                        \
    } else if (ib) {                                                                           \
      const float x = a[0];                                                                    \
      for (long j = 0; j < n; j++) {                                                           \
        float y = b[j];                                                                        \
        out[j] = (EXPR);                                                                       \
      }                                                                                        \
    } else { /* only for a one-element output */                                               \
      const float x = a[0], y = b[0];                                                          \
      for (long j = 0; j < n; j++) out[j] = (EXPR);                                            \
    }                                                                                          \
  }

DEFINE_ROW_KERNEL(row_add, x + y)
DEFINE_ROW_KERNEL(row_sub, x - y)
DEFINE_ROW_KERNEL(row_mul, x * y)
DEFINE_ROW_KERNEL(row_div, x / y)

void cpu_binary(BinaryOp op, const Broadcast *bc, const float *a, const float *b, float *out) {
  static const RowKernel kernels[] = {row_add, row_sub, row_mul, row_div};
  RowKernel kernel = kernels[op];
  const long n = bc->len[0];
  const int ia = (int)bc->stride[ARG_A][0], ib = (int)bc->stride[ARG_B][0];
  long idx[T_MAXDIM] = {0}, off[2] = {0, 0};
  for (long r = 0; r < bc->rows; r++) {
    kernel(out + r * n, a + off[ARG_A], ia, b + off[ARG_B], ib, n);
    next_row(bc, idx, off);
  }
}

/* ---------- backward: sum the gradient back over repeated dims ---------- */

/* sum_j g[j] * y[j] over one row (y NULL: sum_j g[j]), in double. Eight independent partial
 * sums let the compiler vectorize; one running sum would be a single long dependency chain
 * (several times slower, since without -ffast-math it may not reorder the additions). */
static double row_sum(const float *g, const float *y, long n) {
  double lane[8] = {0};
  long j = 0;
  if (y) {
    for (; j + 8 <= n; j += 8)
      for (int k = 0; k < 8; k++) lane[k] += g[j + k] * y[j + k];
  } else {
    for (; j + 8 <= n; j += 8)
      for (int k = 0; k < 8; k++) lane[k] += g[j + k];
  }
  double acc = 0;
  for (int k = 0; k < 8; k++) acc += lane[k];
  for (; j < n; j++) acc += y ? g[j] * y[j] : g[j];
  return acc;
}

/* gx += scale * g * y, summed over the dims operand x was repeated along. g has the output's
 * shape; y is the other operand's data (walked with its strides), or NULL for y = 1. With
 * store, gx = ... instead: only for an operand of the output's size, whose every element the
 * walk then visits exactly once (see grad_of in ops/elementwise.c). */
void cpu_binary_grad(const Broadcast *bc, int x, float *gx, const float *g, const float *y,
                     float scale, bool store) {
  const int other = 1 - x;
  const long n = bc->len[0];
  const int ix = (int)bc->stride[x][0], iy = y ? (int)bc->stride[other][0] : 0;
  const float one = 1.0f;
  long idx[T_MAXDIM] = {0}, off[2] = {0, 0};
  for (long r = 0; r < bc->rows; r++) {
    float *gxr = gx + off[x];
    const float *gr = g + r * n, *yr = y ? y + off[other] : &one;
    if (ix && iy) {
      if (store)
        for (long j = 0; j < n; j++) gxr[j] = scale * gr[j] * yr[j];
      else
        for (long j = 0; j < n; j++) gxr[j] += scale * gr[j] * yr[j];
    } else if (ix) {
      const float s = scale * yr[0];
      if (store)
        for (long j = 0; j < n; j++) gxr[j] = s * gr[j];
      else
        for (long j = 0; j < n; j++) gxr[j] += s * gr[j];
    } else { /* x repeats along the row: reduce the row to one number */
      double acc = iy ? row_sum(gr, yr, n) : yr[0] * row_sum(gr, NULL, n);
      gxr[0] = (store ? 0.0f : gxr[0]) + (float)(scale * acc);
    }
    next_row(bc, idx, off);
  }
}

/* gb -= ga_sum / b^2: the rest of t_div's gradient for b (ops/elementwise.c). */
void cpu_div_grad_b(float *gb, const float *ga_sum, const float *b, long n) {
  for (long k = 0; k < n; k++) gb[k] -= ga_sum[k] / (b[k] * b[k]);
}

void cpu_fill(float *x, float v, long n) {
  for (long i = 0; i < n; i++) x[i] = v;
}

void cpu_acc(float *dst, const float *src, long n) {
  for (long i = 0; i < n; i++) dst[i] += src[i];
}

/* ---------- unary ops ---------- */
/* Each forward fills y (x's size); each backward adds g * dy/dx into gx, using the output y
 * where that is cheaper (exp, tanh, sigmoid, relu). fresh: gx was just allocated, store. */

/* GELU(x) = x Φ(x) with the standard normal CDF Φ(x) = (1 + erf(x/√2)) / 2 — the exact form
 * of torch.nn.GELU(), not the tanh approximation. Its derivative is Φ(x) + x φ(x), with the
 * normal density φ(x) = exp(-x²/2) / √(2π). */
#define GELU_INV_SQRT2 0.70710678118654752f
#define GELU_INV_SQRT_2PI 0.39894228040143268f
/* Elements above which GELU's loops are split over threads; if (parallel: ...), since a bare if
 * on `parallel for simd` would also switch off vectorization below the threshold. */
#define GELU_PAR_MIN 65536

/* Phi(x), the standard normal CDF, as 1/2 erfc(-x / sqrt 2) with the erfc of Numerical
 * Recipes (Chebyshev fit, relative error < 1.2e-7 for all arguments): the left tail keeps its
 * relative accuracy instead of cancelling in 1 + erf. */
static inline float gelu_cdf(float x) {
  float z = fabsf(x) * GELU_INV_SQRT2;
  float t = 1.0f / (1.0f + 0.5f * z);
  float e = t * fast_expf(-z * z - 1.26551223f +
                         t * (1.00002368f + t * (0.37409196f + t * (0.09678418f +
                         t * (-0.18628806f + t * (0.27886807f + t * (-1.13520398f +
                         t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f)))))))));
  return fm_select(x < 0, 0.5f * e, 1.0f - 0.5f * e); /* a blend, not a branch: see fastmath.h */
}

/* d(x Phi(x))/dx = Phi(x) + x phi(x) */
static inline float gelu_grad(float x) {
  return gelu_cdf(x) + x * GELU_INV_SQRT_2PI * fast_expf(-0.5f * x * x);
}

/* The body of a unary backward: gx gets EXPR (of i, g = the output gradient, y = the output,
 * x = the input) for every element; stored when nothing reached it before, added otherwise
 * (two loops, so the store never reads the uninitialized buffer). */
#define UNARY_BACKWARD(EXPR)                                                                   \
  do {                                                                                         \
    if (fresh)                                                                                 \
      for (long i = 0; i < n; i++) ga[i] = (EXPR);                                             \
    else                                                                                       \
      for (long i = 0; i < n; i++) ga[i] += (EXPR);                                            \
  } while (0)

void cpu_unary(UnaryOp op, float s, const float *x, float *y, long n) {
  switch (op) {
  case UN_SCALE:
    for (long i = 0; i < n; i++) y[i] = x[i] * s;
    break;
  case UN_ADD_SCALAR:
    for (long i = 0; i < n; i++) y[i] = x[i] + s;
    break;
  case UN_EXP:
    for (long i = 0; i < n; i++) y[i] = expf(x[i]);
    break;
  case UN_LOG:
    for (long i = 0; i < n; i++) y[i] = logf(x[i]);
    break;
  case UN_SQUARE:
    for (long i = 0; i < n; i++) y[i] = x[i] * x[i];
    break;
  case UN_TANH:
    /* fast_tanhf: within a few ulps of tanhf, and the loop vectorizes (fastmath.h) */
    for (long i = 0; i < n; i++) y[i] = fast_tanhf(x[i]);
    break;
  case UN_SIGMOID:
    /* fast_sigmoidf: within a few ulps of 1 / (1 + expf(-x)), a clean 0 for very negative x
     * and 1 for large x, and the loop vectorizes (fastmath.h) */
    for (long i = 0; i < n; i++) y[i] = fast_sigmoidf(x[i]);
    break;
  case UN_RELU:
    for (long i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    break;
  case UN_GELU:
#pragma omp parallel for simd schedule(static) if (parallel: n >= GELU_PAR_MIN)
    for (long i = 0; i < n; i++) y[i] = x[i] * gelu_cdf(x[i]); /* hot */
    break;
  case UN_RECIPROCAL:
    for (long i = 0; i < n; i++) y[i] = 1.0f / x[i];
    break;
  }
}

void cpu_unary_grad(UnaryOp op, float s, const float *g, const float *x, const float *y,
                    float *ga, long n, bool fresh) {
  switch (op) {
  case UN_SCALE: /* d(s x) = s */
    UNARY_BACKWARD(s * g[i]);
    break;
  case UN_ADD_SCALAR: /* d(x + s) = 1 */
    UNARY_BACKWARD(g[i]);
    break;
  case UN_EXP: /* d(e^x) = e^x = y */
    UNARY_BACKWARD(g[i] * y[i]);
    break;
  case UN_LOG: /* d(log x) = 1/x */
    UNARY_BACKWARD(g[i] / x[i]);
    break;
  case UN_SQUARE: /* d(x^2) = 2x */
    UNARY_BACKWARD(2.0f * x[i] * g[i]);
    break;
  case UN_TANH: /* d(tanh x) = 1 - y^2 */
    UNARY_BACKWARD(g[i] * (1.0f - y[i] * y[i]));
    break;
  case UN_SIGMOID: /* d(sigmoid x) = y (1 - y) */
    UNARY_BACKWARD(g[i] * y[i] * (1.0f - y[i]));
    break;
  case UN_RELU: /* 1 where the output is positive, else 0 */
    UNARY_BACKWARD(y[i] > 0.0f ? g[i] : 0.0f);
    break;
  case UN_GELU:
    if (fresh) { /* ga is uninitialized: store, never read it */
#pragma omp parallel for simd schedule(static) if (parallel: n >= GELU_PAR_MIN)
      for (long i = 0; i < n; i++)
        ga[i] = g[i] * gelu_grad(x[i]);
    } else {
#pragma omp parallel for simd schedule(static) if (parallel: n >= GELU_PAR_MIN)
      for (long i = 0; i < n; i++)
        ga[i] += g[i] * gelu_grad(x[i]);
    }
    break;
  case UN_RECIPROCAL: /* forward only */
    break;
  }
}
