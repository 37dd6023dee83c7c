/* lab06.h — exercises of lab 06 (the Transformer) and the layers they belong to: the two small
 * layers, the encoder and decoder blocks, greedy decoding. Only the exercises are declared here:
 * the layers' _init functions are chapter code (chapters/06_transformer/transformer.h), so labs/
 * never calls into chapters/. */
#ifndef LAB06_H
#define LAB06_H

#include "../../common/seq2seq.h"
#include "lab05/lab05.h"

/* Position-wise feed-forward network: the same two-layer MLP applied at every position. */
typedef struct PositionWiseFFN {
  Linear dense1; /* (in, ffn_num_hiddens), with bias */
  Linear dense2; /* (ffn_num_hiddens, ffn_num_outputs), with bias */
} PositionWiseFFN;
/* Exercise 6.1 — X (batch, steps, in) -> dense2(relu(dense1(X))) (batch, steps, ffn_num_outputs). */
Tensor *PositionWiseFFN_forward(const PositionWiseFFN *f, Tensor *X);

/* Residual connection followed by layer normalization. */
typedef struct AddNorm {
  Dropout dropout;
  LayerNorm ln; /* over the last dim (norm_shape) */
} AddNorm;
/* Exercise 6.2 — X, Y (batch, steps, d) -> LayerNorm(dropout(Y) + X) (batch, steps, d). */
Tensor *AddNorm_forward(const AddNorm *a, Tensor *X, Tensor *Y, bool training);

/* Exercise 6.3 — the decoder's causal mask as valid lengths for its self-attention.
 * The decoder's queries are num_queries consecutive target tokens whose first one sits at
 * position `offset` (0 for a whole target sequence; t when only token t is fed and tokens
 * 0..t-1 are in the key/value cache). Query i may attend to keys 0 .. offset + i, so
 * returns (batch, num_queries) with entry [b, i] = offset + i + 1. */
Tensor *causal_valid_lens(int batch, int num_queries, int offset);

/* The Transformer encoder block: self-attention and the FFN, each inside an AddNorm. */
typedef struct TransformerEncoderBlock {
  MultiHeadAttention attention; /* self-attention */
  AddNorm addnorm1, addnorm2;
  PositionWiseFFN ffn;
} TransformerEncoderBlock;
/* Exercise 6.4 — X (batch, steps, num_hiddens), valid_lens (batch) or NULL ->
 * (batch, steps, num_hiddens): Y = addnorm1(X, attention(X, X, X)); addnorm2(Y, ffn(Y)).
 * NULL when an exercise it uses returned NULL. */
Tensor *TransformerEncoderBlock_forward(TransformerEncoderBlock *b, Tensor *X,
                                        Tensor *valid_lens, bool training);

/* How the decoder masks its self-attention.
 *   DECODER_FIXED: query i of a call that starts at target position `offset` (the number of
 *     tokens already in the key/value cache) sees keys 0..offset+i — whole sequence or one
 *     token, training or not.
 *   DECODER_D2L_COMPAT: the book's code: the causal mask only when training (offset 0), no mask
 *     otherwise (an evaluation pass over a whole sequence sees future tokens). */
typedef enum { DECODER_FIXED = 0, DECODER_D2L_COMPAT = 1 } DecoderMode;

/* The Transformer decoder block: masked self-attention, encoder–decoder attention and the FFN,
 * each inside an AddNorm. */
typedef struct TransformerDecoderBlock {
  MultiHeadAttention attention1; /* masked self-attention */
  AddNorm addnorm1;
  MultiHeadAttention attention2; /* encoder–decoder attention */
  AddNorm addnorm2;
  PositionWiseFFN ffn;
  AddNorm addnorm3;
} TransformerDecoderBlock;
/* Exercise 6.5 — X (batch, steps, num_hiddens): the block's input at target positions
 * offset..offset+steps-1. enc_outputs (batch, src_steps, num_hiddens), enc_valid_lens (batch).
 * key_values: the block's cache (the book's state[2][i]) — NULL for none (a whole sequence,
 * offset 0); else *key_values is NULL (empty, offset 0) or the (batch, offset, num_hiddens)
 * inputs of earlier calls, and becomes them followed by X. Returns (batch, steps, num_hiddens),
 * or NULL when an exercise it uses returned NULL. */
Tensor *TransformerDecoderBlock_forward(TransformerDecoderBlock *b, Tensor *X,
                                        Tensor *enc_outputs, Tensor *enc_valid_lens,
                                        Tensor **key_values, bool training, DecoderMode mode);

/* Exercise 6.6 — greedy decoding of one sentence: the loop of d2l's predict_seq2seq.
 * m: the encoder–decoder (common/seq2seq.h): m->begin_decode encodes, m->decode_step feeds one
 * token and returns its logits (1, tgt_vocab), m->step_attention (NULL when the model has none)
 * gives that step's attention weights. X (1, num_steps) source ids, X_valid_len (1).
 * Feed bos at position 0, then at each position the argmax of the previous step's logits, for
 * at most max_steps (<= SEQ2SEQ_MAX_STEPS) steps; a step whose argmax is eos ends the loop.
 * out (zeroed by the caller): ids[0..n) the predicted ids (eos not included), n, steps (steps
 * run, the eos step included); when save_attention and m->step_attention: attn, malloc'd
 * (steps, attn_len) floats, one row per step, the eos step's too. Returns 0, or -1 when a
 * step failed (or the exercise is a stub). */
int predict_seq2seq_greedy(const Seq2SeqModel *m, Tensor *X, Tensor *X_valid_len, int bos,
                           int eos, int max_steps, bool save_attention, Seq2SeqPrediction *out);

#endif
