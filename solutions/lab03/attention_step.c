/* Exercise 3.3 — the decoder's attention step (reference solution; the spec is in
 * labs/lab03/attention_step.c). */
#include "lab03/lab03.h"

Tensor *additive_attention_cached(AdditiveAttention *a, Tensor *queries, Tensor *keys_proj,
                                  Tensor *values, Tensor *valid_lens, bool training) {
  char sq[48], sk[48], sv[48];
  if (!queries || !keys_proj || !values || queries->ndim != 3 || keys_proj->ndim != 3 ||
      values->ndim != 3 || queries->shape[0] != keys_proj->shape[0] ||
      values->shape[0] != keys_proj->shape[0] || values->shape[1] != keys_proj->shape[1] ||
      keys_proj->shape[2] != a->W_q.out || queries->shape[2] != a->W_q.in)
    tensor_error("additive_attention_cached",
                 "queries %s, keys_proj %s, values %s: expected (batch, queries, %d), "
                 "(batch, keys, %d) and (batch, keys, value_size)",
                 queries ? shape_str(queries, sq, sizeof sq) : "NULL",
                 keys_proj ? shape_str(keys_proj, sk, sizeof sk) : "NULL",
                 values ? shape_str(values, sv, sizeof sv) : "NULL", a->W_q.in, a->W_q.out);
  const int B = queries->shape[0], Q = queries->shape[1], K = keys_proj->shape[1];
  const int h = a->W_q.out;
  Tensor *q = Linear_forward(&a->W_q, queries); /* (B, Q, h) */
  Tensor *features = t_tanh(t_add(t_view(q, B, Q, 1, h), t_view(keys_proj, B, 1, K, h))); /* (B, Q, K, h) */
  Tensor *scores = t_view(Linear_forward(&a->w_v, features), B, Q, K); /* (B, Q, K) */
  Tensor *weights = masked_softmax(scores, valid_lens);                /* (B, Q, K) */
  if (!weights) return NULL;
  a->attention_weights = weights;
  return t_bmm(Dropout_forward(&a->dropout, weights, training), values); /* (B, Q, value_size) */
}
