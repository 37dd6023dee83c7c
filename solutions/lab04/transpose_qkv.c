/* Exercises 4.1 and 4.2 — transpose_qkv / transpose_output (reference solution). See
 * labs/lab04/transpose_qkv.c for the spec. A reshape is a free view; the permute is the one
 * copy each way, and its backward is the inverse permute, so gradients flow through both. */
#include "lab04/lab04.h"

Tensor *transpose_qkv(Tensor *X, int num_heads) {
  char s[64];
  if (!X) tensor_error("transpose_qkv", "X is NULL (did an unfinished exercise return NULL?)");
  if (X->ndim != 3 || num_heads < 1 || X->shape[2] % num_heads != 0)
    tensor_error("transpose_qkv",
                 "X %s must be (batch, n, num_hiddens) with num_hiddens divisible by "
                 "num_heads = %d",
                 shape_str(X, s, sizeof s), num_heads);
  const int B = X->shape[0], n = X->shape[1], d = X->shape[2] / num_heads;
  Tensor *Y = t_reshape(X, 4, (const int[]){B, n, num_heads, d});   /* (B, n, H, d) */
  Y = t_permute(Y, (const int[]){0, 2, 1, 3});                       /* (B, H, n, d) */
  return t_reshape(Y, 3, (const int[]){B * num_heads, n, d});       /* (B*H, n, d) */
}

Tensor *transpose_output(Tensor *X, int num_heads) {
  char s[64];
  if (!X) tensor_error("transpose_output", "X is NULL (did an unfinished exercise return NULL?)");
  if (X->ndim != 3 || num_heads < 1 || X->shape[0] % num_heads != 0)
    tensor_error("transpose_output",
                 "X %s must be (batch * num_heads, n, d) with its first dim divisible by "
                 "num_heads = %d",
                 shape_str(X, s, sizeof s), num_heads);
  const int B = X->shape[0] / num_heads, n = X->shape[1], d = X->shape[2];
  Tensor *Y = t_reshape(X, 4, (const int[]){B, num_heads, n, d});   /* (B, H, n, d) */
  Y = t_permute(Y, (const int[]){0, 2, 1, 3});                       /* (B, n, H, d) */
  return t_reshape(Y, 3, (const int[]){B, n, num_heads * d});       /* (B, n, H*d) */
}
