/* Graded tests of exercises 7.4 (ViTMLP_forward) and 7.5 (ViT_head), labs/lab07/. 5 points.
 * Every expected value is computed here in double precision straight from the definitions, in
 * the reference build only (GRADE_REF, tests/grade/grade.h). */
#include <math.h>
#include <string.h>

#include "../grade.h"
#include "../../sine_fill.h"
#include "../../../chapters/07_vit/vit.h"
#include "vit_ref.h"

enum { B = 2, N = 3, HID = 4, MLPH = 6, STEPS = 5, CLASSES = 3 };

#if GRADE_REF
static double gelu_ref(double x) { return x * 0.5 * erfc(-x / sqrt(2.0)); } /* x Phi(x) */

/* GELU(dense1(x)) for rows of x (rows, dense1.in) into g (rows, dense1.out) */
static void hidden_ref(const ViTMLP *m, const float *xf, int rows, double *g) {
  double x[B * N * MLPH];
  for (int i = 0; i < rows * m->dense1.in; i++) x[i] = xf[i];
  lin_ref(x, rows, &m->dense1, g);
  for (int i = 0; i < rows * m->dense1.out; i++) g[i] = gelu_ref(g[i]);
}

/* The MLP without dropout (eval mode): dense2(GELU(dense1(x))) */
static void mlp_ref(const ViTMLP *m, const float *x, float *want) {
  double g[B * N * MLPH], y[B * N * HID];
  hidden_ref(m, x, B * N, g);
  lin_ref(g, B * N, &m->dense2, y);
  for (int i = 0; i < B * N * HID; i++) want[i] = (float)y[i];
}
#endif

/* An MLP (HID -> hidden -> HID) with fixed weights of order 1 and mixed signs. */
static void mlp_setup(ViTMLP *m, ParamSet *ps, const char *name, int hidden) {
  ViTMLP_init(m, ps, name, HID, hidden, 0.5f);
  sine_fill_tensor(m->dense1.W, 0.71, 0.3, 0.9);
  sine_fill_tensor(m->dense1.b, 0.53, 1.1, 0.4);
  sine_fill_tensor(m->dense2.W, 0.37, 0.7, 0.8);
  sine_fill_tensor(m->dense2.b, 0.91, 0.2, 0.3);
}

/* ---------------------------------------------------------------- 7.4 */

GRADED_TEST(lab07_vit_mlp, 2,
            "7.4 ViTMLP_forward: dense1, GELU, dense2 (evaluation mode: no dropout)") {
  ParamSet ps = {0};
  ViTMLP m;
  mlp_setup(&m, &ps, "mlp", MLPH); /* dropout 0.5: evaluation mode must not apply it */
  Tensor *X = sine_tensor(3, (const int[]){B, N, HID}, 0.43, 0.1, 1.5); /* (batch, steps, h) */
  X->requires_grad = true;
  Tensor *Y = ViTMLP_forward(&m, X, false);
  EXPECT_NOT_NULL(Y, "ViTMLP_forward");
  if (!EXPECT_SHAPE(Y, "ViTMLP_forward(X (2, 3, 4)), 6 hidden units", B, N, HID)) return;
#if GRADE_REF
  float want[B * N * HID];
  mlp_ref(&m, X->data, want);
#endif
  /* float32 products of 4 and 6 terms of order 1, and erf: a few ulps */
  EXPECT_CLOSE(Y->data, want, B * N * HID, 1e-5, 1e-4,
               "dense2(GELU(dense1(X))) in evaluation mode");
  ag_backward(t_sum_all(Y));
  EXPECT(m.dense1.W->grad != NULL, "no gradient reached dense1: build the MLP from "
         "Linear_forward, t_gelu and Dropout_forward, which record their backward");
  if (m.dense2.b->grad) /* d sum(Y) / d dense2.b = number of positions */
    EXPECT_NEAR(m.dense2.b->grad[0], B * N, 1e-5, "d sum(Y) / d dense2.b[0]");
  paramset_free(&ps);
}

