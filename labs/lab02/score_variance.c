/* Exercise 2.4 — the 1/sqrt(d) experiment (4 points)
 *
 * What: why scaled dot-product attention divides by sqrt(d), measured. Draw n pairs of vectors
 *   q, k of dimension d with independent N(0, 1) entries (rng_normal(rng, 0, 1), from the
 *   generator you are given), compute each pair's score s = q . k (s = q . k / sqrt(d) when
 *   scaled is true), and return the sample variance of the n scores,
 *       mean = (1/n) sum s,   variance = 1/(n - 1) sum (s - mean)^2.
 *   Theory: s is a sum of d independent products of mean 0 and variance 1, so its variance is
 *   d, and 1 once divided by sqrt(d) — lab 02 prints and plots what you measure beside it.
 * Arguments: d >= 1, n >= 2 (return NAN otherwise). Draw from rng only: the same generator
 *   state must give the same answer, another state another sample.
 * Hints: plain C loops are enough (no tensors needed). Accumulate in double.
 * Tests: tests/grade/lab02/test_score_variance.c — the unscaled variances near d (2), the
 *   scaled ones near 1 (1), drawn from rng (1). Run: make grade LAB=02 VARIANT=labs.
 */
#include <math.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"

double dot_product_score_variance(int d, int n, bool scaled, Rng *rng) {
  (void)d, (void)n, (void)scaled, (void)rng;
  EXERCISE_TODO("2.4", "dot_product_score_variance");
  return NAN;
}
