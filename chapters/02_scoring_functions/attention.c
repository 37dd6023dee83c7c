/* attention.c — construction of lab 02's attention layers (not exercises: their forward passes
 * are, in labs/lab02/). Labs 03–07 call these too, so they live in libchap.a. */
#include <math.h>
#include <stdio.h>

#include "lab02/lab02.h"

/* The dropout probability is checked here, once, rather than on every forward pass. */
static void check_dropout(const char *layer, float p) {
  if (!(p >= 0 && p < 1))
    tensor_error(layer, "dropout = %g must be in [0, 1): it is the probability of zeroing a "
                 "weight", (double)p);
}

void AdditiveAttention_init(AdditiveAttention *a, ParamSet *ps, const char *name, int key_size,
                            int query_size, int num_hiddens, float dropout) {
  const char *n = name && *name ? name : "AdditiveAttention";
  if (key_size <= 0 || query_size <= 0 || num_hiddens <= 0)
    tensor_error("AdditiveAttention_init",
                 "%s: key_size, query_size and num_hiddens must be positive, got %d, %d, %d", n,
                 key_size, query_size, num_hiddens);
  check_dropout("AdditiveAttention_init", dropout);
  char buf[256];
  /* parameters "<name>.W_k.W", "<name>.W_q.W", "<name>.w_v.W"; no biases, as in the book */
  param_name(buf, sizeof buf, n, "W_k");
  Linear_init(&a->W_k, ps, buf, key_size, num_hiddens, false);
  param_name(buf, sizeof buf, n, "W_q");
  Linear_init(&a->W_q, ps, buf, query_size, num_hiddens, false);
  param_name(buf, sizeof buf, n, "w_v");
  Linear_init(&a->w_v, ps, buf, num_hiddens, 1, false);
  a->dropout.p = dropout;
  a->attention_weights = NULL;
}

void DotProductAttention_init(DotProductAttention *a, float dropout) {
  check_dropout("DotProductAttention_init", dropout);
  a->dropout.p = dropout;
  a->attention_weights = NULL;
}
