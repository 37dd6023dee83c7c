/* ops/attention.c — scaled dot-product attention as one tape node (t_attention_fused).
 * Kernels: cpu/cpu_attention.c, cuda/attention.cu (the `attention` entry: forward only).
 *
 * The forward never stores the (queries, keys) scores: that is the point of the fused kernel.
 * The backward recomputes them from Q and K with the table's own entries — the composed ops'
 * arithmetic (gemm_batched, sequence_mask, softmax, softmax_grad) on arena scratch:
 *     S = scale Q K^T, masked;  P = softmax(S);  dV += P^T dO;  dP = dO V^T;
 *     dS = P * (dP - <dP, P>);  dQ += scale dS K;  dK += scale dS^T Q.
 * A masked key has P = 0, so dS is 0 there without a mask of its own. */
#include <math.h>

#include "front.h"

typedef struct {
  Lens lens;   /* lens.len NULL: no mask */
  float scale; /* 1 / sqrt(d) */
} AttnSaved;

static void attention_backward(Tensor *out) {
  Tensor *Q = out->in[0], *K = out->in[1], *V = out->in[2];
  const AttnSaved *sv = out->aux;
  const Device dev = out->device;
  const int B = Q->shape[0], Tq = Q->shape[1], d = Q->shape[2], Tk = K->shape[1],
            dv = V->shape[2];
  const long rows = (long)B * Tq, sq = (long)Tq * Tk; /* sq: one batch's scores */
  if (rows == 0 || Tk == 0) return; /* every output was zeros: no gradient reaches Q, K, V */
  const float *dO = out->grad; /* (B, Tq, dv) */
  size_t bytes = sizeof(float) * (size_t)(rows * Tk);
  /* (B, Tq, Tk) each: S the scores, then dP; T the masked scores, then dS; P the weights */
  float *S = dev_alloc(dev, bytes), *T = dev_alloc(dev, bytes), *P = dev_alloc(dev, bytes);
  KERNEL(dev, gemm_batched, false, true, Tq, Tk, d, sv->scale, Q->data, d, (long)Tq * d,
         K->data, d, (long)Tk * d, 0.0f, S, Tk, sq, B);
  if (sv->lens.len)
    KERNEL(dev, sequence_mask, T, S, sv->lens.len, sv->lens.per, rows, Tk, -INFINITY);
  KERNEL(dev, softmax, sv->lens.len ? T : S, P, rows, Tk);
  bool fresh;
  if (V->requires_grad) { /* dV (Tk, dv) += P^T (Tk, Tq) dO (Tq, dv) */
    float *dV = tensor_grad_fresh(V, &fresh);
    KERNEL(dev, gemm_batched, true, false, Tk, dv, Tq, 1.0f, P, Tk, sq, dO, dv, (long)Tq * dv,
           fresh ? 0.0f : 1.0f, dV, dv, (long)Tk * dv, B);
  }
  if (!Q->requires_grad && !K->requires_grad) return;
  float *dP = S, *dS = T;
  KERNEL(dev, gemm_batched, false, true, Tq, Tk, dv, 1.0f, dO, dv, (long)Tq * dv, V->data, dv,
         (long)Tk * dv, 0.0f, dP, Tk, sq, B); /* dP (Tq, Tk) = dO (Tq, dv) V^T */
  KERNEL(dev, softmax_grad, P, dP, dS, rows, Tk, true);
  if (Q->requires_grad) { /* dQ (Tq, d) += scale dS (Tq, Tk) K (Tk, d) */
    float *dQ = tensor_grad_fresh(Q, &fresh);
    KERNEL(dev, gemm_batched, false, false, Tq, d, Tk, sv->scale, dS, Tk, sq, K->data, d,
           (long)Tk * d, fresh ? 0.0f : 1.0f, dQ, d, (long)Tq * d, B);
  }
  if (K->requires_grad) { /* dK (Tk, d) += scale dS^T (Tk, Tq) Q (Tq, d) */
    float *dK = tensor_grad_fresh(K, &fresh);
    KERNEL(dev, gemm_batched, true, false, Tk, d, Tq, sv->scale, dS, Tk, sq, Q->data, d,
           (long)Tq * d, fresh ? 0.0f : 1.0f, dK, d, (long)Tk * d, B);
  }
}

static void check_attention_shapes(const Tensor *Q, const Tensor *K, const Tensor *V) {
  const char *op = "t_attention_fused";
  char sq[64], sk[64], sv[64];
  need(op, "Q", Q);
  need(op, "K", K);
  need(op, "V", V);
  shape_str(Q, sq, sizeof sq);
  shape_str(K, sk, sizeof sk);
  shape_str(V, sv, sizeof sv);
  if (Q->ndim != 3 || K->ndim != 3 || V->ndim != 3)
    tensor_error(op, "needs Q (batch, queries, d), K (batch, keys, d), V (batch, keys, dv); got "
                 "%s, %s, %s", sq, sk, sv);
  if (K->shape[0] != Q->shape[0] || V->shape[0] != Q->shape[0] || K->shape[2] != Q->shape[2] ||
      V->shape[1] != K->shape[1])
    tensor_error(op, "Q %s, K %s, V %s do not fit: batches must match, K's d must be Q's, and "
                 "V must have K's number of keys", sq, sk, sv);
  tensor_same_device(op, Q, K, V);
}

Tensor *t_attention_fused(Tensor *Q, Tensor *K, Tensor *V, Tensor *valid_lens) {
  check_attention_shapes(Q, K, V);
  const int B = Q->shape[0], Tq = Q->shape[1], d = Q->shape[2], Tk = K->shape[1],
            dv = V->shape[2];
  AttnSaved sv = {.scale = d > 0 ? 1.0f / sqrtf((float)d) : 1.0f};
  if (valid_lens) {
    /* the (batch, queries, keys) scores this op never stores, as a shape for the lengths' check */
    Tensor scores = {.ndim = 3, .shape = {B, Tq, Tk}, .size = (long)B * Tq * Tk,
                     .device = Q->device, .name = "scores"};
    sv.lens = resolve_lens("t_attention_fused", &scores, valid_lens);
  }
  Tensor *out = new_on(Q, 3, (int[]){B, Tq, dv}, "attention_fused"); /* (batch, queries, dv) */
  KERNEL(Q->device, attention, Q->data, K->data, V->data, sv.lens.len, sv.lens.per, out->data, B,
         Tq, Tk, d, dv, sv.scale);
  if (ag_needs_grad(Q, K, V)) {
    AttnSaved *saved = arena_alloc(sizeof *saved);
    *saved = sv;
    out->aux = saved;
    ag_record(out, attention_backward, Q, K, V);
  }
  return out;
}
