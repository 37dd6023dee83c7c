/* seq2seq_attention.c — d2l's Seq2SeqEncoder and Seq2SeqAttentionDecoder (section "Bahdanau
 * Attention"), and the pair wrapped as a Seq2SeqModel for common/seq2seq.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/exercise.h"
#include "../../common/rng.h"
#include "../../common/util.h"
#include "lab03/lab03.h"
#include "seq2seq_ids.h"

/* ================================================================ encoder */

void Seq2SeqEncoder_init(Seq2SeqEncoder *e, ParamSet *ps, RnnKind kind, int vocab_size,
                         int embed_size, int num_hiddens, int num_layers, float dropout) {
  Embedding_init(&e->embedding, ps, "encoder.embedding", vocab_size, embed_size);
  RNN_init(&e->rnn, ps, "encoder.rnn", kind, embed_size, num_hiddens, num_layers, dropout);
}

Tensor *Seq2SeqEncoder_forward(const Seq2SeqEncoder *e, Tensor *X, RNNState *state,
                               bool training) {
  check_ids("Seq2SeqEncoder_forward", X);
  Tensor *emb = Embedding_forward(&e->embedding, ids_time_major(X)); /* (T, B, embed) */
  return RNN_forward(&e->rnn, emb, NULL, state, training);          /* (T, B, H) */
}

/* ================================================================ decoder */

void Seq2SeqAttentionDecoder_init(Seq2SeqAttentionDecoder *d, ParamSet *ps, RnnKind kind,
                                  AttnKind attn, int vocab_size, int embed_size,
                                  int num_hiddens, int num_layers, float dropout) {
  memset(d, 0, sizeof *d);
  d->attn_kind = attn;
  if (attn == ATTN_ADDITIVE)
    AdditiveAttention_init(&d->attention, ps, "decoder.attention", num_hiddens, num_hiddens,
                           num_hiddens, dropout);
  else
    DotProductAttention_init(&d->dot, dropout);
  Embedding_init(&d->embedding, ps, "decoder.embedding", vocab_size, embed_size);
  /* layer 0 takes [context (H), embedding (E)]: its W_xh holds the H context rows; the E
   * embedding rows are W_xh_emb. Both get the Xavier bound of the whole (E + H, G) matrix. */
  RNN_init(&d->rnn, ps, "decoder.rnn", kind, num_hiddens, num_hiddens, num_layers, dropout);
  const int G = (kind == RNN_GRU ? 3 : 4) * num_hiddens;
  d->W_xh_emb = param_new(ps, "decoder.rnn.l0.W_xh_emb", 2, (const int[]){embed_size, G});
  init_xavier_uniform(d->rnn.layer[0].W_xh, embed_size + num_hiddens, G);
  init_xavier_uniform(d->W_xh_emb, embed_size + num_hiddens, G);
  Linear_init(&d->dense, ps, "decoder.dense", num_hiddens, vocab_size, true);
  /* d2l's xavier_init_weights resets nn.Linear *weights* only: the dense bias keeps PyTorch's
   * default U(-1/sqrt(fan_in), 1/sqrt(fan_in)), not Linear_init's zeros */
  const float bound = 1.0f / sqrtf((float)num_hiddens);
  init_uniform(d->dense.b, -bound, bound);
}

void Seq2SeqAttentionDecoder_init_state(Seq2SeqAttentionDecoder *d, Tensor *enc_outputs,
                                        const RNNState *enc_state, Tensor *enc_valid_lens) {
  d->enc_outputs = t_permute(enc_outputs, (const int[]){1, 0, 2}); /* (B, T, H) */
  /* the keys are the same at every step: projected once here (exercise 3.3 takes them so) */
  d->keys_proj = d->attn_kind == ATTN_ADDITIVE ? Linear_forward(&d->attention.W_k, d->enc_outputs)
                                               : NULL; /* (B, T, H) */
  d->enc_valid_lens = enc_valid_lens;
  d->state = *enc_state;
  d->attention_weights = NULL;
}

/* The context of one step: attention of the query over the encoder outputs, (B, 1, H); its
 * weights go to d->attention_weights. NULL when an exercise it calls is a stub. */
static Tensor *decoder_attention(Seq2SeqAttentionDecoder *d, Tensor *query, bool training) {
  Tensor *context;
  if (d->attn_kind == ATTN_ADDITIVE) {
    context = additive_attention_cached(&d->attention, query, d->keys_proj, d->enc_outputs,
                                        d->enc_valid_lens, training);
    d->attention_weights = d->attention.attention_weights;
  } else {
    context = DotProductAttention_forward(&d->dot, query, d->enc_outputs, d->enc_outputs,
                                          d->enc_valid_lens, training);
    d->attention_weights = d->dot.attention_weights;
  }
  return context;
}

/* d2l's Seq2SeqAttentionDecoder.forward: for each step, the last layer's state queries the
 * encoder outputs, and the RNN takes [context, embedding] one step on from the state. */
