/* Tests of the two gradient-buffer shortcuts of the autograd core (tensor.h):
 *  - tensor_grad_fresh: a backward that is first to reach a tensor stores its gradient into an
 *    uninitialized buffer instead of adding into a zeroed one; a later one adds;
 *  - ag_record_view: a reshape's gradient buffer is its input's own.
 * The finite-difference checks elsewhere run mostly the store path (every input is fresh). Here
 * each op's input gradient is computed three ways, on an arena poisoned with NaN so that a
 * store that misses an element (or an add into a buffer nobody zeroed) shows:
 *   G  = d/dx sum(R * f(x))                      (the store path)
 *   G1 = d/dx [sum(R * f(x)) + sum(C * x)]      the C term reaches x first: f's backward adds
 *   G2 = d/dx [sum(R * f(x)) + sum(R * f(x))]   f twice: the first push stores, the second adds
 * and G1 must equal G + C, G2 must equal 2 G. */
#include <stdlib.h>

#include "../../common/ops.h"
#include "../../common/rng.h"
#include "../test.h"

typedef Tensor *(*OpFn)(Tensor *x, void *ctx);

/* Fill the arena's first megabytes with NaN, then rewind: the next step's buffers start as NaN. */
static void poison_arena(void) {
  ag_step_reset();
  const long n = 1L << 20; /* 4 MB: more than any tensor of these tests */
  float *p = arena_alloc(sizeof(float) * (size_t)n);
  for (long i = 0; i < n; i++) p[i] = NAN;
  ag_step_reset();
}

/* A tensor of fixed pseudo-random values in [lo, hi) (its own generator: g_rng is left alone). */
static Tensor *fixed(int ndim, const int *shape, float lo, float hi, uint64_t seed) {
  Rng r;
  rng_init(&r, seed);
  Tensor *t = tensor_new(ndim, shape);
  for (long i = 0; i < t->size; i++) t->data[i] = rng_uniform(&r, lo, hi);
  return t;
}

/* sum(R * y), R fixed per output shape. */
static Tensor *weighted(Tensor *y) { return t_sum_all(t_mul(y, fixed(y->ndim, y->shape, -1, 1, 5))); }

/* x's gradient under `mode` (0: G, 1: G1, 2: G2 above), copied into dst (x->size floats). */
static void grad_of_mode(OpFn f, void *ctx, int ndim, const int *shape, float lo, float hi,
                         int mode, float *dst) {
  poison_arena();
  rng_seed(11); /* dropout draws the same mask in every mode */
  Tensor *x = fixed(ndim, shape, lo, hi, 3);
  x->requires_grad = true;
  Tensor *loss = weighted(f(x, ctx));
  if (mode == 1) /* recorded after f: its backward runs first and stores C into x's gradient */
    loss = t_add(loss, t_sum_all(t_mul(x, fixed(ndim, shape, -1, 1, 7))));
  if (mode == 2) {
    rng_seed(11);
    loss = t_add(loss, weighted(f(x, ctx)));
  }
  ag_backward(loss);
  for (long i = 0; i < x->size; i++) dst[i] = x->grad[i];
  ag_step_reset();
}

static void check_op(const char *name, OpFn f, void *ctx, int ndim, const int *shape, float lo,
                     float hi) {
  long n = shape_numel(ndim, shape);
  float *G = malloc(sizeof(float) * (size_t)n), *G1 = malloc(sizeof(float) * (size_t)n);
  float *G2 = malloc(sizeof(float) * (size_t)n), *want = malloc(sizeof(float) * (size_t)n);
  grad_of_mode(f, ctx, ndim, shape, lo, hi, 0, G);
  grad_of_mode(f, ctx, ndim, shape, lo, hi, 1, G1);
  grad_of_mode(f, ctx, ndim, shape, lo, hi, 2, G2);
  Tensor *C = fixed(ndim, shape, -1, 1, 7);
  int before = test_failures();
  for (long i = 0; i < n; i++) want[i] = G[i] + C->data[i];
  /* one float rounding of the sum, or a GEMM that adds its k-slices in another order */
  CHECK_CLOSE(G1, want, n, 1e-6, 1e-6);
  for (long i = 0; i < n; i++) want[i] = 2 * G[i];
  CHECK_CLOSE(G2, want, n, 1e-6, 1e-6);
  long nonfinite = 0;
  for (long i = 0; i < n; i++) nonfinite += !isfinite(G[i]);
  CHECK_INT(nonfinite, 0);
  if (test_failures() > before) test_fail(__FILE__, __LINE__, "in %s", name);
  free(G), free(G1), free(G2), free(want);
  ag_step_reset();
}

