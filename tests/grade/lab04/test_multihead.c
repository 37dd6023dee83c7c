/* Graded tests of exercises 4.1 (transpose_qkv), 4.2 (transpose_output) and 4.3
 * (MultiHeadAttention_forward), labs/lab04/. 9 points. The multi-head forward also runs your
 * lab02 DotProductAttention_forward (and masked_softmax): those must work too. Expected values
 * exist in the reference build only (GRADE_REF, tests/grade/grade.h). */
#include <math.h>
#include <string.h>

#include "../grade.h"
#include "../../sine_fill.h"
#include "lab04/lab04.h"

/* X (B, n, H*d) filled with 100 b + 10 i + c / 10: every entry tells where it came from. */
static Tensor *labelled(int B, int n, int hd) {
  Tensor *X = tensor_new(3, (int[]){B, n, hd});
  for (int b = 0; b < B; b++)
    for (int i = 0; i < n; i++)
      for (int c = 0; c < hd; c++) X->data[((long)b * n + i) * hd + c] = 100.0f * b + 10.0f * i + 0.1f * c;
  return X;
}

GRADED_TEST(lab04_transpose_qkv, 2,
            "4.1 transpose_qkv: (batch, n, h) -> (batch * heads, n, h / heads), head-major") {
  const int B = 2, n = 3, H = 4, d = 3;
  Tensor *X = labelled(B, n, H * d);
  X->requires_grad = true;
  Tensor *Y = transpose_qkv(X, H);
  EXPECT_NOT_NULL(Y, "transpose_qkv");
  if (!EXPECT_SHAPE(Y, "transpose_qkv((2, 3, 12), 4 heads)", B * H, n, d)) return;
#if GRADE_REF
  float want[2 * 4 * 3 * 3];
  for (int b = 0; b < B; b++)
    for (int h = 0; h < H; h++)
      for (int i = 0; i < n; i++)
        for (int k = 0; k < d; k++)
          want[((b * H + h) * n + i) * d + k] = X->data[(b * n + i) * H * d + h * d + k];
#endif
  EXPECT_CLOSE(Y->data, want, Y->size, 0, 0,
               "row b*heads + h must hold feature block h of batch row b (exact copy)");
  /* gradients must flow back to X: use the t_* ops, not a hand-made copy */
  ag_backward(t_sum_all(t_scale(Y, 2.0f)));
  EXPECT(X->grad != NULL, "no gradient reached X: build the result with t_reshape/t_permute");
  if (X->grad) {
#if GRADE_REF
    float twos[72];
    for (int i = 0; i < 72; i++) twos[i] = 2.0f;
#endif
    EXPECT_CLOSE(X->grad, twos, 72, 0, 0, "gradient of sum(2 Y) w.r.t. X");
  }
}

GRADED_TEST(lab04_transpose_output, 2,
            "4.2 transpose_output: (batch * heads, n, d) -> (batch, n, heads * d), the inverse") {
  const int B = 2, n = 3, H = 2, d = 4;
  Tensor *Y = labelled(B * H, n, d); /* row r = b*H + h */
  Tensor *Z = transpose_output(Y, H);
  EXPECT_NOT_NULL(Z, "transpose_output");
  if (!EXPECT_SHAPE(Z, "transpose_output((4, 3, 4), 2 heads)", B, n, H * d)) return;
#if GRADE_REF
  float want[2 * 3 * 8];
  for (int b = 0; b < B; b++)
    for (int i = 0; i < n; i++)
      for (int h = 0; h < H; h++)
        for (int k = 0; k < d; k++)
          want[(b * n + i) * H * d + h * d + k] = Y->data[((b * H + h) * n + i) * d + k];
#endif
  EXPECT_CLOSE(Z->data, want, Z->size, 0, 0,
               "columns h*d .. h*d+d-1 of (b, i) must come from row b*heads + h (exact copy)");
  /* round trip with transpose_qkv, when that is implemented */
  Tensor *X = labelled(3, 5, 6);
  Tensor *Q = transpose_qkv(X, 3);
  if (Q) {
    Tensor *back = transpose_output(Q, 3);
    EXPECT_NOT_NULL(back, "transpose_output");
    if (EXPECT_SHAPE(back, "transpose_output(transpose_qkv(X))", 3, 5, 6))
      EXPECT_CLOSE(back->data, X->data, X->size, 0, 0, "transpose_output(transpose_qkv(X)) == X");
  }
}

/* ---------- the forward pass against a per-head loop in double ---------- */

enum { B = 2, NQ = 3, NK = 4, QS = 3, KS = 2, VS = 5, HID = 6, HEADS = 3 };


typedef struct {
  float q[B * NQ * QS], k[B * NK * KS], v[B * NK * VS];
  float Wq[QS * HID], Wk[KS * HID], Wv[VS * HID], Wo[HID * HID], bq[HID], bk[HID], bv[HID], bo[HID];
} Setup;

