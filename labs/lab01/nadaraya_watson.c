/* Exercise 1.2 — Nadaraya–Watson kernel regression (6 points: weights and predictions 3,
 * queries without support 2, the constant kernel is average pooling 1)
 *
 * What: nadaraya_watson(x_train, y_train, queries, kernel, width, &A, &n_unsupported)
 *   For each query q_i, score every key x_j with the kernel, u_ij = x_j - q_i (the kernels are
 *   even, so the sign does not matter), normalize the scores of that query so they sum to one:
 *       alpha_ij = K(u_ij) / sum_l K(u_il)
 *   and predict the weighted average of the values, y_hat_i = sum_j alpha_ij y_j.
 * Shapes: x_train (n) keys, y_train (n) values, queries (m) -> returns y_hat (m);
 *   *attention_weights (m, n), one row per query, one column per key (when the pointer is not
 *   NULL). Make both with tensor_new (arena memory; nothing to free).
 * Queries without support: when every kernel value of a query is 0 (a boxcar query farther than
 *   the width from every key, a very narrow Gaussian whose exp underflows to 0) the formula is
 *   0/0. Do not let that NaN slip through silently: leave the weight row all zeros, set that
 *   y_hat to NAN on purpose, and count the query in *n_unsupported (when not NULL) so the
 *   caller can report it.
 * Hints: call the kernel once per query on a row of n differences (it works in place: the
 *   row of differences can become the row of weights). A kernel returns NULL when it is itself
 *   an unimplemented stub: return NULL then. Sum the row in double; divide each weight by the
 *   (float) sum as torch's k / k.sum(0) does. Check the shapes first and report a mismatch with
 *   tensor_error("nadaraya_watson", "...%s...", shape_str(...)).
 * Tests: tests/grade/lab01/test_nadaraya_watson.c. Run: make grade LAB=01.
 */
#include "lab01/lab01.h"

#include "../../common/exercise.h"

Tensor *nadaraya_watson(Tensor *x_train, Tensor *y_train, Tensor *queries, KernelFn kernel,
                        double width, Tensor **attention_weights, int *n_unsupported) {
  (void)x_train, (void)y_train, (void)queries, (void)kernel, (void)width;
  (void)attention_weights, (void)n_unsupported;
  EXERCISE_TODO("1.2", "nadaraya_watson");
  return NULL;
}
