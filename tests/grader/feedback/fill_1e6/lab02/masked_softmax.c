/* A plausible wrong exercise 2.1 (grading.sh, "feedback"): the book's own fill, -1e6. Right
 * wherever a row keeps something (exp(-1e6 - max) is 0 in float); a row of valid length 0
 * becomes uniform, 1/keys each. Its feedback must name that cause (the finite fill), and no
 * other (not "another length", not NaN). */
#include "lab02/lab02.h"

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  if (!valid_lens) return t_softmax(X);
  return t_softmax(t_sequence_mask(X, valid_lens, -1e6f)); /* the book's fill */
}
