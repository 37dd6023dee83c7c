/* Exercise 2.2 — additive attention, the forward pass (10 points)
 *
 * What: the score of query q and key k is  a(q, k) = w_v^T tanh(W_q q + W_k k),  the weights
 *   are masked_softmax(scores, valid_lens) (exercise 2.1), and the output is the weighted sum
 *   of the values:  out[b, i] = sum_j weights[b, i, j] * values[b, j].
 *   Store the weights (before dropout) in a->attention_weights so the lab can draw them; apply
 *   dropout with a->dropout to the weights used for the output (Dropout_forward; it is the
 *   identity when training is false).
 * Shapes: queries (batch, queries, query_size), keys (batch, keys, key_size), values
 *   (batch, keys, value_size), valid_lens NULL, (batch) or (batch, queries);
 *   W_q: query_size -> num_hiddens, W_k: key_size -> num_hiddens, w_v: num_hiddens -> 1.
 *   Returns (batch, queries, value_size).
 * Hints: project with Linear_forward, then add every query to every key by broadcasting:
 *   view the projected queries as (batch, queries, 1, num_hiddens) and the keys as
 *   (batch, 1, keys, num_hiddens) with t_reshape (a view, no copy) and t_add them into
 *   (batch, queries, keys, num_hiddens). t_tanh, then w_v gives (batch, queries, keys, 1);
 *   view that as (batch, queries, keys). t_bmm does the weighted sum. Use only the
 *   differentiable ops of common/ops.h so that labs 03 and 06 can train through this layer.
 *   If masked_softmax returns NULL (exercise 2.1 not done yet), return NULL.
 * Tests: tests/grade/lab02/test_additive_attention.c — the book's toy example (2), reference
 *   outputs with fixed weights for 1-D (2) and 2-D (2) lengths, gradients (2), weights stored
 *   and dropout applied in training mode (2). Run: make grade LAB=02 VARIANT=labs.
 */
#include "lab02/lab02.h"

#include "../../common/exercise.h"

Tensor *AdditiveAttention_forward(AdditiveAttention *a, Tensor *queries, Tensor *keys,
                                  Tensor *values, Tensor *valid_lens, bool training) {
  (void)a, (void)queries, (void)keys, (void)values, (void)valid_lens, (void)training;
  EXERCISE_TODO("2.2", "AdditiveAttention_forward");
  return NULL;
}
