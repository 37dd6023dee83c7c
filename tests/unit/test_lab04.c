/* Tests of lab04 (multi-head attention): transpose_qkv / transpose_output round trips and
 * their index mapping, MultiHeadAttention_init's checks, finite-difference gradients through
 * the whole layer, and the golden comparison with the book's PyTorch code
 * (tests/golden/lab0405_reference.py -> lab04_reference.txt). The exercise functions come from
 * the variant being built; with VARIANT=labs (stubs) the tests that need them say so and skip. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/nn.h"
#include "../golden_io.h"
#include "../test.h"
#include "lab04/lab04.h"

#define GOLDEN04 "tests/golden/lab04_reference.txt"

/* Does this build have the lab04 exercises (and the lab02 attention they use)? */
static bool have_lab04(const char *test) {
  Tensor *x = tensor_zeros(3, (int[]){1, 1, 2});
  if (transpose_qkv(x, 2) && transpose_output(tensor_zeros(3, (int[]){2, 1, 1}), 2)) {
    DotProductAttention a;
    DotProductAttention_init(&a, 0.0f);
    if (DotProductAttention_forward(&a, x, x, x, NULL, false)) {
      MultiHeadAttention m = {.num_heads = 1, .num_hiddens = 2, .attention = a};
      Tensor *W = tensor_zeros(2, (int[]){2, 2});
      m.W_q = m.W_k = m.W_v = m.W_o = (Linear){.W = W, .in = 2, .out = 2};
      if (MultiHeadAttention_forward(&m, x, x, x, NULL, false)) return true;
    }
  }
  test_skip("the lab04 exercises are stubs in this build (VARIANT=labs)");
  return false;
}

/* ---------- transpose_qkv / transpose_output ---------- */

TEST(lab04_transpose_qkv_mapping) {
  if (!have_lab04("lab04_transpose_qkv_mapping")) return;
  const int B = 2, n = 3, H = 4, d = 5;
  Tensor *X = tensor_rand(3, (int[]){B, n, H * d}, -1, 1); /* (B, n, H*d) */
  Tensor *Y = transpose_qkv(X, H);                         /* (B*H, n, d) */
  CHECK_INT(Y->ndim, 3);
  CHECK(Y->shape[0] == B * H && Y->shape[1] == n && Y->shape[2] == d);
  int bad = 0;
  for (int b = 0; b < B; b++)
    for (int h = 0; h < H; h++)
      for (int i = 0; i < n; i++)
        for (int k = 0; k < d; k++)
          bad += Y->data[(((long)b * H + h) * n + i) * d + k] !=
                 X->data[((long)b * n + i) * H * d + h * d + k];
  CHECK_INT(bad, 0); /* pure data movement: exact */
  Tensor *Z = transpose_output(Y, H);                      /* (B, n, H*d) */
  CHECK(tensor_same_shape(Z, X));
  CHECK_CLOSE(Z->data, X->data, X->size, 0, 0);            /* the exact inverse */
  /* and the other way round: output then qkv */
  Tensor *W = tensor_rand(3, (int[]){B * H, n, d}, -1, 1);
  CHECK_CLOSE(transpose_qkv(transpose_output(W, H), H)->data, W->data, W->size, 0, 0);
  /* one head is a no-op on the data */
  CHECK_CLOSE(transpose_qkv(X, 1)->data, X->data, X->size, 0, 0);
}

TEST(lab04_transpose_errors) {
  if (!have_lab04("lab04_transpose_errors")) return;
  CHECK_ERROR(transpose_qkv(tensor_zeros(3, (int[]){2, 3, 10}), 3), "transpose_qkv");
  CHECK_ERROR(transpose_qkv(tensor_zeros(2, (int[]){2, 12}), 3), "(2, 12)");
  CHECK_ERROR(transpose_output(tensor_zeros(3, (int[]){5, 3, 4}), 2), "transpose_output");
}

static Tensor *tqkv_fn(Tensor **in, void *ctx) {
  (void)ctx;
  return t_square(transpose_qkv(in[0], 3)); /* squared so the gradient depends on the value */
}
static Tensor *tout_fn(Tensor **in, void *ctx) {
  (void)ctx;
  return t_square(transpose_output(in[0], 2));
}

TEST(lab04_transpose_gradients) {
  if (!have_lab04("lab04_transpose_gradients")) return;
  Tensor *a[1] = {tensor_rand(3, (int[]){2, 2, 6}, -1, 1)};
  GRADCHECK(tqkv_fn, a, 1, NULL);
  ag_step_reset(); /* one backward per tape */
  Tensor *b[1] = {tensor_rand(3, (int[]){4, 3, 2}, -1, 1)};
  GRADCHECK(tout_fn, b, 1, NULL);
}

/* ---------- MultiHeadAttention ---------- */

