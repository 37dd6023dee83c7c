/* cpu_rnn.c — the CPU kernels of lab 03's fused recurrent cell. Its front, and the multi-layer
 * nn.GRU / nn.LSTM built on it, are in chapters/03_bahdanau/rnn_cell.c.
 *
 * One GRU or LSTM step as one kernel: gh = h @ W_hh + b_hh, the gates and the new state; the
 * backward is written out by hand. The input projection x @ W_xh + b_xh is done by the caller
 * for all time steps in one GEMM.
 *
 * GRU (PyTorch's form, gates [r | z | n]):
 *   r = sigma(gx_r + gh_r), z = sigma(gx_z + gh_z), n = tanh(gx_n + r * gh_n),
 *   h' = (1 - z) * n + z * h,           gh = h @ W_hh + b_hh.
 * LSTM (gates [i | f | g | o]): a = gx + h @ W_hh + b_hh,
 *   i, f, o = sigma(a_i, a_f, a_o), g = tanh(a_g), c' = f * c + i * g, h' = o * tanh(c').
 */
#include <string.h>

#include "../fastmath.h"
#include "../gemm.h"
#include "kernels.h"

/* act (B, G) and extra (B, H): what the forward kept; dgh (B, G): scratch; dgx, dC, dH, dW_hh,
 * db_hh: the gradients to add into, NULL when not wanted. */
void cpu_rnn_cell_grad(CellKind kind, const float *dout, const float *act, const float *extra,
                       const float *Hp, const float *Cp, const float *W_hh,
                       float *dgh, float *dgx, float *dC, float *dH, float *dW_hh, float *db_hh,
                       int B, int H) {
  const int G = (kind == CELL_GRU ? 3 : 4) * H;
  for (int b = 0; b < B; b++) {
    /* restrict + `omp simd`, no `if` inside: without them GCC leaves the gate loops scalar
     * on every ISA (tests/suites/vectorize.sh checks each loop marked hot) */
    const float *restrict a = act + (size_t)b * G, *restrict e = extra + (size_t)b * H;
    const float *restrict hp = Hp + (size_t)b * H;
    float *restrict dg = dgh + (size_t)b * G;
    if (kind == CELL_GRU) {
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
      const float *restrict cp = Cp + (size_t)b * H;
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
  if (dH) {
    if (kind == CELL_GRU) {
      for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++)
          dH[(size_t)b * H + j] += dout[(size_t)b * H + j] * act[(size_t)b * G + H + j];
    }
    gemm(false, true, B, H, G, 1.0f, dgh, G, W_hh, G, 1.0f, dH, H);
  }
  if (dW_hh)
    gemm(true, false, H, G, B, 1.0f, Hp, H, dgh, G, 1.0f, dW_hh, G);
  if (db_hh) {
    float *db = db_hh;
    for (int b = 0; b < B; b++)
      for (int j = 0; j < G; j++) db[j] += dgh[(size_t)b * G + j];
  }
}

/* gx (B, G): this step's input projections; Hp, Cp (B, H) (Cp NULL for the GRU); b_hh may be
 * NULL. out: (B, H) for the GRU, (B, 2H) = [h' | c'] for the LSTM; act (B, G) and extra (B, H)
 * are kept for the backward. */
void cpu_rnn_cell(CellKind kind, const float *gx, const float *Hp, const float *Cp,
                  const float *W_hh, const float *b_hh, float *act, float *extra,
                  float *out, int B, int H) {
  const int G = (kind == CELL_GRU ? 3 : 4) * H;
  /* act = h @ W_hh + b_hh first (gh), then overwritten by the activations row by row; no
   * W_hh: h is the zero state, so h @ W_hh is 0 */
  if (W_hh)
    gemm(false, false, B, G, H, 1.0f, Hp, H, W_hh, G, 0.0f, act, G);
  else
    memset(act, 0, sizeof(float) * (size_t)B * (size_t)G);
  /* the gate loops are written branch-free over j with `omp simd` so they vectorize: a
   * scalar version of this loop dominated lab03's training step */
  for (int b = 0; b < B; b++) {
    float *restrict a = act + (size_t)b * G, *restrict e = extra + (size_t)b * H;
    const float *restrict x = gx + (size_t)b * G;
    const float *restrict hp = Hp + (size_t)b * H;
    if (b_hh)
      for (int j = 0; j < G; j++) a[j] += b_hh[j];
    if (kind == CELL_GRU) {
      float *restrict h = out + (size_t)b * H;
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
      float *restrict h = out + (size_t)b * 2 * H, *restrict c = h + H;
      const float *restrict cp = Cp + (size_t)b * H;
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
}
