/* Graded tests of exercises 3.1 (gru_cell), 3.2 (lstm_cell) and 3.3 (additive_attention_cached),
 * labs/lab03/. 11 points. The references are the definitions evaluated in double precision in
 * this file (in the reference build only: GRADE_REF, tests/grade/grade.h); gradients are
 * compared with central differences of those definitions. Exercise 3.3 also runs your lab02
 * masked_softmax. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../grade.h"
#include "../../sine_fill.h"
#include "lab03/lab03.h"

#if GRADE_REF
static double sg(double x) { return 1.0 / (1.0 + exp(-x)); }
#endif

/* fixed inputs (sine_fill.h) of shape (r, c) and (n) */
static Tensor *gen(int r, int c, double a, double b, double scale) {
  return sine_tensor(2, (const int[]){r, c}, a, b, scale);
}
static Tensor *gen1(int n, double a, double b, double scale) {
  return sine_tensor(1, (const int[]){n}, a, b, scale);
}

enum { B = 3, IN = 4, HID = 3 };

#if GRADE_REF
/* The cell in double. x (B, IN), h (B, HID), c (B, HID) (LSTM); out: H' then C'. */
static void ref_cell(int lstm, const RNNLayerParams *p, const double *x, const double *h,
                     const double *c, double *out) {
  int G = (lstm ? 4 : 3) * HID;
  for (int b = 0; b < B; b++) {
    double gx[12], gh[12];
    for (int g = 0; g < G; g++) {
      gx[g] = p->b_xh->data[g];
      gh[g] = p->b_hh->data[g];
      for (int i = 0; i < IN; i++) gx[g] += x[b * IN + i] * p->W_xh->data[i * G + g];
      for (int i = 0; i < HID; i++) gh[g] += h[b * HID + i] * p->W_hh->data[i * G + g];
    }
    for (int j = 0; j < HID; j++) {
      if (!lstm) {
        double r = sg(gx[j] + gh[j]), z = sg(gx[HID + j] + gh[HID + j]);
        double n = tanh(gx[2 * HID + j] + r * gh[2 * HID + j]);
        out[b * HID + j] = (1 - z) * n + z * h[b * HID + j];
      } else {
        double i_ = sg(gx[j] + gh[j]), f = sg(gx[HID + j] + gh[HID + j]);
        double g_ = tanh(gx[2 * HID + j] + gh[2 * HID + j]), o = sg(gx[3 * HID + j] + gh[3 * HID + j]);
        double cn = f * c[b * HID + j] + i_ * g_;
        out[b * HID + j] = o * tanh(cn);
        out[B * HID + b * HID + j] = cn;
      }
    }
  }
}
#endif

static RNNLayerParams params(int lstm) {
  int G = (lstm ? 4 : 3) * HID;
  RNNLayerParams p = {gen(IN, G, 0.7, 0.1, 0.6), gen(HID, G, 1.3, 0.4, 0.6), gen1(G, 0.9, 0.2, 0.3),
                      gen1(G, 1.7, 0.5, 0.3)};
  p.W_xh->requires_grad = p.W_hh->requires_grad = true;
  return p;
}

#if GRADE_REF
static void to_double(const Tensor *t, double *d) {
  for (long i = 0; i < t->size; i++) d[i] = t->data[i];
}

/* d/dX and d/dH of sum(H' * w) (w fixed) by central differences of the definition. */
static void ref_grads(int lstm, const RNNLayerParams *p, double *x, double *h, double *c,
                      const double *w, double *gx, double *gh) {
  double out[2 * B * HID];
  const double e = 1e-6;
  for (int which = 0; which < 2; which++) {
    double *v = which ? h : x, *g = which ? gh : gx;
    int n = which ? B * HID : B * IN;
    for (int i = 0; i < n; i++) {
      double o = v[i], lp = 0, lm = 0;
      v[i] = o + e;
      ref_cell(lstm, p, x, h, c, out);
      for (int k = 0; k < B * HID; k++) lp += out[k] * w[k];
      v[i] = o - e;
      ref_cell(lstm, p, x, h, c, out);
      for (int k = 0; k < B * HID; k++) lm += out[k] * w[k];
      v[i] = o;
      g[i] = (lp - lm) / (2 * e);
    }
  }
}
#endif

