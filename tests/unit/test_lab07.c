/* Tests of lab07 (the Vision Transformer): the Fashion-MNIST reader on files built here (good,
 * wrong magic, truncated, count mismatch, bad label), bilinear resizing against hand-computed
 * values, GELU against double-precision erfc, finite-difference gradients of the new layers,
 * and the whole tiny ViT (logits, loss, attention, every parameter gradient) against the
 * book's PyTorch code (tests/golden/lab07_reference.py -> lab07_reference.txt). The exercise
 * functions come from the variant being built; with VARIANT=labs the tests that need them say
 * so and skip. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../../common/fashion_mnist.h"
#include "../../common/nn.h"
#include "../../common/rng.h"
#include "../golden_io.h"
#include "../test.h"
#include "../../chapters/07_vit/vit_cls_only.h"
#include "../../chapters/07_vit/vit_step.h"

#define GOLDEN07 "tests/golden/lab07_reference.txt"

/* ---------------------------------------------------------------- Fashion-MNIST files */

static void put_be32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* Write an IDX file gzip-compressed. images: magic 0x803, dims n x rows x cols, pixel k of
 * image i = (7 i + k) % 256; labels: magic 0x801, label i = i % 10. drop_tail removes that
 * many bytes of the payload (a truncated file, still a valid gzip stream). */
static void write_idx(const char *path, uint32_t magic, int n, int rows, int cols, int drop_tail,
                      int bad_label_at) {
  int ndim = (int)(magic & 0xff);
  size_t payload = ndim == 3 ? (size_t)n * rows * cols : (size_t)n;
  size_t len = 4 + 4 * (size_t)ndim + payload - (size_t)drop_tail;
  unsigned char *buf = calloc(len + 16, 1);
  put_be32(buf, magic);
  put_be32(buf + 4, (uint32_t)n);
  if (ndim == 3) put_be32(buf + 8, (uint32_t)rows), put_be32(buf + 12, (uint32_t)cols);
  unsigned char *p = buf + 4 + 4 * ndim;
  for (size_t k = 0; k + drop_tail < payload; k++) {
    if (ndim == 3) {
      size_t i = k / ((size_t)rows * cols), j = k % ((size_t)rows * cols);
      p[k] = (unsigned char)((7 * i + j) % 256);
    } else {
      p[k] = (unsigned char)(k % 10);
    }
  }
  if (bad_label_at >= 0) p[bad_label_at] = 12;
  gzFile g = gzopen(path, "wb");
  gzwrite(g, buf, (unsigned)len);
  gzclose(g);
  free(buf);
}

typedef struct {
  char dir[64], img[128], lab[128];
} TmpFiles;

static void tmp_files(TmpFiles *t) {
  snprintf(t->dir, sizeof t->dir, "/tmp/al_test_fmnist.XXXXXX");
  if (!mkdtemp(t->dir)) t->dir[0] = '\0';
  snprintf(t->img, sizeof t->img, "%s/train-images-idx3-ubyte.gz", t->dir);
  snprintf(t->lab, sizeof t->lab, "%s/train-labels-idx1-ubyte.gz", t->dir);
}

static void tmp_cleanup(TmpFiles *t) {
  unlink(t->img);
  unlink(t->lab);
  rmdir(t->dir);
}

