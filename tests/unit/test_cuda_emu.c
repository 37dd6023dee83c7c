/* The CUDA device as the labs use it, in the emulator (cuda/emu.h): the unit binary links the
 * kernels of cuda/ built as host C++, and cuda_open() registers them for DEV_CUDA. Per-kernel
 * comparisons with the CPU live in tests/cuda/cuda_check.c; here: the device's memory is closed
 * to the host, checkpoints cross devices, a training step copies a bounded, constant number of
 * buffers between host and device, and one training step of the models of labs 02, 03, 04, 06
 * and 07 on DEV_CUDA matches the same step on the CPU. */
#include <math.h>
#include <stddef.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../chapters/06_transformer/transformer.h"
#include "../../chapters/07_vit/vit.h"
#include "../../common/backend.h"
#include "../../common/cli.h"
#include "../../common/nn.h"
#include "../../common/rng.h"
#include "../../common/seq2seq.h"
#include "../test.h"
#include "lab02/lab02.h"
#include "lab03/lab03.h"
#include "../../chapters/03_bahdanau/seq2seq_attention_fast.h"
#include "lab04/lab04.h"

/* cuda/nocuda.c, the CUDA entry points of a CPU-only build, under other names: its message is
 * checked here because that build's labs cannot link beside the emulated backend. */
#define cuda_open nocuda_open
#define cuda_copy_counts nocuda_copy_counts
#define cuda_device_name nocuda_device_name
#define cuda_blas_load nocuda_blas_load
#define cuda_permute0213_profile nocuda_permute0213_profile
#define cuda_profile_start nocuda_profile_start
#define cuda_profile_stop nocuda_profile_stop
#include "../../cuda/nocuda.c"
#undef cuda_open
#undef cuda_copy_counts
#undef cuda_device_name
#undef cuda_blas_load
#undef cuda_permute0213_profile
#undef cuda_profile_start
#undef cuda_profile_stop

/* Each test that uses the device runs in a child process of its own: a device error (a kernel
 * missing from the table, a CUDA or emulator error) ends the process with exit(1), which then
 * fails that test instead of the whole unit binary; and the emulator's state (its mapped
 * device memory, the CUDA table) stays out of the other tests. The child's failures print as
 * usual; its exit status and a pipe carry the verdict and a skip's reason back; it leaves with
 * _exit, as a forked child should. */
static int g_skip_fd = -1;

__attribute__((format(printf, 1, 2))) static void child_skip(const char *fmt, ...) {
  char why[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  if (g_skip_fd >= 0 && write(g_skip_fd, why, strlen(why)) < 0) test_fail(__FILE__, __LINE__, "pipe");
}

static void isolated(void (*body)(void)) {
  int fd[2];
  if (pipe(fd) != 0) {
    test_fail(__FILE__, __LINE__, "pipe failed");
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    g_skip_fd = fd[1];
    tensor_check_host_copies(true); /* a stale host copy (Tensor.host) fails the test */
    body();
    fflush(NULL);
    _exit(test_failures() ? 1 : 0);
  }
  close(fd[1]);
  char why[256];
  ssize_t k = read(fd[0], why, sizeof why - 1);
  why[k > 0 ? k : 0] = '\0';
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st))
    test_fail(__FILE__, __LINE__, "the test's process died of signal %d",
              WIFSIGNALED(st) ? WTERMSIG(st) : -1);
  else if (WEXITSTATUS(st) != 0)
    test_fail(__FILE__, __LINE__, "the test failed in its process (above)");
  if (why[0]) test_skip("%s", why);
}

