/* Exercises 4.1 and 4.2 — splitting the hidden dim into heads and back (4 points: 2 + 2)
 *
 * Multi-head attention runs num_heads attentions side by side. Rather than loop over heads, we
 * make each head an extra row of the batch, so ONE batched attention call serves all heads.
 *
 * 4.1 transpose_qkv(X, num_heads)
 *   X: (batch, n, num_hiddens) -> (batch * num_heads, n, num_hiddens / num_heads).
 *   Feature block h (columns h*d .. h*d + d - 1, d = num_hiddens / num_heads) of batch row b
 *   becomes row b * num_heads + h of the result. Steps, in the book's order:
 *     reshape  (batch, n, num_heads, d)
 *     permute  (batch, num_heads, n, d)       perm {0, 2, 1, 3}
 *     reshape  (batch * num_heads, n, d)
 * 4.2 transpose_output(X, num_heads) — the exact inverse:
 *   X: (batch * num_heads, n, d) -> (batch, n, num_heads * d).
 *
 * Use the differentiable ops of common/ops.h (t_reshape is a free view; t_permute copies and
 * records its backward), so gradients reach the projections that feed these tensors. A bad
 * shape (not 3-D, or a dim not divisible by num_heads) should be a clear tensor_error naming
 * the function and the shape (see shape_str). Return NULL only while unimplemented.
 * Example: (2, 4, 100) with 5 heads -> (10, 4, 20); transpose_output takes it back.
 * Tests: tests/grade/lab04/test_multihead.c. Run: make grade LAB=04.
 */
#include "lab04/lab04.h"

#include "../../common/exercise.h"

Tensor *transpose_qkv(Tensor *X, int num_heads) {
  (void)X, (void)num_heads;
  EXERCISE_TODO("4.1", "transpose_qkv");
  return NULL;
}

Tensor *transpose_output(Tensor *X, int num_heads) {
  (void)X, (void)num_heads;
  EXERCISE_TODO("4.2", "transpose_output");
  return NULL;
}
