/* cases_attention.c — the fused attention (cuda/attention.cu) against its CPU twin
 * (common/cpu/cpu_attention.c), through t_attention_fused; its backward is composed from
 * other entries (checked in their own families) on either device. Shapes
 * (batch, queries, keys, d, dv): 1s; lab 06's encoder self-attention (d2l-1.0: 4 heads of 64)
 * and decoder step; uneven sizes across the kernel's 32-query and 32-key tiles (31, 33, 37,
 * 97 queries: several tiles, a partial last one); no keys at all. Masks: none, per batch row
 * (with a 0 and one past the keys), per (batch row, query): the decoder's causal lengths. */
#include <stdlib.h>

#include "cuda_check.h"

static const int shapes[][5] = {{1, 1, 1, 1, 1},   {8, 10, 10, 64, 64}, {8, 1, 7, 64, 64},
                                {3, 31, 33, 8, 8}, {2, 33, 37, 16, 5},  {2, 97, 65, 8, 8},
                                {2, 3, 0, 8, 8}};
enum { N = sizeof shapes / sizeof shapes[0] };

/* mask 0: none; 1: one length per batch row; 2: causal, query i sees keys 0 .. i (capped) */
static Tensor *lens_for(CcRun *r, int mask, int B, int Tq, int Tk) {
  if (mask == 0) return NULL;
  long n = mask == 1 ? B : (long)B * Tq;
  float *h = malloc(sizeof(float) * (size_t)n);
  for (long e = 0; e < n; e++)
    h[e] = mask == 1 ? (float)((e * 5 + 3) % (Tk + 2)) : (float)(e % Tq + 1);
  if (mask == 1 && n >= 2) h[0] = 0, h[1] = (float)(Tk + 1); /* nothing; past the keys */
  Tensor *t = mask == 1 ? cc_tensor(r, 1, (int[]){B}, h) : cc_tensor(r, 2, (int[]){B, Tq}, h);
  free(h);
  return t;
}

static Tensor *run(CcRun *r, int mask) {
  const int *s = shapes[r->variant];
  const int B = s[0], Tq = s[1], Tk = s[2], d = s[3], dv = s[4];
  cc_shape(r, "(%d, %d, %d, d %d, dv %d)", B, Tq, Tk, d, dv);
  Tensor *Q = cc_input(r, 3, (const int[]){B, Tq, d}, 51, -1, 1, true);  /* (batch, queries, d) */
  Tensor *K = cc_input(r, 3, (const int[]){B, Tk, d}, 52, -1, 1, true);  /* (batch, keys, d) */
  Tensor *V = cc_input(r, 3, (const int[]){B, Tk, dv}, 53, -1, 1, true); /* (batch, keys, dv) */
  return t_attention_fused(Q, K, V, lens_for(r, mask, B, Tq, Tk)); /* (batch, queries, dv) */
}
static Tensor *run_plain(CcRun *r) { return run(r, 0); }
static Tensor *run_lens(CcRun *r) { return run(r, 1); }
static Tensor *run_causal(CcRun *r) { return run(r, 2); }

/* the kernel's online softmax rescales its sums once per 32 keys and adds in another order
 * than the CPU's row loop (|O| <= 1: absolute ulps); a GPU's expf differs by a few more */
#define WHY "measured 2e-7 here; online softmax in 32-key tiles vs one pass per row, and a GPU's expf"
const CcCase cases_attention[] = {
    {"attention_fused", N, run_plain, 1e-5f, WHY},
    {"attention_fused_lens", N, run_lens, 1e-5f, WHY},
    {"attention_fused_causal", N, run_causal, 1e-5f, WHY},
    {0},
};
