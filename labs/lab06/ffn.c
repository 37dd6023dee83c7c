/* Exercise 6.1 — the position-wise feed-forward network (3 points)
 *
 * What: return dense2(relu(dense1(X))): the same two-layer MLP applied to every position
 *   (every row of the last dim) independently — "position-wise".
 * Shapes: X (batch, steps, in); dense1 maps in -> ffn_num_hiddens, dense2 maps
 *   ffn_num_hiddens -> ffn_num_outputs; the result is (batch, steps, ffn_num_outputs).
 * Hints: Linear_forward already handles any leading dims ((..., in) -> (..., out)), and t_relu
 *   is the ReLU. Three calls; gradients flow through them automatically.
 *   If X is NULL (an unfinished exercise upstream), return NULL.
 * Tests: tests/grade/lab06/test_transformer.c. Run: make grade LAB=06.
 */
#include "lab06/lab06.h"

#include "../../common/exercise.h"

Tensor *PositionWiseFFN_forward(const PositionWiseFFN *f, Tensor *X) {
  (void)f, (void)X;
  EXERCISE_TODO("6.1", "PositionWiseFFN_forward");
  return NULL;
}
