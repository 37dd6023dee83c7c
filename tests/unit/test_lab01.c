/* Tests of lab01 (attention pooling): the `x y` data reader behind --data, zero-support
 * handling, the parametric model's gradients, and the golden comparison with the book's
 * PyTorch code (tests/golden/lab01_reference.py -> lab01_reference.json, on lab01_data.txt).
 * The exercise functions come from the variant being built; with VARIANT=labs (stubs) the
 * tests that need them say so and skip. */
#include <stdlib.h>
#include <unistd.h>

#include "../../chapters/01_attention_pooling/lab01_data.h"
#include "../../common/nn.h"
#include "../golden_io.h"
#include "../test.h"
#include "lab01/lab01.h"

#define GOLDEN_DATA "tests/golden/lab01_data.txt"
#define GOLDEN_REF "tests/golden/lab01_reference.json"

/* Write text to a fresh temporary file; returns its malloc'd path. */
static char *temp_file(const char *text) {
  char *path = strdup("/tmp/lab01_test_XXXXXX");
  int fd = mkstemp(path);
  if (fd < 0) return path;
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  return path;
}

/* Does this build have the exercise solutions? (A stub returns NULL.) */
static bool have_exercises(const char *test) {
  float u = 0.5f, k;
  if (gaussian_kernel(&u, &k, 1, 1.0) && leave_one_out(tensor_zeros(1, (int[]){2}))) return true;
  test_skip("the lab01 exercises are stubs in this build (VARIANT=labs)");
  return false;
}

TEST(lab01_read_xy_good_file) {
  char *p = temp_file("# a comment\n1.5 2.5\n\n  0.5\t-1e-1   # trailing comment\n3,4\r\n");
  float *x = NULL, *y = NULL;
  int n = 0;
  char err[256] = "";
  CHECK_INT(lab01_read_xy(p, &x, &y, &n, err, sizeof err), 0);
  CHECK_INT(n, 3);
  if (n == 3) {
    CHECK(x[0] == 1.5f && y[0] == 2.5f);
    CHECK(x[1] == 0.5f && y[1] == -0.1f);
    CHECK(x[2] == 3.0f && y[2] == 4.0f);
    CHECK_INT(lab01_sort_xy(x, y, n), 1); /* 1.5, 0.5, 3 -> 0.5, 1.5, 3 with y carried */
    CHECK(x[0] == 0.5f && y[0] == -0.1f && x[1] == 1.5f && y[1] == 2.5f);
    CHECK_INT(lab01_sort_xy(x, y, n), 0);
  }
  free(x);
  free(y);
  unlink(p);
  free(p);
}

