/* seq2seq.c — the training loop, greedy decoding, held-out BLEU and summary of
 * the two sequence-to-sequence labs (03 and 06). See seq2seq.h. */
#include "seq2seq.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "data.h"
#include "gemm.h"
#include "plot.h"
#include "rng.h"
#include "util.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* ================================================================ loss */

Tensor *MaskedSoftmaxCELoss(Tensor *pred, Tensor *label, Tensor *valid_len) {
  if (!pred || !label || !valid_len)
    tensor_error("MaskedSoftmaxCELoss", "NULL argument (did an unfinished exercise return NULL?)");
  char sp[64], sl[64], sv[64];
  if (pred->ndim != 3 || label->ndim != 2 || valid_len->ndim != 1 ||
      pred->shape[0] != label->shape[0] || pred->shape[1] != label->shape[1] ||
      valid_len->shape[0] != label->shape[0])
    tensor_error("MaskedSoftmaxCELoss",
                 "pred %s, label %s, valid_len %s: expected (batch, num_steps, vocab), "
                 "(batch, num_steps) and (batch)",
                 shape_str(pred, sp, sizeof sp), shape_str(label, sl, sizeof sl),
                 shape_str(valid_len, sv, sizeof sv));
  int B = label->shape[0], T = label->shape[1];
  /* weights = sequence_mask(ones_like(label), valid_len): 1 for real tokens, 0 for padding */
  const float *vl = host_read(valid_len); /* an explicit host copy off the CPU */
  float *wh = arena_alloc(sizeof(float) * (size_t)B * (size_t)T);
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) wh[b * T + t] = (float)t < vl[b] ? 1.0f : 0.0f;
  Tensor *w = tensor_new_on(pred->device, 2, label->shape); /* (batch, num_steps) */
  tensor_copy_from_host(w, wh);
  Tensor *l = t_cross_entropy(pred, label, w); /* (batch, num_steps) */
  return t_mean(l, 1, false);                  /* (batch) */
}

Tensor *seq2seq_dec_input(const Tensor *Y, int bos) {
  int B = Y->shape[0], T = Y->shape[1];
  const float *y = host_read(Y); /* an explicit host copy off the CPU */
  float *dh = arena_alloc(sizeof(float) * (size_t)B * (size_t)T);
  for (int b = 0; b < B; b++) {
    dh[b * T] = (float)bos;
    for (int t = 1; t < T; t++) dh[b * T + t] = y[b * T + t - 1];
  }
  Tensor *d = tensor_new_on(Y->device, 2, Y->shape); /* (batch, num_steps) */
  tensor_copy_from_host(d, dh);
  return d;
}

/* ================================================================ training */

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

Tensor *seq2seq_batch_loss(Seq2SeqModel *m, const NmtBatch *b, int num_steps, int bos,
                           bool trim) {
  /* Target positions at or past every row's valid length are weighted 0 by the loss, and the
   * decoders are causal (position t reads positions <= t only), so those columns change neither
   * the loss nor a gradient: trim drops them, and the source columns that are padding in every
   * row when the encoder ignores padding. Same loss, same gradients, less work: 31% of the
   * d2l-1.0 columns, 40% of the classic ones on fra-eng's short pairs. The book computes them. */
  const int T = num_steps, Ty = trim ? batch_max_len(b->Y_valid_len) : T;
  const int Tx = trim && m->encoder_ignores_padding ? batch_max_len(b->X_valid_len) : T;
  const Device dv = m->ps->device; /* send the batch to the model's device */
  Tensor *X = tensor_to(first_cols(b->X, Tx), dv), *X_vl = tensor_to(b->X_valid_len, dv);
  Tensor *Y = tensor_to(first_cols(b->Y, Ty), dv), *Y_vl = tensor_to(b->Y_valid_len, dv);
  Tensor *dec_X = seq2seq_dec_input(Y, bos);                /* (batch, Ty) */
  Tensor *Y_hat = trim && m->forward_packed /* (batch, Ty, tgt_vocab) */
                     ? m->forward_packed(m->net, X, X_vl, dec_X, Y_vl, true)
                     : m->forward(m->net, X, X_vl, dec_X, true);
  Tensor *l = MaskedSoftmaxCELoss(Y_hat, Y, Y_vl);          /* (batch): mean over Ty */
  Tensor *ls = t_sum_all(l);                                /* (1) */
  return Ty < T ? t_scale(ls, (float)Ty / (float)T) : ls;  /* the book's mean over num_steps */
}

