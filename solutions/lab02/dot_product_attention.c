/* Exercise 2.3 — scaled dot-product attention (reference solution; the spec is in
 * labs/lab02/dot_product_attention.c). */
#include <math.h>

#include "attention_checks.h"
#include "lab02/lab02.h"

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