/* ---------- the ops, each a function of x alone ---------- */

static Tensor *op_add_same(Tensor *x, void *c) { return t_add(x, fixed(2, (int[]){3, 5}, -1, 1, 21)); }
static Tensor *op_add_rhs(Tensor *x, void *c) { return t_add(fixed(2, (int[]){3, 5}, -1, 1, 21), x); }
static Tensor *op_add_bcast(Tensor *x, void *c) { return t_add(x, fixed(2, (int[]){4, 5}, -1, 1, 21)); }
static Tensor *op_add_self(Tensor *x, void *c) { return t_add(x, x); }
static Tensor *op_sub(Tensor *x, void *c) { return t_sub(fixed(2, (int[]){3, 5}, -1, 1, 21), x); }
static Tensor *op_mul(Tensor *x, void *c) { return t_mul(x, fixed(2, (int[]){3, 5}, -1, 1, 21)); }
static Tensor *op_mul_bcast(Tensor *x, void *c) { return t_mul(fixed(3, (int[]){2, 3, 5}, -1, 1, 21), x); }
static Tensor *op_div(Tensor *x, void *c) { return t_div(x, fixed(2, (int[]){3, 5}, 1, 2, 21)); }
static Tensor *op_div_den(Tensor *x, void *c) { return t_div(fixed(2, (int[]){3, 5}, -1, 1, 21), x); }
static Tensor *op_scale(Tensor *x, void *c) { return t_scale(x, -1.5f); }
static Tensor *op_add_scalar(Tensor *x, void *c) { return t_add_scalar(x, 0.5f); }
static Tensor *op_neg(Tensor *x, void *c) { return t_neg(x); }
static Tensor *op_exp(Tensor *x, void *c) { return t_exp(x); }
static Tensor *op_log(Tensor *x, void *c) { return t_log(x); }
static Tensor *op_square(Tensor *x, void *c) { return t_square(x); }
static Tensor *op_tanh(Tensor *x, void *c) { return t_tanh(x); }
static Tensor *op_sigmoid(Tensor *x, void *c) { return t_sigmoid(x); }
static Tensor *op_relu(Tensor *x, void *c) { return t_relu(x); }
static Tensor *op_gelu(Tensor *x, void *c) { return t_gelu(x); }
static Tensor *op_dropout(Tensor *x, void *c) { return t_dropout(x, 0.3f, true); }
static Tensor *op_matmul_a(Tensor *x, void *c) { return t_matmul(x, fixed(2, (int[]){5, 4}, -1, 1, 21)); }
static Tensor *op_matmul_b(Tensor *x, void *c) { return t_matmul(fixed(2, (int[]){4, 3}, -1, 1, 21), x); }
static Tensor *op_bmm_a(Tensor *x, void *c) { return t_bmm(x, fixed(3, (int[]){2, 5, 4}, -1, 1, 21)); }
static Tensor *op_bmm_b(Tensor *x, void *c) { return t_bmm(fixed(3, (int[]){2, 4, 3}, -1, 1, 21), x); }
static Tensor *op_bmm_nt_a(Tensor *x, void *c) { return t_bmm_nt(x, fixed(3, (int[]){2, 4, 5}, -1, 1, 21)); }
static Tensor *op_bmm_nt_b(Tensor *x, void *c) { return t_bmm_nt(fixed(3, (int[]){2, 4, 5}, -1, 1, 21), x); }
static Tensor *op_bmm_nt_self(Tensor *x, void *c) { return t_bmm_nt(x, x); }
static Tensor *op_linear(Tensor *x, void *c) {
  return t_linear(x, fixed(2, (int[]){5, 4}, -1, 1, 21), fixed(1, (int[]){4}, -1, 1, 22));
}
static Tensor *op_softmax(Tensor *x, void *c) { return t_softmax(x); }
static Tensor *op_softmax_long(Tensor *x, void *c) { return t_softmax(x); }
static Tensor *op_log_softmax(Tensor *x, void *c) { return t_log_softmax(x); }
static Tensor *op_sequence_mask(Tensor *x, void *c) {
  return t_sequence_mask(x, tensor_from(1, (int[]){2}, (float[]){3, 1}), -7.0f);
}
static Tensor *op_cross_entropy(Tensor *x, void *c) { /* row 1 is padding (weight 0) */
  return t_cross_entropy(x, tensor_from(1, (int[]){3}, (float[]){4, 0, 2}),
                         tensor_from(1, (int[]){3}, (float[]){1, 0, 0.5f}));
}
static Tensor *op_layer_norm(Tensor *x, void *c) {
  return t_layer_norm(x, fixed(1, (int[]){20}, 0.5f, 1.5f, 21), fixed(1, (int[]){20}, -1, 1, 22),
                      1e-5f);
}
static Tensor *op_layer_norm_bare(Tensor *x, void *c) { return t_layer_norm(x, NULL, NULL, 1e-5f); }
static Tensor *op_permute(Tensor *x, void *c) { return t_permute(x, (int[]){0, 2, 1, 3}); }
static Tensor *op_permute_last(Tensor *x, void *c) { return t_permute(x, (int[]){3, 1, 0, 2}); }
static Tensor *op_transpose(Tensor *x, void *c) { return t_transpose(x, 0, 1); }
static Tensor *op_concat(Tensor *x, void *c) { return t_cat2(x, fixed(2, (int[]){3, 2}, -1, 1, 21), 1); }
static Tensor *op_concat_self(Tensor *x, void *c) { return t_cat2(x, x, 0); }
static Tensor *op_copy(Tensor *x, void *c) { return t_copy(x); }
static Tensor *op_sum_all(Tensor *x, void *c) { return t_sum_all(x); }
static Tensor *op_mean_all(Tensor *x, void *c) { return t_mean_all(x); }
static Tensor *op_reshape(Tensor *x, void *c) { return t_view(x, 5, 3); }
static Tensor *op_reshape_chain(Tensor *x, void *c) { /* a view of a view, then an op */
  return t_tanh(t_view(t_view(x, 15), 3, 5));
}

