/* Exercise 2.2 — additive attention (reference solution; the spec is in
 * labs/lab02/additive_attention.c). */

#include "lab02/lab02.h"

/* The shape checks both attention layers share (each exercise file is compiled alone, so each
 * has its own copy). They run before any work so a wrong shape is reported in the layer's own
 * terms, not as a failure deep inside t_bmm. */
/* queries (B, Q, *), keys (B, K, *), values (B, K, *), all 3-D and sharing B and K. */
static inline void check_qkv(const char *layer, const Tensor *q, const Tensor *k,
                             const Tensor *v) {
  char sq[48], sk[48], sv[48];
  if (!q || !k || !v)
    tensor_error(layer, "queries, keys or values is NULL (did an unfinished exercise return "
                 "NULL?)");
  shape_str(q, sq, sizeof sq), shape_str(k, sk, sizeof sk), shape_str(v, sv, sizeof sv);
  if (q->ndim != 3 || k->ndim != 3 || v->ndim != 3)
    tensor_error(layer, "queries %s, keys %s and values %s must all be 3-D: (batch, queries, "
                 "query_size), (batch, keys, key_size), (batch, keys, value_size)", sq, sk, sv);
  if (k->shape[0] != q->shape[0] || v->shape[0] != q->shape[0])
    tensor_error(layer, "queries %s, keys %s and values %s have different batch sizes", sq, sk,
                 sv);
  if (v->shape[1] != k->shape[1])
    tensor_error(layer, "keys %s and values %s must pair up: the same number of keys (dim 1)",
                 sk, sv);
}

Tensor *AdditiveAttention_forward(AdditiveAttention *a, Tensor *queries, Tensor *keys,
                                  Tensor *values, Tensor *valid_lens, bool training) {
  check_qkv("AdditiveAttention_forward", queries, keys, values);
  if (queries->shape[2] != a->W_q.in || keys->shape[2] != a->W_k.in) {
    char sq[48], sk[48];
    tensor_error("AdditiveAttention_forward",
                 "queries %s and keys %s: the layer was built for query_size %d and key_size %d "
                 "(AdditiveAttention_init)", shape_str(queries, sq, sizeof sq),
                 shape_str(keys, sk, sizeof sk), a->W_q.in, a->W_k.in);
  }
  const int B = queries->shape[0], Q = queries->shape[1], K = keys->shape[1];
  const int h = a->W_q.out;
  Tensor *q = Linear_forward(&a->W_q, queries); /* (B, Q, h) */
  Tensor *k = Linear_forward(&a->W_k, keys);    /* (B, K, h) */
  /* every query plus every key: views (B, Q, 1, h) + (B, 1, K, h) broadcast to (B, Q, K, h) */
  Tensor *features = t_tanh(t_add(t_view(q, B, Q, 1, h), t_view(k, B, 1, K, h)));
  Tensor *scores = t_view(Linear_forward(&a->w_v, features), B, Q, K); /* (B, Q, K, 1) -> (B, Q, K) */
  Tensor *weights = masked_softmax(scores, valid_lens);                /* (B, Q, K) */
  if (!weights) return NULL;
  a->attention_weights = weights;
  return t_bmm(Dropout_forward(&a->dropout, weights, training), values); /* (B, Q, value_size) */
}
