/* Graded tests of exercise 2.2, AdditiveAttention_forward (labs/lab02/additive_attention.c).
 * 10 points. It calls your masked_softmax (exercise 2.1): that must work too. Expected values
 * are computed here from the definition, in double, in the reference build only (GRADE_REF,
 * tests/grade/grade.h). */
#include <math.h>
#include <string.h>

#include "../grade.h"
#include "../../sine_fill.h"
#include "../../../common/rng.h"
#include "lab02/lab02.h"

enum { B = 2, Q = 3, K = 4, QS = 3, KS = 2, VS = 3, H = 5 };

typedef struct {
  float q[B * Q * QS], k[B * K * KS], v[B * K * VS];
  float Wq[QS * H], Wk[KS * H], wv[H];
} Setup;

static void setup(Setup *s) {
  sine_fill(s->q, B * Q * QS, 0.37, 0.1, 1.0), sine_fill(s->k, B * K * KS, 0.53, 0.2, 1.0);
  sine_fill(s->v, B * K * VS, 0.29, 0.3, 2.0);
  sine_fill(s->Wq, QS * H, 0.71, 0.4, 0.9), sine_fill(s->Wk, KS * H, 0.43, 0.5, 0.9);
  sine_fill(s->wv, H, 0.61, 0.6, 1.2);
}

#if GRADE_REF
/* The definition: out (B, Q, VS), weights (B, Q, K); len per (batch, query). */
static void reference(const Setup *s, const int *len, double *out, double *w) {
  for (int b = 0; b < B; b++)
    for (int i = 0; i < Q; i++) {
      const int L = len[b * Q + i];
      double sc[K], mx = -INFINITY, sum = 0;
      for (int j = 0; j < L; j++) {
        double a = 0;
        for (int c = 0; c < H; c++) {
          double f = 0;
          for (int t = 0; t < QS; t++) f += (double)s->q[(b * Q + i) * QS + t] * s->Wq[t * H + c];
          for (int t = 0; t < KS; t++) f += (double)s->k[(b * K + j) * KS + t] * s->Wk[t * H + c];
          a += s->wv[c] * tanh(f);
        }
        sc[j] = a;
        mx = fmax(mx, a);
      }
      for (int j = 0; j < L; j++) sum += sc[j] = exp(sc[j] - mx);
      for (int j = 0; j < K; j++) w[(b * Q + i) * K + j] = j < L ? sc[j] / sum : 0;
      for (int c = 0; c < VS; c++) {
        double acc = 0;
        for (int j = 0; j < L; j++) acc += sc[j] / sum * s->v[(b * K + j) * VS + c];
        out[(b * Q + i) * VS + c] = acc;
      }
    }
}
#endif

/* A layer (dropout p) holding the setup's weights. */
static void make_layer(AdditiveAttention *a, ParamSet *ps, const Setup *s, float p) {
  AdditiveAttention_init(a, ps, "att", KS, QS, H, p);
  memcpy(a->W_q.W->data, s->Wq, sizeof s->Wq);
  memcpy(a->W_k.W->data, s->Wk, sizeof s->Wk);
  memcpy(a->w_v.W->data, s->wv, sizeof s->wv);
}

#if GRADE_REF
static void to_float(const double *d, float *f, int n) {
  for (int i = 0; i < n; i++) f[i] = (float)d[i];
}
#endif

/* Forward with lengths vl ((B) or (B, Q)) in eval mode with dropout 0.5 set (eval mode must
 * ignore it), compared with the definition. */
static void check_forward(const float *vl, int vl_ndim, const char *what) {
  Setup s;
  setup(&s);
  ParamSet ps = {0};
  AdditiveAttention a;
  make_layer(&a, &ps, &s, 0.5f);
  Tensor *vlt = vl_ndim == 1 ? tensor_from(SHAPE(B), vl) : tensor_from(SHAPE(B, Q), vl);
  Tensor *out = AdditiveAttention_forward(&a, tensor_from(SHAPE(B, Q, QS), s.q),
                                          tensor_from(SHAPE(B, K, KS), s.k),
                                          tensor_from(SHAPE(B, K, VS), s.v), vlt, false);
  if (!out) paramset_free(&ps);
  EXPECT_NOT_NULL(out, what);
#if GRADE_REF
  int len[B * Q];
  for (int b = 0; b < B; b++)
    for (int i = 0; i < Q; i++) len[b * Q + i] = (int)(vl_ndim == 1 ? vl[b] : vl[b * Q + i]);
  double want[B * Q * VS], wantw[B * Q * K];
  reference(&s, len, want, wantw);
  float wf[B * Q * VS], wwf[B * Q * K];
  to_float(want, wf, B * Q * VS), to_float(wantw, wwf, B * Q * K);
#endif
  char msg[160];
  GRADE_MSG(msg, "%s: output (eval mode: no dropout)", what);
  if (EXPECT_SHAPE(out, msg, B, Q, VS))
    EXPECT_CLOSE(out->data, wf, B * Q * VS, 1e-5, 1e-4, msg); /* float32 tanh/exp vs double */
  Tensor *w = a.attention_weights;
  EXPECT(w != NULL, "%s: a->attention_weights was not set", what);
  GRADE_MSG(msg, "%s: a->attention_weights", what);
  if (w && EXPECT_SHAPE(w, msg, B, Q, K))
    EXPECT_CLOSE(w->data, wwf, B * Q * K, 1e-6, 1e-4, msg); /* float32 softmax */
  paramset_free(&ps);
}

