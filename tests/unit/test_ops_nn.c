/* Tests of ops/nn.c: layer norm, batch norm (training and eval), embedding, dropout. */
#include <math.h>

#include "../../common/ops.h"
#include "../../common/rng.h"
#include "../test.h"

/* float32 arithmetic on values of order 1: a few ulps */
#define TOL 1e-5

/* ---------- layer norm ---------- */

TEST(layer_norm_values) {
  /* row (1, 2, 3, 4): mean 2.5, biased var 1.25 */
  Tensor *x = tensor_from(2, (int[]){2, 4}, (float[]){1, 2, 3, 4, 5, 5, 5, 5});
  Tensor *gamma = tensor_from(1, (int[]){4}, (float[]){1, 1, 2, 2});
  Tensor *beta = tensor_from(1, (int[]){4}, (float[]){0, 0, 0, 1});
  Tensor *y = t_layer_norm(x, gamma, beta, 0.0f);
  float a = 1.5f / sqrtf(1.25f), b = 0.5f / sqrtf(1.25f);
  CHECK_CLOSE(y->data, ((float[]){-a, -b, 2 * b, 2 * a + 1}), 4, TOL, 0);
  /* a constant row normalizes to 0 (eps keeps 0/0 away), leaving beta */
  Tensor *z = t_layer_norm(x, gamma, beta, 1e-5f);
  CHECK_CLOSE(z->data + 4, ((float[]){0, 0, 0, 1}), 4, 0, 0);
  CHECK_ERROR(t_layer_norm(x, tzeros(3), beta, 1e-5f), "gamma has shape (3) but x is (2, 4)");
}

/* ---------- batch norm ---------- */

TEST(batch_norm_training_values_and_running_stats) {
  /* feature 0 = (1, 2, 3, 4): mean 2.5, biased var 1.25, unbiased var 5/3;
   * feature 1 = (0, 0, 2, 2): mean 1, biased var 1, unbiased var 4/3 */
  Tensor *x = tensor_from(2, (int[]){4, 2}, (float[]){1, 0, 2, 0, 3, 2, 4, 2});
  Tensor *rm = tensor_from(1, (int[]){2}, (float[]){0, 10});
  Tensor *rv = tensor_from(1, (int[]){2}, (float[]){1, 1});
  Tensor *y = t_batch_norm(x, NULL, NULL, rm, rv, true, 0.1f, 0.0f);
  float a = 1.5f / sqrtf(1.25f), b = 0.5f / sqrtf(1.25f);
  CHECK_CLOSE(y->data, ((float[]){-a, -1, -b, -1, b, 1, a, 1}), 8, TOL, 0);
  /* running = 0.9 * running + 0.1 * batch */
  CHECK_CLOSE(rm->data, ((float[]){0.25f, 9.1f}), 2, TOL, 0);
  CHECK_CLOSE(rv->data, ((float[]){0.9f + 0.5f / 3, 0.9f + 0.4f / 3}), 2, TOL, 0);
}

TEST(batch_norm_eval_uses_running_stats) {
  Tensor *x = tensor_from(2, (int[]){1, 2}, (float[]){3, 2.5f});
  Tensor *rm = tensor_from(1, (int[]){2}, (float[]){1, 2});
  Tensor *rv = tensor_from(1, (int[]){2}, (float[]){4, 0.25f});
  Tensor *gamma = tensor_from(1, (int[]){2}, (float[]){2, 3});
  Tensor *beta = tensor_from(1, (int[]){2}, (float[]){0.5f, 0});
  Tensor *y = t_batch_norm(x, gamma, beta, rm, rv, false, 0.1f, 0.0f);
  CHECK_CLOSE(y->data, ((float[]){2 * 1 + 0.5f, 3 * 1}), 2, TOL, 0);
  /* eval leaves the running statistics alone */
  CHECK_CLOSE(rm->data, ((float[]){1, 2}), 2, 0, 0);
  CHECK_CLOSE(rv->data, ((float[]){4, 0.25f}), 2, 0, 0);
}

