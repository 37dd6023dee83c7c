/* Graded tests of exercise 2.3, DotProductAttention_forward
 * (labs/lab02/dot_product_attention.c). 10 points. It calls your masked_softmax (exercise
 * 2.1): that must work too. Expected values are computed here from the definition, in double,
 * in the reference build only (GRADE_REF, tests/grade/grade.h). */
#include <math.h>
#include <string.h>

#include "../grade.h"
#include "../../sine_fill.h"
#include "../../../common/rng.h"
#include "lab02/lab02.h"

enum { B = 2, Q = 3, K = 5, D = 4, V = 3, MAXD = 16 };

#if GRADE_REF
/* The definition: softmax over j < len of q.k / sqrt(d), then the weighted sum of values.
 * q (B, Q, d), k (B, K, d), v (B, K, V); out (B, Q, V), w (B, Q, K). */
static void reference(const float *q, const float *k, const float *v, int d, const int *len,
                      double *out, double *w) {
  for (int b = 0; b < B; b++)
    for (int i = 0; i < Q; i++) {
      const int L = len[b * Q + i];
      double sc[K], mx = -INFINITY, sum = 0;
      for (int j = 0; j < L; j++) {
        double a = 0;
        for (int c = 0; c < d; c++) a += (double)q[(b * Q + i) * d + c] * k[(b * K + j) * d + c];
        sc[j] = a / sqrt((double)d);
        mx = fmax(mx, sc[j]);
      }
      for (int j = 0; j < L; j++) sum += sc[j] = exp(sc[j] - mx);
      for (int j = 0; j < K; j++) w[(b * Q + i) * K + j] = j < L ? sc[j] / sum : 0;
      for (int c = 0; c < V; c++) {
        double acc = 0;
        for (int j = 0; j < L; j++) acc += sc[j] / sum * v[(b * K + j) * V + c];
        out[(b * Q + i) * V + c] = acc;
      }
    }
}
#endif

/* Run the student's forward (eval mode, dropout 0.5 set: eval must ignore it) on inputs of
 * length d made by sine_fill(..., scale) and compare output and stored weights. len: per (b, i);
 * vl: the tensor passed (NULL, (B) or (B, Q)). Returns 1 when output and weights were there
 * with their shapes (their values are the grader's to judge). */
static int check_forward(int d, double scale, Tensor *vl, const int *len, const char *what) {
  float q[B * Q * MAXD], k[B * K * MAXD], v[B * K * V];
  sine_fill(q, B * Q * d, 0.37, 0.1, scale), sine_fill(k, B * K * d, 0.53, 0.2, scale);
  sine_fill(v, B * K * V, 0.29, 0.3, 2.0);
  DotProductAttention a;
  DotProductAttention_init(&a, 0.5f);
  Tensor *out = DotProductAttention_forward(&a, tensor_from(SHAPE(B, Q, d), q),
                                            tensor_from(SHAPE(B, K, d), k),
                                            tensor_from(SHAPE(B, K, V), v), vl, false);
  if (!out) {
    grade_fail(__FILE__, __LINE__, "%s: got NULL (not implemented yet?)", what);
    return 0;
  }
#if GRADE_REF
  double want[B * Q * V], wantw[B * Q * K];
  reference(q, k, v, d, len, want, wantw);
  float wf[B * Q * V], wwf[B * Q * K];
  for (int i = 0; i < B * Q * V; i++) wf[i] = (float)want[i];
  for (int i = 0; i < B * Q * K; i++) wwf[i] = (float)wantw[i];
#else
  (void)len;
#endif
  char msg[200];
  GRADE_MSG(msg, "%s: output (eval mode: no dropout)", what);
  if (!EXPECT_SHAPE(out, msg, B, Q, V)) return 0;
  EXPECT_CLOSE(out->data, wf, B * Q * V, 1e-5, 1e-4, msg); /* float32 vs double */
  if (!a.attention_weights) {
    grade_fail(__FILE__, __LINE__, "%s: a.attention_weights was not set", what);
    return 0;
  }
  GRADE_MSG(msg, "%s: a.attention_weights", what);
  if (!EXPECT_SHAPE(a.attention_weights, msg, B, Q, K)) return 0;
  EXPECT_CLOSE(a.attention_weights->data, wwf, B * Q * K, 1e-6, 1e-4, msg); /* float32 */
  return 1;
}

