/* Exercise 3.1 — one step of a gated recurrent unit (4 points)
 *
 * What: PyTorch's GRU cell (d2l "Gated Recurrent Units"), gates in the order [r | z | n]:
 *     gx = X @ W_xh + b_xh,   gh = H @ W_hh + b_hh            (both (batch, 3h))
 *     r  = sigmoid(gx_r + gh_r)                     reset gate
 *     z  = sigmoid(gx_z + gh_z)                     update gate
 *     n  = tanh(gx_n + r * gh_n)                    candidate state (r scales gh_n, b_hh included)
 *     H' = (1 - z) * n + z * H
 *   where gx_r = columns [0, h), gx_z = [h, 2h), gx_n = [2h, 3h) (h = W_hh's rows).
 * Shapes: X (batch, input_size), H (batch, h); p->W_xh (input_size, 3h), p->W_hh (h, 3h),
 *   p->b_xh, p->b_hh (3h). Returns H' (batch, h).
 * Hints: t_linear, t_slice(x, 1, start, end), t_sigmoid, t_tanh, t_add, t_sub, t_mul. Use only
 *   differentiable ops: the grader back-propagates through your cell. The lab compares your
 *   cell with the fused one it trains with (chapters/03_bahdanau/rnn_cell.c) — do not copy that one.
 * Tests: tests/grade/lab03/test_lab03.c (values against a hand-computed step, gradients).
 *   Run: make grade LAB=03 VARIANT=labs.
 */
#include "lab03/lab03.h"

#include "../../common/exercise.h"

Tensor *gru_cell(const RNNLayerParams *p, Tensor *X, Tensor *H) {
  (void)p, (void)X, (void)H;
  EXERCISE_TODO("3.1", "gru_cell");
  return NULL;
}