TEST(batch_norm_errors) {
  Tensor *rm = tzeros(3), *rv = tensor_full(1, (int[]){3}, 1);
  CHECK_ERROR(t_batch_norm(tzeros(1, 3), NULL, NULL, rm, rv, true, 0.1f, 1e-5f),
              "more than one value per feature");
  CHECK_ERROR(t_batch_norm(tzeros(4, 3), NULL, NULL, NULL, NULL, false, 0.1f, 1e-5f),
              "pass running_mean and running_var");
  CHECK_ERROR(t_batch_norm(tzeros(4, 3), tzeros(2), NULL, rm, rv, true, 0.1f, 1e-5f),
              "gamma has shape (2) but x is (4, 3)");
  CHECK_ERROR(t_batch_norm(tzeros(4, 3), NULL, NULL, tzeros(4), rv, true, 0.1f, 1e-5f),
              "running_mean has shape (4)");
}

/* ---------- embedding ---------- */

TEST(embedding_values_and_errors) {
  Tensor *W = tensor_from(2, (int[]){4, 2}, (float[]){0, 1, 10, 11, 20, 21, 30, 31});
  Tensor *ids = tensor_from(2, (int[]){2, 2}, (float[]){1, 3, 0, 1});
  Tensor *e = t_embedding(W, ids);
  CHECK_INT(e->ndim, 3);
  CHECK_INT(e->shape[2], 2);
  CHECK_CLOSE(e->data, ((float[]){10, 11, 30, 31, 0, 1, 10, 11}), 8, 0, 0);
  CHECK_ERROR(t_embedding(W, tensor_from(1, (int[]){2}, (float[]){1, 4})),
              "ids[1] = 4 is not an index in [0, 4)");
  CHECK_ERROR(t_embedding(W, tensor_from(1, (int[]){1}, (float[]){0.5f})), "ids[0] = 0.5");
  CHECK_ERROR(t_embedding(W, tzeros(1, 1, 1, 1)), "would exceed 4 dims");
  CHECK_ERROR(t_embedding(tzeros(4), ids), "W must be a (vocab, dim) table, got (4)");
}

/* ---------- dropout ---------- */

TEST(dropout_statistics) {
  int n = 20000;
  float p = 0.3f;
  Tensor *x = tensor_full(1, (int[]){n}, 2.0f);
  Tensor *y = t_dropout(x, p, true);
  int zeros = 0, bad = 0;
  for (int i = 0; i < n; i++) {
    if (y->data[i] == 0)
      zeros++;
    else
      bad += fabsf(y->data[i] - 2.0f / (1 - p)) > 1e-6f; /* 2 / 0.7 rounded once */
  }
  CHECK_INT(bad, 0);
  /* the zeroed fraction has std sqrt(p (1-p) / n) = 0.0032; 0.02 is over 6 sigma */
  CHECK_NEAR((double)zeros / n, p, 0.02);
}

TEST(dropout_identity_and_errors) {
  Tensor *x = tensor_randn(2, (int[]){3, 4}, 0, 1);
  CHECK(t_dropout(x, 0.5f, false) == x); /* eval: the input itself */
  CHECK(t_dropout(x, 0.0f, true) == x);
  CHECK_ERROR(t_dropout(x, 1.0f, true), "p = 1 must be in [0, 1)");
  CHECK_ERROR(t_dropout(x, -0.1f, false), "must be in [0, 1)");
  CHECK_ERROR(t_dropout(x, NAN, true), "must be in [0, 1)");
}

TEST(dropout_same_seed_same_mask) {
  Tensor *x = tensor_full(1, (int[]){64}, 1.0f);
  rng_seed(7);
  Tensor *a = t_dropout(x, 0.5f, true);
  rng_seed(7);
  Tensor *b = t_dropout(x, 0.5f, true);
  CHECK_CLOSE(a->data, b->data, 64, 0, 0);
}

/* ---------- gradient checks ---------- */

