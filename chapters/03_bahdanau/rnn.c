/* rnn.c — GRU and LSTM for lab 03: the fused cell the models train with, and d2l's multi-layer
 * nn.GRU / nn.LSTM built on it.
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

#include "../../common/gemm.h"
#include "../../common/fastmath.h"
#include "lab03/lab03.h"

typedef struct CellSaved {
  RnnKind kind;
  int B, H, G;
  long gx_off;     /* offset of this step's rows inside gx (a (T, B, G) tensor or (B, G)) */
  Tensor *W_hh, *b_hh;
  float *act;      /* (B, G) gate activations */
  float *extra;    /* GRU: gh_n (B, H); LSTM: tanh(c') (B, H) */
} CellSaved;

static void rnn_cell_backward(Tensor *out) {
  const CellSaved *s = out->aux;
  Tensor *gx = out->in[0], *Hp = out->in[1], *Cp = out->in[2];
  const int B = s->B, H = s->H, G = s->G;
  const float *dout = out->grad;
  float *dgh = arena_alloc(sizeof(float) * (size_t)B * (size_t)G); /* (B, G) */
  float *dgx = gx->requires_grad ? tensor_grad(gx) + s->gx_off : NULL;
  float *dC = Cp && Cp->requires_grad ? tensor_grad(Cp) : NULL;
  for (int b = 0; b < B; b++) {
    /* restrict + `omp simd`: without them GCC leaves the gate loops scalar on every ISA
     * (tests/suites/vectorize.sh checks each loop marked hot) */
    const float *restrict a = s->act + (size_t)b * G, *restrict e = s->extra + (size_t)b * H;
    const float *restrict hp = Hp->data + (size_t)b * H;
    float *restrict dg = dgh + (size_t)b * G;
    if (s->kind == RNN_GRU) {
      const float *restrict dh = dout + (size_t)b * H;
#pragma omp simd
      for (int j = 0; j < H; j++) { /* hot */
        float r = a[j], z = a[H + j], n = a[2 * H + j];
        float dn = dh[j] * (1 - z), dz = dh[j] * (hp[j] - n);
        float dan = dn * (1 - n * n);
        float dar = dan * e[j] * r * (1 - r), daz = dz * z * (1 - z);
        dg[j] = dar;
        dg[H + j] = daz;
        dg[2 * H + j] = dan * r; /* gh_n enters as r * gh_n */
      }
      if (dgx) { /* gx's gradient is dg but with dan (not dan * r) for the n gate */
        float *restrict x = dgx + (size_t)b * G;
        for (int j = 0; j < 2 * H; j++) x[j] += dg[j]; /* hot */
        for (int j = 0; j < H; j++) { /* hot */
          float n = a[2 * H + j];
          x[2 * H + j] += dh[j] * (1 - a[H + j]) * (1 - n * n);
        }
      }
    } else {
      const float *restrict dh = dout + (size_t)b * 2 * H, *restrict dc_in = dh + H;
      const float *restrict cp = Cp->data + (size_t)b * H;
#pragma omp simd
      for (int j = 0; j < H; j++) { /* hot */
        float i = a[j], f = a[H + j], g = a[2 * H + j], o = a[3 * H + j], tc = e[j];
        float dc = dc_in[j] + dh[j] * o * (1 - tc * tc);
        dg[j] = dc * g * i * (1 - i);
        dg[H + j] = dc * cp[j] * f * (1 - f);
        dg[2 * H + j] = dc * i * (1 - g * g);
        dg[3 * H + j] = dh[j] * tc * o * (1 - o);
      }
      if (dC) {
        float *restrict x = dC + (size_t)b * H;
        for (int j = 0; j < H; j++) { /* hot */
          float tc = e[j], o = a[3 * H + j];
          x[j] += (dc_in[j] + dh[j] * o * (1 - tc * tc)) * a[H + j];
        }
      }
      if (dgx) {
        float *restrict x = dgx + (size_t)b * G;
        for (int j = 0; j < G; j++) x[j] += dg[j]; /* hot */
      }
    }
  }
  /* dh_prev = dgh @ W_hh^T (+ the direct path z * dh for the GRU); dW_hh += h^T dgh */
  if (Hp->requires_grad) {
    float *dH = tensor_grad(Hp);
    if (s->kind == RNN_GRU) {
      for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++)
          dH[(size_t)b * H + j] += dout[(size_t)b * H + j] * s->act[(size_t)b * G + H + j];
    }
    gemm(false, true, B, H, G, 1.0f, dgh, G, s->W_hh->data, G, 1.0f, dH, H);
  }
  if (s->W_hh->requires_grad)
    gemm(true, false, H, G, B, 1.0f, Hp->data, H, dgh, G, 1.0f, tensor_grad(s->W_hh), G);
  if (s->b_hh && s->b_hh->requires_grad) {
    float *db = tensor_grad(s->b_hh);
    for (int b = 0; b < B; b++)
      for (int j = 0; j < G; j++) db[j] += dgh[(size_t)b * G + j];
  }
}

