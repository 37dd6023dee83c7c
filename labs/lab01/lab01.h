/* lab01.h — the exercises of lab01, attention pooling (Nadaraya–Watson kernel regression).
 *
 *   1.1 the four kernels (kernels.c)             gaussian_kernel, boxcar_kernel,
 *                                                constant_kernel, epanechnikov_kernel
 *   1.2 Nadaraya–Watson regression (nadaraya_watson.c)   nadaraya_watson
 *   1.3 parametric attention pooling (nw_kernel_regression.c) NWKernelRegression_forward
 *   1.4 leave-one-out keys and values (nw_kernel_regression.c) leave_one_out
 *
 * Stubs live in labs/lab01/, reference implementations in solutions/lab01/ (same files, same
 * signatures). chapters/01_attention_pooling/lab01.c uses them; tests/grade/lab01/ grades them.
 */
#ifndef AL_LAB01_H
#define AL_LAB01_H

#include "../../common/nn.h"

/* ---------- 1.1 kernels ----------
 * A kernel K scores how similar a query q and a key k are from their difference u = q - k.
 * Every kernel here has the same C signature: it fills out[i] = K(u[i]) for i < n and returns
 * out, or NULL when it is not implemented yet. `width` rescales the kernel (u -> u / width);
 * the book's kernels are width 1. The constant kernel ignores the width. */
typedef float *(*KernelFn)(const float *u, float *out, long n, double width);

/* exp(-u^2 / (2 width^2)): the Gaussian kernel without its 1/sqrt(2 pi) factor (it cancels
 * in the normalization). width is the sigma of section "Adapting Attention Pooling". */
float *gaussian_kernel(const float *u, float *out, long n, double width);
/* 1 when |u| < width, else 0. */
float *boxcar_kernel(const float *u, float *out, long n, double width);
/* 1 everywhere: every key gets the same weight, which is average pooling. */
float *constant_kernel(const float *u, float *out, long n, double width);
/* max(0, 1 - |u| / width). */
float *epanechnikov_kernel(const float *u, float *out, long n, double width);

/* ---------- 1.2 Nadaraya–Watson kernel regression ----------
 * x_train (n) are the keys, y_train (n) the values, queries (m) the inputs to predict at.
 * The attention weight of query i on key j is
 *     alpha_ij = K(q_i - x_j) / sum_l K(q_i - x_l)
 * and the prediction is y_hat_i = sum_j alpha_ij y_j.
 * Returns y_hat (m) and stores the weights (m, n) in *attention_weights (if not NULL).
 * A query whose kernel values are all zero (no key within the kernel's support: a boxcar far
 * from the data, a very narrow Gaussian that underflows) has no defined prediction: its row
 * of weights is all zeros, its y_hat is NAN, and it is counted in *n_unsupported (if not
 * NULL). Returns NULL when not implemented. */
Tensor *nadaraya_watson(Tensor *x_train, Tensor *y_train, Tensor *queries, KernelFn kernel,
                        double width, Tensor **attention_weights, int *n_unsupported);

/* ---------- 1.3 parametric attention pooling ----------
 * The book's NWKernelRegression: a Gaussian kernel whose distance is scaled by a learned w,
 *     alpha_ij = softmax_j(-((q_i - k_ij) w)^2 / 2),   y_hat_i = sum_j alpha_ij v_ij. */
typedef struct NWKernelRegression {
  Tensor *w;                 /* (1) the learned parameter (param_new; requires grad) */
  Tensor *attention_weights; /* (m, n) weights of the last forward (arena) */
} NWKernelRegression;

/* queries (m), keys (m, n), values (m, n) -> y_hat (m). Built from the differentiable ops of
 * common/ops.h so that ag_backward reaches net->w; sets net->attention_weights. Returns NULL
 * when not implemented. */
Tensor *NWKernelRegression_forward(NWKernelRegression *net, Tensor *queries, Tensor *keys,
                                   Tensor *values);

/* ---------- 1.4 leave-one-out keys and values ----------
 * x (n) -> (n, n - 1): row i holds every entry of x except x[i], in their original order
 * (the book's X_tile[(1 - eye(n)).bool()].reshape(n, -1)). Used for both keys and values so
 * that a training input never attends to itself. Needs n >= 2. Returns NULL when not
 * implemented. */
Tensor *leave_one_out(Tensor *x);

#endif
