/* test_seq2seq_trim.c — the step module (common/step.h) drops batch columns that cannot change
 * the loss (seq2seq_batch_loss with trim) and cuts batches in two by length, run one after the
 * other or on two threads with a twin of the model (seq2seq_exec_backward): the loss and every
 * parameter gradient must equal those of the full, padded batch, for the Transformer (source and
 * target trimmed) and for lab03's GRU with additive attention (target only: its decoder starts
 * from the encoder state after the padding, so trimming the source there must change the loss —
 * checked too); and lab03's decoder, which
 * also drops the rows whose target has ended (packing), against the exercises' readable path.
 * A twin's init draws from its own generator (twin_build), never moving the program's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../chapters/06_transformer/transformer.h"
#include "../../common/gemm.h"
#include "../../common/nn.h"
#include "../../common/rng.h"
#include "../../common/seq2seq.h"
#include "../../common/step.h"
#include "../test.h"
#include "lab02/lab02.h"
#include "lab03/lab03.h"
#include "../../chapters/03_bahdanau/seq2seq_attention_fast.h"

enum { SV = 13, TV = 11, BN = 4, T = 8, PAD = 1, BOS = 2 };

/* R rows of num_steps T with the given valid lengths: made-up ids, then padding. */
static NmtBatch batch_of(int R, const float *xvl, const float *yvl) {
  NmtBatch b = {.size = R};
  for (int r = 0; r < R; r++) b.num_tokens += (long)yvl[r];
  b.X = tensor_new(2, (const int[]){R, T});              /* (batch, num_steps) */
  b.Y = tensor_new(2, (const int[]){R, T});              /* (batch, num_steps) */
  b.X_valid_len = tensor_from(1, (const int[]){R}, xvl); /* (batch) */
  b.Y_valid_len = tensor_from(1, (const int[]){R}, yvl); /* (batch) */
  for (int r = 0; r < R; r++)
    for (int t = 0; t < T; t++) {
      b.X->data[r * T + t] = t < xvl[r] ? (float)(3 + (r * 5 + t * 3) % (SV - 3)) : PAD;
      b.Y->data[r * T + t] = t < yvl[r] ? (float)(3 + (r * 7 + t * 2) % (TV - 3)) : PAD;
    }
  return b;
}

/* A batch whose columns 5.. of X and 6.. of Y are padding in every row. */
static NmtBatch padded_batch(void) {
  static const float xvl[BN] = {3, 5, 1, 4}, yvl[BN] = {6, 2, 4, 3};
  return batch_of(BN, xvl, yvl);
}

/* Fail unless got matches want to 1e-5 of want's largest entry: the same arithmetic, but the
 * products' sums over rows are blocked differently once padded rows are gone or rows move. */
static void check_grads_match(int line, const char *what, const float *want, const float *got,
                              long n) {
  double gmax = 0, dmax = 0;
  long worst = 0;
  for (long i = 0; i < n; i++) {
    gmax = fmax(gmax, fabs(want[i]));
    if (fabs(want[i] - got[i]) > dmax) dmax = fabs(want[i] - got[i]), worst = i;
  }
  if (!(gmax > 0 && dmax <= 1e-5 * gmax))
    test_fail(__FILE__, line, "%s: gradient %ld is %.8g, expected %.8g (largest %.3g)", what,
              worst, got[worst], want[worst], gmax);
}

/* Batch b's loss, a host copy of the gradients (g: ps->total floats) and, where flops is not
 * NULL, the products' flops of forward and backward. */
static float batch_loss_and_grads(Seq2SeqModel *m, NmtBatch b, bool trim, float *g,
                                  double *flops) {
  paramset_zero_grad(m->ps);
  const double f0 = gemm_flops();
  Tensor *ls = seq2seq_batch_loss(m, &b, T, BOS, trim); /* (1) */
  const float l = ls->data[0];
  ag_backward(ls);
  if (flops) *flops = gemm_flops() - f0;
  memcpy(g, m->ps->grad, sizeof(float) * (size_t)m->ps->total);
  ag_step_reset();
  return l;
}

static float loss_and_grads(Seq2SeqModel *m, bool trim, float *g) {
  return batch_loss_and_grads(m, padded_batch(), trim, g, NULL);
}

/* Trimmed equals full (losses to 1e-5 relative, for the same reason as the gradients). */
static void check_trim_is_exact(Seq2SeqModel *m) {
  paramset_pack(m->ps);
  const long n = m->ps->total;
  float *gf = malloc(sizeof(float) * (size_t)n), *gt = malloc(sizeof(float) * (size_t)n);
  const float lf = loss_and_grads(m, false, gf), lt = loss_and_grads(m, true, gt);
  CHECK(isfinite(lf) && lf > 0);
  CHECK_NEAR(lt, lf, 1e-5 * fabs(lf));
  check_grads_match(__LINE__, m->name, gf, gt, n); /* trimmed vs full */
  free(gf);
  free(gt);
}

