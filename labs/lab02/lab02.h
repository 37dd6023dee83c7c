/* lab02.h — exercises of lab 02 (attention scoring functions) and the layers built on them.
 * Used again by labs 03–07: masked_softmax and the two attention layers are the student's own
 * code there when built with VARIANT=labs. The _init functions are not exercises; they live in
 * chapters/02_scoring_functions/attention.c. */
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

/* Exercise 2.4 — the 1/sqrt(d) experiment: the sample variance of q . k (of q . k / sqrt(d)
 * when scaled) over n pairs of vectors of dimension d with independent N(0, 1) entries drawn
 * from rng. NAN for d < 1 or n < 2. See labs/lab02/score_variance.c. */
double dot_product_score_variance(int d, int n, bool scaled, Rng *rng);

/* The kernel track: masked softmax written out as the loops and kernels the ops are made of.
 * Exercise 2.5 — masked softmax as a plain C loop, row by row (labs/lab02/masked_softmax_rows.c).
 * X, Y: (batch, queries, keys) floats, contiguous; valid_lens: NULL (no mask), (batch) ints
 * when lens_ndim == 1 (one per example), or (batch, queries) when lens_ndim == 2 (one per
 * query); each length in [0, keys]. Row (b, i) of Y is the softmax of its first len entries,
 * zeros after them, all zeros when len == 0. Returns 0 (the stub: -1, Y untouched). */
int masked_softmax_rows(const float *X, const int *valid_lens, int lens_ndim, int batch,
                        int queries, int keys, float *Y);
/* Its backward: dX = dL/dX from Y (the forward's output) and dY = dL/dY, all (batch, queries,
 * keys): per row dX_j = Y_j (dY_j - sum_k dY_k Y_k); masked keys (Y_j = 0) get 0. Returns 0
 * (the stub: -1, dX untouched). */
int masked_softmax_rows_backward(const float *Y, const float *dY, int batch, int queries,
                                 int keys, float *dX);

#endif
