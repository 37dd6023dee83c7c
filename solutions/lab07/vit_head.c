/* Exercise 7.5 — ViT_head (reference solution). See labs/lab07/vit_head.c for the spec.
 * The book's self.head(X[:, 0]): layer norm, then the linear layer, on the <cls> row. */
#include "lab07/lab07.h"

Tensor *ViT_head(ViT *m, Tensor *H) {
  char s[64];
  if (!H) return NULL;
  if (H->ndim != 3 || H->shape[1] < 1 || H->shape[2] != m->head_ln.dim)
    tensor_error("ViT_head", "H %s must be (batch, steps >= 1, %d)", shape_str(H, s, sizeof s),
                 m->head_ln.dim);
  const int B = H->shape[0], h = H->shape[2];
  Tensor *Z = t_reshape(t_slice(H, 1, 0, 1), 2, (const int[]){B, h}); /* (B, h): <cls> */
  return Linear_forward(&m->head, LayerNorm_forward(&m->head_ln, Z)); /* (B, num_classes) */
}
