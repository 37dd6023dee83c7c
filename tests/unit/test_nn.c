/* Tests of common/nn.c, params.c and optim.c: the parameter registry, initializers, the layers,
 * and the optimizers against hand-computed steps. */
#include <stdlib.h>

#include "../../common/nn.h"
#include "../../common/rng.h"
#include "../test.h"

TEST(nn_param_registry) {
  ParamSet ps = {0};
  Linear fc;
  Linear_init(&fc, &ps, "fc", 3, 4, true);
  CHECK_INT(ps.n, 2);
  CHECK_INT(paramset_count(&ps), 3 * 4 + 4);
  CHECK(paramset_find(&ps, "fc.W") == fc.W);
  CHECK(paramset_find(&ps, "fc.b") == fc.b);
  CHECK(paramset_find(&ps, "fc.x") == NULL);
  CHECK(fc.W->is_param && fc.W->requires_grad && fc.W->grad == NULL);
  CHECK_INT(fc.W->shape[0], 3); /* W is (in, out) */
  CHECK_INT(fc.W->shape[1], 4);
  for (int i = 0; i < 4; i++) CHECK(fc.b->data[i] == 0.0f);

  Linear nb;
  Linear_init(&nb, &ps, "nb", 5, 2, false);
  CHECK(nb.b == NULL);
  Embedding emb;
  Embedding_init(&emb, &ps, "emb", 10, 6);
  LayerNorm ln;
  LayerNorm_init(&ln, &ps, "ln", 6);
  CHECK_INT(ps.n, 2 + 1 + 1 + 2);
  CHECK_INT(paramset_count(&ps), 16 + 10 + 60 + 12);
  for (int i = 0; i < 6; i++) CHECK(ln.gamma->data[i] == 1.0f && ln.beta->data[i] == 0.0f);
  CHECK_NEAR(ln.eps, 1e-5, 1e-12); /* exact float of 1e-5 */

  /* the names are copies: a caller's buffer may change */
  char name[16] = "tmp";
  Tensor *t = param_new(&ps, name, 1, (int[]){3});
  name[0] = 'X';
  CHECK(strcmp(t->name, "tmp") == 0);

  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  paramset_print(&ps, f);
  fclose(f);
  CHECK_STR_CONTAINS(buf, "fc.W");
  CHECK_STR_CONTAINS(buf, "(3, 4)");
  CHECK_STR_CONTAINS(buf, "emb.W");
  int lines = 0;
  for (char *p = buf; *p; p++) lines += *p == '\n';
  CHECK_INT(lines, ps.n);
  free(buf);

  CHECK_ERROR(param_new(&ps, "bad", 5, (int[]){1, 1, 1, 1, 1}), "1 to 4 dims");
  CHECK_ERROR(param_new(&ps, "neg", 2, (int[]){2, -1}), "negative");
  CHECK_INT(ps.n, 7); /* failed creations registered nothing */
  paramset_free(&ps);
  CHECK(ps.n == 0 && ps.items == NULL);
}

TEST(nn_linear_forward_values) {
  ParamSet ps = {0};
  Linear fc;
  Linear_init(&fc, &ps, "fc", 3, 2, true);
  const float W[] = {1, 2, 3, 4, 5, 6}; /* (3, 2) */
  memcpy(fc.W->data, W, sizeof W);
  fc.b->data[0] = 0.5f;
  fc.b->data[1] = -1.0f;
  Tensor *x = tensor_from(2, (int[]){2, 3}, (const float[]){1, 0, -1, 2, 1, 0}); /* (2, 3) */
  Tensor *y = Linear_forward(&fc, x); /* (2, 2) */
  CHECK_INT(y->ndim, 2);
  CHECK_INT(y->shape[0], 2);
  CHECK_INT(y->shape[1], 2);
  /* row 0: [1-5, 2-6] + b = [-3.5, -5]; row 1: [2+3, 4+4] + b = [5.5, 7] */
  const float want[] = {-3.5f, -5.0f, 5.5f, 7.0f};
  CHECK_CLOSE(y->data, want, 4, 1e-6, 0); /* small integers: exact up to rounding */

  /* leading dims pass through: (2, 2, 3) -> (2, 2, 2) */
  Tensor *x3 = tensor_from(3, (int[]){2, 1, 3}, (const float[]){1, 0, -1, 2, 1, 0});
  Tensor *y3 = Linear_forward(&fc, x3);
  CHECK_INT(y3->ndim, 3);
  CHECK_INT(y3->shape[2], 2);
  CHECK_CLOSE(y3->data, want, 4, 1e-6, 0); /* same rows as above */

  Tensor *bad = tzeros(2, 4);
  CHECK_ERROR(Linear_forward(&fc, bad), "(2, 4)");
  paramset_free(&ps);
}

