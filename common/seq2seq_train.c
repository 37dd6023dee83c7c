/* seq2seq_train.c — d2l's train_seq2seq for the two sequence-to-sequence labs (03 and 06): the
 * book's loop, and what it records and prints. How a batch's forward and backward run is
 * step.c's. See seq2seq.h. */
#include "seq2seq.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "gemm.h"
#include "plot.h"
#include "step.h"
#include "util.h"

/* What the loop records: the epochs' losses and time, the progress lines and the figure. */
typedef struct {
  const Seq2SeqTrainConfig *cfg;
  Seq2SeqTrainResult *res;
  const char *dev;
  int every;         /* a progress line every N epochs */
  int anim_every;    /* an animator point every N epochs: N = every, as the book's loop, where
                      * that gives at least 5 points; every epoch in a shorter run (a curve, not
                      * a dot: --epochs 5 would give one point at epoch 5) */
  Animator *anim;
  double flops0;     /* the matrix products' count at the start */
} TrainLog;

static TrainLog train_log_begin(Seq2SeqModel *m, const Seq2SeqTrainConfig *cfg, int epochs,
                                Seq2SeqTrainResult *res) {
  TrainLog log = {.cfg = cfg, .res = res, .every = cfg->plot_every > 0 ? cfg->plot_every : 10};
  memset(res, 0, sizeof *res);
  paramset_pack(m->ps); /* a model built on a device is on it once packed: name that device */
  log.dev = cfg->device ? cfg->device : device_name(m->ps->device);
  res->epochs = epochs;
  res->epoch_losses = xcalloc((size_t)epochs, sizeof(double));
  log.anim_every = epochs >= 5 * log.every ? log.every : 1;
  if (cfg->fig_base) {
    /* 0.17's Animator(xlabel='epoch', ylabel='loss') has no legend; 1.0's board says train_loss */
    const char *legend[1] = {cfg->token_mean ? "train_loss" : NULL};
    log.anim = animator_new(cfg->fig_base, "epoch", "loss", legend, 1,
                            log.anim_every < epochs ? log.anim_every : 1, epochs, false,
                            0); /* drawn once, at the end: no gnuplot inside the timing */
  }
  log.flops0 = gemm_flops();
  return log;
}

/* Record epoch ep (0-based): dt seconds, the summed per-sequence loss over num_tokens target
 * tokens. Returns 0, or -1 (with a message) when the loss is no longer finite. */
static int train_log_epoch(TrainLog *log, int ep, double dt, double loss_sum, long num_tokens) {
  Seq2SeqTrainResult *res = log->res;
  if (ep == 0) res->first_epoch_seconds = dt;
  res->train_seconds += dt;
  res->tokens += num_tokens;
  /* d2l 0.17's metric: l.sum() / num_tokens, l the per-sequence mean over num_steps */
  const double loss = num_tokens ? loss_sum / (double)num_tokens : NAN;
  res->epoch_losses[ep] = loss;
  if (!isfinite(loss)) {
    progress_done();
    fprintf(stderr, "error: %strain_seq2seq: the loss became %g at epoch %d; try a smaller "
            "learning rate (--lr) or check the model's forward pass\n", program_prefix(), loss,
            ep + 1);
    res->epochs = ep + 1;
    return -1;
  }
  if (log->anim && ((ep + 1) % log->anim_every == 0 || ep + 1 == res->epochs))
    animator_add(log->anim, ep + 1, (const double[]){loss});
  if ((ep + 1) % log->every == 0 || ep + 1 == res->epochs) {
    if (!log->cfg->quiet)
      progress_report(ep + 1, res->epochs, loss, res->tokens / res->train_seconds, "tokens/sec",
                      log->dev);
  }
  return 0;
}

static void train_log_end(TrainLog *log, int rc) {
  Seq2SeqTrainResult *res = log->res;
  const bool quiet = log->cfg->quiet;
  if (!quiet) progress_done();
  if (log->anim) animator_close(log->anim);
  res->final_loss = res->epoch_losses[res->epochs - 1];
  const double t = res->train_seconds;
  res->tokens_per_sec = t > 0 ? res->tokens / t : 0;
  if (quiet || rc != 0) return;
  /* One throughput per run: the progress lines' measure, stated once. (The book's closing line
   * times the last epoch only, a second number that disagreed with the progress lines.) */
  printf("loss %.3f, %.1f tokens/sec on %s\n"
         "(tokens/sec: target tokens, padding excluded, per second inside the training loop, "
         "over all %d epochs)\n",
         res->final_loss, res->tokens_per_sec, log->dev, res->epochs);
  if (t > 0) { /* the arithmetic rate of the matrix products (most of the work at d2l-1.0) */
    const double gf = (gemm_flops() - log->flops0) * 1e-9;
    printf("matrix products: %.1f GFLOP in %.2f s of training, %.1f GFLOP/s\n", gf, t, gf / t);
  }
}

int train_seq2seq(Seq2SeqModel *m, const NmtData *d, const Seq2SeqTrainConfig *cfg,
                  Seq2SeqTrainResult *res) {
  const int epochs = cfg->epochs > 0 ? cfg->epochs : 1;
  Adam opt;
  Adam_init(&opt, m->ps, cfg->lr);
  NmtIter it;
  nmt_iter_init(&it, d, d->cfg.batch_size, true, cfg->rng);
  const int bos = vocab_idx(d->tgt_vocab, "<bos>");
  /* how each batch's forward and backward run (step.h): the same gradients every way */
  Seq2SeqExec *exec = seq2seq_exec_new(m, d->num_steps, bos, cfg->token_mean, SEQ2SEQ_RUN_BEST);
  const Seq2SeqStep step = {.opt = &opt, .bos = bos, .clip = cfg->clip,
                            .token_mean = cfg->token_mean, .training = true};
  /* one step: the student's (exercise 3.4), or the kit's batched step where the two agree on one
   * batch of this run (step_check.c; before the log starts, so not timed) */
  const bool mine = cfg->step && !seq2seq_step_use_kit(m, d, exec, cfg->step, &step, cfg->quiet);
  TrainLog log = train_log_begin(m, cfg, epochs, res);
  int rc = 0;
  for (int ep = 0; ep < epochs && rc == 0; ep++) {
    const double t0 = now_seconds();
    double loss_sum = 0;
    long num_tokens = 0;
    NmtBatch b;
    while (nmt_iter_next(&it, &b)) {
      if (mine) b = nmt_batch_to(&b, m->ps->device);
      /* zero_grad, forward, masked loss, backward, clip, Adam's step */
      const double l = mine ? cfg->step(m, &b, &step) : seq2seq_exec_step(exec, &b, &step);
      ag_step_reset();
      backend_step_end(m->ps->device);
      loss_sum += l; /* the book's metric.add(l.sum(), num_tokens) */
      num_tokens += b.num_tokens;
    }
    rc = train_log_epoch(&log, ep, now_seconds() - t0, loss_sum, num_tokens);
  }
  /* @program begin (the chapter pages leave the clean-up out) */
  seq2seq_exec_free(exec);
  nmt_iter_free(&it);
  Adam_free(&opt);
  /* @program end */
  train_log_end(&log, rc);
  return rc;
}

void seq2seq_train_result_free(Seq2SeqTrainResult *res) {
  free(res->epoch_losses);
  res->epoch_losses = NULL;
}
