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

/* ids (batch, num_steps) -> (num_steps, batch): the time-major order the RNN runs in (d2l
 * permutes the embedded sequence; transposing the ids first gives the same tensor). */
static Tensor *ids_time_major(Tensor *X) { return t_transpose(t_detach(X), 0, 1); }

static void check_ids(const char *op, Tensor *X) {
  char s[64];
  if (!X || X->ndim != 2)
    tensor_error(op, "X has shape %s, expected (batch, num_steps) token ids",
                 X ? shape_str(X, s, sizeof s) : "NULL");
}

/* An embedding followed by a linear layer, as both recurrent nets start (the encoder's layer 0
 * and the embedding rows of the decoder's): embedding(ids) @ W + b is row ids of table @ W + b.
 * Where the vocabulary has fewer rows than there are ids, projecting the table and picking rows
 * does fewer products, forward and backward (the table's gradient is then the picked rows'
 * gradients summed per id, times W^T): lab 03's d2l-1.0 batch has 1,152 source ids for 194 words.
 * The same numbers up to rounding. ids (...) -> (..., W's columns). */
static Tensor *embedded_projection(const Embedding *e, Tensor *ids, Tensor *W, Tensor *b) {
  if (e->vocab < ids->size) return t_embedding(t_linear(e->W, W, b), ids);
  return t_linear(Embedding_forward(e, ids), W, b);
}

/* ================================================================ encoder */

void Seq2SeqEncoder_init(Seq2SeqEncoder *e, ParamSet *ps, RnnKind kind, int vocab_size,
                         int embed_size, int num_hiddens, int num_layers, float dropout) {
  Embedding_init(&e->embedding, ps, "encoder.embedding", vocab_size, embed_size);
  RNN_init(&e->rnn, ps, "encoder.rnn", kind, embed_size, num_hiddens, num_layers, dropout);
}

Tensor *Seq2SeqEncoder_forward(const Seq2SeqEncoder *e, Tensor *X, RNNState *state,
                               bool training) {
  check_ids("Seq2SeqEncoder_forward", X);
  Tensor *ids = ids_time_major(X); /* (T, B) */
  if (!e->rnn.reference) {         /* layer 0's input projection straight from the ids */
    const RNNLayerParams *p = &e->rnn.layer[0];
    Tensor *GX0 = embedded_projection(&e->embedding, ids, p->W_xh, p->b_xh); /* (T, B, G) */
    return RNN_forward_projected(&e->rnn, GX0, NULL, state, training);      /* (T, B, H) */
  }
  Tensor *emb = Embedding_forward(&e->embedding, ids);      /* (T, B, embed) */
  return RNN_forward(&e->rnn, emb, NULL, state, training); /* (T, B, H) */
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

/* W_k(enc_outputs) at the source positions attention can see. A key past its row's valid
 * length gets weight 0 whatever its score (masked_softmax), so its projection is never read:
 * where a quarter or more of the positions are padding (lab03's d2l-1.0 batches: about half),
 * only the valid rows are projected, and the others read a row of zeros. The rows are picked
 * and put back with t_embedding, whose backward adds the gradients where they came from.
 * enc_outputs (B, T, H) -> (B, T, H). */
static Tensor *keys_projection(const Linear *W_k, Tensor *enc_outputs, Tensor *valid_lens) {
  const int B = enc_outputs->shape[0], T = enc_outputs->shape[1], H = enc_outputs->shape[2];
  if (!valid_lens || valid_lens->ndim != 1 || valid_lens->shape[0] != B)
    return Linear_forward(W_k, enc_outputs);
  const float *vl = host_read(valid_lens);
  int nv = 0;
  for (int b = 0; b < B; b++) nv += vl[b] < 0 ? 0 : vl[b] < (float)T ? (int)vl[b] : T;
  if (4 * nv > 3 * B * T || nv == 0) return Linear_forward(W_k, enc_outputs);
  float *pick = arena_alloc(sizeof(float) * (size_t)nv);        /* (nv): valid (b, t) -> b*T+t */
  float *put = arena_alloc(sizeof(float) * (size_t)B * (size_t)T); /* (B, T): its row, or nv */
  int k = 0;
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) {
      const bool valid = (float)t < vl[b];
      put[b * T + t] = (float)(valid ? k : nv);
      if (valid) pick[k++] = (float)(b * T + t);
    }
  const Device dev = enc_outputs->device;
  Tensor *pick_ids = tensor_new_on(dev, 1, (const int[]){nv});  /* (nv) */
  Tensor *put_ids = tensor_new_on(dev, 2, (const int[]){B, T}); /* (B, T) */
  tensor_copy_from_host(pick_ids, pick);
  tensor_copy_from_host(put_ids, put);
  Tensor *rows = t_embedding(t_view(enc_outputs, B * T, H), pick_ids); /* (nv, H) */
  Tensor *proj = t_cat2(Linear_forward(W_k, rows),
                        tensor_zeros(2, (const int[]){1, W_k->out}), 0); /* (nv + 1, h) */
  return t_embedding(proj, put_ids);                                    /* (B, T, h) */
}

