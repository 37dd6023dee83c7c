/* Tests of the tensor core: creation, printing, arena reuse, autograd bookkeeping, errors. */
#include "../../common/ops.h"
#include "../test.h"

TEST(tensor_create_and_shape) {
  Tensor *t = tzeros(2, 3, 4);
  CHECK_INT(t->ndim, 3);
  CHECK_INT(t->size, 24);
  for (long i = 0; i < t->size; i++) CHECK(t->data[i] == 0.0f);
  char buf[64];
  CHECK(strcmp(shape_str(t, buf, sizeof buf), "(2, 3, 4)") == 0);
  CHECK_ERROR(tensor_new(5, (int[]){1, 1, 1, 1, 1}), "1 to 4 dims");
}

TEST(arena_reuse_across_steps) {
  /* after the first step the arena reuses its chunks: the peak does not grow */
  for (int step = 0; step < 3; step++) {
    for (int i = 0; i < 100; i++) (void)tzeros(64, 64);
    ag_step_reset();
    CHECK_INT(arena_used(), 0);
  }
  size_t peak = arena_peak();
  for (int i = 0; i < 100; i++) (void)tzeros(64, 64);
  ag_step_reset();
  CHECK_INT(arena_peak(), peak);
}

TEST(backward_needs_scalar_loss) {
  Tensor *t = tzeros(2, 2);
  CHECK_ERROR(ag_backward(t), "one element");
}
