/* Tests of lab 03 (chapters/03_bahdanau, common/step.c): the fused GRU/LSTM cells against a
 * hand-written double-precision step and by finite differences, the fused additive scores,
 * gradient checks through the whole attention decoder (readable and fast paths), the fast path
 * against the readable one, the masked loss by hand, checkpoints (round trip; truncated,
 * corrupted, foreign and mismatched files), and a short training run on an in-memory corpus
 * after the lab's agreement check. The exercise functions come from the variant built; with
 * VARIANT=labs the tests that need them say so and skip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/seq2seq.h"
#include "../golden_io.h"
#include "../test.h"
#include "../../chapters/03_bahdanau/seq2seq_attention_fast.h"
#include "lab03/lab03.h"

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

/* ---------------------------------------------------------------- cells */

static Tensor *rnd(int r, int c, float s) { return tensor_randn(2, (const int[]){r, c}, 0, s); }

/* The GRU / LSTM step in double from the raw arrays: the definitions, independent of ops.h.
 * Returns H' (and C' for the LSTM) in out (B x H, then B x H for C'). */
static void ref_step(RnnKind k, int B, int in, int H, const float *x, const float *h,
                     const float *c, const float *Wx, const float *Wh, const float *bx,
                     const float *bh, double *out) {
  int G = (k == RNN_GRU ? 3 : 4) * H;
  double *gx = calloc((size_t)G, sizeof(double)), *gh = calloc((size_t)G, sizeof(double));
  for (int b = 0; b < B; b++) {
    for (int g = 0; g < G; g++) {
      gx[g] = bx[g];
      gh[g] = bh[g];
      for (int i = 0; i < in; i++) gx[g] += (double)x[b * in + i] * Wx[i * G + g];
      for (int i = 0; i < H; i++) gh[g] += (double)h[b * H + i] * Wh[i * G + g];
    }
    for (int j = 0; j < H; j++) {
      if (k == RNN_GRU) {
        double r = sigm(gx[j] + gh[j]), z = sigm(gx[H + j] + gh[H + j]);
        double n = tanh(gx[2 * H + j] + r * gh[2 * H + j]);
        out[b * H + j] = (1 - z) * n + z * h[b * H + j];
      } else {
        double i_ = sigm(gx[j] + gh[j]), f = sigm(gx[H + j] + gh[H + j]);
        double g_ = tanh(gx[2 * H + j] + gh[2 * H + j]), o = sigm(gx[3 * H + j] + gh[3 * H + j]);
        double cn = f * c[b * H + j] + i_ * g_;
        out[b * H + j] = o * tanh(cn);
        out[B * H + b * H + j] = cn;
      }
    }
  }
  free(gx);
  free(gh);
}

static RNNLayerParams make_params(RnnKind k, int in, int H) {
  int G = (k == RNN_GRU ? 3 : 4) * H;
  return (RNNLayerParams){rnd(in, G, 0.5f), rnd(H, G, 0.5f), tensor_randn(1, (const int[]){G}, 0, 0.3f),
                          tensor_randn(1, (const int[]){G}, 0, 0.3f)};
}