void Seq2SeqAttentionDecoder_init_state(Seq2SeqAttentionDecoder *d, Tensor *enc_outputs,
                                        const RNNState *enc_state, Tensor *enc_valid_lens) {
  d->enc_outputs = t_permute(enc_outputs, (const int[]){1, 0, 2}); /* (B, T, H) */
  d->keys_proj = d->attn_kind != ATTN_ADDITIVE ? NULL
                 : d->reference ? Linear_forward(&d->attention.W_k, d->enc_outputs) /* (B, T, H) */
                                : keys_projection(&d->attention.W_k, d->enc_outputs, enc_valid_lens);
  d->enc_valid_lens = enc_valid_lens;
  d->state = *enc_state;
  d->attention_weights = NULL;
}

/* Packing (training only): a row whose target ended before step t is weighted 0 by the loss
 * from t on, and the decoder is causal, so nothing it computes for that row at t or later can
 * change the loss or a gradient. With the rows sorted by target length (the trainer sorts them),
 * the rows still running at step t are a suffix [lo_t, B): step t runs on those rows only, as
 * PyTorch's pack_padded_sequence would. lo_t is the longest prefix of rows whose target has
 * ended; unsorted rows still give the right numbers, only less is skipped. */
static int rows_done(const float *vl, int B, int t) {
  int lo = 0;
  while (lo < B && vl[lo] <= (float)t) lo++;
  return lo;
}

/* dec_valid_len NULL: every row runs every step. Otherwise the fused path packs (see above) and
 * the logits of a skipped (row, step) are 0. */
