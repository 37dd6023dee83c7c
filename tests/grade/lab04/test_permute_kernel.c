/* Graded tests of exercises 4.4 (permute0213_naive_cuda) and 4.5 (permute0213_tiled_cuda),
 * labs/lab04/permute_kernel.cu: the student's launchers, called directly on the emulated device
 * with its sanitizers on and grids capped at 2 blocks (grid-stride loops must loop). Expected
 * values: the permute by its definition (an exact copy, or an exact float add). 4.5's last three
 * tests compare the emulator's memory counters with the reference kernel's (the reference run's
 * own counters, times a stated factor). 8 points. */
#include <stdlib.h>

#include "../grade.h"
#include "../../sine_fill.h"
#include "../kernel_test.h"
#include "lab04/lab04_kernels.h"

typedef int (*PermuteFn)(const float *, float *, int, int, int, int, int);

/* One launch of fn on x (A, B, C, D) -> y (A, C, B, D), y holding y0 first when accumulating;
 * the result is sent (and with `counters`, the launch's memory counters, beside the
 * reference's in the grade output). Returns whether the launcher said it launched. */
static bool check_shape_(PermuteFn fn, const char *name, int A, int B, int C, int D, int acc,
                         bool counters) {
  const long n = (long)A * B * C * D;
  float *x = malloc(sizeof(float) * (size_t)n), *y0 = malloc(sizeof(float) * (size_t)n);
  sine_fill(x, n, 0.37, 0.1 * D + A, 1), sine_fill(y0, n, 0.53, 0.2 + B, 1);
  kt_grid_cap(2);
  float *dx = kt_upload(x, n), *dy = acc ? kt_upload(y0, n) : kt_alloc(n); /* fresh: NaN */
  if (counters) kt_profile_begin();
  int rc = KT_LAUNCHER(fn(dx, dy, A, B, C, D, acc), name);
  KtCounters cnt = {0};
  if (counters) cnt = kt_profile_end();
  char what[160];
  GRADE_MSG(what, "%s's return value (-1 means not implemented)", name);
  EXPECT_NEAR(rc, 0, 0, what);
  float *got = malloc(sizeof(float) * (size_t)n);
  if (rc == 0) kt_download(got, dy, n);
  kt_free(dx), kt_free(dy);
  if (rc == 0) {
#if GRADE_REF
    float *want = malloc(sizeof(float) * (size_t)n);
    for (int a = 0; a < A; a++)
      for (int b = 0; b < B; b++)
        for (int c = 0; c < C; c++)
          for (int j = 0; j < D; j++) {
            const long o = (((long)a * C + c) * B + b) * D + j;
            const float v = x[(((long)a * B + b) * C + c) * D + j];
            want[o] = acc ? y0[o] + v : v;
          }
#endif
    GRADE_MSG(what, "%s: y (%d, %d, %d, %d) %s x (%d, %d, %d, %d) permuted {0, 2, 1, 3}", name,
              A, C, B, D, acc ? "+=" : "=", A, B, C, D);
    EXPECT_CLOSE(got, want, n, 0, 0, what); /* a copy (or one float add): exact */
#if GRADE_REF
    free(want);
#endif
    if (counters) EXPECT_COUNTERS(cnt, "the launch at lab 06's shape (the grid capped at 2)");
  }
  free(got), free(x), free(y0);
  return rc == 0;
}
static bool check_shape(PermuteFn fn, const char *name, int A, int B, int C, int D, int acc) {
  return check_shape_(fn, name, A, B, C, D, acc, false);
}

/* The labs' shapes (lab 04's keys: batch 2, 6 steps, 5 heads of 20; lab 06's: batch 64, 10
 * steps, 4 heads of 8), both modes, then uneven ones: 1, 31, 33, primes, more tiles than blocks. */
static void check_all(PermuteFn fn, const char *name) {
  if (!check_shape(fn, name, 2, 6, 5, 20, 0)) return;
  check_shape_(fn, name, 64, 10, 4, 8, 0, true);
  check_shape(fn, name, 64, 10, 4, 8, 1);
  check_shape(fn, name, 1, 1, 1, 1, 0);
  check_shape(fn, name, 3, 31, 33, 1, 0); /* d = 1: a transpose of steps and heads */
  check_shape(fn, name, 2, 33, 7, 3, 1);
  check_shape(fn, name, 1, 37, 2, 13, 0);
  check_shape(fn, name, 5, 3, 31, 2, 1);
  check_shape(fn, name, 2, 5, 41, 7, 0);
  check_shape(fn, name, 1, 2, 3, 1024, 0); /* a row as long as a tile */
}

GRADED_TEST(lab04_permute_naive, 2,
            "4.4 permute0213_naive_cuda: the labs' shapes and uneven ones, y = and y +=, on the "
            "emulated device (memcheck, initcheck, racecheck)") {
  check_all(permute0213_naive_cuda, "permute0213_naive_cuda");
}

