/* Initialisation parity of lab 03's model with d2l 0.17's PyTorch code. train_seq2seq there
 * runs net.apply(xavier_init_weights), which calls xavier_uniform_ on nn.Linear weights and on
 * nn.GRU weights only; everything else keeps PyTorch's defaults (torch.nn docs):
 *   nn.Embedding.weight  N(0, 1)
 *   nn.GRU bias_ih/hh    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))
 *   nn.Linear.bias       U(-1/sqrt(in_features), 1/sqrt(in_features))
 *   Xavier uniform       U(-a, a), a = sqrt(6 / (fan_in + fan_out)); for GRU weight_ih
 *                        (3H, in) the fans are in and 3H; the decoder's layer 0 takes
 *                        [context (H), embedding (E)], so fan_in = E + H for both halves.
 * Each parameter is checked against its rule by its range and its sample variance, with the
 * classic preset's sizes. */
#include <math.h>
#include <string.h>

#include "../test.h"
#include "lab03/lab03.h"

enum { E = 32, H = 32, G = 3 * H, SRC = 184, TGT = 201 };

typedef struct Rule {
  const char *name;
  int normal;    /* 1: N(0, 1); 0: U(-a, a) */
  double a;      /* uniform bound */
} Rule;

static void check_param(const Tensor *p, const Rule *r) {
  double s = 0, s2 = 0, mx = 0;
  for (long i = 0; i < p->size; i++) {
    double v = p->data[i];
    s += v;
    s2 += v * v;
    mx = fmax(mx, fabs(v));
  }
  const double n = (double)p->size, mean = s / n, var = s2 / n - mean * mean;
  const double want_var = r->normal ? 1.0 : r->a * r->a / 3;
  /* sampling: the variance of a sample variance is about 2 sigma^4 / n (normal) or 0.8
   * sigma^4 / n (uniform); 5 standard errors keeps a correct init from failing (p < 1e-6) while
   * a zero, a wrong fan (the dense bias's 0 vs 0.18) or N(0,1) in place of Xavier fails by far */
  const double se = want_var * sqrt((r->normal ? 2.0 : 0.8) / n);
  if (fabs(var - want_var) > 5 * se)
    test_fail(__FILE__, __LINE__, "%s: sample variance %.5g, d2l's rule gives %.5g (+- %.2g)",
              r->name, var, want_var, 5 * se);
  if (!r->normal) {
    /* the range: never past a (float rounding aside), and with >= 32 draws the largest
     * |x| is above 0.8 a unless the bound is wrong (P = 0.8^32 < 1e-3 for n = 32; far less
     * for the larger tensors) */
    if (mx > r->a * (1 + 1e-6) || mx < 0.8 * r->a)
      test_fail(__FILE__, __LINE__, "%s: max |x| = %.5g, d2l's bound is %.5g", r->name, mx,
                r->a);
  }
}

static double xavier(int fan_in, int fan_out) { return sqrt(6.0 / (fan_in + fan_out)); }

TEST(lab03_init_matches_d2l_xavier_init_weights) {
  ParamSet *ps;
  BahdanauNet net;
  BahdanauNet_init(&net, RNN_GRU, ATTN_ADDITIVE, SRC, TGT, E, H, 2, 0.1f);
  ps = &net.ps;
  const double gb = 1 / sqrt((double)H);
  const Rule rules[] = {
      {"encoder.embedding.W", 1, 0},
      {"decoder.embedding.W", 1, 0},
      {"encoder.rnn.l0.W_xh", 0, xavier(E, G)},
      {"encoder.rnn.l0.W_hh", 0, xavier(H, G)},
      {"encoder.rnn.l1.W_xh", 0, xavier(H, G)},
      {"encoder.rnn.l1.W_hh", 0, xavier(H, G)},
      {"decoder.rnn.l0.W_xh", 0, xavier(E + H, G)},
      {"decoder.rnn.l0.W_xh_emb", 0, xavier(E + H, G)},
      {"decoder.rnn.l0.W_hh", 0, xavier(H, G)},
      {"decoder.rnn.l1.W_xh", 0, xavier(H, G)},
      {"decoder.rnn.l1.W_hh", 0, xavier(H, G)},
      {"encoder.rnn.l0.b_xh", 0, gb},
      {"encoder.rnn.l0.b_hh", 0, gb},
      {"encoder.rnn.l1.b_xh", 0, gb},
      {"encoder.rnn.l1.b_hh", 0, gb},
      {"decoder.rnn.l0.b_xh", 0, gb},
      {"decoder.rnn.l0.b_hh", 0, gb},
      {"decoder.rnn.l1.b_xh", 0, gb},
      {"decoder.rnn.l1.b_hh", 0, gb},
      {"decoder.attention.W_k.W", 0, xavier(H, H)},
      {"decoder.attention.W_q.W", 0, xavier(H, H)},
      {"decoder.attention.w_v.W", 0, xavier(H, 1)},
      {"decoder.dense.W", 0, xavier(H, TGT)},
      {"decoder.dense.b", 0, 1 / sqrt((double)H)}, /* PyTorch's default, not zeros */
  };
  const int nr = (int)(sizeof rules / sizeof rules[0]);
  CHECK_INT(ps->n, nr); /* every parameter has a rule: a new one must be added here */
  for (int k = 0; k < nr; k++) {
    const Tensor *found = NULL;
    for (int i = 0; i < ps->n; i++)
      if (ps->items[i]->name && strcmp(ps->items[i]->name, rules[k].name) == 0)
        found = ps->items[i];
    if (!found) {
      test_fail(__FILE__, __LINE__, "no parameter named %s", rules[k].name);
      continue;
    }
    check_param(found, &rules[k]);
  }
  BahdanauNet_free(&net);
}
