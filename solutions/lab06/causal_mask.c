/* Exercise 6.3 — causal_valid_lens (reference solution; the spec is in labs/lab06/causal_mask.c).
 * The same rule for a whole sequence (offset 0) and for one cached step (offset t): the mask is
 * a function of positions only, never of training vs evaluation. */
#include "lab06/lab06.h"

Tensor *causal_valid_lens(int batch, int num_queries, int offset) {
  if (batch < 1 || num_queries < 1 || offset < 0)
    tensor_error("causal_valid_lens",
                 "batch = %d and num_queries = %d must be >= 1 and offset = %d >= 0", batch,
                 num_queries, offset);
  /* filled on the host, then one copy to the device new tensors live on */
  float *h = arena_alloc(sizeof(float) * (size_t)batch * (size_t)num_queries);
  for (int b = 0; b < batch; b++)
    for (int i = 0; i < num_queries; i++) h[(long)b * num_queries + i] = (float)(offset + i + 1);
  return tensor_from(2, (int[]){batch, num_queries}, h); /* (batch, num_queries) */
}
