/* Exercise 6.2 — AddNorm: residual connection, then layer normalization (3 points)
 *
 * What: return LayerNorm(dropout(Y) + X). X is the sublayer's input, Y its output; the dropout
 *   (a->dropout, active only when training) is applied to Y before the residual sum, and the
 *   layer norm (a->ln: gamma, beta, eps) normalizes each position over the last dim.
 * Shapes: X, Y (batch, steps, d) with the same shape (otherwise report a clear error with
 *   tensor_error naming both shapes); returns (batch, steps, d).
 * Hints: Dropout_forward, t_add, LayerNorm_forward. If X or Y is NULL, return NULL.
 * Tests: tests/grade/lab06/test_transformer.c. Run: make grade LAB=06.
 */
#include "lab06/lab06.h"

#include "../../common/exercise.h"

Tensor *AddNorm_forward(const AddNorm *a, Tensor *X, Tensor *Y, bool training) {
  (void)a, (void)X, (void)Y, (void)training;
  EXERCISE_TODO("6.2", "AddNorm_forward");
  return NULL;
}
