/* Graded tests of exercise 6.7 (layer_norm_cuda, layer_norm_grad_cuda),
 * labs/lab06/layer_norm_kernel.cu: the student's launchers, called directly on the emulated
 * device with its sanitizers on (a missing barrier in a reduction is a race: 0 for that test)
 * and grids capped at 2 blocks (the loops over rows and column blocks must loop). Expected
 * values: layer norm and its gradients by their formulas, in double. 6 points. */
#include <math.h>
#include <stdlib.h>

#include "../grade.h"
#include "../../sine_fill.h"
#include "../kernel_test.h"
#include "lab06/lab06_kernels.h"

static const float EPS = 1e-5f;

typedef struct {
  long rows;
  int D;
  float *x, *gamma, *beta, *g; /* host: (rows, D), (D), (D), (rows, D) */
} Case;

/* x with a row mean of a few units (plus `offset`) and a spread of ~2, so mean and rstd both
 * matter. */
static Case make_case_(long rows, int D, float offset) {
  Case c = {rows, D, NULL, NULL, NULL, NULL};
  const long n = rows * D;
  c.x = malloc(sizeof(float) * (size_t)n), c.g = malloc(sizeof(float) * (size_t)n);
  c.gamma = malloc(sizeof(float) * (size_t)D), c.beta = malloc(sizeof(float) * (size_t)D);
  sine_fill(c.x, n, 0.61, 0.3, 2);
  for (long i = 0; i < n; i++) c.x[i] += (float)(i / D % 5) - 1.5f + offset;
  sine_fill(c.g, n, 0.43, 0.7, 1);
  sine_fill(c.gamma, D, 0.9, 1.1, 0.5);
  for (int j = 0; j < D; j++) c.gamma[j] += 1.0f;
  sine_fill(c.beta, D, 0.7, 0.2, 0.3);
  return c;
}
static Case make_case(long rows, int D) { return make_case_(rows, D, 0.0f); }
static void free_case(Case *c) { free(c->x), free(c->g), free(c->gamma), free(c->beta); }

#if GRADE_REF
/* mean, rstd of row r in double */
static void row_stats(const Case *c, long r, double *mean, double *rstd) {
  const float *xr = c->x + r * c->D;
  double s = 0, q = 0;
  for (int j = 0; j < c->D; j++) s += xr[j];
  *mean = s / c->D;
  for (int j = 0; j < c->D; j++) q += (xr[j] - *mean) * (xr[j] - *mean);
  *rstd = 1 / sqrt(q / c->D + EPS);
}
#endif

/* The forward at one case (rows of mean offset + a few units), with gamma and beta or without
 * (NULL: 1 and 0), y within tol (absolute, and 1e-4 relative); with `counters`, the launch's
 * memory counters go into the grade output beside the reference's. */
static void check_forward_(long rows, int D, bool affine, bool counters, float offset,
                           double tol) {
  Case c = make_case_(rows, D, offset);
  const long n = rows * D;
  kt_grid_cap(2);
  float *dx = kt_upload(c.x, n), *dg = kt_upload(c.gamma, D), *db = kt_upload(c.beta, D);
  float *dy = kt_alloc(n), *dst = kt_alloc(2 * rows); /* fresh: NaN, unwritten */
  if (counters) kt_profile_begin();
  int rc = KT_LAUNCHER(
      layer_norm_cuda(dx, affine ? dg : NULL, affine ? db : NULL, dy, dst, rows, D, EPS),
      "layer_norm_cuda");
  KtCounters cnt = {0};
  if (counters) cnt = kt_profile_end();
  EXPECT_NEAR(rc, 0, 0, "layer_norm_cuda's return value (-1 means not implemented)");
  float *y = malloc(sizeof(float) * (size_t)n), *st = malloc(sizeof(float) * 2 * (size_t)rows);
  if (rc == 0) kt_download(y, dy, n), kt_download(st, dst, 2 * rows);
  kt_free(dx), kt_free(dg), kt_free(db), kt_free(dy), kt_free(dst);
  if (rc == 0) {
#if GRADE_REF
    float *want = malloc(sizeof(float) * (size_t)n), *wst = malloc(sizeof(float) * 2 * rows);
    for (long r = 0; r < rows; r++) {
      double mean, rstd;
      row_stats(&c, r, &mean, &rstd);
      wst[2 * r] = (float)mean, wst[2 * r + 1] = (float)rstd;
      for (int j = 0; j < D; j++) {
        double xh = (c.x[r * D + j] - mean) * rstd;
        want[r * D + j] = (float)(affine ? xh * c.gamma[j] + c.beta[j] : xh);
      }
    }
#endif
    char what[2][160];
    GRADE_MSG(what[0], "y (%ld, %d)%s", rows, D, affine ? " with gamma and beta" : ", gamma and beta NULL");
    GRADE_MSG(what[1], "stats (%ld, 2): each row's mean, rstd", rows);
    EXPECT_CLOSE(y, want, n, tol, 1e-4, what[0]);
    EXPECT_CLOSE(st, wst, 2 * rows, 2e-6, 1e-5, what[1]);
#if GRADE_REF
    free(want), free(wst);
#endif
    if (counters) EXPECT_COUNTERS(cnt, "layer_norm_cuda (the grid capped at 2 blocks)");
  }
  free(y), free(st), free_case(&c);
}