/* A batch in two parts by length. A batch of mixed lengths pays for its longest row in every
 * row, even trimmed; its rows sorted by (target, source) valid length and cut in two, each part
 * trimmed to its own longest, cost about 0.57 of the padded columns of the d2l-1.0 batches
 * instead of 0.69, and 0.50 instead of 0.60 of the classic ones (fra-eng's first pairs).
 * Forward and backward run per part, the gradients add up, and the optimizer steps once: the
 * same step as the whole batch's. With two threads the parts run at once, the second on a twin
 * of the model (seq2seq_twin_new): measured (3 runs each, interleaved, 40 classic epochs), lab03
 * 0.68-0.72 s on one thread -> 0.44-0.47 s on two, lab06 0.90-0.97 -> 0.57 s; the parts of the
 * classic presets' ops were too small to split over threads. Parts keep 32 rows or more, so
 * their products stay whole tiles. */
enum { SPLIT_MIN_ROWS = 64 };

typedef struct {
  int key, row; /* key: (target, source) valid lengths */
} RowKey;

static int by_key(const void *a, const void *b) {
  const RowKey *x = a, *y = b;
  return x->key != y->key ? (x->key < y->key ? -1 : 1) : x->row - y->row;
}

/* A batch's rows on the host, outside the arena (they outlive the reset between the parts). */
typedef struct {
  int B, T;
  float *X, *Y;     /* (B, T) source and target ids */
  float *xvl, *yvl; /* (B) valid lengths */
} HostRows;

/* b's rows sorted by (target, source) valid length into s (malloc'd here), and where to cut
 * them in two: where the costlier part costs least, as the parts may run at once on two threads
 * (one rule for both paths keeps a run the same on either); 0 (keep the batch whole) when even
 * that part costs 0.9 of the whole batch. */
static int batch_cut(const NmtBatch *b, int T, bool src_trims, bool dec_packs, HostRows *s) {
  const int B = b->size;
  *s = (HostRows){.B = B, .T = T};
  s->X = xcalloc((size_t)B * (size_t)T, sizeof(float));
  s->Y = xcalloc((size_t)B * (size_t)T, sizeof(float));
  s->xvl = xcalloc((size_t)B, sizeof(float));
  s->yvl = xcalloc((size_t)B, sizeof(float));
  RowKey *k = xcalloc((size_t)B, sizeof *k);
  float *pre = xcalloc((size_t)B, sizeof *pre), *suf = xcalloc((size_t)B + 1, sizeof *suf);
  /* xsum[r], ysum[r]: rows [0, r)'s source and target lengths */
  double *xsum = xcalloc((size_t)B + 1, sizeof *xsum);
  double *ysum = xcalloc((size_t)B + 1, sizeof *ysum);
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
  /* What a part costs, in positions x passes (forward 1, backward 2): the GRU encoder runs
   * every column both ways, a packing decoder (dec_packs) its rows' target lengths, another its
   * rows x its longest target. The Transformer's (src_trims) forward runs its rows x its longest
   * source and target, and so does its backward, except its products, which skip the positions
   * past each sequence's end (cpu_linear_grad): costed as 2 padded + 1 valid, the weights with
   * which the two parts' measured times came out even (lab06 d2l-1.0, AVX2 build: part 0 over
   * part 1 0.96-0.99 at 1.5 + 1.5, 0.97-1.01 at 2 + 1, 1.01-1.06 at 2.5 + 0.5). */
  for (int r = 0; r < B; r++) pre[r] = fmaxf(r ? pre[r - 1] : 1, src_trims ? s->xvl[r] : T);
  suf[B] = 1;
  for (int r = B - 1; r >= 0; r--) suf[r] = fmaxf(suf[r + 1], src_trims ? s->xvl[r] : T);
  for (int r = 0; r < B; r++) {
    xsum[r + 1] = xsum[r] + s->xvl[r];
    ysum[r + 1] = ysum[r] + s->yvl[r];
  }
#define PART_COST(lo, hi, src)                                                                  \
  (src_trims ? 2.0 * (double)((hi) - (lo)) * ((src) + s->yvl[(hi) - 1]) + xsum[hi] - xsum[lo] + \
                   ysum[hi] - ysum[lo]                                                          \
             : 3.0 * ((double)((hi) - (lo)) * (src) +                                          \
                      (dec_packs ? ysum[hi] - ysum[lo] : (double)((hi) - (lo)) * s->yvl[(hi) - 1])))
  const double whole = PART_COST(0, B, pre[B - 1]);
  double longer = whole;
  int cut = 0;
  for (int r = SPLIT_MIN_ROWS / 2; r <= B - SPLIT_MIN_ROWS / 2; r++) {
    const double c0 = PART_COST(0, r, pre[r - 1]), c1 = PART_COST(r, B, suf[r]);
    if (fmax(c0, c1) < longer) longer = fmax(c0, c1), cut = r;
  }
#undef PART_COST
  free(k);
  free(pre);
  free(suf);
  free(xsum);
  free(ysum);
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
  return p;
}

