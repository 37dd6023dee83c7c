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
 *     if (!EXPECT_SHAPE(y, "weights", 2, 2, 4)) return;
 *   #if GRADE_REF
 *     float want[16];
 *     reference(X->data, lens, want);                        // the reference run only
 *   #endif
 *     EXPECT_CLOSE(y->data, want, 16, 1e-5, 1e-4, "weights"); // float32 exp: a few ulps
 *   }
 *
 * Two builds of every test. The reference runner (compiled with -DGRADE_REFERENCE, linked
 * with solutions/) computes the expected values and sends them with its observations; it
 * never holds student code. A student's runner is compiled without it: there the EXPECT
 * macros drop their expected-value, tolerance and message arguments, and the code that
 * computes expected values sits in `#if GRADE_REF` blocks, so the process that runs student
 * code holds no expected value to copy (a stack scan, a printf handler or any other callback
 * finds nothing). A test is therefore written as: inputs (deterministic), the call, the
 * EXPECT of what it returned (sent at once, before any formatting), and expected values
 * computed under `#if GRADE_REF` (after the call, or before: only the reference sees them).
 * Its control flow may depend on the student's outputs (a NULL, a shape) but never on an
 * expected value: EXPECT_CLOSE, EXPECT_NEAR and EXPECT_AGREE return nothing.
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
#include "record.h"

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

/* GRADE_REF: 1 in the reference runner (expected values exist), 0 in a student's. */
#ifdef GRADE_REFERENCE
#define GRADE_REF 1
#else
#define GRADE_REF 0
#endif
/* GRADE_MSG(buf, fmt, ...): a check's message, formatted in the reference run only (the
 * grader shows the reference's text), so a student's run formats nothing between a call and
 * the EXPECTs of its results. */
#if GRADE_REF
#define GRADE_MSG(buf, ...) snprintf((buf), sizeof(buf), __VA_ARGS__)
#else
#define GRADE_MSG(buf, ...) ((void)(buf))
#endif

/* EXPECT(cond, fmt, ...): cond must hold; the message says what went wrong. cond is a fact
 * about the student's outputs (a pointer set, an entry exactly 0): its truth goes out before
 * the message is formatted. */
#define EXPECT(cond, ...) grade_expect_(__FILE__, __LINE__, (cond) ? 1 : 0, __VA_ARGS__)
void grade_expect_(const char *file, int line, int ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The pointer must not be NULL; when it is, the test returns. */
#define EXPECT_NOT_NULL(ptr, what)                                                 \
  do {                                                                             \
    if (!expect_not_null_(__FILE__, __LINE__, (ptr) != NULL, GRADE_WHAT(what))) return; \
  } while (0)
int expect_not_null_(const char *file, int line, int not_null, const char *what);

/* Shape check (the shape is part of the exercise's statement, so both builds know it):
 * EXPECT_SHAPE(t, "output", 2, 4, 100) returns whether it matched. */
#define EXPECT_SHAPE(t, what, ...)                                                 \
  expect_shape_(__FILE__, __LINE__, (t), GRADE_WHAT(what), SHAPE(__VA_ARGS__))
int expect_shape_(const char *file, int line, const Tensor *t, const char *what, int ndim,
                  const int *shape);

#if GRADE_REF
/* The message of a check is the reference's (the grader shows the reference run's text). */
#define GRADE_WHAT(what) (what)

/* got: n floats of the student's; want: the expected ones, within atol + rtol*|want| (a NaN
 * expected matches only a NaN). The first mismatch is reported with its index. */
#define EXPECT_CLOSE(got, want, n, atol, rtol, what)                               \
  expect_close_(__FILE__, __LINE__, (got), (want), (n), (atol), (rtol), (what))
/* One number within tol. */
#define EXPECT_NEAR(got, want, tol, what)                                          \
  expect_near_(__FILE__, __LINE__, (double)(got), (double)(want), (double)(tol), (what))
/* Training-mode attention weights after inverted dropout with p = 0.5: every entry of got
 * must be 0 or 2 * want[i] (1/(1-p) = 2), with some of each. want: weights before dropout. */
#define EXPECT_INVERTED_DROPOUT_HALF(got, want, n)                                  \
  expect_inverted_dropout_half_(__FILE__, __LINE__, (got), (want), (n))
/* Two outputs of the student's that must agree (a cached step and a full pass, eval twice):
 * |a - b| <= atol + rtol*|b| element-wise, judged on the student's own values. */
#define EXPECT_AGREE(a, b, n, atol, rtol, what)                                    \
  expect_agree_(__FILE__, __LINE__, (a), (b), (n), (atol), (rtol), (what))
/* A check of the test's own setup, made in the reference run only (a reference that fails it
 * makes the test "broken", never the student's fault). */
#define REF_CHECK(cond, ...) grade_sanity_(__FILE__, __LINE__, (cond) ? 1 : 0, __VA_ARGS__)
/* The input (n floats, name what) that the next value check's output is computed from, sent by
 * the reference run only: the grader then tells an output that merely equals it. */
#define GRADE_INPUT(x, n, what) grade_input_(__FILE__, __LINE__, (x), (n), (what))
void grade_input_(const char *file, int line, const float *x, long n, const char *what);
void expect_close_(const char *file, int line, const float *got, const float *want, long n,
                   double atol, double rtol, const char *what);
void expect_near_(const char *file, int line, double got, double want, double tol,
                  const char *what);
void expect_inverted_dropout_half_(const char *file, int line, const float *got,
                                   const float *want, long n);
void expect_agree_(const char *file, int line, const float *a, const float *b, long n,
                   double atol, double rtol, const char *what);
void grade_sanity_(const char *file, int line, int ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#else
/* A student's runner: the values go out, nothing else is compiled in. */
#define GRADE_WHAT(what) NULL
#define EXPECT_CLOSE(got, want, n, atol, rtol, what)                               \
  grade_observe_(__FILE__, __LINE__, CHK_CLOSE, (got), NULL, (n))
#define EXPECT_NEAR(got, want, tol, what)                                          \
  grade_observe1_(__FILE__, __LINE__, (double)(got))
#define EXPECT_INVERTED_DROPOUT_HALF(got, want, n)                                  \
  grade_observe_(__FILE__, __LINE__, CHK_DROPOUT, (got), NULL, (n))
#define EXPECT_AGREE(a, b, n, atol, rtol, what)                                    \
  grade_observe_(__FILE__, __LINE__, CHK_AGREE, (a), (b), (n))
#define REF_CHECK(cond, ...) ((void)0)
#define GRADE_INPUT(x, n, what) ((void)0)
#endif
/* The CUDA emulator's memory counters of a kernel (CHK_COUNTERS, record.h): the reference run
 * sends its own as the expected ones, with factor and metrics; tests/grade/kernel_test.h's
 * EXPECT_COUNTERS macros call it. */
void grade_counters_(const char *file, int line, const double *v, int n, double factor,
                     int metrics, const char *what);
/* (the student's side of the macros above; kinds: record.h) */
void grade_observe_(const char *file, int line, int kind, const float *a, const float *b,
                    long n);
void grade_observe1_(const char *file, int line, double got);

#endif
