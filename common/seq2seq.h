/* seq2seq.h — what labs 03 (Bahdanau) and 06 (Transformer) share: the encoder–decoder
 * interface, the training loop (d2l's train_seq2seq), greedy decoding (predict_seq2seq) and
 * checkpoints. Model code implements Seq2SeqModel; this file knows nothing of GRUs or heads.
 * Token ids travel as float tensors holding integers (see ops.h). */
#ifndef AL_SEQ2SEQ_H
#define AL_SEQ2SEQ_H

#include "nn.h"

typedef struct Seq2SeqModel {
  const char *name;  /* "Seq2SeqAttentionDecoder (GRU)", "Transformer", ... */
  void *net;         /* the model's own struct */
  ParamSet *ps;      /* its parameters */
  /* Teacher-forced pass: X (batch, num_steps) source ids, X_valid_len (batch),
   * dec_X (batch, num_steps) = <bos> followed by Y[:, :-1]. Returns logits
   * (batch, num_steps, tgt_vocab). training switches dropout. */
  Tensor *(*forward)(void *net, Tensor *X, Tensor *X_valid_len, Tensor *dec_X, bool training);
  /* Greedy decoding, one sentence: encode X (1, num_steps) with X_valid_len (1) and keep what
   * the decoder needs inside net (arena tensors; the caller resets the arena afterwards). */
  void (*begin_decode)(void *net, Tensor *X, Tensor *X_valid_len);
  /* Feed one token at target position pos (0 for <bos>); returns logits (1, tgt_vocab). */
  Tensor *(*decode_step)(void *net, int token, int pos);
} Seq2SeqModel;

#endif