static void host_rows_free(HostRows *s) {
  free(s->X);
  free(s->Y);
  free(s->xvl);
  free(s->yvl);
}

/* Whether train_seq2seq trains the two parts of a batch on two threads (seq2seq_set_threads). */
static bool g_twin_threads;

Seq2SeqTwin *seq2seq_twin_new(const Seq2SeqModel *m) {
  paramset_pack(m->ps); /* a model built on a device is on it once packed */
  if (!m->twin_new || m->ps->device != DEV_CPU) return NULL;
  Seq2SeqTwin *t = xcalloc(1, sizeof *t);
  m->twin_new(m, &t->m);
  t->ctx = ag_context_new();
  return t;
}

void seq2seq_twin_free(Seq2SeqTwin *t) {
  if (!t) return;
  t->m.twin_free(&t->m);
  ag_context_free(t->ctx);
  free(t);
}

/* One part of a batch: forward, loss, backward; returns the part's summed loss. */
static float part_backward(Seq2SeqModel *m, const NmtBatch *pb, int num_steps, int bos,
                           float token_scale) {
  Tensor *ls = seq2seq_batch_loss(m, pb, num_steps, bos, true); /* (1) */
  float ls_host;
  tensor_to_host(ls, &ls_host); /* the one number a step reads back */
  /* d2l 1.0 averages over the valid tokens: its l is mean CE over tokens, so the summed
   * per-sequence loss (each a mean over num_steps) is rescaled to that. */
  if (token_scale != 1.0f) ls = t_scale(ls, token_scale);
  ag_backward(ls); /* the parameters' gradients add up over the parts */
  return ls_host;
}

/* What each part of a cut batch needs (twin_parts_run). */
typedef struct {
  Seq2SeqModel *m[2]; /* the model, and its twin (or the model again) for the second part */
  const HostRows *s;
  int cut, num_steps, bos;
  float token_scale;
  float loss[2];
} TwinStep;

static void twin_part(int part, void *arg) {
  TwinStep *st = arg;
  NmtBatch pb = host_rows_batch(st->s, part ? st->cut : 0, part ? st->s->B : st->cut);
  st->loss[part] = part_backward(st->m[part], &pb, st->num_steps, st->bos, st->token_scale);
}