/* A batch of 64 rows, lengths spread over 1..T: seq2seq_exec_backward cuts it by length. */
static NmtBatch long_batch(void) {
  enum { R = 64 };
  float xvl[R], yvl[R];
  for (int r = 0; r < R; r++) {
    xvl[r] = (float)(1 + (r * 5) % 4);
    yvl[r] = (float)(r % 9 == 0 ? T : 1 + (r * 3) % 4); /* few long rows */
  }
  return batch_of(R, xvl, yvl);
}

/* The loss and gradients of long_batch run the given way, and its products' flops. */
static double batch_backward(Seq2SeqModel *m, Seq2SeqExec *e, float *g, double *flops) {
  NmtBatch b = long_batch();
  paramset_zero_grad(m->ps);
  const double f0 = gemm_flops();
  const double l = seq2seq_exec_backward(e, &b);
  *flops = gemm_flops() - f0;
  memcpy(g, m->ps->grad, sizeof(float) * (size_t)m->ps->total);
  ag_step_reset();
  return l;
}

/* Cut in two by length or whole: the same loss and gradients (tolerance as above), and the cut
 * batch does fewer flops (so it was cut); then the two parts at once on two threads, the second
 * on the model's twin: the same again, and the twin's parameters are the model's values. Building
 * the twin leaves the program's generator where it was (its init draws from its own). */
static void check_split_is_exact(Seq2SeqModel *m) {
  paramset_pack(m->ps);
  const long n = m->ps->total;
  float *gw = malloc(sizeof(float) * (size_t)n), *gs = malloc(sizeof(float) * (size_t)n);
  for (int token_mean = 0; token_mean < 2; token_mean++) {
    Seq2SeqExec *whole = seq2seq_exec_new(m, T, BOS, token_mean, SEQ2SEQ_RUN_WHOLE);
    const Rng before = g_rng;
    Seq2SeqExec *ways[2] = {seq2seq_exec_new(m, T, BOS, token_mean, SEQ2SEQ_RUN_PARTS),
                            seq2seq_exec_new(m, T, BOS, token_mean, SEQ2SEQ_RUN_TWIN)};
    CHECK(memcmp(&before, &g_rng, sizeof before) == 0);
    const ParamSet *tps = seq2seq_exec_twin_params(ways[1]);
    CHECK(seq2seq_exec_twin_params(ways[0]) == NULL && tps != NULL);
    if (tps) {
      CHECK(tps->total == n && tps->grad != m->ps->grad);
      CHECK(tps->items[0]->data == m->ps->items[0]->data);
    }
    for (int w = 0; w < 2; w++) {
      double fw, fs;
      const double lw = batch_backward(m, whole, gw, &fw);
      const double ls = batch_backward(m, ways[w], gs, &fs);
      CHECK(isfinite(lw) && lw > 0);
      CHECK_NEAR(ls, lw, 1e-5 * fabs(lw));
      CHECK(fs < 0.9 * fw);
      char what[128];
      snprintf(what, sizeof what, "%s cut vs whole, token_mean %d, %s", m->name, token_mean,
               w ? "two threads (twin)" : "one thread");
      check_grads_match(__LINE__, what, gw, gs, n);
    }
    seq2seq_exec_free(whole);
    seq2seq_exec_free(ways[0]);
    seq2seq_exec_free(ways[1]);
  }
  free(gw);
  free(gs);
}

TEST(seq2seq_trim_transformer_same_loss_and_gradients) {
  if (!causal_valid_lens(1, 1, 0) || positional_encoding_table((float[2]){0}, 1, 2) != 0) {
    test_skip("the lab04-06 exercises are stubs in this build (VARIANT=labs)");
    return;
  }
  rng_seed(5);
  TransformerConfig cfg = {.src_vocab = SV, .tgt_vocab = TV, .num_hiddens = 16,
                           .ffn_num_hiddens = 24, .num_heads = 4, .num_blks = 2,
                           .dropout = 0, .use_bias = true}; /* dropout 0: both passes agree */
  ParamSet ps = {0};
  Transformer t;
  Transformer_init(&t, &ps, &cfg);
  Seq2SeqModel m = Transformer_model(&t, &ps);
  CHECK(m.exec.encoder_ignores_padding);
  check_trim_is_exact(&m);
  check_split_is_exact(&m);
  Transformer_free(&t);
  paramset_free(&ps);
}

TEST(seq2seq_trim_gru_target_only) {
  if (!masked_softmax(tensor_zeros(3, (const int[]){1, 1, 2}), NULL)) {
    test_skip("lab02's masked_softmax is a stub in this build (VARIANT=labs)");
    ag_step_reset();
    return;
  }
  ag_step_reset();
  rng_seed(6);
  BahdanauNet net;
  BahdanauNet_init(&net, RNN_GRU, ATTN_ADDITIVE, SV, TV, 8, 16, 2, 0);
  Seq2SeqModel m = BahdanauNet_fast_model(&net); /* the path lab03 trains on */
  CHECK(!m.exec.encoder_ignores_padding);
  check_trim_is_exact(&m);
  check_split_is_exact(&m);
  /* Why the GRU's source is kept whole: its decoder starts from the state after the padding. */
  float *g = malloc(sizeof(float) * (size_t)m.ps->total); /* packed by the check above */
  const float whole = loss_and_grads(&m, true, g);
  m.exec.encoder_ignores_padding = true;
  const float cut = loss_and_grads(&m, true, g);
  CHECK(fabsf(cut - whole) > 1e-4f * fabsf(whole));
  free(g);
  BahdanauNet_free(&net);
}