TEST(nn_zero_grad) {
  ParamSet ps = {0};
  Linear fc, unused;
  Linear_init(&fc, &ps, "fc", 3, 2, true);
  Linear_init(&unused, &ps, "unused", 2, 2, true);
  Tensor *x = tensor_rand(2, (int[]){4, 3}, -1, 1);
  ag_backward(t_sum_all(Linear_forward(&fc, x)));
  CHECK(fc.W->grad != NULL && fc.b->grad != NULL);
  CHECK(unused.W->grad == NULL); /* no gradient reached it */
  /* d sum / d b = number of rows */
  CHECK_NEAR(fc.b->grad[0], 4.0, 1e-6); /* a sum of four ones */
  paramset_zero_grad(&ps); /* packs the set: every gradient is now a slice of one zeroed block */
  for (long i = 0; i < fc.W->size; i++) CHECK(fc.W->grad[i] == 0.0f);
  for (long i = 0; i < fc.b->size; i++) CHECK(fc.b->grad[i] == 0.0f);
  for (long i = 0; i < unused.W->size; i++) CHECK(unused.W->grad[i] == 0.0f);
  CHECK(fc.W->grad == ps.grad && unused.b->grad + unused.b->size == ps.grad + ps.total);
  paramset_free(&ps);
}

/* mean, variance, min and max of n floats */
static void stats(const float *v, long n, double *mean, double *var, double *lo, double *hi) {
  double s = 0, s2 = 0;
  *lo = INFINITY;
  *hi = -INFINITY;
  for (long i = 0; i < n; i++) {
    s += v[i];
    s2 += (double)v[i] * v[i];
    if (v[i] < *lo) *lo = v[i];
    if (v[i] > *hi) *hi = v[i];
  }
  *mean = s / (double)n;
  *var = s2 / (double)n - *mean * *mean;
}

TEST(nn_xavier_uniform_bounds) {
  ParamSet ps = {0};
  Tensor *W = param_new(&ps, "W", 2, (int[]){100, 200});
  init_xavier_uniform(W, 100, 200);
  double a = sqrt(6.0 / 300), mean, var, lo, hi;
  stats(W->data, W->size, &mean, &var, &lo, &hi);
  CHECK(lo >= -a && hi < a);
  /* 20000 draws: the extremes come within 0.1% of the bound */
  CHECK(lo < -0.999 * a && hi > 0.999 * a);
  /* std error of the mean is a/sqrt(3*20000) = 6e-4; 3e-3 is 5 sigma */
  CHECK_NEAR(mean, 0.0, 3e-3);
  /* variance 2/(fan_in+fan_out); its std error is 0.6% here, 5% is 8 sigma */
  CHECK_NEAR(var, 2.0 / 300, 0.05 * 2.0 / 300);

  Tensor *N = param_new(&ps, "N", 2, (int[]){100, 200});
  init_xavier_normal(N, 100, 200);
  stats(N->data, N->size, &mean, &var, &lo, &hi);
  CHECK_NEAR(mean, 0.0, 3e-3); /* std error 5.8e-4: 5 sigma */
  CHECK_NEAR(var, 2.0 / 300, 0.05 * 2.0 / 300); /* std error 1% of var: 5 sigma */

  Embedding e;
  Embedding_init(&e, &ps, "emb", 100, 100);
  stats(e.W->data, e.W->size, &mean, &var, &lo, &hi);
  CHECK_NEAR(mean, 0.0, 0.05); /* N(0, 1), 10000 draws: std error 0.01 */
  CHECK_NEAR(var, 1.0, 0.07);  /* std error 0.014: 5 sigma */

  /* the same seed gives the same weights */
  rng_seed(7);
  init_xavier_uniform(W, 100, 200);
  float first = W->data[123];
  rng_seed(7);
  init_xavier_uniform(W, 100, 200);
  CHECK(W->data[123] == first);
  paramset_free(&ps);
}

