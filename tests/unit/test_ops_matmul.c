/* test_ops_matmul.c — t_matmul, t_bmm, t_bmm_nt, t_linear: values, gradients, shape errors. */
#include <stdlib.h>

#include "../../common/ops.h"
#include "../test.h"

/* Naive reference: C (m,n) = A (m,k) @ op(B), B (k,n) or, with tB, (n,k). */
static void naive(const float *A, const float *B, float *C, int m, int n, int k, bool tB) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int p = 0; p < k; p++) s += (double)A[i * k + p] * (tB ? B[j * k + p] : B[p * n + j]);
      C[i * n + j] = (float)s;
    }
}

TEST(matmul_values) {
  /* [[1,2,3],[4,5,6]] @ [[1,0],[0,1],[1,1]] = [[4,5],[10,11]]: small integers, exact */
  Tensor *a = tensor_from(SHAPE(2, 3), (const float[]){1, 2, 3, 4, 5, 6});
  Tensor *b = tensor_from(SHAPE(3, 2), (const float[]){1, 0, 0, 1, 1, 1});
  Tensor *c = t_matmul(a, b);
  CHECK_INT(c->ndim, 2);
  CHECK_INT(c->shape[0], 2);
  CHECK_INT(c->shape[1], 2);
  CHECK_CLOSE(c->data, ((const float[]){4, 5, 10, 11}), 4, 0, 0);
  /* larger random product against the naive loop (float sums of 40 terms: 1e-5 slack) */
  Tensor *x = tensor_randn(SHAPE(19, 40), 0, 1), *w = tensor_randn(SHAPE(40, 37), 0, 1);
  float want[19 * 37];
  naive(x->data, w->data, want, 19, 37, 40, false);
  CHECK_CLOSE(t_matmul(x, w)->data, want, 19 * 37, 1e-5, 1e-5);
}

TEST(bmm_values) {
  Tensor *a = tensor_randn(SHAPE(3, 5, 7), 0, 1), *b = tensor_randn(SHAPE(3, 7, 4), 0, 1);
  Tensor *bt = tensor_randn(SHAPE(3, 6, 7), 0, 1);
  Tensor *c = t_bmm(a, b), *d = t_bmm_nt(a, bt);
  CHECK(c->ndim == 3 && c->shape[0] == 3 && c->shape[1] == 5 && c->shape[2] == 4);
  CHECK(d->ndim == 3 && d->shape[0] == 3 && d->shape[1] == 5 && d->shape[2] == 6);
  for (int i = 0; i < 3; i++) {
    float want[5 * 6];
    naive(a->data + i * 35, b->data + i * 28, want, 5, 4, 7, false);
    CHECK_CLOSE(c->data + i * 20, want, 20, 1e-5, 1e-5); /* 7-term float sums */
    naive(a->data + i * 35, bt->data + i * 42, want, 5, 6, 7, true);
    CHECK_CLOSE(d->data + i * 30, want, 30, 1e-5, 1e-5);
  }
}

TEST(linear_values) {
  /* x (2, 3, 4) @ W (4, 5) + b (5): each of the 6 rows independently */
  Tensor *x = tensor_randn(SHAPE(2, 3, 4), 0, 1), *W = tensor_randn(SHAPE(4, 5), 0, 1);
  Tensor *b = tensor_randn(SHAPE(5), 0, 1);
  Tensor *y = t_linear(x, W, b), *y0 = t_linear(x, W, NULL);
  CHECK(y->ndim == 3 && y->shape[0] == 2 && y->shape[1] == 3 && y->shape[2] == 5);
  float want[30];
  naive(x->data, W->data, want, 6, 5, 4, false);
  CHECK_CLOSE(y0->data, want, 30, 1e-5, 1e-5); /* 4-term float sums */
  for (int r = 0; r < 6; r++)
    for (int j = 0; j < 5; j++) want[r * 5 + j] += b->data[j];
  CHECK_CLOSE(y->data, want, 30, 1e-5, 1e-5);
  /* a 1-D input is one row */
  Tensor *v = tensor_randn(SHAPE(4), 0, 1);
  Tensor *yv = t_linear(v, W, b);
  CHECK(yv->ndim == 1 && yv->shape[0] == 5);
  naive(v->data, W->data, want, 1, 5, 4, false);
  for (int j = 0; j < 5; j++) want[j] += b->data[j];
  CHECK_CLOSE(yv->data, want, 5, 1e-5, 1e-5);
}

