/* kernels.h — the CPU kernels, one per entry of the Backend table (backend.h), with the
 * signatures every device's kernels have. cpu/cpu_backend.c puts them in the CPU's table. */
#ifndef AL_CPU_KERNELS_H
#define AL_CPU_KERNELS_H

#include "../backend.h"

/* cpu_elementwise.c */
void cpu_fill(float *x, float v, long n);
void cpu_acc(float *dst, const float *src, long n);
void cpu_binary(BinaryOp op, const Broadcast *bc, const float *a, const float *b, float *out);
void cpu_binary_grad(const Broadcast *bc, int x, float *gx, const float *g, const float *y,
                     float scale, bool store);
void cpu_div_grad_b(float *gb, const float *ga_sum, const float *b, long n);
void cpu_unary(UnaryOp op, float s, const float *x, float *y, long n);
void cpu_unary_grad(UnaryOp op, float s, const float *g, const float *x, const float *y,
                    float *ga, long n, bool fresh);
/* cpu_matmul.c (gemm and gemm_batched are gemm.h's) */
void cpu_bias_rows(float *Y, const float *b, int rows, int n);
void cpu_bias_grad(float *db, const float *dY, int rows, int n);
void cpu_linear_grad(const float *x, const float *W, const float *dY, float *dx, float dx_beta,
                     float *dW, float dW_beta, int rows, int in, int nout);
/* cpu_reduce.c */
void cpu_reduce(const float *a, float *out, long outer, long n, long inner, float scale);
void cpu_reduce_grad(float *ga, const float *g, long outer, long n, long inner, float scale);
void cpu_reduce_all(const float *a, long n, float scale, float *out1);
void cpu_reduce_all_grad(float *ga, const float *g1, float scale, long n, bool fresh);
/* cpu_softmax.c */
void cpu_softmax(const float *x, float *y, long rows, int keys);
void cpu_softmax_grad(const float *y, const float *g, float *dx, long rows, int keys, bool fresh);
void cpu_log_softmax(const float *x, float *y, long rows, int n);
void cpu_log_softmax_grad(const float *y, const float *g, float *dx, long rows, int n,
                          bool fresh);
void cpu_sequence_mask(float *dst, const float *src, const int *len, long per, long rows,
                       int keys, float v);
void cpu_sequence_mask_grad(float *dx, const float *g, const int *len, long per, long rows,
                            int keys, bool fresh);
void cpu_cross_entropy(const float *x, const int *label, const float *w, float *e, float *scale,
                       float *out, long rows, int V);
void cpu_cross_entropy_grad(float *dx, const float *g, const float *e, const float *scale,
                            const int *label, const float *w, long rows, int V, bool fresh);
void cpu_mse(const float *p, const float *t, long n, float *out1);
void cpu_mse_grad(float *dp, float *dt, const float *g1, const float *p, const float *t, long n);
/* cpu_nn.c */
void cpu_layer_norm(const float *x, const float *gamma, const float *beta, float *y,
                    float *stats, long rows, int D, float eps);
void cpu_layer_norm_grad(const float *x, const float *gamma, const float *stats, const float *g,
                         float *dx, float *dgamma, float *dbeta, long rows, int D, bool fresh);
void cpu_batch_norm(const float *x, const float *gamma, const float *beta, float *run_mean,
                    float *run_var, float *y, float *mean_rstd, long N, int C, bool training,
                    float momentum, float eps);
void cpu_batch_norm_grad(const float *x, const float *gamma, const float *mean_rstd,
                         const float *g, float *dx, float *dgamma, float *dbeta, long N, int C,
                         bool training);
void cpu_embedding(const float *W, const int *idx, float *out, long n, int D);
void cpu_embedding_grad(float *dW, const int *idx, const float *g, long n, int D);
void cpu_dropout(const float *x, float *y, uint8_t *keep, long n, uint32_t s0, uint32_t s1,
                 uint32_t thr, float scale);
void cpu_dropout_grad(float *dx, const float *g, const uint8_t *keep, float scale, long n,
                      bool fresh);
/* cpu_shape.c */
void cpu_permute(float *in, float *outp, const int *oshape, const long *sstride,
                 PermuteMode mode);
void cpu_copy_rows(float *dst, long dstride, const float *src, long sstride, long rows, long n,
                   bool add);
void cpu_repeat_interleave(const float *x, float *out, long outer, int n, int reps, long inner);
void cpu_repeat_interleave_grad(float *dx, const float *g, long outer, int n, int reps,
                                long inner);
void cpu_patchify(float *img, float *patches, const int *shape, int p, bool backward);
void cpu_index_ints(const float *x, int *out, long n, int max);
/* cpu_optim.c */
void cpu_sgd(float *w, const float *g, float lr, long n);
void cpu_adam(float *w, const float *g, float *m, float *v, long n, float b1, float b2,
              float step, float inv_sqrt_bc2, float eps);
double cpu_sum_squares(const float *g, long n);
void cpu_clip_grad(float *g, long n, float max_norm, float *norm);
/* cpu_attention.c: scaled dot-product attention in one pass (t_attention_fused) */
void cpu_attention(const float *Q, const float *K, const float *V, const int *len, long per,
                   float *O, int B, int Tq, int Tk, int d, int dv, float scale);
/* cpu_fused.c: the chapters' fused kernels */
void cpu_additive_scores(const float *q, const float *kp, const float *w, float *out, float *T,
                         int B, int Q, int K, int h);
void cpu_additive_scores_grad(const float *g, const float *T, const float *w, float *dq,
                              float *dk, float *dw, int B, int Q, int K, int h);
/* cpu_rnn.c */
void cpu_rnn_cell(CellKind kind, const float *gx, const float *Hp, const float *Cp,
                  const float *W_hh, const float *b_hh, float *act, float *extra, float *out,
                  int B, int H);
void cpu_rnn_cell_grad(CellKind kind, const float *dout, const float *act, const float *extra,
                       const float *Hp, const float *Cp, const float *W_hh, float *dgh,
                       float *dgx, float *dC, float *dH, float *dW_hh, float *db_hh, int B,
                       int H);

/* dst[0..n) = src[0..n) for short runs (a head's 8 or 16 features in transpose_qkv, a bias row)
 * in blocks of 8: each block is one vector move, where memcpy costs a library call per run. The
 * last block overlaps the one before instead of running a remainder loop. */
static inline void cpu_copy_run(float *restrict dst, const float *restrict src, int n) {
  if (n < 8) {
    for (int j = 0; j < n; j++) dst[j] = src[j];
    return;
  }
  int j = 0;
  for (; j + 8 <= n; j += 8)
    for (int k = 0; k < 8; k++) dst[j + k] = src[j + k];
  if (j < n)
    for (int k = 0; k < 8; k++) dst[n - 8 + k] = src[n - 8 + k];
}

#endif