double seq2seq_batch_backward(Seq2SeqModel *m, const NmtBatch *b, int num_steps, int bos,
                              bool token_mean, bool split, Seq2SeqTwin *twin) {
  long nt = 0; /* the batch is built on the host: count its tokens there */
  for (int i = 0; i < b->size; i++) nt += (long)b->Y_valid_len->data[i];
  const float token_scale = token_mean ? (float)num_steps / (float)(nt ? nt : 1) : 1.0f;
  HostRows sorted = {0};
  const int cut = split && b->size >= SPLIT_MIN_ROWS
                      ? batch_cut(b, num_steps, m->encoder_ignores_padding,
                                  m->forward_packed != NULL, &sorted)
                      : 0;
  double lsum;
  if (cut) {
    TwinStep st = {{m, twin ? &twin->m : m}, &sorted, cut, num_steps, bos, token_scale, {0, 0}};
    twin_parts_run(twin_part, &st, m->ps, twin ? twin->m.ps : NULL, twin ? twin->ctx : NULL,
                   twin ? &twin->rng : NULL);
    lsum = (double)st.loss[0] + (double)st.loss[1];
  } else if (sorted.B) { /* whole, but sorted by length: a packing decoder skips more */
    NmtBatch whole = host_rows_batch(&sorted, 0, sorted.B);
    lsum = part_backward(m, &whole, num_steps, bos, token_scale);
  } else {
    lsum = part_backward(m, b, num_steps, bos, token_scale);
  }
  host_rows_free(&sorted);
  return lsum;
}

int train_seq2seq(Seq2SeqModel *m, const NmtData *d, const Seq2SeqTrainConfig *cfg,
                  Seq2SeqTrainResult *res) {
  memset(res, 0, sizeof *res);
  int epochs = cfg->epochs > 0 ? cfg->epochs : 1;
  int every = cfg->plot_every > 0 ? cfg->plot_every : 10;
  paramset_pack(m->ps); /* a model built on a device is on it once packed: name that device */
  const char *dev = cfg->device ? cfg->device : device_name(m->ps->device);
  res->epochs = epochs;
  res->epoch_losses = xcalloc((size_t)epochs, sizeof(double));
  Adam opt;
  Adam_init(&opt, m->ps, cfg->lr);
  NmtIter it;
  nmt_iter_init(&it, d, d->cfg.batch_size, true, cfg->rng);
  int bos = vocab_idx(d->tgt_vocab, "<bos>");
  Animator *anim = NULL;
  if (cfg->fig_base) {
    const char *legend[1] = {"train"};
    anim = animator_new(cfg->fig_base, "epoch", "loss", legend, 1, every < epochs ? every : 1,
                        epochs, false, 0); /* drawn once, at the end: no gnuplot inside the timing */
  }
  int rc = 0;
  double total_time = 0, flops0 = gemm_flops();
  ag_set_release_grads(true); /* only the parameters' gradients are read after backward */
  Seq2SeqTwin *twin = g_twin_threads ? seq2seq_twin_new(m) : NULL;
  long total_tokens = 0;
  for (int ep = 0; ep < epochs; ep++) {
    double t0 = now_seconds();
    double loss_sum = 0;
    long ntok = 0;
    NmtBatch b;
    while (nmt_iter_next(&it, &b)) {
      paramset_zero_grad(m->ps);
      long nt = 0; /* the batch is built on the host: count its tokens there */
      for (int i = 0; i < b.size; i++) nt += (long)b.Y_valid_len->data[i];
      const double lsum =
          seq2seq_batch_backward(m, &b, d->num_steps, bos, cfg->token_mean, true, twin);
      if (cfg->clip > 0) clip_grad_norm(m->ps, cfg->clip);
      Adam_step(&opt);
      ag_step_reset();
      loss_sum += lsum; /* the book's metric.add(l.sum(), num_tokens) */
      ntok += nt;
    }
    double dt = now_seconds() - t0;
    if (ep == 0) res->first_epoch_seconds = dt;
    total_time += dt;
    total_tokens += ntok;
    /* d2l 0.17's metric: l.sum() / num_tokens, l the per-sequence mean over num_steps */
    double loss = ntok ? loss_sum / (double)ntok : NAN;
    res->epoch_losses[ep] = loss;
    if (!isfinite(loss)) {
      progress_done();
      fprintf(stderr, "error: %strain_seq2seq: the loss became %g at epoch %d; try a smaller "
              "learning rate (--lr) or check the model's forward pass\n", program_prefix(), loss,
              ep + 1);
      rc = -1;
      res->epochs = ep + 1;
      break;
    }
    if ((ep + 1) % every == 0 || ep + 1 == epochs) {
      if (anim) animator_add(anim, ep + 1, (const double[]){loss});
      if (!cfg->quiet) progress_report(ep + 1, epochs, loss, total_tokens / total_time,
                                       "tokens/sec", dev);
    }
  }
  ag_set_release_grads(false);
  seq2seq_twin_free(twin);
  if (!cfg->quiet) progress_done();
  if (anim) animator_close(anim);
  nmt_iter_free(&it);
  Adam_free(&opt);
  res->final_loss = res->epoch_losses[res->epochs - 1];
  res->train_seconds = total_time;
  res->tokens = total_tokens;
  res->tokens_per_sec = total_time > 0 ? total_tokens / total_time : 0;
  /* One throughput per run: the progress lines' measure, stated once. (The book's closing line
   * times the last epoch only, a second number that disagreed with the progress lines.) */
  if (!cfg->quiet && rc == 0)
    printf("loss %.3f, %.1f tokens/sec on %s\n"
           "(tokens/sec: target tokens, padding excluded, per second inside the training loop, "
           "over all %d epochs)\n",
           res->final_loss, res->tokens_per_sec, dev, res->epochs);
  if (!cfg->quiet && rc == 0 && total_time > 0) {
    /* the arithmetic rate of the matrix products (most of the work at the d2l-1.0 sizes) */
    double gf = (gemm_flops() - flops0) * 1e-9;
    printf("matrix products: %.1f GFLOP in %.2f s of training, %.1f GFLOP/s\n", gf, total_time,
           gf / total_time);
  }
  return rc;
}

