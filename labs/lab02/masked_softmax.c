/* Exercise 2.1 — masked softmax (10 points)
 *
 * What: softmax over the last axis of X, where each row only attends to its first valid_len
 *   keys. Entry (b, i, j) of the result is
 *       exp(X[b,i,j]) / sum_{j' < len} exp(X[b,i,j'])   for j < len,   0 for j >= len,
 *   with len = valid_lens[b] (1-D lengths: one per batch row, shared by all its queries) or
 *   len = valid_lens[b, i] (2-D lengths: one per query). valid_lens == NULL masks nothing:
 *   a plain softmax. A row with len = 0 has nothing to attend to and must be all ZEROS — the
 *   book's -1e6 trick would give a uniform row there, which lets padding leak into the output.
 * Shapes: X (batch, queries, keys); valid_lens NULL, (batch) or (batch, queries), float
 *   tensors holding whole numbers; returns (batch, queries, keys).
 * Hints: do not write loops. Two ops of common/ops.h do it: t_sequence_mask(X, valid_lens,
 *   value) replaces the entries at j >= len by `value` (the book's _sequence_mask), and
 *   t_softmax maps a row of all -INFINITY to zeros. Which value makes exp() exactly 0?
 *   Both ops record their backward, so the gradient w.r.t. X flows for free (masked entries
 *   get none).
 *   This function runs inside the training loops of labs 03, 04, 06 and 07: keep it lean.
 * Tests: tests/grade/lab02/test_masked_softmax.c — plain softmax without lengths (1), 1-D
 *   lengths (2), 2-D lengths (2), length-0 rows are zeros (2), gradient w.r.t. X (2), no
 *   overflow for large scores (1). Run: make grade LAB=02 VARIANT=labs.
 */
#include "lab02/lab02.h"

#include "../../common/exercise.h"

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)X, (void)valid_lens;
  EXERCISE_TODO("2.1", "masked_softmax");
  return NULL;
}