GRADED_TEST(lab07_vit_mlp_dropout, 1,
            "7.4 ViTMLP_forward when training: dropout after GELU and after dense2") {
  ParamSet ps = {0};
  ViTMLP m, id;
  mlp_setup(&m, &ps, "mlp", MLPH);
  Tensor *X = sine_tensor(3, (const int[]){B, N, HID}, 0.43, 0.1, 1.5); /* (batch, steps, h) */
  /* dropout2 alone: every output is 0 or twice its evaluation-mode value */
  m.dropout1.p = 0.0f, m.dropout2.p = 0.5f;
  Tensor *Y = ViTMLP_forward(&m, X, true);
  EXPECT_NOT_NULL(Y, "ViTMLP_forward(training, dropout1 0, dropout2 0.5)");
  if (!EXPECT_SHAPE(Y, "ViTMLP_forward(X (2, 3, 4))", B, N, HID)) return;
#if GRADE_REF
  float want[B * N * HID];
  mlp_ref(&m, X->data, want);
#endif
  EXPECT_INVERTED_DROPOUT_HALF(Y->data, want, B * N * HID);
  /* dropout1 alone, with dense2 the identity: the output is the hidden layer after dropout1,
   * each entry 0 or twice GELU(dense1(X)) (dropout before GELU would give GELU(2 a) instead) */
  mlp_setup(&id, &ps, "id", HID);
  memset(id.dense2.W->data, 0, sizeof(float) * HID * HID);
  memset(id.dense2.b->data, 0, sizeof(float) * HID);
  for (int j = 0; j < HID; j++) id.dense2.W->data[j * HID + j] = 1.0f;
  id.dropout1.p = 0.5f, id.dropout2.p = 0.0f;
  Tensor *Z = ViTMLP_forward(&id, X, true);
  EXPECT_NOT_NULL(Z, "ViTMLP_forward(training, dropout1 0.5, dropout2 0)");
  if (!EXPECT_SHAPE(Z, "ViTMLP_forward(X (2, 3, 4)), 4 hidden units", B, N, HID)) return;
#if GRADE_REF
  double g[B * N * HID];
  float hid[B * N * HID];
  hidden_ref(&id, X->data, B * N, g);
  for (int i = 0; i < B * N * HID; i++) hid[i] = (float)g[i];
#endif
  EXPECT_INVERTED_DROPOUT_HALF(Z->data, hid, B * N * HID);
  paramset_free(&ps);
}

/* ---------------------------------------------------------------- 7.5 */

#if GRADE_REF
/* sum over (b, c) of head(LN(h_b)), for rows h (B, HID): the logits into logits when given */
static double head_ref(const ViT *m, const double *h, float *logits) {
  double z[B * HID], y[B * CLASSES], total = 0;
  for (int b = 0; b < B; b++) {
    double mu = 0, var = 0;
    for (int j = 0; j < HID; j++) mu += h[b * HID + j] / HID;
    for (int j = 0; j < HID; j++) var += (h[b * HID + j] - mu) * (h[b * HID + j] - mu) / HID;
    for (int j = 0; j < HID; j++)
      z[b * HID + j] = (h[b * HID + j] - mu) / sqrt(var + m->head_ln.eps) *
                           m->head_ln.gamma->data[j] + m->head_ln.beta->data[j];
  }
  lin_ref(z, B, &m->head, y);
  for (int i = 0; i < B * CLASSES; i++) {
    if (logits) logits[i] = (float)y[i];
    total += y[i];
  }
  return total;
}
#endif

