/* Graded tests of exercise 5.1 (positional_encoding_table), labs/lab05/positional_encoding.c.
 * 4 points. */
#include <math.h>
#include <stdlib.h>

#include "../grade.h"
#include "lab05/lab05.h"

/* Compare the student's (L, d) table with the formula in double. Angles stay below L, so a
 * float32 table (like the book's) is within a few ulps of L: tol covers that. */
static void check_table(int L, int d, double tol) {
  float *P = malloc(sizeof(float) * (size_t)L * d);
  for (long i = 0; i < (long)L * d; i++) P[i] = NAN; /* every entry must be written */
  int rc = positional_encoding_table(P, L, d);
  EXPECT_NEAR(rc, 0, 0, "positional_encoding_table's return value (-1 means not implemented)");
  if (rc == 0) {
#if GRADE_REF
    float *want = malloc(sizeof(float) * (size_t)L * d);
    for (int i = 0; i < L; i++)
      for (int c = 0; c < d; c++) {
        double w = pow(10000.0, -(double)(c - c % 2) / d); /* the pair's frequency */
        want[(long)i * d + c] = (float)(c % 2 ? cos(i * w) : sin(i * w));
      }
#else
    (void)tol;
#endif
    char what[96];
    GRADE_MSG(what, "P (%d x %d) at row-major index i*d + c (c even: sine, odd: cosine)", L, d);
    EXPECT_CLOSE(P, want, (long)L * d, tol, 0, what);
#if GRADE_REF
    free(want);
#endif
  }
  free(P);
}

GRADED_TEST(lab05_pe_table, 3,
            "5.1 positional_encoding_table: sin on even, cos on odd columns (d = 32, 100 rows)") {
  check_table(100, 32, 2e-5); /* float32 angles below 100: ulp 8e-6 */
}

GRADED_TEST(lab05_pe_table_odd, 1,
            "5.1 positional_encoding_table with an odd num_hiddens: the last column is a sine") {
  check_table(40, 7, 1e-5); /* float32 angles below 40: ulp 4e-6 */
}
