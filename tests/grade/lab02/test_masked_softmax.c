/* Graded tests of exercise 2.1, masked_softmax (labs/lab02/masked_softmax.c). 10 points.
 * Every expected value is computed here from the definition, in double, in the reference
 * build only (GRADE_REF, tests/grade/grade.h). */
#include <math.h>
#include <string.h>

#include "../grade.h"
#include "../../sine_fill.h"
#include "lab02/lab02.h"

enum { B = 2, Q = 3, K = 5 };

/* X (B, Q, K): distinct, unsorted scores of order 1 */
static void fill_x(float *x) { sine_fill(x, B * Q * K, 0.7, 0.3, 1.5); }

#if GRADE_REF
/* The definition in double: row r of x (length K) keeps its first len[r] entries. */
static void reference(const float *x, const int *len, float *want) {
  for (int r = 0; r < B * Q; r++) {
    double mx = -INFINITY, sum = 0, e[K];
    for (int j = 0; j < len[r]; j++) mx = fmax(mx, x[r * K + j]);
    for (int j = 0; j < len[r]; j++) sum += e[j] = exp((double)x[r * K + j] - mx);
    for (int j = 0; j < K; j++) want[r * K + j] = j < len[r] ? (float)(e[j] / sum) : 0.0f;
  }
}
#endif

/* Call the student's masked_softmax on a fresh X; check shape and values against the
 * definition with per-row lengths len (B*Q entries). Returns the output or NULL. */
static Tensor *check(const char *what, Tensor *X, Tensor *vl, const int *len) {
  Tensor *Y = masked_softmax(X, vl);
  if (!Y) {
    grade_fail(__FILE__, __LINE__, "%s: masked_softmax returned NULL (not implemented yet?)",
               what);
    return NULL;
  }
  if (!expect_shape_(__FILE__, __LINE__, Y, GRADE_WHAT(what), SHAPE(B, Q, K))) return NULL;
#if GRADE_REF
  float want[B * Q * K];
  reference(X->data, len, want);
#else
  (void)len;
#endif
  /* float32 expf and sum over at most 5 terms: a few ulps of values <= 1 */
  EXPECT_CLOSE(Y->data, want, B * Q * K, 1e-6, 1e-5, what);
  return Y;
}

GRADED_TEST(lab02_masked_softmax_no_lens, 1,
            "2.1 masked_softmax(X, NULL) is the plain softmax over the last axis") {
  float x[B * Q * K];
  fill_x(x);
  const int len[B * Q] = {K, K, K, K, K, K};
  check("masked_softmax(X (2, 3, 5), NULL)", tensor_from(SHAPE(B, Q, K), x), NULL, len);
}

GRADED_TEST(lab02_masked_softmax_1d, 2,
            "2.1 masked_softmax with 1-D valid lengths (one per batch row)") {
  float x[B * Q * K];
  fill_x(x);
  /* the book's example shape (2, 2, 4) with lengths [2, 3] */
  static const float xb[16] = {0.5f, 0.2f, 0.9f, 0.1f,  0.3f, 0.8f, 0.4f, 0.6f,
                               0.7f, 0.1f, 0.2f, 0.95f, 0.4f, 0.4f, 0.5f, 0.05f};
  Tensor *Y = masked_softmax(tensor_from(SHAPE(2, 2, 4), xb),
                             tensor_from(SHAPE(2), (const float[]){2, 3}));
  EXPECT_NOT_NULL(Y, "masked_softmax(X (2, 2, 4), valid_lens [2, 3])");
  if (!EXPECT_SHAPE(Y, "masked_softmax(X (2, 2, 4), [2, 3])", 2, 2, 4)) return;
#if GRADE_REF
  float want[16];
  for (int r = 0; r < 4; r++) {
    int len = r < 2 ? 2 : 3;
    double s = 0;
    for (int j = 0; j < len; j++) s += exp(xb[r * 4 + j]);
    for (int j = 0; j < 4; j++) want[r * 4 + j] = j < len ? (float)(exp(xb[r * 4 + j]) / s) : 0;
  }
#endif
  /* float32 expf over <= 3 terms */
  EXPECT_CLOSE(Y->data, want, 16, 1e-6, 1e-5, "masked_softmax(X (2, 2, 4), valid_lens [2, 3])");
  const int len[B * Q] = {3, 3, 3, 5, 5, 5};
  check("masked_softmax(X (2, 3, 5), valid_lens [3, 5])", tensor_from(SHAPE(B, Q, K), x),
        tensor_from(SHAPE(B), (const float[]){3, 5}), len);
}

GRADED_TEST(lab02_masked_softmax_2d, 2,
            "2.1 masked_softmax with 2-D valid lengths (one per query)") {
  float x[B * Q * K];
  fill_x(x);
  const int len[B * Q] = {1, 3, 5, 2, 4, 1};
  check("masked_softmax(X (2, 3, 5), valid_lens [[1, 3, 5], [2, 4, 1]])",
        tensor_from(SHAPE(B, Q, K), x),
        tensor_from(SHAPE(B, Q), (const float[]){1, 3, 5, 2, 4, 1}), len);
}

