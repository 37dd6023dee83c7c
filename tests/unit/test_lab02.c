/* Tests of lab02's reference layers (solutions/lab02 + chapters/02_scoring_functions/attention.c):
 * golden comparisons with the book's PyTorch code (tests/golden/lab02_reference.h, made by
 * tests/golden/lab02_reference.py), finite-difference gradient checks, and the error messages.
 * These run against whatever variant the unit runner links; in the repository that is the
 * solutions (make test); the graded suites in tests/grade/lab02 are the students' tests. */
#include <math.h>
#include <string.h>

#include "../../common/nn.h"
#include "../../common/rng.h"
#include "../golden/lab02_reference.h"
#include "../test.h"
#include "lab02/lab02.h"

/* float32 against PyTorch's float32: same formulas, different summation order and expf; a few
 * ulps on values of order 1 */
#define FWD_ATOL 2e-6
#define FWD_RTOL 1e-5
/* gradients pass through one more product (and tanh') than the outputs: allow a bit more */
#define GRAD_ATOL 1e-5
#define GRAD_RTOL 1e-4

#define N(a) ((long)(sizeof(a) / sizeof((a)[0])))

/* A leaf tensor (arena) holding a copy of golden data, requiring grad. */
static Tensor *leaf(int ndim, const int *shape, const float *src) {
  Tensor *t = tensor_from(ndim, shape, src);
  t->requires_grad = true;
  return t;
}
#define LEAF(src, ...) leaf(SHAPE(__VA_ARGS__), (src))
#define CONST(src, ...) tensor_from(SHAPE(__VA_ARGS__), (src))

/* Run backward of sum(out * R). */
static void backward_weighted(Tensor *out, const float *R) { ag_backward_with(out, R); }

/* Does this build have the lab02 exercises? With VARIANT=labs (stubs) the tests that need
 * them say so and skip: these tests check the reference code; tests/grade/lab02 grades stubs. */
static bool have_lab02(const char *test) {
  Tensor *x = tensor_zeros(3, (int[]){1, 1, 2}); /* (batch, queries = keys, d) */
  ParamSet ps = {0};
  AdditiveAttention add;
  AdditiveAttention_init(&add, &ps, "probe", 2, 2, 2, 0.0f);
  DotProductAttention dot;
  DotProductAttention_init(&dot, 0.0f);
  bool ok = masked_softmax(x, NULL) && AdditiveAttention_forward(&add, x, x, x, NULL, false) &&
            DotProductAttention_forward(&dot, x, x, x, NULL, false);
  paramset_free(&ps);
  ag_step_reset();
  if (!ok)
    test_skip("the lab02 exercises are stubs in this build (VARIANT=labs)");
  return ok;
}

/* ---------- masked softmax ---------- */

TEST(lab02_golden_masked_softmax) {
  if (!have_lab02("lab02_golden_masked_softmax")) return;
  const float *lens[2] = {lab02_ms_lens_1d, lab02_ms_lens_2d};
  const float *Y[2] = {lab02_ms_Y_1d, lab02_ms_Y_2d}, *dX[2] = {lab02_ms_dX_1d, lab02_ms_dX_2d};
  for (int c = 0; c < 2; c++) {
    Tensor *X = LEAF(lab02_ms_X, 2, 2, 4);
    Tensor *L = c == 0 ? CONST(lens[c], 2) : CONST(lens[c], 2, 2);
    Tensor *out = masked_softmax(X, L);
    CHECK(out != NULL);
    if (!out) return;
    CHECK_INT(out->ndim, 3);
    CHECK_CLOSE(out->data, Y[c], 16, FWD_ATOL, FWD_RTOL);
    backward_weighted(out, lab02_ms_R);
    CHECK_CLOSE(X->grad, dX[c], 16, GRAD_ATOL, GRAD_RTOL);
    ag_step_reset();
  }
}

TEST(lab02_masked_softmax_zero_length_rows) {
  if (!have_lab02("lab02_masked_softmax_zero_length_rows")) return;
  /* length 0 (1-D) and a 2-D length 0 in the middle: zeros, never NaN or uniform */
  Tensor *X = tensor_from(3, (int[]){2, 2, 3}, (float[]){1, 2, 3, 4, 5, 6, 1, 1, 1, 2, 2, 2});
  Tensor *Y = masked_softmax(X, CONST(((float[]){0, 3}), 2));
  for (int j = 0; j < 6; j++) CHECK(Y->data[j] == 0.0f);
  Y = masked_softmax(X, CONST(((float[]){2, 0, 3, 1}), 2, 2));
  for (int j = 3; j < 6; j++) CHECK(Y->data[j] == 0.0f);
  /* exact: two equal scores over length 2, then three over length 3 */
  CHECK_CLOSE(Y->data, ((float[]){0.26894142f, 0.73105858f, 0, 0, 0, 0, 1 / 3.f, 1 / 3.f,
                                  1 / 3.f, 1, 0, 0}),
              12, 1e-6 /* float32 expf on order-1 values */, 0);
  /* no lengths = plain softmax */
  Y = masked_softmax(X, NULL);
  Tensor *S = t_softmax(X);
  CHECK_CLOSE(Y->data, S->data, 12, 0, 0); /* the same op: bit for bit */
}

