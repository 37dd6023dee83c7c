/* cpu_attention.c — scaled dot-product attention in one pass, the CPU twin of cuda/attention.cu
 * (front: t_attention_fused, common/ops/attention.c). Row by row, what d2l's
 * DotProductAttention computes with -inf masking (ops/softmax.c):
 *     s_j = scale * Q[b, i] . K[b, j] for the keys j < len, p = softmax(s), O[b, i] = sum_j p_j V[b, j]
 * and a row with no key left (length 0) is zeros. The scores of one row live in a scratch row;
 * the (queries, keys) matrix is never stored. */
#include <math.h>
#include <string.h>

#include "kernels.h"

/* Q (B, Tq, d), K (B, Tk, d), V (B, Tk, dv), O (B, Tq, dv); len NULL or one per `per` rows */
void cpu_attention(const float *Q, const float *K, const float *V, const int *len, long per,
                   float *O, int B, int Tq, int Tk, int d, int dv, float scale) {
  float *s = __builtin_alloca(sizeof(float) * (size_t)(Tk > 0 ? Tk : 1)); /* one row's scores */
  for (int b = 0; b < B; b++)
    for (int i = 0; i < Tq; i++) {
      long row = (long)b * Tq + i;
      int keys = len ? len[row / per] : Tk; /* the front capped it at Tk */
      const float *q = Q + row * d;
      float *o = O + row * dv;
      memset(o, 0, sizeof(float) * (size_t)dv);
      if (keys <= 0) continue; /* nothing to attend to: zeros, as exp(-inf) everywhere */
      float m = -INFINITY;
      for (int j = 0; j < keys; j++) {
        const float *k = K + ((long)b * Tk + j) * d;
        float dot = 0.0f;
        for (int c = 0; c < d; c++) dot += q[c] * k[c];
        s[j] = scale * dot;
        m = fmaxf(m, s[j]);
      }
      float sum = 0.0f;
      for (int j = 0; j < keys; j++) sum += s[j] = expf(s[j] - m);
      for (int j = 0; j < keys; j++) {
        const float *v = V + ((long)b * Tk + j) * dv;
        float p = s[j] / sum;
        for (int c = 0; c < dv; c++) o[c] += p * v[c];
      }
    }
}