static Tensor *decoder_forward(Seq2SeqAttentionDecoder *d, Tensor *X, Tensor *dec_valid_len,
                               bool training) {
  check_ids("Seq2SeqAttentionDecoder_forward", X);
  const RNN *r = &d->rnn;
  const int B = X->shape[0], T = X->shape[1], H = r->num_hiddens, L = r->num_layers;
  if (!d->enc_outputs || d->enc_outputs->shape[0] != B)
    tensor_error("Seq2SeqAttentionDecoder_forward", "call init_state with a batch of %d first", B);
  if (T > 512) tensor_error("Seq2SeqAttentionDecoder_forward", "num_steps %d > 512", T);
  if (dec_valid_len && (dec_valid_len->ndim != 1 || dec_valid_len->shape[0] != B))
    tensor_error("Seq2SeqAttentionDecoder_forward", "dec_valid_len must be (%d), one per row", B);
  const bool pack = dec_valid_len && !d->reference;
  /* lo[t]: the rows before it have ended by step t (all 0 without packing); off[t]: step t's
   * first row in the packed (P, ...) arrays, which hold step 0's running rows, then step 1's... */
  int lo[513], off[513];
  const float *vl = pack ? host_read(dec_valid_len) : NULL;
  off[0] = 0;
  for (int t = 0; t < T; t++) {
    lo[t] = pack ? rows_done(vl, B, t) : 0;
    off[t + 1] = off[t] + (B - lo[t]);
  }
  const int P = off[T]; /* positions computed */
  Tensor *ids = ids_time_major(X); /* (T, B) */
  if (pack && P < T * B) {         /* the running rows' ids, step after step: (1, P) */
    Tensor *pieces[512];
    int n = 0;
    for (int t = 0; t < T; t++)
      if (lo[t] < B) pieces[n++] = t_slice(t_slice(ids, 0, t, t + 1), 1, lo[t], B);
    ids = t_concat(pieces, n, 1);
  }
  ids = t_view(ids, P); /* (P) */
  /* the readable cells take the embedding; the fused ones the embedding half of layer 0's input
   * projection, all steps at once */
  Tensor *emb = d->reference ? Embedding_forward(&d->embedding, ids) : NULL; /* (P, E) */
  Tensor *GX_emb = d->reference ? NULL /* (P, G) */
                                : embedded_projection(&d->embedding, ids, d->W_xh_emb,
                                                      r->layer[0].b_xh);
  Tensor *outs[512];
  RNNState *s = &d->state;
  /* --unfused: layer 0's readable cell takes [context, embedding], so its input weights are
   * the two blocks stacked (once per call, not per step) */
  RNNLayerParams full = {0};
  if (d->reference) {
    const RNNLayerParams *p0 = &r->layer[0];
    full = (RNNLayerParams){t_cat2(p0->W_xh, d->W_xh_emb, 0), p0->W_hh, p0->b_xh, p0->b_hh};
  }
  /* what the attention reads, for the running rows [cur, B) */
  int cur = 0;
  Tensor *enc_out = d->enc_outputs, *keys_proj = d->keys_proj, *enc_vl = d->enc_valid_lens;
  int steps = T;
  for (int t = 0; t < T; t++) {
    if (lo[t] == B) { /* every row has ended (a target trimmed by its caller never gets here) */
      steps = t;
      break;
    }
    if (lo[t] > cur) { /* rows [cur, lo[t]) ended: drop them from the state and the memory */
      const int k = lo[t] - cur, n = B - cur;
      for (int l = 0; l < L; l++) {
        s->H[l] = t_slice(s->H[l], 0, k, n);
        if (s->C[l]) s->C[l] = t_slice(s->C[l], 0, k, n);
      }
      cur = lo[t];
      enc_out = t_slice(d->enc_outputs, 0, cur, B);
      if (keys_proj) keys_proj = t_slice(d->keys_proj, 0, cur, B);
      if (enc_vl) enc_vl = t_slice(d->enc_valid_lens, 0, cur, B);
    }
    const int n = B - cur;                        /* running rows */
    Tensor *query = t_view(s->H[L - 1], n, 1, H); /* (n, 1, H): the last layer's state */
    Tensor *context;                              /* (n, 1, H) */
    if (d->attn_kind == ATTN_ADDITIVE && d->reference) {
      context = additive_attention_cached(&d->attention, query, keys_proj, enc_out, enc_vl,
                                          training);
      if (!context) return NULL;
      d->attention_weights = d->attention.attention_weights;
    } else if (d->attn_kind == ATTN_ADDITIVE) {
      /* exercise 3.3's computation with the scores fused; masked_softmax is lab02's */
      Tensor *q = Linear_forward(&d->attention.W_q, query);                  /* (n, 1, H) */
      Tensor *scores = additive_scores_fused(q, keys_proj, d->attention.w_v.W); /* (n, 1, T) */
      Tensor *w = masked_softmax(scores, enc_vl);                            /* (n, 1, T) */
      if (!w) return NULL;
      d->attention.attention_weights = d->attention_weights = w;
      context = t_bmm(Dropout_forward(&d->attention.dropout, w, training), enc_out);
    } else {
      context = DotProductAttention_forward(&d->dot, query, enc_out, enc_out, enc_vl, training);
      if (!context) return NULL;
      d->attention_weights = d->dot.attention_weights;
    }
    if (d->reference) { /* the readable cells on the concatenated input [context, embedding] */
      Tensor *x = t_cat2(t_view(context, B, H),
                         t_view(t_slice(emb, 0, t * B, (t + 1) * B), B, emb->shape[1]), 1); /* (B, H+E) */
      for (int l = 0; l < L; l++) {
        const RNNLayerParams *p = l == 0 ? &full : &r->layer[l];
        if (l > 0) x = t_dropout(x, r->dropout, training);
        s->H[l] = r->kind == RNN_GRU ? gru_cell(p, x, s->H[l])
                                     : lstm_cell(p, x, s->H[l], s->C[l], &s->C[l]);
        if (!s->H[l]) return NULL;
        x = s->H[l];
      }
      outs[t] = x; /* (B, H) */
      continue;
    }
    /* layer 0: gx = context @ W_xh(context rows) + (embedding @ W_xh_emb + b_xh)[step t] */
    Tensor *gx = t_add(t_matmul(t_view(context, n, H), r->layer[0].W_xh),
                       t_slice(GX_emb, 0, off[t], off[t + 1])); /* (n, G) */
    Tensor *inp = NULL;
    for (int l = 0; l < L; l++) {
      const RNNLayerParams *p = &r->layer[l];
      if (l > 0) gx = t_linear(t_dropout(inp, r->dropout, training), p->W_xh, p->b_xh);
      Tensor *o = rnn_cell_fused(r->kind, gx, s->H[l], s->C[l], p->W_hh, p->b_hh);
      if (r->kind == RNN_LSTM) {
        s->H[l] = t_slice(o, 1, 0, H);
        s->C[l] = t_slice(o, 1, H, 2 * H);
      } else {
        s->H[l] = o;
      }
      inp = s->H[l]; /* (n, H) */
    }
    outs[t] = inp;
  }
  /* the top layer's states of every computed position, step after step: (P, H) */
  const int V = d->dense.out;
  Tensor *logits = steps == 0 ? NULL                                 /* no row had a target */
                   : Linear_forward(&d->dense, steps == 1 ? outs[0] : t_concat(outs, steps, 0));
  if (P < T * B) { /* back to (T * B, vocab), step-major, with 0 where a row had ended */
    Tensor *pieces[1024];
    int n = 0;
    for (int t = 0; t < T; t++) {
      if (lo[t] > 0) pieces[n++] = tensor_zeros(2, (const int[]){lo[t], V});
      if (lo[t] < B) pieces[n++] = t_slice(logits, 0, off[t], off[t + 1]);
    }
    logits = t_concat(pieces, n, 0);
  }
  return t_transpose(t_view(logits, T, B, V), 0, 1); /* (B, T, vocab) */
}