GRADED_TEST(lab02_dot_product_lens, 2,
            "2.3 DotProductAttention matches the definition without and with (batch) lengths") {
  const int all[B * Q] = {K, K, K, K, K, K}, len[B * Q] = {2, 2, 2, 4, 4, 4};
  check_forward(D, 1.0, NULL, all, "DotProductAttention_forward(valid_lens NULL)");
  check_forward(D, 1.0, tensor_from(SHAPE(B), (const float[]){2, 4}), len,
                "DotProductAttention_forward(valid_lens [2, 4])");
}

GRADED_TEST(lab02_dot_product_lens_2d, 2,
            "2.3 DotProductAttention with (batch, queries) lengths, including length 0") {
  const int len[B * Q] = {1, 5, 3, 2, 4, 5};
  check_forward(D, 1.0, tensor_from(SHAPE(B, Q), (const float[]){1, 5, 3, 2, 4, 5}), len,
                "DotProductAttention_forward(valid_lens [[1, 5, 3], [2, 4, 5]])");
  /* a query with nothing to attend to gets weights 0 and output 0 */
  const int len0[B * Q] = {3, 0, 5, 0, 2, 1};
  check_forward(D, 1.0, tensor_from(SHAPE(B, Q), (const float[]){3, 0, 5, 0, 2, 1}), len0,
                "DotProductAttention_forward(valid_lens [[3, 0, 5], [0, 2, 1]]): rows with "
                "length 0 are zero");
}

GRADED_TEST(lab02_dot_product_scaling, 2,
            "2.3 scores are divided by sqrt(d), d = the query/key length") {
  /* d = 16 and larger entries: without the 1/sqrt(d) = 1/4 the weights are far sharper */
  const int all[B * Q] = {K, K, K, K, K, K};
  if (!check_forward(16, 1.5, NULL, all,
                     "DotProductAttention_forward(queries and keys of length d = 16): scores "
                     "must be Q K^T / sqrt(16)"))
    return;
  check_forward(9, 1.5, tensor_from(SHAPE(B), (const float[]){3, 5}),
                (const int[]){3, 3, 3, 5, 5, 5}, "DotProductAttention_forward(d = 9, [3, 5])");
}

#if GRADE_REF
/* sum(out * R) of the definition, for finite differences */
static double loss_ref(const float *q, const float *k, const float *v, const int *len,
                       const float *R) {
  double out[B * Q * V], w[B * Q * K], l = 0;
  reference(q, k, v, D, len, out, w);
  for (int i = 0; i < B * Q * V; i++) l += out[i] * R[i];
  return l;
}
#endif

