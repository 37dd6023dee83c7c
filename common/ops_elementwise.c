/* ops_elementwise.c — elementwise ops: the four arithmetic ops with NumPy broadcasting, scalar
 * ops and activations, each with its backward.
 *
 * Broadcasting. Shapes are aligned from the right; in each dim the sizes must be equal or one
 * of them 1 (a missing leading dim counts as 1), and the output takes the larger size.
 * Rather than computing an index per element, an op first builds a Broadcast plan: it drops
 * the output dims of size 1, merges neighbouring dims that both operands walk contiguously (or
 * both repeat), and so views the output as `rows` rows of `n` contiguous elements. Within a
 * row each operand steps by 1, or by 0 when it is repeated along the row; between rows an
 * odometer over at most three outer dims moves each operand by its own strides. The common
 * cases collapse to plain loops:
 *   same shape          (B,T,H) + (B,T,H)  one row of B*T*H, both operands step 1
 *   scalar operand      (B,T,H) * (1)      one row, the scalar steps 0
 *   leading-dim repeat  (B,T,H) + (H)      B*T rows of H; b starts every row at offset 0
 *   e.g. attention      (B,Q,1,H) + (B,1,K,H)  B*Q*K rows of H
 * so the inner loops are index-free and vectorize.
 *
 * Backward. The gradient of a broadcast input is the output gradient summed over the dims the
 * input was repeated along; accumulate_grad() walks the same plan to do that sum. */
#include <math.h>

#include "fastmath.h"
#include "ops.h"

static void check_cpu(const char *op, const Tensor *t) {
  if (!t) tensor_error(op, "an input is NULL (did an unfinished exercise return NULL?)");
  if (t->device != DEV_CPU)
    tensor_error(op, "got a CUDA tensor, but this build has no CUDA kernel for %s; "
                 "run with --device cpu", op);
}

/* ---------- the broadcast plan ---------- */

enum { ARG_A = 0, ARG_B = 1 }; /* operand index into Broadcast.stride */

typedef struct {
  int ndim, shape[T_MAXDIM]; /* the broadcast output shape */
  int nd;                    /* merged dims; dim 0 is the contiguous row, 1..nd-1 the outer */
  long len[T_MAXDIM];        /* their sizes: len[0] = n, the row length */
  long stride[2][T_MAXDIM];  /* per operand: elements to step per index, 0 where repeated */
  long rows;                 /* product of the outer lens */
} Broadcast;

static Broadcast broadcast_plan(const char *op, const Tensor *a, const Tensor *b) {
  Broadcast bc = {0};
  bc.ndim = a->ndim > b->ndim ? a->ndim : b->ndim;
  long step_a = 1, step_b = 1; /* row-major strides of a and b, built from the right */
  for (int d = bc.ndim - 1; d >= 0; d--) {
    int ia = d - (bc.ndim - a->ndim), ib = d - (bc.ndim - b->ndim);
    int na = ia >= 0 ? a->shape[ia] : 1, nb = ib >= 0 ? b->shape[ib] : 1;
    if (na != nb && na != 1 && nb != 1) {
      char s1[64], s2[64];
      tensor_error(op, "shapes %s and %s do not broadcast: aligned from the right, sizes %d "
                   "and %d differ and neither is 1; reshape an input (t_view) so that each "
                   "pair of sizes is equal or one of them is 1",
                   shape_str(a, s1, sizeof s1), shape_str(b, s2, sizeof s2), na, nb);
    }
    int n = na == 1 ? nb : na;
    bc.shape[d] = n;
    long sa = na == 1 ? 0 : step_a, sb = nb == 1 ? 0 : step_b;
    step_a *= na;
    step_b *= nb;
    if (n == 1) continue; /* a size-1 output dim moves nothing */
    int k = bc.nd - 1;    /* the merged dim just inside this one */
    bool continues = k >= 0 && sa == bc.stride[ARG_A][k] * bc.len[k] &&
                     sb == bc.stride[ARG_B][k] * bc.len[k];
    if (continues) {
      bc.len[k] *= n; /* both operands continue the inner dim's walk: merge */
    } else {
      bc.len[bc.nd] = n;
      bc.stride[ARG_A][bc.nd] = sa;
      bc.stride[ARG_B][bc.nd] = sb;
      bc.nd++;
    }
  }
  if (bc.nd == 0) { /* a one-element output: a single row of one */
    bc.len[0] = 1;
    bc.nd = 1;
  }
  bc.rows = 1;
  for (int k = 1; k < bc.nd; k++) bc.rows *= bc.len[k];
  return bc;
}

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

