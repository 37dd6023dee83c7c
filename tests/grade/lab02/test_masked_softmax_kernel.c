/* Graded tests of exercise 2.6 (masked_softmax_cuda, masked_softmax_cuda_backward),
 * labs/lab02/masked_softmax_kernel.cu: the student's launchers, called directly on the emulated
 * device with its sanitizers on and grids capped at 2 blocks (16 rows a trip: the row loop must
 * loop). Expected values: the definition in double (the CPU op's: common/cpu/cpu_softmax.c),
 * in the reference run only. 8 points. */
#include <math.h>
#include <stdlib.h>

#include "../grade.h"
#include "../kernel_test.h"
#include "../../sine_fill.h"
#include "lab02/lab02_kernels.h"

#if GRADE_REF
/* Row r of x (keys long) over its first len[r / per] keys (lens NULL: all), in double; a row
 * whose max is -inf is zeros. */
static void reference(const float *x, const int *lens, long per, long rows, int keys,
                      float *want) {
  for (long r = 0; r < rows; r++) {
    const float *xr = x + r * keys;
    int n = lens ? lens[r / per] : keys;
    double m = -INFINITY, s = 0;
    for (int j = 0; j < n; j++) m = fmax(m, xr[j]);
    if (m == -INFINITY) n = 0;
    for (int j = 0; j < n; j++) s += exp((double)xr[j] - m);
    for (int j = 0; j < keys; j++)
      want[r * keys + j] = j < n ? (float)(exp((double)xr[j] - m) / s) : 0.0f;
  }
}
#endif

/* The student's forward on x (rows, keys) with lengths lens (rows / per of them, or NULL);
 * sends the return value and y, and with `profile` the kernel's memory counters. Returns y
 * (malloc'd host copy) or NULL when it did not run. */
static float *forward(const char *what, const float *x, const int *lens, long per, long rows,
                      int keys, bool profile) {
  const long n = rows * keys, nl = lens ? (rows + per - 1) / per : 0;
  kt_grid_cap(2);
  float *dx = kt_upload(x, n);
  int *dl = lens ? kt_upload_ints(lens, nl) : NULL;
  float *dy = kt_alloc(n); /* unwritten: every entry must be written, the masked ones too */
  kt_profile_begin();
  int rc = KT_LAUNCHER(masked_softmax_cuda(dx, dy, dl, per, rows, keys), "masked_softmax_cuda");
  KtCounters counters = kt_profile_end();
  EXPECT_NEAR(rc, 0, 0, "masked_softmax_cuda's return value (-1 means not implemented)");
  float *y = NULL;
  if (rc == 0) {
    y = malloc(sizeof(float) * (size_t)n);
    kt_download(y, dy, n);
#if GRADE_REF
    float *want = malloc(sizeof(float) * (size_t)n);
    reference(x, lens, per, rows, keys, want);
#endif
    /* float32 expf, and a sum of at most 1100 terms in a 32-lane tree: a few ulps of values <= 1 */
    EXPECT_CLOSE(y, want, n, 1e-6, 1e-5, what);
    /* information: sectors per request (a row of 10 floats: 2; the reference's beside it) */
    if (profile) EXPECT_COUNTERS(counters, what);
#if GRADE_REF
    free(want);
#endif
  }
  kt_free(dx), kt_free(dy);
  if (dl) kt_free(dl);
  return y;
}

/* x (rows, keys) of order-2 scores; lens: rows / per lengths cycling through [0, keys] */
static float *scores(long rows, int keys, double a) {
  float *x = malloc(sizeof(float) * (size_t)(rows * keys));
  sine_fill(x, rows * keys, a, 0.3, 2.0);
  return x;
}
static int *lengths(long count, int keys) {
  int *l = malloc(sizeof(int) * (size_t)count);
  for (long i = 0; i < count; i++) l[i] = (int)((i * 7 + 3) % (keys + 1));
  return l;
}

