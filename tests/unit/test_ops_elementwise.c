/* Tests of the elementwise ops (common/ops/elementwise.c and its CPU kernels): broadcasting
 * forward values against hand-computed numbers and a naive per-element reference, shape
 * errors, gradient checks for every op (broadcast cases included), and gradient accumulation. */
#include <stdlib.h>

#include "../../common/ops.h"
#include "../../common/rng.h"
#include "../test.h"

/* Sums, products and quotients of small integers and halves are exact in float. */
#define EXACT 0.0

static Tensor *from(int ndim, const int *shape, const float *v) {
  return tensor_from(ndim, shape, v);
}

static void check_shape(const Tensor *t, int ndim, const int *shape) {
  char got[64];
  CHECK_INT(t->ndim, ndim);
  for (int i = 0; i < ndim && i < t->ndim; i++)
    if (t->shape[i] != shape[i]) test_fail(__FILE__, __LINE__, "shape %s", shape_str(t, got, 64));
}

/* ---------- forward ---------- */

TEST(ew_add_same_shape) {
  Tensor *a = from(SHAPE(2, 2), (float[]){1, 2, 3, 4});
  Tensor *b = from(SHAPE(2, 2), (float[]){10, 20, 30, 40});
  Tensor *c = t_add(a, b);
  check_shape(c, SHAPE(2, 2));
  CHECK_CLOSE(c->data, ((float[]){11, 22, 33, 44}), 4, EXACT, 0);
  CHECK_CLOSE(t_sub(a, b)->data, ((float[]){-9, -18, -27, -36}), 4, EXACT, 0);
  CHECK_CLOSE(t_mul(a, b)->data, ((float[]){10, 40, 90, 160}), 4, EXACT, 0);
  CHECK_CLOSE(t_div(b, a)->data, ((float[]){10, 10, 10, 10}), 4, EXACT, 0);
}

TEST(ew_broadcast_row_vector) {
  /* (2,3) + (3): the row is added to every row, either side */
  Tensor *a = from(SHAPE(2, 3), (float[]){1, 2, 3, 4, 5, 6});
  Tensor *b = from(SHAPE(3), (float[]){10, 20, 30});
  Tensor *c = t_add(a, b);
  check_shape(c, SHAPE(2, 3));
  CHECK_CLOSE(c->data, ((float[]){11, 22, 33, 14, 25, 36}), 6, EXACT, 0);
  Tensor *d = t_sub(b, a);
  check_shape(d, SHAPE(2, 3));
  CHECK_CLOSE(d->data, ((float[]){9, 18, 27, 6, 15, 24}), 6, EXACT, 0);
}

TEST(ew_broadcast_both_sides) {
  /* (2,1,4) * (3,1) -> (2,3,4): out[i][j][k] = a[i][0][k] * b[j][0] */
  Tensor *a = from(SHAPE(2, 1, 4), (float[]){1, 2, 3, 4, 5, 6, 7, 8});
  Tensor *b = from(SHAPE(3, 1), (float[]){1, 10, 100});
  Tensor *c = t_mul(a, b);
  check_shape(c, SHAPE(2, 3, 4));
  const float want[24] = {1,   2,   3,   4,   10,  20,  30,  40,  100, 200, 300, 400,
                          5,   6,   7,   8,   50,  60,  70,  80,  500, 600, 700, 800};
  CHECK_CLOSE(c->data, want, 24, EXACT, 0);
}

TEST(ew_scalar_operands) {
  Tensor *a = from(SHAPE(2, 2), (float[]){1, 2, 3, 4});
  Tensor *s = from(SHAPE(1), (float[]){2});
  CHECK_CLOSE(t_add(a, s)->data, ((float[]){3, 4, 5, 6}), 4, EXACT, 0);
  CHECK_CLOSE(t_sub(s, a)->data, ((float[]){1, 0, -1, -2}), 4, EXACT, 0);
  CHECK_CLOSE(t_div(a, s)->data, ((float[]){0.5f, 1, 1.5f, 2}), 4, EXACT, 0);
  CHECK_CLOSE(t_div(s, a)->data, ((float[]){2, 1, 2.0f / 3.0f, 0.5f}), 4, EXACT, 0);
  Tensor *ss = t_mul(s, s);
  check_shape(ss, SHAPE(1));
  CHECK_NEAR(ss->data[0], 4.0f, EXACT);
  /* (1,1) * (1) keeps the larger rank */
  check_shape(t_mul(from(SHAPE(1, 1), (float[]){3}), s), SHAPE(1, 1));
}

