/* Graded tests of exercises 6.4 (TransformerEncoderBlock_forward), 6.5
 * (TransformerDecoderBlock_forward and its key/value cache; its causal masking is also tested in
 * test_transformer.c) and 6.6 (predict_seq2seq_greedy), labs/lab06/. 12 points. The block tests
 * run your 6.1-6.3 and lab04 multi-head attention too: those must work. The reference run
 * builds the expected blocks from the same layers, in the book's order (GRADE_REF,
 * tests/grade/grade.h); the greedy-decoding tests drive your loop with a scripted model. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../../chapters/06_transformer/transformer.h"
#include "../grade.h"
#include "../../sine_fill.h"

/* Every parameter of ps from sine_fill, a different phase each: the expected values do not
 * depend on the initializer's random draws. Scale 0.5: layer inputs of order 1. */
static void fill_params(ParamSet *ps) {
  for (int i = 0; i < ps->n; i++)
    sine_fill(ps->items[i]->data, ps->items[i]->size, 0.37 + 0.11 * i, 0.3 * i, 0.5);
}

/* ---------------------------------------------------------------- 6.4 */

GRADED_TEST(lab06_encoder_block, 4,
            "6.4 TransformerEncoderBlock: addnorm2(Y, ffn(Y)), Y = addnorm1(X, attention(X, X, X))") {
  ParamSet ps = {0};
  TransformerEncoderBlock eb;
  TransformerEncoderBlock_init(&eb, &ps, "eb", 8, 16, 2, 0.5f, false);
  fill_params(&ps);
  Tensor *X = tensor_new(3, (int[]){2, 4, 8}); /* (batch, steps, num_hiddens) */
  sine_fill(X->data, X->size, 0.41, 0.3, 1.0);
  Tensor *vl = tensor_from(1, (int[]){2}, (float[]){4, 2}); /* row 1: positions 2, 3 padding */
  Tensor *Y = TransformerEncoderBlock_forward(&eb, X, vl, false);
  EXPECT_NOT_NULL(Y, "TransformerEncoderBlock_forward (evaluation)");
  if (!EXPECT_SHAPE(Y, "encoder block output for X (2, 4, 8)", 2, 4, 8)) return;
#if GRADE_REF
  float want[2 * 4 * 8];
  {
    Tensor *A = MultiHeadAttention_forward(&eb.attention, X, X, X, vl, false);
    Tensor *Yr = AddNorm_forward(&eb.addnorm1, X, A, false);
    Tensor *Zr = AddNorm_forward(&eb.addnorm2, Yr, PositionWiseFFN_forward(&eb.ffn, Yr), false);
    memcpy(want, Zr->data, sizeof want);
  }
#endif
  /* float32 attention, FFN and two layer norms in another order of operations */
  EXPECT_CLOSE(Y->data, want, 2 * 4 * 8, 1e-5, 1e-4,
               "encoder block output: self-attention (masked by valid_lens) in addnorm1, then "
               "the FFN in addnorm2, each AddNorm with its sublayer's input as the residual");
  /* the padding of row 1 (positions 2, 3) changed: its real positions must not move */
  Tensor *X2 = t_copy(X);
  for (int k = 2 * 8; k < 4 * 8; k++) X2->data[4 * 8 + k] += 1.0f;
  Tensor *Y2 = TransformerEncoderBlock_forward(&eb, X2, vl, false);
  EXPECT_NOT_NULL(Y2, "TransformerEncoderBlock_forward (evaluation)");
  if (!EXPECT_SHAPE(Y2, "encoder block output", 2, 4, 8)) return;
  EXPECT_AGREE(Y2->data + 4 * 8, Y->data + 4 * 8, 2 * 8, 1e-6, 0,
               "row 1's positions 0, 1 after changing its padding (positions 2, 3): pass "
               "valid_lens to the self-attention");
  /* training: dropout 0.5 in the attention and both AddNorms must act; gradients flow */
  X->requires_grad = true;
  Tensor *Yt = TransformerEncoderBlock_forward(&eb, X, vl, true);
  EXPECT_NOT_NULL(Yt, "TransformerEncoderBlock_forward (training)");
  if (!EXPECT_SHAPE(Yt, "encoder block output (training)", 2, 4, 8)) return;
  double diff = 0;
  for (long i = 0; i < Yt->size; i++) diff += fabs((double)Yt->data[i] - Y->data[i]);
  EXPECT(diff > 1e-3, "a training pass with dropout 0.5 gave the evaluation pass's output: "
                      "pass `training` on to the attention and the AddNorms");
  ag_backward(t_sum_all(t_square(Yt)));
  EXPECT(X->grad != NULL && eb.attention.W_q.W->grad != NULL && eb.ffn.dense1.W->grad != NULL,
         "no gradient reached X, the attention or the FFN: build the block from the layers' "
         "forwards (no copies of their numbers)");
  paramset_free(&ps);
}

