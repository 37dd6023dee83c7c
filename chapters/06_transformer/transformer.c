/* transformer.c — the Transformer's blocks' init, stacks, decoder state and Seq2SeqModel adapter
 * (see transformer.h). The exercises of lab 06 (FFN, AddNorm, the causal mask, the blocks'
 * forwards with the key/value cache, greedy decoding) and of labs 04/05 (multi-head attention,
 * positional encoding) are called, not re-implemented, so a VARIANT=labs build runs the
 * student's own code here. */
#include "transformer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/exercise.h"
#include "../../common/rng.h"
#include "../../common/util.h"

/* ---------------------------------------------------------------- small layers' init */

void PositionWiseFFN_init(PositionWiseFFN *f, ParamSet *ps, const char *name, int in,
                          int ffn_num_hiddens, int ffn_num_outputs) {
  char buf[256];
  const char *nm = name && *name ? name : "ffn";
  param_name(buf, sizeof buf, nm, "dense1");
  Linear_init(&f->dense1, ps, buf, in, ffn_num_hiddens, true);
  param_name(buf, sizeof buf, nm, "dense2");
  Linear_init(&f->dense2, ps, buf, ffn_num_hiddens, ffn_num_outputs, true);
}

void AddNorm_init(AddNorm *a, ParamSet *ps, const char *name, int norm_shape, float dropout) {
  if (!(dropout >= 0 && dropout < 1))
    tensor_error("AddNorm_init", "dropout = %g must be in [0, 1)", (double)dropout);
  char buf[256];
  param_name(buf, sizeof buf, name && *name ? name : "addnorm", "ln");
  a->dropout = (Dropout){dropout};
  LayerNorm_init(&a->ln, ps, buf, norm_shape);
}

/* ---------------------------------------------------------------- encoder */

static void check_blks(const char *op, int num_blks) {
  if (num_blks < 1 || num_blks > TRANSFORMER_MAX_BLKS)
    tensor_error(op, "num_blks = %d must be between 1 and %d (TRANSFORMER_MAX_BLKS)", num_blks,
                 TRANSFORMER_MAX_BLKS);
}

void TransformerEncoderBlock_init(TransformerEncoderBlock *b, ParamSet *ps, const char *name,
                                  int num_hiddens, int ffn_num_hiddens, int num_heads,
                                  float dropout, bool use_bias) {
  char buf[256];
  param_name(buf, sizeof buf, name, "attention");
  MultiHeadAttention_init(&b->attention, ps, buf, num_hiddens, num_hiddens, num_hiddens,
                          num_hiddens, num_heads, dropout, use_bias);
  param_name(buf, sizeof buf, name, "addnorm1");
  AddNorm_init(&b->addnorm1, ps, buf, num_hiddens, dropout);
  param_name(buf, sizeof buf, name, "ffn");
  PositionWiseFFN_init(&b->ffn, ps, buf, num_hiddens, ffn_num_hiddens, num_hiddens);
  param_name(buf, sizeof buf, name, "addnorm2");
  AddNorm_init(&b->addnorm2, ps, buf, num_hiddens, dropout);
}

/* TransformerEncoderBlock_forward is exercise 6.4 (labs/lab06/encoder_block.c). */

void TransformerEncoder_init(TransformerEncoder *e, ParamSet *ps, int vocab_size,
                             int num_hiddens, int ffn_num_hiddens, int num_heads, int num_blks,
                             float dropout, bool use_bias) {
  check_blks("TransformerEncoder_init", num_blks);
  e->num_hiddens = num_hiddens;
  e->num_blks = num_blks;
  Embedding_init(&e->embedding, ps, "encoder.embedding", vocab_size, num_hiddens);
  PositionalEncoding_init(&e->pos_encoding, num_hiddens, dropout, 1000);
  for (int i = 0; i < num_blks; i++) {
    char buf[64];
    snprintf(buf, sizeof buf, "encoder.blk%d", i);
    TransformerEncoderBlock_init(&e->blks[i], ps, buf, num_hiddens, ffn_num_hiddens, num_heads,
                                 dropout, use_bias);
  }
}

void TransformerEncoder_free(TransformerEncoder *e) { PositionalEncoding_free(&e->pos_encoding); }

