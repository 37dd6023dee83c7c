/* Exercise 6.4 — the Transformer encoder block (4 points)
 *
 * What: the book's TransformerEncoderBlock.forward: two sublayers, each inside an AddNorm
 *   (exercise 6.2: the residual connection, then layer normalization):
 *     Y = addnorm1(X, attention(X, X, X, valid_lens))   multi-head self-attention (lab 04)
 *     return addnorm2(Y, ffn(Y))                         the position-wise FFN (exercise 6.1)
 *   Queries, keys and values are all X; valid_lens masks the padding keys of each sequence.
 *   Pass `training` on (it switches the dropouts).
 * Shapes: X (batch, steps, num_hiddens), valid_lens (batch) or NULL; every sublayer keeps
 *   (batch, steps, num_hiddens), so the result has X's shape and blocks stack.
 * Hints: MultiHeadAttention_forward(&b->attention, ...), AddNorm_forward(&b->addnorm1, ...),
 *   PositionWiseFFN_forward(&b->ffn, ...): three calls and one more AddNorm. If X or a
 *   sublayer's result is NULL (an unfinished exercise), return NULL.
 * Tests: tests/grade/lab06/test_blocks.c (lab06_encoder_block; it runs your 6.1, 6.2 and lab04
 *   multi-head attention too). Run: make grade LAB=06.
 */
#include "lab06/lab06.h"

#include "../../common/exercise.h"

Tensor *TransformerEncoderBlock_forward(TransformerEncoderBlock *b, Tensor *X,
                                        Tensor *valid_lens, bool training) {
  (void)b, (void)X, (void)valid_lens, (void)training;
  EXERCISE_TODO("6.4", "TransformerEncoderBlock_forward");
  return NULL;
}