GRADED_TEST(lab07_vit_head, 2,
            "7.5 ViT_head: LayerNorm, then Linear, on the <cls> row H[:, 0]") {
  ParamSet ps = {0};
  ViT m;
  ViT_init(&m, &ps, 4, 2, 1, HID, MLPH, 2, 1, 0.0f, 0.0f, false, CLASSES);
  sine_fill_tensor(m.head_ln.gamma, 0.61, 0.4, 0.5);
  for (int j = 0; j < HID; j++) m.head_ln.gamma->data[j] += 1.0f;
  sine_fill_tensor(m.head_ln.beta, 0.83, 0.9, 0.3);
  sine_fill_tensor(m.head.W, 0.47, 0.2, 0.9);
  sine_fill_tensor(m.head.b, 0.29, 1.3, 0.2);
  /* (batch, steps, h): rows of different means and spreads, so a head that skips the norm or
   * reads another row is off */
  Tensor *H = sine_tensor(3, (const int[]){B, STEPS, HID}, 0.57, 0.3, 2.0);
  for (int b = 0; b < B; b++)
    for (int j = 0; j < HID; j++) H->data[b * STEPS * HID + j] += 1.5f * (float)(b + 1);
  H->requires_grad = true;
  Tensor *L = ViT_head(&m, H);
  EXPECT_NOT_NULL(L, "ViT_head");
  if (!EXPECT_SHAPE(L, "ViT_head(H (2, 5, 4)), 3 classes", B, CLASSES)) {
    ViT_free(&m);
    return;
  }
#if GRADE_REF
  double h0[B * HID];
  for (int b = 0; b < B; b++)
    for (int j = 0; j < HID; j++) h0[b * HID + j] = H->data[b * STEPS * HID + j];
  float want[B * CLASSES];
  head_ref(&m, h0, want);
#endif
  /* float32 layer norm over 4 values and a product of 4 terms: a few ulps of order-1 logits */
  EXPECT_CLOSE(L->data, want, B * CLASSES, 1e-5, 1e-4, "logits head(head_ln(H[:, 0]))");
  ag_backward(t_sum_all(L));
  EXPECT(m.head_ln.beta->grad != NULL, "no gradient reached head_ln: normalize the <cls> row "
         "with LayerNorm_forward(&m->head_ln, ...) before the linear layer");
  EXPECT(H->grad != NULL, "no gradient reached H: take the <cls> row with t_slice / t_reshape");
  if (H->grad && EXPECT_SHAPE(H, "H", B, STEPS, HID)) {
#if GRADE_REF
    /* d sum(logits) / d H: central differences of the double definition on row 0 (h = 1e-6:
     * error ~1e-10), exactly 0 on the rows the head does not read */
    float gwant[B * STEPS * HID] = {0};
    for (int b = 0; b < B; b++)
      for (int j = 0; j < HID; j++) {
        double hp[B * HID], hm[B * HID];
        memcpy(hp, h0, sizeof h0), memcpy(hm, h0, sizeof h0);
        hp[b * HID + j] += 1e-6, hm[b * HID + j] -= 1e-6;
        gwant[b * STEPS * HID + j] = (float)((head_ref(&m, hp, NULL) - head_ref(&m, hm, NULL)) / 2e-6);
      }
#endif
    /* float32 layer-norm backward against the double derivative */
    EXPECT_CLOSE(H->grad, gwant, B * STEPS * HID, 2e-5, 1e-3,
                 "d sum(logits) / d H (only row 0, <cls>, is read)");
  }
  /* the lab's <cls>-only last block hands over one row: (batch, 1, h) */
  Tensor *H1 = tensor_new(3, (const int[]){B, 1, HID});
  for (int b = 0; b < B; b++) memcpy(H1->data + b * HID, H->data + b * STEPS * HID, sizeof(float) * HID);
  Tensor *L1 = ViT_head(&m, H1);
  EXPECT_NOT_NULL(L1, "ViT_head(H (2, 1, 4))");
  if (EXPECT_SHAPE(L1, "ViT_head(H (2, 1, 4))", B, CLASSES))
    EXPECT_CLOSE(L1->data, want, B * CLASSES, 1e-5, 1e-4, "logits of H (2, 1, 4): its one row");
  ViT_free(&m);
  paramset_free(&ps);
}
