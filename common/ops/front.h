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

/* The integers an index tensor (token ids, labels, valid lengths) holds, read on the host (an
 * explicit copy off the CPU) so that the front can check them before any kernel runs. */
static inline const float *index_values(const Tensor *t) { return host_read(t); }

#endif
