/* Tests of ops/softmax.c: softmax, log-softmax, masked softmax, sequence mask, cross-entropy, MSE.
 * Expected values are worked out by hand: rows like (0, ln 2, ln 3) have softmax (1, 2, 3) / 6. */
#include <math.h>

#include "../../common/ops.h"
#include "../test.h"

/* float32 softmax/log: a few ulps of rounding on values of order 1 */
#define TOL 1e-6

static const float L2 = 0.69314718f, L3 = 1.09861229f; /* ln 2, ln 3 */

/* ---------- softmax / log-softmax ---------- */

TEST(softmax_forward_values) {
  Tensor *x = tensor_from(2, (int[]){2, 3}, (float[]){0, L2, L3, 1000, 1000, 1000});
  Tensor *y = t_softmax(x);
  /* the second row would overflow expf without the max subtraction */
  CHECK_CLOSE(y->data, ((float[]){1 / 6.f, 2 / 6.f, 3 / 6.f, 1 / 3.f, 1 / 3.f, 1 / 3.f}), 6, TOL, 0);
}

TEST(softmax_inf_rows) {
  Tensor *x = tensor_from(2, (int[]){2, 3},
                          (float[]){-INFINITY, -INFINITY, -INFINITY, 0, -INFINITY, 0});
  Tensor *y = t_softmax(x);
  /* all -inf: zeros, not NaN; one -inf: that entry gets exactly 0 */
  CHECK_CLOSE(y->data, ((float[]){0, 0, 0, 0.5f, 0, 0.5f}), 6, 0, 0);
}

TEST(log_softmax_forward_values) {
  Tensor *x = tensor_from(2, (int[]){2, 3}, (float[]){0, L2, L3, -INFINITY, -INFINITY, -INFINITY});
  Tensor *y = t_log_softmax(x);
  float l6 = logf(6);
  CHECK_CLOSE(y->data, ((float[]){-l6, L2 - l6, L3 - l6}), 3, TOL, 0);
  for (int j = 3; j < 6; j++) CHECK(y->data[j] == -INFINITY); /* log of a zero row */
}

/* ---------- masked softmax ---------- */
/* The kit has no masked-softmax op: lab 2's masked_softmax (exercise 2.1) is t_sequence_mask with
 * -inf, then t_softmax. These tests check that composition, and the valid_lens conventions
 * t_sequence_mask shares with it. */
static Tensor *mask_then_softmax(Tensor *X, Tensor *valid_lens) {
  return t_softmax(valid_lens ? t_sequence_mask(X, valid_lens, -INFINITY) : X);
}

TEST(masked_softmax_1d_lens) {
  /* d2l's example shape (2, 2, 4) with lengths (2, 3): equal scores give uniform rows over the
   * valid keys; the last row checks actual weighting */
  Tensor *X = tensor_from(3, (int[]){2, 2, 4},
                          (float[]){5, 5, 5, 5, 1, 1, 1, 1, /**/ 7, 7, 7, 7, 0, L2, L3, 9});
  Tensor *lens = tensor_from(1, (int[]){2}, (float[]){2, 3});
  Tensor *Y = mask_then_softmax(X, lens);
  CHECK_INT(Y->ndim, 3);
  CHECK_CLOSE(Y->data,
              ((float[]){.5f, .5f, 0, 0, .5f, .5f, 0, 0,
                         1 / 3.f, 1 / 3.f, 1 / 3.f, 0, 1 / 6.f, 2 / 6.f, 3 / 6.f, 0}),
              16, TOL, 0);
}

TEST(masked_softmax_2d_lens) {
  Tensor *X = tensor_from(3, (int[]){2, 2, 4},
                          (float[]){0, 0, 0, 0, 0, L2, L3, 9, /**/ 3, 3, 3, 3, 2, 2, 2, 2});
  Tensor *lens = tensor_from(2, (int[]){2, 2}, (float[]){1, 3, 2, 4});
  Tensor *Y = mask_then_softmax(X, lens);
  CHECK_CLOSE(Y->data,
              ((float[]){1, 0, 0, 0, 1 / 6.f, 2 / 6.f, 3 / 6.f, 0,
                         .5f, .5f, 0, 0, .25f, .25f, .25f, .25f}),
              16, TOL, 0);
}

