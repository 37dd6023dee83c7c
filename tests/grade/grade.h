/* grade.h — how a graded test is written. A graded test runs in its own process (a test
 * runner that holds the student's code, confined by the kernel, with time and memory limits).
 * Each EXPECT sends what it observed (the values, not a verdict) to the grader, which holds
 * no student code and compares them with the values of a trusted reference run of the same
 * test (tests/grade/record.h). So student code that prints "PASS", exits early, crashes or
 * forges records cannot earn points: only the right numbers do.
 *
 *   #include "../grade.h"
 *   GRADED_TEST(lab02_masked_softmax_1d, 3, "2.1 masked_softmax with 1-D valid lengths") {
 *     Tensor *y = masked_softmax(X, vl);
 *     EXPECT_NOT_NULL(y, "masked_softmax returned NULL");   // fails and returns
 *     EXPECT_CLOSE(y->data, want, 16, 1e-5, 1e-4, "weights");
 *   }
 *
 * A test passes when the student's run makes the same checks as the reference run, each
 * within the reference's tolerance of the reference's expected values. Every test must
 * observe some values of the student's (EXPECT_CLOSE, EXPECT_NEAR or
 * EXPECT_INVERTED_DROPOUT_HALF): a test made only of EXPECT(cond) could be passed by a
 * forged "true", and the grader refuses such a test. The test's name must start with its
 * lab ("lab02_") — that is how make grade LAB=02 picks tests and how subtotals are formed.
 * Files: the .c files in tests/grade/labNN/ (handed out) and tests/hidden/labNN/ (instructor
 * only). A test runs in an empty directory it cannot write, with no environment beyond
 * OMP_NUM_THREADS=1; it must not need any file (none is there to read). */
#ifndef AL_GRADE_H
#define AL_GRADE_H

#include <math.h>
#include <stdio.h>

#include <stdbool.h>

#include "../../common/ops.h"

typedef void (*GradedFn)(void);
void graded_register(const char *name, int points, const char *desc, GradedFn fn,
                     const char *file);
/* Record a failure (message is what the student sees: expected vs got). */
void grade_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Optional, at file scope after a slow test: its own wall-time limit in seconds (default 10,
 * or the grader's --timeout). */
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

/* EXPECT(cond, fmt, ...): cond must hold; the message says what went wrong. */
#define EXPECT(cond, ...) grade_expect_(__FILE__, __LINE__, (cond) ? 1 : 0, __VA_ARGS__)
void grade_expect_(const char *file, int line, int ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define EXPECT_NOT_NULL(ptr, what)                                                 \
  do {                                                                             \
    if (!expect_not_null_(__FILE__, __LINE__, (ptr) != NULL, (what))) return;      \
  } while (0)
int expect_not_null_(const char *file, int line, int not_null, const char *what);

#define EXPECT_NEAR(got, want, tol, what)                                          \
  expect_near_(__FILE__, __LINE__, (double)(got), (double)(want), (double)(tol), (what))
int expect_near_(const char *file, int line, double got, double want, double tol,
                 const char *what);

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
