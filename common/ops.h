/* ops.h — differentiable tensor ops. Every op returns a new arena tensor, checks its shapes
 * (tensor_error names the op and both shapes), and records a backward when an input requires
 * grad. The fronts (common/ops/) do that once for every device and call the arithmetic through
 * the kernel table of the inputs' device (backend.h): common/cpu/ for the CPU, cuda/ beside it.
 * An op's inputs must sit on one device (an error names the op and both devices).
 * Index-like inputs (token ids, labels, valid lengths) are float tensors holding integers,
 * as d2l passes them; they never receive gradient.
 */
#ifndef AL_OPS_H
#define AL_OPS_H

#include "tensor.h"

/* ---------- elementwise, NumPy broadcasting (ops/elementwise.c) ---------- */
Tensor *t_add(Tensor *a, Tensor *b);
Tensor *t_sub(Tensor *a, Tensor *b);
Tensor *t_mul(Tensor *a, Tensor *b);
Tensor *t_div(Tensor *a, Tensor *b);
Tensor *t_scale(Tensor *a, float s);        /* a * s */
Tensor *t_add_scalar(Tensor *a, float s);   /* a + s */
Tensor *t_neg(Tensor *a);
Tensor *t_exp(Tensor *a);
Tensor *t_log(Tensor *a);
Tensor *t_square(Tensor *a);
Tensor *t_tanh(Tensor *a);
Tensor *t_sigmoid(Tensor *a);
Tensor *t_relu(Tensor *a);
Tensor *t_gelu(Tensor *a);                  /* exact erf form, as torch.nn.GELU() */

/* ---------- matrix products (ops/matmul.c; every product is a gemm kernel) ---------- */
Tensor *t_matmul(Tensor *a, Tensor *b);     /* (m,k) @ (k,n) -> (m,n) */
Tensor *t_bmm(Tensor *a, Tensor *b);        /* (B,m,k) @ (B,k,n) -> (B,m,n) */
Tensor *t_bmm_nt(Tensor *a, Tensor *b);     /* (B,m,k) @ (B,n,k)^T -> (B,m,n), e.g. Q K^T */
/* x (..., in) @ W (in, out) + b (out) -> (..., out); b may be NULL. */
Tensor *t_linear(Tensor *x, Tensor *W, Tensor *b);

/* ---------- reductions (ops/reduce.c) ---------- */
Tensor *t_sum(Tensor *a, int dim, bool keepdim);   /* dim may be negative */
Tensor *t_mean(Tensor *a, int dim, bool keepdim);
Tensor *t_sum_all(Tensor *a);                      /* -> (1) */
Tensor *t_mean_all(Tensor *a);                     /* -> (1) */

/* ---------- softmax family and losses (ops/softmax.c) ---------- */
Tensor *t_softmax(Tensor *x);       /* over the last dim; a row of all -inf gives zeros */
Tensor *t_log_softmax(Tensor *x);   /* over the last dim */
/* X (..., queries, keys) with the entries at key positions j >= valid_len replaced by value
 * (e.g. -INFINITY). valid_lens: NULL (X unchanged, a copy), (batch) — one length per batch row,
 * or (batch, queries); the leading dims of X are flattened to (batch, ...). The d2l building
 * block `sequence_mask`; with -INFINITY and then t_softmax, the masked softmax of lab 2. */
Tensor *t_sequence_mask(Tensor *X, Tensor *valid_lens, float value);
/* Scaled dot-product attention in one op (ops/attention.c): softmax(Q K^T / sqrt(d)) V with the
 * keys past valid_lens masked as t_sequence_mask(-INFINITY) + t_softmax mask them — what d2l's
 * DotProductAttention computes (without dropout), never storing the (queries, keys) scores in
 * the forward (cuda/attention.cu: FlashAttention-style tiles). Q (batch, queries, d),
 * K (batch, keys, d), V (batch, keys, dv), valid_lens NULL, (batch) or (batch, queries);
 * returns (batch, queries, dv). The backward recomputes the scores from Q and K. */
