/* Graded tests of exercise 1.2, nadaraya_watson (labs/lab01/nadaraya_watson.c). 6 points.
 * The kernels here are the tests' own, so 1.2 is graded whether or not 1.1 is done. Expected
 * values exist only in the reference build (GRADE_REF, tests/grade/grade.h). */
#include <math.h>

#include "../grade.h"
#include "lab01/lab01.h"

/* The tests' own kernels, none of them an exercise of 1.1 (a runner holds no answer to
 * another test): a quadratic bump of the given width (zero from |u| >= width on) and a
 * constant 2 (the weights are normalized, so any constant is average pooling). */
static float *bump(const float *u, float *out, long n, double width) {
  for (long i = 0; i < n; i++) {
    float r = u[i] / (float)width;
    out[i] = fmaxf(0.0f, 1.0f - r * r);
  }
  return out;
}
static float *two(const float *u, float *out, long n, double width) {
  (void)u, (void)width;
  for (long i = 0; i < n; i++) out[i] = 2.0f;
  return out;
}

GRADED_TEST(lab01_nadaraya_watson_weights, 3,
            "1.2 nadaraya_watson: normalized kernel weights (queries x keys) and predictions") {
  float x[4] = {0, 1, 2, 3}, y[4] = {1, 3, 2, 5}, q[3] = {0.5f, 2.9f, 1.0f};
  const double width = 1.5;
  /* (the reference's expected values may come before the call: a student's run has none) */
#if GRADE_REF
  float wantA[12], wanty[3];
  for (int i = 0; i < 3; i++) { /* the formula, in double */
    double k[4], s = 0, acc = 0;
    for (int j = 0; j < 4; j++) {
      double r = ((double)q[i] - x[j]) / width;
      s += k[j] = fmax(0.0, 1.0 - r * r);
    }
    for (int j = 0; j < 4; j++) {
      wantA[i * 4 + j] = (float)(k[j] / s);
      acc += k[j] / s * y[j];
    }
    wanty[i] = (float)acc;
  }
#endif
  Tensor *A = NULL;
  int bad = -1;
  Tensor *yh = nadaraya_watson(tensor_from(1, (int[]){4}, x), tensor_from(1, (int[]){4}, y),
                               tensor_from(1, (int[]){3}, q), bump, width, &A, &bad);
  EXPECT_NOT_NULL(yh, "nadaraya_watson");
  if (!EXPECT_SHAPE(yh, "y_hat (one prediction per query)", 3)) return;
  EXPECT_NOT_NULL(A, "*attention_weights (set it to the weight matrix)");
  if (!EXPECT_SHAPE(A, "attention weights (queries, keys)", 3, 4)) return;
  /* 1e-6: float32 rounding of sums of 4 terms */
  EXPECT_CLOSE(A->data, wantA, 12, 1e-6, 1e-5, "attention weights (row = query, col = key)");
  EXPECT_CLOSE(yh->data, wanty, 3, 1e-5, 1e-5, "y_hat");
  EXPECT_NEAR(bad, 0, 0, "*n_unsupported (every query has a key in range)");
  /* NULL out-pointers are allowed */
  Tensor *y2 = nadaraya_watson(tensor_from(1, (int[]){4}, x), tensor_from(1, (int[]){4}, y),
                               tensor_from(1, (int[]){3}, q), bump, width, NULL, NULL);
  EXPECT_NOT_NULL(y2, "nadaraya_watson with attention_weights = n_unsupported = NULL");
  EXPECT_CLOSE(y2->data, wanty, 3, 1e-5, 1e-5, "y_hat with NULL out-pointers");
}

GRADED_TEST(lab01_nadaraya_watson_unsupported, 2,
            "1.2 nadaraya_watson: a query with no key in range is NaN, zero weights, counted") {
  float x[4] = {0, 0.5f, 4.5f, 5}, y[4] = {1, 2, 3, 4}, q[3] = {0.25f, 2.5f, 4.75f};
  Tensor *A = NULL;
  int bad = -1;
  Tensor *yh = nadaraya_watson(tensor_from(1, (int[]){4}, x), tensor_from(1, (int[]){4}, y),
                               tensor_from(1, (int[]){3}, q), bump, 1.0, &A, &bad);
  EXPECT_NOT_NULL(yh, "nadaraya_watson");
  EXPECT_NOT_NULL(A, "*attention_weights");
  if (!EXPECT_SHAPE(yh, "y_hat", 3) || !EXPECT_SHAPE(A, "attention weights", 3, 4)) return;
  EXPECT_NEAR(bad, 1, 0, "*n_unsupported: the query 2.5 is 2 away from every key (kernel width 1)");
  /* the unsupported query: NAN (only a NaN matches an expected NaN) and zero weights; the
   * other queries are unaffected: each averages its two neighbours, 0.25 away on either side */
  EXPECT_CLOSE(yh->data, ((const float[]){1.5f, NAN, 3.5f}), 3, 1e-6, 0,
               "y_hat of queries 0.25, 2.5 (unsupported: NAN) and 4.75"); /* float average */
  EXPECT_CLOSE(A->data + 4, ((const float[]){0, 0, 0, 0}), 4, 0, 0,
               "weights of the unsupported query 2.5 (exactly 0)");
  EXPECT_NEAR(A->data[0] + A->data[1], 1.0, 1e-6, "weights of query 0.25 sum to");
}

GRADED_TEST(lab01_nadaraya_watson_constant_is_average, 1,
            "1.2 nadaraya_watson with a constant kernel is average pooling") {
  float x[5] = {0.1f, 0.7f, 2.2f, 3.0f, 4.9f}, y[5] = {2, -1, 4, 0.5f, 3}, q[2] = {0, 10};
  Tensor *A = NULL;
  int bad = -1;
  Tensor *yh = nadaraya_watson(tensor_from(1, (int[]){5}, x), tensor_from(1, (int[]){5}, y),
                               tensor_from(1, (int[]){2}, q), two, 1.0, &A, &bad);
  EXPECT_NOT_NULL(yh, "nadaraya_watson");
  EXPECT_NOT_NULL(A, "*attention_weights");
  if (!EXPECT_SHAPE(yh, "y_hat", 2) || !EXPECT_SHAPE(A, "attention weights", 2, 5)) return;
#if GRADE_REF
  float fifth[10];
  for (int i = 0; i < 10; i++) fifth[i] = 0.2f;
#endif
  EXPECT_CLOSE(yh->data, ((const float[]){1.7f, 1.7f}), 2, 1e-6, 1e-6,
               "y_hat (the mean of the values)"); /* float */
  EXPECT_CLOSE(A->data, fifth, 10, 1e-7, 1e-6, "attention weights (all 1/n)"); /* float */
}