TEST(masked_softmax_empty_rows_are_zero) {
  /* length 0, and a row whose only valid key scores -inf: zeros, not uniform, not NaN */
  Tensor *X = tensor_from(3, (int[]){2, 1, 3}, (float[]){1, 2, 3, -INFINITY, 4, 5});
  Tensor *Y = mask_then_softmax(X, tensor_from(1, (int[]){2}, (float[]){0, 1}));
  CHECK_CLOSE(Y->data, ((float[]){0, 0, 0, 0, 0, 0}), 6, 0, 0);
}

TEST(masked_softmax_clamps_and_null) {
  Tensor *X = tensor_from(2, (int[]){2, 3}, (float[]){0, L2, L3, 0, 0, 0});
  /* a length beyond the number of keys masks nothing, like no mask at all */
  Tensor *A = mask_then_softmax(X, tensor_from(1, (int[]){2}, (float[]){7, 3}));
  Tensor *B = mask_then_softmax(X, NULL);
  Tensor *C = t_softmax(X);
  CHECK_CLOSE(A->data, C->data, 6, 0, 0);
  CHECK_CLOSE(B->data, C->data, 6, 0, 0);
}

TEST(masked_softmax_4d_leading_dims_flattened) {
  /* X (2, 2, 1, 2) with 1-D lens: each length covers all rows of its batch entry */
  Tensor *X = tensor_full(4, (int[]){2, 2, 1, 2}, 0.0f);
  Tensor *Y = mask_then_softmax(X, tensor_from(1, (int[]){2}, (float[]){1, 2}));
  CHECK_CLOSE(Y->data, ((float[]){1, 0, 1, 0, .5f, .5f, .5f, .5f}), 8, TOL, 0);
}

TEST(masked_softmax_errors) {
  Tensor *X = tzeros(2, 2, 4);
  CHECK_ERROR(mask_then_softmax(X, tensor_from(1, (int[]){3}, (float[]){1, 1, 1})),
              "valid_lens has shape (3) but X is (2, 2, 4)");
  CHECK_ERROR(mask_then_softmax(X, tzeros(2, 3)), "expected (2) (one length per batch row) or (2, 2)");
  CHECK_ERROR(mask_then_softmax(tzeros(2, 4), tzeros(2, 2)), "expected (2), one length per row");
  CHECK_ERROR(mask_then_softmax(X, tensor_from(1, (int[]){2}, (float[]){1, -1})),
              "valid_lens[1] = -1");
  CHECK_ERROR(mask_then_softmax(X, tensor_from(1, (int[]){2}, (float[]){1.5f, 2})),
              "whole number");
  CHECK_ERROR(mask_then_softmax(X, tensor_from(1, (int[]){2}, (float[]){NAN, 2})), "whole number");
  CHECK_ERROR(mask_then_softmax(tzeros(4), tzeros(1)), "needs a batch dim");
  CHECK_ERROR(mask_then_softmax(NULL, tzeros(2)), "X is NULL");
}