static void check_cell(int lstm, bool grads) {
  RNNLayerParams p = params(lstm);
  Tensor *X = gen(B, IN, 0.37, 0.3, 1.5), *H = gen(B, HID, 0.53, 1.1, 0.9), *C = gen(B, HID, 0.21, 0.7, 1.2);
  X->requires_grad = H->requires_grad = true;
#if GRADE_REF
  double x[B * IN], h[B * HID], c[B * HID], want[2 * B * HID];
  to_double(X, x);
  to_double(H, h);
  to_double(C, c);
  ref_cell(lstm, &p, x, h, c, want);
  float wf[2 * B * HID];
  for (int i = 0; i < 2 * B * HID; i++) wf[i] = (float)want[i];
#endif
  Tensor *Cn = NULL;
  Tensor *Hn = lstm ? lstm_cell(&p, X, H, C, &Cn) : gru_cell(&p, X, H);
  EXPECT_NOT_NULL(Hn, lstm ? "lstm_cell" : "gru_cell");
  if (!EXPECT_SHAPE(Hn, "H'", B, HID)) return;
  /* float32 arithmetic on values of order 1: a few ulps */
  if (!grads) {
    EXPECT_CLOSE(Hn->data, wf, B * HID, 1e-5, 1e-4, "H' against the definition");
    if (lstm) {
      EXPECT(Cn != NULL, "lstm_cell must store C' in *C_new");
      if (Cn) EXPECT_CLOSE(Cn->data, wf + B * HID, B * HID, 1e-5, 1e-4, "C' against the definition");
    }
    return;
  }
  double w[B * HID];
  Tensor *W = tensor_new(2, (const int[]){B, HID});
  for (int i = 0; i < B * HID; i++) W->data[i] = (float)(w[i] = cos(0.7 * i));
  ag_backward(t_sum_all(t_mul(Hn, W)));
  EXPECT(X->grad && H->grad, "no gradient reached X or H: use the differentiable t_* ops");
  if (!X->grad || !H->grad) return;
#if GRADE_REF
  double gx[B * IN], gh[B * HID];
  ref_grads(lstm, &p, x, h, c, w, gx, gh);
  float fx[B * IN], fh[B * HID];
  for (int i = 0; i < B * IN; i++) fx[i] = (float)gx[i];
  for (int i = 0; i < B * HID; i++) fh[i] = (float)gh[i];
#endif
  /* finite differences with step 1e-6 in double: ~1e-9 error; the rest is float32 */
  EXPECT_CLOSE(X->grad, fx, B * IN, 1e-4, 1e-3, "d(sum H' w)/dX");
  EXPECT_CLOSE(H->grad, fh, B * HID, 1e-4, 1e-3, "d(sum H' w)/dH");
  EXPECT(p.W_xh->grad && p.W_hh->grad,
         "no gradient reached W_xh or W_hh: use the t_* ops on them");
}

GRADED_TEST(lab03_gru_cell_forward, 2, "3.1 gru_cell: one GRU step, gates [r | z | n]") {
  check_cell(0, false);
}
GRADED_TEST(lab03_gru_cell_gradient, 2, "3.1 gru_cell: gradients flow to X, H and the weights") {
  check_cell(0, true);
}
GRADED_TEST(lab03_lstm_cell_forward, 2, "3.2 lstm_cell: one LSTM step, H' and C'") {
  check_cell(1, false);
}
GRADED_TEST(lab03_lstm_cell_gradient, 1, "3.2 lstm_cell: gradients") { check_cell(1, true); }

/* ---------------------------------------------------------------- 3.3 */

enum { AB = 2, AQ = 2, AK = 4, AH = 3, AV = 2, AQS = 5 };

static void attn_setup(AdditiveAttention *a, ParamSet *ps) {
  AdditiveAttention_init(a, ps, "t", AH, AQS, AH, 0.0f);
  sine_fill(a->W_q.W->data, AQS * AH, 0.9, 0.3, 0.5);
  for (int i = 0; i < AH; i++) a->w_v.W->data[i] = (float)(cos(1.1 * i));
}

#if GRADE_REF
/* out (AB, AQ, AV) and weights (AB, AQ, AK) by the definition; valid lengths per batch row. */
static void ref_attn(const AdditiveAttention *a, const double *q, const double *kp,
                     const double *v, const int *valid, double *out, double *wts) {
  for (int b = 0; b < AB; b++)
    for (int i = 0; i < AQ; i++) {
      double qp[AH], s[AK], m = -1e300, sum = 0;
      for (int c = 0; c < AH; c++) {
        qp[c] = 0;
        for (int r = 0; r < AQS; r++) qp[c] += q[(b * AQ + i) * AQS + r] * a->W_q.W->data[r * AH + c];
      }
      for (int j = 0; j < AK; j++) {
        s[j] = 0;
        for (int c = 0; c < AH; c++) s[j] += a->w_v.W->data[c] * tanh(qp[c] + kp[(b * AK + j) * AH + c]);
        if (j < valid[b] && s[j] > m) m = s[j];
      }
      for (int j = 0; j < AK; j++) sum += j < valid[b] ? exp(s[j] - m) : 0;
      for (int j = 0; j < AK; j++) wts[(b * AQ + i) * AK + j] = j < valid[b] ? exp(s[j] - m) / sum : 0;
      for (int d = 0; d < AV; d++) {
        double o = 0;
        for (int j = 0; j < AK; j++) o += wts[(b * AQ + i) * AK + j] * v[(b * AK + j) * AV + d];
        out[(b * AQ + i) * AV + d] = o;
      }
    }
}
#endif

