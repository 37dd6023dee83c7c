/* test.h — the unit-test runner's macros. A test file defines TEST(name) { ... } blocks; they
 * register themselves and tests/unit/main.c runs them all (or those whose name contains argv[1]).
 * CHECK* record a failure with file:line and carry on; a test passes when nothing failed. */
#ifndef AL_TEST_H
#define AL_TEST_H

#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "../common/tensor.h"

typedef void (*TestFn)(void);
void test_register(const char *name, TestFn fn, const char *file);
void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int test_failures(void); /* failures recorded in the current test so far */
/* The current test cannot run here (a stub build, no gnuplot, no data): say why and return.
 * It prints "skip NAME: why" and counts as skipped, never as passed (a failure recorded in the
 * same test still fails it). */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define TEST(name)                                                                 \
  static void name(void);                                                          \
  __attribute__((constructor)) static void reg_##name(void) {                     \
    test_register(#name, name, __FILE__);                                          \
  }                                                                                \
  static void name(void)

#define CHECK(cond)                                                                \
  do {                                                                             \
    if (!(cond)) test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                      \
  do {                                                                             \
    double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);                 \
    if (!(fabs(a_ - b_) <= t_))                                                    \
      test_fail(__FILE__, __LINE__, "%s = %.8g, %s = %.8g, |diff| %.3g > %.3g", #a, a_, #b, b_, \
                fabs(a_ - b_), t_);                                                \
  } while (0)

#define CHECK_INT(a, b)                                                            \
  do {                                                                             \
    long a_ = (long)(a), b_ = (long)(b);                                           \
    if (a_ != b_) test_fail(__FILE__, __LINE__, "%s = %ld, expected %ld", #a, a_, b_); \
  } while (0)

#define CHECK_STR_CONTAINS(s, sub)                                                 \
  do {                                                                             \
    const char *s_ = (s);                                                          \
    if (!s_ || !strstr(s_, (sub)))                                                 \
      test_fail(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"", s_ ? s_ : "(null)", (sub)); \
  } while (0)

/* CHECK_ERROR(expr, "substring"): expr must raise tensor_error whose message has substring. */
#define CHECK_ERROR(expr, sub)                                                     \
  do {                                                                             \
    jmp_buf env_;                                                                  \
    if (setjmp(env_) == 0) {                                                       \
      tensor_catch_errors(&env_);                                                  \
      (void)(expr);                                                                \
      tensor_catch_errors(NULL);                                                   \
      test_fail(__FILE__, __LINE__, "%s raised no error", #expr);                  \
    } else {                                                                       \
      CHECK_STR_CONTAINS(tensor_last_error(), sub);                                \
    }                                                                              \
  } while (0)

/* Elementwise comparison of n floats with an absolute + relative tolerance. */
void check_close_(const char *file, int line, const char *what, const float *got,
                  const float *want, long n, double atol, double rtol);
#define CHECK_CLOSE(got, want, n, atol, rtol) \
  check_close_(__FILE__, __LINE__, #got, (got), (want), (n), (atol), (rtol))

/* ---------- finite-difference gradient check ---------- */
/* f builds an output from inputs[0..n) (all with requires_grad set by gradcheck). gradcheck
 * forms loss = sum(f(inputs) * R) with fixed random weights R, runs backward, and compares each
 * input's gradient with Richardson-extrapolated central differences (steps eps and eps/2, loss
 * in double; tests/gradcheck.c). The error of an input is its largest gradient difference over
 * its largest gradient entry; returns the worst and records a test failure above tol.
 * gradcheck_seed picks other weights R (the runner passes $AL_TEST_SEED). */
typedef Tensor *(*GradFn)(Tensor **inputs, void *ctx);
double gradcheck(const char *what, GradFn f, Tensor **inputs, int n, void *ctx, double eps,
                 double tol);
void gradcheck_seed(unsigned long seed);
/* The same measurement without recording a failure: the worst error over the inputs. */
double gradcheck_error(GradFn f, Tensor **inputs, int n, void *ctx, double eps);
/* 3e-3: a backward off by 1% (a factor 1.01) reads 1e-2 and fails (test_gradcheck.c); the
 * float32 rounding of the forward passes reads at most 1.4e-3 over 20 seeds of R (AL_TEST_SEED=1..20). */
#define GRADCHECK_TOL 3e-3
#define GRADCHECK(f, inputs, n, ctx) gradcheck(#f, (f), (inputs), (n), (ctx), 1e-2, GRADCHECK_TOL)

#endif