static void check_cell_values(RnnKind k) {
  const int B = 3, in = 5, H = 4;
  RNNLayerParams p = make_params(k, in, H);
  Tensor *x = rnd(B, in, 1), *h = rnd(B, H, 1), *c = rnd(B, H, 1);
  double want[2 * 3 * 4];
  ref_step(k, B, in, H, x->data, h->data, c->data, p.W_xh->data, p.W_hh->data, p.b_xh->data,
           p.b_hh->data, want);
  float wf[24];
  for (int i = 0; i < 24; i++) wf[i] = (float)want[i];
  Tensor *o = rnn_cell_fused(k, t_linear(x, p.W_xh, p.b_xh), h, k == RNN_LSTM ? c : NULL, p.W_hh,
                             p.b_hh);
  /* float32 sums of 5-9 products and the fast tanh: a few ulps of values of order 1 */
  if (k == RNN_GRU) {
    CHECK_CLOSE(o->data, wf, B * H, 1e-6, 1e-5);
  } else {
    Tensor *hh = t_slice(o, 1, 0, H), *cc = t_slice(o, 1, H, 2 * H);
    CHECK_CLOSE(hh->data, wf, B * H, 1e-6, 1e-5);
    CHECK_CLOSE(cc->data, wf + B * H, B * H, 1e-6, 1e-5);
  }
  Tensor *mine = NULL, *c_new = NULL;
  mine = k == RNN_GRU ? gru_cell(&p, x, h) : lstm_cell(&p, x, h, c, &c_new);
  if (!mine) {
    test_skip("the exercise cell is a stub in this build (VARIANT=labs)");
    return;
  }
  CHECK_CLOSE(mine->data, wf, B * H, 1e-6, 1e-5); /* same reason */
  if (k == RNN_LSTM && c_new) CHECK_CLOSE(c_new->data, wf + B * H, B * H, 1e-6, 1e-5);
}

TEST(lab03_gru_cell_values) { check_cell_values(RNN_GRU); }
TEST(lab03_lstm_cell_values) { check_cell_values(RNN_LSTM); }

static Tensor *f_gru_fused(Tensor **in, void *ctx) {
  return rnn_cell_fused(RNN_GRU, in[0], in[1], NULL, in[2], in[3]);
}
static Tensor *f_lstm_fused(Tensor **in, void *ctx) {
  return rnn_cell_fused(RNN_LSTM, in[0], in[1], in[2], in[3], in[4]);
}

TEST(lab03_gradcheck_gru_cell_fused) {
  const int B = 3, H = 4;
  GRADCHECK(f_gru_fused, ((Tensor *[]){rnd(B, 3 * H, 1), rnd(B, H, 1), rnd(H, 3 * H, 0.5f),
                                      tensor_randn(1, (const int[]){3 * H}, 0, 0.5f)}),
            4, NULL);
}

TEST(lab03_gradcheck_lstm_cell_fused) {
  const int B = 3, H = 4;
  GRADCHECK(f_lstm_fused, ((Tensor *[]){rnd(B, 4 * H, 1), rnd(B, H, 1), rnd(B, H, 1),
                                       rnd(H, 4 * H, 0.5f),
                                       tensor_randn(1, (const int[]){4 * H}, 0, 0.5f)}),
            5, NULL);
}

/* A whole layer over 4 steps: the (T, B, G) input projection with per-step offsets. */
static Tensor *f_rnn_layer(Tensor **in, void *ctx) {
  RNN *r = ctx;
  r->layer[0] = (RNNLayerParams){in[1], in[2], in[3], in[4]};
  RNNState st;
  RNNState init = {{in[5]}, {NULL}};
  return RNN_forward_fused(r, in[0], NULL, &init, &st, false);
}

TEST(lab03_gradcheck_gru_layer) {
  const int T = 4, B = 2, in = 3, H = 3;
  RNN r = {.kind = RNN_GRU, .input_size = in, .num_hiddens = H, .num_layers = 1};
  GRADCHECK(f_rnn_layer, ((Tensor *[]){tensor_randn(3, (const int[]){T, B, in}, 0, 1),
                                      rnd(in, 3 * H, 0.5f), rnd(H, 3 * H, 0.5f),
                                      tensor_randn(1, (const int[]){3 * H}, 0, 0.3f),
                                      tensor_randn(1, (const int[]){3 * H}, 0, 0.3f), rnd(B, H, 1)}),
            6, &r);
}

static Tensor *f_scores(Tensor **in, void *ctx) { return additive_scores_fused(in[0], in[1], in[2]); }