void seq2seq_train_result_free(Seq2SeqTrainResult *res) {
  free(res->epoch_losses);
  res->epoch_losses = NULL;
}

/* ================================================================ prediction */

void predict_seq2seq_ids(Seq2SeqModel *m, const NmtData *d, const int *src_ids, int src_valid,
                         int max_steps, bool save_attention, Seq2SeqPrediction *out) {
  memset(out, 0, sizeof *out);
  int T = d->num_steps;
  int steps = max_steps > 0 ? max_steps : T;
  if (steps > SEQ2SEQ_MAX_STEPS) steps = SEQ2SEQ_MAX_STEPS;
  out->src_len = src_valid;
  bool was = ag_grad_enabled();
  ag_set_grad_enabled(false);
  const Device dv = m->ps->device;
  float *xh = arena_alloc(sizeof(float) * (size_t)T), xv = (float)src_valid;
  for (int j = 0; j < T; j++) xh[j] = (float)src_ids[j];
  Tensor *X = tensor_new_on(dv, 2, (const int[]){1, T});       /* (1, num_steps) */
  Tensor *X_valid = tensor_new_on(dv, 1, (const int[]){1});    /* (1) */
  tensor_copy_from_host(X, xh);
  tensor_copy_from_host(X_valid, &xv);
  m->begin_decode(m->net, X, X_valid);
  int eos = vocab_idx(d->tgt_vocab, "<eos>");
  int tok = vocab_idx(d->tgt_vocab, "<bos>");
  bool attn = save_attention && m->step_attention;
  for (int s = 0; s < steps; s++) {
    Tensor *logits = m->decode_step(m->net, tok, s); /* (1, tgt_vocab) */
    int V = logits->shape[logits->ndim - 1], best = 0;
    const float *lg = host_read(logits); /* greedy decoding reads what it picks from */
    for (int v = 1; v < V; v++)
      if (lg[v] > lg[best]) best = v;
    if (attn) { /* d2l saves the weights before checking for <eos>: the <eos> step is a row */
      Tensor *w = m->step_attention(m->net);
      if (w) {
        if (!out->attn) {
          out->attn_len = (int)w->size;
          out->attn = xcalloc((size_t)steps * (size_t)w->size, sizeof(float));
        }
        if (w->size == out->attn_len)
          tensor_to_host(w, out->attn + (size_t)s * (size_t)out->attn_len);
      }
    }
    out->steps = s + 1;
    if (best == eos) break;
    out->ids[out->n++] = best;
    tok = best;
  }
  nmt_decode(d->tgt_vocab, out->ids, out->n, out->text, sizeof out->text);
  ag_step_reset();
  ag_set_grad_enabled(was);
}

