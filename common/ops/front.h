/* front.h — what every op front shares: input checks, outputs on the inputs' device, and the
 * kernel call through the device's table (backend.h). Private to common/ops/. */
#ifndef AL_OPS_FRONT_H
#define AL_OPS_FRONT_H

#include "../backend.h"
#include "../ops.h"

/* A NULL input (an unfinished exercise's result) is an error naming the op, not a crash. */
static inline void need(const char *op, const char *what, const Tensor *t) {
  if (!t) tensor_error(op, "%s is NULL (did an unfinished exercise return NULL?)", what);
}

/* A new arena tensor on the device of `like`, named after the op. */
static inline Tensor *new_on(const Tensor *like, int ndim, const int *shape, const char *name) {
  Tensor *t = tensor_new_on(like->device, ndim, shape);
  t->name = name;
  return t;
}

static inline int last_dim(const Tensor *t) { return t->shape[t->ndim - 1]; }
static inline long num_rows(const Tensor *t) { return shape_numel(t->ndim - 1, t->shape); }

/* Index tensor t (token ids, labels, valid lengths; the caller checked its values on the host,
 * read with host_read before any kernel runs) as n ints on t's device,
 * each capped at max: converted there, so no host array travels to the device per op. */
static inline int *index_ints(const Tensor *t, long n, int max) {
  int *out = dev_alloc(t->device, sizeof(int) * (size_t)(n ? n : 1));
  if (n > 0) KERNEL(t->device, index_ints, t->data, out, n, max);
  return out;
}

/* Valid lengths resolved for the rows of X (ops/softmax.c): row r of X viewed as (rows, keys)
 * keeps keys j < len[r / per]. Checks valid_lens' shape ((d0) or (d0, d1) of X's leading dims)
 * and values (whole numbers >= 0) on the host; lengths past the keys are capped. */
typedef struct {
  int *len; /* X's device memory, one per entry of valid_lens */
  long per; /* rows sharing one length */
} Lens;
Lens resolve_lens(const char *op, const Tensor *X, const Tensor *valid_lens);

#endif
