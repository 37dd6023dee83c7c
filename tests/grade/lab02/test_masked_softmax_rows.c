/* Graded tests of exercise 2.5, masked_softmax_rows and its backward
 * (labs/lab02/masked_softmax_rows.c). 6 points. Shapes are uneven on purpose (1 key, 7, 17, 31,
 * 33: past one warp's 32 lanes, which exercise 2.6's kernel meets again). Every expected value
 * is computed here from the definition, in double, in the reference build only (GRADE_REF,
 * tests/grade/grade.h). */
#include <math.h>
#include <string.h>

#include "../grade.h"
#include "../../sine_fill.h"
#include "lab02/lab02.h"

enum { MAXN = 3 * 5 * 33 };

#if GRADE_REF
/* The definition in double: row r of x (keys long) keeps its first len[r] entries. */
static void reference(const float *x, const int *len, long rows, int keys, float *want) {
  for (long r = 0; r < rows; r++) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < len[r]; j++) mx = fmax(mx, x[r * keys + j]);
    for (int j = 0; j < len[r]; j++) sum += exp((double)x[r * keys + j] - mx);
    for (int j = 0; j < keys; j++)
      want[r * keys + j] = j < len[r] ? (float)(exp((double)x[r * keys + j] - mx) / sum) : 0.0f;
  }
}
#endif

/* Run the student's forward on X (batch, queries, keys) with the given lengths into Y, which
 * starts as NaN (a stub, or a row left unwritten, shows). Sends the status and Y. */
static void run_forward(const char *what, const float *x, const int *lens, int ndim, int batch,
                        int queries, int keys, float *y) {
  const long n = (long)batch * queries * keys;
  for (long i = 0; i < n; i++) y[i] = NAN;
  int rc = masked_softmax_rows(x, lens, ndim, batch, queries, keys, y);
  EXPECT(rc == 0, "%s returned %d, expected 0 (not implemented yet?)", what, rc);
#if GRADE_REF
  int len[MAXN];
  for (int b = 0; b < batch; b++)
    for (int i = 0; i < queries; i++)
      len[b * queries + i] = !lens ? keys : ndim == 1 ? lens[b] : lens[b * queries + i];
  float want[MAXN];
  reference(x, len, (long)batch * queries, keys, want);
#endif
  /* float32 expf and a float sum of at most 33 terms: a few ulps of values <= 1 */
  EXPECT_CLOSE(y, want, n, 1e-6, 1e-5, what);
}

GRADED_TEST(lab02_masked_softmax_rows_no_lens, 1,
            "2.5 masked_softmax_rows(X, NULL): the plain softmax of every row (1 key, 33 keys)") {
  float x[MAXN], y[MAXN];
  x[0] = 0.3f;
  run_forward("masked_softmax_rows(X (1, 1, 1), NULL)", x, NULL, 0, 1, 1, 1, y);
  sine_fill(x, 3 * 5 * 33, 0.7, 0.3, 2.0);
  run_forward("masked_softmax_rows(X (3, 5, 33), NULL)", x, NULL, 0, 3, 5, 33, y);
}

GRADED_TEST(lab02_masked_softmax_rows_1d, 1,
            "2.5 masked_softmax_rows with 1-D valid lengths (one per example), X (3, 4, 7)") {
  float x[MAXN], y[MAXN];
  sine_fill(x, 3 * 4 * 7, 1.1, 0.5, 1.5);
  run_forward("masked_softmax_rows(X (3, 4, 7), valid_lens [7, 3, 1], 1-D)", x,
              (const int[]){7, 3, 1}, 1, 3, 4, 7, y);
}

GRADED_TEST(lab02_masked_softmax_rows_2d, 1,
            "2.5 masked_softmax_rows with 2-D valid lengths (one per query), X (2, 5, 17)") {
  float x[MAXN], y[MAXN];
  sine_fill(x, 2 * 5 * 17, 0.9, 0.1, 1.5);
  run_forward("masked_softmax_rows(X (2, 5, 17), valid_lens [[17, 1, 16, 9, 2], [5, 17, 3, "
              "11, 1]], 2-D)",
              x, (const int[]){17, 1, 16, 9, 2, 5, 17, 3, 11, 1}, 2, 2, 5, 17, y);
}