/* Embeddings are scaled by sqrt(d) before the positional encoding is added: an N(0, 1)
 * embedding entry then dominates P's entries in [-1, 1] by about sqrt(d) per entry. */
static Tensor *embed(const Embedding *emb, const PositionalEncoding *pe, Tensor *ids, int offset,
                     bool training) {
  Tensor *E = t_scale(Embedding_forward(emb, ids), sqrtf((float)emb->dim)); /* (B, T, h) */
  return PositionalEncoding_forward(pe, E, offset, training);
}

Tensor *TransformerEncoder_forward(TransformerEncoder *e, Tensor *X, Tensor *valid_lens,
                                   bool training) {
  Tensor *H = embed(&e->embedding, &e->pos_encoding, X, 0, training); /* (batch, steps, h) */
  for (int i = 0; i < e->num_blks && H; i++)
    H = TransformerEncoderBlock_forward(&e->blks[i], H, valid_lens, training);
  return H;
}

/* ---------------------------------------------------------------- decoder */

void TransformerDecoderBlock_init(TransformerDecoderBlock *b, ParamSet *ps, const char *name,
                                  int num_hiddens, int ffn_num_hiddens, int num_heads,
                                  float dropout, bool use_bias) {
  char buf[256];
  param_name(buf, sizeof buf, name, "attention1");
  MultiHeadAttention_init(&b->attention1, ps, buf, num_hiddens, num_hiddens, num_hiddens,
                          num_hiddens, num_heads, dropout, use_bias);
  param_name(buf, sizeof buf, name, "addnorm1");
  AddNorm_init(&b->addnorm1, ps, buf, num_hiddens, dropout);
  param_name(buf, sizeof buf, name, "attention2");
  MultiHeadAttention_init(&b->attention2, ps, buf, num_hiddens, num_hiddens, num_hiddens,
                          num_hiddens, num_heads, dropout, use_bias);
  param_name(buf, sizeof buf, name, "addnorm2");
  AddNorm_init(&b->addnorm2, ps, buf, num_hiddens, dropout);
  param_name(buf, sizeof buf, name, "ffn");
  PositionWiseFFN_init(&b->ffn, ps, buf, num_hiddens, ffn_num_hiddens, num_hiddens);
  param_name(buf, sizeof buf, name, "addnorm3");
  AddNorm_init(&b->addnorm3, ps, buf, num_hiddens, dropout);
}

/* TransformerDecoderBlock_forward, with the key/value cache, is exercise 6.5
 * (labs/lab06/decoder_block.c). */

void TransformerDecoder_init(TransformerDecoder *dd, ParamSet *ps, int vocab_size,
                             int num_hiddens, int ffn_num_hiddens, int num_heads, int num_blks,
                             float dropout, bool use_bias) {
  check_blks("TransformerDecoder_init", num_blks);
  dd->num_hiddens = num_hiddens;
  dd->num_blks = num_blks;
  dd->vocab_size = vocab_size;
  dd->mode = DECODER_FIXED;
  Embedding_init(&dd->embedding, ps, "decoder.embedding", vocab_size, num_hiddens);
  PositionalEncoding_init(&dd->pos_encoding, num_hiddens, dropout, 1000);
  for (int i = 0; i < num_blks; i++) {
    char buf[64];
    snprintf(buf, sizeof buf, "decoder.blk%d", i);
    TransformerDecoderBlock_init(&dd->blks[i], ps, buf, num_hiddens, ffn_num_hiddens, num_heads,
                                 dropout, use_bias);
  }
  Linear_init(&dd->dense, ps, "decoder.dense", num_hiddens, vocab_size, true);
}

void TransformerDecoder_free(TransformerDecoder *dd) { PositionalEncoding_free(&dd->pos_encoding); }

void TransformerDecoder_init_state(TransformerDecoderState *s, Tensor *enc_outputs,
                                   Tensor *enc_valid_lens) {
  memset(s, 0, sizeof *s);
  s->enc_outputs = enc_outputs;
  s->enc_valid_lens = enc_valid_lens;
}

