/* Exercise 2.4 — the 1/sqrt(d) experiment (reference solution; the spec is in
 * labs/lab02/score_variance.c). */
#include <math.h>

#include "lab02/lab02.h"

double dot_product_score_variance(int d, int n, bool scaled, Rng *rng) {
  if (d < 1 || n < 2 || !rng) return NAN;
  const double scale = scaled ? 1.0 / sqrt((double)d) : 1.0;
  double sum = 0, sum2 = 0; /* of the scores and their squares: the variance in one pass */
  for (int p = 0; p < n; p++) {
    double s = 0;
    for (int i = 0; i < d; i++) {
      const double q = rng_normal(rng, 0.0f, 1.0f), k = rng_normal(rng, 0.0f, 1.0f);
      s += q * k;
    }
    s *= scale;
    sum += s;
    sum2 += s * s;
  }
  const double mean = sum / n;
  return (sum2 - n * mean * mean) / (n - 1);
}
