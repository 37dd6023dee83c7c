/* Exercise 7.1 — PatchEmbedding_forward (reference solution). See
 * labs/lab07/patch_embedding.c for the spec. The book's stride-p convolution with p x p kernels
 * touches every pixel exactly once, so it is a patchify (one copy) and one GEMM. */
#include "lab07/lab07.h"

Tensor *PatchEmbedding_forward(PatchEmbedding *pe, Tensor *X) {
  char s[64];
  if (!X) tensor_error("PatchEmbedding_forward", "X is NULL (did an unfinished exercise return NULL?)");
  if (X->ndim != 4 || X->shape[1] != pe->in_channels || X->shape[2] != pe->img_size ||
      X->shape[3] != pe->img_size)
    tensor_error("PatchEmbedding_forward",
                 "X %s must be (batch, %d, %d, %d): in_channels and img_size of the layer",
                 shape_str(X, s, sizeof s), pe->in_channels, pe->img_size, pe->img_size);
  Tensor *patches = t_patchify(X, pe->patch_size); /* (B, num_patches, C*p*p) */
  return Linear_forward(&pe->proj, patches);      /* (B, num_patches, num_hiddens) */
}