Tensor *Seq2SeqAttentionDecoder_forward(Seq2SeqAttentionDecoder *d, Tensor *X, bool training) {
  return decoder_forward(d, X, NULL, training);
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
  n->cfg.kind = kind;
  n->cfg.attn = attn;
  n->cfg.src_vocab = src_vocab;
  n->cfg.tgt_vocab = tgt_vocab;
  n->cfg.embed_size = embed_size;
  n->cfg.num_hiddens = num_hiddens;
  n->cfg.num_layers = num_layers;
  n->cfg.dropout = dropout;
}

static Tensor *net_forward_packed(void *p, Tensor *X, Tensor *X_valid_len, Tensor *dec_X,
                                  Tensor *dec_valid_len, bool training) {
  BahdanauNet *n = p;
  RNNState st;
  Tensor *enc_out = NEED(Seq2SeqEncoder_forward(&n->encoder, X, &st, training),
                         "the encoder's cells (exercises 3.1 / 3.2)"); /* (T, B, H) */
  Seq2SeqAttentionDecoder_init_state(&n->decoder, enc_out, &st, X_valid_len);
  return NEED(decoder_forward(&n->decoder, dec_X, dec_valid_len, training),
              "the decoder (exercise 3.3 additive_attention_cached or lab02's attention)");
}

static Tensor *net_forward(void *p, Tensor *X, Tensor *X_valid_len, Tensor *dec_X, bool training) {
  return net_forward_packed(p, X, X_valid_len, dec_X, NULL, training);
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

/* A part's cost in positions x passes (forward 1, backward 2): the encoder runs every source
 * column (its state after the padding starts the decoder), the packing decoder only its rows'
 * target lengths. */
static double net_part_cost(const Seq2SeqPartShape *p) {
  return 3.0 * ((double)p->rows * (double)p->src_cols + p->tgt_tokens);
}

/* A second net like m's, reading m's values (common/step.c's twin_build draws its init). */
static void net_twin_new(const Seq2SeqModel *m, Seq2SeqModel *twin) {
  const BahdanauNet *n = m->net;
  BahdanauNet *r = xcalloc(1, sizeof *r);
  BahdanauNet_init(r, n->cfg.kind, n->cfg.attn, n->cfg.src_vocab, n->cfg.tgt_vocab,
                   n->cfg.embed_size, n->cfg.num_hiddens, n->cfg.num_layers, n->cfg.dropout);
  BahdanauNet_set_reference(r, n->decoder.reference);
  paramset_share_values(&r->ps, &n->ps);
  *twin = BahdanauNet_model(r);
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
                        .exec = {.forward_packed = net_forward_packed,
                                 .part_cost = net_part_cost,
                                 .twin_new = net_twin_new,
                                 .twin_free = net_twin_free}};
}

void BahdanauNet_set_reference(BahdanauNet *n, bool on) {
  n->encoder.rnn.reference = n->decoder.rnn.reference = n->decoder.reference = on;
}

void BahdanauNet_free(BahdanauNet *n) { paramset_free(&n->ps); }
