/* A plausible wrong exercise 2.1 (grading.sh, "feedback"): the lengths are read right, but the
 * masked scores are set to 0 instead of -INFINITY, so exp() of them is not 0 and each masked
 * entry keeps one and the same weight. Its feedback must say the fill is wrong, never that the
 * row is masked with another length. */
#include "lab02/lab02.h"

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  if (!valid_lens) return t_softmax(X);
  return t_softmax(t_sequence_mask(X, valid_lens, 0.0f)); /* the bug: fill 0 */
}