/* The plain definition of broadcasting, one index at a time: what the fast paths must match. */
static float naive_at(const Tensor *t, int ndim, const int *idx) {
  long off = 0;
  for (int d = 0; d < t->ndim; d++) {
    int i = idx[ndim - t->ndim + d];
    off = off * t->shape[d] + (t->shape[d] == 1 ? 0 : i);
  }
  return t->data[off];
}

TEST(ew_broadcast_matches_naive_reference) {
  struct { int na, sa[4], nb, sb[4]; } cases[] = {
      {3, {2, 3, 4}, 3, {2, 3, 4}}, {3, {2, 3, 4}, 1, {4}},       {1, {4}, 3, {2, 3, 4}},
      {3, {2, 3, 4}, 2, {3, 1}},    {3, {2, 1, 4}, 3, {1, 3, 1}}, {1, {1}, 2, {2, 3}},
      {2, {3, 1}, 2, {1, 4}},       {2, {5, 1}, 1, {1}},          {2, {1, 1}, 1, {1}},
      {4, {2, 3, 1, 5}, 4, {2, 1, 4, 5}}, /* (B,Q,1,H) + (B,1,K,H), additive attention */
      {4, {2, 1, 3, 1}, 3, {4, 1, 2}},    {4, {2, 3, 4, 5}, 2, {4, 1}},
      {3, {2, 0, 3}, 2, {1, 3}},          /* an empty output */
  };
  Tensor *(*ops[4])(Tensor *, Tensor *) = {t_add, t_sub, t_mul, t_div};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    Tensor *a = tensor_randn(cases[c].na, cases[c].sa, 0, 1);
    Tensor *b = tensor_rand(cases[c].nb, cases[c].sb, 0.5f, 2.0f);
    for (int op = 0; op < 4; op++) {
      Tensor *out = ops[op](a, b);
      int nd = out->ndim, idx[4] = {0};
      for (long i = 0; i < out->size; i++) {
        for (long r = i, d = nd - 1; d >= 0; d--) {
          idx[d] = (int)(r % out->shape[d]);
          r /= out->shape[d];
        }
        float x = naive_at(a, nd, idx), y = naive_at(b, nd, idx);
        float want = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;
        if (out->data[i] != want) { /* the same float operation: bit-identical */
          char s1[64], s2[64];
          test_fail(__FILE__, __LINE__, "case %s op %d and %s: out[%ld] = %g, expected %g",
                    shape_str(a, s1, 64), op, shape_str(b, s2, 64), i, out->data[i], want);
          break;
        }
      }
    }
  }
}

TEST(ew_shape_errors_name_op_and_shapes) {
  Tensor *a = tzeros(2, 3), *b = tzeros(4);
  CHECK_ERROR(t_add(a, b), "t_add: shapes (2, 3) and (4) do not broadcast");
  CHECK_ERROR(t_sub(tzeros(2, 3, 4), tzeros(3, 3)), "t_sub: shapes (2, 3, 4) and (3, 3)");
  CHECK_ERROR(t_mul(tzeros(2, 2), tzeros(3, 2, 3)), "t_mul: shapes (2, 2) and (3, 2, 3)");
  CHECK_ERROR(t_div(tzeros(5), tzeros(2)), "t_div: shapes (5) and (2)");
  CHECK_ERROR(t_add(a, b), "reshape");
}

