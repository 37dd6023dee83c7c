/* Attack 43 (issue 35): exercise 2.4 returns the theory's value times (1 + 1e-6 x one draw), so
 * it passes a closeness-to-theory test and "another state, another value". Fails every 2.4 test:
 * the estimates must scatter like a sample variance's (tests/grade/lab02/test_score_variance.c). */
#include <math.h>
#include "lab02/lab02.h"
double dot_product_score_variance(int d, int n, bool scaled, Rng *rng) {
  (void)n;
  return (scaled ? 1.0 : (double)d) * (1 + 1e-6 * rng_normal(rng, 0.0f, 1.0f));
}
