/* test_recompute.c — t_recompute (common/ops/recompute.c): an activation's values handed back
 * after the forward and rebuilt just before the backward that reads them. Its gradients against
 * finite differences, the release itself, the threshold, and a rebuild that returns the wrong
 * tensor as a clear error. (The ViT MLP that uses it: test_release.c, test_device.c.) */
#include "../../common/ops.h"
#include "../test.h"

enum { N = 1 << 18 }; /* x: 1 MB of floats, the size from which the arena reclaims a block */

/* x = C * s (C fixed, s a scalar input), y = x * w (w a scalar input): w's gradient reads x's
 * values, which t_recompute has released and the rebuild computes again. */
typedef struct {
  Tensor *C, *s;
  int rebuilds;
} XOf;

static Tensor *x_again(void *arg) {
  XOf *c = arg;
  c->rebuilds++;
  return t_mul(c->C, c->s); /* (N) */
}

static Tensor *f_recompute(Tensor **in, void *ctx) {
  XOf *c = ctx;
  c->s = in[0];
  Tensor *x = t_mul(c->C, in[0]);     /* (N) */
  Tensor *y = t_mul(x, in[1]);        /* (N) */
  return t_recompute(y, x, x_again, c); /* (N) */
}

static Tensor *ramp(void) {
  Tensor *C = tensor_new(1, (const int[]){N});
  for (long i = 0; i < N; i++) C->data[i] = (float)((i % 97) - 48) / 48.0f;
  return C;
}

/* A broken rebuild: the tensor before its scaling, same shape, other values. */
static Tensor *x_wrong(void *arg) { return t_scale(((XOf *)arg)->C, 1.0f); }

static Tensor *two_floats(void *arg) {
  (void)arg;
  return tensor_zeros(1, (const int[]){2});
}

static double ramp_sum(const Tensor *C) {
  double sum = 0;
  for (long i = 0; i < C->size; i++) sum += C->data[i];
  return sum; /* the ramp's periods sum to 0; the last, partial one does not */
}

TEST(recompute_releases_rebuilds_and_gradchecks) {
  const size_t old = t_recompute_set_min(0);
  XOf c = {ramp(), NULL, 0};
  Tensor *s = tensor_full(1, (const int[]){1}, 0.7f), *w = tensor_full(1, (const int[]){1}, -1.3f);
  s->requires_grad = w->requires_grad = true;
  c.s = s;
  Tensor *x = t_mul(c.C, s), *y = t_mul(x, w); /* (N) */
  Tensor *r = t_recompute(y, x, x_again, &c);
  /* the node is on the tape, with y's values; x's are gone until the backward */
  CHECK(r != y && r->name && strcmp(r->name, "recompute") == 0 && r->data == y->data);
  CHECK(x->data == NULL);
  ag_backward(t_sum_all(r));
  CHECK(c.rebuilds == 1 && x->data != NULL);
  /* d/dw sum(C s w) = s sum(C); 1e-3: float32 sums of 2^18 terms */
  const double sum_c = ramp_sum(c.C);
  CHECK_NEAR(w->grad[0], 0.7 * sum_c, 1e-3 * fmax(1.0, fabs(sum_c)));
  CHECK_NEAR(s->grad[0], -1.3 * sum_c, 1e-3 * fmax(1.0, fabs(sum_c)));
  ag_step_reset();
  /* against finite differences (the rebuild runs in every backward) */
  c = (XOf){ramp(), NULL, 0};
  s = tensor_full(1, (const int[]){1}, 0.7f), w = tensor_full(1, (const int[]){1}, -1.3f);
  GRADCHECK(f_recompute, ((Tensor *[]){s, w}), 2, &c);
  CHECK(c.rebuilds > 0);
  ag_step_reset();
  t_recompute_set_min(old);
}

TEST(recompute_threshold_and_wrong_rebuilds) {
  XOf c = {ramp(), NULL, 0};
  Tensor *s = tensor_full(1, (const int[]){1}, 0.7f), *w = tensor_full(1, (const int[]){1}, 2.0f);
  s->requires_grad = w->requires_grad = true;
  c.s = s;
  const size_t old = t_recompute_set_min(sizeof(float) * N + 1); /* x is below: kept */
  Tensor *x = t_mul(c.C, s), *y = t_mul(x, w);
  CHECK(t_recompute(y, x, x_again, &c) == y && x->data != NULL);
  /* at the threshold: released; a rebuild with other values is what the backward reads (w's
   * gradient becomes sum(C) instead of s sum(C)), which is why the gradcheck above can fail */
  t_recompute_set_min(sizeof(float) * N);
  Tensor *r = t_recompute(y, x, x_wrong, &c);
  CHECK(r != y && x->data == NULL);
  ag_backward(t_sum_all(r));
  const double sum_c = ramp_sum(c.C);
  CHECK_NEAR(w->grad[0], sum_c, 1e-3 * fmax(1.0, fabs(sum_c)));
  ag_step_reset();
  /* a rebuild of another shape is an error naming the op */
  c = (XOf){ramp(), NULL, 0};
  s = tensor_full(1, (const int[]){1}, 0.7f), w = tensor_full(1, (const int[]){1}, 2.0f);
  s->requires_grad = w->requires_grad = true;
  x = t_mul(c.C, s), y = t_mul(x, w);
  r = t_recompute(y, x, two_floats, NULL);
  CHECK_ERROR(ag_backward(t_sum_all(r)), "t_recompute");
  ag_step_reset();
  t_recompute_set_min(old);
}