static Tensor *gen3(int a, int b, int c, double f, double ph, double s) {
  return sine_tensor(3, (const int[]){a, b, c}, f, ph, s);
}

static void check_attention(int part) {
  ParamSet ps = {0};
  AdditiveAttention a;
  attn_setup(&a, &ps);
  Tensor *Q = gen3(AB, AQ, AQS, 0.61, 0.2, 1.0), *KP = gen3(AB, AK, AH, 0.83, 0.9, 1.2);
  Tensor *V = gen3(AB, AK, AV, 0.47, 1.3, 2.0);
  Tensor *valid = tensor_from(1, (const int[]){AB}, (const float[]){2, 3});
  Q->requires_grad = KP->requires_grad = true;
#if GRADE_REF
  const int vl[AB] = {2, 3};
  double q[AB * AQ * AQS], kp[AB * AK * AH], v[AB * AK * AV], out[AB * AQ * AV], wts[AB * AQ * AK];
  for (long i = 0; i < Q->size; i++) q[i] = Q->data[i];
  for (long i = 0; i < KP->size; i++) kp[i] = KP->data[i];
  for (long i = 0; i < V->size; i++) v[i] = V->data[i];
  ref_attn(&a, q, kp, v, vl, out, wts);
  float f[AB * AQ * AK];
#endif
  Tensor *Y = additive_attention_cached(&a, Q, KP, V, valid, false);
  if (!Y) {
    grade_fail(__FILE__, __LINE__, "additive_attention_cached: got NULL (not implemented yet?)");
    paramset_free(&ps);
    return;
  }
  if (part == 0) {
    if (EXPECT_SHAPE(Y, "output", AB, AQ, AV)) {
#if GRADE_REF
      for (int i = 0; i < AB * AQ * AV; i++) f[i] = (float)out[i];
#endif
      EXPECT_CLOSE(Y->data, f, AB * AQ * AV, 1e-5, 1e-4, "output against the definition"); /* float32 */
    }
  } else if (part == 1) {
    EXPECT(a.attention_weights != NULL, "store the weights in a->attention_weights");
    if (a.attention_weights && EXPECT_SHAPE(a.attention_weights, "attention_weights", AB, AQ, AK)) {
#if GRADE_REF
      for (int i = 0; i < AB * AQ * AK; i++) f[i] = (float)wts[i];
#endif
      EXPECT_CLOSE(a.attention_weights->data, f, AB * AQ * AK, 1e-6, 1e-4,
                   "weights (masked beyond the valid length) against the definition");
    }
  } else {
    /* d(sum Y)/d keys_proj by central differences of the definition */
    ag_backward(t_sum_all(Y));
    EXPECT(KP->grad && Q->grad, "no gradient reached keys_proj or queries: use the t_* ops");
    if (KP->grad) {
#if GRADE_REF
      float g[AB * AK * AH];
      double o2[AB * AQ * AV], w2[AB * AQ * AK];
      for (int i = 0; i < AB * AK * AH; i++) {
        double keep = kp[i], lp = 0, lm = 0;
        kp[i] = keep + 1e-6;
        ref_attn(&a, q, kp, v, vl, o2, w2);
        for (int k = 0; k < AB * AQ * AV; k++) lp += o2[k];
        kp[i] = keep - 1e-6;
        ref_attn(&a, q, kp, v, vl, o2, w2);
        for (int k = 0; k < AB * AQ * AV; k++) lm += o2[k];
        kp[i] = keep;
        g[i] = (float)((lp - lm) / 2e-6);
      }
#endif
      /* difference step 1e-6 in double; float32 backward */
      EXPECT_CLOSE(KP->grad, g, AB * AK * AH, 1e-4, 1e-3, "d(sum out)/d keys_proj");
    }
  }
  paramset_free(&ps);
}

GRADED_TEST(lab03_attention_step_output, 2,
            "3.3 additive_attention_cached: output with masked keys (your lab02 masked_softmax)") {
  check_attention(0);
}
GRADED_TEST(lab03_attention_step_weights, 1, "3.3 additive_attention_cached: weights stored") {
  check_attention(1);
}
GRADED_TEST(lab03_attention_step_gradient, 1, "3.3 additive_attention_cached: gradients") {
  check_attention(2);
}
