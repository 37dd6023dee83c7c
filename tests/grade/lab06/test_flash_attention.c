/* Graded tests of exercise 6.8 (flash_attention_cuda), labs/lab06/flash_attention.cu: the
 * student's launcher, called directly on the emulated device with its sanitizers on and grids
 * capped at 2 blocks (the grid-stride loop over query tiles must loop). Expected values: the
 * attention formula in double, row by row (the reference run only). 8 points. */
#include <math.h>
#include <stdlib.h>

#include "../grade.h"
#include "../kernel_test.h"
#include "lab06/lab06_kernels.h"

enum { MASK_NONE, MASK_BATCH, MASK_CAUSAL };

/* Inputs in [-1, 1) from a fixed generator: the same numbers in both runs. */
static void fill(float *x, long n, unsigned seed) {
  unsigned s = seed * 2654435761u + 1;
  for (long e = 0; e < n; e++) {
    s = s * 1664525u + 1013904223u;
    x[e] = (float)(s >> 8) / (float)(1u << 23) - 1.0f;
  }
}

#if GRADE_REF
/* O (B, Tq, dv) of the formula in double: softmax over the first len keys of each row. */
static void attention_ref(const float *Q, const float *K, const float *V, const int *len,
                          long per, float *O, int B, int Tq, int Tk, int d, int dv,
                          double scale) {
  double *s = malloc(sizeof(double) * (size_t)(Tk > 0 ? Tk : 1));
  for (long r = 0; r < (long)B * Tq; r++) {
    const long b = r / Tq;
    const int keys = len ? len[r / per] : Tk;
    double m = -INFINITY, sum = 0;
    for (int j = 0; j < keys; j++) {
      double dot = 0;
      for (int c = 0; c < d; c++) dot += (double)Q[r * d + c] * K[(b * Tk + j) * d + c];
      s[j] = dot * scale;
      m = fmax(m, s[j]);
    }
    for (int j = 0; j < keys; j++) sum += s[j] = exp(s[j] - m);
    for (int c = 0; c < dv; c++) {
      double o = 0;
      for (int j = 0; j < keys; j++) o += s[j] / sum * V[(b * Tk + j) * dv + c];
      O[r * dv + c] = (float)o;
    }
  }
  free(s);
}
#endif

/* One launch at (B, Tq, Tk, d, dv) with a mask, Q and K in [-amp, amp), the given scale; the
 * output checked against the formula within tol; the memory counters returned through
 * *counters (shown beside the reference's). */
static void check_case_(int B, int Tq, int Tk, int d, int dv, int mask, KtCounters *counters,
                        float scale, float amp, double tol) {
  const long nq = (long)B * Tq * d, nk = (long)B * Tk * d, nv = (long)B * Tk * dv,
             no = (long)B * Tq * dv;
  float *hq = malloc(sizeof(float) * (size_t)(nq + nk + nv + 1)), *hk = hq + nq, *hv = hk + nk;
  fill(hq, nq, 1), fill(hk, nk, 2), fill(hv, nv, 3);
  for (long e = 0; e < nq + nk; e++) hq[e] *= amp; /* Q and K: scores of order amp^2 sqrt(d) */
  /* lengths: per batch row (a 0: a row of zeros; Tk: every key; the rest between), or
   * causal per (batch row, query): query i sees keys 0 .. i */
  long nl = mask == MASK_BATCH ? B : mask == MASK_CAUSAL ? (long)B * Tq : 0, per = 1;
  int *hl = malloc(sizeof(int) * (size_t)(nl + 1));
  for (long e = 0; e < nl; e++) {
    long v = mask == MASK_BATCH ? (e == 0 ? 0 : e == 1 ? Tk : (e * 7 + 3) % (Tk + 1)) : e % Tq + 1;
    hl[e] = (int)(v < Tk ? v : Tk);
  }
  if (nl) per = (long)B * Tq / nl;
  kt_grid_cap(2);
  float *Q = kt_upload(hq, nq), *K = kt_upload(hk, nk), *V = kt_upload(hv, nv);
  int *L = nl ? kt_upload_ints(hl, nl) : NULL;
  float *O = kt_alloc(no); /* NaN and unwritten: every output must be written */
  kt_profile_begin();
  int rc = KT_LAUNCHER(flash_attention_cuda(Q, K, V, L, per, O, B, Tq, Tk, d, dv, scale),
                       "flash_attention_cuda");
  *counters = kt_profile_end();
  EXPECT_NEAR(rc, 0, 0, "flash_attention_cuda's return value (-1 means not implemented)");
  float *got = malloc(sizeof(float) * (size_t)(no + 1));
  if (rc == 0) kt_download(got, O, no);
  kt_free(Q), kt_free(K), kt_free(V), kt_free(O);
  if (L) kt_free(L);
  if (rc == 0) {
#if GRADE_REF
    float *want = malloc(sizeof(float) * (size_t)(no + 1));
    attention_ref(hq, hk, hv, nl ? hl : NULL, per, want, B, Tq, Tk, d, dv, scale);
#endif
    char what[160];
    GRADE_MSG(what, "O (batch %d, queries %d, dv %d) with %d keys, d = %d, scale %g, Q and K "
              "in [-%g, %g), %s", B, Tq, dv, Tk, d, scale, amp, amp,
              mask == MASK_NONE ? "no mask" : mask == MASK_BATCH ? "a length per batch row "
              "(row 0: length 0, all zeros)" : "causal lengths (query i sees keys 0..i)");
    EXPECT_CLOSE(got, want, no, tol, 0, what);
#if GRADE_REF
    free(want);
#endif
  }
  free(got), free(hq), free(hl);
}

