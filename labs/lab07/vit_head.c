/* Exercise 7.5 — the classification head (2 points)
 *
 * After the blocks, the <cls> token (row 0 of every example) has gathered what the model
 * knows about the image through attention; the other rows are not read. The book's head is
 * nn.Sequential(nn.LayerNorm(num_hiddens), nn.Linear(num_hiddens, num_classes)) applied to
 * X[:, 0]: the pre-norm blocks leave their output un-normalized, so the head normalizes it
 * before the last projection.
 *
 * ViT_head(m, H)
 *   H: (batch, steps, num_hiddens), the last block's output (steps >= 1; the lab's <cls>-only
 *   last block hands over steps = 1) -> logits (batch, num_classes).
 *   Layers: m->head_ln (LayerNorm_forward), then m->head (Linear_forward), on H[:, 0].
 *   Hints: t_slice(H, 1, 0, 1) keeps row 0 as (batch, 1, num_hiddens); t_reshape makes it
 *   (batch, num_hiddens). Both record gradients: rows 1.. get none.
 * Example: H (2, 5, 4) with 3 classes -> (2, 3).
 * Return NULL only while unimplemented (or when H is NULL).
 * Tests: tests/grade/lab07/test_vit_mlp_head.c. Run: make grade LAB=07.
 */
#include "lab07/lab07.h"

#include "../../common/exercise.h"

Tensor *ViT_head(ViT *m, Tensor *H) {
  (void)m, (void)H;
  EXERCISE_TODO("7.5", "ViT_head");
  return NULL;
}
