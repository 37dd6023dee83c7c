/* Exercise 7.2 — ViTBlock_forward (reference solution). See labs/lab07/vit_block.c for the
 * spec. Pre-norm: the residual path carries X untouched; only the branches see normalized
 * inputs. */
#include "lab07/lab07.h"

Tensor *ViTBlock_forward(ViTBlock *blk, Tensor *X, Tensor *valid_lens, bool training) {
  char s[64];
  if (!X) tensor_error("ViTBlock_forward", "X is NULL (did an unfinished exercise return NULL?)");
  if (X->ndim != 3 || X->shape[2] != blk->ln1.dim)
    tensor_error("ViTBlock_forward", "X %s must be (batch, steps, %d)", shape_str(X, s, sizeof s),
                 blk->ln1.dim);
  Tensor *Y = LayerNorm_forward(&blk->ln1, X);                                   /* (B, n, h) */
  Tensor *A = MultiHeadAttention_forward(&blk->attention, Y, Y, Y, valid_lens, training);
  if (!A) return NULL;                                                           /* (B, n, h) */
  X = t_add(X, A);
  Tensor *M = ViTMLP_forward(&blk->mlp, LayerNorm_forward(&blk->ln2, X), training);
  return M ? t_add(X, M) : NULL;                                                 /* (B, n, h) */
}
