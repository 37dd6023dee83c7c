/* Graded tests of exercise 2.4 (dot_product_score_variance), labs/lab02/score_variance.c.
 * 4 points. The expected values are the theory's, d unscaled and 1 scaled; the tolerance is
 * statistical. For s = q . k with d independent N(0, 1) products, E[s^2] = d and
 * E[s^4] = 3d^2 + 6d (d fourth moments of 9, 3d(d - 1) cross terms), so Var(s^2) = 2d^2 + 6d and
 * the sample variance of n scores has a standard error of sqrt((2d^2 + 6d) / n), that is
 * sqrt((2 + 6/d) / n) of d. Five standard errors: a right answer fails a check with probability
 * below 1e-6 (normal tail; n = 20000 makes the sample variance near normal even at d = 1), and
 * a wrong one (unscaled, 1/d, q . q, uniform draws) is off by far more (at d >= 4). The
 * experiment itself is required too: every test checks that the estimates scatter like a
 * sample's (check_scatter). */
#include <math.h>

#include "../grade.h"
#include "lab02/lab02.h"

enum { N = 20000, NDIMS = 5 };
static const int k_dims[NDIMS] = {1, 4, 16, 64, 256};

/* the check's relative tolerance at dimension d (see above) */
static double tol(int d) { return 5 * sqrt((2.0 + 6.0 / d) / N); }

/* The estimates must scatter as sample variances do: over S generator states the standard
 * deviation of the estimate at n pairs is its standard error sqrt((2d^2 + 6d) / n) (over d^2
 * scaled), 4x smaller at 16x the pairs. Returning the theory's value with a little noise of one
 * draw (or noise of any fixed size) fails: its scatter is not the sample's. The scatter of
 * S = 60 estimates is known to about 10% (sqrt(2.24 / 4 / 59): the estimate at n = 50 is near
 * normal, excess kurtosis about 12/n), so 0.5 either way is over 5 of those. */
static void check_scatter(bool scaled) {
  enum { S = 60, D = 16 };
  static const int k_pairs[2] = {50, 800};
  for (int j = 0; j < 2; j++) {
    const int n = k_pairs[j];
    double sum = 0, sum2 = 0;
    for (int k = 0; k < S; k++) {
      Rng r;
      rng_init(&r, 1000 + (uint64_t)k);
      const double v = dot_product_score_variance(D, n, scaled, &r);
      sum += v, sum2 += v * v;
    }
    const double mean = sum / S, spread = sqrt(fmax(0, (sum2 - S * mean * mean) / (S - 1)));
    const double se = sqrt((2.0 * D * D + 6.0 * D) / n) / (scaled ? D : 1);
    char msg[200];
    GRADE_MSG(msg, "the scatter of the variance at d = %d over %d generator states, %d pairs each, "
              "in standard errors of a sample variance (%.3g): a real experiment's is 1", D, S, n,
              se);
    EXPECT_NEAR(spread / se, 1.0, 0.5, msg);
  }
}

static void check_variances(bool scaled) {
  Rng rng, other;
  rng_init(&rng, 2024);
  rng_init(&other, 2025);
  double first = 0;
  for (int i = 0; i < NDIMS; i++) {
    const int d = k_dims[i];
    const double v = dot_product_score_variance(d, N, scaled, &rng);
    const double want = scaled ? 1.0 : (double)d;
    char msg[200];
    GRADE_MSG(msg, "the variance of %s over %d pairs at d = %d: the theory's %g, within 5 "
              "standard errors of a sample variance (%.3g of it)",
              scaled ? "q . k / sqrt(d)" : "q . k", N, d, want, tol(d));
    EXPECT_NEAR(v, want, tol(d) * want, msg);
#if !GRADE_REF
    (void)want, (void)tol; /* the student's runner sends v only */
#endif
    if (i == 0) first = v;
  }
  /* a measurement, not the theory's number: another generator state, another sample */
  EXPECT(dot_product_score_variance(k_dims[0], N, scaled, &other) != first,
         "another generator state must give another sample (draw from rng)");
  check_scatter(scaled);
}

GRADED_TEST(lab02_score_variance_unscaled, 2,
            "2.4 dot_product_score_variance: var(q . k) grows like d") {
  check_variances(false);
}
GRADED_TEST(lab02_score_variance_scaled, 1,
            "2.4 dot_product_score_variance: var(q . k / sqrt(d)) stays at 1") {
  check_variances(true);
}
GRADED_TEST(lab02_score_variance_measured, 1,
            "2.4 dot_product_score_variance: measured with the generator given") {
  Rng a, b, c;
  rng_init(&a, 7);
  rng_init(&b, 7);
  rng_init(&c, 8);
  const double va = dot_product_score_variance(16, N, false, &a);
  const double vb = dot_product_score_variance(16, N, false, &b);
  const double vc = dot_product_score_variance(16, N, false, &c);
  EXPECT(va == vb, "the same generator state must give the same variance (draw from rng only)");
  EXPECT(va != vc, "another generator state must give another sample (draw from rng, do not "
         "return the theory's value)");
  EXPECT_NEAR(vc, 16.0, tol(16) * 16, "the variance at d = 16 (seed 8)");
  check_scatter(false);
}
