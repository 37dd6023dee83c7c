/* Tests of the gradient checker itself (tests/gradcheck.c): it must pass a correct backward and
 * fail one that is off by 1%, for any weights R it draws (20 seeds here). */
#include "../../common/ops.h"
#include "../../common/rng.h"
#include "../test.h"

/* softmax(tanh(X W)) over the last dim, with its backward scaled by s: the forward is
 * s y - (s - 1) y with the second term detached, so it equals y up to float rounding while
 * every gradient through it is s times the true one. */
static Tensor *scaled_backward_fn(Tensor **in, void *ctx) {
  const float s = *(const float *)ctx;
  Tensor *y = t_softmax(t_tanh(t_matmul(in[0], in[1]))); /* (3, 5) */
  if (s == 1.0f) return y;
  return t_sub(t_scale(y, s), t_detach(t_scale(y, s - 1.0f)));
}

TEST(gradcheck_fails_a_backward_off_by_one_percent) {
  float x[12], w[20];
  Rng r;
  rng_init(&r, 7);
  for (int i = 0; i < 12; i++) x[i] = rng_normal(&r, 0.0f, 1.0f);
  for (int i = 0; i < 20; i++) w[i] = rng_normal(&r, 0.0f, 1.0f);
  double worst_ok = 0, least_bad = INFINITY;
  for (unsigned long seed = 1; seed <= 20; seed++) {
    gradcheck_seed(seed);
    for (int k = 0; k < 3; k++) {
      const float s = (const float[]){1.0f, 1.01f, 0.99f}[k];
      /* fresh leaves each time: the tape is reset after every check */
      Tensor *in[2] = {tensor_from(2, (const int[]){3, 4}, x),  /* X (3, 4) */
                       tensor_from(2, (const int[]){4, 5}, w)}; /* W (4, 5) */
      double err = gradcheck_error(scaled_backward_fn, in, 2, (void *)&s, 1e-2);
      ag_step_reset();
      if (k == 0) {
        if (!(err <= worst_ok)) worst_ok = err; /* keeps a NaN */
      } else {
        least_bad = fmin(least_bad, err);
      }
    }
  }
  gradcheck_seed(99);
  printf("    correct backward: worst error %.2g; scaled by 1.01 or 0.99: least error %.2g "
         "(tolerance %.1g)\n", worst_ok, least_bad, GRADCHECK_TOL);
  CHECK(worst_ok <= GRADCHECK_TOL);
  CHECK(least_bad > GRADCHECK_TOL);
}