void predict_seq2seq(Seq2SeqModel *m, const NmtData *d, const char *src, int max_steps,
                     bool save_attention, Seq2SeqPrediction *out) {
  int *ids = xmalloc(sizeof(int) * (size_t)d->num_steps);
  int valid = nmt_encode_source(d, src, ids);
  predict_seq2seq_ids(m, d, ids, valid, max_steps, save_attention, out);
  free(ids);
}

void seq2seq_prediction_free(Seq2SeqPrediction *p) {
  free(p->attn);
  p->attn = NULL;
}

/* ================================================================ held-out BLEU */

/* Tokens of a sentence without a trailing '<eos>' (d2l-1.0 pairs carry one). */
static int strip_eos(const TokenSeq *s) {
  int n = s->len;
  if (n > 0 && strcmp(s->tok[n - 1], "<eos>") == 0) n--;
  return n;
}

static void score_pair(Seq2SeqModel *m, const NmtData *d, const TokenSeq *src,
                       const TokenSeq *ref, BleuStats *st, int *ids) {
  const Vocab *v = d->src_vocab;
  int T = d->num_steps, pad = vocab_idx(v, "<pad>"), ns = strip_eos(src), k = 0;
  for (; k < ns && k < T; k++) ids[k] = vocab_idx(v, src->tok[k]);
  if (k < T) ids[k++] = vocab_idx(v, "<eos>");
  int valid = k;
  for (; k < T; k++) ids[k] = pad;
  Seq2SeqPrediction p;
  predict_seq2seq_ids(m, d, ids, valid, 0, false, &p);
  const char *toks[SEQ2SEQ_MAX_STEPS];
  for (int i = 0; i < p.n; i++) toks[i] = vocab_token(d->tgt_vocab, p.ids[i]);
  bleu_stats_add(st, toks, p.n, ref->tok, strip_eos(ref));
  seq2seq_prediction_free(&p);
}

int seq2seq_heldout_stats(Seq2SeqModel *m, const NmtData *d, const char *data_dir, int count,
                          BleuStats *out, int *npairs, char *err, size_t errlen) {
  BleuStats st;
  memset(&st, 0, sizeof st);
  memset(out, 0, sizeof *out);
  *npairs = 0;
  int *ids = xmalloc(sizeof(int) * (size_t)d->num_steps);
  int used = 0;
  if (d->cfg.preset == NMT_D2L_10) {
    for (int i = d->n_train; i < d->n && (count <= 0 || used < count); i++, used++)
      score_pair(m, d, &d->pairs.src[i], &d->pairs.tgt[i], &st, ids);
  } else {
    char *raw;
    size_t len;
    if (read_data_nmt(data_dir, &raw, &len, err, errlen) != 0) {
      free(ids);
      return -1;
    }
    /* the same preprocessing and tokenization over `count` more lines; pairs [d->n, P.n) are
     * the ones after the training range */
    /* only lines 0..max are tokenized: preprocess just those (not the whole 10 MB file) */
    int max = d->cfg.num_examples + (count > 0 ? count : 200);
    size_t plen, cut = 0;
    for (int i = 0; i <= max && cut < len; i++) {
      const char *nl = memchr(raw + cut, '\n', len - cut);
      cut = nl ? (size_t)(nl - raw) + 1 : len;
    }
    char *text = preprocess_nmt(raw, cut, &plen);
    free(raw);
    NmtPairs P = tokenize_nmt(text, max);
    free(text);
    for (int i = d->n; i < P.n; i++, used++) score_pair(m, d, &P.src[i], &P.tgt[i], &st, ids);
    nmt_pairs_free(&P);
  }
  free(ids);
  *npairs = used;
  *out = st;
  if (!used) return fail(err, errlen, "seq2seq_heldout_stats: no held-out pairs to score");
  return 0;
}

