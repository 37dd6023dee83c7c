/* runner_traps.c — what a test runner has in place of the kit's fused kernels that compute an
 * exercise's answer: the GRU/LSTM cell (exercises 3.1, 3.2) and the additive attention scores
 * (3.3). The kit's CPU backend table points at them (cpu_backend.rnn_cell, ...), so without this
 * a submission could call them through cpu_backend or backend_of(). A runner is linked with
 * -Wl,--wrap for each name below (grade.mk): the table then points here, and the kernels
 * themselves (common/cpu/cpu_rnn.c, cpu_fused.c) are not in the runner at all. No graded test
 * needs them; a call stops the test. */
#include <stdio.h>
#include <stdlib.h>

#include "../../common/cpu/kernels.h"

static _Noreturn void trap(const char *name) {
  fprintf(stderr, "grade: %s is not in a test runner: the kit's fused kernel computes an "
                  "exercise's answer; build the exercise from the t_* ops\n", name);
  abort();
}

void __wrap_cpu_rnn_cell(CellKind kind, const float *gx, const float *Hp, const float *Cp,
                         const float *W_hh, const float *b_hh, float *act, float *extra,
                         float *out, int B, int H);
void __wrap_cpu_rnn_cell(CellKind kind, const float *gx, const float *Hp, const float *Cp,
                         const float *W_hh, const float *b_hh, float *act, float *extra,
                         float *out, int B, int H) {
  (void)kind, (void)gx, (void)Hp, (void)Cp, (void)W_hh, (void)b_hh, (void)act, (void)extra;
  (void)out, (void)B, (void)H;
  trap("cpu_rnn_cell");
}

void __wrap_cpu_rnn_cell_grad(CellKind kind, const float *dout, const float *act,
                              const float *extra, const float *Hp, const float *Cp,
                              const float *W_hh, float *dgh, float *dgx, float *dC, float *dH,
                              float *dW_hh, float *db_hh, int B, int H);
void __wrap_cpu_rnn_cell_grad(CellKind kind, const float *dout, const float *act,
                              const float *extra, const float *Hp, const float *Cp,
                              const float *W_hh, float *dgh, float *dgx, float *dC, float *dH,
                              float *dW_hh, float *db_hh, int B, int H) {
  (void)kind, (void)dout, (void)act, (void)extra, (void)Hp, (void)Cp, (void)W_hh, (void)dgh;
  (void)dgx, (void)dC, (void)dH, (void)dW_hh, (void)db_hh, (void)B, (void)H;
  trap("cpu_rnn_cell_grad");
}

void __wrap_cpu_additive_scores(const float *q, const float *kp, const float *w, float *out,
                                float *T, int B, int Q, int K, int h);
void __wrap_cpu_additive_scores(const float *q, const float *kp, const float *w, float *out,
                                float *T, int B, int Q, int K, int h) {
  (void)q, (void)kp, (void)w, (void)out, (void)T, (void)B, (void)Q, (void)K, (void)h;
  trap("cpu_additive_scores");
}

void __wrap_cpu_additive_scores_grad(const float *g, const float *T, const float *w, float *dq,
                                     float *dk, float *dw, int B, int Q, int K, int h);
void __wrap_cpu_additive_scores_grad(const float *g, const float *T, const float *w, float *dq,
                                     float *dk, float *dw, int B, int Q, int K, int h) {
  (void)g, (void)T, (void)w, (void)dq, (void)dk, (void)dw, (void)B, (void)Q, (void)K, (void)h;
  trap("cpu_additive_scores_grad");
}
