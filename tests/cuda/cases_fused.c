/* cases_fused.c — lab 03's additive attention scores (cuda/fused.cu) against the CPU kernel
 * (common/cpu/cpu_fused.c), through the chapter's front additive_scores_fused. Shapes
 * (batch, queries, keys, h): 1s, uneven sizes (31, 9), lab 03's decoder step (64 sentences,
 * one query, 10 keys), whole-sequence scores (64, 10, 9) and no keys at all (the launchers
 * then launch nothing and the gradients stay 0); one shape with no gradients (the
 * forward keeps no tanh values then) and one where only the keys and w_v want theirs (dq NULL). */
#include "../../chapters/03_bahdanau/seq2seq_attention_fast.h"
#include "cuda_check.h"

static const int shapes[][4] = {{1, 1, 1, 8},    {1, 1, 9, 31},   {3, 10, 9, 8},
                                {3, 1, 10, 31},  {64, 1, 10, 32}, {64, 10, 9, 31},
                                {2, 3, 0, 8},    {3, 10, 9, 31},  {1, 10, 1, 8}};
enum { N = sizeof shapes / sizeof shapes[0], NO_GRAD = N - 2, NO_DQ = N - 1 };

static Tensor *run_additive(CcRun *r) {
  const int *s = shapes[r->variant];
  const int B = s[0], Q = s[1], K = s[2], h = s[3];
  cc_shape(r, "(%d, %d, %d, h %d)%s", B, Q, K, h,
           r->variant == NO_GRAD ? " no grad" : r->variant == NO_DQ ? " no dq" : "");
  bool grad = r->variant != NO_GRAD;
  /* the sums q + kp in [-2, 2]: tanh away from saturation, so 1 - t^2 carries weight */
  Tensor *q = cc_input(r, 3, (const int[]){B, Q, h}, 41, -1, 1, grad && r->variant != NO_DQ);
  Tensor *kp = cc_input(r, 3, (const int[]){B, K, h}, 42, -1, 1, grad); /* (batch, keys, h) */
  Tensor *w = cc_input(r, 1, &h, 43, -1, 1, grad);                        /* (h) */
  return additive_scores_fused(q, kp, w); /* (batch, queries, keys) */
}

const CcCase cases_fused[] = {
    /* dw_v sums B * Q * K (up to 5760) terms: the CPU adds them one by one in float, 9e-6 of
     * 1 + |x| off an exact (double) sum at (64, 10, 9, h 31); the rest is tanhf against the
     * CPU's fast_tanhf (a few ulps) */
    {"additive_scores", N, run_additive, 3e-5f,
     "dw_v: the CPU's sequential float sum of 5760 terms is 9e-6 off an exact one"},
    {0},
};
