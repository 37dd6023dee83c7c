/* Exercise 6.3 — the decoder's causal mask (3 points; the decoder block that uses it is
 * exercise 6.5)
 *
 * What: the decoder must not look ahead: when it predicts target token i it may attend only to
 *   tokens 0..i. Masked softmax expresses that as valid lengths, one per query. The queries
 *   are num_queries consecutive target positions starting at `offset`:
 *     - training (the whole target at once): offset 0, query i sees keys 0..i -> length i + 1;
 *     - decoding token by token: query 0 is token t = offset and the key/value cache holds
 *       tokens 0..t-1, so it sees keys 0..t -> length t + 1.
 *   Return a (batch, num_queries) tensor with entry [b, i] = offset + i + 1 (floats holding
 *   integers, as valid lengths are passed everywhere in this kit).
 *   Note what this does NOT depend on: training vs evaluation. The book picks the mask by
 *   self.training, so its evaluation passes over whole sequences see future tokens — the
 *   defect this lab fixes (lab06 --d2l-compat shows it).
 * Shapes: batch >= 1, num_queries >= 1, offset >= 0; anything else: return NULL after a
 *   clear message, or use tensor_error.
 * Hints: tensor_new(2, (int[]){batch, num_queries}) and a double loop. No gradient needed.
 * Tests: tests/grade/lab06/test_transformer.c. Run: make grade LAB=06.
 */
#include "lab06/lab06.h"

#include "../../common/exercise.h"

Tensor *causal_valid_lens(int batch, int num_queries, int offset) {
  (void)batch, (void)num_queries, (void)offset;
  EXERCISE_TODO("6.3", "causal_valid_lens");
  return NULL;
}
