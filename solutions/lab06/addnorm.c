/* Exercise 6.2 — AddNorm_forward (reference solution; the spec is in labs/lab06/addnorm.c). */
#include "lab06/lab06.h"

Tensor *AddNorm_forward(const AddNorm *a, Tensor *X, Tensor *Y, bool training) {
  if (!X || !Y) return NULL;
  if (!tensor_same_shape(X, Y)) {
    char sx[64], sy[64];
    tensor_error("AddNorm_forward",
                 "X %s and Y %s must have the same shape: Y is the sublayer's output for "
                 "input X, and the residual connection adds them",
                 shape_str(X, sx, sizeof sx), shape_str(Y, sy, sizeof sy));
  }
  Tensor *sum = t_add(Dropout_forward(&a->dropout, Y, training), X); /* (batch, steps, d) */
  return LayerNorm_forward(&a->ln, sum);                            /* (batch, steps, d) */
}
