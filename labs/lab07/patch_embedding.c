/* Exercise 7.1 — the patch embedding (3 points)
 *
 * The book's PatchEmbedding is nn.LazyConv2d(num_hiddens, kernel_size=p, stride=p). With the
 * stride equal to the kernel size, every output position sees its own p x p patch and no pixel
 * is used twice, so the convolution is simply:
 *   1. cut each image into (img_size / p)^2 patches of p x p pixels, flatten each patch with
 *      its features ordered (channel, row, column), patches row-major over the grid;
 *   2. project every flattened patch with the same linear layer (the conv kernel).
 *
 * PatchEmbedding_forward(pe, X)
 *   X: (batch, in_channels, img_size, img_size) -> (batch, num_patches, num_hiddens).
 *   pe->patch_size is p; pe->proj is the Linear (in_channels * p * p -> num_hiddens).
 *   Hints: t_patchify (common/ops.h) does step 1 in one copy; Linear_forward (common/nn.h)
 *   does step 2 for all patches of all images as one matrix product. Both record gradients.
 *   A wrong input shape should be a tensor_error naming the function and the shape.
 * Example (the book's check): zeros (4, 3, 96, 96), p = 16, num_hiddens = 512 ->
 *   (4, 36, 512).
 * Return NULL only while unimplemented.
 * Tests: tests/grade/lab07/test_vit.c. Run: make grade LAB=07.
 */
#include "lab07/lab07.h"

#include "../../common/exercise.h"

Tensor *PatchEmbedding_forward(PatchEmbedding *pe, Tensor *X) {
  (void)pe, (void)X;
  EXERCISE_TODO("7.1", "PatchEmbedding_forward");
  return NULL;
}