GRADED_TEST(lab02_additive_toy_example, 2,
            "2.2 AdditiveAttention: the book's toy example (keys all ones, lengths [2, 6])") {
  /* Equal keys score equally whatever the weights: the output is the mean of the valid
   * values, rows 0-1 of arange(40).reshape(10, 4) for batch 0, rows 0-5 for batch 1. */
  ParamSet ps = {0};
  AdditiveAttention a;
  rng_seed(11);
  AdditiveAttention_init(&a, &ps, "toy", 2, 20, 8, 0.1f);
  Tensor *q = tensor_randn(SHAPE(2, 1, 20), 0, 1);
  Tensor *k = tensor_full(SHAPE(2, 10, 2), 1.0f);
  Tensor *v = tensor_new(SHAPE(2, 10, 4));
  for (int i = 0; i < 80; i++) v->data[i] = (float)(i % 40);
  Tensor *out = AdditiveAttention_forward(&a, q, k, v, tensor_from(SHAPE(2), (const float[]){2, 6}),
                                          false);
  if (!out) paramset_free(&ps);
  EXPECT_NOT_NULL(out, "AdditiveAttention_forward (toy example)");
  if (EXPECT_SHAPE(out, "toy example output", 2, 1, 4))
    EXPECT_CLOSE(out->data, ((const float[]){2, 3, 4, 5, 10, 11, 12, 13}), 8, 1e-5, 0,
                 "toy example output [[[2, 3, 4, 5]], [[10, 11, 12, 13]]]"); /* means of ints */
#if GRADE_REF
  float ww[20];
  for (int j = 0; j < 10; j++) ww[j] = j < 2 ? 0.5f : 0, ww[10 + j] = j < 6 ? 1 / 6.0f : 0;
#endif
  Tensor *w = a.attention_weights;
  EXPECT(w != NULL, "a->attention_weights was not set");
  if (w && EXPECT_SHAPE(w, "toy example attention weights", 2, 1, 10))
    EXPECT_CLOSE(w->data, ww, 20, 1e-6, 0, "toy example weights: uniform over the valid keys");
  paramset_free(&ps);
}

GRADED_TEST(lab02_additive_valid_lens_1d, 2,
            "2.2 AdditiveAttention matches the definition with (batch) valid lengths") {
  check_forward((const float[]){3, 2}, 1, "AdditiveAttention_forward(lens [3, 2])");
}

GRADED_TEST(lab02_additive_valid_lens_2d, 2,
            "2.2 AdditiveAttention matches the definition with (batch, queries) lengths") {
  check_forward((const float[]){1, 4, 2, 3, 2, 4}, 2,
                "AdditiveAttention_forward(lens [[1, 4, 2], [3, 2, 4]])");
}

#if GRADE_REF
/* sum(out * R) of the definition with lengths [4, 3] */
static double loss_ref(const Setup *s, const float *R) {
  static const int len[B * Q] = {4, 4, 4, 3, 3, 3};
  double out[B * Q * VS], w[B * Q * K], l = 0;
  reference(s, len, out, w);
  for (int i = 0; i < B * Q * VS; i++) l += out[i] * R[i];
  return l;
}
#endif