/* lab03's fast path packs (exec.forward_packed: a row stops at its target's end) and both of its
 * nets take layer 0's input projection from the projected embedding table. Against the readable
 * path (BahdanauNet_model: the exercises), which does neither, on rows sorted by target length as
 * the trainer passes them: the same loss and gradients, for both cells and both attentions; and
 * packing does fewer products than the same trimmed batch unpacked (so it packed). */
static NmtBatch sorted_batch(void) {
  static const float xvl[6] = {2, 5, 1, 4, 3, 5}, yvl[6] = {1, 2, 2, 4, 5, 7};
  return batch_of(6, xvl, yvl);
}

static float sorted_loss_and_grads(Seq2SeqModel *m, bool trim, float *g, double *flops) {
  return batch_loss_and_grads(m, sorted_batch(), trim, g, flops);
}

TEST(seq2seq_pack_rnn_decoder_matches_readable_path) {
  rng_seed(7);
  for (int kind = 0; kind < 2; kind++)
    for (int attn = 0; attn < 2; attn++) {
      BahdanauNet net;
      BahdanauNet_init(&net, kind ? RNN_LSTM : RNN_GRU, attn ? ATTN_DOT : ATTN_ADDITIVE, SV, TV,
                       8, 16, 2, 0); /* dropout 0: every path draws the same (no) masks */
      Seq2SeqModel r = BahdanauNet_model(&net), f = BahdanauNet_fast_model(&net);
      CHECK(r.exec.forward_packed == NULL && f.exec.forward_packed != NULL);
      paramset_pack(&net.ps);
      const long n = net.ps.total;
      float *gr = malloc(sizeof(float) * (size_t)n), *gp = malloc(sizeof(float) * (size_t)n);
      double fr, fp, fu;
      NmtBatch probe = sorted_batch();
      RNNState st;
      Tensor *ok = Seq2SeqEncoder_forward(&net.encoder, probe.X, &st, false); /* NULL: a stub */
      if (ok) {
        Seq2SeqAttentionDecoder_init_state(&net.decoder, ok, &st, probe.X_valid_len);
        ok = Seq2SeqAttentionDecoder_forward(&net.decoder, seq2seq_dec_input(probe.Y, BOS), false);
      }
      ag_step_reset();
      if (!ok) {
        test_skip("the lab03 exercises are stubs in this build (VARIANT=labs)");
        free(gr), free(gp), BahdanauNet_free(&net);
        return;
      }
      const float lr = sorted_loss_and_grads(&r, false, gr, &fr); /* readable, whole */
      Seq2SeqModel unpacked = f;
      unpacked.exec.forward_packed = NULL;
      sorted_loss_and_grads(&unpacked, true, gp, &fu); /* fast, trimmed, not packed: its flops */
      const float lp = sorted_loss_and_grads(&f, true, gp, &fp); /* fast, trimmed, packed */
      CHECK(isfinite(lr) && lr > 0);
      CHECK_NEAR(lp, lr, 1e-5 * fabs(lr)); /* the same sums, rounded in another order */
      char what[96];
      snprintf(what, sizeof what, "%s %s packed vs readable", kind ? "LSTM" : "GRU",
               attn ? "dot" : "additive");
      check_grads_match(__LINE__, what, gr, gp, n);
      CHECK(fp < 0.9 * fu); /* rows 0-2 stop after 1-2 of 7 steps */
      free(gr);
      free(gp);
      BahdanauNet_free(&net);
    }
}

/* twin_build: the initializers run inside it draw from the generator it is given, and the
 * program's generator neither moves nor stays redirected afterwards. */
typedef struct {
  ParamSet ps;
  Tensor *W;
} OneParam;

static void build_one_param(void *arg) {
  OneParam *o = arg;
  o->W = param_new(&o->ps, "W", 1, (const int[]){8}); /* (8) */
  init_uniform(o->W, -1.0f, 1.0f);
}

TEST(twin_build_draws_from_its_generator) {
  rng_seed(9);
  const Rng before = g_rng;
  Rng gen, want;
  rng_init(&gen, 123);
  rng_init(&want, 123);
  OneParam o = {0};
  twin_build(&gen, build_one_param, &o);
  CHECK(memcmp(&before, &g_rng, sizeof before) == 0);
  CHECK(rng_current() == &g_rng);
  const float *w = host_read(o.W);
  for (int i = 0; i < 8; i++) CHECK(w[i] == rng_uniform(&want, -1.0f, 1.0f));
  paramset_free(&o.ps);
}