/* float32 sums of D terms against double: a few ulps of values of order 1-3, rstd ~1 */
static void check_forward(long rows, int D, bool affine, bool counters) {
  check_forward_(rows, D, affine, counters, 0.0f, 2e-5);
}

/* The backward at one case: stats from the formula (the forward is another test), dx stored
 * (fresh) or added to dx0, dgamma and dbeta added to their old values; which of dx, dgamma,
 * dbeta are wanted: bits 1, 2, 4 of `want_mask`. */
static void check_backward(long rows, int D, bool affine, bool fresh, int want_mask,
                           bool counters) {
  Case c = make_case(rows, D);
  const long n = rows * D;
  float *st = malloc(sizeof(float) * 2 * (size_t)rows), *dx0 = malloc(sizeof(float) * (size_t)n);
  float old_dg[1024], old_db[1024];
  for (long r = 0; r < rows; r++) { /* the forward's stats, float32 as a kernel keeps them */
    const float *xr = c.x + r * D;
    double s = 0, q = 0;
    for (int j = 0; j < D; j++) s += xr[j];
    const double mean = s / D;
    for (int j = 0; j < D; j++) q += (xr[j] - mean) * (xr[j] - mean);
    st[2 * r] = (float)mean, st[2 * r + 1] = (float)(1 / sqrt(q / D + EPS));
  }
  sine_fill(dx0, n, 0.29, 0.5, 1);
  sine_fill(old_dg, D, 0.31, 0.9, 1), sine_fill(old_db, D, 0.23, 0.4, 1);
  kt_grid_cap(2);
  float *d_x = kt_upload(c.x, n), *d_gm = kt_upload(c.gamma, D), *d_st = kt_upload(st, 2 * rows);
  float *d_g = kt_upload(c.g, n);
  float *d_dx = (want_mask & 1) ? (fresh ? kt_alloc(n) : kt_upload(dx0, n)) : NULL;
  float *d_dg = (want_mask & 2) ? kt_upload(old_dg, D) : NULL;
  float *d_db = (want_mask & 4) ? kt_upload(old_db, D) : NULL;
  if (counters) kt_profile_begin();
  int rc = KT_LAUNCHER(layer_norm_grad_cuda(d_x, affine ? d_gm : NULL, d_st, d_g, d_dx, d_dg,
                                            d_db, rows, D, fresh),
                       "layer_norm_grad_cuda");
  KtCounters cnt = {0};
  if (counters) cnt = kt_profile_end();
  EXPECT_NEAR(rc, 0, 0, "layer_norm_grad_cuda's return value (-1 means not implemented)");
  float *dx = malloc(sizeof(float) * (size_t)n), dg[1024], db[1024];
  if (rc == 0) {
    if (d_dx) kt_download(dx, d_dx, n);
    if (d_dg) kt_download(dg, d_dg, D);
    if (d_db) kt_download(db, d_db, D);
  }
  kt_free(d_x), kt_free(d_gm), kt_free(d_st), kt_free(d_g);
  if (d_dx) kt_free(d_dx);
  if (d_dg) kt_free(d_dg);
  if (d_db) kt_free(d_db);
  if (rc == 0) {
#if GRADE_REF
    float *wdx = malloc(sizeof(float) * (size_t)n), wdg[1024], wdb[1024];
    double *sg = calloc((size_t)D, sizeof(double)), *sb = calloc((size_t)D, sizeof(double));
    for (long r = 0; r < rows; r++) {
      const double mean = st[2 * r], rstd = st[2 * r + 1];
      double a = 0, b = 0;
      for (int j = 0; j < D; j++) {
        const double xh = (c.x[r * D + j] - mean) * rstd, gv = c.g[r * D + j];
        const double dxh = gv * (affine ? c.gamma[j] : 1.0);
        a += dxh, b += dxh * xh;
        sg[j] += gv * xh, sb[j] += gv;
      }
      a /= D, b /= D;
      for (int j = 0; j < D; j++) {
        const double xh = (c.x[r * D + j] - mean) * rstd;
        const double dxh = c.g[r * D + j] * (affine ? c.gamma[j] : 1.0);
        const double v = rstd * (dxh - a - xh * b);
        wdx[r * D + j] = (float)(fresh ? v : dx0[r * D + j] + v);
      }
    }
    for (int j = 0; j < D; j++) wdg[j] = (float)(old_dg[j] + sg[j]), wdb[j] = (float)(old_db[j] + sb[j]);
    free(sg), free(sb);
#endif
    char what[3][160];
    GRADE_MSG(what[0], "dx (%ld, %d)%s%s", rows, D, fresh ? " (fresh: stored)" : " (added to dx)",
              affine ? "" : ", gamma NULL");
    GRADE_MSG(what[1], "dgamma (%d) += the column sums of g * xhat over %ld rows", D, rows);
    GRADE_MSG(what[2], "dbeta (%d) += the column sums of g over %ld rows", D, rows);
    /* float32 sums: dx of D terms (a few ulps of order-1 values); the column sums of `rows`
     * terms of order 1 (rounding grows like sqrt(rows) ulps of the sum) */
    const double col_tol = 1e-5 * (1 + sqrt((double)rows));
    if (want_mask & 1) EXPECT_CLOSE(dx, wdx, n, 2e-5, 1e-4, what[0]);
    if (want_mask & 2) EXPECT_CLOSE(dg, wdg, D, col_tol, 1e-4, what[1]);
    if (want_mask & 4) EXPECT_CLOSE(db, wdb, D, col_tol, 1e-4, what[2]);
    if (counters) EXPECT_COUNTERS(cnt, "layer_norm_grad_cuda (the grid capped at 2 blocks)");
#if GRADE_REF
    free(wdx);
#else
    (void)col_tol;
#endif
  }
  free(dx), free(st), free(dx0), free_case(&c);
}