static void check(const char *what, long rows, int keys, long per, bool masked, double a,
                  bool profile) {
  float *x = scores(rows, keys, a);
  int *l = masked ? lengths((rows + per - 1) / per, keys) : NULL;
  free(forward(what, x, l, per, rows, keys, profile));
  free(x), free(l);
}

GRADED_TEST(lab02_softmax_kernel_lab_shapes, 2,
            "2.6 masked_softmax_cuda at the labs' shapes: lab 02's (2, 2, 4) with lengths "
            "[2, 3], and lab 06's attention (64 * 4 heads, 10 queries, 10 keys)") {
  static const float xb[16] = {0.5f, 0.2f, 0.9f, 0.1f,  0.3f, 0.8f, 0.4f, 0.6f,
                               0.7f, 0.1f, 0.2f, 0.95f, 0.4f, 0.4f, 0.5f, 0.05f};
  free(forward("masked_softmax_cuda(x (2, 2, 4), lengths [2, 3] (per = 2 queries))", xb,
               (const int[]){2, 3}, 2, 4, 4, false));
  check("masked_softmax_cuda(x (2560, 10), NULL)", 64 * 4 * 10, 10, 1, false, 0.7, true);
  check("masked_softmax_cuda(x (2560, 10), 1-D lengths (per = 10 queries))", 64 * 4 * 10, 10,
        10, true, 0.9, false);
}

GRADED_TEST(lab02_softmax_kernel_uneven, 2,
            "2.6 masked_softmax_cuda at uneven sizes: keys 1, 31, 32, 33, 37, 201, 1100 (rows "
            "shorter and longer than a warp, and than a block), rows 1, 3, 31, 97, 2-D and 1-D "
            "lengths") {
  check("masked_softmax_cuda(x (1, 1), NULL)", 1, 1, 1, false, 0.7, false);
  check("masked_softmax_cuda(x (31, 31), 2-D lengths)", 31, 31, 1, true, 0.7, false);
  check("masked_softmax_cuda(x (97, 32), 2-D lengths)", 97, 32, 1, true, 1.1, false);
  check("masked_softmax_cuda(x (97, 33), 1-D lengths (per = 3))", 97, 33, 3, true, 0.9, false);
  check("masked_softmax_cuda(x (31, 37), NULL)", 31, 37, 1, false, 0.3, false);
  check("masked_softmax_cuda(x (33, 201), 2-D lengths)", 33, 201, 1, true, 0.37, false);
  /* rows past 1024 keys: a block of a thread per key (or the power of two above) is not a
   * launch a GPU takes */
  check("masked_softmax_cuda(x (3, 1100), NULL)", 3, 1100, 1, false, 0.5, false);
}

GRADED_TEST(lab02_softmax_kernel_many_rows, 1,
            "2.6 masked_softmax_cuda past one block's reach: 1031 rows of 33 keys with the grid "
            "capped at 2 blocks (the row loop loops)") {
  check("masked_softmax_cuda(x (1031, 33), 2-D lengths)", 1031, 33, 1, true, 0.7, true);
}

GRADED_TEST(lab02_softmax_kernel_zero_and_large, 1,
            "2.6 length-0 rows and rows of -inf scores are exactly zero; scores near 1000 do not "
            "overflow") {
  /* row 2: length 0; row 3: every score -inf (what sequence_mask(-inf) leaves for lab 06's
   * composed masked softmax, whose softmax is this kernel with no lengths); rows 0-1: large */
  float x[4 * 36];
  sine_fill(x, 4 * 36, 0.7, 0.3, 1.5);
  for (int j = 0; j < 36; j++) {
    x[j] += 1000.0f, x[36 + j] -= 1000.0f;
    x[3 * 36 + j] = -INFINITY;
  }
  x[5] = 5000.0f; /* masked out in row 0 (length 3) */
  float *y = forward("masked_softmax_cuda(x (4, 36), lengths [3, 36, 0, 36]) (scores near +1000 "
                     "and -1000, a row of -inf)",
                     x, (const int[]){3, 36, 0, 36}, 1, 4, 36, false);
  if (!y) return;
  for (int j = 0; j < 36; j++)
    EXPECT(y[2 * 36 + j] == 0.0f && y[3 * 36 + j] == 0.0f,
           "rows of length 0 and of -inf scores must be exactly zero (not uniform, not NaN); "
           "got %g and %g at key %d", (double)y[2 * 36 + j], (double)y[3 * 36 + j], j);
  free(y);
}

