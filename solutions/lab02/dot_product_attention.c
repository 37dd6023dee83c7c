/* Exercise 2.3 — scaled dot-product attention (reference solution; the spec is in
 * labs/lab02/dot_product_attention.c). */
#include <math.h>

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

Tensor *DotProductAttention_forward(DotProductAttention *a, Tensor *queries, Tensor *keys,
                                    Tensor *values, Tensor *valid_lens, bool training) {
  check_qkv("DotProductAttention_forward", queries, keys, values);
  if (keys->shape[2] != queries->shape[2]) {
    char sq[48], sk[48];
    tensor_error("DotProductAttention_forward",
                 "queries %s and keys %s must have the same length d (dim 2) to be dotted; for "
                 "different lengths project one of them first (or use AdditiveAttention)",
                 shape_str(queries, sq, sizeof sq), shape_str(keys, sk, sizeof sk));
  }
  const int d = queries->shape[2];
  /* Q K^T without a transposed copy of K, scaled so that scores keep unit variance */
  Tensor *scores = t_scale(t_bmm_nt(queries, keys), (float)(1.0 / sqrt((double)d))); /* (B, Q, K) */
  Tensor *weights = masked_softmax(scores, valid_lens);                           /* (B, Q, K) */
  if (!weights) return NULL;
  a->attention_weights = weights;
  return t_bmm(Dropout_forward(&a->dropout, weights, training), values); /* (B, Q, v) */
}
