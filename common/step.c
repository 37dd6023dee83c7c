/* step.c — how a training batch is executed: trimmed, sorted and cut in two parts by length,
 * the parts one after the other or side by side on two threads with a twin of the model. Every
 * way gives the whole batch's loss and gradients (tests/unit/test_seq2seq_trim.c). See step.h. */
#include "step.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "gemm.h"
#include "util.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* ================================================================ losses */

void step_losses_init(StepLosses *s, Device d) {
  s->device = d;
  s->slots = backend_of(d)->alloc(sizeof(float) * STEP_LOSS_PARTS);
}

void step_losses_put(StepLosses *s, int part, const Tensor *loss) {
  if (loss->device != s->device || part < 0 || part >= STEP_LOSS_PARTS)
    tensor_error("step_losses_put", "part %d's loss is on %s, the step's losses on %s", part,
                 device_name(loss->device), device_name(s->device));
  backend_of(s->device)->copy(s->slots + part, loss->data, sizeof(float)); /* no wait */
}

void step_losses_read(StepLosses *s, int parts, float *out) {
  backend_of(s->device)->to_host(out, s->slots, sizeof(float) * (size_t)parts);
}

void step_losses_free(StepLosses *s) {
  if (s->slots) backend_of(s->device)->free(s->slots);
  s->slots = NULL;
}

/* ================================================================ twins */

void twin_build(Rng *gen, void (*build)(void *arg), void *arg) {
  Rng *caller = rng_current();
  rng_use(gen);
  build(arg);
  rng_use(caller);
}

/* The second part, on this thread or the twin's: its own dropout generator, seeded by one draw
 * of the program's, so that a run is the same on either path. */
static void second_part_begin(Rng *rng, uint64_t seed, AgContext *ctx) {
  rng_init(rng, seed);
  rng_use(rng);
  if (ctx) ag_context_use(ctx);
}

static void second_part_end(AgContext *ctx) {
  ag_step_reset();
  if (ctx) ag_context_use(NULL);
  rng_use(NULL);
}

void twin_parts_run(TwinPartFn part, void *arg, ParamSet *ps, ParamSet *twin_ps, AgContext *ctx,
                    Rng *rng) {
  const uint64_t seed = rng_next(&g_rng);
  if (!twin_ps) { /* one after the other on this thread; the caller's batch is off the arena */
    Rng second;
    part(0, arg);
    ag_step_reset();
    second_part_begin(&second, seed, NULL);
    part(1, arg);
    rng_use(NULL);
    return;
  }
  paramset_zero_grad(twin_ps);
  gemm_before_threads();
#pragma omp parallel num_threads(2)
  {
    int tid = 0, nth = 1;
#ifdef _OPENMP
    tid = omp_get_thread_num();
    nth = omp_get_num_threads();
#endif
    for (int p = tid; p < 2; p += nth) {
      if (p == 1) second_part_begin(rng, seed, ctx);
      part(p, arg);
      if (p == 1) second_part_end(ctx);
    }
  }
  float *g = ps->grad;
  const float *g1 = twin_ps->grad;
  const long n = ps->total;
#pragma omp parallel for simd schedule(static) num_threads(2) if (n >= (1L << 16)) /* as Adam */
  for (long i = 0; i < n; i++) g[i] += g1[i];
}

/* ================================================================ trimming */

/* The longest valid length of a batch (at least 1). */
static int batch_max_len(const Tensor *valid_len) {
  int n = 1;
  for (int i = 0; i < valid_len->shape[0]; i++)
    if ((int)valid_len->data[i] > n) n = (int)valid_len->data[i];
  return n;
}

/* The first n columns of a host (batch, num_steps) batch tensor, as a new host tensor. */
static Tensor *first_cols(const Tensor *A, int n) {
  const int B = A->shape[0], T = A->shape[1];
  if (n >= T) return (Tensor *)A;
  Tensor *R = tensor_new_on(DEV_CPU, 2, (const int[]){B, n}); /* (batch, n) */
  for (int b = 0; b < B; b++)
    memcpy(R->data + (size_t)b * (size_t)n, A->data + (size_t)b * (size_t)T,
           sizeof(float) * (size_t)n);
  return R;
}

