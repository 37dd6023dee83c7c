/* rnn.c — d2l's multi-layer nn.GRU / nn.LSTM for lab 03, stepped with the exercises' cells
 * (gru_cell, lstm_cell). The fused cells the lab's fast path runs are in rnn_cell.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lab03/lab03.h"

void RNN_init(RNN *r, ParamSet *ps, const char *name, RnnKind kind, int input_size,
              int num_hiddens, int num_layers, float dropout) {
  if (input_size <= 0 || num_hiddens <= 0 || num_layers < 1 || num_layers > 8)
    tensor_error("RNN_init", "%s: input_size %d and num_hiddens %d must be positive and "
                 "num_layers %d in [1, 8]", name, input_size, num_hiddens, num_layers);
  if (!(dropout >= 0 && dropout < 1))
    tensor_error("RNN_init", "%s: dropout %g must be in [0, 1)", name, (double)dropout);
  memset(r, 0, sizeof *r);
  r->kind = kind;
  r->input_size = input_size;
  r->num_hiddens = num_hiddens;
  r->num_layers = num_layers;
  r->dropout = dropout;
  const int H = num_hiddens, G = (kind == RNN_GRU ? 3 : 4) * H;
  const float bound = 1.0f / sqrtf((float)H);
  char buf[256];
  for (int l = 0; l < num_layers; l++) {
    int in = l == 0 ? input_size : H;
    RNNLayerParams *p = &r->layer[l];
    snprintf(buf, sizeof buf, "%s.l%d.W_xh", name, l);
    p->W_xh = param_new(ps, buf, 2, (const int[]){in, G});
    snprintf(buf, sizeof buf, "%s.l%d.W_hh", name, l);
    p->W_hh = param_new(ps, buf, 2, (const int[]){H, G});
    snprintf(buf, sizeof buf, "%s.l%d.b_xh", name, l);
    p->b_xh = param_new(ps, buf, 1, (const int[]){G});
    snprintf(buf, sizeof buf, "%s.l%d.b_hh", name, l);
    p->b_hh = param_new(ps, buf, 1, (const int[]){G});
    /* d2l's xavier_init_weights on weight_ih (G, in) and weight_hh (G, H): fans in and G */
    init_xavier_uniform(p->W_xh, in, G);
    init_xavier_uniform(p->W_hh, H, G);
    init_uniform(p->b_xh, -bound, bound);
    init_uniform(p->b_hh, -bound, bound);
  }
}

/* One layer over the whole sequence, one exercise cell per step. X (T, B, in) -> (T, B, H);
 * *h, *c: the state before, then after. NULL when the cell is a stub. */
static Tensor *layer_forward(const RNN *r, const RNNLayerParams *p, Tensor *X, Tensor **h,
                             Tensor **c) {
  const int T = X->shape[0], B = X->shape[1], H = r->num_hiddens;
  Tensor *outs[512];
  for (int t = 0; t < T; t++) {
    Tensor *x = t_view(t_slice(X, 0, t, t + 1), B, X->shape[2]); /* (B, in) */
    *h = r->kind == RNN_GRU ? gru_cell(p, x, *h) : lstm_cell(p, x, *h, *c, c);
    if (!*h) return NULL;
    outs[t] = t_view(*h, 1, B, H); /* (1, B, H) */
  }
  return T == 1 ? outs[0] : t_concat(outs, T, 0); /* (T, B, H) */
}

Tensor *RNN_forward(const RNN *r, Tensor *X, const RNNState *state, RNNState *state_out,
                    bool training) {
  char s[64];
  if (!X || X->ndim != 3 || X->shape[2] != r->input_size || X->shape[0] > 512)
    tensor_error("RNN_forward", "X has shape %s, expected (num_steps <= 512, batch, %d)",
                 X ? shape_str(X, s, sizeof s) : "NULL", r->input_size);
  const int B = X->shape[1], H = r->num_hiddens;
  Tensor *inp = X; /* (T, B, in), then (T, B, H) */
  for (int l = 0; l < r->num_layers; l++) {
    Tensor *h = state ? state->H[l] : tensor_zeros(2, (const int[]){B, H});
    Tensor *c = r->kind == RNN_LSTM ? (state ? state->C[l] : tensor_zeros(2, (const int[]){B, H}))
                                    : NULL;
    Tensor *out = layer_forward(r, &r->layer[l], inp, &h, &c); /* (T, B, H) */
    if (!out) return NULL;
    state_out->H[l] = h;
    state_out->C[l] = c;
    inp = l + 1 < r->num_layers ? t_dropout(out, r->dropout, training) : out;
  }
  return inp; /* (T, B, H) */
}
