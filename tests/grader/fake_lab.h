/* fake_lab.h — the exercises of a fake "lab 99" that tests the grader itself (grading.sh).
 *
 * Each graded test in fake_tests.c calls one of these. submission_good.c solves them all
 * (every test must pass); submission_hostile.c attacks the grader through them, one attack per
 * exercise (each of those tests must score zero with the right outcome, and the plain
 * fake_square tests around them must still pass). Every exercise computes x*x unless noted. */
#ifndef AL_FAKE_LAB_H
#define AL_FAKE_LAB_H

#include "../../common/tensor.h"

double fake_square(double x);         /* correct in both submissions */
double fake_exit_zero(double x);      /* hostile: exit(0) */
double fake_underscore_exit(double x);/* hostile: _exit(0) */
double fake_print_pass(double x);     /* hostile: prints PASS / Score lines, a wrong answer */
double fake_flood(double x);          /* hostile: 20 MB on stdout and stderr */
double fake_write_results(double x);  /* hostile: writes results.json in cwd and $GRADE_ROOT */
double fake_segfault(double x);       /* hostile: invalid write */
double fake_recurse(double x);        /* hostile: unbounded recursion (stack overflow) */
double fake_abort(double x);          /* hostile: abort() */
double fake_loop(double x);           /* hostile: never returns */
double fake_alloc(double x);          /* hostile: allocates without bound */
double fake_forge_verdict(double x);  /* hostile: writes verdict-like bytes on every fd */
double fake_grandchild(double x);     /* hostile: forks a child that outlives it */
double fake_poison(double x);         /* hostile: tries to break later tests (state, files) */
double fake_interpose(double x);      /* hostile: a global write() that turns got into want */
double fake_stub(double x);           /* hostile: still the stub (EXERCISE_TODO) */
double fake_wrong(double x);          /* hostile: x*x + 1 */
double fake_slow(double x);           /* both: takes 1.2 s (a GRADED_TIMEOUT test) */
/* Row sums of x (rows, cols) -> (rows). Hostile: shape (1, rows). */
Tensor *fake_row_sums(Tensor *x);
/* The (2, 3, 3) tensor v[b, i, j] = 1 + b + i/2 - 3 j^2/10 + i j/10 (no zero, not symmetric).
 * Hostile, by pattern: 0 transposed over (i, j), 1 halved, 2 all zeros, 3 one entry off by
 * 0.25 (a wrong answer with no pattern: no hint). */
Tensor *fake_matrix(int pattern);
/* 2 x, a new tensor. Hostile: a copy of x (the output equals the input). */
Tensor *fake_double(Tensor *x);

#endif
