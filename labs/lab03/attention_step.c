/* Exercise 3.3 — the decoder's attention step with cached keys (4 points)
 *
 * What: Bahdanau's decoder attends over the same encoder outputs at every step; only the query
 *   (the decoder's last-layer hidden state) changes. So the decoder projects the keys once per
 *   sentence, keys_proj = W_k(enc_outputs), and each step computes
 *       scores[b, i, j] = w_v^T tanh(W_q queries[b, i] + keys_proj[b, j])
 *       weights = masked_softmax(scores, valid_lens)            (your exercise 2.1)
 *       out[b, i] = sum_j dropout(weights)[b, i, j] * values[b, j]
 *   — the same numbers as AdditiveAttention_forward(a, queries, keys, values, ...) (exercise
 *   2.2), without re-projecting the keys each step.
 *   Store the weights (before dropout) in a->attention_weights; the lab draws them.
 * Shapes: queries (batch, queries, query_size), keys_proj (batch, keys, num_hiddens), values
 *   (batch, keys, value_size), valid_lens NULL, (batch) or (batch, queries).
 *   Returns (batch, queries, value_size).
 * Hints: exercise 2.2 without the W_k line. Broadcast (batch, queries, 1, h) + (batch, 1, keys, h)
 *   with t_view + t_add. Return NULL if masked_softmax returns NULL.
 * Tests: tests/grade/lab03/test_lab03.c.
 */
#include "lab03/lab03.h"

#include "../../common/exercise.h"

Tensor *additive_attention_cached(AdditiveAttention *a, Tensor *queries, Tensor *keys_proj,
                                  Tensor *values, Tensor *valid_lens, bool training) {
  (void)a, (void)queries, (void)keys_proj, (void)values, (void)valid_lens, (void)training;
  EXERCISE_TODO("3.3", "additive_attention_cached");
  return NULL;
}
