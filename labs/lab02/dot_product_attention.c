/* Exercise 2.3 — scaled dot-product attention, the forward pass (10 points)
 *
 * What: scores = Q K^T / sqrt(d), with d the length of a query (= of a key); weights =
 *   masked_softmax(scores, valid_lens) (exercise 2.1); output = weights V.
 *   Store the weights (before dropout) in a->attention_weights; apply dropout with a->dropout
 *   to the weights used for the output (Dropout_forward; the identity when training is false).
 * Shapes: queries (batch, queries, d), keys (batch, keys, d), values (batch, keys, v),
 *   valid_lens NULL, (batch) or (batch, queries). Returns (batch, queries, v).
 * Hints: t_bmm_nt(A, B) computes A B^T batch by batch without materializing the transpose;
 *   t_scale multiplies by a constant; t_bmm does the weighted sum. Use only the
 *   differentiable ops of common/ops.h: labs 04, 06 and 07 train through this layer (it is
 *   the core of multi-head attention and of every Transformer block), so keep it lean.
 *   If masked_softmax returns NULL (exercise 2.1 not done yet), return NULL.
 * Tests: tests/grade/lab02/test_dot_product_attention.c — reference outputs with and without
 *   lengths (2), 2-D lengths and length-0 rows (2), the 1/sqrt(d) scaling (2), gradients (2),
 *   weights stored and dropout applied in training mode (2). Run: make grade LAB=02 VARIANT=labs.
 */
#include "lab02/lab02.h"

#include "../../common/exercise.h"

Tensor *DotProductAttention_forward(DotProductAttention *a, Tensor *queries, Tensor *keys,
                                    Tensor *values, Tensor *valid_lens, bool training) {
  (void)a, (void)queries, (void)keys, (void)values, (void)valid_lens, (void)training;
  EXERCISE_TODO("2.3", "DotProductAttention_forward");
  return NULL;
}