/* ---------- gradients ---------- */

static Tensor *f_matmul(Tensor **in, void *ctx) { return t_matmul(in[0], in[1]); }
static Tensor *f_bmm(Tensor **in, void *ctx) { return t_bmm(in[0], in[1]); }
static Tensor *f_bmm_nt(Tensor **in, void *ctx) { return t_bmm_nt(in[0], in[1]); }
static Tensor *f_linear(Tensor **in, void *ctx) { return t_linear(in[0], in[1], in[2]); }
static Tensor *f_linear_nobias(Tensor **in, void *ctx) { return t_linear(in[0], in[1], NULL); }
/* the same tensor on both sides: gradients from the two uses must add up */
static Tensor *f_matmul_self(Tensor **in, void *ctx) { return t_matmul(in[0], in[0]); }

TEST(matmul_gradcheck) {
  Tensor *in[2] = {tensor_randn(SHAPE(3, 5), 0, 1), tensor_randn(SHAPE(5, 4), 0, 1)};
  GRADCHECK(f_matmul, in, 2, NULL);
  Tensor *sq[1] = {tensor_randn(SHAPE(4, 4), 0, 1)};
  GRADCHECK(f_matmul_self, sq, 1, NULL);
}

TEST(bmm_gradcheck) {
  Tensor *in[2] = {tensor_randn(SHAPE(2, 3, 5), 0, 1), tensor_randn(SHAPE(2, 5, 4), 0, 1)};
  GRADCHECK(f_bmm, in, 2, NULL);
}

TEST(bmm_nt_gradcheck) {
  Tensor *in[2] = {tensor_randn(SHAPE(2, 3, 5), 0, 1), tensor_randn(SHAPE(2, 4, 5), 0, 1)};
  GRADCHECK(f_bmm_nt, in, 2, NULL);
}

TEST(linear_gradcheck) {
  Tensor *in2[3] = {tensor_randn(SHAPE(4, 3), 0, 1), tensor_randn(SHAPE(3, 5), 0, 1),
                    tensor_randn(SHAPE(5), 0, 1)};
  GRADCHECK(f_linear, in2, 3, NULL);
  Tensor *in3[3] = {tensor_randn(SHAPE(2, 3, 4), 0, 1), tensor_randn(SHAPE(4, 6), 0, 1),
                    tensor_randn(SHAPE(6), 0, 1)};
  GRADCHECK(f_linear, in3, 3, NULL);
  Tensor *nb[2] = {tensor_randn(SHAPE(2, 2, 3, 4), 0, 1), tensor_randn(SHAPE(4, 3), 0, 1)};
  GRADCHECK(f_linear_nobias, nb, 2, NULL);
}

TEST(matmul_grad_only_where_needed) {
  /* a constant input gets no gradient buffer; the other one still does */
  Tensor *a = tensor_randn(SHAPE(3, 4), 0, 1), *W = tensor_randn(SHAPE(4, 2), 0, 1);
  W->requires_grad = true;
  Tensor *y = t_linear(a, W, NULL);
  ag_backward(t_sum_all(y));
  CHECK(a->grad == NULL);
  CHECK(W->grad != NULL);
  /* d sum(a W) / dW[p, j] = sum_i a[i, p] */
  for (int p = 0; p < 4; p++) {
    float s = 0;
    for (int i = 0; i < 3; i++) s += a->data[i * 4 + p];
    CHECK_NEAR(W->grad[p * 2], s, 1e-5); /* 3-term float sums */
    CHECK_NEAR(W->grad[p * 2 + 1], s, 1e-5);
  }
  /* with grad disabled nothing is recorded */
  ag_set_grad_enabled(false);
  size_t len = ag_tape_len();
  Tensor *z = t_matmul(a, W);
  CHECK(!z->requires_grad);
  CHECK_INT(ag_tape_len(), len);
  ag_set_grad_enabled(true);
}

