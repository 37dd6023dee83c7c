/* cases_softmax.c — the softmax family (cuda/softmax.cu) against the CPU kernels
 * (common/cpu/cpu_softmax.c), through the op fronts: softmax, rows of -inf (sequence masking
 * with -inf, then softmax: lab 2's masked softmax), log-softmax, sequence masking with 1-D (per
 * batch) and 2-D (per batch and query) valid lengths, cross-entropy with and without weights, and MSE; plus cases where an input feeds two
 * ops, so the second backward accumulates (fresh = false) instead of storing.
 *
 * Shapes: 1, 31, 33, primes, and the labs' own: (64, 10, 10) attention weights (lab02/06),
 * (64, 10, 201) logits over a vocabulary of 201 (lab03/06: 640 rows, in the unweighted
 * cross-entropy case; (4, 5, 201) in the others), (2, 4, 1031). Rows of at most 16 keys (1, 10,
 * 13) run the plain one-thread-per-row kernels, longer rows (17, 31, 33, 201, 1031) the
 * warp-per-row kernels (see the header of cuda/softmax.cu). */
#include <math.h>
#include <stdlib.h>

#include "cuda_check.h"

/* (B, Q, K): the softmax runs over K; (2, 0, 33) has no rows at all */
static const int shapes[][3] = {{1, 1, 1},    {1, 1, 31},    {1, 3, 33},   {1, 7, 13}, {5, 3, 17},
                                {64, 10, 10}, {64, 10, 201}, {2, 4, 1031}, {2, 0, 33}};
enum { N = sizeof shapes / sizeof shapes[0], LAB_ROWS = 6 };
/* The emulator runs a warp kernel's lanes as threads meeting at every shuffle: 640 rows of 201
 * cost seconds there. The unweighted cross-entropy runs the lab's logits (64, 10, 201); the
 * other cases take the same row length in fewer rows. */
static const int few_rows[3] = {4, 5, 201};
static const int *shape_of(const CcRun *r, bool lab) {
  return r->variant == LAB_ROWS && !lab ? few_rows : shapes[r->variant];
}

/* Valid lengths (ndim, shape) for rows of `keys` keys: whole numbers in [0, keys + 1], with a 0
 * (a row with nothing to attend to) and keys + 1 (clamped by the front: masks nothing) wherever
 * there are at least three lengths. Built by hand rather than from cc_ints so both ends are
 * always there. */
static Tensor *lens_tensor(CcRun *r, int ndim, const int *shape, int keys) {
  long n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  float *h = malloc(sizeof(float) * (size_t)n);
  for (long i = 0; i < n; i++) h[i] = (float)((i * 7 + r->variant * 3 + 1) % (keys + 2));
  if (n >= 3) {
    h[0] = 0;
    h[1] = (float)(keys + 1);
  }
  Tensor *t = cc_tensor(r, ndim, shape, h);
  free(h);
  return t;
}

static Tensor *scores(CcRun *r, float lo, float hi) {
  const int *s = shape_of(r, false);
  cc_shape(r, "(%d, %d, %d)", s[0], s[1], s[2]);
  return cc_input(r, 3, s, 41, lo, hi, true);
}

/* ---------- softmax ---------- */

static Tensor *run_softmax(CcRun *r) { return t_softmax(scores(r, -4, 4)); }
/* logits far apart: many x - max below -87, where both devices give exactly 0 */
static Tensor *run_softmax_wide(CcRun *r) { return t_softmax(scores(r, -100, 100)); }

/* Scores with -inf past a per-(batch, query) length (so some rows are all -inf), then a plain
 * softmax: a row of all -inf gives zeros, no NaN; no gradient reaches the -inf entries. */
static Tensor *neg_inf_scores(CcRun *r) {
  const int *s = shape_of(r, false);
  Tensor *X = scores(r, -4, 4);
  return t_sequence_mask(X, lens_tensor(r, 2, s, s[2]), -INFINITY);
}
static Tensor *run_softmax_neg_inf(CcRun *r) { return t_softmax(neg_inf_scores(r)); }

/* ---------- log-softmax ---------- */

static Tensor *run_log_softmax(CcRun *r) { return t_log_softmax(scores(r, -4, 4)); }
static Tensor *run_log_softmax_wide(CcRun *r) { return t_log_softmax(scores(r, -100, 100)); }
/* all -inf rows give all -inf; the gradient passes g through exp(-inf) = 0 */
static Tensor *run_log_softmax_neg_inf(CcRun *r) { return t_log_softmax(neg_inf_scores(r)); }

/* x feeds softmax and log-softmax: the backward that runs second accumulates into x's
 * gradient. The tape runs newest first, so in run_both_a log-softmax stores and softmax adds,
 * in run_both_b the other way round. */
static Tensor *run_both_a(CcRun *r) {
  Tensor *x = scores(r, -4, 4);
  Tensor *a = t_softmax(x);
  return t_add(a, t_log_softmax(x));
}
static Tensor *run_both_b(CcRun *r) {
  Tensor *x = scores(r, -4, 4);
  Tensor *a = t_log_softmax(x);
  return t_add(a, t_softmax(x));
}

/* ---------- sequence mask ---------- */

static Tensor *run_seqmask_1d(CcRun *r) { /* d2l's value for masked scores */
  const int *s = shape_of(r, false);
  Tensor *X = scores(r, -4, 4);
  return t_sequence_mask(X, lens_tensor(r, 1, s, s[2]), -1e6f);
}
static Tensor *run_seqmask_2d(CcRun *r) {
  const int *s = shape_of(r, false);
  Tensor *X = scores(r, -4, 4);
  return t_sequence_mask(X, lens_tensor(r, 2, s, s[2]), 0.0f);
}
/* X + sequence_mask(X): the add's backward stores X's gradient first, the mask's adds to it */
static Tensor *run_seqmask_acc(CcRun *r) {
  const int *s = shape_of(r, false);
  Tensor *X = scores(r, -4, 4);
  Tensor *m = t_sequence_mask(X, lens_tensor(r, 2, s, s[2]), 0.5f);
  return t_add(X, m);
}

