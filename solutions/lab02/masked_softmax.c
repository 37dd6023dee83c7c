/* Exercise 2.1 — masked softmax (reference solution; the spec is in labs/lab02/masked_softmax.c).
 * Masked keys become -inf, so exp() gives them exactly 0 and a row with nothing valid left is
 * all -inf, which t_softmax turns into zeros. Two passes over X, both with recorded backwards;
 * the gradient of a masked entry is 0 (its weight is 0, and the mask passes nothing back). */
#include <math.h>

#include "lab02/lab02.h"

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  if (!valid_lens) return t_softmax(X); /* nothing to mask: skip the copy */
  return t_softmax(t_sequence_mask(X, valid_lens, -INFINITY)); /* (batch, queries, keys) */
}