Tensor *TransformerDecoder_forward(TransformerDecoder *dd, Tensor *X,
                                   TransformerDecoderState *s, bool training) {
  char sx[64];
  if (!X || X->ndim != 2)
    tensor_error("TransformerDecoder_forward", "X %s must be (batch, steps) target ids",
                 X ? shape_str(X, sx, sizeof sx) : "NULL");
  /* Fixed: the tokens of this call sit at positions s->steps, s->steps + 1, ...; the book
   * starts every call at position 0. */
  const int offset = dd->mode == DECODER_D2L_COMPAT ? 0 : s->steps;
  Tensor *H = embed(&dd->embedding, &dd->pos_encoding, X, offset, training); /* (B, T, h) */
  for (int i = 0; i < dd->num_blks && H; i++)
    H = TransformerDecoderBlock_forward(&dd->blks[i], H, s->enc_outputs, s->enc_valid_lens,
                                        &s->key_values[i], training, dd->mode);
  if (!H) return NULL;
  s->steps += X->shape[1];
  return Linear_forward(&dd->dense, H); /* (batch, steps, vocab) */
}

/* ---------------------------------------------------------------- encoder–decoder */

void Transformer_init(Transformer *t, ParamSet *ps, const TransformerConfig *cfg) {
  memset(t, 0, sizeof *t);
  t->cfg = *cfg;
  TransformerEncoder_init(&t->encoder, ps, cfg->src_vocab, cfg->num_hiddens,
                          cfg->ffn_num_hiddens, cfg->num_heads, cfg->num_blks, cfg->dropout,
                          cfg->use_bias);
  TransformerDecoder_init(&t->decoder, ps, cfg->tgt_vocab, cfg->num_hiddens,
                          cfg->ffn_num_hiddens, cfg->num_heads, cfg->num_blks, cfg->dropout,
                          cfg->use_bias);
  t->decoder.mode = cfg->d2l_compat ? DECODER_D2L_COMPAT : DECODER_FIXED;
}

void Transformer_free(Transformer *t) {
  TransformerEncoder_free(&t->encoder);
  TransformerDecoder_free(&t->decoder);
}

Tensor *Transformer_forward(void *net, Tensor *X, Tensor *X_valid_len, Tensor *dec_X,
                            bool training) {
  Transformer *t = net;
  Tensor *enc = TransformerEncoder_forward(&t->encoder, X, X_valid_len, training);
  if (!enc) return NULL;
  TransformerDecoderState s;
  TransformerDecoder_init_state(&s, enc, X_valid_len);
  return TransformerDecoder_forward(&t->decoder, dec_X, &s, training); /* (B, T, vocab) */
}

/* Copy (batch 1) weights (heads, q, k) of block blk into the record's (blks, heads, R, C) array
 * at rows row0.., columns 0..k-1. */
static void record_weights(float *dst, int heads, int R, int C, int blk, int row0,
                           const Tensor *w) {
  if (!w || w->ndim != 3) return;
  const int q = w->shape[1], k = w->shape[2] < C ? w->shape[2] : C;
  const float *wh = host_read(w); /* the figures' numbers: an explicit host copy off the CPU */
  for (int h = 0; h < heads && h < w->shape[0]; h++)
    for (int i = 0; i < q && row0 + i < R; i++)
      memcpy(dst + (((long)blk * heads + h) * R + row0 + i) * C,
             wh + ((long)h * q + i) * w->shape[2], sizeof(float) * (size_t)k);
}

void Transformer_begin_decode(void *net, Tensor *X, Tensor *X_valid_len) {
  Transformer *t = net;
  Tensor *enc = NEED(TransformerEncoder_forward(&t->encoder, X, X_valid_len, false),
                     "the Transformer encoder");                  /* (1, src_steps, h) */
  TransformerDecoder_init_state(&t->state, enc, X_valid_len);
  TransformerAttnRecord *r = t->record;
  if (r) {
    r->steps = 0;
    memset(r->dec_self, 0, sizeof(float) * (size_t)r->blks * r->heads * r->max_steps * r->max_steps);
    memset(r->dec_cross, 0, sizeof(float) * (size_t)r->blks * r->heads * r->max_steps * r->src_steps);
    memset(r->enc, 0, sizeof(float) * (size_t)r->blks * r->heads * r->src_steps * r->src_steps);
    for (int i = 0; i < t->encoder.num_blks; i++)
      record_weights(r->enc, r->heads, r->src_steps, r->src_steps, i, 0,
                     t->encoder.blks[i].attention.attention.attention_weights);
  }
}

