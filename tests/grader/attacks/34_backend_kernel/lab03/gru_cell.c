/* Attack 34 (issue 25, route 6 by another door): the kit's own answer is reachable without a
 * symbol table. The kit's CPU backend table is a public global (common/backend.h:
 * cpu_backend, or backend_of(DEV_CPU)), and its rnn_cell entry is the fused GRU/LSTM step that
 * the chapters' fast path uses. This gru_cell projects the input with t_linear and lets that
 * kernel compute the rest. Against a runner that links the kit's fused kernels, this scores
 * lab03_gru_cell_forward (2 points). Expected: a runner's backend table points at stand-ins
 * (tests/grade/runner_traps.c) and the kernel is not in it: the call stops the test (crash),
 * 0/95. */
#include <stdlib.h>

#include "lab03/lab03.h"

#include "../../common/backend.h"

Tensor *gru_cell(const RNNLayerParams *p, Tensor *X, Tensor *H) {
  const int B = X->shape[0], Hd = H->shape[1], G = 3 * Hd;
  Tensor *gx = t_linear(X, p->W_xh, p->b_xh); /* (B, G) */
  float *act = calloc((size_t)B * G, sizeof(float)), *extra = calloc((size_t)B * Hd, sizeof(float));
  Tensor *out = tensor_new(2, (int[]){B, Hd}); /* (B, H) */
  cpu_backend.rnn_cell(CELL_GRU, gx->data, H->data, NULL, p->W_hh->data, p->b_hh->data, act,
                       extra, out->data, B, Hd);
  free(act), free(extra);
  return out;
}
