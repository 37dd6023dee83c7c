/* Graded tests of exercise 1.2, nadaraya_watson (labs/lab01/nadaraya_watson.c). 6 points.
 * The kernels here are the tests' own, so 1.2 is graded whether or not 1.1 is done. */
#include <math.h>

#include "../grade.h"
#include "lab01/lab01.h"

/* A triangle kernel of the given width, and a boxcar: the tests' own, independent of 1.1. */
static float *tri(const float *u, float *out, long n, double width) {
  for (long i = 0; i < n; i++) out[i] = fmaxf(0.0f, 1.0f - fabsf(u[i]) / (float)width);
  return out;
}
static float *box(const float *u, float *out, long n, double width) {
  for (long i = 0; i < n; i++) out[i] = fabsf(u[i]) < (float)width ? 1.0f : 0.0f;
  return out;
}
static float *one(const float *u, float *out, long n, double width) {
  (void)u, (void)width;
  for (long i = 0; i < n; i++) out[i] = 1.0f;
  return out;
}

GRADED_TEST(lab01_nadaraya_watson_weights, 3,
            "1.2 nadaraya_watson: normalized kernel weights (queries x keys) and predictions") {
  float x[4] = {0, 1, 2, 3}, y[4] = {1, 3, 2, 5}, q[3] = {0.5f, 2.9f, 1.0f};
  const double width = 1.5;
  float wantA[12], wanty[3];
  for (int i = 0; i < 3; i++) { /* the formula, in double */
    double k[4], s = 0, acc = 0;
    for (int j = 0; j < 4; j++) s += k[j] = fmax(0.0, 1.0 - fabs((double)q[i] - x[j]) / width);
    for (int j = 0; j < 4; j++) {
      wantA[i * 4 + j] = (float)(k[j] / s);
      acc += k[j] / s * y[j];
    }
    wanty[i] = (float)acc;
  }
  Tensor *A = NULL;
  int bad = -1;
  Tensor *yh = nadaraya_watson(tensor_from(1, (int[]){4}, x), tensor_from(1, (int[]){4}, y),
                               tensor_from(1, (int[]){3}, q), tri, width, &A, &bad);
  EXPECT_NOT_NULL(yh, "nadaraya_watson");
  if (!EXPECT_SHAPE(yh, "y_hat (one prediction per query)", 3)) return;
  EXPECT_NOT_NULL(A, "*attention_weights (set it to the weight matrix)");
  if (!EXPECT_SHAPE(A, "attention weights (queries, keys)", 3, 4)) return;
  /* 1e-6: float32 rounding of sums of 4 terms */
  EXPECT_CLOSE(A->data, wantA, 12, 1e-6, 1e-5, "attention weights (row = query, col = key)");
  EXPECT_CLOSE(yh->data, wanty, 3, 1e-5, 1e-5, "y_hat");
  EXPECT(bad == 0, "*n_unsupported: expected 0 (every query has a key in range), got %d", bad);
  /* NULL out-pointers are allowed */
  Tensor *y2 = nadaraya_watson(tensor_from(1, (int[]){4}, x), tensor_from(1, (int[]){4}, y),
                               tensor_from(1, (int[]){3}, q), tri, width, NULL, NULL);
  EXPECT_NOT_NULL(y2, "nadaraya_watson with attention_weights = n_unsupported = NULL");
  EXPECT_CLOSE(y2->data, wanty, 3, 1e-5, 1e-5, "y_hat with NULL out-pointers");
}

GRADED_TEST(lab01_nadaraya_watson_unsupported, 2,
            "1.2 nadaraya_watson: a query with no key in range is NaN, zero weights, counted") {
  float x[4] = {0, 0.5f, 4.5f, 5}, y[4] = {1, 2, 3, 4}, q[3] = {0.25f, 2.5f, 4.75f};
  Tensor *A = NULL;
  int bad = -1;
  Tensor *yh = nadaraya_watson(tensor_from(1, (int[]){4}, x), tensor_from(1, (int[]){4}, y),
                               tensor_from(1, (int[]){3}, q), box, 1.0, &A, &bad);
  EXPECT_NOT_NULL(yh, "nadaraya_watson");
  EXPECT_NOT_NULL(A, "*attention_weights");
  if (!EXPECT_SHAPE(yh, "y_hat", 3) || !EXPECT_SHAPE(A, "attention weights", 3, 4)) return;
  EXPECT(bad == 1, "*n_unsupported: the query 2.5 is 2 away from every key (boxcar width 1), "
                   "expected 1, got %d", bad);
  EXPECT(isnan(yh->data[1]), "y_hat of the unsupported query 2.5: expected NAN, got %g",
         (double)yh->data[1]);
  for (int j = 0; j < 4; j++)
    EXPECT(A->data[4 + j] == 0.0f, "weight of the unsupported query on key %d: expected 0, got %g",
           j, (double)A->data[4 + j]);
  /* the other queries are unaffected: each averages its two neighbours */
  EXPECT_NEAR(yh->data[0], 1.5, 1e-6, "y_hat of query 0.25 (keys 0 and 0.5)");
  EXPECT_NEAR(yh->data[2], 3.5, 1e-6, "y_hat of query 4.75 (keys 4.5 and 5)");
  EXPECT_NEAR(A->data[0] + A->data[1], 1.0, 1e-6, "weights of query 0.25 sum to");
}

GRADED_TEST(lab01_nadaraya_watson_constant_is_average, 1,
            "1.2 nadaraya_watson with a constant kernel is average pooling") {
  float x[5] = {0.1f, 0.7f, 2.2f, 3.0f, 4.9f}, y[5] = {2, -1, 4, 0.5f, 3}, q[2] = {0, 10};
  Tensor *A = NULL;
  int bad = -1;
  Tensor *yh = nadaraya_watson(tensor_from(1, (int[]){5}, x), tensor_from(1, (int[]){5}, y),
                               tensor_from(1, (int[]){2}, q), one, 1.0, &A, &bad);
  EXPECT_NOT_NULL(yh, "nadaraya_watson");
  EXPECT_NOT_NULL(A, "*attention_weights");
  if (!EXPECT_SHAPE(yh, "y_hat", 2) || !EXPECT_SHAPE(A, "attention weights", 2, 5)) return;
  float mean[2] = {1.7f, 1.7f}, fifth[10];
  for (int i = 0; i < 10; i++) fifth[i] = 0.2f;
  EXPECT_CLOSE(yh->data, mean, 2, 1e-6, 1e-6, "y_hat (the mean of the values)"); /* float */
  EXPECT_CLOSE(A->data, fifth, 10, 1e-7, 1e-6, "attention weights (all 1/n)");   /* float */
}