/* seq2seq_batch_loss, in training mode or not (dropout) */
static Tensor *batch_loss(Seq2SeqModel *m, const NmtBatch *b, int num_steps, int bos, bool trim,
                          bool training) {
  /* Same loss, same gradients, less work: the columns trim drops are 31% of the d2l-1.0
   * batches' and 40% of the classic ones on fra-eng's short pairs. The book computes them. */
  const int T = num_steps, Ty = trim ? batch_max_len(b->Y_valid_len) : T;
  const int Tx = trim && m->exec.encoder_ignores_padding ? batch_max_len(b->X_valid_len) : T;
  /* the batch and the decoder input made from it, on the host; then to the model's device in
   * one copy */
  Tensor *Yh = first_cols(b->Y, Ty);
  Tensor *in[5] = {first_cols(b->X, Tx), b->X_valid_len, Yh, b->Y_valid_len,
                   seq2seq_dec_input(Yh, bos)};
  tensor_to_packed(in, 5, m->ps->device);
  Tensor *X = in[0], *X_vl = in[1], *Y = in[2], *Y_vl = in[3]; /* (batch, Tx), (batch), ... */
  Tensor *dec_X = in[4];                                    /* (batch, Ty) */
  Tensor *Y_hat = trim && m->exec.forward_packed /* (batch, Ty, tgt_vocab) */
                     ? m->exec.forward_packed(m->net, X, X_vl, dec_X, Y_vl, training)
                     : m->forward(m->net, X, X_vl, dec_X, training);
  Tensor *l = MaskedSoftmaxCELoss(Y_hat, Y, Y_vl);          /* (batch): mean over Ty */
  Tensor *ls = t_sum_all(l);                                /* (1) */
  return Ty < T ? t_scale(ls, (float)Ty / (float)T) : ls;  /* the book's mean over num_steps */
}

Tensor *seq2seq_batch_loss(Seq2SeqModel *m, const NmtBatch *b, int num_steps, int bos,
                           bool trim) {
  return batch_loss(m, b, num_steps, bos, trim, true);
}

/* ================================================================ cutting */

/* A batch in two parts by length. A batch of mixed lengths pays for its longest row in every
 * row, even trimmed; its rows sorted by (target, source) valid length and cut in two, each part
 * trimmed to its own longest, cost about 0.57 of the padded columns of the d2l-1.0 batches
 * instead of 0.69, and 0.50 instead of 0.60 of the classic ones (fra-eng's first pairs).
 * Forward and backward run per part, the gradients add up, and the optimizer steps once: the
 * same step as the whole batch's. The parts of a small batch would be too small to gain from
 * running beside each other; parts keep 32 rows or more, so their products stay whole tiles. */
enum { SPLIT_MIN_ROWS = 64 };

/* A batch's rows on the host, outside the arena (they outlive the reset between the parts). */
typedef struct {
  int B, T;
  float *X, *Y;     /* (B, T) source and target ids */
  float *xvl, *yvl; /* (B) valid lengths */
} HostRows;

typedef struct {
  int key, row; /* key: (target, source) valid lengths */
} RowKey;

static int by_key(const void *a, const void *b) {
  const RowKey *x = a, *y = b;
  return x->key != y->key ? (x->key < y->key ? -1 : 1) : x->row - y->row;
}

/* b's rows sorted by (target, source) valid length into s (malloc'd here). */
static void sort_rows(const NmtBatch *b, int T, HostRows *s) {
  const int B = b->size;
  *s = (HostRows){.B = B, .T = T};
  s->X = xcalloc((size_t)B * (size_t)T, sizeof(float));
  s->Y = xcalloc((size_t)B * (size_t)T, sizeof(float));
  s->xvl = xcalloc((size_t)B, sizeof(float));
  s->yvl = xcalloc((size_t)B, sizeof(float));
  RowKey *k = xcalloc((size_t)B, sizeof *k);
  for (int i = 0; i < B; i++)
    k[i] = (RowKey){(int)b->Y_valid_len->data[i] * (T + 1) + (int)b->X_valid_len->data[i], i};
  qsort(k, (size_t)B, sizeof *k, by_key);
  for (int r = 0; r < B; r++) {
    const int i = k[r].row;
    memcpy(s->X + (size_t)r * T, b->X->data + (size_t)i * T, sizeof(float) * (size_t)T);
    memcpy(s->Y + (size_t)r * T, b->Y->data + (size_t)i * T, sizeof(float) * (size_t)T);
    s->xvl[r] = b->X_valid_len->data[i];
    s->yvl[r] = b->Y_valid_len->data[i];
  }
  free(k);
}