GRADED_TEST(lab04_permute_tiled, 3,
            "4.5 permute0213_tiled_cuda: the labs' shapes and uneven ones (partial tiles, more "
            "tiles than blocks), y = and y +=, on the emulated device (memcheck, initcheck, "
            "racecheck: a missing barrier is a race)") {
  check_all(permute0213_tiled_cuda, "permute0213_tiled_cuda");
}

/* ---------- 4.5's memory counters against the reference's ---------- */

/* One launch of the student's tiled kernel at (A, B, C, D), profiled, the grid uncapped (a
 * GPU's grid); its result is sent too (a kernel that writes nothing moves no bytes). false when
 * it did not launch. */
static bool tiled_counters(int A, int B, int C, int D, KtCounters *c) {
  const long n = (long)A * B * C * D;
  float *x = malloc(sizeof(float) * (size_t)n), *got = malloc(sizeof(float) * (size_t)n);
  sine_fill(x, n, 0.37, 0.1, 1);
  kt_grid_cap(0);
  float *dx = kt_upload(x, n), *dy = kt_alloc(n);
  kt_profile_begin();
  int rc = KT_LAUNCHER(permute0213_tiled_cuda(dx, dy, A, B, C, D, 0), "permute0213_tiled_cuda");
  *c = kt_profile_end();
  EXPECT_NEAR(rc, 0, 0, "permute0213_tiled_cuda's return value (-1 means not implemented)");
  if (rc == 0) {
    kt_download(got, dy, n);
#if GRADE_REF
    float *want = malloc(sizeof(float) * (size_t)n);
    for (long a = 0; a < A; a++)
      for (long b = 0; b < B; b++)
        for (long cc = 0; cc < C; cc++)
          for (long j = 0; j < D; j++)
            want[((a * C + cc) * B + b) * D + j] = x[((a * B + b) * C + cc) * D + j];
#endif
    char what[120];
    GRADE_MSG(what, "y of the profiled launch at (%d, %d, %d, %d)", A, B, C, D);
    EXPECT_CLOSE(got, want, n, 0, 0, what); /* a copy: exact */
#if GRADE_REF
    free(want);
#endif
  }
  kt_free(dx), kt_free(dy), free(x), free(got);
  return rc == 0;
}

/* The factor: 1.5 leaves room for another tile shape (a row split differently, requests of
 * fewer lanes), and is far below what a strided side costs (the naive kernel: 8 x). */
#define COALESCE_FACTOR 1.5

/* The sectors loaded and stored (the bytes moved), each within COALESCE_FACTOR of the
 * reference's; the grade prints both kernels' counters under the test. */
static void expect_coalesced(int A, int B, int C, int D) {
  KtCounters c;
  if (!tiled_counters(A, B, C, D, &c)) return;
  char what[120];
  GRADE_MSG(what, "permute0213_tiled_cuda at (%d, %d, %d, %d)", A, B, C, D);
  EXPECT_COUNTERS_WITHIN(c, CNT_LD_SECTORS | CNT_ST_SECTORS, COALESCE_FACTOR, what);
}

GRADED_TEST(lab04_permute_tiled_coalesced, 1,
            "4.5 permute0213_tiled_cuda is coalesced at the labs' shapes: sectors loaded and "
            "stored within 1.5 x the reference's (lab 04: d = 20; lab 06: d = 8)") {
  expect_coalesced(2, 6, 5, 20);
  expect_coalesced(64, 10, 4, 8);
}

GRADED_TEST(lab04_permute_tiled_small_d, 1,
            "4.5 permute0213_tiled_cuda reads AND writes coalesced when d is small (d = 1 and 2: "
            "a transpose of steps and heads, where only a tile can): sectors within 1.5 x the "
            "reference's") {
  expect_coalesced(4, 64, 64, 1);
  expect_coalesced(2, 48, 32, 2);
}

GRADED_TEST(lab04_permute_tiled_banks, 1,
            "4.5 permute0213_tiled_cuda's tile is in shared memory, padded: bank-conflict "
            "replays at most 1 per 8 shared-memory requests (d = 8, d = 1)") {
  const int shapes[2][4] = {{64, 10, 4, 8}, {4, 64, 64, 1}};
  for (int s = 0; s < 2; s++) {
    KtCounters c;
    const int *p = shapes[s];
    if (!tiled_counters(p[0], p[1], p[2], p[3], &c)) return;
    EXPECT(c.sh_req > 0, "permute0213_tiled_cuda made no shared-memory request at (%d, %d, %d, "
           "%d): the tile goes through shared memory", p[0], p[1], p[2], p[3]);
    char what[200];
    GRADE_MSG(what, "bank-conflict replays per shared-memory request at (%d, %d, %d, %d) (the "
              "reference's padded tile: %.2f; unpadded, 1.27 at d = 8)", p[0], p[1], p[2], p[3],
              c.sh_req ? c.sh_conflicts / c.sh_req : 0);
    const double per_req = c.sh_req ? c.sh_conflicts / c.sh_req : 0;
    EXPECT_NEAR(per_req, 0, 0.125, what); /* the reference: 0 */
    EXPECT_COUNTERS(c, "permute0213_tiled_cuda's counters");
  }
}