TEST(nn_sgd_step_by_hand) {
  ParamSet ps = {0};
  Tensor *p = param_new(&ps, "p", 1, (int[]){3});
  Tensor *q = param_new(&ps, "q", 1, (int[]){2}); /* never gets a gradient */
  init_const(p, 1.0f);
  init_const(q, 5.0f);
  float *g = tensor_grad(p);
  g[0] = 0.5f;
  g[1] = -2.0f;
  g[2] = 0.0f;
  SGD opt = {&ps, 0.1f};
  SGD_step(&opt);
  const float want[] = {0.95f, 1.2f, 1.0f}; /* p - 0.1 * g */
  CHECK_CLOSE(p->data, want, 3, 1e-7, 0); /* one float rounding */
  CHECK(q->data[0] == 5.0f && q->data[1] == 5.0f);
  paramset_free(&ps);
}

TEST(nn_adam_two_steps) {
  ParamSet ps = {0};
  Tensor *p = param_new(&ps, "p", 1, (int[]){3});
  Tensor *q = param_new(&ps, "q", 1, (int[]){1}); /* grad NULL throughout: must not move */
  p->data[0] = 1.0f;
  p->data[1] = -2.0f;
  p->data[2] = 0.5f;
  q->data[0] = 3.0f;
  Adam opt;
  Adam_init(&opt, &ps, 0.1f);
  float *g = tensor_grad(p);
  g[0] = 0.5f, g[1] = -1.0f, g[2] = 0.0f;
  Adam_step(&opt);
  g = p->grad; /* the step packed the parameters: p's gradient is now a slice of the block */
  /* step 1: m_hat = g, v_hat = g^2, so each weight moves lr * sign(g); a zero gradient moves
   * nothing (0 / (0 + eps)). */
  const float want1[] = {0.9f, -1.9f, 0.5f};
  CHECK_CLOSE(p->data, want1, 3, 1e-6, 0); /* float rounding + the eps in the denominator */
  g[0] = 0.2f, g[1] = 0.3f, g[2] = -4.0f;
  Adam_step(&opt);
  /* step 2, p[0]: m = 0.9*0.05 + 0.1*0.2 = 0.065, v = 0.999*0.00025 + 0.001*0.04 = 2.8975e-4;
   * m_hat = 0.065/0.19 = 0.3421053, v_hat = 2.8975e-4/0.001999 = 0.1449475;
   * p = 0.9 - 0.1 * 0.3421053 / 0.3807197 = 0.8101425. The same for p[1], p[2].
   * torch.optim.Adam(lr=0.1) gives 0.810142517, -1.85721517, 0.574413657. */
  const float want2[] = {0.810142517f, -1.85721517f, 0.574413657f};
  CHECK_CLOSE(p->data, want2, 3, 2e-6, 0); /* a few float roundings in the moment updates */
  CHECK(q->data[0] == 3.0f);
  CHECK_INT(opt.t, 2);

  /* a parameter added after the first step gets fresh moments */
  Tensor *r = param_new(&ps, "r", 1, (int[]){2});
  float *gr = tensor_grad(r);
  gr[0] = 1.0f, gr[1] = -1.0f;
  memset(g, 0, sizeof(float) * 3);
  Adam_step(&opt);
  /* t = 3: m_hat = 0.1/(1-0.9^3), v_hat = 0.001/(1-0.999^3): step lr * 0.369/0.577 */
  double mh = 0.1 / (1 - pow(0.9, 3)), vh = 0.001 / (1 - pow(0.999, 3));
  CHECK_NEAR(r->data[0], -0.1 * mh / (sqrt(vh) + 1e-8), 1e-6); /* float moments vs double */
  CHECK_NEAR(r->data[1], 0.1 * mh / (sqrt(vh) + 1e-8), 1e-6);   /* same */
  Adam_free(&opt);
  CHECK(opt.m == NULL && opt.v == NULL);
  paramset_free(&ps);
}

