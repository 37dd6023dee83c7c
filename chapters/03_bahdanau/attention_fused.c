/* attention_fused.c — the additive attention scores of the training path in one tape node:
 *     scores[b, i, j] = sum_c w_v[c] * tanh(q[b, i, c] + kp[b, j, c])
 * Exercise 3.3 builds the same numbers from generic ops (broadcast add, tanh, linear, each a
 * pass over a (batch, queries, keys, h) array forward and backward); here one loop does it and
 * keeps only the tanh values for the backward:
 *     dt = dscores[b, i, j] * w_v[c] * (1 - t^2),  dq += sum_j dt,  dkp += sum_i dt,
 *     dw_v[c] += sum_{b, i, j} dscores[b, i, j] * t. */
#include <string.h>

#include "../../common/fastmath.h"
#include "lab03/lab03.h"

static void scores_backward(Tensor *out) {
  Tensor *q = out->in[0], *kp = out->in[1], *wv = out->in[2];
  const float *T = out->aux; /* (B, Q, K, h) tanh values */
  const int B = q->shape[0], Q = q->shape[1], K = kp->shape[1], h = q->shape[2];
  float *dq = q->requires_grad ? tensor_grad(q) : NULL;
  float *dk = kp->requires_grad ? tensor_grad(kp) : NULL;
  float *dw = wv->requires_grad ? tensor_grad(wv) : NULL;
  const float *w = wv->data, *g = out->grad;
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

Tensor *additive_scores_fused(Tensor *q, Tensor *kp, Tensor *w_v) {
  const char *op = "additive_scores_fused";
  char s1[48], s2[48], s3[48];
  if (!q || !kp || !w_v || q->ndim != 3 || kp->ndim != 3 || q->shape[0] != kp->shape[0] ||
      q->shape[2] != kp->shape[2] || w_v->size != q->shape[2])
    tensor_error(op, "q %s, keys_proj %s, w_v %s: expected (batch, queries, h), (batch, keys, h) "
                 "and h weights", q ? shape_str(q, s1, sizeof s1) : "NULL",
                 kp ? shape_str(kp, s2, sizeof s2) : "NULL",
                 w_v ? shape_str(w_v, s3, sizeof s3) : "NULL");
  const int B = q->shape[0], Q = q->shape[1], K = kp->shape[1], h = q->shape[2];
  Tensor *out = tensor_new(3, (const int[]){B, Q, K}); /* (batch, queries, keys) */
  out->name = op;
  bool grad = ag_needs_grad(q, kp, w_v);
  float *T = grad ? arena_alloc(sizeof(float) * (size_t)B * Q * K * h) : NULL;
  float *tmp = __builtin_alloca(sizeof(float) * (size_t)h);
  const float *w = w_v->data;
  for (int b = 0; b < B; b++)
    for (int i = 0; i < Q; i++) {
      const float *qi = q->data + ((size_t)b * Q + i) * h;
      for (int j = 0; j < K; j++) {
        const float *kj = kp->data + ((size_t)b * K + j) * h;
        float *t = T ? T + (((size_t)b * Q + i) * K + j) * h : tmp;
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (int c = 0; c < h; c++) { /* hot */
          t[c] = fast_tanhf(qi[c] + kj[c]);
          s += w[c] * t[c];
        }
        out->data[((size_t)b * Q + i) * K + j] = s;
      }
    }
  if (grad) {
    out->aux = T;
    ag_record(out, scores_backward, q, kp, w_v);
  }
  return out;
}
