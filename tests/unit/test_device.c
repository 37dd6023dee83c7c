/* A second device, for tests only: DEV_TEST computes with the CPU kernels but keeps its memory
 * closed to the host (mprotect PROT_NONE) except while one of its kernels or copy functions
 * runs. A model moved there and trained must match the same model trained on the CPU; any host
 * code that reads or writes tensor data without a copy or an op (a bypass of the backend table)
 * touches closed memory and crashes the test instead of passing. */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../chapters/06_transformer/transformer.h"
#include "../../common/backend.h"
#include "../../common/nn.h"
#include "../../common/rng.h"
#include "../../common/seq2seq.h"
#include "../test.h"
#include "lab02/lab02.h"
#include "lab03/lab03.h"
#include "../../chapters/03_bahdanau/seq2seq_attention_fast.h"

/* ---------- the device: mmap'd regions, open only inside its own calls ---------- */

typedef struct {
  void *p;
  size_t len;
} Region;
static Region g_reg[1024];
static int g_nreg, g_open_depth;

static void set_prot(int prot) {
  for (int i = 0; i < g_nreg; i++)
    if (mprotect(g_reg[i].p, g_reg[i].len, prot) != 0) abort();
}
static void tdev_enter(void) {
  if (g_open_depth++ == 0) set_prot(PROT_READ | PROT_WRITE);
}
static void tdev_leave(void) {
  if (--g_open_depth == 0) set_prot(PROT_NONE);
}

static void *tdev_alloc(size_t bytes) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t len = (bytes + page - 1) / page * page;
  if (!len) len = page;
  void *p = mmap(NULL, len, g_open_depth ? PROT_READ | PROT_WRITE : PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED || g_nreg == (int)(sizeof g_reg / sizeof g_reg[0])) abort();
  g_reg[g_nreg++] = (Region){p, len};
  return p;
}

static void tdev_free(void *p) {
  for (int i = 0; i < g_nreg; i++)
    if (g_reg[i].p == p) {
      munmap(p, g_reg[i].len);
      g_reg[i] = g_reg[--g_nreg];
      return;
    }
  abort(); /* not ours: a host pointer freed as device memory */
}

static void tdev_copy(void *dst, const void *src, size_t n) {
  tdev_enter();
  memcpy(dst, src, n);
  tdev_leave();
}
static void tdev_zero(void *p, size_t n) {
  tdev_enter();
  memset(p, 0, n);
  tdev_leave();
}

static Backend g_test_backend;

static void install_test_device(void) {
  if (g_test_backend.name) return;
  g_test_backend = cpu_backend; /* every kernel of the CPU ... */
  g_test_backend.name = "test";  /* ... on memory the host cannot touch */
  g_test_backend.alloc = tdev_alloc;
  g_test_backend.free = tdev_free;
  g_test_backend.to_host = tdev_copy;
  g_test_backend.from_host = tdev_copy;
  g_test_backend.copy = tdev_copy;
  g_test_backend.zero = tdev_zero;
  g_test_backend.enter = tdev_enter;
  g_test_backend.leave = tdev_leave;
  backend_register(DEV_TEST, &g_test_backend);
}

/* ---------- the device itself ---------- */

static void segv_exit(int sig) {
  (void)sig;
  _exit(77);
}

TEST(device_test_memory_is_closed_to_the_host) {
  install_test_device();
  /* the guard must be real: a read of closed memory faults (checked in a child process) */
  float *p = tdev_alloc(64);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGSEGV, segv_exit); /* quietly, also under ASan (which would print a report) */
    volatile float v = p[0];
    (void)v;
    _exit(0); /* reached only if the memory was readable */
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 77); /* the read faulted */
  tdev_free(p);
}

TEST(device_tensor_to_round_trip_and_mixing_error) {
  install_test_device();
  Tensor *x = tensor_from(2, (int[]){2, 3}, (float[]){1, 2, 3, 4, 5, 6});
  Tensor *d = tensor_to(x, DEV_TEST);
  CHECK(d->device == DEV_TEST && d != x && tensor_to(d, DEV_TEST) == d);
  Tensor *y = t_scale(d, 2.0f); /* computed on the test device */
  CHECK(y->device == DEV_TEST);
  Tensor *h = tensor_to(y, DEV_CPU);
  const float want[] = {2, 4, 6, 8, 10, 12};
  CHECK_CLOSE(h->data, want, 6, 0, 0); /* x * 2 is exact */
  /* one graph, one device: the error names the op and both devices */
  CHECK_ERROR(t_add(x, d), "t_add");
  CHECK_ERROR(t_add(x, d), "cpu");
  CHECK_ERROR(t_add(x, d), "test");
  CHECK_ERROR(t_matmul(x, t_view(d, 3, 2)), "two devices");
  /* host element access needs a host tensor */
  CHECK_ERROR(tensor_at(d, (int[]){0, 0}), "tensor_at");
  ag_step_reset();
}

/* ---------- training steps of lab06's Transformer and lab03's GRU/LSTM with additive
 * attention (the fused rnn_cell and additive_scores kernels), CPU vs the test device ---------- */