static void setup(Setup *s) {
  sine_fill(s->q, B * NQ * QS, 0.37, 0.1, 1), sine_fill(s->k, B * NK * KS, 0.53, 0.2, 1);
  sine_fill(s->v, B * NK * VS, 0.29, 0.3, 1);
  sine_fill(s->Wq, QS * HID, 0.71, 0.4, 0.8), sine_fill(s->Wk, KS * HID, 0.43, 0.5, 0.8);
  sine_fill(s->Wv, VS * HID, 0.61, 0.6, 0.8), sine_fill(s->Wo, HID * HID, 0.47, 0.7, 0.5);
  sine_fill(s->bq, HID, 0.9, 1.1, 0.2), sine_fill(s->bk, HID, 0.9, 1.2, 0.2);
  sine_fill(s->bv, HID, 0.9, 1.3, 0.2), sine_fill(s->bo, HID, 0.9, 1.4, 0.2);
}

#if GRADE_REF
/* x (rows, in) @ W (in, out) + b in double */
static void lin(const float *x, int rows, int in, const float *W, const float *b, int out,
                double *y) {
  for (int r = 0; r < rows; r++)
    for (int o = 0; o < out; o++) {
      double acc = b[o];
      for (int i = 0; i < in; i++) acc += (double)x[r * in + i] * W[i * out + o];
      y[r * out + o] = acc;
    }
}

/* The definition, one head at a time: out (B, NQ, HID), weights (B*HEADS, NQ, NK).
 * vl: lengths per (batch, query), row-major (B, NQ). */
static void reference(const Setup *s, const int *vl, double *out, double *weights) {
  const int d = HID / HEADS;
  double Q[B * NQ * HID], K[B * NK * HID], V[B * NK * HID], cat[B * NQ * HID];
  lin(s->q, B * NQ, QS, s->Wq, s->bq, HID, Q);
  lin(s->k, B * NK, KS, s->Wk, s->bk, HID, K);
  lin(s->v, B * NK, VS, s->Wv, s->bv, HID, V);
  for (int b = 0; b < B; b++)
    for (int h = 0; h < HEADS; h++)
      for (int i = 0; i < NQ; i++) {
        double sc[NK], mx = -INFINITY, sum = 0;
        const int len = vl[b * NQ + i];
        for (int j = 0; j < len; j++) {
          double acc = 0;
          for (int c = 0; c < d; c++)
            acc += Q[(b * NQ + i) * HID + h * d + c] * K[(b * NK + j) * HID + h * d + c];
          sc[j] = acc / sqrt((double)d);
          mx = fmax(mx, sc[j]);
        }
        for (int j = 0; j < len; j++) sum += sc[j] = exp(sc[j] - mx);
        for (int j = 0; j < NK; j++)
          weights[((b * HEADS + h) * NQ + i) * NK + j] = j < len ? sc[j] / sum : 0.0;
        for (int c = 0; c < d; c++) {
          double acc = 0;
          for (int j = 0; j < len; j++) acc += sc[j] / sum * V[(b * NK + j) * HID + h * d + c];
          cat[(b * NQ + i) * HID + h * d + c] = acc;
        }
      }
  float catf[B * NQ * HID];
  for (int i = 0; i < B * NQ * HID; i++) catf[i] = (float)cat[i];
  /* W_o in double on the (float-rounded) concatenation: its rounding is far below tolerance */
  double o[B * NQ * HID];
  lin(catf, B * NQ, HID, s->Wo, s->bo, HID, o);
  memcpy(out, o, sizeof o);
}
#endif

/* A MultiHeadAttention holding the setup's weights (with biases). */
static void make_mha(MultiHeadAttention *m, ParamSet *ps, const Setup *s) {
  MultiHeadAttention_init(m, ps, "mha", KS, QS, VS, HID, HEADS, 0.0f, true);
  memcpy(m->W_q.W->data, s->Wq, sizeof s->Wq), memcpy(m->W_q.b->data, s->bq, sizeof s->bq);
  memcpy(m->W_k.W->data, s->Wk, sizeof s->Wk), memcpy(m->W_k.b->data, s->bk, sizeof s->bk);
  memcpy(m->W_v.W->data, s->Wv, sizeof s->Wv), memcpy(m->W_v.b->data, s->bv, sizeof s->bv);
  memcpy(m->W_o.W->data, s->Wo, sizeof s->Wo), memcpy(m->W_o.b->data, s->bo, sizeof s->bo);
}

