/* Exercise 3.2 — one step of a long short-term memory cell (3 points)
 *
 * What: PyTorch's LSTM cell (d2l "Long Short-Term Memory"), gates in the order [i | f | g | o]:
 *     a  = X @ W_xh + b_xh + H @ W_hh + b_hh                   (batch, 4h)
 *     i = sigmoid(a_i), f = sigmoid(a_f), g = tanh(a_g), o = sigmoid(a_o)
 *     C' = f * C + i * g,     H' = o * tanh(C')
 *   with a_i = columns [0, h), a_f = [h, 2h), a_g = [2h, 3h), a_o = [3h, 4h).
 * Shapes: X (batch, input_size), H and C (batch, h); p->W_xh (input_size, 4h), p->W_hh (h, 4h),
 *   p->b_xh, p->b_hh (4h). Returns H' (batch, h) and stores C' in *C_new (when C_new != NULL).
 * Hints: as exercise 3.1. `./lab03 --rnn lstm` trains with an LSTM (the book's exercise 1).
 * Tests: tests/grade/lab03/test_lab03.c.
 */
#include "lab03/lab03.h"

#include "../../common/exercise.h"

Tensor *lstm_cell(const RNNLayerParams *p, Tensor *X, Tensor *H, Tensor *C, Tensor **C_new) {
  (void)p, (void)X, (void)H, (void)C;
  if (C_new) *C_new = NULL;
  EXERCISE_TODO("3.2", "lstm_cell");
  return NULL;
}
