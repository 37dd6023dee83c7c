/* rnn_cell.c — lab 03's fast path for the GRU and LSTM: the fused cell, and d2l's multi-layer
 * nn.GRU / nn.LSTM run with it (the readable one, with the exercises' cells, is rnn.c). The
 * cell's loops are the device's rnn_cell kernel (common/cpu/cpu_rnn.c on the CPU); here is its
 * front: checks, output, tape.
 *
 * Why fused: written with the generic ops (exercises 3.1 and 3.2), one GRU step is about 15
 * tape nodes, each a pass over small (batch, H) arrays. Here the whole step — h @ W_hh + b_hh,
 * the gates, the new state — is one node whose backward is written out by hand, and the input
 * projection x @ W_xh + b_xh is done by the caller for all time steps in one GEMM.
 *
 * GRU (PyTorch's form, gates [r | z | n]):
 *   r = sigma(gx_r + gh_r), z = sigma(gx_z + gh_z), n = tanh(gx_n + r * gh_n),
 *   h' = (1 - z) * n + z * h,           gh = h @ W_hh + b_hh.
 * LSTM (gates [i | f | g | o]): a = gx + h @ W_hh + b_hh,
 *   i, f, o = sigma(a_i, a_f, a_o), g = tanh(a_g), c' = f * c + i * g, h' = o * tanh(c').
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../common/backend.h"
#include "seq2seq_attention_fast.h"

typedef struct CellSaved {
  RnnKind kind;
  int B, H, G;
  long gx_off;     /* offset of this step's rows inside gx (a (T, B, G) tensor or (B, G)) */
  Tensor *W_hh, *b_hh;
  bool h_zero;     /* the step started from the zero state: h @ W_hh was skipped, dW_hh gets 0 */
  float *act;      /* (B, G) gate activations */
  float *extra;    /* GRU: gh_n (B, H); LSTM: tanh(c') (B, H) */
} CellSaved;

static void rnn_cell_backward(Tensor *out) {
  const CellSaved *s = out->aux;
  Tensor *gx = out->in[0], *Hp = out->in[1], *Cp = out->in[2];
  const Device dev = out->device;
  float *dgh = dev_alloc(dev, sizeof(float) * (size_t)s->B * (size_t)s->G); /* (B, G) scratch */
  float *dgx = gx->requires_grad ? tensor_grad(gx) + s->gx_off : NULL;
  float *dC = Cp && Cp->requires_grad ? tensor_grad(Cp) : NULL;
  float *dH = Hp->requires_grad ? tensor_grad(Hp) : NULL;
  float *dW = s->W_hh->requires_grad && !s->h_zero ? tensor_grad(s->W_hh) : NULL;
  float *db = s->b_hh && s->b_hh->requires_grad ? tensor_grad(s->b_hh) : NULL;
  KERNEL(dev, rnn_cell_grad, s->kind == RNN_GRU ? CELL_GRU : CELL_LSTM, out->grad, s->act,
         s->extra, Hp->data, Cp ? Cp->data : NULL, s->W_hh->data, dgh, dgx, dC, dH, dW, db,
         s->B, s->H);
}

/* gx: (B, G), or (T, B, G) with this step's rows at step t. h_zero: Hp holds zeros (the first
 * step from the zero state), so the kernel skips h @ W_hh, and the backward Hp^T @ dgh: both 0. */