static void host_rows_free(HostRows *s) {
  free(s->X);
  free(s->Y);
  free(s->xvl);
  free(s->yvl);
}

/* Prefix sums and running maxima of sorted rows, so that a part's shape costs O(1). */
typedef struct {
  const HostRows *s;
  float *pre, *suf;    /* the source columns of rows [0, r] and [r, B): longest or T */
  double *xsum, *ysum; /* rows [0, r)'s source and target lengths */
} RowSums;

static RowSums row_sums(const HostRows *s, bool src_trims) {
  const int B = s->B, T = s->T;
  RowSums q = {s, xcalloc((size_t)B, sizeof(float)), xcalloc((size_t)B + 1, sizeof(float)),
               xcalloc((size_t)B + 1, sizeof(double)), xcalloc((size_t)B + 1, sizeof(double))};
  for (int r = 0; r < B; r++) q.pre[r] = fmaxf(r ? q.pre[r - 1] : 1, src_trims ? s->xvl[r] : T);
  q.suf[B] = 1;
  for (int r = B - 1; r >= 0; r--) q.suf[r] = fmaxf(q.suf[r + 1], src_trims ? s->xvl[r] : T);
  for (int r = 0; r < B; r++) {
    q.xsum[r + 1] = q.xsum[r] + s->xvl[r];
    q.ysum[r + 1] = q.ysum[r] + s->yvl[r];
  }
  return q;
}

static void row_sums_free(RowSums *q) {
  free(q->pre);
  free(q->suf);
  free(q->xsum);
  free(q->ysum);
}

/* What rows [lo, hi) cost the model, with src source columns. */
static double part_cost(const Seq2SeqModel *m, const RowSums *q, int lo, int hi, float src) {
  const Seq2SeqPartShape p = {.rows = hi - lo,
                              .src_cols = (int)src,
                              .tgt_cols = (int)q->s->yvl[hi - 1], /* sorted: the longest */
                              .src_tokens = q->xsum[hi] - q->xsum[lo],
                              .tgt_tokens = q->ysum[hi] - q->ysum[lo]};
  if (m->exec.part_cost) return m->exec.part_cost(&p);
  return 3.0 * (double)p.rows * (double)(p.src_cols + p.tgt_cols);
}

/* Where to cut sorted rows in two: where the costlier part costs least, as the parts may run
 * at once on two threads (one rule for both paths keeps a run the same on either); 0 (keep the
 * batch whole) when even that part costs 0.9 of the whole batch. */
static int find_cut(const Seq2SeqModel *m, const HostRows *s) {
  const int B = s->B;
  RowSums q = row_sums(s, m->exec.encoder_ignores_padding);
  const double whole = part_cost(m, &q, 0, B, q.pre[B - 1]);
  double longer = whole;
  int cut = 0;
  for (int r = SPLIT_MIN_ROWS / 2; r <= B - SPLIT_MIN_ROWS / 2; r++) {
    const double c0 = part_cost(m, &q, 0, r, q.pre[r - 1]), c1 = part_cost(m, &q, r, B, q.suf[r]);
    if (fmax(c0, c1) < longer) longer = fmax(c0, c1), cut = r;
  }
  row_sums_free(&q);
  return longer < 0.9 * whole ? cut : 0;
}

/* A host tensor of the given shape holding a copy of src (the batch stays on the host until
 * seq2seq_batch_loss sends it to the model's device). */
static Tensor *host_tensor(int ndim, const int *shape, const float *src) {
  Tensor *t = tensor_new_on(DEV_CPU, ndim, shape);
  memcpy(t->data, src, sizeof(float) * (size_t)t->size);
  return t;
}

