/* cpu_fused.c — the CPU kernels of the chapters' fused ops (their fronts live in the chapters).
 *
 * additive_scores_fused (chapters/03_bahdanau/additive_scores.c): the additive attention scores
 * of lab 03's training path in one tape node:
 *     scores[b, i, j] = sum_c w_v[c] * tanh(q[b, i, c] + kp[b, j, c])
 * Exercise 3.3 builds the same numbers from generic ops (broadcast add, tanh, linear, each a
 * pass over a (batch, queries, keys, h) array forward and backward); here one loop does it and
 * keeps only the tanh values for the backward:
 *     dt = dscores[b, i, j] * w_v[c] * (1 - t^2),  dq += sum_j dt,  dkp += sum_i dt,
 *     dw_v[c] += sum_{b, i, j} dscores[b, i, j] * t. */
#include <string.h>

#include "../fastmath.h"
#include "kernels.h"

/* T (B, Q, K, h): the tanh values the forward kept; dq, dk, dw: NULL when not wanted */
void cpu_additive_scores_grad(const float *g, const float *T, const float *w, float *dq,
                              float *dk, float *dw, int B, int Q, int K, int h) {
  float *dt = __builtin_alloca(sizeof(float) * (size_t)h);
  for (int b = 0; b < B; b++)
    for (int i = 0; i < Q; i++)
      for (int j = 0; j < K; j++) {
        float gs = g[((size_t)b * Q + i) * K + j];
        const float *t = T + (((size_t)b * Q + i) * K + j) * h;
#pragma omp simd
        for (int c = 0; c < h; c++) dt[c] = gs * w[c] * (1.0f - t[c] * t[c]);
        if (dq) {
          float *x = dq + ((size_t)b * Q + i) * h;
          for (int c = 0; c < h; c++) x[c] += dt[c];
        }
        if (dk) {
          float *x = dk + ((size_t)b * K + j) * h;
          for (int c = 0; c < h; c++) x[c] += dt[c];
        }
        if (dw)
          for (int c = 0; c < h; c++) dw[c] += gs * t[c];
      }
}

/* out (B, Q, K); T (B, Q, K, h) or NULL: keeps the tanh values for the backward */
void cpu_additive_scores(const float *q_data, const float *kp_data, const float *w, float *out,
                         float *T, int B, int Q, int K, int h) {
  float *tmp = __builtin_alloca(sizeof(float) * (size_t)h);
  for (int b = 0; b < B; b++)
    for (int i = 0; i < Q; i++) {
      const float *qi = q_data + ((size_t)b * Q + i) * h;
      for (int j = 0; j < K; j++) {
        const float *kj = kp_data + ((size_t)b * K + j) * h;
        float *t = T ? T + (((size_t)b * Q + i) * K + j) * h : tmp;
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (int c = 0; c < h; c++) { /* hot */
          t[c] = fast_tanhf(qi[c] + kj[c]);
          s += w[c] * t[c];
        }
        out[((size_t)b * Q + i) * K + j] = s;
      }
    }
}