/* ---------------------------------------------------------------- 6.5 */

#if GRADE_REF
/* The book's decoder block from the same layers: self-attention over kv with mask dvl. */
static void decoder_reference(TransformerDecoderBlock *b, Tensor *X, Tensor *kv, Tensor *dvl,
                              Tensor *enc, Tensor *vl, float *want) {
  Tensor *Y = AddNorm_forward(&b->addnorm1, X,
                              MultiHeadAttention_forward(&b->attention1, X, kv, kv, dvl, false),
                              false);
  Tensor *Z = AddNorm_forward(&b->addnorm2, Y,
                              MultiHeadAttention_forward(&b->attention2, Y, enc, enc, vl, false),
                              false);
  Tensor *O = AddNorm_forward(&b->addnorm3, Z, PositionWiseFFN_forward(&b->ffn, Z), false);
  memcpy(want, O->data, sizeof(float) * (size_t)O->size);
}
#endif

GRADED_TEST(lab06_decoder_block_cache, 3,
            "6.5 TransformerDecoderBlock: its three sublayers, the cache (concat, offset) and "
            "the book's mode") {
  ParamSet ps = {0};
  TransformerDecoderBlock db;
  TransformerDecoderBlock_init(&db, &ps, "db", 8, 16, 2, 0.0f, false);
  fill_params(&ps);
  Tensor *X = tensor_new(3, (int[]){2, 5, 8}), *enc = tensor_new(3, (int[]){2, 4, 8});
  sine_fill(X->data, X->size, 0.29, 0.6, 1.0), sine_fill(enc->data, enc->size, 0.53, 0.1, 1.0);
  Tensor *vl = tensor_from(1, (int[]){2}, (float[]){4, 3}); /* source valid lengths */
  X->requires_grad = enc->requires_grad = true;
  /* training, the whole target at once, no cache (dropout 0: deterministic) */
  Tensor *Y = TransformerDecoderBlock_forward(&db, X, enc, vl, NULL, true, DECODER_FIXED);
  EXPECT_NOT_NULL(Y, "TransformerDecoderBlock_forward (training, no cache)");
  if (!EXPECT_SHAPE(Y, "decoder block output for X (2, 5, 8)", 2, 5, 8)) return;
#if GRADE_REF
  float want[2 * 5 * 8];
  decoder_reference(&db, X, X, causal_valid_lens(2, 5, 0), enc, vl, want);
#endif
  /* float32 attention, FFN and three layer norms in another order of operations */
  EXPECT_CLOSE(Y->data, want, 2 * 5 * 8, 1e-5, 1e-4,
               "decoder block output (training pass): masked self-attention in addnorm1, "
               "encoder-decoder attention (enc_valid_lens) in addnorm2, the FFN in addnorm3");
  ag_backward(t_sum_all(t_square(Y)));
  EXPECT(X->grad != NULL && enc->grad != NULL,
         "no gradient reached X or enc_outputs: build the block from the layers' forwards");
  ag_set_grad_enabled(false);
  /* the same target in two calls with the cache, 2 tokens then 3: the second call's queries
   * start at position 2 and attend to the cached 2 and to themselves */
  Tensor *cache = NULL;
  Tensor *Ya = TransformerDecoderBlock_forward(&db, t_slice(X, 1, 0, 2), enc, vl, &cache, false,
                                               DECODER_FIXED);
  EXPECT_NOT_NULL(Ya, "TransformerDecoderBlock_forward (tokens 0, 1 with an empty cache)");
  if (!EXPECT_SHAPE(Ya, "output for tokens 0, 1", 2, 2, 8)) return;
  EXPECT_NOT_NULL(cache, "the cache after the first call (*key_values)");
  if (!EXPECT_SHAPE(cache, "the cache after tokens 0, 1", 2, 2, 8)) return;
  Tensor *Yb = TransformerDecoderBlock_forward(&db, t_slice(X, 1, 2, 5), enc, vl, &cache, false,
                                               DECODER_FIXED);
  EXPECT_NOT_NULL(Yb, "TransformerDecoderBlock_forward (tokens 2..4 after 2 cached)");
  if (!EXPECT_SHAPE(Yb, "output for tokens 2..4", 2, 3, 8)) return;
  for (int b = 0; b < 2; b++) {
    EXPECT_AGREE(Ya->data + b * 2 * 8, Y->data + b * 5 * 8, 2 * 8, 1e-5, 1e-5,
                 "tokens 0, 1 through the cache vs the whole-target pass");
    EXPECT_AGREE(Yb->data + b * 3 * 8, Y->data + (b * 5 + 2) * 8, 3 * 8, 1e-5, 1e-5,
                 "tokens 2..4 after 2 cached vs the whole-target pass: keys and values are the "
                 "cache followed by X, the mask starts at offset 2");
  }
  if (!EXPECT_SHAPE(cache, "the cache after tokens 0..4", 2, 5, 8)) return;
  EXPECT_CLOSE(cache->data, X->data, 2 * 5 * 8, 0, 0,
               "the cache after both calls: the block inputs of tokens 0..4, in order");
  /* --d2l-compat: the book's block masks only in training, so an evaluation pass without a
   * cache lets every query see every key */
  Tensor *Yc = TransformerDecoderBlock_forward(&db, X, enc, vl, NULL, false, DECODER_D2L_COMPAT);
  EXPECT_NOT_NULL(Yc, "TransformerDecoderBlock_forward (DECODER_D2L_COMPAT, evaluation)");
  if (!EXPECT_SHAPE(Yc, "output (DECODER_D2L_COMPAT, evaluation)", 2, 5, 8)) return;
#if GRADE_REF
  decoder_reference(&db, X, X, NULL, enc, vl, want);
#endif
  EXPECT_CLOSE(Yc->data, want, 2 * 5 * 8, 1e-5, 1e-4,
               "DECODER_D2L_COMPAT evaluation pass: the book's block has no mask (NULL "
               "dec_valid_lens) when not training");
  Tensor *Yd = TransformerDecoderBlock_forward(&db, X, enc, vl, NULL, true, DECODER_D2L_COMPAT);
  EXPECT_NOT_NULL(Yd, "TransformerDecoderBlock_forward (DECODER_D2L_COMPAT, training)");
  if (EXPECT_SHAPE(Yd, "output (DECODER_D2L_COMPAT, training)", 2, 5, 8))
    EXPECT_AGREE(Yd->data, Y->data, 2 * 5 * 8, 1e-6, 0,
                 "DECODER_D2L_COMPAT training pass vs DECODER_FIXED's: both causal from 0");
  ag_set_grad_enabled(true);
  paramset_free(&ps);
}

