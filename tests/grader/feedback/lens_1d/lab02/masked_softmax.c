/* A plausible wrong exercise 2.1 (grading.sh, "feedback"): subtracts no max itself (t_softmax
 * does) and masks, but always reads valid_lens as 1-D, one length per batch row: with 2-D
 * lengths (batch, queries) every query of batch row b gets the flat entry b. Its feedback must
 * name the first wrong (b, i, j) with a slice of its row, and must not say "subtract the max". */
#include <math.h>

#include "lab02/lab02.h"

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  if (!valid_lens) return t_softmax(X);
  int batch = X->shape[0];
  float lens[64];
  if (batch > 64) return NULL;
  for (int b = 0; b < batch; b++) lens[b] = valid_lens->data[b]; /* the bug: 2-D read as 1-D */
  return t_softmax(t_sequence_mask(X, tensor_from(1, (const int[]){batch}, lens), -INFINITY));
}