TEST(grad_fresh_store_and_add_paths) {
  const int s35[] = {3, 5}, s235[] = {2, 3, 5}, s45[] = {4, 5};
  const int s254[] = {2, 5, 4}, s245[] = {2, 4, 5}, s2x20[] = {2, 3, 20};
  const int s4d[] = {2, 3, 4, 8}, s4o[] = {2, 3, 4, 5};
  struct {
    const char *name;
    OpFn f;
    int ndim;
    const int *shape;
    float lo, hi;
  } cases[] = {
      {"t_add", op_add_same, 2, s35, -1, 1},
      {"t_add (x second)", op_add_rhs, 2, s35, -1, 1},
      {"t_add (x broadcast)", op_add_bcast, 1, s35 + 1, -1, 1},
      {"t_add(x, x)", op_add_self, 2, s35, -1, 1},
      {"t_sub", op_sub, 2, s35, -1, 1},
      {"t_mul", op_mul, 2, s35, -1, 1},
      {"t_mul (x broadcast)", op_mul_bcast, 2, s35, -1, 1},
      {"t_div", op_div, 2, s35, -1, 1},
      {"t_div (denominator)", op_div_den, 2, s35, 1, 2},
      {"t_scale", op_scale, 2, s35, -1, 1},
      {"t_add_scalar", op_add_scalar, 2, s35, -1, 1},
      {"t_neg", op_neg, 2, s35, -1, 1},
      {"t_exp", op_exp, 2, s35, -1, 1},
      {"t_log", op_log, 2, s35, 0.5f, 2},
      {"t_square", op_square, 2, s35, -1, 1},
      {"t_tanh", op_tanh, 2, s35, -2, 2},
      {"t_sigmoid", op_sigmoid, 2, s35, -2, 2},
      {"t_relu", op_relu, 2, s35, -1, 1},
      {"t_gelu", op_gelu, 2, s35, -2, 2},
      {"t_dropout", op_dropout, 3, s235, -1, 1},
      {"t_matmul (a)", op_matmul_a, 2, s35, -1, 1},
      {"t_matmul (b)", op_matmul_b, 2, s35, -1, 1},
      {"t_bmm (a)", op_bmm_a, 3, s235, -1, 1},
      {"t_bmm (b)", op_bmm_b, 3, s235, -1, 1},
      {"t_bmm_nt (a)", op_bmm_nt_a, 3, s235, -1, 1},
      {"t_bmm_nt (b)", op_bmm_nt_b, 3, s235, -1, 1},
      {"t_bmm_nt(x, x)", op_bmm_nt_self, 3, s254, -1, 1},
      {"t_linear", op_linear, 3, s235, -1, 1},
      {"t_softmax (short rows)", op_softmax, 3, s235, -2, 2},
      {"t_softmax (long rows)", op_softmax_long, 3, s2x20, -2, 2},
      {"t_log_softmax", op_log_softmax, 2, s35, -2, 2},
      {"t_sequence_mask", op_sequence_mask, 3, s235, -1, 1},
      {"t_cross_entropy", op_cross_entropy, 2, s35, -2, 2},
      {"t_layer_norm", op_layer_norm, 3, s2x20, -2, 2},
      {"t_layer_norm (no gamma, beta)", op_layer_norm_bare, 3, s245, -2, 2},
      {"t_permute (0,2,1,3)", op_permute, 4, s4d, -1, 1},
      {"t_permute (last dim moves)", op_permute_last, 4, s4o, -1, 1},
      {"t_transpose", op_transpose, 2, s45, -1, 1},
      {"t_cat2", op_concat, 2, s35, -1, 1},
      {"t_cat2(x, x)", op_concat_self, 2, s35, -1, 1},
      {"t_copy", op_copy, 2, s35, -1, 1},
      {"t_sum_all", op_sum_all, 2, s35, -1, 1},
      {"t_mean_all", op_mean_all, 2, s35, -1, 1},
      {"t_reshape", op_reshape, 2, s35, -1, 1},
      {"t_reshape of t_reshape", op_reshape_chain, 2, s35, -1, 1},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    check_op(cases[k].name, cases[k].f, NULL, cases[k].ndim, cases[k].shape, cases[k].lo,
             cases[k].hi);
}

/* The view semantics directly: a view's gradient is its base's buffer, gradients from the view
 * and from the base add up, and a view can be the loss itself. */
TEST(grad_fresh_view_shares_base_gradient) {
  poison_arena();
  Tensor *x = tensor_from(2, (int[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
  x->requires_grad = true;
  Tensor *v = t_view(x, 3, 2);                                  /* (3, 2) view of x */
  Tensor *loss = t_add(t_sum_all(t_scale(v, 2.0f)), t_sum_all(t_square(x)));
  Tensor *lv = t_view(loss, 1, 1);                              /* the loss as a (1, 1) view */
  ag_backward(lv);
  /* d/dx [2 sum x + sum x^2] = 2 + 2x */
  CHECK_CLOSE(x->grad, ((float[]){4, 6, 8, 10, 12, 14}), 6, 0, 0);
  CHECK(v->grad == x->grad); /* the same buffer, not a copy */
  CHECK(lv->grad == loss->grad);
  ag_step_reset();
}

/* tensor_grad_fresh hands a parameter's persistent, zeroed buffer out as not fresh. */
TEST(grad_fresh_parameters_are_never_fresh) {
  Tensor p = {0};
  p.ndim = 1, p.shape[0] = 4, p.size = 4, p.is_param = true, p.requires_grad = true;
  bool fresh = true;
  float *g = tensor_grad_fresh(&p, &fresh);
  CHECK(!fresh);
  CHECK_CLOSE(g, ((float[]){0, 0, 0, 0}), 4, 0, 0);
  CHECK(tensor_grad_fresh(&p, &fresh) == g && !fresh);
  free(p.grad);
  /* an activation: fresh on the first call only */
  Tensor *a = tensor_new(1, (int[]){4});
  float *ga = tensor_grad_fresh(a, &fresh);
  CHECK(fresh);
  CHECK(tensor_grad_fresh(a, &fresh) == ga && !fresh);
  ag_step_reset();
}