/* Run the student's forward with lengths vl (vl_ndim 1: (B), 2: (B, NQ)) and compare. */
static void check_forward(const float *vl, int vl_ndim) {
  Setup s;
  setup(&s);
  ParamSet ps = {0};
  MultiHeadAttention m;
  make_mha(&m, &ps, &s);
  Tensor *vlt = vl_ndim == 1 ? tensor_from(1, (int[]){B}, vl) : tensor_from(2, (int[]){B, NQ}, vl);
  Tensor *out = MultiHeadAttention_forward(&m, tensor_from(3, (int[]){B, NQ, QS}, s.q),
                                           tensor_from(3, (int[]){B, NK, KS}, s.k),
                                           tensor_from(3, (int[]){B, NK, VS}, s.v), vlt, false);
  if (!out) paramset_free(&ps);
  EXPECT_NOT_NULL(out, "MultiHeadAttention_forward");
#if GRADE_REF
  int lens[B * NQ];
  for (int b = 0; b < B; b++)
    for (int i = 0; i < NQ; i++) lens[b * NQ + i] = (int)(vl_ndim == 1 ? vl[b] : vl[b * NQ + i]);
  double want[B * NQ * HID], wantw[B * HEADS * NQ * NK];
  reference(&s, lens, want, wantw);
  float wf[B * NQ * HID], wwf[B * HEADS * NQ * NK];
  for (int i = 0; i < B * NQ * HID; i++) wf[i] = (float)want[i];
  for (int i = 0; i < B * HEADS * NQ * NK; i++) wwf[i] = (float)wantw[i];
#endif
  if (EXPECT_SHAPE(out, "output (batch, queries, num_hiddens)", B, NQ, HID))
    EXPECT_CLOSE(out->data, wf, B * NQ * HID, 1e-5, 1e-4, "output"); /* float32 vs double */
  Tensor *w = m.attention.attention_weights;
  EXPECT(w != NULL, "m->attention.attention_weights was not set (DotProductAttention_forward "
         "stores them)");
  if (w && EXPECT_SHAPE(w, "attention weights (batch * heads, queries, keys)", B * HEADS, NQ, NK))
    EXPECT_CLOSE(w->data, wwf, w->size, 1e-6, 1e-4,
                 "attention weights: row b*heads + h is head h of batch row b, masked by "
                 "row b's valid lengths"); /* float32 softmax */
  paramset_free(&ps);
}

GRADED_TEST(lab04_mha_forward, 3,
            "4.3 MultiHeadAttention_forward matches the per-head definition (valid lens (batch))") {
  check_forward((const float[]){3, 2}, 1);
}

GRADED_TEST(lab04_mha_valid_lens_2d, 1,
            "4.3 MultiHeadAttention_forward with (batch, queries) valid lengths") {
  check_forward((const float[]){1, 4, 2, 3, 2, 4}, 2);
}

#if GRADE_REF
/* sum(out * R) of the double reference (lengths [3, 2]) */
static double ref_loss(const Setup *s, const float *R) {
  static const int lens[B * NQ] = {3, 3, 3, 2, 2, 2};
  double out[B * NQ * HID], w[B * HEADS * NQ * NK], l = 0;
  reference(s, lens, out, w);
  for (int i = 0; i < B * NQ * HID; i++) l += out[i] * R[i];
  return l;
}
#endif

GRADED_TEST(lab04_mha_gradient, 1,
            "4.3 MultiHeadAttention_forward is differentiable: gradients reach W_q, W_k, W_v, W_o") {
  Setup s;
  setup(&s);
  ParamSet ps = {0};
  MultiHeadAttention m;
  make_mha(&m, &ps, &s);
  Tensor *out = MultiHeadAttention_forward(
      &m, tensor_from(3, (int[]){B, NQ, QS}, s.q), tensor_from(3, (int[]){B, NK, KS}, s.k),
      tensor_from(3, (int[]){B, NK, VS}, s.v), tensor_from(1, (int[]){B}, (float[]){3, 2}), false);
  if (!out) paramset_free(&ps);
  EXPECT_NOT_NULL(out, "MultiHeadAttention_forward");
  float R[B * NQ * HID];
  sine_fill(R, B * NQ * HID, 0.83, 0.8, 1);
  ag_backward(t_sum_all(t_mul(out, tensor_from(3, (int[]){B, NQ, HID}, R))));
  struct {
    const char *name;
    Tensor *W;
    float *host;
    long idx;
  } probes[4] = {{"W_q", m.W_q.W, s.Wq, 7}, {"W_k", m.W_k.W, s.Wk, 4},
                 {"W_v", m.W_v.W, s.Wv, 11}, {"W_o", m.W_o.W, s.Wo, 20}};
  for (int p = 0; p < 4; p++) {
    if (!probes[p].W->grad) {
      grade_fail(__FILE__, __LINE__, "no gradient reached %s: build the forward from the t_* "
                 "ops and Linear_forward", probes[p].name);
      continue;
    }
#if GRADE_REF
    /* central difference of the double reference */
    float *w = &probes[p].host[probes[p].idx], orig = *w;
    const double h = 1e-3;
    *w = (float)(orig + h);
    double lp = ref_loss(&s, R);
    *w = (float)(orig - h);
    double lm = ref_loss(&s, R);
    *w = orig;
    double want = (lp - lm) / ((double)(float)(orig + h) - (double)(float)(orig - h));
#endif
    char what[64];
    GRADE_MSG(what, "d loss / d %s[%ld]", probes[p].name, probes[p].idx);
    /* float32 backward against a double difference quotient */
    EXPECT_NEAR(probes[p].W->grad[probes[p].idx], want, 1e-3 * fmax(1.0, fabs(want)), what);
  }
  paramset_free(&ps);
}