static Tensor *binary_forward(const char *op, RowKernel kernel, BackwardFn backward, Tensor *a,
                              Tensor *b) {
  check_cpu(op, a);
  check_cpu(op, b);
  Broadcast bc = broadcast_plan(op, a, b);
  Tensor *out = tensor_new(bc.ndim, bc.shape);
  out->name = op;
  const long n = bc.len[0];
  const int ia = (int)bc.stride[ARG_A][0], ib = (int)bc.stride[ARG_B][0];
  long idx[T_MAXDIM] = {0}, off[2] = {0, 0};
  for (long r = 0; r < bc.rows; r++) {
    kernel(out->data + r * n, a->data + off[ARG_A], ia, b->data + off[ARG_B], ib, n);
    next_row(&bc, idx, off);
  }
  if (ag_needs_grad(a, b, NULL)) ag_record(out, backward, a, b, NULL);
  return out;
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
 * walk then visits exactly once (see grad_of). */
static void accumulate_grad(const Broadcast *bc, int x, float *gx, const float *g,
                            const float *y, float scale, bool store) {
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

/* The gradient buffer of operand x. An operand of the output's size is not broadcast, so its
 * gradient may be stored rather than added when nothing reached it yet (*store); a broadcast
 * one sums several output elements into each of its own and needs a zeroed buffer. The
 * gradient of a is fetched (and so allocated) before b's: with t_add(x, x), b's then adds. */
static float *grad_of(Tensor *x, const Tensor *out, bool *store) {
  if (x->size == out->size) return tensor_grad_fresh(x, store);
  *store = false;
  return tensor_grad(x);
}

/* a +- b: the gradient reaches a as it is and b with sign sb. */
static void add_sub_backward(Tensor *out, const char *op, float sb) {
  Tensor *a = out->in[0], *b = out->in[1];
  Broadcast bc = broadcast_plan(op, a, b);
  bool store;
  if (a->requires_grad) {
    float *ga = grad_of(a, out, &store);
    accumulate_grad(&bc, ARG_A, ga, out->grad, NULL, 1.0f, store);
  }
  if (b->requires_grad) {
    float *gb = grad_of(b, out, &store);
    accumulate_grad(&bc, ARG_B, gb, out->grad, NULL, sb, store);
  }
}

static void add_backward(Tensor *out) { add_sub_backward(out, "t_add", 1.0f); }
static void sub_backward(Tensor *out) { add_sub_backward(out, "t_sub", -1.0f); }

static void mul_backward(Tensor *out) {
  Tensor *a = out->in[0], *b = out->in[1];
  Broadcast bc = broadcast_plan("t_mul", a, b);
  bool store;
  if (a->requires_grad) {
    float *ga = grad_of(a, out, &store);
    accumulate_grad(&bc, ARG_A, ga, out->grad, b->data, 1.0f, store);
  }
  if (b->requires_grad) {
    float *gb = grad_of(b, out, &store);
    accumulate_grad(&bc, ARG_B, gb, out->grad, a->data, 1.0f, store);
  }
}

/* d(a/b)/da = 1/b; d(a/b)/db = -a/b^2. Within one element of b's gradient b is constant, so
 * grad_b[k] -= (sum of g * a over what b[k] touched) / b[k]^2: one scratch of b's size. */
static void div_backward(Tensor *out) {
  Tensor *a = out->in[0], *b = out->in[1];
  Broadcast bc = broadcast_plan("t_div", a, b);
  if (a->requires_grad) {
    float *inv_b = arena_alloc(sizeof(float) * (size_t)b->size);
    for (long k = 0; k < b->size; k++) inv_b[k] = 1.0f / b->data[k];
    bool store;
    float *ga = grad_of(a, out, &store);
    accumulate_grad(&bc, ARG_A, ga, out->grad, inv_b, 1.0f, store);
  }
  if (b->requires_grad) {
    float *ga_sum = arena_calloc(sizeof(float) * (size_t)b->size);
    accumulate_grad(&bc, ARG_B, ga_sum, out->grad, a->data, 1.0f, false);
    float *gb = tensor_grad(b);
    for (long k = 0; k < b->size; k++) gb[k] -= ga_sum[k] / (b->data[k] * b->data[k]);
  }
}

Tensor *t_add(Tensor *a, Tensor *b) { return binary_forward("t_add", row_add, add_backward, a, b); }
Tensor *t_sub(Tensor *a, Tensor *b) { return binary_forward("t_sub", row_sub, sub_backward, a, b); }
Tensor *t_mul(Tensor *a, Tensor *b) { return binary_forward("t_mul", row_mul, mul_backward, a, b); }
Tensor *t_div(Tensor *a, Tensor *b) { return binary_forward("t_div", row_div, div_backward, a, b); }

/* ---------- unary ops ---------- */
/* Each forward fills an output of a's shape; each backward adds g * dy/dx into a's gradient,
 * using the output data where that is cheaper (exp, tanh, sigmoid, relu). A unary op is
 * recorded only when a requires grad, so its backward need not check. */

static Tensor *unary_new(const char *op, Tensor *a) {
  check_cpu(op, a);
  Tensor *out = tensor_new(a->ndim, a->shape);
  out->name = op;
  return out;
}

static Tensor *unary_record(Tensor *out, Tensor *a, BackwardFn backward) {
  if (ag_needs_grad(a, NULL, NULL)) ag_record(out, backward, a, NULL, NULL);
  return out;
}

/* The body of a unary backward: a's gradient gets EXPR (of i, g = the output gradient,
 * y = the output, x = the input) for every element; stored when nothing reached a before,
 * added otherwise (two loops, so the store never reads the uninitialized buffer). */
#define UNARY_BACKWARD(out, EXPR)                                                              \
  do {                                                                                         \
    bool fresh_;                                                                               \
    float *ga = tensor_grad_fresh((out)->in[0], &fresh_);                                      \
    const float *g = (out)->grad, *y = (out)->data, *x = (out)->in[0]->data;                   \
    const long n_ = (out)->size;                                                               \
    (void)y, (void)x;                                                                          \
    if (fresh_)                                                                                \
      for (long i = 0; i < n_; i++) ga[i] = (EXPR);                                            \
    else                                                                                       \
      for (long i = 0; i < n_; i++) ga[i] += (EXPR);                                           \
  } while (0)

static void scale_backward(Tensor *out) { /* d(s x) = s */
  const float s = out->farg[0];
  UNARY_BACKWARD(out, s * g[i]);
}

Tensor *t_scale(Tensor *a, float s) {
  Tensor *out = unary_new("t_scale", a);
  for (long i = 0; i < a->size; i++) out->data[i] = a->data[i] * s;
  out->farg[0] = s;
  return unary_record(out, a, scale_backward);
}

Tensor *t_neg(Tensor *a) {
  Tensor *out = unary_new("t_neg", a);
  for (long i = 0; i < a->size; i++) out->data[i] = -a->data[i];
  out->farg[0] = -1.0f;
  return unary_record(out, a, scale_backward);
}

static void add_scalar_backward(Tensor *out) { /* d(x + s) = 1 */
  UNARY_BACKWARD(out, g[i]);
}

Tensor *t_add_scalar(Tensor *a, float s) {
  Tensor *out = unary_new("t_add_scalar", a);
  for (long i = 0; i < a->size; i++) out->data[i] = a->data[i] + s;
  return unary_record(out, a, add_scalar_backward);
}

static void exp_backward(Tensor *out) { /* d(e^x) = e^x = y */
  UNARY_BACKWARD(out, g[i] * y[i]);
}

Tensor *t_exp(Tensor *a) {
  Tensor *out = unary_new("t_exp", a);
  for (long i = 0; i < a->size; i++) out->data[i] = expf(a->data[i]);
  return unary_record(out, a, exp_backward);
}

static void log_backward(Tensor *out) { /* d(log x) = 1/x */
  UNARY_BACKWARD(out, g[i] / x[i]);
}

Tensor *t_log(Tensor *a) {
  Tensor *out = unary_new("t_log", a);
  for (long i = 0; i < a->size; i++) out->data[i] = logf(a->data[i]);
  return unary_record(out, a, log_backward);
}

static void square_backward(Tensor *out) { /* d(x^2) = 2x */
  UNARY_BACKWARD(out, 2.0f * x[i] * g[i]);
}

Tensor *t_square(Tensor *a) {
  Tensor *out = unary_new("t_square", a);
  for (long i = 0; i < a->size; i++) out->data[i] = a->data[i] * a->data[i];
  return unary_record(out, a, square_backward);
}

static void tanh_backward(Tensor *out) { /* d(tanh x) = 1 - y^2 */
  UNARY_BACKWARD(out, g[i] * (1.0f - y[i] * y[i]));
}

Tensor *t_tanh(Tensor *a) {
  Tensor *out = unary_new("t_tanh", a);
  /* fast_tanhf: within a few ulps of tanhf, and the loop vectorizes (fastmath.h) */
  const float *x = a->data;
  float *y = out->data;
  for (long i = 0; i < a->size; i++) y[i] = fast_tanhf(x[i]);
  return unary_record(out, a, tanh_backward);
}

static void sigmoid_backward(Tensor *out) { /* d(sigmoid x) = y (1 - y) */
  UNARY_BACKWARD(out, g[i] * y[i] * (1.0f - y[i]));
}

Tensor *t_sigmoid(Tensor *a) {
  Tensor *out = unary_new("t_sigmoid", a);
  /* fast_sigmoidf: within a few ulps of 1 / (1 + expf(-x)), a clean 0 for very negative x and
   * 1 for large x, and the loop vectorizes (fastmath.h) */
  const float *x = a->data;
  float *y = out->data;
  for (long i = 0; i < a->size; i++) y[i] = fast_sigmoidf(x[i]);
  return unary_record(out, a, sigmoid_backward);
}

static void relu_backward(Tensor *out) { /* 1 where the output is positive, else 0 */
  UNARY_BACKWARD(out, y[i] > 0.0f ? g[i] : 0.0f);
}

Tensor *t_relu(Tensor *a) {
  Tensor *out = unary_new("t_relu", a);
  for (long i = 0; i < a->size; i++) out->data[i] = a->data[i] > 0.0f ? a->data[i] : 0.0f;
  return unary_record(out, a, relu_backward);
}

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

static void gelu_backward(Tensor *out) {
  bool fresh;
  float *ga = tensor_grad_fresh(out->in[0], &fresh);
  const float *g = out->grad, *x = out->in[0]->data;
  if (fresh) { /* ga is uninitialized: store, never read it */
#pragma omp parallel for simd schedule(static) if (parallel: out->size >= GELU_PAR_MIN)
    for (long i = 0; i < out->size; i++)
      ga[i] = g[i] * gelu_grad(x[i]);
  } else {
#pragma omp parallel for simd schedule(static) if (parallel: out->size >= GELU_PAR_MIN)
    for (long i = 0; i < out->size; i++)
      ga[i] += g[i] * gelu_grad(x[i]);
  }
}

Tensor *t_gelu(Tensor *a) {
  Tensor *out = unary_new("t_gelu", a);
  const float *x = a->data;
  float *y = out->data;
#pragma omp parallel for simd schedule(static) if (parallel: a->size >= GELU_PAR_MIN)
  for (long i = 0; i < a->size; i++) y[i] = x[i] * gelu_cdf(x[i]); /* hot */
  return unary_record(out, a, gelu_backward);
}