TEST(lab04_init_checks) {
  ParamSet ps = {0};
  MultiHeadAttention m;
  CHECK_ERROR(MultiHeadAttention_init(&m, &ps, "mha", 4, 4, 4, 10, 3, 0.0f, false),
              "not divisible by num_heads = 3");
  CHECK_ERROR(MultiHeadAttention_init(&m, &ps, "mha", 4, 4, 4, 8, 0, 0.0f, false), "positive");
  paramset_free(&ps);
  ps = (ParamSet){0};
  MultiHeadAttention_init(&m, &ps, "enc.attn", 3, 5, 7, 8, 2, 0.1f, true);
  CHECK_INT(ps.n, 8); /* four weights, four biases */
  CHECK(m.W_q.W->shape[0] == 5 && m.W_k.W->shape[0] == 3 && m.W_v.W->shape[0] == 7);
  CHECK(m.W_o.W->shape[0] == 8 && m.W_o.W->shape[1] == 8);
  CHECK(paramset_find(&ps, "enc.attn.W_q.W") != NULL);
  CHECK(paramset_find(&ps, "enc.attn.W_o.b") != NULL);
  CHECK_INT(paramset_count(&ps), 5 * 8 + 3 * 8 + 7 * 8 + 8 * 8 + 4 * 8);
  paramset_free(&ps);
  ps = (ParamSet){0};
  MultiHeadAttention_init(&m, &ps, "x", 4, 4, 4, 8, 2, 0.0f, false);
  CHECK_INT(ps.n, 4); /* the book's default: no biases */
  CHECK(m.W_q.b == NULL);
  paramset_free(&ps);
}

TEST(lab04_book_shape_check) {
  if (!have_lab04("lab04_book_shape_check")) return;
  /* num_hiddens 100, 5 heads, batch 2, 4 queries, 6 key-value pairs, valid lengths [3, 2] */
  ParamSet ps = {0};
  MultiHeadAttention m;
  MultiHeadAttention_init(&m, &ps, "attention", 100, 100, 100, 100, 5, 0.5f, false);
  Tensor *X = tensor_full(3, (int[]){2, 4, 100}, 1.0f);
  Tensor *Y = tensor_full(3, (int[]){2, 6, 100}, 1.0f);
  Tensor *vl = tensor_from(1, (int[]){2}, (float[]){3, 2});
  Tensor *out = MultiHeadAttention_forward(&m, X, Y, Y, vl, false);
  CHECK(out && out->ndim == 3 && out->shape[0] == 2 && out->shape[1] == 4 &&
        out->shape[2] == 100);
  Tensor *w = m.attention.attention_weights; /* (batch * heads, queries, keys) */
  CHECK(w && w->shape[0] == 10 && w->shape[1] == 4 && w->shape[2] == 6);
  if (w) {
    /* heads 0-4 belong to batch row 0 (3 valid keys), heads 5-9 to row 1 (2 valid keys) */
    int bad = 0;
    for (int r = 0; r < 10; r++)
      for (int q = 0; q < 4; q++)
        for (int k = 0; k < 6; k++) bad += (k >= (r < 5 ? 3 : 2)) && w->data[(r * 4 + q) * 6 + k] != 0;
    CHECK_INT(bad, 0);
  }
  paramset_free(&ps);
}

/* The layer as a function of (queries, keys, values, W_q, W_k, W_v, W_o, b_q, b_o) for the
 * gradient check: arena tensors stand in for the parameters. */
typedef struct {
  MultiHeadAttention m;
  Tensor *vl;
} MhaCtx;
static Tensor *mha_fn(Tensor **in, void *ctx) {
  MhaCtx *c = ctx;
  c->m.W_q.W = in[3], c->m.W_k.W = in[4], c->m.W_v.W = in[5], c->m.W_o.W = in[6];
  c->m.W_q.b = in[7], c->m.W_o.b = in[8];
  return MultiHeadAttention_forward(&c->m, in[0], in[1], in[2], c->vl, false);
}

/* One gradient check of the layer, with valid lengths vl: (B) when vl_ndim is 1, else (B, NQ). */
static void mha_gradcheck(int vl_ndim, const float *vl) {
  const int B = 2, NQ = 3, NK = 4, QS = 3, KS = 2, VS = 5, h = 4, H = 2;
  MhaCtx c = {.m = {.num_heads = H, .num_hiddens = h}};
  DotProductAttention_init(&c.m.attention, 0.0f);
  c.m.W_q = (Linear){.in = QS, .out = h};
  c.m.W_k = (Linear){.in = KS, .out = h};
  c.m.W_v = (Linear){.in = VS, .out = h};
  c.m.W_o = (Linear){.in = h, .out = h};
  c.vl = vl_ndim == 1 ? tensor_from(1, (int[]){B}, vl) : tensor_from(2, (int[]){B, NQ}, vl);
  Tensor *in[9] = {
      tensor_rand(3, (int[]){B, NQ, QS}, -1, 1), tensor_rand(3, (int[]){B, NK, KS}, -1, 1),
      tensor_rand(3, (int[]){B, NK, VS}, -1, 1), tensor_rand(2, (int[]){QS, h}, -1, 1),
      tensor_rand(2, (int[]){KS, h}, -1, 1),     tensor_rand(2, (int[]){VS, h}, -1, 1),
      tensor_rand(2, (int[]){h, h}, -1, 1),      tensor_rand(1, (int[]){h}, -0.5f, 0.5f),
      tensor_rand(1, (int[]){h}, -0.5f, 0.5f),
  };
  GRADCHECK(mha_fn, in, 9, &c);
  ag_step_reset(); /* one backward per tape: the next check starts a fresh one */
}

