/* attention_checks.h — the shape checks both attention layers share (solutions only). They run
 * before any work so a wrong shape is reported in the layer's own terms, not as a failure deep
 * inside t_bmm. */
#ifndef LAB02_ATTENTION_CHECKS_H
#define LAB02_ATTENTION_CHECKS_H

#include "lab02/lab02.h"

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

#endif