/* gx: (B, G), or (T, B, G) with this step's rows at step t. */
static Tensor *cell_at(RnnKind kind, Tensor *gx, int t, Tensor *Hp, Tensor *Cp, Tensor *W_hh,
                       Tensor *b_hh) {
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

  long off = (long)t * B * G;
  float *act = arena_alloc(sizeof(float) * (size_t)B * (size_t)G);   /* (B, G) */
  float *extra = arena_alloc(sizeof(float) * (size_t)B * (size_t)H); /* (B, H) */
  /* act = h @ W_hh + b_hh first (gh), then overwritten by the activations row by row */
  gemm(false, false, B, G, H, 1.0f, Hp->data, H, W_hh->data, G, 0.0f, act, G);
  Tensor *out = kind == RNN_GRU ? tensor_new(2, (const int[]){B, H})
                                : tensor_new(2, (const int[]){B, 2 * H});
  out->name = "rnn_cell_fused";
  /* the gate loops are written branch-free over j with `omp simd` so they vectorize: a
   * scalar version of this loop was 45% of the training time in a profile */
  for (int b = 0; b < B; b++) {
    float *restrict a = act + (size_t)b * G, *restrict e = extra + (size_t)b * H;
    const float *restrict x = gx->data + off + (size_t)b * G;
    const float *restrict hp = Hp->data + (size_t)b * H;
    if (b_hh)
      for (int j = 0; j < G; j++) a[j] += b_hh->data[j];
    if (kind == RNN_GRU) {
      float *restrict h = out->data + (size_t)b * H;
#pragma omp simd
      for (int j = 0; j < H; j++) { /* hot */
        float ghn = a[2 * H + j];
        float r = fast_sigmoidf(x[j] + a[j]), z = fast_sigmoidf(x[H + j] + a[H + j]);
        float n = fast_tanhf(x[2 * H + j] + r * ghn);
        a[j] = r;
        a[H + j] = z;
        a[2 * H + j] = n;
        e[j] = ghn;
        h[j] = (1 - z) * n + z * hp[j];
      }
    } else {
      float *restrict h = out->data + (size_t)b * 2 * H, *restrict c = h + H;
      const float *restrict cp = Cp->data + (size_t)b * H;
#pragma omp simd
      for (int j = 0; j < H; j++) { /* hot */
        float i = fast_sigmoidf(a[j] + x[j]), f = fast_sigmoidf(a[H + j] + x[H + j]);
        float g = fast_tanhf(a[2 * H + j] + x[2 * H + j]), o = fast_sigmoidf(a[3 * H + j] + x[3 * H + j]);
        a[j] = i;
        a[H + j] = f;
        a[2 * H + j] = g;
        a[3 * H + j] = o;
        float cn = f * cp[j] + i * g, tc = fast_tanhf(cn);
        c[j] = cn;
        e[j] = tc;
        h[j] = o * tc;
      }
    }
  }
  if (ag_needs_grad(gx, Hp, Cp) || (ag_grad_enabled() && (W_hh->requires_grad ||
                                                          (b_hh && b_hh->requires_grad)))) {
    CellSaved *s = arena_alloc(sizeof *s);
    *s = (CellSaved){kind, B, H, G, off, W_hh, b_hh, act, extra};
    out->aux = s;
    ag_record(out, rnn_cell_backward, gx, Hp, Cp);
  }
  return out;
}

Tensor *rnn_cell_fused(RnnKind kind, Tensor *gx, Tensor *H, Tensor *C, Tensor *W_hh,
                       Tensor *b_hh) {
  return cell_at(kind, gx, 0, H, C, W_hh, b_hh);
}

/* ================================================================ multi-layer RNN */

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

/* One layer over the whole sequence: GX = X @ W_xh + b_xh for all steps in one product, then
 * the fused cell step by step. X (T, B, in) -> (T, B, H). */
static Tensor *layer_forward(const RNN *r, int l, Tensor *X, Tensor **Hs, Tensor **Cs) {
  const RNNLayerParams *p = &r->layer[l];
  const int T = X->shape[0], B = X->shape[1], H = r->num_hiddens;
  Tensor *outs[512];
  Tensor *h = *Hs, *c = *Cs;
  if (r->reference) { /* the exercises' readable cells, one step at a time */
    for (int t = 0; t < T; t++) {
      Tensor *x = t_view(t_slice(X, 0, t, t + 1), B, X->shape[2]); /* (B, in) */
      h = r->kind == RNN_GRU ? gru_cell(p, x, h) : lstm_cell(p, x, h, c, &c);
      if (!h) return NULL;
      outs[t] = t_view(h, 1, B, H);
    }
    *Hs = h;
    *Cs = c;
    return T == 1 ? outs[0] : t_concat(outs, T, 0);
  }
  Tensor *GX = t_linear(X, p->W_xh, p->b_xh); /* (T, B, G) */
  for (int t = 0; t < T; t++) {
    Tensor *o = cell_at(r->kind, GX, t, h, c, p->W_hh, p->b_hh);
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

Tensor *RNN_forward(const RNN *r, Tensor *X, const RNNState *state, RNNState *state_out,
                    bool training) {
  char s[64];
  if (!X || X->ndim != 3 || X->shape[2] != r->input_size || X->shape[0] > 512)
    tensor_error("RNN_forward", "X has shape %s, expected (num_steps <= 512, batch, %d)",
                 X ? shape_str(X, s, sizeof s) : "NULL", r->input_size);
  const int B = X->shape[1], H = r->num_hiddens;
  Tensor *inp = X;
  for (int l = 0; l < r->num_layers; l++) {
    Tensor *h = state ? state->H[l] : tensor_zeros(2, (const int[]){B, H});
    Tensor *c = r->kind == RNN_LSTM ? (state ? state->C[l] : tensor_zeros(2, (const int[]){B, H}))
                                    : NULL;
    Tensor *out = layer_forward(r, l, inp, &h, &c);
    if (!out) return NULL;
    state_out->H[l] = h;
    state_out->C[l] = c;
    inp = l + 1 < r->num_layers ? t_dropout(out, r->dropout, training) : out;
  }
  return inp;
}
