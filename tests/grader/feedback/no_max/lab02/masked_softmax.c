/* A plausible wrong exercise 2.1 (grading.sh, "feedback"): the softmax written out as
 * exp(X) / sum(exp(X)) without subtracting the row's max first. exp(1000) is inf in float,
 * and inf / inf is NaN: the large-scores test must hint "subtract the row's max". */
#include <math.h>

#include "lab02/lab02.h"

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  Tensor *E = t_exp(valid_lens ? t_sequence_mask(X, valid_lens, -INFINITY) : X); /* (b, q, k) */
  return t_div(E, t_sum(E, -1, true));
}
