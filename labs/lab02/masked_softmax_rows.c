/* Exercise 2.5 — masked softmax as a plain C loop, forward and backward (6 points)
 *
 * The kernel track: exercise 2.1 composed masked_softmax from the kit's ops; here you write
 * the loops those ops run, on raw float arrays, as the CPU kernel does (common/cpu/).
 * What: for every row r = (b, i) of X (batch, queries, keys), with len its valid length
 *       (valid_lens[b] when lens_ndim == 1, valid_lens[b * queries + i] when lens_ndim == 2,
 *       keys when valid_lens == NULL):
 *         Y[r, j] = exp(X[r, j] - m) / sum_{k < len} exp(X[r, k] - m)   for j < len,
 *         Y[r, j] = 0                                                   for j >= len,
 *       with m = max_{k < len} X[r, k]. A row with len == 0 is all zeros.
 *   Backward: given Y and dY = dL/dY, dX = dL/dX is, per row,
 *         dX[r, j] = Y[r, j] * (dY[r, j] - sum_k dY[r, k] * Y[r, k])
 *   (the softmax's Jacobian-vector product; masked keys, where Y is 0, get 0 by themselves).
 * Why subtract m: exp(1000) overflows float (inf/inf = NaN); exp(X - m) <= 1 never does, and
 *   the factor exp(-m) cancels between numerator and denominator. Why not fill the masked
 *   scores with the book's -1e6: a row with len == 0 would become uniform, not zero.
 * Shapes: X, Y, dY, dX contiguous (batch, queries, keys); valid_lens (batch) or
 *   (batch, queries) ints in [0, keys]. Return 0.
 * Hints: one pass for the max, one for the exponentials and their sum (store them in Y), one
 *   to scale (and to zero the masked tail). Only <math.h>: expf. No tensors, no kit ops.
 *   The grade also tells you which of your loops GCC vectorized for AVX2 (-O3
 *   -march=x86-64-v3), and GCC's reason where it did not, as information (not graded): a loop
 *   calling expf, for one, is not (glibc's vector expf needs -ffast-math).
 * Tests: tests/grade/lab02/test_masked_softmax_rows.c — plain softmax without lengths (1),
 *   1-D lengths at uneven shapes (1), 2-D lengths (1), length-0 rows are exactly zero and
 *   large scores do not overflow (1), backward against finite differences (2).
 *   Run: make grade LAB=02 VARIANT=labs.
 */
#include "lab02/lab02.h"

#include "../../common/exercise.h"

int masked_softmax_rows(const float *X, const int *valid_lens, int lens_ndim, int batch,
                        int queries, int keys, float *Y) {
  (void)X, (void)valid_lens, (void)lens_ndim, (void)batch, (void)queries, (void)keys, (void)Y;
  EXERCISE_TODO("2.5", "masked_softmax_rows");
  return -1;
}

int masked_softmax_rows_backward(const float *Y, const float *dY, int batch, int queries,
                                 int keys, float *dX) {
  (void)Y, (void)dY, (void)batch, (void)queries, (void)keys, (void)dX;
  EXERCISE_TODO("2.5", "masked_softmax_rows_backward");
  return -1;
}
