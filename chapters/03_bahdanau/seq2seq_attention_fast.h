/* seq2seq_attention_fast.h — lab 03's fast path: the model of labs/lab03/lab03.h computed with
 * fused cells and scores and with less arithmetic (seq2seq_attention_fast.c says how), equal to
 * the readable path by test (tests/unit/test_seq2seq_trim.c, test_lab03.c) and, on every run
 * of the lab, by BahdanauNet_checked_model before it stands in for the student's code. */
#ifndef LAB03_FAST_H
#define LAB03_FAST_H

#include "../../common/seq2seq.h"
#include "../../common/text.h"
#include "lab03/lab03.h"

/* One GRU or LSTM step in one tape node, forward and backward written by hand (rnn_cell.c): the
 * hidden projection h @ W_hh + b_hh, the gates and the new state. gx (batch, G) is the input
 * projection x @ W_xh + b_xh, computed by the caller (for all time steps at once where it can).
 * GRU: C must be NULL, returns H' (batch, H). LSTM: returns (batch, 2H) = [H' | C'].
 * Exercises 3.1 and 3.2 may not call it: make grade refuses a file that does. */
Tensor *rnn_cell_fused(RnnKind kind, Tensor *gx, Tensor *H, Tensor *C, Tensor *W_hh,
                       Tensor *b_hh);

/* RNN_forward with the fused cell. X (T, B, input_size); or, X NULL, GX0 (T, B, G): layer 0's
 * input projection X @ W_xh + b_xh, computed by the caller. Returns (T, B, H). */
Tensor *RNN_forward_fused(const RNN *r, Tensor *X, Tensor *GX0, const RNNState *state,
                          RNNState *state_out, bool training);

/* The additive scores in one tape node (additive_scores.c): q (batch, queries, h) = W_q(queries),
 * keys_proj (batch, keys, h), w_v (h, 1) -> scores (batch, queries, keys) =
 * w_v^T tanh(q_i + k_j). Exercise 3.3 may not call it: make grade refuses a file that does. */
Tensor *additive_scores_fused(Tensor *q, Tensor *keys_proj, Tensor *w_v);

/* Seq2SeqEncoder_forward with layer 0's input projection taken from the projected embedding
 * table, and the fused cells. X (batch, num_steps) ids -> (num_steps, batch, H). */
Tensor *Seq2SeqEncoder_forward_fast(const Seq2SeqEncoder *e, Tensor *X, RNNState *state,
                                    bool training);
/* Seq2SeqAttentionDecoder_init_state with W_k applied to the valid keys only. */
void Seq2SeqAttentionDecoder_init_state_fast(Seq2SeqAttentionDecoder *d, Tensor *enc_outputs,
                                             const RNNState *enc_state, Tensor *enc_valid_lens);
/* Seq2SeqAttentionDecoder_forward with the fused cells and scores. dec_valid_len NULL, or
 * (batch): the target lengths; a row then stops at its target's end (packing), and its logits
 * from there on are 0 (the loss weighs them 0). NULL when lab02's masked_softmax or attention
 * is a stub. */
Tensor *Seq2SeqAttentionDecoder_forward_fast(Seq2SeqAttentionDecoder *d, Tensor *X,
                                             Tensor *dec_valid_len, bool training);

/* The same model as BahdanauNet_model on the fast path: forward_packed (a row stops at its
 * target's end), projected tables, valid keys only, fused cells and scores. */
Seq2SeqModel BahdanauNet_fast_model(BahdanauNet *n);

/* How the fast path compares with the readable one on one batch (BahdanauNet_fast_check). */
typedef struct BahdanauFastCheck {
  bool agrees;
  bool stub;          /* the readable path returned NULL: an exercise is a stub */
  int rows;           /* training pairs in the batch */
  double loss_diff;   /* |fast - readable| / |readable|, the summed loss */
  double grad_diff;   /* max |fast - readable| / max |readable| over every parameter gradient */
} BahdanauFastCheck;

/* Loss and every parameter gradient of one small batch of d's training pairs (sorted by target
 * length, as the trainer passes them), through the readable path and the fast one, in eval mode
 * (no dropout: the random stream is not touched). Leaves the gradients zero. */
BahdanauFastCheck BahdanauNet_fast_check(BahdanauNet *n, const NmtData *d);

/* The model a lab trains: BahdanauNet_fast_model where BahdanauNet_fast_check agrees on this
 * run, else BahdanauNet_model (the student's code), saying which in one line. The check's
 * outcome goes to *check where check is not NULL. */
Seq2SeqModel BahdanauNet_checked_model(BahdanauNet *n, const NmtData *d, BahdanauFastCheck *check);

#endif