static bool have_transformer(void) {
  return causal_valid_lens(1, 1, 0) != NULL && positional_encoding_table((float[2]){0}, 1, 2) == 0;
}
static bool have_bahdanau(void) { /* the additive attention uses lab02's masked softmax */
  return masked_softmax(tensor_zeros(3, (const int[]){1, 1, 2}), NULL) != NULL;
}

enum { SV = 17, TV = 19, BN = 3, S = 6, T = 7, STEPS = 4 };
typedef enum { M_TRANSFORMER, M_GRU, M_LSTM } ModelKind;

/* One small model of each kind, its parameters and its Seq2SeqModel view. */
typedef struct {
  ModelKind kind;
  Transformer t;
  BahdanauNet b;
  ParamSet tps, *ps;
  Seq2SeqModel m;
} Model;

static void model_init(Model *md, ModelKind kind) {
  memset(md, 0, sizeof *md);
  md->kind = kind;
  if (kind == M_TRANSFORMER) {
    TransformerConfig cfg = {.src_vocab = SV, .tgt_vocab = TV, .num_hiddens = 16,
                             .ffn_num_hiddens = 24, .num_heads = 4, .num_blks = 2,
                             .dropout = 0.1f, .use_bias = true};
    Transformer_init(&md->t, &md->tps, &cfg);
    md->ps = &md->tps;
    md->m = Transformer_model(&md->t, md->ps);
  } else {
    BahdanauNet_init(&md->b, kind == M_GRU ? RNN_GRU : RNN_LSTM, ATTN_ADDITIVE, SV, TV, 8, 16,
                     2, 0.1f);
    md->ps = &md->b.ps;
    md->m = BahdanauNet_fast_model(&md->b); /* the path the lab trains on, device kernels */
  }
}

static void model_free(Model *md) {
  if (md->kind == M_TRANSFORMER) {
    Transformer_free(&md->t);
    paramset_free(&md->tps);
  } else {
    BahdanauNet_free(&md->b);
  }
}

/* STEPS Adam steps (with clipping, dropout on) of a fresh small model on device dev, as
 * train_seq2seq takes them. Returns the losses and the final parameters (host copies); saves
 * a checkpoint to ckpt. */
static void train_on(ModelKind kind, Device dev, float loss[STEPS], float *params,
                     long *nparams, const char *ckpt) {
  rng_seed(11);
  tensor_set_default_device(dev);
  Model md;
  model_init(&md, kind);
  ParamSet *ps = md.ps;
  paramset_to(ps, dev);
  CHECK(ps->device == dev && ps->items[0]->device == dev);
  Adam opt;
  Adam_init(&opt, ps, 0.005f);
  float xh[BN * S], yh[BN * T], dh[BN * T];
  for (int i = 0; i < BN * S; i++) xh[i] = (float)((i * 5 + 3) % SV);
  for (int i = 0; i < BN * T; i++) yh[i] = (float)((i * 7 + 1) % TV);
  for (int i = 0; i < BN * T; i++) dh[i] = i % T ? yh[i - 1] : 1.0f;
  for (int step = 0; step < STEPS; step++) {
    paramset_zero_grad(ps);
    Tensor *X = tensor_from(2, (int[]){BN, S}, xh), *Y = tensor_from(2, (int[]){BN, T}, yh);
    Tensor *dec = tensor_from(2, (int[]){BN, T}, dh);
    Tensor *xvl = tensor_from(1, (int[]){BN}, (float[]){6, 2, 4});
    Tensor *yvl = tensor_from(1, (int[]){BN}, (float[]){7, 3, 5});
    CHECK(X->device == dev);
    Tensor *logits = md.m.forward(md.m.net, X, xvl, dec, true); /* (BN, T, TV) */
    CHECK(logits && logits->device == dev);
    Tensor *l = t_sum_all(MaskedSoftmaxCELoss(logits, Y, yvl)); /* (1) */
    tensor_to_host(l, &loss[step]);
    ag_backward(l);
    clip_grad_norm(ps, 1.0f);
    Adam_step(&opt);
    ag_step_reset();
  }
  *nparams = ps->total;
  backend_of(dev)->to_host(params, ps->data, sizeof(float) * (size_t)ps->total);
  char err[512] = "";
  CHECK_INT(checkpoint_save(ps, "device test", ckpt, err, sizeof err), 0);
  Adam_free(&opt);
  model_free(&md);
  tensor_set_default_device(DEV_CPU);
}

