/* Exercise 4.3 — MultiHeadAttention_forward (reference solution). See
 * labs/lab04/multihead_attention.c for the spec. This is in the training loop of labs 06 and
 * 07: four GEMMs for the projections, one batched attention over batch * num_heads, and two
 * permute copies per projected tensor — no per-head loop. */
#include "lab04/lab04.h"

Tensor *MultiHeadAttention_forward(MultiHeadAttention *m, Tensor *queries, Tensor *keys,
                                   Tensor *values, Tensor *valid_lens, bool training) {
  const int H = m->num_heads;
  /* Project, then split the hidden dim into H heads that become extra batch rows. */
  Tensor *q = transpose_qkv(Linear_forward(&m->W_q, queries), H); /* (B*H, queries, h/H) */
  Tensor *k = transpose_qkv(Linear_forward(&m->W_k, keys), H);    /* (B*H, keys, h/H) */
  Tensor *v = transpose_qkv(Linear_forward(&m->W_v, values), H);  /* (B*H, keys, h/H) */
  if (!q || !k || !v) return NULL;
  /* Row b*H + h of the attention batch is head h of batch row b: repeat each length H times
   * in place ((B) -> (B*H), or (B, queries) -> (B*H, queries)). */
  if (valid_lens) valid_lens = t_repeat_interleave(valid_lens, H, 0);
  Tensor *out = DotProductAttention_forward(&m->attention, q, k, v, valid_lens, training);
  if (!out) return NULL;                                          /* (B*H, queries, h/H) */
  Tensor *concat = transpose_output(out, H);                      /* (B, queries, h) */
  if (!concat) return NULL;
  return Linear_forward(&m->W_o, concat);                         /* (B, queries, h) */
}