GRADED_TEST(lab02_masked_softmax_zero_length, 2,
            "2.1 a row with valid length 0 is all zeros (not uniform, not NaN)") {
  float x[B * Q * K];
  fill_x(x);
  /* 1-D: batch row 0 has nothing to attend to */
  const int len1[B * Q] = {0, 0, 0, 4, 4, 4};
  Tensor *Y = check("masked_softmax(X, valid_lens [0, 4])", tensor_from(SHAPE(B, Q, K), x),
                    tensor_from(SHAPE(B), (const float[]){0, 4}), len1);
  if (!Y) return;
  /* Exactly 0: what the value check above lets through (within 1e-6) and no more. A larger
   * value or a NaN already failed it, with the grader's hint naming its cause (a uniform row:
   * the book's -1e6 fill; NaN: 0/0 of an empty row), so no guess about the fill here. */
  for (int j = 0; j < Q * K; j++)
    if (Y->data[j] != 0.0f && fabsf(Y->data[j]) <= 1e-6f) {
      grade_fail(__FILE__, __LINE__, "valid length 0: entry %d is %g, expected exactly 0", j,
                 (double)Y->data[j]);
      return;
    }
  /* 2-D: one length-0 query in the middle of each batch row */
  const int len2[B * Q] = {2, 0, 5, 0, 1, 3};
  Y = check("masked_softmax(X, valid_lens [[2, 0, 5], [0, 1, 3]])",
            tensor_from(SHAPE(B, Q, K), x),
            tensor_from(SHAPE(B, Q), (const float[]){2, 0, 5, 0, 1, 3}), len2);
  if (Y)
    for (int j = 0; j < K; j++)
      EXPECT(Y->data[K + j] == 0.0f && Y->data[3 * K + j] == 0.0f,
             "2-D length 0: rows (0, 1) and (1, 0) must be exactly zero; got %g and %g at key %d",
             (double)Y->data[K + j], (double)Y->data[3 * K + j], j);
}

#if GRADE_REF
/* sum(Y * R) of the double definition, for the finite-difference reference */
static double loss_ref(const float *x, const int *len, const float *R) {
  double l = 0;
  for (int r = 0; r < B * Q; r++) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < len[r]; j++) mx = fmax(mx, x[r * K + j]);
    for (int j = 0; j < len[r]; j++) sum += exp((double)x[r * K + j] - mx);
    for (int j = 0; j < len[r]; j++) l += exp((double)x[r * K + j] - mx) / sum * R[r * K + j];
  }
  return l;
}
#endif

GRADED_TEST(lab02_masked_softmax_gradient, 2,
            "2.1 masked_softmax is differentiable: d sum(Y * R) / dX, masked entries get 0") {
  float x[B * Q * K], R[B * Q * K];
  fill_x(x);
  for (int i = 0; i < B * Q * K; i++) R[i] = (float)cos(1.3 * i + 0.2);
  Tensor *X = tensor_from(SHAPE(B, Q, K), x);
  X->requires_grad = true;
  Tensor *Y = masked_softmax(X, tensor_from(SHAPE(B, Q), (const float[]){2, 0, 5, 3, 1, 4}));
  EXPECT_NOT_NULL(Y, "masked_softmax");
  if (!EXPECT_SHAPE(Y, "masked_softmax output", B, Q, K)) return;
  ag_backward(t_sum_all(t_mul(Y, tensor_from(SHAPE(B, Q, K), R))));
  EXPECT(X->grad != NULL, "no gradient reached X: build masked_softmax from the ops of "
         "common/ops.h (t_sequence_mask, t_softmax), which record their backward");
  if (!X->grad) return;
#if GRADE_REF
  const int len[B * Q] = {2, 0, 5, 3, 1, 4};
  float want[B * Q * K];
  const double h = 1e-3;
  for (int i = 0; i < B * Q * K; i++) {
    float xp[B * Q * K], xm[B * Q * K];
    memcpy(xp, x, sizeof x), memcpy(xm, x, sizeof x);
    xp[i] += (float)h, xm[i] -= (float)h;
    want[i] = (float)((loss_ref(xp, len, R) - loss_ref(xm, len, R)) /
                      ((double)xp[i] - (double)xm[i]));
  }
#endif
  /* float32 backward vs a double central difference (error O(h^2) ~ 1e-6 on order-1 values) */
  EXPECT_CLOSE(X->grad, want, B * Q * K, 2e-5, 1e-3,
               "gradient of sum(masked_softmax(X, lens) * R) w.r.t. X");
  for (int j = 0; j < K; j++)
    EXPECT(X->grad[K + j] == 0.0f, "row with valid length 0: gradient at key %d is %g, "
           "expected exactly 0", j, (double)X->grad[K + j]);
}

GRADED_TEST(lab02_masked_softmax_large_scores, 1,
            "2.1 no overflow: scores near 1000 still give finite weights summing to 1") {
  static const float x[8] = {1000.0f, 1001.0f, 999.0f, 5000.0f, -1000.0f, -1001.0f, 88.0f, 95.0f};
  Tensor *Y = masked_softmax(tensor_from(SHAPE(1, 2, 4), x),
                             tensor_from(SHAPE(1, 2), (const float[]){3, 2}));
  EXPECT_NOT_NULL(Y, "masked_softmax of large scores");
  if (!EXPECT_SHAPE(Y, "masked_softmax(X (1, 2, 4), [[3, 2]])", 1, 2, 4)) return;
#if GRADE_REF
  /* row 0: softmax(0, 1, -1) after subtracting the max 1001; the 5000 is masked out */
  double e0 = exp(-1.0), s0 = e0 + 1 + exp(-2.0);
  /* row 1: softmax(-1000, -1001) = softmax(1, 0) */
  double s1 = 1 + exp(-1.0);
  const float want[8] = {(float)(e0 / s0), (float)(1 / s0), (float)(exp(-2.0) / s0), 0,
                         (float)(1 / s1), (float)(exp(-1.0) / s1), 0, 0};
#endif
  /* subtract-the-max softmax is exact to a few ulps here */
  EXPECT_CLOSE(Y->data, want, 8, 1e-6, 1e-5,
               "masked_softmax([[1000, 1001, 999, 5000], [-1000, -1001, 88, 95]], [[3, 2]])");
}