TEST(lab03_additive_scores_fused) {
  const int B = 2, Q = 2, K = 3, h = 4;
  Tensor *q = tensor_randn(3, (const int[]){B, Q, h}, 0, 1);
  Tensor *k = tensor_randn(3, (const int[]){B, K, h}, 0, 1);
  Tensor *w = tensor_randn(2, (const int[]){h, 1}, 0, 1);
  Tensor *s = additive_scores_fused(q, k, w);
  for (int b = 0; b < B; b++) /* the definition, in double */
    for (int i = 0; i < Q; i++)
      for (int j = 0; j < K; j++) {
        double want = 0;
        for (int c = 0; c < h; c++)
          want += w->data[c] * tanh((double)q->data[(b * Q + i) * h + c] + k->data[(b * K + j) * h + c]);
        CHECK_NEAR(s->data[(b * Q + i) * K + j], want, 1e-6); /* 4 float products */
      }
  GRADCHECK(f_scores, ((Tensor *[]){q, k, w}), 3, NULL);
  CHECK_ERROR(additive_scores_fused(q, tensor_zeros(3, (const int[]){B, K, h + 1}), w), "keys_proj");
}

/* ---------------------------------------------------------------- the decoder */

/* Whether the exercises the readable decoder calls are implemented in this build. */
static bool exercises_ready(void) {
  RNNLayerParams p = make_params(RNN_GRU, 2, 2);
  AdditiveAttention a;
  ParamSet ps = {0};
  AdditiveAttention_init(&a, &ps, "probe", 2, 2, 2, 0.0f);
  Tensor *z = tensor_zeros(3, (const int[]){1, 1, 2});
  Tensor *x = tensor_zeros(2, (const int[]){1, 2}); /* (batch, input_size = h) */
  const bool ok = gru_cell(&p, x, x) &&
                  additive_attention_cached(&a, z, z, z, NULL, false) && masked_softmax(z, NULL);
  ag_step_reset(); /* nothing on the tape may point at the parameters freed next */
  paramset_free(&ps);
  return ok;
}

typedef struct DecCtx {
  Seq2SeqAttentionDecoder *dec;
  Tensor *X, *valid, *dec_valid; /* dec_valid: the fast path packs (sorted target lengths) */
  bool fast;
} DecCtx;

/* logits of the decoder as a function of the encoder outputs and the initial states */
static Tensor *f_decoder(Tensor **in, void *ctx) {
  DecCtx *c = ctx;
  RNNState st = {{in[1], in[2]}, {NULL, NULL}};
  if (!c->fast) {
    Seq2SeqAttentionDecoder_init_state(c->dec, in[0], &st, c->valid);
    return Seq2SeqAttentionDecoder_forward(c->dec, c->X, false);
  }
  Seq2SeqAttentionDecoder_init_state_fast(c->dec, in[0], &st, c->valid);
  return Seq2SeqAttentionDecoder_forward_fast(c->dec, c->X, c->dec_valid, false);
}

/* Both paths, and the fast one packing (row 0's target ends after 1 of 3 steps). Source valid
 * lengths 2 and 4 of 4: the fast path projects the 6 valid keys only. */
TEST(lab03_gradcheck_attention_decoder) {
  if (!exercises_ready()) {
    test_skip("the lab02/lab03 exercises are stubs in this build (VARIANT=labs)");
    return;
  }
  for (int path = 0; path < 3; path++) {
    ParamSet ps = {0};
    Seq2SeqAttentionDecoder dec;
    const int V = 7, E = 3, H = 4, B = 2, T = 3, S = 4;
    Seq2SeqAttentionDecoder_init(&dec, &ps, RNN_GRU, ATTN_ADDITIVE, V, E, H, 2, 0.0f);
    DecCtx c = {&dec, tensor_new(2, (const int[]){B, T}),
                tensor_from(1, (const int[]){B}, (const float[]){2, 4}),
                path == 2 ? tensor_from(1, (const int[]){B}, (const float[]){1, 3}) : NULL,
                path > 0};
    for (int i = 0; i < B * T; i++) c.X->data[i] = (float)((i * 3 + 1) % V);
    GRADCHECK(f_decoder, ((Tensor *[]){tensor_randn(3, (const int[]){S, B, H}, 0, 1), rnd(B, H, 1),
                                      rnd(B, H, 1)}),
              3, &c);
    /* the padded keys (valid length 2 in row 0) get exactly zero weight (packed: row 0 has
       left the decoder by the last step, whose weights are row 1's) */
    if (path < 2) CHECK(dec.attention_weights->data[2] == 0 && dec.attention_weights->data[3] == 0);
    ag_step_reset(); /* the tape must not outlive the parameters */
    paramset_free(&ps);
  }
}

