/* grade.h — how a graded test is written. Each graded test runs in its own child process
 * (time and memory limits); its verdict goes to the grader over a private channel, never via
 * stdout/stderr, so student code that prints "PASS", exits early or crashes cannot fake it.
 *
 *   #include "../grade.h"
 *   GRADED_TEST(lab02_masked_softmax_1d, 3, "2.1 masked_softmax with 1-D valid lengths") {
 *     Tensor *y = masked_softmax(X, vl);
 *     EXPECT_NOT_NULL(y, "masked_softmax returned NULL");   // fails and returns
 *     EXPECT_CLOSE(y->data, want, 16, 1e-5, 1e-4, "weights");
 *   }
 *
 * A test passes when it returns with no failed EXPECT. The test's name must start with its lab
 * ("lab02_") — that is how make grade LAB=02 picks tests and how subtotals are formed.
 * Files: the .c files in tests/grade/labNN/ (handed out) and tests/hidden/labNN/ (instructor
 * only). */
#ifndef AL_GRADE_H
#define AL_GRADE_H

#include <math.h>
#include <stdio.h>

#include "../../common/ops.h"

typedef void (*GradedFn)(void);
void graded_register(const char *name, int points, const char *desc, GradedFn fn,
                     const char *file);
/* Record a failure (message is what the student sees: expected vs got). */
void grade_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Optional, at file scope after a slow test: its own wall-time limit in seconds (default 10,
 * or the grader's --timeout). A test runs in a scratch directory; $GRADE_ROOT names the
 * directory the grader was started in (the repository root under make grade). */
void graded_set_timeout(const char *name, double seconds);
#define GRADED_TIMEOUT(name, seconds)                                              \
  __attribute__((constructor)) static void gto_##name(void) {                     \
    graded_set_timeout(#name, (seconds));                                          \
  }

#define GRADED_TEST(name, points, desc)                                            \
  static void name(void);                                                          \
  __attribute__((constructor)) static void greg_##name(void) {                    \
    graded_register(#name, (points), (desc), name, __FILE__);                      \
  }                                                                                \
  static void name(void)

#define EXPECT(cond, ...)                                                          \
  do {                                                                             \
    if (!(cond)) grade_fail(__FILE__, __LINE__, __VA_ARGS__);                      \
  } while (0)

#define EXPECT_NOT_NULL(ptr, what)                                                 \
  do {                                                                             \
    if (!(ptr)) {                                                                  \
      grade_fail(__FILE__, __LINE__, "%s: got NULL (not implemented yet?)", (what)); \
      return;                                                                      \
    }                                                                              \
  } while (0)

#define EXPECT_NEAR(got, want, tol, what)                                          \
  do {                                                                             \
    double g_ = (double)(got), w_ = (double)(want);                                \
    if (!(fabs(g_ - w_) <= (double)(tol)))                                         \
      grade_fail(__FILE__, __LINE__, "%s: expected %.6g, got %.6g (tolerance %.1g)", (what), \
                 w_, g_, (double)(tol));                                           \
  } while (0)

/* Shape check: EXPECT_SHAPE(t, "output", 2, 4, 100) */
#define EXPECT_SHAPE(t, what, ...)                                                 \
  expect_shape_(__FILE__, __LINE__, (t), (what), SHAPE(__VA_ARGS__))
int expect_shape_(const char *file, int line, const Tensor *t, const char *what, int ndim,
                  const int *shape);

/* n floats within atol + rtol*|want|; reports the first mismatch with its index. */
#define EXPECT_CLOSE(got, want, n, atol, rtol, what)                               \
  expect_close_(__FILE__, __LINE__, (got), (want), (n), (atol), (rtol), (what))
int expect_close_(const char *file, int line, const float *got, const float *want, long n,
                  double atol, double rtol, const char *what);

/* Training-mode attention weights after inverted dropout with p = 0.5: every entry of got must
 * be 0 or 2 * want[i] (1/(1-p) = 2), with some of each (dropout applied, not everything
 * dropped). want holds the weights before dropout. */
#define EXPECT_INVERTED_DROPOUT_HALF(got, want, n)                                  \
  expect_inverted_dropout_half_(__FILE__, __LINE__, (got), (want), (n))
int expect_inverted_dropout_half_(const char *file, int line, const float *got,
                                  const float *want, long n);

#endif
