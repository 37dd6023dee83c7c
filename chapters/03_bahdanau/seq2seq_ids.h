/* seq2seq_ids.h — what lab 03's readable path (seq2seq_attention.c) and its fast path
 * (seq2seq_attention_fast.c) both do with a batch of token ids. Internal to chapters/03. */
#ifndef LAB03_SEQ2SEQ_IDS_H
#define LAB03_SEQ2SEQ_IDS_H

#include <stdio.h>

#include "../../common/ops.h"

/* ids (batch, num_steps) -> (num_steps, batch): the time-major order the RNN runs in (d2l
 * permutes the embedded sequence; transposing the ids first gives the same tensor). */
static inline Tensor *ids_time_major(Tensor *X) { return t_transpose(t_detach(X), 0, 1); }

static inline void check_ids(const char *op, Tensor *X) {
  char s[64];
  if (!X || X->ndim != 2)
    tensor_error(op, "X has shape %s, expected (batch, num_steps) token ids",
                 X ? shape_str(X, s, sizeof s) : "NULL");
}

#endif