GRADED_TEST(lab02_masked_softmax_rows_zero_and_large, 1,
            "2.5 length-0 rows are exactly zero; scores near 1000 do not overflow") {
  float x[MAXN], y[MAXN];
  sine_fill(x, 2 * 3 * 5, 0.7, 0.3, 1.5);
  run_forward("masked_softmax_rows(X (2, 3, 5), valid_lens [[2, 0, 5], [0, 1, 3]], 2-D)", x,
              (const int[]){2, 0, 5, 0, 1, 3}, 2, 2, 3, 5, y);
  for (int j = 0; j < 5; j++)
    EXPECT(y[5 + j] == 0.0f && y[15 + j] == 0.0f,
           "valid length 0: rows (0, 1) and (1, 0) must be exactly zero (not uniform, not NaN); "
           "got %g and %g at key %d", (double)y[5 + j], (double)y[15 + j], j);
  static const float big[8] = {1000.0f, 1001.0f, 999.0f, 5000.0f,
                               -1000.0f, -1001.0f, 88.0f, 95.0f};
  run_forward("masked_softmax_rows([[1000, 1001, 999, 5000], [-1000, -1001, 88, 95]], "
              "[[3, 2]], 2-D) (subtract the row max before expf)",
              big, (const int[]){3, 2}, 2, 1, 2, 4, y);
}

#if GRADE_REF
/* sum_j softmax(x_r[0..len))_j * g_j over every row, in double: the loss whose gradient the
 * backward computes (masked keys are not in it, so their derivative is 0). */
static double loss_ref(const double *x, const float *g, const int *len, int rows, int keys) {
  double l = 0;
  for (int r = 0; r < rows; r++) {
    double mx = -INFINITY, s = 0;
    for (int j = 0; j < len[r]; j++) mx = fmax(mx, x[r * keys + j]);
    for (int j = 0; j < len[r]; j++) s += exp(x[r * keys + j] - mx);
    for (int j = 0; j < len[r]; j++) l += exp(x[r * keys + j] - mx) / s * g[r * keys + j];
  }
  return l;
}
#endif

GRADED_TEST(lab02_masked_softmax_rows_backward, 2,
            "2.5 masked_softmax_rows_backward: dX from Y and dY, against finite differences, "
            "masked keys get 0 (X (2, 3, 31))") {
  enum { B = 2, Q = 3, K = 31, N = B * Q * K };
  static const int len[B * Q] = {31, 0, 1, 17, 30, 5};
  /* Y: a masked softmax output given as data, Y_j = w_j / sum w over the valid keys, which is
   * softmax(log w): the reference differentiates at X = log w */
  float w[N], y[N], g[N], dx[N];
  sine_fill(w, N, 0.37, 0.2, 1.0);
  sine_fill(g, N, 1.3, 0.2, 1.0);
  for (int r = 0; r < B * Q; r++) {
    float s = 0;
    for (int j = 0; j < len[r]; j++) s += w[r * K + j] = expf(w[r * K + j]);
    for (int j = 0; j < K; j++) y[r * K + j] = j < len[r] ? w[r * K + j] / s : 0.0f;
  }
  for (int i = 0; i < N; i++) dx[i] = NAN;
  int rc = masked_softmax_rows_backward(y, g, B, Q, K, dx);
  EXPECT(rc == 0, "masked_softmax_rows_backward returned %d, expected 0", rc);
#if GRADE_REF
  static double x[N];
  for (int i = 0; i < N; i++) x[i] = log((double)w[i]);
  float want[N];
  const double h = 1e-5; /* central difference in double: error ~h^2, far below float's */
  for (int i = 0; i < N; i++) {
    double xi = x[i];
    x[i] = xi + h;
    double lp = loss_ref(x, g, len, B * Q, K);
    x[i] = xi - h;
    double lm = loss_ref(x, g, len, B * Q, K);
    x[i] = xi;
    want[i] = (float)((lp - lm) / (2 * h));
  }
#endif
  /* float Y (rounded from w / s) and a float dot over 31 terms, against a double derivative */
  EXPECT_CLOSE(dx, want, N, 2e-6, 1e-4,
               "masked_softmax_rows_backward(Y, dY (2, 3, 31)) with valid lengths "
               "[[31, 0, 1], [17, 30, 5]]");
  for (int j = 0; j < K; j++)
    EXPECT(dx[K + j] == 0.0f, "row with valid length 0: dX at key %d is %g, expected exactly 0",
           j, (double)dx[K + j]);
}
