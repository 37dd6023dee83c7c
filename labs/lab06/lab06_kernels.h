/* lab06_kernels.h — the kernel exercises of lab 06 (the kernel track: cuda/README.md, "Kernel
 * exercises"). Declarations only, usable from C and from a .cu file (compiled by nvcc for a GPU
 * and as host C++ against the emulator, cuda/emu.h). Every pointer here is device memory: host
 * code never reads it. */
#ifndef LAB06_KERNELS_H
#define LAB06_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Exercise 6.8 — scaled dot-product attention in one kernel, FlashAttention-style
 * (labs/lab06/flash_attention.cu), the arithmetic of t_attention_fused:
 *   O[b, i] = sum_j softmax_j(scale * Q[b, i] . K[b, j]) V[b, j]   over the keys
 *   j < valid_lens[(b * queries + i) / rows_per_len]   (valid_lens NULL: every key)
 * a row with no valid key is zeros. Q (batch, queries, d), K (batch, keys, d), V (batch, keys,
 * dv), O (batch, queries, dv); valid lengths between 0 and keys (the front capped them);
 * 1 <= d, dv <= 64; batch, queries, keys >= 0. Return 0 once launched, -1 if not implemented. */
int flash_attention_cuda(const float *Q, const float *K, const float *V, const int *valid_lens,
                         long rows_per_len, float *O, int batch, int queries, int keys, int d,
                         int dv, float scale);

/* Exercise 6.7 — layer norm on the device (labs/lab06/layer_norm_kernel.cu), the arithmetic of
 * t_layer_norm (AddNorm's norm). x (rows, D): each row normalized over its D features,
 *   mean = sum_j x_j / D,  var = sum_j (x_j - mean)^2 / D,  rstd = 1 / sqrt(var + eps)
 *   y (rows, D) = (x - mean) * rstd * gamma + beta     (gamma, beta (D); NULL: 1 and 0)
 *   stats (rows, 2) = mean, rstd of each row            (kept for the backward)
 * Backward, g (rows, D) the gradient of y, xhat = (x - mean) * rstd, dxhat = g * gamma:
 *   dx = rstd * (dxhat - mean_j(dxhat) - xhat * mean_j(dxhat * xhat))
 *        stored when fresh, added to dx otherwise; dx NULL: not wanted
 *   dgamma (D) += sum over rows of g * xhat,  dbeta (D) += sum over rows of g  (each may be NULL)
 * rows, D >= 1 (the front checked them). Return 0 once launched, -1 if not implemented. */
int layer_norm_cuda(const float *x, const float *gamma, const float *beta, float *y,
                    float *stats, long rows, int D, float eps);
int layer_norm_grad_cuda(const float *x, const float *gamma, const float *stats, const float *g,
                         float *dx, float *dgamma, float *dbeta, long rows, int D, int fresh);

#ifdef __cplusplus
}
#endif
#endif
