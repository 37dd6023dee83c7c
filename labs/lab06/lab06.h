/* lab06.h — exercises of lab 06 (the Transformer) and the two small layers they belong to.
 * Only the exercises are declared here: the layers' _init functions are chapter code
 * (chapters/06_transformer/transformer.h), so labs/ never calls into chapters/. */
#ifndef LAB06_H
#define LAB06_H

#include "lab05/lab05.h"

/* Position-wise feed-forward network: the same two-layer MLP applied at every position. */
typedef struct PositionWiseFFN {
  Linear dense1; /* (in, ffn_num_hiddens), with bias */
  Linear dense2; /* (ffn_num_hiddens, ffn_num_outputs), with bias */
} PositionWiseFFN;
/* Exercise 6.1 — X (batch, steps, in) -> dense2(relu(dense1(X))) (batch, steps, ffn_num_outputs). */
Tensor *PositionWiseFFN_forward(const PositionWiseFFN *f, Tensor *X);

/* Residual connection followed by layer normalization. */
typedef struct AddNorm {
  Dropout dropout;
  LayerNorm ln; /* over the last dim (norm_shape) */
} AddNorm;
/* Exercise 6.2 — X, Y (batch, steps, d) -> LayerNorm(dropout(Y) + X) (batch, steps, d). */
Tensor *AddNorm_forward(const AddNorm *a, Tensor *X, Tensor *Y, bool training);

/* Exercise 6.3 — the decoder's causal mask as valid lengths for its self-attention.
 * The decoder's queries are num_queries consecutive target tokens whose first one sits at
 * position `offset` (0 for a whole target sequence; t when only token t is fed and tokens
 * 0..t-1 are in the key/value cache). Query i may attend to keys 0 .. offset + i, so
 * returns (batch, num_queries) with entry [b, i] = offset + i + 1. */
Tensor *causal_valid_lens(int batch, int num_queries, int offset);

#endif
