/* Graded tests of exercises 1.3 (NWKernelRegression_forward) and 1.4 (leave_one_out),
 * labs/lab01/nw_kernel_regression.c. 8 points. */
#include <math.h>

#include "../grade.h"
#include "lab01/lab01.h"

static const float Q[2] = {0.5f, 2.0f};                          /* (2) queries */
static const float K[6] = {0.0f, 1.0f, 2.5f, 1.5f, 2.2f, 3.9f};  /* (2, 3) keys */
static const float V[6] = {1.0f, -2.0f, 0.5f, 3.0f, 1.0f, 2.0f}; /* (2, 3) values */

#if GRADE_REF
/* The book's formula in double: y_hat_i = sum_j softmax_j(-((q_i - k_ij) w)^2 / 2) v_ij. */
static void reference(double w, double *y_hat, double *attn) {
  for (int i = 0; i < 2; i++) {
    double e[3], s = 0, acc = 0;
    for (int j = 0; j < 3; j++) {
      double d = ((double)Q[i] - K[i * 3 + j]) * w;
      s += e[j] = exp(-d * d / 2);
    }
    for (int j = 0; j < 3; j++) {
      if (attn) attn[i * 3 + j] = e[j] / s;
      acc += e[j] / s * V[i * 3 + j];
    }
    y_hat[i] = acc;
  }
}
#endif

GRADED_TEST(lab01_nwkr_forward, 3,
            "1.3 NWKernelRegression_forward: softmax(-((q - k) w)^2 / 2) pooling of values") {
  ParamSet ps = {0};
  NWKernelRegression net = {.w = param_new(&ps, "w", 1, (int[]){1})};
  net.w->data[0] = 1.5f;
  Tensor *y = NWKernelRegression_forward(&net, tensor_from(1, (int[]){2}, Q),
                                         tensor_from(2, (int[]){2, 3}, K),
                                         tensor_from(2, (int[]){2, 3}, V));
  if (!y) paramset_free(&ps);
  EXPECT_NOT_NULL(y, "NWKernelRegression_forward");
#if GRADE_REF
  double want[2], attn[6];
  reference(1.5, want, attn);
  float wantf[2] = {(float)want[0], (float)want[1]}, attnf[6];
  for (int i = 0; i < 6; i++) attnf[i] = (float)attn[i];
#endif
  if (EXPECT_SHAPE(y, "y_hat (one per query)", 2))
    EXPECT_CLOSE(y->data, wantf, 2, 1e-5, 1e-5, "y_hat with w = 1.5"); /* float32 softmax */
  EXPECT(net.attention_weights != NULL, "net->attention_weights was not set");
  if (net.attention_weights && EXPECT_SHAPE(net.attention_weights, "attention_weights", 2, 3))
    EXPECT_CLOSE(net.attention_weights->data, attnf, 6, 1e-6, 1e-5,
                 "attention_weights (rows: queries)"); /* float32 softmax */
  paramset_free(&ps);
}

GRADED_TEST(lab01_nwkr_gradient, 3,
            "1.3 NWKernelRegression_forward is differentiable: ag_backward reaches w") {
  ParamSet ps = {0};
  NWKernelRegression net = {.w = param_new(&ps, "w", 1, (int[]){1})};
  const float w = 0.8f;
  net.w->data[0] = w;
  Tensor *y = NWKernelRegression_forward(&net, tensor_from(1, (int[]){2}, Q),
                                         tensor_from(2, (int[]){2, 3}, K),
                                         tensor_from(2, (int[]){2, 3}, V));
  if (!y) paramset_free(&ps);
  EXPECT_NOT_NULL(y, "NWKernelRegression_forward");
  /* loss = 3 y_0 - 2 y_1; its derivative by central differences of the double formula */
  Tensor *loss = t_sum_all(t_mul(y, tensor_from(1, (int[]){2}, (float[]){3.0f, -2.0f})));
  ag_backward(loss);
#if GRADE_REF
  double yp[2], ym[2], h = 1e-5;
  reference(w + h, yp, NULL);
  reference(w - h, ym, NULL);
  double want = (3 * (yp[0] - ym[0]) - 2 * (yp[1] - ym[1])) / (2 * h);
#endif
  if (!net.w->grad) {
    grade_fail(__FILE__, __LINE__,
               "no gradient reached w: build y_hat from t_* ops (t_sub, t_mul, t_square, "
               "t_scale, t_softmax, t_bmm) instead of computing it by hand");
  } else {
    /* 1e-3 relative: float32 forward and backward against a double finite difference */
    EXPECT_NEAR(net.w->grad[0], want, 1e-3 * fmax(1.0, fabs(want)), "d loss / d w");
  }
  paramset_free(&ps);
}

GRADED_TEST(lab01_leave_one_out, 2, "1.4 leave_one_out: row i is x without x[i]") {
  Tensor *k = leave_one_out(tensor_from(1, (int[]){4}, (float[]){1, 2, 3, 4}));
  EXPECT_NOT_NULL(k, "leave_one_out");
  if (!EXPECT_SHAPE(k, "leave_one_out of 4 entries", 4, 3)) return;
  EXPECT_CLOSE(k->data, ((const float[]){2, 3, 4, 1, 3, 4, 1, 2, 4, 1, 2, 3}), 12, 0, 0,
               "leave_one_out({1, 2, 3, 4})");
  Tensor *k2 = leave_one_out(tensor_from(1, (int[]){2}, (float[]){7, -1}));
  EXPECT_NOT_NULL(k2, "leave_one_out of 2 entries");
  if (!EXPECT_SHAPE(k2, "leave_one_out of 2 entries", 2, 1)) return;
  EXPECT_CLOSE(k2->data, ((const float[]){-1, 7}), 2, 0, 0, "leave_one_out({7, -1})");
}