TEST(lab01_read_xy_errors_name_the_line) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"1 2\n3 4\n5\n", ":3: expected two numbers"},
      {"1 2\n3 4 5\n", ":2: expected two numbers"},
      {"1 2\nx y\n", ":2: expected two numbers"},
      {"1 2\n1.5abc 2\n", ":2: expected two numbers"},
      {"1 2\nnan 2\n", ":2: x and y must be finite"},
      {"# only a comment\n1 2\n", "1 data point; need at least 2"},
      {"", "0 data points"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *p = temp_file(cases[i].text);
    float *x = NULL, *y = NULL;
    int n = -1;
    char err[256] = "";
    CHECK_INT(lab01_read_xy(p, &x, &y, &n, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, cases[i].want);
    CHECK_STR_CONTAINS(err, p); /* the message names the file */
    CHECK(x == NULL && n == -1); /* nothing allocated, nothing written */
    unlink(p);
    free(p);
  }
  float *x, *y;
  int n;
  char err[256] = "";
  CHECK_INT(lab01_read_xy("/nonexistent/lab01.txt", &x, &y, &n, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "cannot open");
}

TEST(lab01_generated_data_matches_the_book_recipe) {
  float x[50], y[50];
  lab01_make_data(50, x, y);
  for (int i = 0; i < 50; i++) {
    CHECK(x[i] >= 0.0f && x[i] < 5.0f);
    if (i) CHECK(x[i - 1] <= x[i]);
    /* noise is N(0, 0.5): 5 sigma is never exceeded in practice (p ~ 6e-7 per point) */
    CHECK(fabsf(y[i] - lab01_f(x[i])) < 2.5f);
  }
  float q[50];
  lab01_arange(0.0f, 0.1, 50, q);
  CHECK(q[0] == 0.0f && q[3] == (float)0.30000000000000004 && q[49] == (float)(49 * 0.1));
}

TEST(lab01_generated_data_of_the_1_0_edition) {
  /* d2l 1.0: 2 sin x + x (not 0.17's x^0.8), torch.randn noise, from its own stream */
  CHECK(fabsf(lab01_f10(2.0f) - (2.0f * sinf(2.0f) + 2.0f)) < 1e-6f);
  CHECK(fabsf(lab01_f10(4.0f) - lab01_f(4.0f)) > 0.5f); /* 4 - 4^0.8 = 0.97 */
  float x[40], y[40], x2[40], y2[40];
  Rng r, r2;
  rng_init(&r, 7);
  rng_init(&r2, 7);
  lab01_make_data10(&r, 40, x, y);
  lab01_make_data10(&r2, 40, x2, y2);
  double s = 0, ss = 0;
  for (int i = 0; i < 40; i++) {
    CHECK(x[i] >= 0.0f && x[i] < 5.0f);
    if (i) CHECK(x[i - 1] <= x[i]);
    CHECK(x[i] == x2[i] && y[i] == y2[i]); /* the same stream, the same data */
    double e = (double)y[i] - lab01_f10(x[i]);
    s += e;
    ss += e * e;
  }
  /* N(0, 1): the rms of 40 draws lies in [0.5, 1.5] (4.5 standard errors either way) */
  const double rms = sqrt(ss / 40);
  CHECK(rms > 0.5 && rms < 1.5);
  CHECK(fabs(s / 40) < 0.8);
}

TEST(lab01_unsupported_queries_are_marked_not_silent) {
  if (!have_exercises("lab01_unsupported_queries_are_marked_not_silent")) return;
  /* keys at 0, 0.5, 4.5, 5: the query 2.5 is 2 away from every key */
  Tensor *x = tensor_from(1, (int[]){4}, (float[]){0, 0.5f, 4.5f, 5});
  Tensor *y = tensor_from(1, (int[]){4}, (float[]){1, 2, 3, 4});
  Tensor *q = tensor_from(1, (int[]){2}, (float[]){0.25f, 2.5f});
  const KernelFn fns[3] = {boxcar_kernel, epanechnikov_kernel, gaussian_kernel};
  const double widths[3] = {1.0, 1.0, 0.05}; /* exp(-4 / 0.005) underflows to exactly 0 */
  for (int k = 0; k < 3; k++) {
    Tensor *A = NULL;
    int bad = -1;
    Tensor *yh = nadaraya_watson(x, y, q, fns[k], widths[k], &A, &bad);
    CHECK(yh && A);
    if (!yh || !A) continue;
    CHECK_INT(bad, 1);
    CHECK(isfinite(yh->data[0]));
    CHECK(isnan(yh->data[1]));
    for (int j = 0; j < 4; j++) CHECK(A->data[4 + j] == 0.0f);
  }
  /* the softmax form of the same narrow Gaussian never divides by zero: the nearest keys win */
  Tensor *s = t_softmax(t_scale(t_square(t_sub(t_reshape(q, 2, (int[]){2, 1}), x)), -200.0f));
  CHECK_NEAR(s->data[4 + 1] + s->data[4 + 2], 1.0, 1e-6); /* float rounding of a 2-term sum */
}

/* The parametric model as a function of (w, queries, keys, values) for the gradient check. */
static Tensor *nwkr_fn(Tensor **in, void *ctx) {
  (void)ctx;
  NWKernelRegression net = {.w = in[0]};
  return NWKernelRegression_forward(&net, in[1], in[2], in[3]);
}

TEST(lab01_parametric_gradients) {
  if (!have_exercises("lab01_parametric_gradients")) return;
  Tensor *in[4] = {
      tensor_from(1, (int[]){1}, (float[]){0.8f}),
      tensor_rand(1, (int[]){3}, 0.0f, 2.0f),
      tensor_rand(2, (int[]){3, 4}, 0.0f, 2.0f),
      tensor_rand(2, (int[]){3, 4}, -1.0f, 1.0f),
  };
  GRADCHECK(nwkr_fn, in, 4, NULL);
}

/* ---------- golden comparison with the book's PyTorch code ---------- */

/* The numbers at the end of a key path in the reference file (its layout is ours: every key
 * is unique along the path): an array into out[0..max), or one number. Returns the count, or
 * -1 when a key is missing. null (torch's 0/0) reads as NAN. */
static int ref_numbers(const char *text, const char *const *path, int depth, float *out,
                       int max) {
  const char *p = text;
  for (int d = 0; d < depth; d++) {
    char key[64];
    snprintf(key, sizeof key, "\"%s\"", path[d]);
    p = strstr(p, key);
    if (!p) return -1;
    p += strlen(key);
  }
  p = strchr(p, ':');
  if (!p) return -1;
  p++;
  while (*p == ' ') p++;
  bool array = *p == '[';
  if (array) p++;
  int n = 0;
  while (n < max) {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ']' || !*p) break;
    if (strncmp(p, "null", 4) == 0) {
      out[n++] = NAN;
      p += 4;
    } else {
      char *end;
      double v = strtod(p, &end);
      if (end == p) return -1;
      out[n++] = (float)v;
      p = end;
    }
    if (!array) break;
  }
  return n;
}