Tensor *t_attention_fused(Tensor *Q, Tensor *K, Tensor *V, Tensor *valid_lens);
/* Per-token cross-entropy of logits (..., V) against integer labels (...), times an optional
 * weight (...) (1 = count, 0 = padding). Returns (...) — d2l's MaskedSoftmaxCELoss before the
 * mean. */
Tensor *t_cross_entropy(Tensor *logits, Tensor *labels, Tensor *weights);
Tensor *t_mse(Tensor *pred, Tensor *target);      /* mean of squares -> (1) */

/* ---------- normalization, embedding, dropout (ops/nn.c) ---------- */
/* Layer norm over the last dim: (x - mean) / sqrt(var + eps) * gamma + beta. */
Tensor *t_layer_norm(Tensor *x, Tensor *gamma, Tensor *beta, float eps);
/* Batch norm of each feature of the last dim over all leading positions (BatchNorm1d for (N,C)).
 * Training: batch statistics (biased var), updates running stats with momentum (torch's rule,
 * unbiased var for the running estimate). Eval: running stats. */
Tensor *t_batch_norm(Tensor *x, Tensor *gamma, Tensor *beta, Tensor *running_mean,
                     Tensor *running_var, bool training, float momentum, float eps);
/* Rows of W (V, D) picked by ids (...) -> (..., D). An id outside [0, V) is an error. */
Tensor *t_embedding(Tensor *W, Tensor *ids);
/* Inverted dropout: zero with probability p, scale the rest by 1/(1-p). Identity unless training. */
Tensor *t_dropout(Tensor *x, float p, bool training);
/* Rows [offset, offset + steps) of a sinusoidal positional-encoding table as a (steps, d)
 * constant on device dev: copied from `table` (max_len, d), the host table of exercise 5.1, or
 * computed on the device where its table has a positional_encoding kernel (exercise 5.2). */
Tensor *t_positional_encoding(const float *table, int max_len, int d, int offset, int steps,
                              Device dev);

/* ---------- shape ops (ops/shape.c) ---------- */
Tensor *t_reshape(Tensor *x, int ndim, const int *shape);   /* a view; one dim may be -1 */
#define t_view(x, ...) t_reshape((x), SHAPE(__VA_ARGS__))
Tensor *t_permute(Tensor *x, const int *perm);             /* copies */
Tensor *t_transpose(Tensor *x, int d0, int d1);            /* copies */
Tensor *t_concat(Tensor **xs, int n, int dim);
Tensor *t_cat2(Tensor *a, Tensor *b, int dim);
Tensor *t_slice(Tensor *x, int dim, int start, int end);   /* [start, end) along dim */
Tensor *t_repeat_interleave(Tensor *x, int repeats, int dim);
/* images (B, C, H, W) -> patches (B, (H/p)*(W/p), C*p*p); patch order row-major over the grid,
 * features ordered (c, i, j) — the flattened stride-p convolution input of d2l's PatchEmbedding. */
Tensor *t_patchify(Tensor *images, int p);
Tensor *t_copy(Tensor *x);       /* differentiable copy */
Tensor *t_detach(Tensor *x);     /* same data, no gradient */

/* ---------- recompute (ops/recompute.c) ---------- */
/* Memory for a second pass. x is an activation whose values only the backward of y's op reads
 * (say x the input of the linear layer that made y). t_recompute hands x's values back to the
 * arena now and returns y's values (the same buffer) recorded right after y, so its backward
 * runs just before y's: there it calls rebuild(ctx), grad off, which must compute x again (the
 * same ops on inputs still held; a dropout among them replays its generator, see rng_use), points
 * x at the result and passes the gradient on to y. Where x is below t_recompute_set_min's bytes
 * (default 8 MB), or nothing needs a gradient, it returns y and x keeps its values. */
typedef Tensor *(*RecomputeFn)(void *ctx);
Tensor *t_recompute(Tensor *y, Tensor *x, RecomputeFn rebuild, void *ctx);
/* Sets the size from which t_recompute releases (tests set 0); returns the previous one. */
size_t t_recompute_set_min(size_t bytes);

#endif
