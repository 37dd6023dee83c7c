/* Exercise 6.1 — PositionWiseFFN_forward (reference solution; the spec is in labs/lab06/ffn.c).
 * Linear_forward flattens the leading dims, so one GEMM per layer covers every position. */
#include "lab06/lab06.h"

Tensor *PositionWiseFFN_forward(const PositionWiseFFN *f, Tensor *X) {
  if (!X) return NULL;
  Tensor *H = t_relu(Linear_forward(&f->dense1, X)); /* (batch, steps, ffn_num_hiddens) */
  return Linear_forward(&f->dense2, H);              /* (batch, steps, ffn_num_outputs) */
}