Tensor *Seq2SeqAttentionDecoder_forward(Seq2SeqAttentionDecoder *d, Tensor *X, bool training) {
  check_ids("Seq2SeqAttentionDecoder_forward", X);
  const int B = X->shape[0], T = X->shape[1], H = d->rnn.num_hiddens, L = d->rnn.num_layers;
  if (!d->enc_outputs || d->enc_outputs->shape[0] != B)
    tensor_error("Seq2SeqAttentionDecoder_forward", "call init_state with a batch of %d first", B);
  if (T > 512) tensor_error("Seq2SeqAttentionDecoder_forward", "num_steps %d > 512", T);
  Tensor *emb = Embedding_forward(&d->embedding, ids_time_major(X)); /* (T, B, E) */
  const int E = emb->shape[2];
  /* the RNN reads [context, embedding]: layer 0's input weights are the two blocks stacked */
  RNN rnn = d->rnn;
  rnn.input_size = H + E;
  rnn.layer[0].W_xh = t_cat2(d->rnn.layer[0].W_xh, d->W_xh_emb, 0); /* (H + E, G) */
  Tensor *outs[512];
  for (int t = 0; t < T; t++) {
    Tensor *query = t_view(d->state.H[L - 1], B, 1, H);         /* (B, 1, H) */
    Tensor *context = decoder_attention(d, query, training);    /* (B, 1, H) */
    if (!context) return NULL;
    Tensor *x = t_cat2(context, t_view(t_slice(emb, 0, t, t + 1), B, 1, E), 2); /* (B, 1, H+E) */
    outs[t] = RNN_forward(&rnn, t_view(x, 1, B, H + E), &d->state, &d->state, training);
    if (!outs[t]) return NULL; /* (1, B, H) */
  }
  Tensor *top = T == 1 ? outs[0] : t_concat(outs, T, 0); /* (T, B, H) */
  Tensor *outputs = Linear_forward(&d->dense, top);       /* (T, B, vocab) */
  return t_transpose(outputs, 0, 1); /* (B, T, vocab) */
}

/* ================================================================ the model */

void BahdanauNet_init(BahdanauNet *n, RnnKind kind, AttnKind attn, int src_vocab,
                      int tgt_vocab, int embed_size, int num_hiddens, int num_layers,
                      float dropout) {
  memset(n, 0, sizeof *n);
  Seq2SeqEncoder_init(&n->encoder, &n->ps, kind, src_vocab, embed_size, num_hiddens,
                      num_layers, dropout);
  Seq2SeqAttentionDecoder_init(&n->decoder, &n->ps, kind, attn, tgt_vocab, embed_size,
                               num_hiddens, num_layers, dropout);
  snprintf(n->tag, sizeof n->tag, "bahdanau %s %s embed%d hidden%d layers%d src%d tgt%d",
           kind == RNN_GRU ? "gru" : "lstm", attn == ATTN_ADDITIVE ? "additive" : "dot",
           embed_size, num_hiddens, num_layers, src_vocab, tgt_vocab);
}

/* d2l's EncoderDecoder.forward: encode, hand the encoder's outputs and state to the decoder,
 * decode teacher-forced. NEED stops the lab, naming the exercise, where one is a stub. */
static Tensor *net_forward(void *p, Tensor *X, Tensor *X_valid_len, Tensor *dec_X, bool training) {
  BahdanauNet *n = p;
  RNNState st;
  Tensor *enc_out = NEED(Seq2SeqEncoder_forward(&n->encoder, X, &st, training),
                         "the encoder's cells (exercises 3.1 / 3.2)"); /* (T, B, H) */
  Seq2SeqAttentionDecoder_init_state(&n->decoder, enc_out, &st, X_valid_len);
  return NEED(Seq2SeqAttentionDecoder_forward(&n->decoder, dec_X, training),
              "the decoder (exercise 3.3 additive_attention_cached or lab02's attention)");
}

static void net_begin_decode(void *p, Tensor *X, Tensor *X_valid_len) {
  BahdanauNet *n = p;
  RNNState st;
  Tensor *enc_out = NEED(Seq2SeqEncoder_forward(&n->encoder, X, &st, false),
                         "the encoder's cells (exercises 3.1 / 3.2)");
  Seq2SeqAttentionDecoder_init_state(&n->decoder, enc_out, &st, X_valid_len);
}

static Tensor *net_decode_step(void *p, int token, int pos) {
  (void)pos;
  BahdanauNet *n = p;
  Tensor *x = tensor_full(2, (const int[]){1, 1}, (float)token); /* (1, 1) */
  Tensor *y = NEED(Seq2SeqAttentionDecoder_forward(&n->decoder, x, false), "the decoder");
  return t_view(y, 1, y->shape[2]); /* (1, vocab) */
}

static Tensor *net_step_attention(void *p) {
  return ((BahdanauNet *)p)->decoder.attention_weights; /* (1, 1, num_steps) */
}

/* A second net like m's, of the same sizes (read off the layers), reading m's values
 * (common/step.c's twin_build draws its init). */
static void net_twin_new(const Seq2SeqModel *m, Seq2SeqModel *twin) {
  const BahdanauNet *n = m->net;
  const RNN *r = &n->encoder.rnn;
  BahdanauNet *t = xcalloc(1, sizeof *t);
  BahdanauNet_init(t, r->kind, n->decoder.attn_kind, n->encoder.embedding.vocab,
                   n->decoder.embedding.vocab, n->encoder.embedding.dim, r->num_hiddens,
                   r->num_layers, r->dropout);
  paramset_share_values(&t->ps, &n->ps);
  *twin = BahdanauNet_model(t);
}

static void net_twin_free(Seq2SeqModel *twin) {
  BahdanauNet_free(twin->net);
  free(twin->net);
}

Seq2SeqModel BahdanauNet_model(BahdanauNet *n) {
  return (Seq2SeqModel){.name = n->decoder.rnn.kind == RNN_GRU
                                    ? "Seq2SeqAttentionDecoder (GRU)"
                                    : "Seq2SeqAttentionDecoder (LSTM)",
                        .net = n,
                        .ps = &n->ps,
                        .forward = net_forward,
                        .begin_decode = net_begin_decode,
                        .decode_step = net_decode_step,
                        .step_attention = net_step_attention,
                        .exec = {.twin_new = net_twin_new, .twin_free = net_twin_free}};
}

void BahdanauNet_free(BahdanauNet *n) { paramset_free(&n->ps); }