static Tensor *cell_at(RnnKind kind, Tensor *gx, int t, Tensor *Hp, Tensor *Cp, Tensor *W_hh,
                       Tensor *b_hh, bool h_zero) {
  const char *op = kind == RNN_GRU ? "rnn_cell_fused (GRU)" : "rnn_cell_fused (LSTM)";
  if (!gx || !Hp || !W_hh) tensor_error(op, "NULL input (gx, H and W_hh are required)");
  char s1[64], s2[64];
  if (Hp->ndim != 2) tensor_error(op, "H has shape %s, expected (batch, H)", shape_str(Hp, s1, sizeof s1));
  const int B = Hp->shape[0], H = Hp->shape[1], G = (kind == RNN_GRU ? 3 : 4) * H;
  bool gx_ok = (gx->ndim == 2 && gx->shape[0] == B && gx->shape[1] == G && t == 0) ||
               (gx->ndim == 3 && gx->shape[1] == B && gx->shape[2] == G && t >= 0 &&
                t < gx->shape[0]);
  if (!gx_ok)
    tensor_error(op, "gx has shape %s and H %s: gx must be (batch, %d) (= %d gates x H)",
                 shape_str(gx, s1, sizeof s1), shape_str(Hp, s2, sizeof s2), G, G / H);
  if (W_hh->ndim != 2 || W_hh->shape[0] != H || W_hh->shape[1] != G)
    tensor_error(op, "W_hh has shape %s, expected (%d, %d)", shape_str(W_hh, s1, sizeof s1), H, G);
  if (b_hh && (b_hh->ndim != 1 || b_hh->shape[0] != G))
    tensor_error(op, "b_hh has shape %s, expected (%d)", shape_str(b_hh, s1, sizeof s1), G);
  if (kind == RNN_GRU && Cp) tensor_error(op, "a GRU has no cell state: pass C = NULL");
  if (kind == RNN_LSTM && (!Cp || !tensor_same_shape(Cp, Hp)))
    tensor_error(op, "the LSTM needs C with H's shape %s", shape_str(Hp, s1, sizeof s1));

  tensor_same_device(op, gx, Hp, W_hh);
  tensor_same_device(op, gx, Cp, b_hh);
  const Device dev = gx->device;
  long off = (long)t * B * G;
  float *act = dev_alloc(dev, sizeof(float) * (size_t)B * (size_t)G);   /* (B, G) */
  float *extra = dev_alloc(dev, sizeof(float) * (size_t)B * (size_t)H); /* (B, H) */
  Tensor *out = kind == RNN_GRU ? tensor_new_on(dev, 2, (const int[]){B, H})
                                : tensor_new_on(dev, 2, (const int[]){B, 2 * H});
  out->name = "rnn_cell_fused";
  /* act = h @ W_hh + b_hh, then the gates and the new state, in one kernel */
  KERNEL(dev, rnn_cell, kind == RNN_GRU ? CELL_GRU : CELL_LSTM, gx->data + off, Hp->data,
         Cp ? Cp->data : NULL, h_zero ? NULL : W_hh->data, b_hh ? b_hh->data : NULL, act, extra,
         out->data, B, H);
  if (ag_needs_grad(gx, Hp, Cp) || (ag_grad_enabled() && (W_hh->requires_grad ||
                                                          (b_hh && b_hh->requires_grad)))) {
    CellSaved *s = arena_alloc(sizeof *s);
    *s = (CellSaved){kind, B, H, G, off, W_hh, b_hh, h_zero, act, extra};
    out->aux = s;
    ag_record(out, rnn_cell_backward, gx, Hp, Cp);
  }
  return out;
}

Tensor *rnn_cell_fused(RnnKind kind, Tensor *gx, Tensor *H, Tensor *C, Tensor *W_hh,
                       Tensor *b_hh) {
  return cell_at(kind, gx, 0, H, C, W_hh, b_hh, false);
}

/* ================================================================ multi-layer RNN */

/* One layer over the whole sequence: GX = X @ W_xh + b_xh for all steps in one product (or GX
 * as given), then the fused cell step by step. X (T, B, in) -> (T, B, H). */
static Tensor *layer_forward(const RNN *r, int l, Tensor *X, Tensor *GX, Tensor **Hs,
                             Tensor **Cs, bool from_zero) {
  const RNNLayerParams *p = &r->layer[l];
  const int H = r->num_hiddens;
  if (!GX) GX = t_linear(X, p->W_xh, p->b_xh); /* (T, B, G) */
  const int T = GX->shape[0], B = GX->shape[1];
  Tensor *outs[512];
  Tensor *h = *Hs, *c = *Cs;
  for (int t = 0; t < T; t++) {
    Tensor *o = cell_at(r->kind, GX, t, h, c, p->W_hh, p->b_hh, from_zero && t == 0);
    if (r->kind == RNN_LSTM) {
      h = t_slice(o, 1, 0, H);      /* (B, H) */
      c = t_slice(o, 1, H, 2 * H);  /* (B, H) */
    } else {
      h = o;
    }
    outs[t] = t_view(h, 1, B, H);
  }
  *Hs = h;
  *Cs = c;
  return T == 1 ? outs[0] : t_concat(outs, T, 0); /* (T, B, H) */
}

Tensor *RNN_forward_fused(const RNN *r, Tensor *X, Tensor *GX0, const RNNState *state,
                          RNNState *state_out, bool training) {
  char s[64];
  const int G = (r->kind == RNN_GRU ? 3 : 4) * r->num_hiddens;
  if (GX0 ? GX0->ndim != 3 || GX0->shape[2] != G || GX0->shape[0] > 512
          : !X || X->ndim != 3 || X->shape[2] != r->input_size || X->shape[0] > 512)
    tensor_error("RNN_forward_fused", "%s has shape %s, expected (num_steps <= 512, batch, %d)",
                 GX0 ? "GX0" : "X", GX0 || X ? shape_str(GX0 ? GX0 : X, s, sizeof s) : "NULL",
                 GX0 ? G : r->input_size);
  const int B = (GX0 ? GX0 : X)->shape[1], H = r->num_hiddens;
  Tensor *inp = X;
  for (int l = 0; l < r->num_layers; l++) {
    Tensor *h = state ? state->H[l] : tensor_zeros(2, (const int[]){B, H});
    Tensor *c = r->kind == RNN_LSTM ? (state ? state->C[l] : tensor_zeros(2, (const int[]){B, H}))
                                    : NULL;
    Tensor *out = layer_forward(r, l, inp, l == 0 ? GX0 : NULL, &h, &c, !state);
    state_out->H[l] = h;
    state_out->C[l] = c;
    inp = l + 1 < r->num_layers ? t_dropout(out, r->dropout, training) : out;
  }
  return inp; /* (T, B, H) */
}
