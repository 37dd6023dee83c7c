/* posenc.c — PositionalEncoding_init / _free / _forward (not exercises: the table itself is
 * exercise 5.1, positional_encoding_table in labs/lab05/, and on a CUDA device exercise 5.2,
 * positional_encoding_cuda in labs/lab05/posenc_kernel.cu). Labs 06 and 07 use these. */
#include <stdlib.h>

#include "../../common/exercise.h"
#include "../../common/util.h"
#include "lab05/lab05.h"

void PositionalEncoding_init(PositionalEncoding *pe, int num_hiddens, float dropout, int max_len) {
  if (num_hiddens < 1 || max_len < 1)
    tensor_error("PositionalEncoding_init",
                 "num_hiddens (%d) and max_len (%d) must be positive (the book uses max_len "
                 "1000)",
                 num_hiddens, max_len);
  pe->num_hiddens = num_hiddens;
  pe->max_len = max_len;
  pe->dropout = (Dropout){dropout};
  pe->P = xmalloc(sizeof(float) * (size_t)max_len * (size_t)num_hiddens); /* (max_len, d) */
  if (positional_encoding_table(pe->P, max_len, num_hiddens) != 0) {
    PositionalEncoding_free(pe);
    exercise_missing("the positional encoding (PositionalEncoding_init)");
  }
}

void PositionalEncoding_free(PositionalEncoding *pe) {
  free(pe->P);
  pe->P = NULL;
}

Tensor *PositionalEncoding_forward(const PositionalEncoding *pe, Tensor *X, int offset,
                                   bool training) {
  char s[64];
  if (!X) tensor_error("PositionalEncoding_forward", "X is NULL (did an unfinished exercise "
                       "return NULL?)");
  if (!pe->P)
    tensor_error("PositionalEncoding_forward", "the encoding has no table: call "
                 "PositionalEncoding_init first (or it was freed)");
  if (X->ndim != 3 || X->shape[2] != pe->num_hiddens)
    tensor_error("PositionalEncoding_forward",
                 "X %s must be (batch, steps, num_hiddens = %d)", shape_str(X, s, sizeof s),
                 pe->num_hiddens);
  const int steps = X->shape[1], d = pe->num_hiddens;
  if (offset < 0 || offset + steps > pe->max_len)
    tensor_error("PositionalEncoding_forward",
                 "positions %d..%d of X %s are outside the table's max_len = %d; build the "
                 "encoding with a larger max_len",
                 offset, offset + steps - 1, shape_str(X, s, sizeof s), pe->max_len);
  /* P[offset : offset + steps] as a (steps, d) constant on X's device (there, computed by the
   * device's kernel, exercise 5.2); t_add broadcasts it over the batch. */
  Tensor *P = t_positional_encoding(pe->P, pe->max_len, d, offset, steps, X->device);
  return Dropout_forward(&pe->dropout, t_add(X, P), training); /* (batch, steps, d) */
}