static Tensor *f_masked_softmax(Tensor **in, void *ctx) { return masked_softmax(in[0], ctx); }

TEST(lab02_gradcheck_masked_softmax) {
  if (!have_lab02("lab02_gradcheck_masked_softmax")) return;
  Tensor *lens = CONST(((float[]){2, 0, 4, 1}), 2, 2);
  GRADCHECK(f_masked_softmax, (Tensor *[]){CONST(lab02_ms_X, 2, 2, 4)}, 1, lens);
}

/* ---------- additive attention ---------- */

typedef struct {
  AdditiveAttention att;
  ParamSet ps;
} Additive;

/* The golden layer: query_size 6, key_size 4, num_hiddens 8, with the reference weights. */
static void additive_golden(Additive *A) {
  memset(A, 0, sizeof *A);
  AdditiveAttention_init(&A->att, &A->ps, "add", 4, 6, 8, 0.1f);
  memcpy(A->att.W_q.W->data, lab02_add_Wq, sizeof lab02_add_Wq);
  memcpy(A->att.W_k.W->data, lab02_add_Wk, sizeof lab02_add_Wk);
  memcpy(A->att.w_v.W->data, lab02_add_wv, sizeof lab02_add_wv);
}

TEST(lab02_additive_init) {
  if (!have_lab02("lab02_additive_init")) return;
  Additive A;
  additive_golden(&A);
  CHECK_INT(A.ps.n, 3);
  CHECK(A.att.W_q.b == NULL && A.att.W_k.b == NULL && A.att.w_v.b == NULL);
  CHECK_INT(A.att.W_q.W->shape[0], 6);
  CHECK_INT(A.att.W_k.W->shape[0], 4);
  CHECK_INT(A.att.w_v.W->shape[1], 1);
  CHECK(paramset_find(&A.ps, "add.W_q.W") == A.att.W_q.W);
  CHECK_NEAR(A.att.dropout.p, 0.1f, 0);
  CHECK(A.att.attention_weights == NULL);
  paramset_free(&A.ps);
}

TEST(lab02_golden_additive) {
  if (!have_lab02("lab02_golden_additive")) return;
  Additive A;
  additive_golden(&A);
  const struct {
    const float *lens, *out, *w, *dq, *dk, *dv, *dWq, *dWk, *dwv;
    int ndim;
  } cases[2] = {
      {lab02_add_lens_1d, lab02_add_out_1d, lab02_add_w_1d, lab02_add_dq_1d, lab02_add_dk_1d,
       lab02_add_dv_1d, lab02_add_dWq_1d, lab02_add_dWk_1d, lab02_add_dwv_1d, 1},
      {lab02_add_lens_2d, lab02_add_out_2d, lab02_add_w_2d, lab02_add_dq_2d, lab02_add_dk_2d,
       lab02_add_dv_2d, lab02_add_dWq_2d, lab02_add_dWk_2d, lab02_add_dwv_2d, 2},
  };
  for (int c = 0; c < 2; c++) {
    paramset_zero_grad(&A.ps);
    Tensor *q = LEAF(lab02_add_q, 2, 3, 6), *k = LEAF(lab02_add_k, 2, 5, 4);
    Tensor *v = LEAF(lab02_add_v, 2, 5, 3);
    Tensor *L = cases[c].ndim == 1 ? CONST(cases[c].lens, 2) : CONST(cases[c].lens, 2, 3);
    /* training = false: eval mode, as the reference (dropout 0.1 would otherwise apply) */
    Tensor *out = AdditiveAttention_forward(&A.att, q, k, v, L, false);
    CHECK(out != NULL);
    if (!out) break;
    CHECK(out->ndim == 3 && out->shape[0] == 2 && out->shape[1] == 3 && out->shape[2] == 3);
    CHECK_CLOSE(out->data, cases[c].out, 18, FWD_ATOL, FWD_RTOL);
    CHECK_CLOSE(A.att.attention_weights->data, cases[c].w, 30, FWD_ATOL, FWD_RTOL);
    backward_weighted(out, lab02_add_R);
    CHECK_CLOSE(q->grad, cases[c].dq, 36, GRAD_ATOL, GRAD_RTOL);
    CHECK_CLOSE(k->grad, cases[c].dk, 40, GRAD_ATOL, GRAD_RTOL);
    CHECK_CLOSE(v->grad, cases[c].dv, 30, GRAD_ATOL, GRAD_RTOL);
    CHECK_CLOSE(A.att.W_q.W->grad, cases[c].dWq, 48, GRAD_ATOL, GRAD_RTOL);
    CHECK_CLOSE(A.att.W_k.W->grad, cases[c].dWk, 32, GRAD_ATOL, GRAD_RTOL);
    CHECK_CLOSE(A.att.w_v.W->grad, cases[c].dwv, 8, GRAD_ATOL, GRAD_RTOL);
    ag_step_reset();
  }
  paramset_free(&A.ps);
}

