/* Graded tests of exercise 3.4 (seq2seq_train_step), labs/lab03/train_step.c. 5 points.
 * The step runs on a toy encoder-decoder of the test's own (no exercise inside it), so only
 * the step is graded: logits[b, t] = E[dec_X[b, t]] W + c + S[X[b, X_valid_len[b] - 1]], with
 * dropout 0.5 on the logits in training mode (the tests ask for eval mode). The references are
 * the loss, its gradients (by hand), the clipping and Adam's first step evaluated in double in
 * this file (in the reference build only: GRADE_REF, tests/grade/grade.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../grade.h"
#include "../../sine_fill.h"
#include "lab03/lab03.h"

enum { V = 6, D = 3, B = 3, T = 4, BOS = 1 };
/* the parameters' offsets in the set's block (E, W, c, S) and their count */
enum { OE = 0, OW = V * D, OC = OW + D * V, OS = OC + V, NP = OS + V * V };
static const float LR = 0.1f; /* Adam's first step moves each parameter by about this */

typedef struct Toy {
  Tensor *E, *W, *c, *S; /* (V, D), (D, V), (V), (V, V): registered in this order */
} Toy;

/* X (B, T), X_valid_len (B), dec_X (B, T) -> logits (B, T, V) */
static Tensor *toy_forward(void *net, Tensor *X, Tensor *X_valid_len, Tensor *dec_X,
                           bool training) {
  const Toy *n = net;
  float last[B]; /* the last valid source token of each row */
  for (int b = 0; b < B; b++) last[b] = X->data[b * T + (int)X_valid_len->data[b] - 1];
  Tensor *src = t_embedding(n->S, tensor_from(1, (const int[]){B}, last));     /* (B, V) */
  Tensor *logits = t_linear(t_embedding(n->E, dec_X), n->W, n->c);            /* (B, T, V) */
  logits = t_add(logits, t_view(src, B, 1, V));                               /* (B, T, V) */
  return t_dropout(logits, 0.5f, training);
}

/* the batch: source and target ids, valid lengths 3 4 1 and 4 2 1 (7 target tokens) */
static const float Xd[B * T] = {2, 5, 3, 0, 4, 1, 5, 2, 3, 0, 0, 0};
static const float Yd[B * T] = {3, 2, 5, 4, 1, 4, 0, 0, 2, 0, 0, 0};
static const float Xvl[B] = {3, 4, 1}, Yvl[B] = {4, 2, 1};

typedef struct Setup {
  ParamSet ps;
  Toy toy;
  Seq2SeqModel m;
  NmtBatch b;
  Adam opt;
} Setup;

static void setup(Setup *u) {
  memset(u, 0, sizeof *u);
  Toy *n = &u->toy;
  n->E = param_new(&u->ps, "E", 2, (const int[]){V, D});
  n->W = param_new(&u->ps, "W", 2, (const int[]){D, V});
  n->c = param_new(&u->ps, "c", 1, (const int[]){V});
  n->S = param_new(&u->ps, "S", 2, (const int[]){V, V});
  sine_fill_tensor(n->E, 0.9, 0.3, 1.0);
  sine_fill_tensor(n->W, 1.3, 0.7, 1.0);
  sine_fill_tensor(n->c, 0.5, 1.1, 0.5);
  sine_fill_tensor(n->S, 0.7, 0.2, 1.0);
  paramset_pack(&u->ps);
  /* gradients left over from a previous step: a step zeroes them first */
  for (long i = 0; i < u->ps.total; i++) u->ps.grad[i] = 0.25f;
  u->m = (Seq2SeqModel){.name = "toy", .net = n, .ps = &u->ps, .forward = toy_forward};
  u->b = (NmtBatch){.size = B, .num_tokens = 7};
  u->b.X = tensor_from(2, (const int[]){B, T}, Xd);
  u->b.Y = tensor_from(2, (const int[]){B, T}, Yd);
  u->b.X_valid_len = tensor_from(1, (const int[]){B}, Xvl);
  u->b.Y_valid_len = tensor_from(1, (const int[]){B}, Yvl);
  Adam_init(&u->opt, &u->ps, LR);
}

static void teardown(Setup *u) {
  Adam_free(&u->opt);
  paramset_free(&u->ps);
}

#if GRADE_REF
/* The step in double. Parameters p (the set's block order: E, W, c, S) -> loss (summed
 * per-sequence means over T, masked), gradients g of the backward's loss (times T / tokens
 * with token_mean), clipped to clip (> 0), and the parameters after Adam's first step. */
typedef struct Ref {
  double loss, norm, g[NP], p1[NP];
} Ref;