TEST(sequence_mask_values) {
  /* d2l: sequence_mask([[1, 2, 3], [4, 5, 6]], [1, 2]) -> [[1, 0, 0], [4, 5, 0]] */
  Tensor *X = tensor_from(2, (int[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
  Tensor *Y = t_sequence_mask(X, tensor_from(1, (int[]){2}, (float[]){1, 2}), 0.0f);
  CHECK_CLOSE(Y->data, ((float[]){1, 0, 0, 4, 5, 0}), 6, 0, 0);
  Tensor *Z = t_sequence_mask(X, tensor_from(1, (int[]){2}, (float[]){0, 3}), -INFINITY);
  for (int j = 0; j < 3; j++) CHECK(Z->data[j] == -INFINITY);
  CHECK_CLOSE(Z->data + 3, ((float[]){4, 5, 6}), 3, 0, 0);
  CHECK_ERROR(t_sequence_mask(X, tzeros(3), 0), "valid_lens has shape (3)");
}

/* ---------- losses ---------- */

TEST(cross_entropy_values) {
  /* row (0, ln 2, ln 3): -log softmax = (ln 6, ln 3, ln 2) */
  Tensor *logits = tensor_from(3, (int[]){1, 3, 3},
                               (float[]){0, L2, L3, 0, L2, L3, 100, 100, 100});
  Tensor *labels = tensor_from(2, (int[]){1, 3}, (float[]){2, 0, 1});
  Tensor *l = t_cross_entropy(logits, labels, NULL);
  CHECK_INT(l->ndim, 2);
  CHECK_INT(l->shape[1], 3);
  CHECK_CLOSE(l->data, ((float[]){L2, logf(6), L3}), 3, 1e-5, 0); /* ln of sums, float32 */
  Tensor *w = tensor_from(2, (int[]){1, 3}, (float[]){0.5f, 0, 1});
  Tensor *lw = t_cross_entropy(logits, labels, w);
  CHECK_CLOSE(lw->data, ((float[]){0.5f * L2, 0, L3}), 3, 1e-5, 0); /* as above */
}

TEST(cross_entropy_matches_log_softmax_large) {
  /* the seq2seq output layer's size: (64, 10, 201), enough to take the threaded path */
  int B = 64, T = 10, V = 201;
  Tensor *logits = tensor_randn(3, (int[]){B, T, V}, 0, 3);
  Tensor *labels = tensor_new(2, (int[]){B, T});
  Tensor *w = tensor_new(2, (int[]){B, T});
  for (int i = 0; i < B * T; i++) {
    labels->data[i] = (float)((i * 37) % V);
    w->data[i] = (float)(i % 3 != 0);
  }
  logits->requires_grad = true;
  Tensor *l = t_cross_entropy(logits, labels, w);
  Tensor *ls = t_log_softmax(logits);
  int bad = 0;
  for (int i = 0; i < B * T; i++) {
    float want = -ls->data[(long)i * V + (int)labels->data[i]] * w->data[i];
    bad += !(fabsf(l->data[i] - want) <= 1e-5f * (1 + fabsf(want))); /* two float32 orders */
  }
  CHECK_INT(bad, 0);
  /* gradient of the summed loss: w * (softmax - onehot); each row sums to 0 */
  ag_backward_with(l, NULL);
  Tensor *p = t_softmax(logits);
  bad = 0;
  for (int i = 0; i < B * T; i++)
    for (int j = 0; j < V; j++) {
      long k = (long)i * V + j;
      float want = w->data[i] * (p->data[k] - (j == (int)labels->data[i]));
      bad += !(fabsf(logits->grad[k] - want) <= 1e-6f); /* float32 probabilities */
    }
  CHECK_INT(bad, 0);
}

TEST(cross_entropy_errors) {
  Tensor *logits = tzeros(2, 3, 5);
  CHECK_ERROR(t_cross_entropy(logits, tensor_from(2, (int[]){2, 3}, (float[]){0, 1, 2, 3, 5, 0}),
                              NULL),
              "labels[4] = 5 is not a class index in [0, 5)");
  CHECK_ERROR(t_cross_entropy(logits, tensor_full(2, (int[]){2, 3}, -1), NULL), "labels[0] = -1");
  CHECK_ERROR(t_cross_entropy(logits, tzeros(2, 2), NULL),
              "labels has shape (2, 2) but logits are (2, 3, 5)");
  CHECK_ERROR(t_cross_entropy(logits, tzeros(2, 3), tzeros(3, 2)), "weights has shape (3, 2)");
  /* a single row of logits takes a (1) label */
  Tensor *l = t_cross_entropy(tensor_from(1, (int[]){2}, (float[]){0, 0}), tzeros(1), NULL);
  CHECK_NEAR(l->data[0], L2, 1e-6); /* ln 2 in float32 */
}

TEST(mse_values) {
  Tensor *l = t_mse(tensor_from(1, (int[]){2}, (float[]){1, 2}),
                    tensor_from(1, (int[]){2}, (float[]){3, 5}));
  CHECK_INT(l->size, 1);
  CHECK_NEAR(l->data[0], 6.5, 0); /* (4 + 9) / 2 is exact */
  CHECK_ERROR(t_mse(tzeros(2, 3), tzeros(3, 2)), "pred (2, 3) and target (3, 2)");
}

/* ---------- gradient checks ---------- */

/* A fresh copy per GRADCHECK: the tape of an earlier check in the same test still holds nodes
 * with gradients, and a later backward would push them into a shared input again. */
static Tensor *fresh(const Tensor *x) { return tensor_from(x->ndim, x->shape, x->data); }

static Tensor *f_softmax(Tensor **in, void *ctx) { return t_softmax(in[0]); }
static Tensor *f_log_softmax(Tensor **in, void *ctx) { return t_log_softmax(in[0]); }
static Tensor *f_masked_softmax(Tensor **in, void *ctx) { return mask_then_softmax(in[0], ctx); }
static Tensor *f_sequence_mask(Tensor **in, void *ctx) { return t_sequence_mask(in[0], ctx, -1.5f); }
static Tensor *f_mse(Tensor **in, void *ctx) { return t_mse(in[0], in[1]); }

TEST(grad_softmax_family) {
  Tensor *x = tensor_randn(2, (int[]){3, 5}, 0, 1);
  GRADCHECK(f_softmax, (Tensor *[]){fresh(x)}, 1, NULL);
  GRADCHECK(f_log_softmax, (Tensor *[]){fresh(x)}, 1, NULL);
}

TEST(grad_masked_softmax) {
  Tensor *X = tensor_randn(3, (int[]){2, 3, 5}, 0, 1);
  Tensor *lens1 = tensor_from(1, (int[]){2}, (float[]){3, 0}); /* a zero-length batch row */
  GRADCHECK(f_masked_softmax, (Tensor *[]){X}, 1, lens1);
  /* masked keys and empty rows get exactly zero gradient */
  for (int j = 3; j < 5; j++) CHECK(X->grad[j] == 0);
  for (int j = 15; j < 30; j++) CHECK(X->grad[j] == 0);
  Tensor *lens2 = tensor_from(2, (int[]){2, 3}, (float[]){1, 5, 0, 2, 4, 3});
  GRADCHECK(f_masked_softmax, (Tensor *[]){fresh(X)}, 1, lens2);
  GRADCHECK(f_masked_softmax, (Tensor *[]){fresh(X)}, 1, NULL);
}

TEST(grad_sequence_mask) {
  Tensor *X = tensor_randn(3, (int[]){2, 3, 4}, 0, 1);
  GRADCHECK(f_sequence_mask, (Tensor *[]){fresh(X)}, 1,
            tensor_from(1, (int[]){2}, (float[]){1, 3}));
  GRADCHECK(f_sequence_mask, (Tensor *[]){fresh(X)}, 1,
            tensor_from(2, (int[]){2, 3}, (float[]){0, 4, 2, 1, 3, 9}));
}

typedef struct {
  Tensor *labels, *weights;
} CeCtx;
static Tensor *f_cross_entropy(Tensor **in, void *ctx) {
  CeCtx *c = ctx;
  return t_cross_entropy(in[0], c->labels, c->weights);
}

TEST(grad_cross_entropy) {
  Tensor *logits = tensor_randn(3, (int[]){2, 3, 6}, 0, 1);
  CeCtx c = {tensor_from(2, (int[]){2, 3}, (float[]){0, 5, 2, 2, 1, 3}),
             tensor_from(2, (int[]){2, 3}, (float[]){1, 0.5f, 0, 2, 1, 0})};
  GRADCHECK(f_cross_entropy, (Tensor *[]){fresh(logits)}, 1, &c);
  c.weights = NULL;
  GRADCHECK(f_cross_entropy, (Tensor *[]){fresh(logits)}, 1, &c);
}

TEST(grad_mse) {
  Tensor *p = tensor_randn(2, (int[]){3, 4}, 0, 1), *t = tensor_randn(2, (int[]){3, 4}, 0, 1);
  GRADCHECK(f_mse, ((Tensor *[]){p, t}), 2, NULL);
}

/* Softmax and log-softmax over the last dim of 3-D and 4-D inputs: every leading position is
 * its own row. */
TEST(grad_softmax_family_higher_rank) {
  Tensor *x3 = tensor_randn(3, (int[]){2, 3, 4}, 0, 1);
  GRADCHECK(f_softmax, (Tensor *[]){fresh(x3)}, 1, NULL);
  GRADCHECK(f_log_softmax, (Tensor *[]){fresh(x3)}, 1, NULL);
  Tensor *x4 = tensor_randn(4, (int[]){2, 2, 2, 3}, 0, 1);
  GRADCHECK(f_softmax, (Tensor *[]){fresh(x4)}, 1, NULL);
  GRADCHECK(f_log_softmax, (Tensor *[]){fresh(x4)}, 1, NULL);
}

TEST(grad_masked_softmax_4d_leading_dims) {
  /* X (batch, heads, queries, keys) with one length per batch row (the leading dims are
   * flattened into the batch row's queries); a length-0 batch row gets zero gradient */
  Tensor *X = tensor_randn(4, (int[]){2, 2, 3, 4}, 0, 1);
  Tensor *lens = tensor_from(1, (int[]){2}, (float[]){0, 3});
  GRADCHECK(f_masked_softmax, (Tensor *[]){X}, 1, lens);
  for (int j = 0; j < 24; j++) CHECK(X->grad[j] == 0);
  for (int r = 6; r < 12; r++) CHECK(X->grad[r * 4 + 3] == 0); /* key 3 masked */
}