Tensor *Transformer_decode_step(void *net, int token, int pos) {
  Transformer *t = net;
  if (t->decoder.mode == DECODER_FIXED && pos != t->state.steps)
    tensor_error("Transformer_decode_step",
                 "token position %d does not follow the %d tokens already decoded; feed tokens "
                 "in order after begin_decode",
                 pos, t->state.steps);
  Tensor *X = tensor_full(2, (const int[]){1, 1}, (float)token); /* (1, 1) */
  Tensor *Y = NEED(TransformerDecoder_forward(&t->decoder, X, &t->state, false),
                   "the Transformer decoder");                   /* (1, 1, vocab) */
  TransformerAttnRecord *r = t->record;
  if (r && pos < r->max_steps) {
    for (int i = 0; i < t->decoder.num_blks; i++) {
      record_weights(r->dec_self, r->heads, r->max_steps, r->max_steps, i, pos,
                     t->decoder.blks[i].attention1.attention.attention_weights);
      record_weights(r->dec_cross, r->heads, r->max_steps, r->src_steps, i, pos,
                     t->decoder.blks[i].attention2.attention.attention_weights);
    }
    r->steps = pos + 1;
  }
  return t_reshape(Y, 2, (const int[]){1, t->decoder.vocab_size}); /* (1, vocab) */
}

/* ---------- execution hooks (common/step.h): how a training batch may run faster ---------- */

/* A part's cost in positions x passes (forward 1, backward 2): the forward runs its rows x its
 * longest source and target, and so does the backward, except its products, which skip the
 * positions past each sequence's end: 2 padded + 1 valid are the weights with which the two
 * parts' measured times came out even (d2l-1.0). */
static double Transformer_part_cost(const Seq2SeqPartShape *p) {
  return 2.0 * (double)p->rows * (double)(p->src_cols + p->tgt_cols) + p->src_tokens +
         p->tgt_tokens;
}

/* A second Transformer like m's, reading m's values (twin_build draws its init). */
static void Transformer_twin_new(const Seq2SeqModel *m, Seq2SeqModel *twin) {
  const Transformer *t = m->net;
  Transformer *r = xcalloc(1, sizeof *r);
  ParamSet *ps = xcalloc(1, sizeof *ps);
  Transformer_init(r, ps, &t->cfg);
  paramset_share_values(ps, m->ps);
  *twin = Transformer_model(r, ps);
}

static void Transformer_twin_free(Seq2SeqModel *twin) {
  Transformer_free(twin->net);
  paramset_free(twin->ps);
  free(twin->net);
  free(twin->ps);
}

Seq2SeqModel Transformer_model(Transformer *t, ParamSet *ps) {
  return (Seq2SeqModel){.name = "Transformer",
                        .net = t,
                        .ps = ps,
                        .forward = Transformer_forward,
                        .begin_decode = Transformer_begin_decode,
                        .decode_step = Transformer_decode_step,
                        .step_attention = NULL,
                        .predict_greedy = predict_seq2seq_greedy, /* exercise 6.6 */
                        .exec = {.encoder_ignores_padding = true,
                                 .part_cost = Transformer_part_cost,
                                 .twin_new = Transformer_twin_new,
                                 .twin_free = Transformer_twin_free}};
}

void Transformer_tag(const Transformer *t, char *buf, size_t n) {
  const TransformerConfig *c = &t->cfg;
  snprintf(buf, n, "transformer h%d f%d a%d l%d bias%d src%d tgt%d", c->num_hiddens,
           c->ffn_num_hiddens, c->num_heads, c->num_blks, c->use_bias ? 1 : 0, c->src_vocab,
           c->tgt_vocab);
}

void attn_record_init(TransformerAttnRecord *r, int blks, int heads, int src_steps,
                      int max_steps) {
  r->blks = blks, r->heads = heads, r->src_steps = src_steps, r->max_steps = max_steps;
  r->steps = 0;
  r->enc = xcalloc((size_t)blks * heads * src_steps * src_steps, sizeof(float));
  r->dec_self = xcalloc((size_t)blks * heads * max_steps * max_steps, sizeof(float));
  r->dec_cross = xcalloc((size_t)blks * heads * max_steps * src_steps, sizeof(float));
}

void attn_record_free(TransformerAttnRecord *r) {
  free(r->enc), free(r->dec_self), free(r->dec_cross);
  r->enc = r->dec_self = r->dec_cross = NULL;
}