TEST(ew_unary_forward) {
  const float x[8] = {-2, -1, -0.5f, 0, 0.5f, 1, 2, 3};
  Tensor *a = from(SHAPE(2, 4), x);
  CHECK_CLOSE(t_scale(a, 2)->data, ((float[]){-4, -2, -1, 0, 1, 2, 4, 6}), 8, EXACT, 0);
  CHECK_CLOSE(t_add_scalar(a, 1)->data, ((float[]){-1, 0, 0.5f, 1, 1.5f, 2, 3, 4}), 8, EXACT, 0);
  CHECK_CLOSE(t_neg(a)->data, ((float[]){2, 1, 0.5f, 0, -0.5f, -1, -2, -3}), 8, EXACT, 0);
  CHECK_CLOSE(t_square(a)->data, ((float[]){4, 1, 0.25f, 0, 0.25f, 1, 4, 9}), 8, EXACT, 0);
  CHECK_CLOSE(t_relu(a)->data, ((float[]){0, 0, 0, 0, 0.5f, 1, 2, 3}), 8, EXACT, 0);
  /* Reference values of the functions to 7+ digits; libm's float versions are within a few
   * ulps, so 1e-6 absolute (values are at most ~3) is loose enough and still catches a wrong
   * formula. */
  const double tol = 1e-6;
  CHECK_CLOSE(t_exp(a)->data,
              ((float[]){0.13533528f, 0.36787944f, 0.60653066f, 1, 1.6487213f, 2.7182818f,
                         7.3890561f, 20.085537f}),
              8, tol, 1e-6);
  CHECK_CLOSE(t_tanh(a)->data,
              ((float[]){-0.96402758f, -0.76159416f, -0.46211716f, 0, 0.46211716f, 0.76159416f,
                         0.96402758f, 0.99505475f}),
              8, tol, 0);
  CHECK_CLOSE(t_sigmoid(a)->data,
              ((float[]){0.11920292f, 0.26894142f, 0.37754067f, 0.5f, 0.62245933f, 0.73105858f,
                         0.88079708f, 0.95257413f}),
              8, tol, 0);
  /* GELU(x) = x Φ(x): Φ(1) = 0.8413447, Φ(-1) = 0.1586553, ... (exact erf form, not tanh) */
  CHECK_CLOSE(t_gelu(a)->data,
              ((float[]){-0.04550026f, -0.15865525f, -0.15426877f, 0, 0.34573123f, 0.84134475f,
                         1.9544997f, 2.9959502f}),
              8, tol, 0);
  Tensor *p = from(SHAPE(4), (float[]){1, 2, 0.5f, 10});
  CHECK_CLOSE(t_log(p)->data, ((float[]){0, 0.69314718f, -0.69314718f, 2.3025851f}), 4, tol, 0);
  /* saturation: no NaN from exp overflow */
  Tensor *big = from(SHAPE(2), (float[]){-200, 200});
  CHECK_CLOSE(t_sigmoid(big)->data, ((float[]){0, 1}), 2, EXACT, 0);
  CHECK_CLOSE(t_tanh(big)->data, ((float[]){-1, 1}), 2, EXACT, 0);
}

/* ---------- gradient checks ---------- */

static Tensor *gc_add(Tensor **x, void *ctx) { return t_add(x[0], x[1]); }
static Tensor *gc_sub(Tensor **x, void *ctx) { return t_sub(x[0], x[1]); }
static Tensor *gc_mul(Tensor **x, void *ctx) { return t_mul(x[0], x[1]); }
static Tensor *gc_div(Tensor **x, void *ctx) { return t_div(x[0], x[1]); }
static Tensor *gc_mul_self(Tensor **x, void *ctx) { return t_mul(x[0], x[0]); }
static Tensor *gc_scale(Tensor **x, void *ctx) { return t_scale(x[0], -1.5f); }
static Tensor *gc_add_scalar(Tensor **x, void *ctx) { return t_add_scalar(x[0], 0.75f); }
static Tensor *gc_neg(Tensor **x, void *ctx) { return t_neg(x[0]); }
static Tensor *gc_exp(Tensor **x, void *ctx) { return t_exp(x[0]); }
static Tensor *gc_log(Tensor **x, void *ctx) { return t_log(x[0]); }
static Tensor *gc_square(Tensor **x, void *ctx) { return t_square(x[0]); }
static Tensor *gc_tanh(Tensor **x, void *ctx) { return t_tanh(x[0]); }
static Tensor *gc_sigmoid(Tensor **x, void *ctx) { return t_sigmoid(x[0]); }
static Tensor *gc_relu(Tensor **x, void *ctx) { return t_relu(x[0]); }
static Tensor *gc_gelu(Tensor **x, void *ctx) { return t_gelu(x[0]); }

/* Values in ±[lo, hi] with random signs: away from 0 (for 1/x, log|x| and the relu kink). */
static Tensor *away_from_zero(int ndim, const int *shape, float lo, float hi) {
  Tensor *t = tensor_rand(ndim, shape, lo, hi);
  for (long i = 0; i < t->size; i++)
    if (rng_bernoulli(&g_rng, 0.5f)) t->data[i] = -t->data[i];
  return t;
}

TEST(ew_gradcheck_binary_broadcast) {
  struct { int na, sa[4], nb, sb[4]; } cases[] = {
      {2, {2, 3}, 2, {2, 3}},       {2, {2, 3}, 1, {3}},       {1, {3}, 2, {2, 3}},
      {3, {2, 1, 4}, 2, {3, 1}},    {2, {2, 3}, 1, {1}},       {1, {1}, 2, {2, 3}},
      {3, {2, 3, 4}, 1, {4}},       {4, {2, 1, 3, 2}, 4, {1, 2, 1, 2}},
      {3, {2, 3, 1}, 3, {2, 1, 4}}, {2, {1, 1}, 1, {1}},
  };
  GradFn fns[4] = {gc_add, gc_sub, gc_mul, gc_div};
  const char *names[4] = {"t_add", "t_sub", "t_mul", "t_div"};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    for (int op = 0; op < 4; op++) {
      Tensor *in[2] = {tensor_randn(cases[c].na, cases[c].sa, 0, 1),
                       away_from_zero(cases[c].nb, cases[c].sb, 0.5f, 1.5f)};
      int before = test_failures();
      /* GRADCHECK's tolerance: float32 central differences with step 1e-2 */
      GRADCHECK(fns[op], in, 2, NULL);
      if (test_failures() > before) {
        char s1[64], s2[64];
        test_fail(__FILE__, __LINE__, "in %s of %s and %s", names[op], shape_str(in[0], s1, 64),
                  shape_str(in[1], s2, 64));
      }
    }
  }
}

