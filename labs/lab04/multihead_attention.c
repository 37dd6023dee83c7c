/* Exercise 4.3 — the multi-head attention forward pass (5 points)
 *
 * What: with m->num_heads = H heads and m->num_hiddens = h,
 *     head_i = attention(W_q^(i) q, W_k^(i) k, W_v^(i) v),   output = W_o [head_1; ...; head_H]
 *   computed for all heads at once:
 *     1. project: Q = W_q(queries), K = W_k(keys), V = W_v(values)      Linear_forward
 *          (batch, queries, h), (batch, keys, h), (batch, keys, h)
 *     2. split heads with your transpose_qkv:  (batch * H, n, h / H)
 *     3. valid_lens (NULL, (batch) or (batch, queries)): every head of batch row b must use
 *        row b's lengths, so repeat each entry H times in place along dim 0
 *        (t_repeat_interleave(valid_lens, H, 0): [3, 2] -> [3, 3, ..., 2, 2, ...]).
 *     4. scaled dot-product attention over the batch * H rows:
 *          DotProductAttention_forward(&m->attention, Q, K, V, valid_lens, training)
 *        (your lab02 exercise; it keeps the weights in m->attention.attention_weights,
 *        shape (batch * H, queries, keys)).
 *     5. merge heads with your transpose_output: (batch, queries, h), then W_o.
 * Returns (batch, queries, num_hiddens), or NULL if a step it needs is unimplemented.
 * Hints: only ops from common/ops.h / nn.h, so ag_backward reaches all four projections. No
 *   loop over heads: labs 06 and 07 call this in their training loops.
 * Book check: h = 100, H = 5, batch 2, 4 queries, 6 key-value pairs, valid lens [3, 2]
 *   -> (2, 4, 100).
 * Tests: tests/grade/lab04/test_multihead.c. Run: make grade LAB=04.
 */
#include "lab04/lab04.h"

#include "../../common/exercise.h"

Tensor *MultiHeadAttention_forward(MultiHeadAttention *m, Tensor *queries, Tensor *keys,
                                   Tensor *values, Tensor *valid_lens, bool training) {
  (void)m, (void)queries, (void)keys, (void)values, (void)valid_lens, (void)training;
  EXERCISE_TODO("4.3", "MultiHeadAttention_forward");
  return NULL;
}