/* Rows [lo, hi) of s as a batch (arena tensors on the host). */
static NmtBatch host_rows_batch(const HostRows *s, int lo, int hi) {
  const int n = hi - lo, T = s->T;
  NmtBatch p = {.size = n};
  p.X = host_tensor(2, (const int[]){n, T}, s->X + (size_t)lo * T); /* (part, num_steps) */
  p.Y = host_tensor(2, (const int[]){n, T}, s->Y + (size_t)lo * T); /* (part, num_steps) */
  p.X_valid_len = host_tensor(1, (const int[]){n}, s->xvl + lo);    /* (part) */
  p.Y_valid_len = host_tensor(1, (const int[]){n}, s->yvl + lo);    /* (part) */
  for (int r = lo; r < hi; r++) p.num_tokens += (long)s->yvl[r];
  return p;
}

/* ================================================================ the executor */

/* Whether batches run their two parts on two threads (seq2seq_set_threads). */
static bool g_twin_threads;

struct Seq2SeqExec {
  Seq2SeqModel *m;
  int num_steps, bos;
  bool token_mean;
  bool training;      /* dropout on (seq2seq_exec_step sets it from its Seq2SeqStep) */
  StepLosses losses;  /* the parts' losses, read once a step */
  Seq2SeqRun run;     /* WHOLE, PARTS or TWIN */
  Seq2SeqModel twin;  /* with run TWIN: the twin, its context and dropout generator */
  AgContext *ctx;
  Rng rng;
};

/* The twin is built like the model, its initial values drawn from a generator of its own. */
static void build_twin(void *arg) {
  Seq2SeqExec *e = arg;
  e->m->exec.twin_new(e->m, &e->twin);
}

Seq2SeqExec *seq2seq_exec_new(Seq2SeqModel *m, int num_steps, int bos, bool token_mean,
                              Seq2SeqRun run) {
  Seq2SeqExec *e = xcalloc(1, sizeof *e);
  *e = (Seq2SeqExec){.m = m, .num_steps = num_steps, .bos = bos, .token_mean = token_mean,
                     .training = true};
  if (run == SEQ2SEQ_RUN_BEST) run = g_twin_threads ? SEQ2SEQ_RUN_TWIN : SEQ2SEQ_RUN_PARTS;
  paramset_pack(m->ps); /* a model built on a device is on it once packed */
  if (run == SEQ2SEQ_RUN_TWIN && (!m->exec.twin_new || m->ps->device != DEV_CPU))
    run = SEQ2SEQ_RUN_PARTS;
  if (run == SEQ2SEQ_RUN_TWIN) {
    Rng gen;
    rng_init(&gen, 0);
    twin_build(&gen, build_twin, e);
    e->ctx = ag_context_new();
  }
  e->run = run;
  step_losses_init(&e->losses, m->ps->device);
  return e;
}

void seq2seq_exec_free(Seq2SeqExec *e) {
  if (!e) return;
  if (e->run == SEQ2SEQ_RUN_TWIN) {
    e->m->exec.twin_free(&e->twin);
    ag_context_free(e->ctx);
  }
  step_losses_free(&e->losses);
  free(e);
}

const ParamSet *seq2seq_exec_twin_params(const Seq2SeqExec *e) {
  return e->run == SEQ2SEQ_RUN_TWIN ? e->twin.ps : NULL;
}

/* One part of a batch: forward, loss, backward; the part's summed loss goes to slot `part` of
 * the step's losses (read once, after the last part). */
static void part_backward(Seq2SeqModel *m, const NmtBatch *pb, int num_steps, int bos,
                          float token_scale, bool training, StepLosses *losses, int part) {
  Tensor *ls = batch_loss(m, pb, num_steps, bos, true, training); /* (1) */
  step_losses_put(losses, part, ls);
  /* d2l 1.0 averages over the valid tokens: its l is mean CE over tokens, so the summed
   * per-sequence loss (each a mean over num_steps) is rescaled to that. */
  if (token_scale != 1.0f) ls = t_scale(ls, token_scale);
  /* only the parameters' gradients are read after backward: the others' memory is reused */
  ag_set_release_grads(true);
  ag_backward(ls); /* the parameters' gradients add up over the parts */
  ag_set_release_grads(false);
}