/* ---------- shape errors ---------- */

TEST(matmul_shape_errors) {
  Tensor *a = tzeros(2, 3), *b = tzeros(4, 5), *c3 = tzeros(2, 3, 4);
  CHECK_ERROR(t_matmul(a, b), "t_matmul");
  CHECK_ERROR(t_matmul(a, b), "(2, 3) @ (4, 5)");
  CHECK_ERROR(t_matmul(c3, b), "(2, 3, 4)");
  CHECK_ERROR(t_matmul(c3, b), "t_bmm"); /* says what to use instead */
  Tensor *x = tzeros(2, 3, 4), *y = tzeros(3, 4, 5), *z = tzeros(2, 5, 4);
  CHECK_ERROR(t_bmm(x, y), "t_bmm: shapes (2, 3, 4) and (3, 4, 5)");
  CHECK_ERROR(t_bmm(x, z), "(2, 5, 4)");
  CHECK_ERROR(t_bmm(a, x), "t_bmm");
  CHECK_ERROR(t_bmm_nt(x, tzeros(2, 5, 3)), "t_bmm_nt: shapes (2, 3, 4) and (2, 5, 3)");
  Tensor *ok = tzeros(2, 6, 4);
  CHECK_INT(t_bmm_nt(x, ok)->shape[2], 6);
  CHECK_ERROR(t_bmm_nt(x, y), "t_bmm_nt");
}

TEST(linear_shape_errors) {
  Tensor *x = tzeros(2, 3, 4), *W = tzeros(5, 6), *Wok = tzeros(4, 6);
  CHECK_ERROR(t_linear(x, W, NULL), "t_linear: input (2, 3, 4) has last dim 4");
  CHECK_ERROR(t_linear(x, W, NULL), "(5, 6)");
  CHECK_ERROR(t_linear(x, tzeros(4), NULL), "must be 2-D");
  CHECK_ERROR(t_linear(x, Wok, tzeros(5)), "t_linear: the bias must have shape (6)");
  CHECK_ERROR(t_linear(x, Wok, tzeros(1, 6)), "(1, 6)");
}

/* t_linear at the ranks the issue lists ("any leading dims, optional bias") that the check
 * above leaves out: a 1-D row with bias, 2-D without, 4-D with. */
TEST(linear_gradcheck_other_ranks) {
  Tensor *r1[3] = {tensor_randn(SHAPE(4), 0, 1), tensor_randn(SHAPE(4, 3), 0, 1),
                   tensor_randn(SHAPE(3), 0, 1)};
  GRADCHECK(f_linear, r1, 3, NULL);
  Tensor *r2[2] = {tensor_randn(SHAPE(5, 3), 0, 1), tensor_randn(SHAPE(3, 2), 0, 1)};
  GRADCHECK(f_linear_nobias, r2, 2, NULL);
  Tensor *r4[3] = {tensor_randn(SHAPE(2, 1, 3, 4), 0, 1), tensor_randn(SHAPE(4, 3), 0, 1),
                   tensor_randn(SHAPE(3), 0, 1)};
  GRADCHECK(f_linear, r4, 3, NULL);
}

TEST(matmul_null_inputs_are_errors) {
  /* an unfinished exercise returns NULL: the op must say so, not crash */
  Tensor *a = tzeros(2, 3, 4);
  CHECK_ERROR(t_matmul(NULL, tzeros(2, 2)), "t_matmul: a is NULL");
  CHECK_ERROR(t_bmm(a, NULL), "t_bmm: b is NULL");
  CHECK_ERROR(t_bmm_nt(NULL, a), "t_bmm_nt: a is NULL");
  CHECK_ERROR(t_linear(NULL, tzeros(4, 2), NULL), "t_linear: x is NULL");
}