/* ---------------------------------------------------------------- 6.6 */

/* A scripted encoder–decoder: the logits of step (token, pos) peak at next_token(token, pos),
 * so the ids a loop produces tell which tokens it fed back; it records every call. */
enum { MOCK_V = 11, MOCK_K = 3, MOCK_MAX = 16, MOCK_BOS = 1, MOCK_EOS = 2 };
typedef struct MockNet {
  int stop_pos;  /* the step whose peak is <eos> (-1: none) */
  bool tie;      /* a second, later maximum equal to the peak */
  int begun, steps_before_begin;
  float seen_x1, seen_valid;               /* X[0, 1] and X_valid_len[0] at begin_decode */
  float fed[2 * MOCK_MAX];                 /* (token, pos) per decode_step, -1 past the last */
  int nfed;
  Tensor *w;                               /* the last step's attention weights */
} MockNet;

static int next_token(const MockNet *n, int token, int pos) {
  if (pos == n->stop_pos) return MOCK_EOS;
  int t = (token * 7 + pos * 3 + 4) % (MOCK_V - 1); /* never V - 1: the tie's slot */
  return t == MOCK_EOS ? MOCK_EOS + 1 : t;
}

static void mock_begin(void *net, Tensor *X, Tensor *X_valid_len) {
  MockNet *n = net;
  n->begun++;
  n->seen_x1 = X->data[1], n->seen_valid = X_valid_len->data[0];
}