/* What each part of a cut batch needs (twin_parts_run). */
typedef struct {
  Seq2SeqModel *m[2]; /* the model, and its twin (or the model again) for the second part */
  const HostRows *s;
  int cut, num_steps, bos;
  float token_scale;
  bool training;
  StepLosses *losses;
} PartsStep;

static void run_part(int part, void *arg) {
  PartsStep *st = arg;
  NmtBatch pb = host_rows_batch(st->s, part ? st->cut : 0, part ? st->s->B : st->cut);
  part_backward(st->m[part], &pb, st->num_steps, st->bos, st->token_scale, st->training,
                st->losses, part);
}

/* Forward, loss and backward of b, its parts' losses left in e->losses; returns the parts. */
static int exec_parts(Seq2SeqExec *e, const NmtBatch *b) {
  Seq2SeqModel *m = e->m;
  const long nt = b->num_tokens;
  const float token_scale = e->token_mean ? (float)e->num_steps / (float)(nt ? nt : 1) : 1.0f;
  if (e->run == SEQ2SEQ_RUN_WHOLE || b->size < SPLIT_MIN_ROWS) {
    part_backward(m, b, e->num_steps, e->bos, token_scale, e->training, &e->losses, 0);
    return 1;
  }
  HostRows sorted;
  sort_rows(b, e->num_steps, &sorted);
  const int cut = find_cut(m, &sorted);
  if (cut) {
    const bool twin = e->run == SEQ2SEQ_RUN_TWIN;
    PartsStep st = {{m, twin ? &e->twin : m}, &sorted, cut, e->num_steps, e->bos, token_scale,
                    e->training, &e->losses};
    twin_parts_run(run_part, &st, m->ps, twin ? e->twin.ps : NULL, twin ? e->ctx : NULL,
                   twin ? &e->rng : NULL);
  } else { /* whole, but sorted by length: a packing decoder skips more */
    NmtBatch whole = host_rows_batch(&sorted, 0, sorted.B);
    part_backward(m, &whole, e->num_steps, e->bos, token_scale, e->training, &e->losses, 0);
  }
  host_rows_free(&sorted);
  return cut ? 2 : 1;
}

/* The summed loss of the parts: the step's one read of the device. */
static double exec_loss(Seq2SeqExec *e, int parts) {
  float l[STEP_LOSS_PARTS] = {0, 0};
  step_losses_read(&e->losses, parts, l);
  return parts == 2 ? (double)l[0] + (double)l[1] : l[0];
}

double seq2seq_exec_backward(Seq2SeqExec *e, const NmtBatch *b) {
  return exec_loss(e, exec_parts(e, b));
}

double seq2seq_exec_step(Seq2SeqExec *e, const NmtBatch *b, const Seq2SeqStep *s) {
  ParamSet *ps = e->m->ps;
  paramset_zero_grad(ps);
  e->training = s->training;
  const int parts = exec_parts(e, b); /* forward, loss, backward */
  if (s->clip > 0) grad_clipping(ps, s->clip); /* on the device: nothing comes back */
  Adam_step(s->opt);
  return exec_loss(e, parts); /* read once, the whole step launched */
}

/* ================================================================ threads */

/* Why the policy: d2l-1.0's width-256 products gain from a second core; the classic preset's
 * width-32 products do not, and there a second core busy with other work stalls every parallel
 * region. On a machine shared with other jobs, --threads 1 may be faster for d2l-1.0 too. */
int seq2seq_set_threads(int requested, bool d2l10) {
#ifdef _OPENMP
  int n = requested > 0 ? requested : d2l10 ? omp_get_num_procs() : 1;
  omp_set_num_threads(n);
  /* Two threads run a batch's two parts side by side (each part's ops then stay on one
   * thread: OpenMP does not nest); more threads than two are the ops' own. */
  g_twin_threads = n <= 2 && (requested > 0 ? n == 2 : omp_get_num_procs() >= 2);
  return n;
#else
  (void)requested;
  (void)d2l10;
  return 1;
#endif
}
