/* Exercise 7.3 — the <cls> token and the positional embeddings (3 points)
 *
 * The patch sequence gets one extra token in front, <cls>, a learned vector (m->cls_token,
 * (1, 1, num_hiddens)) shared by all images. After the blocks, its output summarizes the image
 * and goes to the classification head. Attention does not know where a patch came from, so a
 * learned positional embedding (m->pos_embedding, (1, num_patches + 1, num_hiddens)) is added
 * to every position, <cls> included. Then the embedding dropout (m->dropout).
 *
 * vit_add_cls_and_positions(m, patches, training)
 *   patches: (batch, num_patches, num_hiddens) -> (batch, num_patches + 1, num_hiddens):
 *     row 0 of every example = cls_token (+ pos_embedding[0]),
 *     row 1 + i               = patches[:, i] (+ pos_embedding[1 + i]),
 *   then Dropout_forward(&m->dropout, ..., training).
 *   Hints: t_add broadcasts (NumPy rules) and sums gradients back over broadcast dims, so
 *   adding cls_token to zeros (batch, 1, num_hiddens) makes the batch of copies that the book
 *   gets with cls_token.expand(batch, -1, -1); t_cat2 concatenates along a dim. Gradients must
 *   reach cls_token and pos_embedding (they are trained).
 * Return NULL only while unimplemented.
 * Tests: tests/grade/lab07/test_vit.c. Run: make grade LAB=07.
 */
#include "lab07/lab07.h"

#include "../../common/exercise.h"

Tensor *vit_add_cls_and_positions(ViT *m, Tensor *patches, bool training) {
  (void)m, (void)patches, (void)training;
  EXERCISE_TODO("7.3", "vit_add_cls_and_positions");
  return NULL;
}