TEST(lab04_mha_gradients) {
  if (!have_lab04("lab04_mha_gradients")) return;
  /* per-(batch, query) lengths, repeated per head; then one length per batch row */
  mha_gradcheck(2, (const float[]){1, 4, 2, 3, 3, 4});
  mha_gradcheck(1, (const float[]){2, 3});
}

TEST(lab04_golden_matches_pytorch) {
  if (!have_lab04("lab04_golden_matches_pytorch")) return;
  Golden ref;
  if (!golden_open(&ref, GOLDEN04, "tests/golden/lab0405_reference.py")) return;
  enum { B = 2, NQ = 4, NK = 6, QS = 5, KS = 3, VS = 7, h = 8, H = 2 };
  static const char *const tags[3] = {"vl1", "vl2", "none"};
  for (int t = 0; t < 3; t++) {
    ParamSet ps = {0};
    MultiHeadAttention m;
    MultiHeadAttention_init(&m, &ps, "mha", KS, QS, VS, h, H, 0.0f, true);
    Linear *lin[4] = {&m.W_q, &m.W_k, &m.W_v, &m.W_o};
    static const char *const names[4] = {"W_q", "W_k", "W_v", "W_o"};
    const double wa[4] = {0.71, 0.43, 0.61, 0.47}, wb[4] = {0.4, 0.5, 0.6, 0.7};
    for (int i = 0; i < 4; i++) {
      golden_fill(lin[i]->W->data, lin[i]->W->size, wa[i], wb[i], 0.5);
      golden_fill(lin[i]->b->data, h, 0.9, 1.1 + 0.1 * i, 0.1);
    }
    Tensor *q = golden_gen(3, (int[]){B, NQ, QS}, 0.37, 0.1, 1.0);
    Tensor *k = golden_gen(3, (int[]){B, NK, KS}, 0.53, 0.2, 1.0);
    Tensor *v = golden_gen(3, (int[]){B, NK, VS}, 0.29, 0.3, 1.0);
    Tensor *R = golden_gen(3, (int[]){B, NQ, h}, 0.83, 0.8, 1.0);
    q->requires_grad = k->requires_grad = v->requires_grad = true;
    Tensor *vl = t == 0   ? tensor_from(1, (int[]){B}, (float[]){3, 2})
                 : t == 1 ? tensor_from(2, (int[]){B, NQ}, (float[]){1, 2, 3, 6, 6, 5, 4, 2})
                          : NULL;
    Tensor *out = MultiHeadAttention_forward(&m, q, k, v, vl, false);
    ag_backward_with(out, R->data);
    char name[64];
    /* float32 on both sides, different summation orders (GEMM blocking, softmax sums): a few
     * ulps of values of order 0.1-1 */
#define GOLD(field, ptr, n)                                   \
  (snprintf(name, sizeof name, "%s.%s", tags[t], (field)),   \
   golden_check(&ref, name, (ptr), (n), 2e-6, 1e-5))
    GOLD("out", out->data, out->size);
    GOLD("weights", m.attention.attention_weights->data, m.attention.attention_weights->size);
    GOLD("dq", q->grad, q->size);
    GOLD("dk", k->grad, k->size);
    GOLD("dv", v->grad, v->size);
    for (int i = 0; i < 4; i++) {
      char f[16];
      snprintf(f, sizeof f, "d%s", names[i]);
      GOLD(f, lin[i]->W->grad, lin[i]->W->size);
      snprintf(f, sizeof f, "db%s", names[i] + 1);
      GOLD(f, lin[i]->b->grad, h);
    }
#undef GOLD
    paramset_free(&ps);
    ag_step_reset();
  }
  golden_close(&ref);
}

/* Dropout on the attention weights: active only in training, and then it changes the output. */
TEST(lab04_dropout_only_in_training) {
  if (!have_lab04("lab04_dropout_only_in_training")) return;
  ParamSet ps = {0};
  MultiHeadAttention m;
  MultiHeadAttention_init(&m, &ps, "mha", 4, 4, 4, 8, 2, 0.5f, false);
  Tensor *X = tensor_rand(3, (int[]){2, 5, 4}, -1, 1);
  Tensor *a = MultiHeadAttention_forward(&m, X, X, X, NULL, false);
  Tensor *b = MultiHeadAttention_forward(&m, X, X, X, NULL, false);
  CHECK_CLOSE(a->data, b->data, a->size, 0, 0); /* eval is deterministic */
  Tensor *c = MultiHeadAttention_forward(&m, X, X, X, NULL, true);
  double diff = 0;
  for (long i = 0; i < a->size; i++) diff += fabs((double)a->data[i] - c->data[i]);
  CHECK(diff > 1e-3); /* p = 0.5 on 2*2*5*5 weights: some are dropped for any seed */
  paramset_free(&ps);
}
