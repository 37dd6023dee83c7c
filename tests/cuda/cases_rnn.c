/* cases_rnn.c — lab 03's fused GRU/LSTM step (cuda/rnn.cu) against the CPU kernel
 * (common/cpu/cpu_rnn.c), through the chapter's front rnn_cell_fused: GRU and LSTM, with and
 * without b_hh. Shapes (batch, H): 1s, H around a warp (31, 32, 33), lab 03's batch of 64, and
 * an empty batch (nothing launched, no cuBLAS call: W_hh's gradient stays 0).
 * Every input wants its gradient (dgx, dH, dC, dW_hh, db_hh all compared), except in the last
 * two shapes: there H and C do not (the kernel's NULL dH / dC paths), or gx does not (dgx NULL). */
#include "../../chapters/03_bahdanau/seq2seq_attention_fast.h"
#include "cuda_check.h"

/* (3, 130): the LSTM's 520 gate columns outgrow a capped grid (make test's AL_CUDA_EMU_GRID_CAP) */
static const int shapes[][2] = {{1, 1},  {3, 31}, {64, 32}, {3, 33}, {64, 33}, {3, 130},
                                {0, 31}, {1, 31}, {3, 32},  {3, 33}};
enum { N = sizeof shapes / sizeof shapes[0], NO_DH = N - 2, NO_DGX = N - 1 };

static Tensor *rnn_case(CcRun *r, RnnKind kind, bool bias) {
  const int B = shapes[r->variant][0], H = shapes[r->variant][1];
  const int G = (kind == RNN_GRU ? 3 : 4) * H;
  bool dh = r->variant != NO_DH, dgx = r->variant != NO_DGX;
  cc_shape(r, "(B %d, H %d)%s", B, H, !dh ? " no dH, dC" : !dgx ? " no dgx" : "");
  /* pre-activations gx + h W_hh + b_hh within a few units: the gates away from saturation */
  Tensor *gx = cc_input(r, 2, (const int[]){B, G}, 51, -1, 1, dgx);   /* (batch, G) */
  Tensor *h = cc_input(r, 2, (const int[]){B, H}, 52, -1, 1, dh);     /* (batch, H) */
  Tensor *c = kind == RNN_LSTM ? cc_input(r, 2, (const int[]){B, H}, 53, -1, 1, dh) : NULL;
  Tensor *W = cc_input(r, 2, (const int[]){H, G}, 54, -0.3f, 0.3f, true); /* (H, G) */
  Tensor *b = bias ? cc_input(r, 1, &G, 55, -0.5f, 0.5f, true) : NULL;     /* (G) */
  return rnn_cell_fused(kind, gx, h, c, W, b); /* (batch, H), LSTM (batch, 2H) = [h' | c'] */
}
static Tensor *run_gru(CcRun *r) { return rnn_case(r, RNN_GRU, true); }
static Tensor *run_gru_nobias(CcRun *r) { return rnn_case(r, RNN_GRU, false); }
static Tensor *run_lstm(CcRun *r) { return rnn_case(r, RNN_LSTM, true); }
static Tensor *run_lstm_nobias(CcRun *r) { return rnn_case(r, RNN_LSTM, false); }

/* The products are float sums of H (forward) or G and B (backward) terms on the CPU, double in
 * the emulated cuBLAS; the gates use CUDA's expf/tanhf against the CPU's fast_* (a few ulps). */
#define WHY "sums of <= 520 terms in another order; expf/tanhf vs the CPU's fast_* (ulps)"
const CcCase cases_rnn[] = {
    {"rnn_cell (GRU)", N, run_gru, 1e-5f, WHY},
    {"rnn_cell (GRU, no b_hh)", N, run_gru_nobias, 1e-5f, WHY},
    {"rnn_cell (LSTM)", N, run_lstm, 1e-5f, WHY},
    {"rnn_cell (LSTM, no b_hh)", N, run_lstm_nobias, 1e-5f, WHY},
    {0},
};
