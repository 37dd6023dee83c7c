/* Exercise 7.3 — vit_add_cls_and_positions (reference solution). See labs/lab07/vit_embed.c
 * for the spec. */
#include "lab07/lab07.h"

Tensor *vit_add_cls_and_positions(ViT *m, Tensor *patches, bool training) {
  char s[64], sp[64];
  if (!patches)
    tensor_error("vit_add_cls_and_positions", "patches is NULL (did an unfinished exercise return NULL?)");
  const int steps = m->pos_embedding->shape[1], h = m->num_hiddens;
  if (patches->ndim != 3 || patches->shape[1] + 1 != steps || patches->shape[2] != h)
    tensor_error("vit_add_cls_and_positions",
                 "patches %s must be (batch, %d, %d) to fit pos_embedding %s", shape_str(patches, s, sizeof s),
                 steps - 1, h, shape_str(m->pos_embedding, sp, sizeof sp));
  const int B = patches->shape[0];
  /* cls_token.expand(B, -1, -1): broadcasting onto zeros gives B copies, and the backward of
   * the broadcast sums their gradients back into the one (1, 1, h) parameter. */
  Tensor *cls = t_add(tensor_zeros(3, (const int[]){B, 1, h}), m->cls_token); /* (B, 1, h) */
  Tensor *X = t_cat2(cls, patches, 1);                            /* (B, steps, h) */
  X = t_add(X, m->pos_embedding);                                 /* (B, steps, h) + (1, steps, h) */
  return Dropout_forward(&m->dropout, X, training);
}