GRADED_TEST(lab02_dot_product_gradient, 2,
            "2.3 DotProductAttention is differentiable: gradients reach queries, keys, values") {
  float q[B * Q * D], k[B * K * D], v[B * K * V], R[B * Q * V];
  sine_fill(q, B * Q * D, 0.37, 0.1, 1.0), sine_fill(k, B * K * D, 0.53, 0.2, 1.0);
  sine_fill(v, B * K * V, 0.29, 0.3, 2.0), sine_fill(R, B * Q * V, 0.83, 0.8, 1.0);
  Tensor *tq = tensor_from(SHAPE(B, Q, D), q), *tk = tensor_from(SHAPE(B, K, D), k);
  Tensor *tv = tensor_from(SHAPE(B, K, V), v);
  tq->requires_grad = tk->requires_grad = tv->requires_grad = true;
  DotProductAttention a;
  DotProductAttention_init(&a, 0.0f);
  Tensor *out = DotProductAttention_forward(
      &a, tq, tk, tv, tensor_from(SHAPE(B, Q), (const float[]){2, 5, 3, 4, 1, 5}), false);
  EXPECT_NOT_NULL(out, "DotProductAttention_forward");
  if (!EXPECT_SHAPE(out, "output", B, Q, V)) return;
  ag_backward(t_sum_all(t_mul(out, tensor_from(SHAPE(B, Q, V), R))));
  struct {
    const char *name;
    const float *grad;
    float *host;
    int n;
  } probes[3] = {{"queries", tq->grad, q, B * Q * D},
                 {"keys", tk->grad, k, B * K * D},
                 {"values", tv->grad, v, B * K * V}};
  for (int p = 0; p < 3; p++) {
    if (!probes[p].grad) {
      grade_fail(__FILE__, __LINE__, "no gradient reached %s: build the forward from the t_* "
                 "ops of common/ops.h, which record their backward", probes[p].name);
      continue;
    }
#if GRADE_REF
    static const int len[B * Q] = {2, 5, 3, 4, 1, 5};
    float want[B * K * D];
    for (int i = 0; i < probes[p].n; i++) { /* central difference of the double definition */
      float *x = &probes[p].host[i], orig = *x;
      const double h = 1e-3;
      *x = (float)(orig + h);
      double lp = loss_ref(q, k, v, len, R);
      *x = (float)(orig - h);
      double lm = loss_ref(q, k, v, len, R);
      *x = orig;
      want[i] = (float)((lp - lm) / ((double)(float)(orig + h) - (double)(float)(orig - h)));
    }
#endif
    char what[64];
    GRADE_MSG(what, "d sum(out * R) / d %s", probes[p].name);
    /* float32 backward vs a double central difference (O(h^2) ~ 1e-6 on order-1 values) */
    EXPECT_CLOSE(probes[p].grad, want, probes[p].n, 1e-4, 1e-3, what);
  }
}

GRADED_TEST(lab02_dot_product_dropout_training, 2,
            "2.3 attention_weights are stored before dropout; dropout applies when training") {
  /* values = identity: the output IS the (dropped-out) weights */
  float q[B * Q * D], k[B * K * D];
  sine_fill(q, B * Q * D, 0.37, 0.1, 1.0), sine_fill(k, B * K * D, 0.53, 0.2, 1.0);
  Tensor *eye = tensor_zeros(SHAPE(B, K, K));
  for (int b = 0; b < B; b++)
    for (int j = 0; j < K; j++) eye->data[(b * K + j) * K + j] = 1;
  DotProductAttention a;
  DotProductAttention_init(&a, 0.5f);
  rng_seed(5);
  Tensor *out = DotProductAttention_forward(&a, tensor_from(SHAPE(B, Q, D), q),
                                            tensor_from(SHAPE(B, K, D), k), eye, NULL, true);
  EXPECT_NOT_NULL(out, "DotProductAttention_forward(training = true)");
  Tensor *w = a.attention_weights;
  EXPECT(w != NULL, "a.attention_weights was not set");
  if (!w || !EXPECT_SHAPE(out, "output", B, Q, K) || !EXPECT_SHAPE(w, "weights", B, Q, K))
    return;
#if GRADE_REF
  const int all[B * Q] = {K, K, K, K, K, K};
  double wantw[B * Q * K], unused[B * Q * V];
  float vdummy[B * K * V] = {0};
  reference(q, k, vdummy, D, all, unused, wantw);
  float wwf[B * Q * K];
  for (int i = 0; i < B * Q * K; i++) wwf[i] = (float)wantw[i];
#endif
  EXPECT_CLOSE(w->data, wwf, B * Q * K, 1e-6, 1e-4,
               "a.attention_weights must hold the weights before dropout"); /* float32 */
  EXPECT_INVERTED_DROPOUT_HALF(out->data, wwf, B * Q * K);
}