#define REF(text, out, max, ...)                                                     \
  ref_numbers((text), (const char *const[]){__VA_ARGS__},                             \
              (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)), \
              (out), (max))

/* Compare n predictions, NaN matching NaN (a query without support on both sides). */
static void check_preds(const char *what, const float *got, const float *want, int n,
                        double tol) {
  for (int i = 0; i < n; i++) {
    if (isnan(want[i]) || isnan(got[i])) {
      if (!(isnan(want[i]) && isnan(got[i])))
        test_fail(__FILE__, __LINE__, "%s[%d] = %.7g, torch gives %.7g", what, i, got[i],
                  want[i]);
      continue;
    }
    if (!(fabs((double)got[i] - want[i]) <= tol)) {
      test_fail(__FILE__, __LINE__, "%s[%d] = %.7g, torch gives %.7g (|diff| %.2g > %.0e)",
                what, i, got[i], want[i], fabs((double)got[i] - want[i]), tol);
      return;
    }
  }
}

TEST(lab01_golden_matches_pytorch) {
  if (!have_exercises("lab01_golden_matches_pytorch")) return;
  Golden golden;
  if (!golden_open(&golden, GOLDEN_REF, "tests/golden/lab01_reference.py")) return;
  const char *ref = golden.text;
  float *xt = NULL, *yt = NULL;
  int n = 0;
  char err[256];
  if (lab01_read_xy(GOLDEN_DATA, &xt, &yt, &n, err, sizeof err) != 0) {
    test_fail(__FILE__, __LINE__, "%s", err);
    golden_close(&golden);
    return;
  }
  /* the file parses to exactly the float32 numbers torch used */
  float want[64], q[50];
  CHECK_INT(REF(ref, want, 64, "x_train"), n);
  CHECK_CLOSE(xt, want, n, 0, 0); /* same decimal -> same float32: exact */
  CHECK_INT(REF(ref, want, 64, "y_train"), n);
  CHECK_CLOSE(yt, want, n, 0, 0);
  lab01_arange(0.0f, 0.1, 50, q);
  CHECK_INT(REF(ref, want, 64, "x_test"), 50);
  /* torch's vectorized arange adds j * 0.1f to a float base, so a few of its queries sit one
   * float32 ulp (< 5e-7 below 5) from ours; compare the estimators on torch's queries */
  CHECK_CLOSE(q, want, 50, 5e-7, 0);
  memcpy(q, want, sizeof q);

  Tensor *X = tensor_from(1, (int[]){n}, xt), *Y = tensor_from(1, (int[]){n}, yt);
  Tensor *Q = tensor_from(1, (int[]){50}, q);

  /* Nadaraya–Watson with the four kernels and the four widths: 1e-5, float32 sums of 50
   * terms in a different order (torch: pairwise + BLAS gemv; here: double) differ by ~1e-6 */
  static const struct {
    const char *key;
    KernelFn fn;
    double width;
  } nw[] = {{"gaussian", gaussian_kernel, 1.0},   {"boxcar", boxcar_kernel, 1.0},
            {"constant", constant_kernel, 1.0},   {"epanechnikov", epanechnikov_kernel, 1.0},
            {"sigma_0.1", gaussian_kernel, 0.1},  {"sigma_0.2", gaussian_kernel, 0.2},
            {"sigma_0.5", gaussian_kernel, 0.5},  {"sigma_1", gaussian_kernel, 1.0}};
  for (size_t k = 0; k < sizeof nw / sizeof nw[0]; k++) {
    int bad = -1;
    Tensor *yh = nadaraya_watson(X, Y, Q, nw[k].fn, nw[k].width, NULL, &bad);
    CHECK(yh != NULL);
    CHECK_INT(REF(ref, want, 64, "estimators", nw[k].key, "y_hat"), 50);
    if (yh) check_preds(nw[k].key, yh->data, want, 50, 1e-5);
  }

  /* average pooling and nonparametric (softmax) pooling, as the chapter computes them */
  double s = 0;
  for (int i = 0; i < n; i++) s += yt[i];
  CHECK_INT(REF(ref, want, 64, "estimators", "average", "y_hat"), 50);
  CHECK_NEAR((float)(s / n), want[0], 1e-5); /* a float32 mean of 50 values */
  Tensor *scores = t_scale(t_square(t_sub(t_reshape(Q, 2, (int[]){50, 1}), X)), -0.5f);
  Tensor *yh = t_matmul(t_softmax(scores), t_reshape(Y, 2, (int[]){n, 1}));
  CHECK_INT(REF(ref, want, 64, "estimators", "nonparametric", "y_hat"), 50);
  check_preds("nonparametric", yh->data, want, 50, 1e-5); /* as above */

  /* parametric: the chapter's training loop from torch's w0 */
  float w0 = NAN, wref = NAN, losses_ref[5] = {0};
  CHECK_INT(REF(ref, &w0, 1, "estimators", "parametric", "w0"), 1);
  CHECK_INT(REF(ref, &wref, 1, "estimators", "parametric", "w"), 1);
  CHECK_INT(REF(ref, losses_ref, 5, "estimators", "parametric", "epoch_losses"), 5);
  ParamSet ps = {0};
  NWKernelRegression net = {.w = param_new(&ps, "w", 1, (int[]){1})};
  net.w->data[0] = w0;
  SGD trainer = {.ps = &ps, .lr = 0.5f};
  for (int epoch = 0; epoch < 5; epoch++) {
    paramset_zero_grad(&ps);
    Tensor *x = tensor_from(1, (int[]){n}, xt), *y = tensor_from(1, (int[]){n}, yt);
    Tensor *out = NWKernelRegression_forward(&net, x, leave_one_out(x), leave_one_out(y));
    Tensor *loss = t_sum_all(t_scale(t_square(t_sub(out, y)), 0.5f));
    /* 1e-4: a loss near 10 summed from 50 float32 terms, after epochs of float32 SGD on w */
    if (fabs((double)loss->data[0] - losses_ref[epoch]) > 1e-4)
      test_fail(__FILE__, __LINE__, "epoch %d loss %.6f, torch gives %.6f", epoch + 1,
                (double)loss->data[0], (double)losses_ref[epoch]);
    ag_backward(loss);
    SGD_step(&trainer);
    ag_step_reset();
  }
  /* the final w and the test predictions (keys = all training inputs for every query) */
  /* 1e-4 relative: w moved by five float32 gradient steps of lr 0.5 */
  CHECK_NEAR(net.w->data[0], wref, 1e-4 * fabs(wref));
  Tensor *keys = tensor_new(2, (int[]){50, n}), *values = tensor_new(2, (int[]){50, n});
  for (int i = 0; i < 50; i++) {
    memcpy(keys->data + (long)i * n, xt, sizeof(float) * (size_t)n);
    memcpy(values->data + (long)i * n, yt, sizeof(float) * (size_t)n);
  }
  ag_set_grad_enabled(false);
  Tensor *yp = NWKernelRegression_forward(&net, tensor_from(1, (int[]){50}, q), keys, values);
  ag_set_grad_enabled(true);
  CHECK_INT(REF(ref, want, 64, "estimators", "parametric", "y_hat"), 50);
  if (yp) check_preds("parametric", yp->data, want, 50, 1e-4); /* w carries ~1e-6 relative */
  paramset_free(&ps);
  free(xt);
  free(yt);
  golden_close(&golden);
}