TEST(nn_clip_grad_norm) {
  ParamSet ps = {0};
  Tensor *a = param_new(&ps, "a", 1, (int[]){2});
  Tensor *b = param_new(&ps, "b", 1, (int[]){1});
  (void)param_new(&ps, "none", 1, (int[]){4}); /* no gradient reaches it: zero */
  paramset_pack(&ps); /* gradients are slices of one block from here on */
  float *ga = tensor_grad(a), *gb = tensor_grad(b);
  ga[0] = 3, ga[1] = 4, gb[0] = 12; /* global norm sqrt(9 + 16 + 144) = 13 */
  float n = clip_grad_norm(&ps, 20.0f);
  CHECK_NEAR(n, 13.0, 1e-5); /* float sqrt of an exact sum */
  CHECK(ga[0] == 3 && ga[1] == 4 && gb[0] == 12); /* under the limit: untouched */
  n = clip_grad_norm(&ps, 6.5f);
  CHECK_NEAR(n, 13.0, 1e-5); /* returns the norm before clipping */
  CHECK_NEAR(ga[0], 1.5, 1e-6); /* scaled by 6.5/13 = 0.5; float rounding */
  CHECK_NEAR(ga[1], 2.0, 1e-6);
  CHECK_NEAR(gb[0], 6.0, 1e-6);
  CHECK_NEAR(clip_grad_norm(&ps, 100.0f), 6.5, 1e-5); /* the new norm is the limit */
  paramset_free(&ps);
}

TEST(nn_layers_wrappers) {
  ParamSet ps = {0};
  LayerNorm ln;
  LayerNorm_init(&ln, &ps, "ln", 4);
  Tensor *x = tensor_from(2, (int[]){1, 4}, (const float[]){1, 2, 3, 4});
  Tensor *y = LayerNorm_forward(&ln, x);
  /* mean 2.5, var 1.25: (x - 2.5) / sqrt(1.25 + 1e-5) */
  double s = sqrt(1.25 + 1e-5);
  const float want[] = {(float)(-1.5 / s), (float)(-0.5 / s), (float)(0.5 / s), (float)(1.5 / s)};
  CHECK_CLOSE(y->data, want, 4, 1e-5, 0); /* float mean/var accumulation */

  Embedding e;
  Embedding_init(&e, &ps, "emb", 5, 3);
  Tensor *ids = tensor_from(1, (int[]){2}, (const float[]){4, 1});
  Tensor *ev = Embedding_forward(&e, ids);
  CHECK_INT(ev->shape[0], 2);
  CHECK_INT(ev->shape[1], 3);
  CHECK_CLOSE(ev->data, e.W->data + 12, 3, 0, 0); /* a copy of row 4: exact */
  CHECK_CLOSE(ev->data + 3, e.W->data + 3, 3, 0, 0); /* row 1 */

  Dropout d = {0.5f};
  Tensor *z = Dropout_forward(&d, x, false);
  CHECK_CLOSE(z->data, x->data, 4, 0, 0); /* eval mode: identity, exact */
  Tensor *big = tensor_full(1, (int[]){1000}, 1.0f);
  Tensor *zt = Dropout_forward(&d, big, true);
  int zeros = 0;
  for (long i = 0; i < zt->size; i++) {
    CHECK(zt->data[i] == 0.0f || zt->data[i] == 2.0f); /* kept ones scale by 1/(1-p) */
    zeros += zt->data[i] == 0.0f;
  }
  CHECK(zeros > 400 && zeros < 600); /* Binomial(1000, .5): std 16, so 6 sigma */
  paramset_free(&ps);
}

/* Fit y = 2x + 1 with one Linear layer, MSE and SGD: the whole loop of a lab in miniature. */
TEST(nn_train_linear_regression) {
  ParamSet ps = {0};
  Linear fc;
  Linear_init(&fc, &ps, "fc", 1, 1, true);
  enum { N = 32 };
  float xs[N], ys[N];
  for (int i = 0; i < N; i++) {
    xs[i] = -1.0f + 2.0f * (float)i / (N - 1);
    ys[i] = 2.0f * xs[i] + 1.0f;
  }
  SGD opt = {&ps, 0.5f};
  float first = 0, last = 0;
  for (int step = 0; step < 200; step++) {
    paramset_zero_grad(&ps);
    Tensor *x = tensor_from(2, (int[]){N, 1}, xs); /* (N, 1) */
    Tensor *y = tensor_from(2, (int[]){N, 1}, ys);
    Tensor *loss = t_mse(Linear_forward(&fc, x), y);
    if (step == 0) first = loss->data[0];
    last = loss->data[0];
    ag_backward(loss);
    SGD_step(&opt);
    ag_step_reset(); /* activations are gone; parameters stay */
  }
  CHECK(last < first);
  CHECK(last < 1e-3);
  CHECK_NEAR(fc.W->data[0], 2.0, 1e-2); /* noise-free data: the fit converges to the truth */
  CHECK_NEAR(fc.b->data[0], 1.0, 1e-2);
  paramset_free(&ps);
}