GRADED_TEST(lab06_layer_norm_kernel, 2,
            "6.7 layer_norm_cuda at lab 06's shape (64 x 10 rows of 32), with and without "
            "gamma and beta, on the emulated device (racecheck: a missing barrier is a race)") {
  check_forward(640, 32, true, true);
  check_forward(640, 32, false, false);
}

GRADED_TEST(lab06_layer_norm_kernel_uneven, 1,
            "6.7 layer_norm_cuda at uneven shapes: D = 1, 7, 31, 33, 257 (past one block of "
            "256), 1000, 1100 (past 1024, rows of mean 1000); rows 1, 3, 37, 300 with the grid "
            "capped at 2 blocks") {
  check_forward(1, 1, true, false);
  check_forward(3, 7, false, false);
  check_forward(37, 31, true, false);
  check_forward(300, 33, true, false);
  check_forward(5, 257, true, false);
  check_forward(3, 1000, false, false);
  /* D past 1024 (a block of D threads, or the power of two above, is not a launch a GPU
   * takes), rows of mean ~1000: E[x^2] - mean^2 in float32 loses the variance (~2) in the
   * ulps of 1e6; the two passes keep y within the mean's own rounding (ulp(1000) = 6e-5) */
  check_forward_(7, 1100, true, false, 1000.0f, 1e-3);
}

GRADED_TEST(lab06_layer_norm_grad_kernel, 2,
            "6.7 layer_norm_grad_cuda at lab 06's shape: dx (stored, then added) and the column "
            "sums dgamma, dbeta (added to what they held)") {
  check_backward(640, 32, true, true, 7, true);
  check_backward(640, 32, true, false, 7, false);
}

GRADED_TEST(lab06_layer_norm_grad_kernel_uneven, 1,
            "6.7 layer_norm_grad_cuda at uneven shapes (D = 1, 7, 33, 257, 1000; rows 1 to 300), "
            "gamma NULL, and dx, dgamma or dbeta not wanted (NULL)") {
  check_backward(1, 1, true, true, 7, false);
  check_backward(3, 7, false, true, 7, false);
  check_backward(300, 33, true, false, 1, false); /* dx only */
  check_backward(37, 257, true, true, 6, false);  /* dgamma and dbeta only */
  check_backward(5, 1000, false, false, 4, false);
  check_backward(70, 40, true, true, 2, false);
}