static Tensor *f_layer_norm(Tensor **in, void *ctx) {
  return t_layer_norm(in[0], in[1], in[2], 1e-5f);
}
static Tensor *f_batch_norm_train(Tensor **in, void *ctx) {
  Tensor **stats = ctx; /* updated on every call; training output does not depend on them */
  return t_batch_norm(in[0], in[1], in[2], stats[0], stats[1], true, 0.1f, 1e-5f);
}
static Tensor *f_batch_norm_eval(Tensor **in, void *ctx) {
  Tensor **stats = ctx;
  return t_batch_norm(in[0], in[1], in[2], stats[0], stats[1], false, 0.1f, 1e-5f);
}
static Tensor *f_embedding(Tensor **in, void *ctx) { return t_embedding(in[0], ctx); }
static Tensor *f_dropout(Tensor **in, void *ctx) {
  rng_seed(42); /* every evaluation draws the same mask */
  return t_dropout(in[0], 0.4f, true);
}

TEST(grad_layer_norm) {
  Tensor *x = tensor_randn(3, (int[]){2, 3, 5}, 0, 1);
  Tensor *gamma = tensor_randn(1, (int[]){5}, 1, 0.5f), *beta = tensor_randn(1, (int[]){5}, 0, 1);
  GRADCHECK(f_layer_norm, ((Tensor *[]){x, gamma, beta}), 3, NULL);
}

TEST(grad_batch_norm_training) {
  Tensor *x = tensor_randn(2, (int[]){6, 3}, 0, 1);
  Tensor *gamma = tensor_randn(1, (int[]){3}, 1, 0.5f), *beta = tensor_randn(1, (int[]){3}, 0, 1);
  Tensor *stats[2] = {tzeros(3), tensor_full(1, (int[]){3}, 1)};
  GRADCHECK(f_batch_norm_train, ((Tensor *[]){x, gamma, beta}), 3, stats);
}

TEST(grad_batch_norm_eval) {
  Tensor *x = tensor_randn(2, (int[]){6, 3}, 0, 1);
  Tensor *gamma = tensor_randn(1, (int[]){3}, 1, 0.5f), *beta = tensor_randn(1, (int[]){3}, 0, 1);
  Tensor *stats[2] = {tensor_randn(1, (int[]){3}, 0, 1), tensor_rand(1, (int[]){3}, 0.5f, 2)};
  GRADCHECK(f_batch_norm_eval, ((Tensor *[]){x, gamma, beta}), 3, stats);
}

TEST(grad_embedding) {
  Tensor *W = tensor_randn(2, (int[]){5, 3}, 0, 1);
  Tensor *ids = tensor_from(2, (int[]){2, 3}, (float[]){1, 4, 1, 0, 1, 2}); /* id 1 three times */
  GRADCHECK(f_embedding, (Tensor *[]){W}, 1, ids);
  CHECK_CLOSE(W->grad + 3 * 3, ((float[]){0, 0, 0}), 3, 0, 0); /* id 3 unused: no gradient */
}

TEST(grad_dropout) {
  Tensor *x = tensor_randn(2, (int[]){4, 5}, 0, 1);
  GRADCHECK(f_dropout, (Tensor *[]){x}, 1, NULL);
}

/* Batch norm of a 3-D input normalizes each feature over all (batch, position) pairs. */
TEST(grad_batch_norm_training_3d) {
  Tensor *x = tensor_randn(3, (int[]){2, 3, 4}, 0, 1);
  Tensor *gamma = tensor_randn(1, (int[]){4}, 1, 0.5f), *beta = tensor_randn(1, (int[]){4}, 0, 1);
  Tensor *stats[2] = {tzeros(4), tensor_full(1, (int[]){4}, 1)};
  GRADCHECK(f_batch_norm_train, ((Tensor *[]){x, gamma, beta}), 3, stats);
}

TEST(grad_layer_norm_2d) {
  Tensor *x = tensor_randn(2, (int[]){4, 6}, 0, 2);
  Tensor *gamma = tensor_randn(1, (int[]){6}, 1, 0.5f), *beta = tensor_randn(1, (int[]){6}, 0, 1);
  GRADCHECK(f_layer_norm, ((Tensor *[]){x, gamma, beta}), 3, NULL);
}
