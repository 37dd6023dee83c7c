/* Exercise 7.4 — ViTMLP_forward (reference solution). See labs/lab07/vit_mlp.c for the spec.
 * The book's ViTMLP.forward, one op per line. */
#include "lab07/lab07.h"

Tensor *ViTMLP_forward(ViTMLP *m, Tensor *X, bool training) {
  if (!X) tensor_error("ViTMLP_forward", "X is NULL (did an unfinished exercise return NULL?)");
  Tensor *A = Linear_forward(&m->dense1, X);               /* (..., mlp_num_hiddens) */
  Tensor *G = Dropout_forward(&m->dropout1, t_gelu(A), training); /* (..., mlp_num_hiddens) */
  Tensor *Y = Linear_forward(&m->dense2, G);               /* (..., num_hiddens) */
  return Dropout_forward(&m->dropout2, Y, training);
}
