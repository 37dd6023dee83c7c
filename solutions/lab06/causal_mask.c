/* Exercise 6.3 — causal_valid_lens (reference solution; the spec is in labs/lab06/causal_mask.c).
 * The same rule for a whole sequence (offset 0) and for one cached step (offset t): the mask is
 * a function of positions only, never of training vs evaluation. */
#include "lab06/lab06.h"

Tensor *causal_valid_lens(int batch, int num_queries, int offset) {
  if (batch < 1 || num_queries < 1 || offset < 0)
    tensor_error("causal_valid_lens",
                 "batch = %d and num_queries = %d must be >= 1 and offset = %d >= 0", batch,
                 num_queries, offset);
  /* every row is the same: positions offset + 1 .. offset + num_queries (a constant, which a
   * device keeps instead of receiving it every step) */
  float *row = arena_alloc(sizeof(float) * (size_t)num_queries);
  for (int i = 0; i < num_queries; i++) row[i] = (float)(offset + i + 1);
  return tensor_const_rows(batch, num_queries, row); /* (batch, num_queries) */
}