/* The fast path and the exercises' readable one compute the same logits (no packing here:
   test_seq2seq_trim.c compares the packed loss and gradients). */
TEST(lab03_fast_path_matches_readable) {
  if (!exercises_ready()) {
    test_skip("the exercises are stubs in this build (VARIANT=labs)");
    return;
  }
  for (int kind = 0; kind < 2; kind++) {
    BahdanauNet n;
    BahdanauNet_init(&n, kind ? RNN_LSTM : RNN_GRU, ATTN_ADDITIVE, 9, 8, 5, 6, 2, 0.0f);
    Seq2SeqModel readable = BahdanauNet_model(&n), fast = BahdanauNet_fast_model(&n);
    Tensor *X = tensor_new(2, (const int[]){3, 4}), *D = tensor_new(2, (const int[]){3, 4});
    for (int i = 0; i < 12; i++) {
      X->data[i] = (float)(i % 9);
      D->data[i] = (float)((i * 5) % 8);
    }
    Tensor *valid = tensor_from(1, (const int[]){3}, (const float[]){4, 2, 3});
    Tensor *a = fast.forward(fast.net, X, valid, D, false);
    Tensor *b = readable.forward(readable.net, X, valid, D, false);
    CHECK_CLOSE(a->data, b->data, a->size, 1e-5, 1e-4); /* same math, different rounding order */
    BahdanauNet_free(&n);
  }
}

/* ---------------------------------------------------------------- loss */

TEST(lab03_masked_softmax_ce_loss_by_hand) {
  /* batch 2, 3 steps, vocab 2; logits 0 everywhere except row (0, 0) = (ln 3, 0):
   * p(label 0) = 3/4 there, 1/2 elsewhere. Row 0 valid 2, row 1 valid 1. */
  Tensor *pred = tensor_zeros(3, (const int[]){2, 3, 2});
  pred->data[0] = logf(3.0f);
  Tensor *label = tensor_zeros(2, (const int[]){2, 3});
  Tensor *valid = tensor_from(1, (const int[]){2}, (const float[]){2, 1});
  Tensor *l = MaskedSoftmaxCELoss(pred, label, valid);
  CHECK_INT(l->ndim, 1);
  CHECK_INT(l->shape[0], 2);
  /* mean over the 3 steps, padding counted as 0: (-ln 3/4 - ln 1/2) / 3 and (-ln 1/2) / 3 */
  CHECK_NEAR(l->data[0], (-log(0.75) - log(0.5)) / 3, 1e-6); /* float log/exp of O(1) values */
  CHECK_NEAR(l->data[1], -log(0.5) / 3, 1e-6);
  Tensor *Y = tensor_from(2, (const int[]){2, 3}, (const float[]){5, 6, 7, 8, 9, 10});
  Tensor *dX = seq2seq_dec_input(Y, 2);
  const float want[6] = {2, 5, 6, 2, 8, 9};
  CHECK_CLOSE(dX->data, want, 6, 0, 0);
}

/* ---------------------------------------------------------------- checkpoints */

static char *tmp_path(const char *name) {
  static char buf[4][256];
  static int k;
  char *p = buf[k++ % 4];
  snprintf(p, 256, "/tmp/al_test_lab03_%d_%s", (int)getpid(), name);
  return p;
}

static long file_size(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n;
}

