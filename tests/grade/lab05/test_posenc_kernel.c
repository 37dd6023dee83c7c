/* Graded tests of exercise 5.2 (positional_encoding_cuda), labs/lab05/posenc_kernel.cu: the
 * student's launcher, called directly on the emulated device with its sanitizers on and grids
 * capped at 2 blocks (the grid-stride loop must loop). Expected values: exercise 5.1's formula
 * in double (the reference run only); the memory counters of the student's kernel are shown
 * beside the reference kernel's, and one test needs its stores coalesced. 4 points. */
#include <math.h>
#include <stdlib.h>

#include "../grade.h"
#include "../kernel_test.h"
#include "lab05/lab05_kernels.h"

/* Rows [first, first + rows) of the (., d) table, from the student's kernel, against the formula.
 * Angles stay below first + rows: a float32 angle is within a few ulps of that (tol). */
static void check_rows_(int first, int rows, int d, double tol, double store_factor) {
  const long n = (long)rows * d;
  kt_grid_cap(2);
  float *P = kt_alloc(n); /* (rows, d), NaN and unwritten: every element must be written */
  kt_profile_begin();
  int rc = KT_LAUNCHER(positional_encoding_cuda(P, first, rows, d), "positional_encoding_cuda");
  KtCounters counters = kt_profile_end();
  EXPECT_NEAR(rc, 0, 0, "positional_encoding_cuda's return value (-1 means not implemented)");
  if (rc != 0) {
    kt_free(P);
    return;
  }
  float *got = malloc(sizeof(float) * (size_t)n);
  kt_download(got, P, n);
  kt_free(P);
#if GRADE_REF
  float *want = malloc(sizeof(float) * (size_t)n);
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < d; c++) {
      double w = pow(10000.0, -(double)(c - c % 2) / d); /* the pair's frequency */
      double x = (double)(first + r) * w;
      want[(long)r * d + c] = (float)(c % 2 ? cos(x) : sin(x));
    }
#else
  (void)tol;
#endif
  char what[128];
  /* P's shape (the statement's, not the student's): a wrong entry is then named P[r, c] */
  Tensor shape = {.ndim = 2, .shape = {rows, d}, .size = n};
  EXPECT_SHAPE(&shape, "P", rows, d);
  GRADE_MSG(what, "P: rows %d..%d of the (., %d) table (r, c: row first_row + r, column c)",
            first, first + rows - 1, d);
  EXPECT_CLOSE(got, want, n, tol, 0, what);
  GRADE_MSG(what, "P (%d x %d)", rows, d);
  if (store_factor > 0) /* coalesced stores: one 128-byte request (4 sectors) per warp */
    EXPECT_COUNTERS_WITHIN(counters, CNT_ST_SECTORS, store_factor, what);
  else
    EXPECT_COUNTERS(counters, what); /* information */
#if GRADE_REF
  free(want);
#endif
  free(got);
}

static void check_rows(int first, int rows, int d, double tol) {
  check_rows_(first, rows, d, tol, 0);
}

GRADED_TEST(lab05_pe_kernel, 1,
            "5.2 positional_encoding_cuda: the lab's table (100 rows, d = 32) on the emulated "
            "device") {
  check_rows(0, 100, 32, 2e-5); /* float32 angles below 100: ulp 8e-6 */
}

GRADED_TEST(lab05_pe_kernel_uneven, 1,
            "5.2 positional_encoding_cuda at uneven sizes (1 element; d = 1, 31, 33, 7; a "
            "prime count) and rows past the first") {
  check_rows(0, 1, 1, 1e-6);   /* sin(0): exact */
  check_rows(3, 5, 31, 1e-5);  /* angles below 8 */
  check_rows(9, 31, 33, 1e-5); /* 1023 elements: a partial last block */
  check_rows(40, 17, 7, 1e-5); /* 119 elements (7 * 17), angles below 57: ulp 4e-6 */
}

GRADED_TEST(lab05_pe_kernel_large, 1,
            "5.2 positional_encoding_cuda past one block's reach: 1000 rows of d = 33 with the "
            "grid capped at 2 blocks (the grid-stride loop loops)") {
  check_rows(0, 1000, 33, 3e-4); /* float32 angles below 1000: ulp 6e-5, a few of them */
}

GRADED_TEST(lab05_pe_kernel_coalesced, 1,
            "5.2 positional_encoding_cuda writes coalesced: the right table, with at most 1.5 "
            "times the reference kernel's store sectors (consecutive threads, consecutive "
            "floats)") {
  /* a thread per element in row-major order stores 4 sectors a warp; a column-major walk
   * (stride d floats) stores up to 32: 1.5 leaves room for other grids, not for that */
  check_rows_(0, 1000, 33, 3e-4, 1.5);
}