static Tensor *mock_step(void *net, int token, int pos) {
  MockNet *n = net;
  if (!n->begun) n->steps_before_begin++;
  if (n->nfed < MOCK_MAX) n->fed[2 * n->nfed] = (float)token, n->fed[2 * n->nfed + 1] = (float)pos;
  n->nfed++;
  Tensor *logits = tensor_new(2, (int[]){1, MOCK_V}); /* (1, vocab) */
  sine_fill(logits->data, MOCK_V, 0.9, 0.5 + pos, 1.0);
  logits->data[next_token(n, token, pos)] = 4.0f;
  if (n->tie) logits->data[MOCK_V - 1] = 4.0f;
  n->w = tensor_new(3, (int[]){1, 1, MOCK_K}); /* (1, 1, keys) */
  sine_fill(n->w->data, MOCK_K, 0.7, 0.2 + 0.5 * pos + 0.1 * token, 1.0);
  return logits;
}

static Tensor *mock_attention(void *net) { return ((MockNet *)net)->w; }

static Seq2SeqModel mock_model(MockNet *n, int stop_pos, bool tie) {
  memset(n, 0, sizeof *n);
  n->stop_pos = stop_pos, n->tie = tie;
  for (int i = 0; i < 2 * MOCK_MAX; i++) n->fed[i] = -1;
  return (Seq2SeqModel){.name = "scripted", .net = n, .begin_decode = mock_begin,
                        .decode_step = mock_step, .step_attention = mock_attention};
}

#if GRADE_REF
/* The greedy chain of the script: ids (-1 past n), the (token, pos) fed per step (-1 past the
 * last), and the steps run. */
static int greedy_reference(const MockNet *n, int max_steps, float *ids, float *fed) {
  for (int i = 0; i < MOCK_MAX; i++) ids[i] = -1, fed[2 * i] = fed[2 * i + 1] = -1;
  int tok = MOCK_BOS, k = 0, s = 0;
  while (s < max_steps) {
    fed[2 * s] = (float)tok, fed[2 * s + 1] = (float)s;
    int best = next_token(n, tok, s); /* the tie's slot V - 1 comes after it: the first wins */
    s++;
    if (best == MOCK_EOS) break;
    ids[k++] = (float)best, tok = best;
  }
  return s;
}
#endif

/* Run the student's loop on the script and send what it did. */
static void run_greedy(MockNet *n, Seq2SeqModel *m, int max_steps, bool save_attention,
                       Seq2SeqPrediction *p) {
  Tensor *X = tensor_from(2, (int[]){1, 4}, (float[]){5, 9, 2, 0}); /* (1, num_steps) */
  Tensor *vl = tensor_from(1, (int[]){1}, (float[]){3});
  memset(p, 0, sizeof *p);
  int rc = predict_seq2seq_greedy(m, X, vl, MOCK_BOS, MOCK_EOS, max_steps, save_attention, p);
  EXPECT_NEAR(rc, 0, 0, "predict_seq2seq_greedy's return value");
  EXPECT_NEAR(n->begun, 1, 0, "begin_decode calls (once, with X and X_valid_len)");
  EXPECT_NEAR(n->steps_before_begin, 0, 0, "decode_step calls before begin_decode");
  EXPECT_NEAR(n->seen_x1 + 100 * n->seen_valid, 9 + 100 * 3, 0,
              "X and X_valid_len as begin_decode saw them");
  EXPECT_NEAR(n->nfed - p->steps, 0, 0, "decode_step calls minus out->steps");
}

