/* Exercises 1.3 and 1.4 — parametric attention pooling, the book's NWKernelRegression
 * (1.3: 6 points, forward values 3 and gradient reaching w 3; 1.4: 2 points)
 *
 * 1.3 What: NWKernelRegression_forward(net, queries, keys, values)
 *       alpha_ij = softmax_j( -((q_i - k_ij) * w)^2 / 2 ),    y_hat_i = sum_j alpha_ij v_ij
 *     with the single learned parameter w = net->w. Store the weights in
 *     net->attention_weights and return y_hat.
 *   Shapes: queries (m), keys (m, n), values (m, n), net->w (1) -> y_hat (m);
 *     attention_weights (m, n).
 *   Hints: use only the differentiable ops of common/ops.h (no loops over data) so that
 *     ag_backward(loss) reaches net->w: t_reshape the queries to (m, 1) and let t_sub broadcast
 *     them against the keys (the book repeats them with repeat_interleave instead); t_mul by
 *     net->w (shape (1) broadcasts); t_square, t_scale(.., -0.5f), t_softmax (over the last
 *     dim = over the keys). For the weighted sum, the book uses a batch matrix product:
 *     (m, 1, n) bmm (m, n, 1) -> (m, 1, 1), reshaped to (m) — t_bmm does that.
 *
 * 1.4 What: leave_one_out(x) -> (n, n - 1): row i is x without x[i], the other entries in
 *     their original order. The training loop uses it for keys (x_train) and values (y_train),
 *     so that no training input attends to its own value (otherwise w grows without bound and
 *     the model just copies y_i).
 *   Shapes: x (n), n >= 2 -> (n, n - 1); a smaller n is an error (tensor_error naming
 *     "leave_one_out" and the shape).
 *   Hints: tensor_new(2, (int[]){n, n - 1}) and two loops; no gradient is needed.
 *
 * Tests: tests/grade/lab01/test_nw_kernel_regression.c. Run: make grade LAB=01.
 */
#include "lab01/lab01.h"

#include "../../common/exercise.h"

Tensor *NWKernelRegression_forward(NWKernelRegression *net, Tensor *queries, Tensor *keys,
                                   Tensor *values) {
  (void)net, (void)queries, (void)keys, (void)values;
  EXERCISE_TODO("1.3", "NWKernelRegression_forward");
  return NULL;
}

Tensor *leave_one_out(Tensor *x) {
  (void)x;
  EXERCISE_TODO("1.4", "leave_one_out");
  return NULL;
}