static void ref_step(const float *pf, bool token_mean, double clip, Ref *r) {
  double p[NP];
  for (int i = 0; i < NP; i++) p[i] = pf[i], r->g[i] = 0;
  r->loss = 0;
  const double alpha = token_mean ? (double)T / 7.0 : 1.0; /* 7 valid target tokens */
  for (int b = 0; b < B; b++) {
    const int src = (int)Xd[b * T + (int)Xvl[b] - 1];
    for (int t = 0; t < (int)Yvl[b]; t++) {
      const int in = t == 0 ? BOS : (int)Yd[b * T + t - 1], y = (int)Yd[b * T + t];
      double z[V], mx = -1e300, se = 0;
      for (int v = 0; v < V; v++) {
        z[v] = p[OC + v] + p[OS + src * V + v];
        for (int k = 0; k < D; k++) z[v] += p[OE + in * D + k] * p[OW + k * V + v];
        mx = fmax(mx, z[v]);
      }
      for (int v = 0; v < V; v++) se += exp(z[v] - mx);
      r->loss += (mx + log(se) - z[y]) / T;
      for (int v = 0; v < V; v++) {
        const double dz = alpha / T * (exp(z[v] - mx) / se - (v == y)); /* d loss / d z[v] */
        r->g[OC + v] += dz;
        r->g[OS + src * V + v] += dz;
        for (int k = 0; k < D; k++) {
          r->g[OE + in * D + k] += dz * p[OW + k * V + v];
          r->g[OW + k * V + v] += dz * p[OE + in * D + k];
        }
      }
    }
  }
  double sq = 0;
  for (int i = 0; i < NP; i++) sq += r->g[i] * r->g[i];
  r->norm = sqrt(sq);
  if (clip > 0 && r->norm > clip)
    for (int i = 0; i < NP; i++) r->g[i] *= clip / r->norm;
  /* Adam's first step: m = (1 - b1) g, v = (1 - b2) g^2, bias-corrected: lr g / (|g| + eps) */
  for (int i = 0; i < NP; i++) r->p1[i] = p[i] - LR * r->g[i] / (fabs(r->g[i]) + 1e-8);
}
#endif

/* One step with clip and token_mean; what is observed: 0 the loss, 1 the gradients after the
 * step, 2 the parameters after it. */
static void check_step(int what, float clip, bool token_mean) {
  Setup u;
  setup(&u);
#if GRADE_REF
  float p0[NP];
  memcpy(p0, u.ps.data, sizeof p0);
  REF_CHECK(u.ps.total == NP, "the toy's parameters: %ld, expected %d", u.ps.total, NP);
#endif
  const Seq2SeqStep s = {.opt = &u.opt, .bos = BOS, .clip = clip, .token_mean = token_mean,
                         .training = false};
  const double loss = seq2seq_train_step(&u.m, &u.b, &s);
#if GRADE_REF
  Ref r;
  ref_step(p0, token_mean, clip, &r);
  /* the setup makes each check able to fail: clipping changes the gradients, and no gradient
   * is so near 0 that float rounding could flip Adam's step (a used entry's is >= 1e-4) */
  REF_CHECK(clip <= 0 || r.norm > 2 * clip, "the gradient norm %g must exceed the clip %g",
            r.norm, (double)clip);
  for (int i = 0; i < NP; i++)
    REF_CHECK(r.g[i] == 0 || fabs(r.g[i]) > 1e-4, "gradient %d is %g: too near 0", i, r.g[i]);
  float want[NP];
#endif
  char msg[200];
  if (what == 0) {
    /* float32 log-softmax of logits of order 1, 7 terms: a few ulps of the sum */
    GRADE_MSG(msg, "the returned loss: the sum over the batch of each sequence's "
              "MaskedSoftmaxCELoss (padding weighs 0), as the book's l.sum()%s",
              token_mean ? " (also with token_mean: the scaling is backward's only)" : "");
    EXPECT_NEAR(loss, r.loss, 1e-5, msg);
    teardown(&u);
    return;
  }
#if GRADE_REF
  for (int i = 0; i < NP; i++) want[i] = (float)(what == 1 ? r.g[i] : r.p1[i]);
#endif
  if (what == 1) {
    GRADE_MSG(msg, "the gradients after the step (E, W, c, S, in that order): %s",
              token_mean ? "of l.sum() * num_steps / num_tokens (d2l 1.0's token mean), not "
                           "clipped (clip 0 turns clipping off)"
                         : "zeroed first, then of l.sum() with padding masked, clipped to norm "
                           "0.5");
    /* float32 products of order-1 values summed over a few terms */
    EXPECT_CLOSE(u.ps.grad, want, NP, 1e-6, 1e-4, msg);
  } else {
    GRADE_MSG(msg, "the parameters after the step: one Adam step (s->opt, lr %g) with the "
              "clipped gradients, p - lr * g / (|g| + eps) on a first step", (double)LR);
    /* parameters of order 1 moved by 0.1: float32 rounding of the update */
    EXPECT_CLOSE(u.ps.data, want, NP, 1e-5, 1e-5, msg);
  }
  teardown(&u);
}

GRADED_TEST(lab03_train_step_loss, 1, "3.4 seq2seq_train_step: returns the masked loss l.sum()") {
  check_step(0, 0.5f, false);
}
GRADED_TEST(lab03_train_step_gradients, 2,
            "3.4 seq2seq_train_step: zero_grad, masked loss, backward, clip") {
  check_step(1, 0.5f, false);
}
GRADED_TEST(lab03_train_step_update, 1, "3.4 seq2seq_train_step: the optimizer's step") {
  check_step(2, 0.5f, false);
}
GRADED_TEST(lab03_train_step_token_mean, 1,
            "3.4 seq2seq_train_step: d2l 1.0's token-mean loss, no clipping when clip is 0") {
  check_step(1, 0.0f, true);
}