GRADED_TEST(lab06_predict_greedy, 3,
            "6.6 predict_seq2seq_greedy: feed <bos>, then each argmax; stop at <eos>; attention rows") {
  MockNet n;
  Seq2SeqModel m = mock_model(&n, 4, false);
  Seq2SeqPrediction p;
  run_greedy(&n, &m, 10, true, &p);
#if GRADE_REF
  float want_ids[MOCK_MAX], want_fed[2 * MOCK_MAX];
  int want_steps = greedy_reference(&n, 10, want_ids, want_fed);
  REF_CHECK(want_steps == 5, "(test setup: the script must end with <eos> at step 4)");
#endif
  EXPECT_CLOSE(n.fed, want_fed, 2 * MOCK_MAX, 0, 0,
               "(token, position) fed to decode_step, step by step (-1 after the last): <bos> "
               "at 0, then the argmax of each step's logits at the next position");
  float ids[MOCK_MAX];
  for (int i = 0; i < MOCK_MAX; i++) ids[i] = i < p.n && i < MOCK_MAX ? (float)p.ids[i] : -1;
  EXPECT_CLOSE(ids, want_ids, MOCK_MAX, 0, 0,
               "out->ids (-1 past out->n): the argmax of every step before <eos>, <eos> not "
               "included");
  EXPECT_NEAR(p.steps, want_steps, 0, "out->steps (the <eos> step counts)");
  /* attention: one row per step, the <eos> step's too */
  EXPECT_NOT_NULL(p.attn, "out->attn with save_attention and a model with step_attention");
  EXPECT_NEAR(p.attn_len, MOCK_K, 0, "out->attn_len (the weights' size)");
  float rows[5 * MOCK_K];
  for (int i = 0; i < 5 * MOCK_K; i++) rows[i] = p.attn && p.attn_len == MOCK_K ? p.attn[i] : NAN;
#if GRADE_REF
  float want_rows[5 * MOCK_K];
  for (int s = 0; s < 5; s++)
    sine_fill(want_rows + s * MOCK_K, MOCK_K, 0.7, 0.2 + 0.5 * s + 0.1 * want_fed[2 * s], 1.0);
#endif
  EXPECT_CLOSE(rows, want_rows, 5 * MOCK_K, 0, 0,
               "out->attn rows 0..4: step s's step_attention weights in row s, the <eos> step "
               "(4) included");
  free(p.attn);
  /* <eos> at the first step: an empty translation after one step */
  Seq2SeqModel m0 = mock_model(&n, 0, false);
  run_greedy(&n, &m0, 10, true, &p);
  float got0[3] = {(float)p.n, (float)p.steps, p.attn ? p.attn[0] : NAN};
#if GRADE_REF
  float want0[3] = {0, 1, 0};
  sine_fill(want0 + 2, 1, 0.7, 0.2 + 0.1 * MOCK_BOS, 1.0);
#endif
  EXPECT_CLOSE(got0, want0, 3, 0, 0,
               "<eos> at the first step: out->n, out->steps and the one attention row's first "
               "weight");
  free(p.attn);
}

GRADED_TEST(lab06_predict_greedy_max_steps, 2,
            "6.6 predict_seq2seq_greedy: max_steps without <eos>, argmax ties, no attention asked") {
  MockNet n;
  Seq2SeqModel m = mock_model(&n, -1, true);
  Seq2SeqPrediction p;
  run_greedy(&n, &m, 6, false, &p);
#if GRADE_REF
  float want_ids[MOCK_MAX], want_fed[2 * MOCK_MAX];
  int want_steps = greedy_reference(&n, 6, want_ids, want_fed);
  REF_CHECK(want_steps == 6 && want_ids[5] >= 0, "(test setup: 6 steps without <eos>)");
#endif
  EXPECT_CLOSE(n.fed, want_fed, 2 * MOCK_MAX, 0, 0,
               "(token, position) fed to decode_step (-1 after the last): max_steps = 6 steps; "
               "of equal maxima the argmax is the first (torch.argmax's)");
  float ids[MOCK_MAX];
  for (int i = 0; i < MOCK_MAX; i++) ids[i] = i < p.n && i < MOCK_MAX ? (float)p.ids[i] : -1;
  EXPECT_CLOSE(ids, want_ids, MOCK_MAX, 0, 0, "out->ids (-1 past out->n): all 6 argmaxes");
  EXPECT_NEAR(p.steps, want_steps, 0, "out->steps");
  EXPECT(p.attn == NULL, "out->attn must stay NULL when save_attention is false");
  free(p.attn);
}