void seq2seq_heldout_report(Seq2SeqModel *m, const NmtData *d, const char *data_dir, int count,
                            Seq2SeqHeldout *h) {
  *h = (Seq2SeqHeldout){.bleu4 = NAN, .bleu2 = NAN};
  BleuStats st;
  char err[512];
  int np = 0;
  if (seq2seq_heldout_stats(m, d, data_dir, count, &st, &np, err, sizeof err) != 0) {
    printf("held-out BLEU: not computed (%s)\n", err);
    return;
  }
  h->pairs = np;
  h->bleu4 = bleu_stats_score(&st);
  h->bleu2 = bleu_stats_score_upto(&st, 2);
  printf("held-out corpus BLEU-4 on %d unseen pairs: %.3f (n-gram precisions", np, h->bleu4);
  for (int k = 0; k < 4; k++) {
    h->precisions[k] = st.total[k] ? (double)st.match[k] / (double)st.total[k] : 0.0;
    printf(" %.3f", h->precisions[k]);
  }
  printf(")\nheld-out corpus BLEU-2: %.3f\n", h->bleu2);
}

/* Measured on a quiet 2-core AMD EPYC (AVX-512 build, 2026-11-24, 3 epochs, interleaved runs):
 * d2l-1.0's width-256 products gain from the second core, lab03 2,840-2,910 -> 4,940-5,210
 * tokens/s and lab06 3,270-3,290 -> 4,570-5,750 tokens/s, same losses; the classic preset's
 * width-32 products do not (lab03 70-88k vs 64-84k, lab06 37-40k vs 39-45k tokens/s over 60
 * epochs), and there a second core that is busy with other work stalls every parallel region.
 * On a machine shared with other jobs, --threads 1 may be faster for d2l-1.0 too. */
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

void seq2seq_heldout_record(Summary *S, const Seq2SeqHeldout *h) {
  summary_int(S, "heldout_pairs", h->pairs);
  summary_num(S, "heldout_bleu2", h->bleu2);
  if (h->pairs > 0) summary_doubles(S, "heldout_ngram_precisions", h->precisions, 4);
}

/* ================================================================ summary.json */

void seq2seq_summary_record(Summary *S, const char *preset, const NmtData *d,
                            const Seq2SeqTrainResult *r, const Seq2SeqTranslation *tr, int ntr,
                            double heldout_bleu4) {
  summary_str(S, "preset", preset ? preset : "d2l-0.17");
  summary_str(S, "device", device_name(tensor_default_device()));
  summary_int(S, "src_vocab_size", d->src_vocab->size);
  summary_int(S, "tgt_vocab_size", d->tgt_vocab->size);
  summary_int(S, "num_pairs", d->n);
  summary_int(S, "epochs", r ? r->epochs : 0);
  summary_doubles(S, "epoch_losses", r ? r->epoch_losses : NULL, r ? r->epochs : 0);
  summary_num(S, "final_loss", r && r->epochs ? r->final_loss : NAN);
  summary_num(S, "tokens_per_sec", r ? r->tokens_per_sec : NAN);
  /* after the first epoch, as benchmarks time PyTorch after its warm-up steps (bench-vs-torch) */
  summary_num(S, "train_seconds_after_first_epoch",
              r && r->epochs > 1 ? r->train_seconds - r->first_epoch_seconds : NAN);
  summary_int(S, "peak_rss_kb", peak_rss_kb());
  double sum = 0;
  for (int i = 0; i < ntr; i++) {
    summary_str(S, summary_path("translations/%d/src", i), tr[i].src);
    summary_str(S, summary_path("translations/%d/pred", i), tr[i].pred);
    summary_str(S, summary_path("translations/%d/ref", i), tr[i].ref);
    summary_num(S, summary_path("translations/%d/bleu", i), tr[i].bleu);
    sum += tr[i].bleu;
  }
  if (ntr == 0) summary_ints(S, "translations", NULL, 0); /* [] */
  summary_num(S, "mean_bleu", ntr ? sum / ntr : NAN);
  summary_num(S, "heldout_bleu4", heldout_bleu4);
}