/* ---------- cross-entropy ---------- */

/* logits (B, Q, V) with labels (B, Q) in [0, V) from cc_ints; weights (B, Q) in {0, 1, 2} (0:
 * a padding token, which costs 0 and gets no gradient) */
static Tensor *logits(CcRun *r, Tensor **labels, Tensor **weights) {
  const int *s = shape_of(r, !weights); /* the lab's 640 rows without weights */
  cc_shape(r, "(%d, %d, %d)", s[0], s[1], s[2]);
  Tensor *x = cc_input(r, 3, s, 51, -6, 6, true);
  *labels = cc_ints(r, 2, s, 52, 0, s[2] - 1);
  if (weights) *weights = cc_ints(r, 2, s, 53, 0, 2);
  return x;
}
static Tensor *run_ce(CcRun *r) {
  Tensor *labels, *x = logits(r, &labels, NULL);
  return t_cross_entropy(x, labels, NULL);
}
static Tensor *run_ce_weighted(CcRun *r) {
  Tensor *labels, *w, *x = logits(r, &labels, &w);
  return t_cross_entropy(x, labels, w);
}
/* cross-entropy + the logits' row means: the mean's backward (newer on the tape) stores the
 * logits' gradient, the cross-entropy's adds to it (a mean, not a sum: a float sum of 201
 * logits near cancellation is the reduce family's rounding, not this one's) */
static Tensor *run_ce_acc(CcRun *r) {
  Tensor *labels, *w, *x = logits(r, &labels, &w);
  Tensor *ce = t_cross_entropy(x, labels, w);
  return t_add(ce, t_mean(x, -1, false));
}

/* ---------- MSE ---------- */

/* n = 0: a mean of nothing is 0/0 = NaN on both devices */
static const int mse_sizes[] = {1, 31, 33, 997, 64 * 10 * 32, 0};
enum { N_MSE = sizeof mse_sizes / sizeof mse_sizes[0] };
static Tensor *mse_case(CcRun *r, bool target_grad) {
  int n = mse_sizes[r->variant];
  cc_shape(r, "(%d)", n);
  Tensor *p = cc_input(r, 1, &n, 61, -2, 2, true);
  return t_mse(p, cc_input(r, 1, &n, 62, -2, 2, target_grad));
}
static Tensor *run_mse(CcRun *r) { return mse_case(r, true); }
static Tensor *run_mse_pred(CcRun *r) { return mse_case(r, false); } /* dt NULL */

/* Tolerances, relative to 1 + |cpu|: */
/* probabilities: the CPU's fast_expf (1e-7) against CUDA's expf (2 ulps), and row sums of up to
 * 1031 terms added in another order (a few ulps of the sum) */
#define SM_WHY "fast_expf vs expf (ulps) and another summation order over up to 1031 keys"
/* log-probabilities: the same, through logf of the sum; values up to ~200 with wide logits */
#define LSM_WHY "logsumexp from sums in another order: ulps of |x| + log(keys)"
/* with logits near 100, one ulp of the logsumexp is 7.6e-6 (CPU and CUDA logf may differ in
 * its last bit): y = x - lse near 0 carries it, and the backward multiplies exp(y) by sum(g) */
#define LSM_WIDE_WHY "an ulp of logsumexp ~100 (7.6e-6) in y near 0, and in exp(y) * sum(g)"
/* a copy and a fill: nothing is rounded */
#define MASK_WHY "a copy and a fill: no arithmetic, so bitwise equal"
#define CE_WHY "logsumexp over up to 1031 logits summed in another order; logf ulps"
#define MSE_WHY "float tree sum (GPU) against a double sum (CPU) of up to 20480 squares"
const CcCase cases_softmax[] = {
    {"softmax", N, run_softmax, 1e-5f, SM_WHY},
    {"softmax (logits in [-100, 100])", N, run_softmax_wide, 1e-5f, SM_WHY},
    {"softmax (rows of -inf)", N, run_softmax_neg_inf, 1e-5f, SM_WHY},
    {"log_softmax", N, run_log_softmax, 1e-5f, LSM_WHY},
    {"log_softmax (logits in [-100, 100])", N, run_log_softmax_wide, 3e-5f, LSM_WIDE_WHY},
    {"log_softmax (rows of -inf)", N, run_log_softmax_neg_inf, 1e-5f, LSM_WHY},
    {"softmax then log_softmax (gradients add)", N, run_both_a, 1e-5f, LSM_WHY},
    {"log_softmax then softmax (gradients add)", N, run_both_b, 1e-5f, LSM_WHY},
    {"sequence_mask (valid_lens per batch, -1e6)", N, run_seqmask_1d, 0.0f, MASK_WHY},
    {"sequence_mask (valid_lens per query, 0)", N, run_seqmask_2d, 0.0f, MASK_WHY},
    {"X + sequence_mask(X) (gradients add)", N, run_seqmask_acc, 0.0f, MASK_WHY},
    {"cross_entropy", N, run_ce, 1e-5f, CE_WHY},
    {"cross_entropy (weights 0, 1, 2)", N, run_ce_weighted, 1e-5f, CE_WHY},
    {"cross_entropy + row means (gradients add)", N, run_ce_acc, 1e-5f, CE_WHY},
    {"mse", N_MSE, run_mse, 1e-5f, MSE_WHY},
    {"mse (target without gradient)", N_MSE, run_mse_pred, 1e-5f, MSE_WHY},
    {0},
};
