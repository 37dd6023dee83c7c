/* Exercise 3.1 — one GRU step (reference solution; the spec is in labs/lab03/gru_cell.c). */
#include "lab03/lab03.h"

Tensor *gru_cell(const RNNLayerParams *p, Tensor *X, Tensor *H) {
  const int h = p->W_hh->shape[0];
  Tensor *gx = t_linear(X, p->W_xh, p->b_xh); /* (B, 3h): [r | z | n] input parts */
  Tensor *gh = t_linear(H, p->W_hh, p->b_hh); /* (B, 3h): [r | z | n] hidden parts */
  Tensor *r = t_sigmoid(t_add(t_slice(gx, 1, 0, h), t_slice(gh, 1, 0, h)));
  Tensor *z = t_sigmoid(t_add(t_slice(gx, 1, h, 2 * h), t_slice(gh, 1, h, 2 * h)));
  Tensor *n = t_tanh(t_add(t_slice(gx, 1, 2 * h, 3 * h), t_mul(r, t_slice(gh, 1, 2 * h, 3 * h))));
  /* h' = (1 - z) * n + z * h = n + z * (h - n) */
  return t_add(n, t_mul(z, t_sub(H, n))); /* (B, h) */
}