/* at d2l's scale 1/sqrt(d), Q and K in [-1, 1): |O| <= 1, sums of up to 97 terms in float32
 * and exp's rounding: 1e-5 */
static void check_case(int B, int Tq, int Tk, int d, int dv, int mask, KtCounters *counters) {
  check_case_(B, Tq, Tk, d, dv, mask, counters, 1.0f / sqrtf((float)d), 1.0f, 1e-5);
}

GRADED_TEST(lab06_flash_attention, 2,
            "6.8 flash_attention_cuda at the lab's shapes: 4 heads x 2 sentences of 10 tokens, "
            "heads of 8 (classic preset) and 64 (d2l-1.0), with and without lengths") {
  KtCounters c;
  check_case(8, 10, 10, 8, 8, MASK_NONE, &c);
  check_case(8, 10, 10, 8, 8, MASK_BATCH, &c);
  check_case(8, 10, 10, 64, 64, MASK_BATCH, &c);
  EXPECT_COUNTERS(c, "heads of 64: (8, 10, 10)");
}

GRADED_TEST(lab06_flash_attention_causal, 2,
            "6.8 flash_attention_cuda with the decoder's causal lengths (per batch row and "
            "query) and a prediction step (1 query against 7 cached keys)") {
  KtCounters c;
  check_case(8, 10, 10, 8, 8, MASK_CAUSAL, &c);
  check_case(3, 33, 33, 16, 16, MASK_CAUSAL, &c);
  check_case(8, 1, 7, 64, 64, MASK_BATCH, &c);
}

GRADED_TEST(lab06_flash_attention_uneven, 2,
            "6.8 flash_attention_cuda at uneven sizes: 1 of everything; 31, 33 and 97 queries "
            "(several tiles, a partial last one; grid capped at 2 blocks); 37 and 65 keys; "
            "dv != d; no keys at all; scores up to about +-150 at scale 0.9, not 1/sqrt(d) "
            "(exp of an unshifted score overflows past 88)") {
  KtCounters c;
  check_case(1, 1, 1, 1, 1, MASK_NONE, &c);
  check_case(3, 31, 33, 8, 8, MASK_BATCH, &c);
  check_case(2, 33, 37, 16, 5, MASK_CAUSAL, &c);
  check_case(2, 97, 65, 8, 8, MASK_BATCH, &c);
  check_case(2, 3, 0, 8, 8, MASK_NONE, &c); /* nothing to attend to: zeros */
  /* Q, K in [-5, 5), d = 16: dot products of spread ~33, the largest past +-100; the softmax
   * is then nearly one-hot and s - m loses ulps of 100 (8e-6) in float32: 1e-4 */
  check_case_(2, 33, 40, 16, 8, MASK_BATCH, &c, 0.9f, 5.0f, 1e-4);
}

GRADED_TEST(lab06_flash_attention_reads, 2,
            "6.8 flash_attention_cuda reads K and V once per tile of queries: its global load "
            "sectors within 2x of the reference kernel's at (4, 128, 128, d 32)") {
  KtCounters c;
  check_case(4, 128, 128, 32, 32, MASK_NONE, &c);
  /* a kernel whose threads each read K and V for their own query loads every K/V sector once
   * per query instead of once per 32 queries: 8x or more of the reference's load sectors */
  EXPECT_COUNTERS_WITHIN(c, CNT_LD_SECTORS, 2.0, "(4, 128, 128, d 32)");
}