TEST(lab03_checkpoint_round_trip_and_errors) {
  BahdanauNet a, b;
  rng_seed(1);
  BahdanauNet_init(&a, RNN_GRU, ATTN_ADDITIVE, 11, 12, 4, 5, 2, 0.1f);
  rng_seed(2);
  BahdanauNet_init(&b, RNN_GRU, ATTN_ADDITIVE, 11, 12, 4, 5, 2, 0.1f);
  char err[1024];
  char path[256];
  snprintf(path, sizeof path, "%s", tmp_path("ok.ckpt"));
  CHECK_INT(checkpoint_save(&a.ps, a.tag, path, err, sizeof err), 0);
  CHECK(access(tmp_path("ok.ckpt.tmp"), F_OK) != 0); /* the temp file was renamed away */
  CHECK(memcmp(a.ps.items[0]->data, b.ps.items[0]->data, sizeof(float) * 4) != 0);
  CHECK_INT(checkpoint_load(&b.ps, b.tag, path, err, sizeof err), 0);
  for (int i = 0; i < a.ps.n; i++)
    CHECK(memcmp(a.ps.items[i]->data, b.ps.items[i]->data,
                 sizeof(float) * (size_t)a.ps.items[i]->size) == 0);

  /* the raw file, then broken copies of it */
  long n = file_size(path);
  CHECK(n > 100);
  unsigned char *raw = malloc((size_t)n);
  FILE *f = fopen(path, "rb");
  CHECK(fread(raw, 1, (size_t)n, f) == (size_t)n);
  fclose(f);
  float before = b.ps.items[3]->data[0];
  struct { const char *name; long len; long flip; const char *msg; } cases[] = {
      {"trunc.ckpt", n / 2, -1, "truncated"},       /* cut in the middle of a tensor */
      {"short.ckpt", 10, -1, "truncated"},          /* cut inside the header */
      {"flip.ckpt", n, n / 2, "CRC-32 mismatch"},   /* one byte changed */
      {"foreign.ckpt", n, 0, "not an attention-lab checkpoint"},
      {"empty.ckpt", 0, -1, "not an attention-lab checkpoint"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const char *p = tmp_path(cases[c].name);
    f = fopen(p, "wb");
    if (cases[c].flip >= 0) raw[cases[c].flip] ^= 0x5a;
    fwrite(raw, 1, (size_t)cases[c].len, f);
    if (cases[c].flip >= 0) raw[cases[c].flip] ^= 0x5a;
    fclose(f);
    err[0] = '\0';
    CHECK_INT(checkpoint_load(&b.ps, b.tag, p, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, cases[c].msg);
    CHECK_STR_CONTAINS(err, p); /* the message names the file */
    remove(p);
  }
  CHECK(b.ps.items[3]->data[0] == before); /* failed loads left the model alone */
  CHECK_INT(checkpoint_load(&b.ps, b.tag, tmp_path("missing.ckpt"), err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "cannot open");

  /* another architecture: the tag names both models */
  BahdanauNet l;
  BahdanauNet_init(&l, RNN_LSTM, ATTN_ADDITIVE, 11, 12, 4, 5, 2, 0.1f);
  CHECK_INT(checkpoint_load(&l.ps, l.tag, path, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "bahdanau gru");
  CHECK_STR_CONTAINS(err, "bahdanau lstm");
  /* same tag, different tensor count / shape */
  CHECK_INT(checkpoint_load(&l.ps, a.tag, path, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "tensor");
  free(raw);
  remove(path);
  BahdanauNet_free(&a);
  BahdanauNet_free(&b);
  BahdanauNet_free(&l);
}

/* ---------------------------------------------------------------- training smoke test */

static const char k_corpus[] =
    "go .\tva !\nhi .\tsalut .\nrun !\tcours !\nwho ?\tqui ?\nwow !\tça alors !\n"
    "go .\tva !\nhi .\tsalut .\nrun !\tcours !\nwho ?\tqui ?\nwow !\tça alors !\n"
    "fire !\tau feu !\nhelp !\tà l'aide !\nfire !\tau feu !\nhelp !\tà l'aide !\n"
    "no tab on this line\n";

TEST(lab03_train_and_predict_smoke) {
  if (!exercises_ready()) {
    test_skip("the lab02/lab03 exercises are stubs in this build (VARIANT=labs)");
    return;
  }
  NmtConfig cfg;
  CHECK_INT(nmt_preset("d2l-0.17", &cfg), 0);
  cfg.batch_size = 4;
  cfg.num_steps = 6;
  char err[256];
  NmtData *d = nmt_build(k_corpus, sizeof k_corpus - 1, &cfg, err, sizeof err);
  CHECK(d != NULL);
  if (!d) return;
  CHECK_INT(d->pairs.skipped, 1);
  BahdanauNet n;
  BahdanauNet_init(&n, RNN_GRU, ATTN_ADDITIVE, d->src_vocab->size, d->tgt_vocab->size, 8, 16, 2,
                   0.0f);
  /* the lab's agreement check on this corpus: the fast path agrees, so the lab trains with it */
  const BahdanauFastCheck fc = BahdanauNet_fast_check(&n, d);
  CHECK(fc.agrees && !fc.stub && fc.rows == d->n_train);
  CHECK(fc.loss_diff < 1e-5 && fc.grad_diff < 1e-5); /* float rounding, far inside CHECK_TOL */
  long nonzero = 0; /* the check leaves the gradients zero */
  for (long i = 0; i < n.ps.total; i++) nonzero += n.ps.grad[i] != 0;
  CHECK(nonzero == 0);
  Seq2SeqModel m = BahdanauNet_fast_model(&n);
  Seq2SeqTrainConfig tc = {.epochs = 60, .lr = 0.01f, .clip = 1.0f, .quiet = true};
  Seq2SeqTrainResult r;
  CHECK_INT(train_seq2seq(&m, d, &tc, &r), 0);
  CHECK_INT(r.epochs, 60);
  CHECK(r.tokens > 0 && r.tokens_per_sec > 0);
  /* 7 distinct pairs memorized: the loss must fall by far more than noise */
  CHECK(r.final_loss < 0.25 * r.epoch_losses[0]);
  Seq2SeqPrediction p;
  predict_seq2seq(&m, d, "fire !", 0, true, &p);
  CHECK(strcmp(p.text, "au feu !") == 0);
  CHECK_INT(p.src_len, 3); /* fire ! <eos> */
  CHECK(p.attn != NULL && p.attn_len == cfg.num_steps);
  CHECK_INT(p.steps, p.n + 1); /* the <eos> step has its row */
  for (int s = 0; p.attn && s < p.steps; s++) {
    double sum = 0;
    for (int k = 0; k < p.attn_len; k++) sum += p.attn[s * p.attn_len + k];
    CHECK_NEAR(sum, 1.0, 1e-5); /* a softmax row; float rounding */
    CHECK(p.attn[s * p.attn_len + 3] == 0); /* beyond the valid length */
  }
  seq2seq_prediction_free(&p);
  char *dir = tmp_path("summary"), path[300];
  CHECK(mkdir(dir, 0700) == 0);
  snprintf(path, sizeof path, "%s/summary.json", dir);
  Seq2SeqTranslation tr = {"fire !", "au feu !", "au feu !", 1.0};
  Summary *S = summary_new("lab03", 1);
  seq2seq_summary_record(S, "d2l-0.17", d, &r, &tr, 1, NAN);
  summary_write(S, dir);
  FILE *f = fopen(path, "r");
  char buf[8192] = {0};
  if (f) {
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    buf[got] = '\0';
    fclose(f);
  }
  const char *keys[] = {"\"preset\"", "\"src_vocab_size\"", "\"tgt_vocab_size\"", "\"num_pairs\"",
                        "\"epochs\": 60", "\"epoch_losses\"", "\"final_loss\"", "\"tokens_per_sec\"",
                        "\"peak_rss_kb\"", "\"translations\"", "\"mean_bleu\": 1",
                        "\"heldout_bleu4\": null"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) CHECK_STR_CONTAINS(buf, keys[i]);
  remove(path);
  rmdir(dir);
  seq2seq_train_result_free(&r);
  BahdanauNet_free(&n);
  nmt_data_free(d);
}

/* ---------------------------------------------------------------- PyTorch golden */

#define GOLDEN03 "tests/golden/lab03_reference.txt"

/* One step as torch computed it: the fused cell (and the exercise's cell where implemented),
 * forward and every gradient of sum(H' w) (+ sum(C' w) / 2 for the LSTM). */
static void golden_cell(RnnKind k, const Golden *ref, bool exercise) {
  const int B = 3, IN = 5, H = 4, G = (k == RNN_GRU ? 3 : 4) * H;
  const char *pre = k == RNN_GRU ? "gru" : "lstm";
  Tensor *W_xh = golden_gen(2, (const int[]){IN, G}, 0.7, 0.1, 0.6);
  Tensor *W_hh = golden_gen(2, (const int[]){H, G}, 1.3, 0.4, 0.6);
  Tensor *b_xh = golden_gen(1, (const int[]){G}, 0.9, 0.2, 0.3);
  Tensor *b_hh = golden_gen(1, (const int[]){G}, 1.7, 0.5, 0.3);
  Tensor *x = golden_gen(2, (const int[]){B, IN}, 0.37, 0.3, 1.5);
  Tensor *h = golden_gen(2, (const int[]){B, H}, 0.53, 1.1, 0.9);
  Tensor *c = golden_gen(2, (const int[]){B, H}, 0.21, 0.7, 1.2);
  Tensor *w = golden_gen(2, (const int[]){B, H}, 0.61, 0.0, 1.0);
  Tensor *all[] = {W_xh, W_hh, b_xh, b_hh, x, h, c};
  for (int i = 0; i < 7; i++) all[i]->requires_grad = true;
  RNNLayerParams p = {W_xh, W_hh, b_xh, b_hh};
  Tensor *hn, *cn = NULL;
  if (exercise) {
    hn = k == RNN_GRU ? gru_cell(&p, x, h) : lstm_cell(&p, x, h, c, &cn);
    if (!hn) {
      test_skip("the %s exercise cell is a stub in this build (VARIANT=labs)", pre);
      return;
    }
  } else {
    Tensor *o = rnn_cell_fused(k, t_linear(x, W_xh, b_xh), h, k == RNN_LSTM ? c : NULL, W_hh, b_hh);
    hn = k == RNN_GRU ? o : t_slice(o, 1, 0, H);
    if (k == RNN_LSTM) cn = t_slice(o, 1, H, 2 * H);
  }
  Tensor *loss = t_sum_all(t_mul(hn, w));
  if (k == RNN_LSTM) loss = t_add(loss, t_scale(t_sum_all(t_mul(cn, w)), 0.5f));
  ag_backward(loss);
  char name[64];
  struct { const char *suffix; const float *got; long n; } rows[] = {
      {"h", hn->data, B * H}, {"c", cn ? cn->data : NULL, B * H}, {"dx", x->grad, B * IN},
      {"dh", h->grad, B * H}, {"dc", c->grad, B * H}, {"dW_xh", W_xh->grad, IN * G},
      {"dW_hh", W_hh->grad, H * G}, {"db_hh", b_hh->grad, G}};
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    if (k == RNN_GRU && (rows[r].suffix[0] == 'c' || !strcmp(rows[r].suffix, "dc"))) continue;
    snprintf(name, sizeof name, "%s_%s", pre, rows[r].suffix);
    CHECK(rows[r].got != NULL);
    /* float32 on both sides, sums of <= 12 products of O(1) values: a few ulps; 1e-5 abs
     * leaves room for the fast tanh/exp (2e-7 relative) */
    if (rows[r].got) golden_check(ref, name, rows[r].got, rows[r].n, 1e-5, 1e-4);
  }
}

TEST(lab03_cells_match_pytorch) {
  Golden ref;
  if (!golden_open(&ref, GOLDEN03, "tests/golden/lab03_reference.py")) return;
  golden_cell(RNN_GRU, &ref, false);
  golden_cell(RNN_LSTM, &ref, false);
  golden_cell(RNN_GRU, &ref, true);
  golden_cell(RNN_LSTM, &ref, true);
  golden_close(&ref);
}
