/* transformer.h — the Transformer of lab 06 (chapter-support code, chapters/06_transformer/):
 * encoder and decoder blocks, the encoder and decoder stacks, the key/value cache of
 * token-by-token decoding, and the encoder–decoder as a Seq2SeqModel for common/seq2seq.h.
 * Built on the exercises of lab06 (PositionWiseFFN_forward, AddNorm_forward, causal_valid_lens,
 * the blocks' forwards and greedy decoding: labs/lab06/lab06.h, where the blocks' structs are),
 * MultiHeadAttention_forward (lab04) and positional_encoding_table (lab05). */
#ifndef AL_TRANSFORMER_H
#define AL_TRANSFORMER_H

#include "../../common/seq2seq.h"
#include "lab06/lab06.h"

#define TRANSFORMER_MAX_BLKS 16

/* ---------------------------------------------------------------- the exercises' layers */

void PositionWiseFFN_init(PositionWiseFFN *f, ParamSet *ps, const char *name, int in,
                          int ffn_num_hiddens, int ffn_num_outputs);
void AddNorm_init(AddNorm *a, ParamSet *ps, const char *name, int norm_shape, float dropout);

/* ---------------------------------------------------------------- encoder */

void TransformerEncoderBlock_init(TransformerEncoderBlock *b, ParamSet *ps, const char *name,
                                  int num_hiddens, int ffn_num_hiddens, int num_heads,
                                  float dropout, bool use_bias);
/* TransformerEncoderBlock_forward: exercise 6.4 (labs/lab06/lab06.h). */

typedef struct TransformerEncoder {
  int num_hiddens, num_blks;
  Embedding embedding;          /* (vocab, num_hiddens) */
  PositionalEncoding pos_encoding;
  TransformerEncoderBlock blks[TRANSFORMER_MAX_BLKS];
} TransformerEncoder;
void TransformerEncoder_init(TransformerEncoder *e, ParamSet *ps, int vocab_size,
                             int num_hiddens, int ffn_num_hiddens, int num_heads, int num_blks,
                             float dropout, bool use_bias);
void TransformerEncoder_free(TransformerEncoder *e);
/* X (batch, steps) token ids, valid_lens (batch) -> (batch, steps, num_hiddens). Each block's
 * attention weights stay in blks[i].attention.attention.attention_weights
 * (batch * num_heads, steps, steps) until the arena is reset. */
Tensor *TransformerEncoder_forward(TransformerEncoder *e, Tensor *X, Tensor *valid_lens,
                                   bool training);

/* ---------------------------------------------------------------- decoder */

/* The decoder's DecoderMode (labs/lab06/lab06.h) also sets how it positions its tokens:
 * DECODER_FIXED: a call that starts at target position `offset` gives its tokens the positional
 * encoding of offset, offset + 1, ...; DECODER_D2L_COMPAT: the book's, positions from 0 on every
 * call (each generated token gets position 0's encoding). */

void TransformerDecoderBlock_init(TransformerDecoderBlock *b, ParamSet *ps, const char *name,
                                  int num_hiddens, int ffn_num_hiddens, int num_heads,
                                  float dropout, bool use_bias);
/* TransformerDecoderBlock_forward: exercise 6.5 (labs/lab06/lab06.h). */

/* What the decoder carries between calls (d2l's state): arena tensors. */
typedef struct TransformerDecoderState {
  Tensor *enc_outputs;     /* (batch, src_steps, num_hiddens) */
  Tensor *enc_valid_lens;  /* (batch) */
  Tensor *key_values[TRANSFORMER_MAX_BLKS]; /* (batch, steps so far, num_hiddens) or NULL */
  int steps;               /* target tokens fed so far: the next call starts at this position */
} TransformerDecoderState;

typedef struct TransformerDecoder {
  int num_hiddens, num_blks, vocab_size;
  DecoderMode mode;
  Embedding embedding;          /* (vocab, num_hiddens) */
  PositionalEncoding pos_encoding;
  TransformerDecoderBlock blks[TRANSFORMER_MAX_BLKS];
  Linear dense;                 /* (num_hiddens, vocab), with bias */
} TransformerDecoder;
void TransformerDecoder_init(TransformerDecoder *dd, ParamSet *ps, int vocab_size,
                             int num_hiddens, int ffn_num_hiddens, int num_heads, int num_blks,
                             float dropout, bool use_bias);
void TransformerDecoder_free(TransformerDecoder *dd);
void TransformerDecoder_init_state(TransformerDecoderState *s, Tensor *enc_outputs,
                                   Tensor *enc_valid_lens);
/* X (batch, steps) target ids at positions s->steps .. s->steps + steps - 1 -> logits
 * (batch, steps, vocab). Appends to the cache and advances s->steps. Attention weights of the
 * call: blks[i].attention1/attention2.attention.attention_weights. */
Tensor *TransformerDecoder_forward(TransformerDecoder *dd, Tensor *X,
                                   TransformerDecoderState *s, bool training);

/* ---------------------------------------------------------------- encoder–decoder */

typedef struct TransformerConfig {
  int src_vocab, tgt_vocab;
  int num_hiddens, ffn_num_hiddens, num_heads, num_blks;
  float dropout;
  bool use_bias;   /* biases in the attention projections (the book: false) */
  bool d2l_compat; /* DECODER_D2L_COMPAT */
} TransformerConfig;

/* Attention weights of one greedy decoding, for the heatmaps: zero where masked or not reached.
 * enc (blks, heads, src_steps, src_steps); dec_self (blks, heads, max_steps, max_steps);
 * dec_cross (blks, heads, max_steps, src_steps); row t is the query of decode step t. */
typedef struct TransformerAttnRecord {
  int blks, heads, src_steps, max_steps, steps;
  float *enc, *dec_self, *dec_cross;
} TransformerAttnRecord;

typedef struct Transformer {
  TransformerConfig cfg;
  TransformerEncoder encoder;
  TransformerDecoder decoder;
  TransformerDecoderState state; /* greedy decoding */
  TransformerAttnRecord *record; /* when set, begin_decode / decode_step fill it */
} Transformer;

void Transformer_init(Transformer *t, ParamSet *ps, const TransformerConfig *cfg);
void Transformer_free(Transformer *t);
/* Teacher forcing: (batch, num_steps) ids -> logits (batch, num_steps, tgt_vocab). */
Tensor *Transformer_forward(void *net, Tensor *X, Tensor *X_valid_len, Tensor *dec_X,
                            bool training);
void Transformer_begin_decode(void *net, Tensor *X, Tensor *X_valid_len);
Tensor *Transformer_decode_step(void *net, int token, int pos);
/* The Seq2SeqModel view of t (t and ps must outlive it). */
Seq2SeqModel Transformer_model(Transformer *t, ParamSet *ps);
/* A checkpoint tag describing the architecture ("transformer h32 f64 a4 l2 src184 tgt201"). */
void Transformer_tag(const Transformer *t, char *buf, size_t n);

void attn_record_init(TransformerAttnRecord *r, int blks, int heads, int src_steps,
                      int max_steps);
void attn_record_free(TransformerAttnRecord *r);

#endif
