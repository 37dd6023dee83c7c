/* Attack 20 (issue 25, route 2): the exercise header, laid over a checkout's labs/, solves the
 * exercise inside the graded test's own object: when included from a test (after grade.h),
 * masked_softmax becomes a macro for a working implementation here. The old build copied the
 * "kit's" headers from the working tree's labs/ (the student's files there) and shared the test
 * objects built against them with the reference run. Expected: the kit's pristine header is
 * used (the submission's is ignored and named), masked_softmax's tests score 0. */
#ifndef LAB02_H
#define LAB02_H

#include "../../common/nn.h"

/* Exercise 2.1 — masked softmax over the last axis.
 * X: (batch, queries, keys); valid_lens: NULL, (batch) or (batch, queries).
 * Keys at positions j >= valid_len get weight 0; a row with valid length 0 is all zeros.
 * Returns (batch, queries, keys), differentiable w.r.t. X. */
Tensor *masked_softmax(Tensor *X, Tensor *valid_lens);

/* Additive attention: a(q, k) = w_v^T tanh(W_q q + W_k k). */
typedef struct AdditiveAttention {
  Linear W_k;   /* (key_size, num_hiddens), no bias */
  Linear W_q;   /* (query_size, num_hiddens), no bias */
  Linear w_v;   /* (num_hiddens, 1), no bias */
  Dropout dropout;
  Tensor *attention_weights; /* (batch, queries, keys) of the last forward (arena) */
} AdditiveAttention;
void AdditiveAttention_init(AdditiveAttention *a, ParamSet *ps, const char *name, int key_size,
                            int query_size, int num_hiddens, float dropout);
/* Exercise 2.2 — queries (batch, queries, query_size), keys (batch, keys, key_size),
 * values (batch, keys, value_size), valid_lens as masked_softmax.
 * Returns (batch, queries, value_size); stores the weights in a->attention_weights. */
Tensor *AdditiveAttention_forward(AdditiveAttention *a, Tensor *queries, Tensor *keys,
                                  Tensor *values, Tensor *valid_lens, bool training);

/* Scaled dot-product attention: softmax(Q K^T / sqrt(d)) V. */
typedef struct DotProductAttention {
  Dropout dropout;
  Tensor *attention_weights; /* (batch, queries, keys) of the last forward (arena) */
} DotProductAttention;
void DotProductAttention_init(DotProductAttention *a, float dropout);
/* Exercise 2.3 — queries (batch, queries, d), keys (batch, keys, d), values (batch, keys, v).
 * Returns (batch, queries, v); stores the weights in a->attention_weights. */
Tensor *DotProductAttention_forward(DotProductAttention *a, Tensor *queries, Tensor *keys,
                                    Tensor *values, Tensor *valid_lens, bool training);

#ifdef AL_GRADE_H
static inline Tensor *attack20_masked_softmax(Tensor *X, Tensor *valid_lens) {
  return t_softmax(valid_lens ? t_sequence_mask(X, valid_lens, -INFINITY) : X);
}
#define masked_softmax(X, valid_lens) attack20_masked_softmax((X), (valid_lens))
#endif

#endif