TEST(lab07_fmnist_reads_good_files) {
  TmpFiles t;
  tmp_files(&t);
  write_idx(t.img, 0x803, 5, 4, 6, 0, -1);
  write_idx(t.lab, 0x801, 5, 0, 0, 0, -1);
  FashionMNIST d;
  char err[512] = "";
  CHECK_INT(fashion_mnist_read(&d, t.img, t.lab, err, sizeof err), 0);
  CHECK_INT(d.n, 5);
  CHECK_INT(d.rows, 4);
  CHECK_INT(d.cols, 6);
  if (d.pixels) {
    CHECK_INT(d.pixels[2 * 24 + 5], (7 * 2 + 5) % 256);
    CHECK_INT(d.labels[4], 4);
    /* a batch in a given order, scaled to [0, 1] */
    float X[2 * 24], y[2];
    int order[5] = {3, 1, 0, 2, 4};
    fashion_mnist_batch(&d, order, 1, 2, 4, X, y); /* images order[1], order[2], resized 4x4 */
    CHECK_NEAR(y[0], 1, 0);
    CHECK_NEAR(y[1], 0, 0);
  }
  fashion_mnist_free(&d);
  /* the search: --data-dir first */
  CHECK_INT(fashion_mnist_load(&d, "train", t.dir, err, sizeof err), 0);
  CHECK_INT(d.n, 5);
  fashion_mnist_free(&d);
  CHECK_INT(fashion_mnist_load(&d, "valid", t.dir, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "split must be");
  tmp_cleanup(&t);
}

TEST(lab07_fmnist_batch_values_square) {
  TmpFiles t;
  tmp_files(&t);
  write_idx(t.img, 0x803, 3, 2, 2, 0, -1);
  write_idx(t.lab, 0x801, 3, 0, 0, 0, -1);
  FashionMNIST d;
  char err[512];
  CHECK_INT(fashion_mnist_read(&d, t.img, t.lab, err, sizeof err), 0);
  /* image 2 holds pixels 14, 15, 16, 17 */
  float X[4], y[1];
  fashion_mnist_batch(&d, NULL, 2, 1, 2, X, y);
  CHECK_CLOSE(X, ((float[]){14 / 255.f, 15 / 255.f, 16 / 255.f, 17 / 255.f}), 4, 1e-7, 0);
  CHECK_NEAR(y[0], 2, 0);
  /* upsampled to 4x4: row 0 is [a, 3a/4 + b/4, a/4 + 3b/4, b] (align_corners = false) */
  float U[16];
  fashion_mnist_batch(&d, NULL, 2, 1, 4, U, y);
  const float a = 14 / 255.f, b = 15 / 255.f;
  CHECK_CLOSE(U, ((float[]){a, 0.75f * a + 0.25f * b, 0.25f * a + 0.75f * b, b}), 4, 1e-6, 0);
  fashion_mnist_free(&d);
  tmp_cleanup(&t);
}

/* Every damaged file is a -1 with one line naming the file and the problem. */
static void expect_read_error(const char *what, const char *sub, const char *file_sub,
                              TmpFiles *t) {
  FashionMNIST d;
  char err[512] = "";
  int rc = fashion_mnist_read(&d, t->img, t->lab, err, sizeof err);
  if (rc != -1) test_fail(__FILE__, __LINE__, "%s: read returned %d, expected -1", what, rc);
  if (!strstr(err, sub) || !strstr(err, file_sub) || strchr(err, '\n'))
    test_fail(__FILE__, __LINE__, "%s: error \"%s\" should be one line with \"%s\" and \"%s\"",
              what, err, sub, file_sub);
  CHECK(d.pixels == NULL && d.labels == NULL);
}

TEST(lab07_fmnist_bad_files_are_clear_errors) {
  TmpFiles t;
  tmp_files(&t);
  /* wrong magic: the labels file given as the images file */
  write_idx(t.img, 0x801, 5, 0, 0, 0, -1);
  write_idx(t.lab, 0x801, 5, 0, 0, 0, -1);
  expect_read_error("labels as images", "dims, expected 3", "train-images", &t);
  write_idx(t.img, 0x1234, 5, 4, 4, 0, -1);
  expect_read_error("wrong magic", "magic", "train-images", &t);
  /* truncated images (10 bytes missing) and truncated labels */
  write_idx(t.img, 0x803, 5, 4, 4, 10, -1);
  expect_read_error("truncated images", "truncated IDX data", "train-images", &t);
  write_idx(t.img, 0x803, 5, 4, 4, 0, -1);
  write_idx(t.lab, 0x801, 5, 0, 0, 2, -1);
  expect_read_error("truncated labels", "truncated IDX data", "train-labels", &t);
  /* a truncated gzip stream (cut mid-file) */
  {
    FILE *f = fopen(t.img, "rb");
    unsigned char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    f = fopen(t.img, "wb");
    if (f) fwrite(buf, 1, n / 2, f), fclose(f);
    write_idx(t.lab, 0x801, 5, 0, 0, 0, -1);
    expect_read_error("truncated gzip", "truncated", "train-images", &t);
  }
  /* label/image count mismatch */
  write_idx(t.img, 0x803, 5, 4, 4, 0, -1);
  write_idx(t.lab, 0x801, 4, 0, 0, 0, -1);
  expect_read_error("count mismatch", "4 labels, but", "train-labels", &t);
  /* a label outside 0..9 */
  write_idx(t.lab, 0x801, 5, 0, 0, 0, 3);
  expect_read_error("bad label", "label 12 of image 3", "train-labels", &t);
  /* a missing file */
  unlink(t.lab);
  expect_read_error("missing labels", "cannot open", "train-labels", &t);
  tmp_cleanup(&t);
}

TEST(lab07_bilinear_resize_downsample_and_identity) {
  /* identity: same size copies */
  float src[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, dst[9];
  bilinear_resize(src, 3, 3, dst, 3, 3);
  CHECK_CLOSE(dst, src, 9, 0, 0);
  /* 4x4 -> 2x2 (no antialias): source coordinate (i + 0.5) * 2 - 0.5 = 0.5, 2.5: the mean of
   * each 2x2 block */
  float s4[16], d2[4];
  for (int i = 0; i < 16; i++) s4[i] = (float)i;
  bilinear_resize(s4, 4, 4, d2, 2, 2);
  CHECK_CLOSE(d2, ((float[]){2.5f, 4.5f, 10.5f, 12.5f}), 4, 1e-6, 0);
}

/* ---------------------------------------------------------------- GELU accuracy */

TEST(lab07_gelu_matches_double_erfc) {
  /* x Phi(x) and Phi(x) + x phi(x) in double are the reference; float32 ops should be within
   * a few ulps relative plus 1e-7 absolute (the vectorized exp/erfc approximations) */
  enum { N = 2001 };
  Tensor *x = tensor_new(1, (const int[]){N});
  for (int i = 0; i < N; i++) x->data[i] = -10.0f + 0.01f * (float)i;
  x->requires_grad = true;
  Tensor *y = t_gelu(x);
  ag_backward(t_sum_all(y));
  float want[N], dwant[N];
  for (int i = 0; i < N; i++) {
    double v = x->data[i], cdf = 0.5 * erfc(-v / sqrt(2.0));
    want[i] = (float)(v * cdf);
    dwant[i] = (float)(cdf + v * exp(-0.5 * v * v) / sqrt(2 * M_PI));
  }
  CHECK_CLOSE(y->data, want, N, 1e-7, 1e-6);
  CHECK_CLOSE(x->grad, dwant, N, 1e-7, 1e-6);
}

/* The ViT's tensors are big enough for GELU's and dropout's threaded, vectorized loops (above
 * 65536 elements); the small tests above run the serial path only. */
TEST(lab07_gelu_and_dropout_on_large_tensors) {
  enum { N = 70001 };
  Tensor *x = tensor_new(1, (const int[]){N});
  for (int i = 0; i < N; i++) x->data[i] = -8.0f + 16.0f * (float)i / (N - 1);
  x->requires_grad = true;
  Tensor *y = t_gelu(x);
  ag_backward(t_sum_all(y));
  float *want = malloc(sizeof(float) * N), *dwant = malloc(sizeof(float) * N);
  for (int i = 0; i < N; i++) {
    double v = x->data[i], cdf = 0.5 * erfc(-v / sqrt(2.0));
    want[i] = (float)(v * cdf);
    dwant[i] = (float)(cdf + v * exp(-0.5 * v * v) / sqrt(2 * M_PI));
  }
  /* same tolerance as the small test: float32 rounding of the erfc / exp approximations */
  CHECK_CLOSE(y->data, want, N, 1e-7, 1e-6);
  CHECK_CLOSE(x->grad, dwant, N, 1e-7, 1e-6);
  free(want);
  free(dwant);
  ag_step_reset();
  /* dropout p = 0.1 on 100000 ones: kept fraction 0.9 within 5 binomial sigmas (sigma =
   * sqrt(0.9 * 0.1 / 1e5) = 0.00095), kept values exactly 1 / 0.9, and the same seed gives the
   * same mask however many threads run the loop */
  enum { M = 100000 };
  Tensor *ones = tensor_full(1, (const int[]){M}, 1.0f);
  rng_seed(7);
  Tensor *a = t_dropout(ones, 0.1f, true);
  long kept = 0, bad = 0;
  for (long i = 0; i < M; i++) {
    kept += a->data[i] != 0;
    bad += a->data[i] != 0 && a->data[i] != 1.0f / 0.9f;
  }
  CHECK_NEAR((double)kept / M, 0.9, 0.0048);
  CHECK_INT(bad, 0);
#ifdef _OPENMP
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
#endif
  rng_seed(7);
  Tensor *b = t_dropout(ones, 0.1f, true);
#ifdef _OPENMP
  omp_set_num_threads(saved);
#endif
  CHECK_CLOSE(b->data, a->data, M, 0, 0);
}

/* Layer norm over the ViT's (batch * steps, hiddens) rows takes the threaded path (rows split
 * over threads, per-thread dgamma / dbeta partials): forward and all three gradients against
 * the closed form in double. */
TEST(lab07_layer_norm_threaded_path) {
  enum { R = 1100, D = 64 }; /* 70400 elements: above the 65536 threshold */
  Tensor *x = tensor_new(2, (const int[]){R, D});
  Tensor *gamma = tensor_new(1, (const int[]){D}), *beta = tensor_new(1, (const int[]){D});
  for (long i = 0; i < x->size; i++) x->data[i] = (float)(2 * sin(0.37 * i) + 0.5 * cos(0.011 * i));
  for (int j = 0; j < D; j++) gamma->data[j] = (float)(1 + 0.5 * sin(j)), beta->data[j] = (float)(0.1 * j);
  x->requires_grad = gamma->requires_grad = beta->requires_grad = true;
  Tensor *y = t_layer_norm(x, gamma, beta, 1e-5f);
  float *seed = malloc(sizeof(float) * R * D);
  for (long i = 0; i < (long)R * D; i++) seed[i] = (float)sin(0.73 * i + 0.2);
  ag_backward_with(y, seed);
  float *wy = malloc(sizeof(float) * R * D), *wdx = malloc(sizeof(float) * R * D);
  double dg[D] = {0}, db[D] = {0};
  for (int r = 0; r < R; r++) {
    const float *xr = x->data + (long)r * D, *gr = seed + (long)r * D;
    double m = 0, v = 0, a = 0, b = 0, xh[D];
    for (int j = 0; j < D; j++) m += xr[j] / (double)D;
    for (int j = 0; j < D; j++) v += (xr[j] - m) * (xr[j] - m) / D;
    double rstd = 1 / sqrt(v + 1e-5);
    for (int j = 0; j < D; j++) {
      xh[j] = (xr[j] - m) * rstd;
      wy[(long)r * D + j] = (float)(xh[j] * gamma->data[j] + beta->data[j]);
      dg[j] += gr[j] * xh[j];
      db[j] += gr[j];
      a += gr[j] * gamma->data[j] / D;
      b += gr[j] * gamma->data[j] * xh[j] / D;
    }
    for (int j = 0; j < D; j++) wdx[(long)r * D + j] = (float)(rstd * (gr[j] * gamma->data[j] - a - xh[j] * b));
  }
  float wdg[D], wdb[D];
  for (int j = 0; j < D; j++) wdg[j] = (float)dg[j], wdb[j] = (float)db[j];
  /* float32 against double: 1e-5 per element; dgamma / dbeta are sums of 1100 float32 terms of
   * order 1, so 1e-3 absolute (about 1100 x 2^-24 x their magnitude, with margin) */
  CHECK_CLOSE(y->data, wy, (long)R * D, 1e-5, 1e-5);
  CHECK_CLOSE(x->grad, wdx, (long)R * D, 1e-5, 1e-4);
  CHECK_CLOSE(gamma->grad, wdg, D, 1e-3, 1e-4);
  CHECK_CLOSE(beta->grad, wdb, D, 1e-3, 1e-4);
  free(seed);
  free(wy);
  free(wdx);
}

/* ---------------------------------------------------------------- the layers */

static bool have_lab07(const char *test) {
  ParamSet ps = {0};
  ViT m;
  ViT_init(&m, &ps, 4, 2, 1, 4, 4, 2, 1, 0, 0, false, 2);
  Tensor *X = tensor_zeros(4, (const int[]){1, 1, 4, 4});
  bool ok = ViT_forward(&m, X, false) != NULL;
  ViT_free(&m);
  paramset_free(&ps);
  if (!ok)
    test_skip("the lab07 (or lab04/lab02) exercises are stubs in this build (VARIANT=labs)");
  return ok;
}

TEST(lab07_book_shape_checks) {
  if (!have_lab07("lab07_book_shape_checks")) return;
  ParamSet ps = {0};
  PatchEmbedding pe;
  PatchEmbedding_init(&pe, &ps, "pe", 96, 16, 3, 512);
  Tensor *Y = PatchEmbedding_forward(&pe, tensor_zeros(4, (const int[]){4, 3, 96, 96}));
  CHECK(Y && Y->ndim == 3 && Y->shape[0] == 4 && Y->shape[1] == 36 && Y->shape[2] == 512);
  /* zeros in: every output is the bias */
  if (Y) CHECK_CLOSE(Y->data + 35 * 512, pe.proj.b->data, 512, 0, 0);
  ViTBlock blk;
  ViTBlock_init(&blk, &ps, "blk", 24, 48, 8, 0.5f, false);
  Tensor *Z = ViTBlock_forward(&blk, tensor_full(3, (const int[]){2, 100, 24}, 1.0f), NULL, false);
  CHECK(Z && Z->ndim == 3 && Z->shape[0] == 2 && Z->shape[1] == 100 && Z->shape[2] == 24);
  CHECK_ERROR(PatchEmbedding_init(&pe, &ps, "pe", 30, 7, 1, 8), "multiple of patch_size");
  paramset_free(&ps);
}

TEST(lab07_patch_embedding_is_a_stride_p_convolution) {
  if (!have_lab07("lab07_patch_embedding_is_a_stride_p_convolution")) return;
  /* direct convolution sum in double, kernel W[(c, i, j), o] */
  ParamSet ps = {0};
  PatchEmbedding pe;
  PatchEmbedding_init(&pe, &ps, "pe", 6, 3, 2, 5);
  Tensor *X = golden_gen(4, (const int[]){2, 2, 6, 6}, 0.37, 0.2, 1.0);
  Tensor *Y = PatchEmbedding_forward(&pe, X); /* (2, 4, 5) */
  CHECK(Y && Y->shape[1] == 4 && Y->shape[2] == 5);
  if (Y) {
    float want[2 * 4 * 5];
    for (int b = 0; b < 2; b++)
      for (int gy = 0; gy < 2; gy++)
        for (int gx = 0; gx < 2; gx++)
          for (int o = 0; o < 5; o++) {
            double s = pe.proj.b->data[o];
            for (int c = 0; c < 2; c++)
              for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                  s += (double)X->data[((b * 2 + c) * 6 + gy * 3 + i) * 6 + gx * 3 + j] *
                       pe.proj.W->data[((c * 3 + i) * 3 + j) * 5 + o];
            want[(b * 4 + gy * 2 + gx) * 5 + o] = (float)s;
          }
    CHECK_CLOSE(Y->data, want, 40, 1e-6, 1e-5); /* float32 sums of 18 products vs double */
  }
  paramset_free(&ps);
}

/* gradchecks: inputs[0] is the data, the rest the layer's parameters (ctx is the layer) */
static Tensor *f_patch(Tensor **in, void *ctx) { return PatchEmbedding_forward(ctx, in[0]); }
static Tensor *f_mlp(Tensor **in, void *ctx) { return ViTMLP_forward(ctx, in[0], false); }
static Tensor *f_block(Tensor **in, void *ctx) { return ViTBlock_forward(ctx, in[0], NULL, false); }
static Tensor *f_cls(Tensor **in, void *ctx) { return vit_add_cls_and_positions(ctx, in[0], false); }
static Tensor *f_vit(Tensor **in, void *ctx) { return ViT_forward(ctx, in[0], false); }

/* Finite differences in float32 with step 1e-2 (GRADCHECK): 2e-2 relative absorbs the
 * rounding of the two forward passes and the curvature of GELU / softmax / layer norm. */
TEST(lab07_gradcheck_layers) {
  if (!have_lab07("lab07_gradcheck_layers")) return;
  ParamSet ps = {0};
  PatchEmbedding pe;
  PatchEmbedding_init(&pe, &ps, "pe", 4, 2, 2, 3);
  GRADCHECK(f_patch, ((Tensor *[]){golden_gen(4, (const int[]){2, 2, 4, 4}, 0.3, 0.1, 1.0),
                                   pe.proj.W, pe.proj.b}), 3, &pe);
  ag_step_reset(); /* one backward per tape: each check starts a fresh one */
  ViTMLP mlp;
  ViTMLP_init(&mlp, &ps, "mlp", 4, 6, 0.0f);
  GRADCHECK(f_mlp, ((Tensor *[]){golden_gen(3, (const int[]){2, 3, 4}, 0.41, 0.2, 1.5),
                                 mlp.dense1.W, mlp.dense1.b, mlp.dense2.W}), 4, &mlp);
  ag_step_reset();
  ViTBlock blk;
  ViTBlock_init(&blk, &ps, "blk", 4, 6, 2, 0.0f, false);
  init_uniform(blk.ln1.gamma, 0.5f, 1.5f); /* non-trivial norms */
  init_uniform(blk.ln2.beta, -0.5f, 0.5f);
  GRADCHECK(f_block, ((Tensor *[]){golden_gen(3, (const int[]){2, 3, 4}, 0.53, 0.3, 1.0),
                                   blk.ln1.gamma, blk.attention.W_q.W, blk.attention.W_v.W,
                                   blk.ln2.beta, blk.mlp.dense2.b}), 6, &blk);
  ag_step_reset();
  ViT m;
  ViT_init(&m, &ps, 4, 2, 1, 4, 6, 2, 1, 0.0f, 0.0f, false, 3);
  init_uniform(m.cls_token, -1, 1);
  GRADCHECK(f_cls, ((Tensor *[]){golden_gen(3, (const int[]){2, 4, 4}, 0.29, 0.4, 1.0),
                                 m.cls_token, m.pos_embedding}), 3, &m);
  ag_step_reset();
  /* a fresh model: gradcheck resets the inputs' grad pointers, and parameter grads are malloc'd */
  ViT m2;
  ViT_init(&m2, &ps, 4, 2, 1, 4, 6, 2, 1, 0.0f, 0.0f, false, 3);
  init_uniform(m2.cls_token, -1, 1);
  GRADCHECK(f_vit, ((Tensor *[]){golden_gen(4, (const int[]){2, 1, 4, 4}, 0.61, 0.5, 1.0),
                                 m2.cls_token, m2.pos_embedding, m2.patch_embedding.proj.W,
                                 m2.head.W}), 5, &m2);
  ViT_free(&m2);
  ViT_free(&m);
  paramset_free(&ps);
}

TEST(lab07_cls_and_positions_values) {
  if (!have_lab07("lab07_cls_and_positions_values")) return;
  ParamSet ps = {0};
  ViT m;
  ViT_init(&m, &ps, 4, 2, 1, 3, 4, 1, 1, 0.0f, 0.0f, false, 2);
  for (int i = 0; i < 3; i++) m.cls_token->data[i] = 10.0f * (float)(i + 1);
  for (int i = 0; i < 15; i++) m.pos_embedding->data[i] = 0.5f * (float)i;
  Tensor *P = golden_gen(3, (const int[]){2, 4, 3}, 0.7, 0.1, 1.0);
  Tensor *Y = vit_add_cls_and_positions(&m, P, false);
  CHECK(Y && Y->ndim == 3 && Y->shape[0] == 2 && Y->shape[1] == 5 && Y->shape[2] == 3);
  if (Y) {
    float want[2 * 5 * 3];
    for (int b = 0; b < 2; b++)
      for (int s = 0; s < 5; s++)
        for (int k = 0; k < 3; k++)
          want[(b * 5 + s) * 3 + k] =
              (s == 0 ? m.cls_token->data[k] : P->data[(b * 4 + s - 1) * 3 + k]) +
              m.pos_embedding->data[s * 3 + k];
    CHECK_CLOSE(Y->data, want, 30, 0, 0);
  }
  ViT_free(&m);
  paramset_free(&ps);
}

/* ---------------------------------------------------------------- golden: the book's ViT */

/* The tiny ViT of tests/golden/lab07_reference.py through `forward` (ViT_forward, the book's
 * pass, or ViT_forward_cls_only, its stand-in): logits, loss, the last block's attention and
 * every parameter gradient against PyTorch's. */
static void golden_vit(Golden *ref, ViTForwardFn forward) {
  ParamSet ps = {0};
  ViT m;
  ViT_init(&m, &ps, 8, 4, 1, 8, 12, 2, 2, 0.0f, 0.0f, false, 10);
  for (int j = 0; j < ps.n; j++) /* the script's deterministic weights, same order */
    golden_fill(ps.items[j]->data, ps.items[j]->size, 0.3 + 0.07 * j, 0.1 * j, 0.5);
  Tensor *X = golden_gen(4, (const int[]){2, 1, 8, 8}, 0.23, 0.1, 1.0);
  Tensor *y = tensor_from(1, (const int[]){2}, (const float[]){3, 7});
  /* the stand-in is chosen against the block of this build (the solutions' in the tests) */
  CHECK(ViT_forward_choose(&m, X) == ViT_forward_cls_only);
  ag_step_reset();
  X = golden_gen(4, (const int[]){2, 1, 8, 8}, 0.23, 0.1, 1.0);
  y = tensor_from(1, (const int[]){2}, (const float[]){3, 7});
  Tensor *logits = forward(&m, X, false); /* (2, 10) */
  Tensor *loss = t_mean_all(t_cross_entropy(logits, y, NULL));
  ag_backward(loss);
  /* float32 through two blocks vs torch's float32 (different summation orders): 1e-5 */
  golden_check(ref, "logits", logits->data, logits->size, 1e-5, 1e-4);
  golden_check(ref, "loss", loss->data, 1, 1e-5, 0);
  /* the last block's weights (4, 5, 5); the stand-in computes the <cls> query's row only */
  const Tensor *att = m.blks[1].attention.attention.attention_weights;
  const int nq = forward == ViT_forward_cls_only ? 1 : 5;
  long na = 0;
  float *ga = golden_record(ref, "attention_last", &na); /* (4, 5, 5) */
  CHECK(att != NULL && att->ndim == 3 && att->shape[0] == 4 && att->shape[1] == nq &&
        att->shape[2] == 5 && na == 100);
  if (att && ga && att->size == 4 * nq * 5 && na == 100) {
    float rows[100];
    for (int i = 0; i < 4; i++)
      for (int q = 0; q < nq; q++)
        for (int j = 0; j < 5; j++) rows[(i * nq + q) * 5 + j] = ga[(i * 5 + q) * 5 + j];
    check_close_(__FILE__, __LINE__, "attention_last", att->data, rows, att->size, 1e-6, 1e-5);
  }
  free(ga);
  if (ps.n != 32) test_fail(__FILE__, __LINE__, "ViT has %d parameter tensors, the golden 32", ps.n);
  for (int j = 0; j < ps.n && j < 32; j++) {
    char name[32];
    snprintf(name, sizeof name, "grad.%d", j);
    long n;
    float *w = golden_record(ref, name, &n);
    Tensor *p = ps.items[j];
    if (!w) continue;
    if (n != p->size || !p->grad)
      test_fail(__FILE__, __LINE__, "%s (%s): size %ld vs golden %ld, grad %p", name, p->name,
                p->size, n, (void *)p->grad);
    else
      check_close_(__FILE__, __LINE__, p->name, p->grad, w, n, 1e-5, 1e-4);
    free(w);
  }
  ag_step_reset();
  ViT_free(&m);
  paramset_free(&ps);
}

TEST(lab07_golden_vit_against_pytorch) {
  if (!have_lab07("lab07_golden_vit_against_pytorch")) return;
  Golden ref;
  if (!golden_open(&ref, GOLDEN07, "tests/golden/lab07_reference.py")) return;
  golden_vit(&ref, ViT_forward);          /* the book's forward: every block on every row */
  golden_vit(&ref, ViT_forward_cls_only); /* the last block on the <cls> row (vit_cls_only.c) */
  /* bilinear resize vs F.interpolate(align_corners=False): float rounding only */
  Tensor *img = golden_gen(2, (const int[]){5, 7}, 0.37, 0.2, 1.0);
  float out[36]; /* (9, 4) */
  bilinear_resize(img->data, 5, 7, out, 9, 4);
  golden_check(&ref, "resize_5x7_to_9x4", out, 36, 1e-6, 1e-6);
  golden_close(&ref);
}

/* ---------------------------------------------------------------- the <cls>-only stand-in */

/* A block written another way (post-norm, lab06's order): its <cls> row is not the pre-norm
 * block's, so the stand-in must not be used. */
static Tensor *post_norm_block(ViTBlock *blk, Tensor *X, Tensor *valid_lens, bool training) {
  Tensor *A = MultiHeadAttention_forward(&blk->attention, X, X, X, valid_lens, training);
  if (!A) return NULL;
  Tensor *Y = LayerNorm_forward(&blk->ln1, t_add(X, A));
  return LayerNorm_forward(&blk->ln2, t_add(Y, ViTMLP_forward(&blk->mlp, Y, training)));
}

TEST(lab07_cls_only_checks_the_block_it_stands_in_for) {
  if (!have_lab07("lab07_cls_only_checks_the_block_it_stands_in_for")) return;
  ParamSet ps = {0};
  ViT m;
  rng_seed(5);
  ViT_init(&m, &ps, 8, 4, 1, 8, 12, 2, 2, 0.1f, 0.1f, false, 10);
  Tensor *X = golden_gen(4, (const int[]){4, 1, 8, 8}, 0.31, 0.2, 1.0); /* (4, 1, 8, 8) */
  const uint64_t before = g_rng.s[0];
  CHECK(ViT_cls_only_agrees(&m, X, ViTBlock_forward));
  CHECK(!ViT_cls_only_agrees(&m, X, post_norm_block)); /* prints its one line */
  CHECK(g_rng.s[0] == before);                          /* the check draws nothing */
  m.mean_pool = true; /* mean pooling reads every row: the book's pass */
  CHECK(ViT_forward_choose(&m, X) == ViT_forward);
  m.mean_pool = false;
  CHECK(ViT_forward_choose(&m, X) == ViT_forward_cls_only);
  ag_step_reset();
  ViT_free(&m);
  paramset_free(&ps);
}

/* ---------------------------------------------------------------- a training step */

/* The loss vit_step_backward is given: the mean cross-entropy, as lab07's. */
static Tensor *mean_ce(Tensor *logits, Tensor *y) {
  return t_mean_all(t_cross_entropy(logits, y, NULL));
}

/* The gradients of vit_step_backward (a batch of 64 in two halves: one after the other on one
 * thread, side by side with a twin on two) equal those of the whole batch at once through
 * ViT_forward, dropout off. Tolerance 1e-5 of the largest gradient: the same arithmetic, summed
 * over rows in another order. */
TEST(lab07_step_in_halves_matches_whole_batch) {
  if (!have_lab07("lab07_step_in_halves_matches_whole_batch")) return;
  enum { BS = 64, S = 8 };
  rng_seed(21);
  ParamSet ps = {0};
  ViT m;
  ViT_init(&m, &ps, S, 4, 1, 8, 12, 2, 2, 0.0f, 0.0f, false, 10);
  paramset_pack(&ps);
  const long n = ps.total;
  float *X = malloc(sizeof(float) * BS * S * S), y[BS];
  for (int i = 0; i < BS * S * S; i++) X[i] = sinf(0.37f * (float)i) * 0.8f;
  for (int i = 0; i < BS; i++) y[i] = (float)((i * 7) % 10);
  float *gw = malloc(sizeof(float) * (size_t)n), *gh = malloc(sizeof(float) * (size_t)n);
  /* whole batch */
  paramset_zero_grad(&ps);
  Tensor *logits = ViT_forward(&m, tensor_from(4, (const int[]){BS, 1, S, S}, X), true);
  Tensor *loss = mean_ce(logits, tensor_from(1, (const int[]){BS}, y));
  const float lw = loss->data[0];
  ag_backward(loss);
  memcpy(gw, ps.grad, sizeof(float) * (size_t)n);
  ag_step_reset();
#ifdef _OPENMP
  const int threads_were = omp_get_max_threads();
  for (int threads = 1; threads <= 2; threads++) {
    omp_set_num_threads(threads); /* vit_step_new builds a twin where two threads run */
#else
  test_skip("no OpenMP: only the halves one after the other are checked");
  for (int threads = 1; threads <= 1; threads++) {
#endif
    for (int cls_only = 0; cls_only <= 1; cls_only++) {
      const Rng rng_was = g_rng;
      ViTStep *st = vit_step_new(&m, &ps, cls_only ? ViT_forward_cls_only : ViT_forward, mean_ce);
      CHECK((vit_step_twin_params(st) != NULL) == (threads == 2));
      /* building the twin draws from a generator of its own: the program's does not move */
      CHECK(memcmp(g_rng.s, rng_was.s, sizeof g_rng.s) == 0);
      paramset_zero_grad(&ps);
      const float lh = vit_step_backward(st, X, y, BS, 1, S);
      memcpy(gh, ps.grad, sizeof(float) * (size_t)n);
      ag_step_reset();
      vit_step_free(st);
      CHECK_NEAR(lh, lw, 1e-5 * fabs(lw));
      double gmax = 0, dmax = 0;
      for (long i = 0; i < n; i++) {
        gmax = fmax(gmax, fabs(gw[i]));
        dmax = fmax(dmax, fabs(gw[i] - gh[i]));
      }
      if (!(gmax > 0 && dmax <= 1e-5 * gmax))
        test_fail(__FILE__, __LINE__, "%d thread(s), %s: gradients differ by %.3g (largest %.3g)",
                  threads, cls_only ? "cls-only" : "book's forward", dmax, gmax);
    }
  }
#ifdef _OPENMP
  omp_set_num_threads(threads_were);
#endif
  free(X);
  free(gw);
  free(gh);
  ViT_free(&m);
  paramset_free(&ps);
}
