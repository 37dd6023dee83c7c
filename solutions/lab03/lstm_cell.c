/* Exercise 3.2 — one LSTM step (reference solution; the spec is in labs/lab03/lstm_cell.c). */
#include "lab03/lab03.h"

Tensor *lstm_cell(const RNNLayerParams *p, Tensor *X, Tensor *H, Tensor *C, Tensor **C_new) {
  const int h = p->W_hh->shape[0];
  Tensor *a = t_add(t_linear(X, p->W_xh, p->b_xh), t_linear(H, p->W_hh, p->b_hh)); /* (B, 4h) */
  Tensor *i = t_sigmoid(t_slice(a, 1, 0, h));
  Tensor *f = t_sigmoid(t_slice(a, 1, h, 2 * h));
  Tensor *g = t_tanh(t_slice(a, 1, 2 * h, 3 * h));
  Tensor *o = t_sigmoid(t_slice(a, 1, 3 * h, 4 * h));
  Tensor *c = t_add(t_mul(f, C), t_mul(i, g)); /* (B, h) */
  if (C_new) *C_new = c;
  return t_mul(o, t_tanh(c)); /* (B, h) */
}