TEST(ew_gradcheck_same_input_twice) {
  /* x * x: both operands are one tensor; its gradient 2x is the sum of both pushes */
  Tensor *in[1] = {tensor_randn(SHAPE(2, 3), 0, 1)};
  GRADCHECK(gc_mul_self, in, 1, NULL);
}

TEST(ew_gradcheck_unary) {
  struct { GradFn f; const char *name; } ops[] = {
      {gc_scale, "t_scale"}, {gc_add_scalar, "t_add_scalar"}, {gc_neg, "t_neg"},
      {gc_exp, "t_exp"},     {gc_square, "t_square"},         {gc_tanh, "t_tanh"},
      {gc_sigmoid, "t_sigmoid"}, {gc_gelu, "t_gelu"},
  };
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    Tensor *in[1] = {tensor_randn(SHAPE(2, 3, 2), 0, 1)};
    int before = test_failures();
    GRADCHECK(ops[k].f, in, 1, NULL);
    if (test_failures() > before) test_fail(__FILE__, __LINE__, "in %s", ops[k].name);
  }
  /* log: x in [0.5, 2] keeps x ± 1e-2 far from the pole at 0 */
  Tensor *pos[1] = {tensor_rand(SHAPE(3, 4), 0.5f, 2.0f)};
  GRADCHECK(gc_log, pos, 1, NULL);
  /* relu: |x| >= 0.1, so the finite-difference step never crosses the kink at 0 */
  Tensor *r[1] = {away_from_zero(SHAPE(3, 4), 0.1f, 2.0f)};
  GRADCHECK(gc_relu, r, 1, NULL);
}

/* ---------- autograd bookkeeping ---------- */

TEST(ew_grad_only_into_inputs_that_require_it) {
  Tensor *x = tensor_randn(SHAPE(2, 3), 0, 1);
  Tensor *c = tensor_randn(SHAPE(3), 0, 1);
  x->requires_grad = true;
  ag_backward(t_sum_all(t_mul(x, c)));
  CHECK(x->grad != NULL);
  CHECK(c->grad == NULL);
  for (int i = 0; i < 6; i++) CHECK_NEAR(x->grad[i], c->data[i % 3], EXACT);
}

TEST(ew_no_tape_when_grad_disabled) {
  Tensor *x = tensor_randn(SHAPE(4), 0, 1);
  x->requires_grad = true;
  size_t len = ag_tape_len();
  ag_set_grad_enabled(false);
  Tensor *y = t_tanh(t_add(x, x));
  ag_set_grad_enabled(true);
  CHECK_INT(ag_tape_len(), len);
  CHECK(!y->requires_grad);
}

TEST(ew_grads_accumulate_over_two_backward_calls) {
  /* A parameter-like tensor (outside the arena, is_param) keeps its gradient across steps:
   * two steps of loss = sum(x * c_k) leave grad = c_1 + c_2. */
  float xd[3] = {1, 2, 3};
  Tensor x = {.data = xd, .ndim = 1, .shape = {3}, .size = 3, .requires_grad = true,
              .is_param = true, .name = "x"};
  const float c1[3] = {1, -2, 0.5f}, c2[3] = {4, 1, -1};
  ag_backward(t_sum_all(t_mul(&x, from(SHAPE(3), c1))));
  ag_step_reset();
  ag_backward(t_sum_all(t_mul(from(SHAPE(3), c2), &x)));
  ag_step_reset();
  CHECK_CLOSE(x.grad, ((float[]){5, -1, -0.5f}), 3, EXACT, 0);
  free(x.grad);
}

TEST(ew_null_inputs_are_errors) {
  /* an unfinished exercise returns NULL: the op must say so, not crash */
  CHECK_ERROR(t_add(tzeros(2, 3), NULL), "t_add: an input is NULL");
  CHECK_ERROR(t_mul(NULL, tzeros(2)), "t_mul: an input is NULL");
  CHECK_ERROR(t_tanh(NULL), "t_tanh: an input is NULL");
}