static Tensor *f_additive(Tensor **in, void *ctx) {
  Additive *A = ctx;
  return AdditiveAttention_forward(&A->att, in[0], in[1], in[2], NULL, false);
}

TEST(lab02_gradcheck_additive) {
  if (!have_lab02("lab02_gradcheck_additive")) return;
  Additive A;
  additive_golden(&A);
  GRADCHECK(f_additive,
            ((Tensor *[]){CONST(lab02_add_q, 2, 3, 6), CONST(lab02_add_k, 2, 5, 4),
                          CONST(lab02_add_v, 2, 5, 3)}),
            3, &A);
  paramset_free(&A.ps);
}

TEST(lab02_additive_toy_example) {
  if (!have_lab02("lab02_additive_toy_example")) return;
  /* The book's toy example: keys all ones, so every key scores the same and the weights are
   * uniform over the valid keys whatever W_q, W_k and w_v are. */
  Additive A = {0};
  rng_seed(7);
  AdditiveAttention_init(&A.att, &A.ps, "toy", 2, 20, 8, 0.1f);
  Tensor *q = tensor_randn(3, (int[]){2, 1, 20}, 0, 1);
  Tensor *k = tensor_full(3, (int[]){2, 10, 2}, 1.0f);
  Tensor *v = tensor_new(3, (int[]){2, 10, 4});
  for (int i = 0; i < 80; i++) v->data[i] = (float)(i % 40);
  Tensor *out = AdditiveAttention_forward(&A.att, q, k, v, CONST(((float[]){2, 6}), 2), false);
  CHECK_CLOSE(out->data, ((float[]){2, 3, 4, 5, 10, 11, 12, 13}), 8,
              1e-5 /* averages of integers up to 23 in float32 */, 0);
  for (int j = 0; j < 10; j++) {
    CHECK_NEAR(A.att.attention_weights->data[j], j < 2 ? 0.5 : 0.0, 1e-7 /* ulp at 0.5 */);
    CHECK_NEAR(A.att.attention_weights->data[10 + j], j < 6 ? 1 / 6.0 : 0.0, 1e-7);
  }
  paramset_free(&A.ps);
}

TEST(lab02_additive_errors) {
  if (!have_lab02("lab02_additive_errors")) return;
  Additive A = {0};
  AdditiveAttention_init(&A.att, &A.ps, "e", 4, 6, 8, 0);
  Tensor *q = tzeros(2, 3, 6), *k = tzeros(2, 5, 4), *v = tzeros(2, 5, 3);
  CHECK_ERROR(AdditiveAttention_forward(&A.att, tzeros(2, 3, 5), k, v, NULL, false),
              "built for query_size 6");
  CHECK_ERROR(AdditiveAttention_forward(&A.att, q, tzeros(2, 4, 4), v, NULL, false),
              "same number of keys");
  CHECK_ERROR(AdditiveAttention_forward(&A.att, q, k, tzeros(3, 5, 3), NULL, false),
              "different batch sizes");
  CHECK_ERROR(AdditiveAttention_forward(&A.att, tzeros(3, 6), k, v, NULL, false), "3-D");
  CHECK_ERROR(AdditiveAttention_forward(&A.att, q, k, v, tzeros(3), false), "valid_lens");
  CHECK_ERROR(AdditiveAttention_init(&A.att, &A.ps, "e", 0, 6, 8, 0), "must be positive");
  CHECK_ERROR(AdditiveAttention_init(&A.att, &A.ps, "e", 4, 6, 8, 1.0f), "dropout");
  paramset_free(&A.ps);
}

/* ---------- scaled dot-product attention ---------- */

