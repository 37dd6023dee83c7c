/* Exercise 7.2 — the ViT block (4 points)
 *
 * A Transformer encoder block with the normalization moved in front of each sublayer
 * ("pre-norm"), so the residual path carries X unchanged from block to block:
 *   X = X + MultiHeadAttention(LN1(X), LN1(X), LN1(X), valid_lens)
 *   X = X + ViTMLP(LN2(X))
 * (The Transformer of lab06 normalizes after the addition instead.)
 *
 * ViTBlock_forward(blk, X, valid_lens, training)
 *   X: (batch, steps, num_hiddens) -> (batch, steps, num_hiddens).
 *   Layers: blk->ln1, blk->ln2 (LayerNorm_forward), blk->attention (lab04's
 *   MultiHeadAttention_forward: self-attention, so queries = keys = values = LN1(X)),
 *   blk->mlp (ViTMLP_forward, exercise 7.4: dense - GELU - dropout - dense - dropout). Pass
 *   `training` on so dropout is active only while training. Add with t_add, which records
 *   gradients. If MultiHeadAttention_forward or ViTMLP_forward returns NULL (an unfinished
 *   exercise of lab04 or 7.4), return NULL.
 * Example (the book's check): X of ones (2, 100, 24), 8 heads, MLP 48 -> (2, 100, 24).
 * Return NULL only while unimplemented.
 * Tests: tests/grade/lab07/test_vit.c. Run: make grade LAB=07.
 */
#include "lab07/lab07.h"

#include "../../common/exercise.h"

Tensor *ViTBlock_forward(ViTBlock *blk, Tensor *X, Tensor *valid_lens, bool training) {
  (void)blk, (void)X, (void)valid_lens, (void)training;
  EXERCISE_TODO("7.2", "ViTBlock_forward");
  return NULL;
}