#define CUDA_TEST(name)                                                                        \
  static void name##_body(void);                                                               \
  TEST(name) { isolated(name##_body); }                                                        \
  static void name##_body(void)

static bool cuda_up(void) {
  char why[256] = "";
  if (cuda_open(why, sizeof why)) return true;
  test_fail(__FILE__, __LINE__, "the emulated CUDA device did not open: %s", why);
  return false;
}

/* ---------- opening the device ---------- */

CUDA_TEST(cuda_device_flag_opens_the_emulated_device) {
  LabArgs a;
  char err[512] = "";
  char *argv[] = {"./labtest", "--device=cuda", NULL};
  CHECK_INT(cli_parse_args(2, argv, "labtest", &a, NULL, err, sizeof err), 0);
  CHECK(a.dev == DEV_CUDA && strcmp(a.device, "cuda") == 0);
  CHECK(backend_available(DEV_CUDA));
  CHECK(strcmp(backend_of(DEV_CUDA)->name, "cuda") == 0);
  CHECK_STR_CONTAINS(cuda_device_name(), "emulator");
}

/* Every kernel the CPU has, the CUDA table has: the Backend is a struct of pointers (its name,
 * then functions), read here slot by slot; enter/leave are hooks a device may leave NULL. */
CUDA_TEST(cuda_table_has_every_kernel_of_the_cpu) {
  if (!cuda_up()) return;
  enum { SLOTS = sizeof(Backend) / sizeof(void (*)(void)) };
  _Static_assert(sizeof(Backend) % sizeof(void (*)(void)) == 0, "Backend holds only pointers");
  void (*cpu[SLOTS])(void), (*cu[SLOTS])(void);
  memcpy(cpu, &cpu_backend, sizeof cpu);
  memcpy(cu, backend_of(DEV_CUDA), sizeof cu);
  const size_t enter = offsetof(Backend, enter) / sizeof cpu[0];
  const size_t leave = offsetof(Backend, leave) / sizeof cpu[0];
  int missing = 0;
  for (size_t i = 1; i < SLOTS; i++) /* slot 0 is the name */
    if (i != enter && i != leave && cpu[i] && !cu[i]) {
      test_fail(__FILE__, __LINE__, "the CUDA table has no entry at slot %zu (backend.h)", i);
      missing++;
    }
  CHECK_INT(missing, 0);
  CHECK(SLOTS > 50); /* the table was read, not an empty struct */
}

TEST(cuda_cpu_only_build_says_so_in_one_line) {
  char why[256] = "";
  CHECK(!nocuda_open(why, sizeof why));
  CHECK_STR_CONTAINS(why, "this build has no CUDA backend");
  CHECK_STR_CONTAINS(why, "NO_CUDA=1");
  CHECK_STR_CONTAINS(why, "run with --device cpu");
  CHECK(!strchr(why, '\n')); /* cli_parse prints it as one line */
  CudaCopyCounts c = nocuda_copy_counts();
  CHECK(c.to_device == 0 && c.to_host == 0);
  CHECK(strcmp(nocuda_device_name(), "none") == 0);
  why[0] = '\0';
  CHECK(!nocuda_blas_load(why, sizeof why));
  CHECK_STR_CONTAINS(why, "this build has no CUDA backend");
  CudaKernelProfile p;
  CHECK(nocuda_permute0213_profile(PERMUTE_BY_TILED, 2, 3, 4, 5, &p) == -2); /* no counters */
  CHECK(!nocuda_profile_start() && nocuda_profile_stop(&p, 1) == 0);
}

/* ---------- (a) device memory is closed to the host ---------- */

static void segv_exit(int sig) {
  (void)sig;
  _exit(77);
}

/* 77 when the child's access to p faulted, 0 when it went through */
static int child_touch(float *p, bool write) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGSEGV, segv_exit); /* quietly, also under ASan (which would print a report) */
    signal(SIGBUS, segv_exit);
    if (write) {
      *(volatile float *)p = 1.0f;
    } else {
      volatile float v = *(volatile float *)p;
      (void)v;
    }
    _exit(0); /* reached only if the memory was open */
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

CUDA_TEST(cuda_device_memory_is_closed_to_the_host) {
  if (!cuda_up()) return;
  Tensor *h = tensor_from(1, (int[]){4}, (float[]){1, 2, 3, 4});
  Tensor *d = tensor_to(h, DEV_CUDA);
  CHECK(d->device == DEV_CUDA && d->data != h->data);
  CHECK_INT(child_touch(d->data, false), 77); /* a host read of device memory faults */
  CHECK_INT(child_touch(d->data, true), 77);  /* and a write */
  CHECK_INT(child_touch(h->data, false), 0);  /* the control: host memory does not */
  float back[4];
  tensor_to_host(d, back); /* the copy functions are the way in */
  CHECK_CLOSE(back, h->data, 4, 0, 0);
  CHECK_ERROR(tensor_at(d, (int[]){0}), "tensor_at"); /* host element access needs a host tensor */
  ag_step_reset();
}

/* ---------- (b) a checkpoint written on one device loads on the other ---------- */

typedef struct {
  ParamSet ps;
  Linear l1, l2;
  LayerNorm ln;
  Embedding emb;
} Small;

static void small_init(Small *s, unsigned seed) {
  memset(s, 0, sizeof *s);
  rng_seed(seed);
  Embedding_init(&s->emb, &s->ps, "emb", 11, 6);
  Linear_init(&s->l1, &s->ps, "l1", 6, 9, true);
  LayerNorm_init(&s->ln, &s->ps, "ln", 9);
  Linear_init(&s->l2, &s->ps, "l2", 9, 5, true);
  init_uniform(s->ln.gamma, 0.5f, 1.5f); /* no parameter left at its 0/1 default */
  init_uniform(s->ln.beta, -1, 1);
  init_uniform(s->l1.b, -1, 1);
  init_uniform(s->l2.b, -1, 1);
}

static void params_host(const ParamSet *ps, float *dst) {
  backend_of(ps->device)->to_host(dst, ps->data, sizeof(float) * (size_t)ps->total);
}

CUDA_TEST(cuda_checkpoint_crosses_devices) {
  if (!cuda_up()) return;
  static float want[1000], got[1000];
  char path[] = "/tmp/al_cuda_ckpt_XXXXXX";
  close(mkstemp(path));
  for (int k = 0; k < 2; k++) {
    Device from = k == 0 ? DEV_CPU : DEV_CUDA, to = k == 0 ? DEV_CUDA : DEV_CPU;
    Small a, b;
    small_init(&a, 5 + k);
    paramset_to(&a.ps, from);
    CHECK(a.ps.total > 100 && a.ps.total < 1000);
    params_host(&a.ps, want);
    char err[512] = "";
    CHECK_INT(checkpoint_save(&a.ps, "cuda test", path, err, sizeof err), 0);
    small_init(&b, 99); /* other weights, overwritten by the load */
    paramset_to(&b.ps, to);
    CHECK_INT(checkpoint_load(&b.ps, "cuda test", path, err, sizeof err), 0);
    CHECK(b.ps.device == to && b.ps.items[0]->device == to);
    params_host(&b.ps, got);
    CHECK_CLOSE(got, want, a.ps.total, 0, 0); /* the same bits, through the file */
    paramset_free(&a.ps);
    paramset_free(&b.ps);
  }
  remove(path);
}

/* ---------- (c), (d) training steps of the labs' models, CPU against DEV_CUDA ---------- */

enum { STEPS = 3, MAXP = 60000 };
typedef enum { M_LAB02, M_LAB03, M_LAB04, M_LAB06, M_LAB07 } ModelKind;
static const char *const model_name[] = {"lab02 attention scoring", "lab03 GRU + additive",
                                         "lab04 multi-head attention", "lab06 Transformer",
                                         "lab07 ViT"};

typedef struct {
  float loss[STEPS];
  float grad[MAXP]; /* the first step's gradients, before clipping */
  long n;
  int tensors; /* parameter tensors */
  long to_device[STEPS], to_host[STEPS]; /* the copies each step made (DEV_CUDA only) */
} Run;

typedef struct {
  ModelKind kind;
  ParamSet own, *ps;
  AdditiveAttention add;
  DotProductAttention dot;
  Tensor *q, *k, *v; /* lab02: trainable inputs of the two scoring functions */
  MultiHeadAttention mha;
  BahdanauNet bn;
  Transformer tf;
  ViT vit;
  Seq2SeqModel s2s;
} Model;

/* seq2seq sizes: lab03 and lab06 (tiny vocabularies, batch 3, 6 source and 7 target steps) */
enum { SV = 17, TV = 19, BN = 3, S = 6, T = 7, BOS = 1 };

static void model_init(Model *md, ModelKind kind) {
  memset(md, 0, sizeof *md);
  md->kind = kind;
  md->ps = &md->own;
  switch (kind) {
  case M_LAB02:
    AdditiveAttention_init(&md->add, md->ps, "add", 5, 5, 8, 0.1f);
    DotProductAttention_init(&md->dot, 0.1f);
    md->q = param_new(md->ps, "q", 3, (int[]){2, 3, 5}); /* (batch, queries, d) */
    md->k = param_new(md->ps, "k", 3, (int[]){2, 4, 5}); /* (batch, keys, d) */
    md->v = param_new(md->ps, "v", 3, (int[]){2, 4, 6}); /* (batch, keys, value) */
    init_uniform(md->q, -1, 1);
    init_uniform(md->k, -1, 1);
    init_uniform(md->v, -1, 1);
    break;
  case M_LAB03:
    BahdanauNet_init(&md->bn, RNN_GRU, ATTN_ADDITIVE, SV, TV, 8, 16, 2, 0.1f);
    md->ps = &md->bn.ps;
    md->s2s = BahdanauNet_fast_model(&md->bn); /* the path the lab trains on */
    break;
  case M_LAB04:
    MultiHeadAttention_init(&md->mha, md->ps, "mha", 6, 6, 6, 8, 2, 0.1f, true);
    break;
  case M_LAB06: {
    TransformerConfig cfg = {.src_vocab = SV, .tgt_vocab = TV, .num_hiddens = 16,
                             .ffn_num_hiddens = 24, .num_heads = 4, .num_blks = 2,
                             .dropout = 0.1f, .use_bias = true};
    Transformer_init(&md->tf, md->ps, &cfg);
    md->s2s = Transformer_model(&md->tf, md->ps);
    break;
  }
  case M_LAB07:
    /* 8x8 one-channel images, patches of 4: 4 patches + <cls>, 2 blocks, 3 classes */
    ViT_init(&md->vit, md->ps, 8, 4, 1, 8, 12, 2, 2, 0.1f, 0.1f, false, 3);
    break;
  }
}

static void model_free(Model *md) {
  switch (md->kind) {
  case M_LAB03: BahdanauNet_free(&md->bn); break;
  case M_LAB06: Transformer_free(&md->tf); paramset_free(md->ps); break;
  case M_LAB07: ViT_free(&md->vit); paramset_free(md->ps); break;
  default: paramset_free(md->ps); break;
  }
}

/* A batch built on the host, as the labs build theirs, and sent to dev (the lab's one copy of
 * each batch tensor). */
static Tensor *batch(Device dev, int ndim, const int *shape, const float *h) {
  Tensor *t = tensor_new_on(DEV_CPU, ndim, shape);
  memcpy(t->data, h, sizeof(float) * (size_t)t->size);
  return tensor_to(t, dev);
}

/* One step's loss, as the model's lab computes it (the scalar to backpropagate); NULL when an
 * exercise it needs is a stub (VARIANT=labs). */
static Tensor *model_loss(Model *md, Device dev) {
  switch (md->kind) {
  case M_LAB02: {
    Tensor *vl = batch(dev, 1, (int[]){2}, (float[]){2, 4}); /* (batch): 2 and 4 keys */
    Tensor *ya = AdditiveAttention_forward(&md->add, md->q, md->k, md->v, vl, true);
    Tensor *yd = DotProductAttention_forward(&md->dot, md->q, md->k, md->v, vl, true);
    if (!ya || !yd) return NULL; /* (2, 3, 6) each */
    return t_add(t_sum_all(t_mul(ya, ya)), t_sum_all(t_mul(yd, yd))); /* (1) */
  }
  case M_LAB04: {
    float xh[2 * 5 * 6];
    for (int i = 0; i < 2 * 5 * 6; i++) xh[i] = sinf(0.7f * (float)i);
    Tensor *X = batch(dev, 3, (int[]){2, 5, 6}, xh);          /* (batch, n, 6) */
    Tensor *vl = batch(dev, 1, (int[]){2}, (float[]){3, 5}); /* (batch) */
    Tensor *Y = MultiHeadAttention_forward(&md->mha, X, X, X, vl, true); /* (2, 5, 8) */
    /* a regression of every output towards 1 (t_mse, the MSE kernels) */
    return Y ? t_mse(Y, tensor_full(3, (int[]){2, 5, 8}, 1.0f)) : NULL; /* (1) */
  }
  case M_LAB07: {
    float xh[4 * 64];
    for (int i = 0; i < 4 * 64; i++) xh[i] = 0.5f + 0.5f * sinf(0.37f * (float)i);
    Tensor *X = batch(dev, 4, (int[]){4, 1, 8, 8}, xh);          /* (batch, 1, 8, 8) */
    Tensor *y = batch(dev, 1, (int[]){4}, (float[]){0, 2, 1, 2}); /* (batch) labels */
    Tensor *logits = ViT_forward(&md->vit, X, true);              /* (batch, 3) */
    return logits ? t_mean_all(t_cross_entropy(logits, y, NULL)) : NULL; /* (1) */
  }
  case M_LAB03:
  case M_LAB06: {
    /* train_seq2seq's step: the batch from the host, the decoder input from Y, the loss */
    float xh[BN * S], yh[BN * T];
    for (int i = 0; i < BN * S; i++) xh[i] = (float)((i * 5 + 3) % SV);
    for (int i = 0; i < BN * T; i++) yh[i] = (float)((i * 7 + 1) % TV);
    Tensor *X = batch(dev, 2, (int[]){BN, S}, xh), *Y = batch(dev, 2, (int[]){BN, T}, yh);
    Tensor *X_vl = batch(dev, 1, (int[]){BN}, (float[]){6, 2, 4});
    Tensor *Y_vl = batch(dev, 1, (int[]){BN}, (float[]){7, 3, 5});
    Tensor *dec_X = seq2seq_dec_input(Y, BOS);                          /* (BN, T) */
    Tensor *Y_hat = md->s2s.forward(md->s2s.net, X, X_vl, dec_X, true); /* (BN, T, TV) */
    return Y_hat ? t_sum_all(MaskedSoftmaxCELoss(Y_hat, Y, Y_vl)) : NULL; /* (1) */
  }
  }
  return NULL;
}

/* STEPS training steps of a fresh model of `kind` on dev, each as its lab takes it (Adam with
 * clipping for the seq2seq models, SGD otherwise; dropout on). false: a stub exercise. */
static bool run_on(ModelKind kind, Device dev, Run *r) {
  memset(r, 0, sizeof *r);
  rng_seed(11); /* the same weights and dropout masks on both devices */
  tensor_set_default_device(dev);
  Model md;
  model_init(&md, kind);
  ParamSet *ps = md.ps;
  paramset_to(ps, dev);
  CHECK(ps->device == dev && ps->total > 100 && ps->total <= MAXP);
  bool adam = kind == M_LAB03 || kind == M_LAB06;
  Adam opt;
  if (adam) Adam_init(&opt, ps, 0.005f);
  SGD sgd = {.ps = ps, .lr = 0.05f};
  bool ran = true;
  ag_set_release_grads(true); /* as the labs train */
  for (int step = 0; step < STEPS && ran; step++) {
    CudaCopyCounts c0 = cuda_copy_counts(), ca = c0, cb = c0;
    paramset_zero_grad(ps);
    Tensor *l = model_loss(&md, dev);
    if (!l) {
      ran = false;
      break;
    }
    CHECK(l->device == dev && l->size == 1);
    tensor_to_host(l, &r->loss[step]); /* the one number a step reads back */
    ag_backward(l);
    if (step == 0) { /* the test's own copy, left out of the step's count */
      ca = cuda_copy_counts();
      backend_of(dev)->to_host(r->grad, ps->grad, sizeof(float) * (size_t)ps->total);
      cb = cuda_copy_counts();
    }
    if (adam) {
      clip_grad_norm(ps, 1.0f);
      Adam_step(&opt);
    } else {
      SGD_step(&sgd);
    }
    ag_step_reset();
    CudaCopyCounts c1 = cuda_copy_counts();
    r->to_device[step] = c1.to_device - c0.to_device - (cb.to_device - ca.to_device);
    r->to_host[step] = c1.to_host - c0.to_host - (cb.to_host - ca.to_host);
  }
  ag_set_release_grads(false);
  ag_step_reset();
  r->n = ps->total;
  r->tensors = ps->n;
  if (adam) Adam_free(&opt);
  model_free(&md);
  tensor_set_default_device(DEV_CPU);
  return ran;
}

static bool have_seq2seq(ModelKind kind) {
  if (kind == M_LAB06) /* the helpers of lab06's exercises */
    return causal_valid_lens(1, 1, 0) != NULL &&
           positional_encoding_table((float[2]){0}, 1, 2) == 0;
  /* lab03: the additive attention uses lab02's masked softmax */
  return masked_softmax(tensor_zeros(3, (const int[]){1, 1, 2}), NULL) != NULL;
}

/* Tolerances. The GPU sums in another order than the CPU (tree sums in warps and blocks,
 * cuBLAS's blocking; the CPU sums some reductions in double): each sum differs by ulps,
 * ~1e-6 relative, compounded over the ~20 ops of a forward and backward and 3 steps.
 *  - the losses: 1e-4 relative, 100x that drift; a wrong kernel moves them by 1e-2 and more.
 *  - the first step's gradients: 1e-4 of the largest gradient (cancellation makes small
 *    entries' relative error meaningless: e.g. the key bias's gradient is rounding noise, as
 *    the softmax does not see a shift of all scores); a kernel off by 1% reads 1e-2. */
#define LOSS_RTOL 1e-4
#define GRAD_TOL 1e-4

static void step_matches_cpu(ModelKind kind) {
  if (!cuda_up()) return;
  if ((kind == M_LAB03 || kind == M_LAB06) && !have_seq2seq(kind)) {
    child_skip("the %s exercises are stubs in this build (VARIANT=labs)", model_name[kind]);
    return;
  }
  static Run cpu, gpu;
  if (!run_on(kind, DEV_CPU, &cpu)) {
    child_skip("the %s exercises are stubs in this build (VARIANT=labs)", model_name[kind]);
    return;
  }
  CHECK(run_on(kind, DEV_CUDA, &gpu));
  CHECK_INT(gpu.n, cpu.n);
  for (int s = 0; s < STEPS; s++)
    if (!(fabs((double)gpu.loss[s] - cpu.loss[s]) <= LOSS_RTOL * (1 + fabs((double)cpu.loss[s]))))
      test_fail(__FILE__, __LINE__, "%s: step %d's loss %.8g on cuda, %.8g on the cpu",
                model_name[kind], s + 1, gpu.loss[s], cpu.loss[s]);
  CHECK(cpu.loss[STEPS - 1] < cpu.loss[0]); /* and it trains */
  double gmax = 0, worst = 0;
  long at = 0, nonzero = 0;
  for (long i = 0; i < cpu.n; i++) {
    gmax = fmax(gmax, fabs(cpu.grad[i]));
    nonzero += cpu.grad[i] != 0;
    double e = fabs((double)gpu.grad[i] - cpu.grad[i]);
    if (!isnan(worst) && !(e <= worst)) worst = e, at = i; /* a NaN stays the worst */
  }
  CHECK(nonzero > cpu.n / 2); /* the comparison is not one of zeros */
  if (!(worst <= GRAD_TOL * gmax))
    test_fail(__FILE__, __LINE__,
              "%s: first-step gradient %ld is %.8g on cuda, %.8g on the cpu (|diff| %.3g > "
              "%.0e x the largest gradient %.3g)",
              model_name[kind], at, gpu.grad[at], cpu.grad[at], worst, GRAD_TOL, gmax);
}

CUDA_TEST(cuda_lab02_scoring_step_matches_cpu) { step_matches_cpu(M_LAB02); }
CUDA_TEST(cuda_lab03_gru_attention_step_matches_cpu) { step_matches_cpu(M_LAB03); }
CUDA_TEST(cuda_lab04_multihead_step_matches_cpu) { step_matches_cpu(M_LAB04); }
CUDA_TEST(cuda_lab06_transformer_step_matches_cpu) { step_matches_cpu(M_LAB06); }
CUDA_TEST(cuda_lab07_vit_step_matches_cpu) { step_matches_cpu(M_LAB07); }

/* ---------- (c) the copies of a training step ---------- */

/* Measured in the emulator with every kernel (copies per step to the device, to the host), the
 * same each step:
 *   lab06 Transformer (2 blocks):  (8, 2), the first step (8, 4)
 *   lab03 GRU + additive (T = 7):  (6, 2)
 * To the host: the loss, and the gradient norm that clipping reads back; in the first step also
 * each positional-encoding table (encoder and decoder: 2), which the device computes (exercise
 * 5.2's kernel) and t_positional_encoding compares once with exercise 5.1's host table. To the
 * device: the batch (X, its lengths, Y, its lengths: 4), the decoder input and the loss's mask,
 * both made on the host from the batch (2); lab06 also sends the decoder's causal lengths,
 * which exercise 6.x builds on the host (2).
 * Index checks read no copy back: a tensor sent from the host keeps a host copy (tensor.h), which
 * reshape, permute and repeat_interleave carry along, and the int arrays kernels take are
 * converted on the device (index_ints). The bounds are those numbers: a copy per index check
 * (6 attentions, T decoder steps), per parameter tensor (lab06 has more than 12, checked) or per
 * op fails them, and so does any step copying more than the one before. */
#define MAX_TO_DEVICE 8
#define MAX_TO_HOST 2
#define PE_TABLES 2 /* lab06's encoder and decoder: checked once, in the first step */
static void copies_per_step(ModelKind kind) {
  tensor_check_host_copies(false); /* the check itself copies back: count what a lab does */
  if (!cuda_up()) return;
  if (!have_seq2seq(kind)) {
    child_skip("the %s exercises are stubs in this build (VARIANT=labs)", model_name[kind]);
    return;
  }
  static Run r;
  CHECK(run_on(kind, DEV_CUDA, &r));
  if (kind == M_LAB06) CHECK(r.tensors > MAX_TO_DEVICE); /* the bound sees a copy per tensor */
  printf("    %s (%d parameter tensors): copies per step (to device, to host):", model_name[kind],
         r.tensors);
  for (int s = 0; s < STEPS; s++) printf(" (%ld, %ld)", r.to_device[s], r.to_host[s]);
  printf("\n");
  /* from the second step on, every step copies the same: nothing grows with the steps */
  for (int s = 2; s < STEPS; s++) {
    CHECK_INT(r.to_device[s], r.to_device[1]);
    CHECK_INT(r.to_host[s], r.to_host[1]);
  }
  for (int s = 0; s < STEPS; s++) {
    CHECK(r.to_device[s] <= MAX_TO_DEVICE);
    CHECK(r.to_host[s] <= MAX_TO_HOST + (s == 0 && kind == M_LAB06 ? PE_TABLES : 0));
  }
}

CUDA_TEST(cuda_lab03_step_copies_are_few_and_constant) { copies_per_step(M_LAB03); }
CUDA_TEST(cuda_lab06_step_copies_are_few_and_constant) { copies_per_step(M_LAB06); }