TEST(lab02_golden_dot_product) {
  if (!have_lab02("lab02_golden_dot_product")) return;
  DotProductAttention att;
  DotProductAttention_init(&att, 0.5f);
  const struct {
    const float *lens, *out, *w, *dq, *dk, *dv;
    int ndim;
  } cases[3] = {
      {NULL, lab02_dot_out_none, lab02_dot_w_none, lab02_dot_dq_none, lab02_dot_dk_none,
       lab02_dot_dv_none, 0},
      {lab02_dot_lens_1d, lab02_dot_out_1d, lab02_dot_w_1d, lab02_dot_dq_1d, lab02_dot_dk_1d,
       lab02_dot_dv_1d, 1},
      {lab02_dot_lens_2d, lab02_dot_out_2d, lab02_dot_w_2d, lab02_dot_dq_2d, lab02_dot_dk_2d,
       lab02_dot_dv_2d, 2},
  };
  for (int c = 0; c < 3; c++) {
    Tensor *q = LEAF(lab02_dot_q, 2, 3, 4), *k = LEAF(lab02_dot_k, 2, 5, 4);
    Tensor *v = LEAF(lab02_dot_v, 2, 5, 3);
    Tensor *L = cases[c].ndim == 0   ? NULL
                : cases[c].ndim == 1 ? CONST(cases[c].lens, 2)
                                     : CONST(cases[c].lens, 2, 3);
    Tensor *out = DotProductAttention_forward(&att, q, k, v, L, false);
    CHECK(out != NULL);
    if (!out) break;
    CHECK(out->ndim == 3 && out->shape[0] == 2 && out->shape[1] == 3 && out->shape[2] == 3);
    CHECK_CLOSE(out->data, cases[c].out, 18, FWD_ATOL, FWD_RTOL);
    CHECK_CLOSE(att.attention_weights->data, cases[c].w, 30, FWD_ATOL, FWD_RTOL);
    backward_weighted(out, lab02_dot_R);
    CHECK_CLOSE(q->grad, cases[c].dq, 24, GRAD_ATOL, GRAD_RTOL);
    CHECK_CLOSE(k->grad, cases[c].dk, 40, GRAD_ATOL, GRAD_RTOL);
    CHECK_CLOSE(v->grad, cases[c].dv, 30, GRAD_ATOL, GRAD_RTOL);
    ag_step_reset();
  }
}

static Tensor *f_dot(Tensor **in, void *ctx) {
  DotProductAttention att;
  DotProductAttention_init(&att, 0);
  return DotProductAttention_forward(&att, in[0], in[1], in[2], ctx, false);
}

TEST(lab02_gradcheck_dot_product) {
  if (!have_lab02("lab02_gradcheck_dot_product")) return;
  Tensor *lens = CONST(((float[]){1, 0, 5, 3, 2, 4}), 2, 3);
  GRADCHECK(f_dot,
            ((Tensor *[]){CONST(lab02_dot_q, 2, 3, 4), CONST(lab02_dot_k, 2, 5, 4),
                          CONST(lab02_dot_v, 2, 5, 3)}),
            3, lens);
}

TEST(lab02_dot_product_dropout_training) {
  if (!have_lab02("lab02_dot_product_dropout_training")) return;
  /* values = identity, so the output IS the dropped-out weights: each entry 0 or 2 w */
  DotProductAttention att;
  DotProductAttention_init(&att, 0.5f);
  rng_seed(3);
  Tensor *q = tensor_randn(3, (int[]){1, 4, 6}, 0, 1), *k = tensor_randn(3, (int[]){1, 6, 6}, 0, 1);
  Tensor *eye = tzeros(1, 6, 6);
  for (int i = 0; i < 6; i++) eye->data[i * 6 + i] = 1;
  Tensor *out = DotProductAttention_forward(&att, q, k, eye, NULL, true);
  int zeros = 0, kept = 0;
  for (int i = 0; i < 24; i++) {
    float w = att.attention_weights->data[i], o = out->data[i];
    if (o == 0) zeros++;
    else if (fabsf(o - 2 * w) <= 1e-6f * 2 * w) kept++; /* exact up to the 1/(1-p) rounding */
  }
  CHECK_INT(zeros + kept, 24);
  CHECK(zeros > 0 && kept > 0); /* p = 0.5 over 24 entries: both happen (seeded) */
  /* the stored weights are the undropped ones: rows sum to 1 */
  for (int r = 0; r < 4; r++) {
    double s = 0;
    for (int j = 0; j < 6; j++) s += att.attention_weights->data[r * 6 + j];
    CHECK_NEAR(s, 1.0, 1e-6 /* six float32 terms */);
  }
}

TEST(lab02_dot_product_errors) {
  if (!have_lab02("lab02_dot_product_errors")) return;
  DotProductAttention att;
  DotProductAttention_init(&att, 0);
  Tensor *q = tzeros(2, 3, 4), *k = tzeros(2, 5, 4), *v = tzeros(2, 5, 3);
  CHECK_ERROR(DotProductAttention_forward(&att, tzeros(2, 3, 2), k, v, NULL, false),
              "same length d");
  CHECK_ERROR(DotProductAttention_forward(&att, q, k, tzeros(2, 6, 3), NULL, false),
              "same number of keys");
  CHECK_ERROR(DotProductAttention_forward(&att, q, k, v, tzeros(2, 4), false), "valid_lens");
  CHECK_ERROR(DotProductAttention_init(&att, -0.1f), "dropout");
}
