/* multihead.c — MultiHeadAttention_init (not an exercise; the forward pass and the two head
 * reshapes are exercises 4.1–4.3 in labs/lab04/). Labs 05–07 build their blocks on it. */
#include <stdio.h>

#include "lab04/lab04.h"

void MultiHeadAttention_init(MultiHeadAttention *m, ParamSet *ps, const char *name, int key_size,
                             int query_size, int value_size, int num_hiddens, int num_heads,
                             float dropout, bool bias) {
  const char *nm = name && *name ? name : "MultiHeadAttention";
  if (num_heads < 1 || num_hiddens < 1)
    tensor_error("MultiHeadAttention_init",
                 "%s: num_hiddens (%d) and num_heads (%d) must be positive", nm, num_hiddens,
                 num_heads);
  if (num_hiddens % num_heads != 0)
    tensor_error("MultiHeadAttention_init",
                 "%s: num_hiddens = %d is not divisible by num_heads = %d; every head gets "
                 "num_hiddens / num_heads features, so pick num_hiddens as a multiple of "
                 "num_heads",
                 nm, num_hiddens, num_heads);
  m->num_heads = num_heads;
  m->num_hiddens = num_hiddens;
  DotProductAttention_init(&m->attention, dropout);
  char buf[256];
  /* d2l's LazyLinear(num_hiddens, bias=bias) for each projection; W_o maps the concatenated
   * heads (num_hiddens) back to num_hiddens. */
  param_name(buf, sizeof buf, nm, "W_q");
  Linear_init(&m->W_q, ps, buf, query_size, num_hiddens, bias);
  param_name(buf, sizeof buf, nm, "W_k");
  Linear_init(&m->W_k, ps, buf, key_size, num_hiddens, bias);
  param_name(buf, sizeof buf, nm, "W_v");
  Linear_init(&m->W_v, ps, buf, value_size, num_hiddens, bias);
  param_name(buf, sizeof buf, nm, "W_o");
  Linear_init(&m->W_o, ps, buf, num_hiddens, num_hiddens, bias);
}
