/* cases_elementwise.c — the elementwise family (cuda/elementwise.cu) against the CPU kernels:
 * broadcast binary ops in every stride pattern, and each unary op. Shapes: 1, 31, 33, primes
 * and the labs' own (a (64, 10, 32) activation plus a (32) bias, lab06's shape). */
#include "cuda_check.h"

/* (a shape, b shape) pairs: same shape, row broadcast, column broadcast, scalar, both ways */
static const int bin_shapes[][2][3] = {
    {{1, 1, 1}, {1, 1, 1}},    {{1, 1, 31}, {1, 1, 31}},  {{1, 33, 31}, {1, 1, 31}},
    {{1, 33, 31}, {1, 33, 1}}, {{1, 7, 1}, {1, 1, 13}},   {{3, 5, 7}, {1, 5, 1}},
    {{64, 10, 32}, {1, 1, 32}}, {{2, 1, 37}, {1, 41, 1}}, {{1, 1, 1}, {5, 3, 2}},
    {{2, 1, 600}, {1, 1, 600}}, /* a b of 600 outgrows a capped grid (div's gradient of b) */
};
enum { N_BIN = sizeof bin_shapes / sizeof bin_shapes[0] };

static Tensor *binary_case(CcRun *r, Tensor *(*op)(Tensor *, Tensor *), bool positive_b) {
  const int *sa = bin_shapes[r->variant][0], *sb = bin_shapes[r->variant][1];
  cc_shape(r, "(%d, %d, %d) . (%d, %d, %d)", sa[0], sa[1], sa[2], sb[0], sb[1], sb[2]);
  Tensor *a = cc_input(r, 3, sa, 11, -2, 2, true);
  /* b away from 0 for division, so 1/b^2 stays moderate */
  Tensor *b = cc_input(r, 3, sb, 12, positive_b ? 0.5f : -2, 2, true);
  return op(a, b);
}
static Tensor *run_add(CcRun *r) { return binary_case(r, t_add, false); }
static Tensor *run_sub(CcRun *r) { return binary_case(r, t_sub, false); }
static Tensor *run_mul(CcRun *r) { return binary_case(r, t_mul, false); }
static Tensor *run_div(CcRun *r) { return binary_case(r, t_div, true); }

static const int un_sizes[] = {1, 31, 33, 997, 64 * 10 * 32};
enum { N_UN = sizeof un_sizes / sizeof un_sizes[0] };
static Tensor *unary_case(CcRun *r, Tensor *(*op)(Tensor *), float lo, float hi) {
  int n = un_sizes[r->variant];
  cc_shape(r, "(%d)", n);
  return op(cc_input(r, 1, &n, 21, lo, hi, true));
}
static Tensor *scale3(Tensor *x) { return t_scale(x, -3.0f); }
static Tensor *add3(Tensor *x) { return t_add_scalar(x, 3.0f); }
static Tensor *run_scale(CcRun *r) { return unary_case(r, scale3, -2, 2); }
static Tensor *run_add_scalar(CcRun *r) { return unary_case(r, add3, -2, 2); }
static Tensor *run_exp(CcRun *r) { return unary_case(r, t_exp, -4, 4); }
static Tensor *run_log(CcRun *r) { return unary_case(r, t_log, 0.1f, 4); }
static Tensor *run_square(CcRun *r) { return unary_case(r, t_square, -2, 2); }
static Tensor *run_tanh(CcRun *r) { return unary_case(r, t_tanh, -5, 5); }
static Tensor *run_sigmoid(CcRun *r) { return unary_case(r, t_sigmoid, -8, 8); }
static Tensor *run_relu(CcRun *r) { return unary_case(r, t_relu, -2, 2); }
static Tensor *run_gelu(CcRun *r) { return unary_case(r, t_gelu, -5, 5); }

/* fill and acc, called through the table directly: the ops reach them only at sizes of one
 * (the loss's seed gradient) or through the MLP's recompute */
static const int fill_sizes[] = {1, 33, 5000};
enum { N_FILL = sizeof fill_sizes / sizeof fill_sizes[0] };
static Tensor *run_fill(CcRun *r) {
  int n = fill_sizes[r->variant];
  cc_shape(r, "(%d)", n);
  Tensor *x = cc_input(r, 1, &n, 31, -1, 1, false);
  KERNEL(r->dev, fill, x->data, 2.5f, (long)n);
  return x;
}
static Tensor *run_acc(CcRun *r) {
  int n = fill_sizes[r->variant];
  cc_shape(r, "(%d)", n);
  Tensor *dst = cc_input(r, 1, &n, 32, -1, 1, false), *src = cc_input(r, 1, &n, 33, -1, 1, false);
  KERNEL(r->dev, acc, dst->data, src->data, (long)n);
  return dst;
}

/* Tolerances: float arithmetic on both sides; the differences are the CPU's fast exp/tanh
 * approximations (a few ulps) and the order of the broadcast gradient's sums. */
#define EW_WHY "same float operations; the CPU sums repeated gradients in double, the GPU in float"
#define UN_WHY "the CPU's fast_expf/tanhf/erfc fits are within a few ulps of CUDA's functions"
const CcCase cases_elementwise[] = {
    {"add", N_BIN, run_add, 1e-5f, EW_WHY},
    {"sub", N_BIN, run_sub, 1e-5f, EW_WHY},
    {"mul", N_BIN, run_mul, 1e-5f, EW_WHY},
    {"div", N_BIN, run_div, 1e-5f, EW_WHY},
    {"scale", N_UN, run_scale, 1e-6f, UN_WHY},
    {"add_scalar", N_UN, run_add_scalar, 1e-6f, UN_WHY},
    {"exp", N_UN, run_exp, 1e-5f, UN_WHY},
    {"log", N_UN, run_log, 1e-5f, UN_WHY},
    {"square", N_UN, run_square, 1e-6f, UN_WHY},
    {"tanh", N_UN, run_tanh, 1e-5f, UN_WHY},
    {"sigmoid", N_UN, run_sigmoid, 1e-5f, UN_WHY},
    {"relu", N_UN, run_relu, 1e-6f, UN_WHY},
    {"gelu", N_UN, run_gelu, 1e-5f, UN_WHY},
    {"fill (the table's entry)", N_FILL, run_fill, 0.0f, "a store: exact"},
    {"acc (the table's entry)", N_FILL, run_acc, 0.0f, "one float add per element: exact"},
    {0},
};