/* dx = y * (g - <g, y>) per row, on top of dx0 unless fresh: y given as data (a softmax of
 * random weights over the first len keys), in double, in the reference run only. */
static void backward(const char *what, long rows, int keys, bool fresh) {
  const long n = rows * keys;
  float *y = malloc(sizeof(float) * (size_t)n), *g = scores(rows, keys, 1.3);
  float *dx0 = scores(rows, keys, 0.45), *got = malloc(sizeof(float) * (size_t)n);
  sine_fill(y, n, 0.37, 0.2, 1.0);
  int *len = lengths(rows, keys);
  for (long r = 0; r < rows; r++) {
    float s = 0, *yr = y + r * keys;
    for (int j = 0; j < len[r]; j++) s += yr[j] = expf(yr[j]);
    for (int j = 0; j < keys; j++) yr[j] = j < len[r] ? yr[j] / s : 0.0f;
  }
  kt_grid_cap(2);
  float *dy = kt_upload(y, n), *dg = kt_upload(g, n);
  float *ddx = fresh ? kt_alloc(n) : kt_upload(dx0, n); /* fresh: must not read dx */
  kt_profile_begin();
  int rc = KT_LAUNCHER(masked_softmax_cuda_backward(dy, dg, ddx, rows, keys, fresh),
                      "masked_softmax_cuda_backward");
  KtCounters counters = kt_profile_end();
  EXPECT_NEAR(rc, 0, 0, "masked_softmax_cuda_backward's return value (-1: not implemented)");
  if (rc == 0) {
    kt_download(got, ddx, n);
#if GRADE_REF
    float *want = malloc(sizeof(float) * (size_t)n);
    for (long r = 0; r < rows; r++) {
      double dot = 0;
      for (int j = 0; j < keys; j++) dot += (double)g[r * keys + j] * y[r * keys + j];
      for (int j = 0; j < keys; j++) {
        double d = y[r * keys + j] * (g[r * keys + j] - dot);
        want[r * keys + j] = (float)(fresh ? d : dx0[r * keys + j] + d);
      }
    }
#endif
    /* a float dot over at most 201 terms of order 1 in a 32-lane tree */
    EXPECT_CLOSE(got, want, n, 2e-6, 1e-5, what);
    if (rows > 1000) EXPECT_COUNTERS(counters, what); /* information */
#if GRADE_REF
    free(want);
#endif
  }
  kt_free(dy), kt_free(dg), kt_free(ddx);
  free(y), free(g), free(dx0), free(got), free(len);
}

GRADED_TEST(lab02_softmax_kernel_backward, 2,
            "2.6 masked_softmax_cuda_backward: dx = y * (g - <g, y>) per row, stored (fresh) "
            "or added, at uneven sizes (keys 1, 10, 33, 201; rows 1, 97, 1031)") {
  backward("masked_softmax_cuda_backward(y, g (1, 1), fresh)", 1, 1, true);
  backward("masked_softmax_cuda_backward(y, g (97, 10), fresh)", 97, 10, true);
  backward("masked_softmax_cuda_backward(y, g (1031, 33), fresh)", 1031, 33, true);
  backward("masked_softmax_cuda_backward(y, g (31, 201)) added to dx", 31, 201, false);
}