static void training_matches_cpu(ModelKind kind) {
  install_test_device();
  static float p_cpu[200000], p_dev[200000], p_load[200000];
  float l_cpu[STEPS], l_dev[STEPS];
  long n_cpu = 0, n_dev = 0;
  char ck_cpu[] = "/tmp/al_device_cpu_XXXXXX", ck_dev[] = "/tmp/al_device_dev_XXXXXX";
  close(mkstemp(ck_cpu));
  close(mkstemp(ck_dev));
  train_on(kind, DEV_CPU, l_cpu, p_cpu, &n_cpu, ck_cpu);
  train_on(kind, DEV_TEST, l_dev, p_dev, &n_dev, ck_dev);
  CHECK_INT(n_dev, n_cpu);
  CHECK(n_cpu > 1000 && n_cpu < 200000);
  /* the same kernels on the same numbers in the same order: bit for bit */
  CHECK_CLOSE(l_dev, l_cpu, STEPS, 0, 0);
  CHECK_CLOSE(p_dev, p_cpu, n_cpu, 0, 0);
  CHECK(l_cpu[STEPS - 1] < l_cpu[0]); /* and it trains (dropout makes single steps noisy) */

  /* a checkpoint written on the test device loads into a model on the CPU, and back */
  for (int k = 0; k < 2; k++) {
    Device to = k == 0 ? DEV_CPU : DEV_TEST;
    tensor_set_default_device(to);
    Model md;
    model_init(&md, kind); /* fresh weights, overwritten by the load */
    char err[512] = "";
    CHECK_INT(checkpoint_load(md.ps, "device test", k == 0 ? ck_dev : ck_cpu, err, sizeof err), 0);
    CHECK(md.ps->device == to);
    backend_of(to)->to_host(p_load, md.ps->data, sizeof(float) * (size_t)md.ps->total);
    CHECK_CLOSE(p_load, p_cpu, n_cpu, 0, 0); /* the same bits, through the file */
    model_free(&md);
    tensor_set_default_device(DEV_CPU);
  }
  remove(ck_cpu);
  remove(ck_dev);
}

TEST(device_transformer_training_step_matches_cpu) {
  if (!have_transformer()) {
    test_skip("the lab06 exercises are stubs in this build (VARIANT=labs)");
    return;
  }
  training_matches_cpu(M_TRANSFORMER);
}

TEST(device_bahdanau_gru_and_lstm_training_steps_match_cpu) {
  if (!have_bahdanau()) {
    test_skip("lab02's masked_softmax is a stub in this build (VARIANT=labs)");
    return;
  }
  training_matches_cpu(M_GRU);
  training_matches_cpu(M_LSTM);
}

/* One training step of the ViT's MLP (gelu_mlp_forward: dense - GELU - dropout - dense -
 * dropout) with ag_set_release_grads on, on device dev: the MLP releases its GELU and dense2
 * outputs and rebuilds dropout1's output during backward (t_recompute), and
 * activations of 1 MB and more (64 x 4096 floats) come from the arena's own blocks, released
 * mid-backward. All of it must go through the backend table. Returns the loss and the
 * parameters' gradients (host copies). */
static void mlp_step_on(Device dev, float *loss, float *g, long *n) {
  rng_seed(3);
  tensor_set_default_device(dev);
  ParamSet ps = {0};
  Linear d1, d2;
  Linear_init(&d1, &ps, "dense1", 32, 4096, true);
  Linear_init(&d2, &ps, "dense2", 4096, 32, true);
  paramset_to(&ps, dev);
  const Dropout dr = {0.3f};
  static float xh[64 * 32];
  for (int i = 0; i < 64 * 32; i++) xh[i] = sinf(0.37f * (float)i);
  paramset_zero_grad(&ps);
  ag_set_release_grads(true);
  rng_seed(7); /* the same dropout masks on both devices */
  Tensor *X = tensor_from(2, (int[]){64, 32}, xh);             /* (tokens, num_hiddens) */
  Tensor *Y = t_tanh(gelu_mlp_forward(&d1, &dr, &d2, &dr, X, true)); /* (64, 32) */
  Tensor *l = t_sum_all(t_mul(Y, Y));                          /* (1) */
  ag_backward(l);
  tensor_to_host(l, loss); /* a small value: kept through the release */
  *n = ps.total;
  backend_of(dev)->to_host(g, ps.grad, sizeof(float) * (size_t)ps.total);
  ag_set_release_grads(false);
  ag_step_reset();
  paramset_free(&ps);
  tensor_set_default_device(DEV_CPU);
}

TEST(device_vit_mlp_recompute_and_release_match_cpu) {
  install_test_device();
  size_t recompute_min = t_recompute_set_min(0); /* 1 MB activations: recompute them */
  static float g_cpu[300000], g_dev[300000];
  float l_cpu = 0, l_dev = 1;
  long n_cpu = 0, n_dev = 0;
  mlp_step_on(DEV_CPU, &l_cpu, g_cpu, &n_cpu);
  mlp_step_on(DEV_TEST, &l_dev, g_dev, &n_dev);
  CHECK_INT(n_dev, n_cpu);
  CHECK(n_cpu == 2 * 32 * 4096 + 4096 + 32);
  CHECK(l_cpu > 0 && l_dev == l_cpu);
  long nonzero = 0;
  for (long i = 0; i < n_cpu; i++) nonzero += g_cpu[i] != 0;
  CHECK(nonzero > n_cpu / 2); /* the comparison below is not one of zeros */
  CHECK_CLOSE(g_dev, g_cpu, n_cpu, 0, 0); /* the same kernels in the same order: bit for bit */
  t_recompute_set_min(recompute_min);
}
