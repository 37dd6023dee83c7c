/* Exercise 6.4 — TransformerEncoderBlock_forward (reference solution; the spec is in
 * labs/lab06/encoder_block.c). */
#include "lab06/lab06.h"

Tensor *TransformerEncoderBlock_forward(TransformerEncoderBlock *b, Tensor *X,
                                        Tensor *valid_lens, bool training) {
  if (!X) return NULL;
  /* A (batch, steps, h): self-attention, queries = keys = values = X */
  Tensor *A = MultiHeadAttention_forward(&b->attention, X, X, X, valid_lens, training);
  Tensor *Y = AddNorm_forward(&b->addnorm1, X, A, training);      /* (batch, steps, h) */
  if (!Y) return NULL;
  return AddNorm_forward(&b->addnorm2, Y, PositionWiseFFN_forward(&b->ffn, Y), training);
}
