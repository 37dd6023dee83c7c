/* lab04.h — exercises of lab 04 (multi-head attention). Used again by labs 05–07.
 * MultiHeadAttention_init is not an exercise; it lives in
 * chapters/04_multihead_attention/multihead.c. */
#ifndef LAB04_H
#define LAB04_H

#include "lab02/lab02.h"

typedef struct MultiHeadAttention {
  int num_heads, num_hiddens;
  DotProductAttention attention; /* weights: (batch * num_heads, queries, keys) */
  Linear W_q, W_k, W_v, W_o;     /* W_q: (query_size, num_hiddens) ...; W_o: (num_hiddens, num_hiddens) */
} MultiHeadAttention;
void MultiHeadAttention_init(MultiHeadAttention *m, ParamSet *ps, const char *name, int key_size,
                             int query_size, int value_size, int num_hiddens, int num_heads,
                             float dropout, bool bias);

/* Exercise 4.1 — (batch, n, num_hiddens) -> (batch * num_heads, n, num_hiddens / num_heads):
 * head h of batch row b lands at row b * num_heads + h. */
Tensor *transpose_qkv(Tensor *X, int num_heads);
/* Exercise 4.2 — the inverse: (batch * num_heads, n, d) -> (batch, n, num_heads * d). */
Tensor *transpose_output(Tensor *X, int num_heads);
/* Exercise 4.3 — queries (batch, queries, query_size), keys (batch, keys, key_size), values
 * (batch, keys, value_size), valid_lens NULL, (batch) or (batch, queries) — repeated per head.
 * Returns (batch, queries, num_hiddens). */
Tensor *MultiHeadAttention_forward(MultiHeadAttention *m, Tensor *queries, Tensor *keys,
                                   Tensor *values, Tensor *valid_lens, bool training);

#endif
