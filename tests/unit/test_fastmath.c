/* Tests of common/fastmath.h (the vectorizable exp, tanh and sigmoid behind t_tanh and
 * t_sigmoid) against double-precision libm, over dense grids and at the edges. */
#include "../../common/fastmath.h"
#include "../../common/ops.h"
#include "../test.h"

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

TEST(fastmath_relative_error_vs_libm) {
  double worst_e = 0, worst_t = 0, worst_s = 0;
  for (int i = -870000; i <= 880000; i++) { /* [-87, 88] in steps of 1e-4 */
    float x = (float)i * 1e-4f;
    double e = exp((double)x), t = tanh((double)x), s = sigm(x);
    worst_e = fmax(worst_e, fabs(fast_expf(x) - e) / e);
    if (t != 0) worst_t = fmax(worst_t, fabs(fast_tanhf(x) - t) / fabs(t));
    worst_s = fmax(worst_s, fabs(fast_sigmoidf(x) - s) / s);
  }
  /* tiny arguments, where tanh x ~ x must keep its relative accuracy (the Taylor branch) */
  for (int i = 1; i <= 100000; i++) {
    float x = (float)i * 3e-6f;
    worst_t = fmax(worst_t, fabs(fast_tanhf(x) - tanh((double)x)) / tanh((double)x));
  }
  /* a few float ulps (2^-23 = 1.2e-7): the polynomials are exact to ~1e-7, the rest is the
   * rounding of the float evaluation; libm's own tanhf / expf are within 1-2 ulps */
  CHECK(worst_e < 5e-7);
  CHECK(worst_t < 5e-7);
  CHECK(worst_s < 5e-7);
  if (worst_e >= 5e-7 || worst_t >= 5e-7 || worst_s >= 5e-7)
    test_fail(__FILE__, __LINE__, "worst relative errors: exp %.3g, tanh %.3g, sigmoid %.3g",
              worst_e, worst_t, worst_s);
}

TEST(fastmath_edges) {
  /* saturation is exact, signs and NaN survive */
  CHECK(fast_tanhf(30.0f) == 1.0f && fast_tanhf(-30.0f) == -1.0f);
  CHECK(fast_tanhf(INFINITY) == 1.0f && fast_tanhf(-INFINITY) == -1.0f);
  CHECK(fast_tanhf(0.0f) == 0.0f && signbit(fast_tanhf(-0.0f)));
  CHECK(fast_sigmoidf(200.0f) == 1.0f && fast_sigmoidf(-200.0f) == 0.0f);
  CHECK(fast_sigmoidf(INFINITY) == 1.0f && fast_sigmoidf(-INFINITY) == 0.0f);
  CHECK(fast_sigmoidf(0.0f) == 0.5f);
  CHECK(isnan(fast_expf(NAN)) && isnan(fast_tanhf(NAN)) && isnan(fast_sigmoidf(NAN)));
  /* the clamp: e^x for x beyond [-87, 88] is e^-87 / e^88, finite and normal */
  CHECK(isnormal(fast_expf(-1000.0f)) && isfinite(fast_expf(1000.0f)));
}

/* t_tanh / t_sigmoid use them on every element, in vector loops (several vector widths and a
 * remainder: 1000 elements). */
TEST(fastmath_in_tanh_and_sigmoid_ops) {
  enum { N = 1000 };
  Tensor *x = tensor_new(1, (const int[]){N});
  for (int i = 0; i < N; i++) x->data[i] = -12.0f + 24.0f * (float)i / (N - 1);
  Tensor *t = t_tanh(x), *s = t_sigmoid(x);
  double worst_t = 0, worst_s = 0;
  for (int i = 0; i < N; i++) {
    double v = x->data[i];
    worst_t = fmax(worst_t, fabs(t->data[i] - tanh(v)) / fmax(fabs(tanh(v)), 1e-30));
    worst_s = fmax(worst_s, fabs(s->data[i] - sigm(v)) / sigm(v));
  }
  CHECK(worst_t < 5e-7); /* the same few-ulp bound as above */
  CHECK(worst_s < 5e-7);
  ag_step_reset();
}