GRADED_TEST(lab02_additive_gradient, 2,
            "2.2 AdditiveAttention is differentiable: gradients reach queries, keys, values, "
            "W_q, W_k and w_v") {
  Setup s;
  setup(&s);
  ParamSet ps = {0};
  AdditiveAttention a;
  make_layer(&a, &ps, &s, 0.0f);
  Tensor *q = tensor_from(SHAPE(B, Q, QS), s.q), *k = tensor_from(SHAPE(B, K, KS), s.k);
  Tensor *v = tensor_from(SHAPE(B, K, VS), s.v);
  q->requires_grad = k->requires_grad = v->requires_grad = true;
  Tensor *out =
      AdditiveAttention_forward(&a, q, k, v, tensor_from(SHAPE(B), (const float[]){4, 3}), false);
  if (!out) paramset_free(&ps);
  EXPECT_NOT_NULL(out, "AdditiveAttention_forward");
  if (!EXPECT_SHAPE(out, "output", B, Q, VS)) {
    paramset_free(&ps);
    return;
  }
  float R[B * Q * VS];
  sine_fill(R, B * Q * VS, 0.83, 0.8, 1.0);
  ag_backward(t_sum_all(t_mul(out, tensor_from(SHAPE(B, Q, VS), R))));
  struct {
    const char *name;
    const float *grad;
    float *host;
    int n;
  } probes[6] = {{"queries", q->grad, s.q, B * Q * QS},   {"keys", k->grad, s.k, B * K * KS},
                 {"values", v->grad, s.v, B * K * VS},    {"W_q.W", a.W_q.W->grad, s.Wq, QS * H},
                 {"W_k.W", a.W_k.W->grad, s.Wk, KS * H}, {"w_v.W", a.w_v.W->grad, s.wv, H}};
  for (int p = 0; p < 6; p++) {
    if (!probes[p].grad) {
      grade_fail(__FILE__, __LINE__, "no gradient reached %s: build the forward from "
                 "Linear_forward and the t_* ops, which record their backward", probes[p].name);
      continue;
    }
#if GRADE_REF
    float want[B * Q * QS > B * K * VS ? B * Q * QS : B * K * VS];
    for (int i = 0; i < probes[p].n; i++) { /* central difference of the double definition */
      float *x = &probes[p].host[i], orig = *x;
      const double h = 1e-3;
      *x = (float)(orig + h);
      double lp = loss_ref(&s, R);
      *x = (float)(orig - h);
      double lm = loss_ref(&s, R);
      *x = orig;
      want[i] = (float)((lp - lm) / ((double)(float)(orig + h) - (double)(float)(orig - h)));
    }
#endif
    char what[80];
    GRADE_MSG(what, "d sum(out * R) / d %s", probes[p].name);
    /* float32 backward vs a double central difference (O(h^2) ~ 1e-6 on order-1 values) */
    EXPECT_CLOSE(probes[p].grad, want, probes[p].n, 1e-4, 1e-3, what);
  }
  paramset_free(&ps);
}

GRADED_TEST(lab02_additive_dropout_training, 2,
            "2.2 attention_weights are stored before dropout; dropout applies when training") {
  /* values = identity (K x K per batch row): the output IS the (dropped-out) weights */
  Setup s;
  setup(&s);
  ParamSet ps = {0};
  AdditiveAttention a;
  make_layer(&a, &ps, &s, 0.5f);
  Tensor *eye = tensor_zeros(SHAPE(B, K, K));
  for (int b = 0; b < B; b++)
    for (int j = 0; j < K; j++) eye->data[(b * K + j) * K + j] = 1;
  rng_seed(5);
  Tensor *out = AdditiveAttention_forward(&a, tensor_from(SHAPE(B, Q, QS), s.q),
                                          tensor_from(SHAPE(B, K, KS), s.k), eye, NULL, true);
  if (!out) paramset_free(&ps);
  EXPECT_NOT_NULL(out, "AdditiveAttention_forward(training = true)");
  Tensor *w = a.attention_weights;
  EXPECT(w != NULL, "a->attention_weights was not set");
  if (!w || !EXPECT_SHAPE(out, "output", B, Q, K) || !EXPECT_SHAPE(w, "weights", B, Q, K)) {
    paramset_free(&ps);
    return;
  }
#if GRADE_REF
  const int len[B * Q] = {K, K, K, K, K, K};
  double want[B * Q * VS], wantw[B * Q * K];
  reference(&s, len, want, wantw);
  float wwf[B * Q * K];
  to_float(wantw, wwf, B * Q * K);
#endif
  EXPECT_CLOSE(w->data, wwf, B * Q * K, 1e-6, 1e-4,
               "a->attention_weights must hold the weights before dropout"); /* float32 */
  EXPECT_INVERTED_DROPOUT_HALF(out->data, wwf, B * Q * K);
  paramset_free(&ps);
}
