/* additive_scores.c — the additive attention scores of the training path in one tape node:
 *     scores[b, i, j] = sum_c w_v[c] * tanh(q[b, i, c] + kp[b, j, c])
 * Exercise 3.3 builds the same numbers from generic ops (broadcast add, tanh, linear, each a
 * pass over a (batch, queries, keys, h) array forward and backward); here one kernel does it and
 * keeps only the tanh values for the backward:
 *     dt = dscores[b, i, j] * w_v[c] * (1 - t^2),  dq += sum_j dt,  dkp += sum_i dt,
 *     dw_v[c] += sum_{b, i, j} dscores[b, i, j] * t.
 * This is the op's front (checks, output, tape); the loops are the device's additive_scores
 * kernel (common/cpu/cpu_fused.c on the CPU). */
#include "../../common/backend.h"
#include "seq2seq_attention_fast.h"

static void scores_backward(Tensor *out) {
  Tensor *q = out->in[0], *kp = out->in[1], *wv = out->in[2];
  const int B = q->shape[0], Q = q->shape[1], K = kp->shape[1], h = q->shape[2];
  float *dq = q->requires_grad ? tensor_grad(q) : NULL;
  float *dk = kp->requires_grad ? tensor_grad(kp) : NULL;
  float *dw = wv->requires_grad ? tensor_grad(wv) : NULL;
  KERNEL(out->device, additive_scores_grad, out->grad, out->aux, wv->data, dq, dk, dw, B, Q, K,
         h);
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
  tensor_same_device(op, q, kp, w_v);
  const int B = q->shape[0], Q = q->shape[1], K = kp->shape[1], h = q->shape[2];
  Tensor *out = tensor_new_on(q->device, 3, (const int[]){B, Q, K}); /* (batch, queries, keys) */
  out->name = op;
  bool grad = ag_needs_grad(q, kp, w_v);
  /* (B, Q, K, h) tanh values, kept for the backward */
  float *T = grad ? dev_alloc(q->device, sizeof(float) * (size_t)B * Q * K * h) : NULL;
  KERNEL(q->device, additive_scores, q->data, kp->data, w_v->data, out->data, T, B, Q, K, h);
  if (grad) {
    out->aux = T;
    ag_record(out, scores_backward, q, kp, w_v);
  }
  return out;
}
