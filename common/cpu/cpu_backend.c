/* cpu_backend.c — the CPU's table: host memory and the kernels of common/cpu/. */
#include <stdlib.h>
#include <string.h>

#include "../gemm.h"
#include "../util.h"
#include "kernels.h"

static void cpu_memcpy(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

/* A large buffer (an activation's gradient: the ViT's are 0.5-40 MB) is zeroed by all threads:
 * a serial memset there was the biggest single-threaded stretch of a training step. */
#define ZERO_PAR_MIN ((size_t)1 << 18) /* bytes */
#define ZERO_CHUNK (1L << 16)          /* bytes per memset of the parallel loop */
static void cpu_zero(void *p, size_t bytes) {
  if (bytes < ZERO_PAR_MIN) {
    memset(p, 0, bytes);
    return;
  }
  unsigned char *b = p;
  const long n = (long)bytes;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i += ZERO_CHUNK)
    memset(b + i, 0, (size_t)(n - i < ZERO_CHUNK ? n - i : ZERO_CHUNK));
}

const Backend cpu_backend = {
    .name = "cpu",
    .alloc = xaligned_alloc,
    .free = free,
    .to_host = cpu_memcpy,
    .from_host = cpu_memcpy,
    .copy = cpu_memcpy,
    .zero = cpu_zero,
    .fill = cpu_fill,
    .acc = cpu_acc,
    .binary = cpu_binary,
    .binary_grad = cpu_binary_grad,
    .div_grad_b = cpu_div_grad_b,
    .unary = cpu_unary,
    .unary_grad = cpu_unary_grad,
    .gemm = gemm,
    .gemm_batched = gemm_batched,
    .bias_rows = cpu_bias_rows,
    .bias_grad = cpu_bias_grad,
    .linear_grad = cpu_linear_grad,
    .reduce = cpu_reduce,
    .reduce_grad = cpu_reduce_grad,
    .reduce_all = cpu_reduce_all,
    .reduce_all_grad = cpu_reduce_all_grad,
    .softmax = cpu_softmax,
    .softmax_grad = cpu_softmax_grad,
    .log_softmax = cpu_log_softmax,
    .log_softmax_grad = cpu_log_softmax_grad,
    .sequence_mask = cpu_sequence_mask,
    .sequence_mask_grad = cpu_sequence_mask_grad,
    .cross_entropy = cpu_cross_entropy,
    .cross_entropy_grad = cpu_cross_entropy_grad,
    .mse = cpu_mse,
    .mse_grad = cpu_mse_grad,
    .layer_norm = cpu_layer_norm,
    .layer_norm_grad = cpu_layer_norm_grad,
    .batch_norm = cpu_batch_norm,
    .batch_norm_grad = cpu_batch_norm_grad,
    .embedding = cpu_embedding,
    .embedding_grad = cpu_embedding_grad,
    .dropout = cpu_dropout,
    .dropout_grad = cpu_dropout_grad,
    .permute = cpu_permute,
    .copy_rows = cpu_copy_rows,
    .repeat_interleave = cpu_repeat_interleave,
    .repeat_interleave_grad = cpu_repeat_interleave_grad,
    .patchify = cpu_patchify,
    .index_ints = cpu_index_ints,
    .sgd = cpu_sgd,
    .adam = cpu_adam,
    .clip_grad = cpu_clip_grad,
    .additive_scores = cpu_additive_scores,
    .additive_scores_grad = cpu_additive_scores_grad,
    .attention = cpu_attention,
    .rnn_cell = cpu_rnn_cell,
    .rnn_cell_grad = cpu_rnn_cell_grad,
};
