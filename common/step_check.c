/* step_check.c — before the kit's batched step (step.c: sorted, cut, trimmed, packed, on a
 * twin's thread) stands in for the student's train step (exercise 3.4), both take one step on
 * the same batch from the same parameters, and the run compares them. The check leaves the run
 * as it found it: parameters, gradients and the random stream. See step.h. */
#include "step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend.h"
#include "exercise.h"
#include "util.h"

/* Both steps compute the same sums in float32 in another order (trimmed columns, parts, packed
 * rows): the losses and gradients agree to about 1e-7 of the largest. 1e-4 leaves room for that
 * rounding, while a wrong step moves them far more: no clipping scales every gradient by the
 * norm (12 on lab03's first batch), leftover gradients add the previous ones, an unmasked loss
 * counts the padding tokens (a third of the positions). */
static const double STEP_TOL = 1e-4;
/* The parameters after the student's step are compared with the kit's Adam step applied to the
 * student's own gradients: the same arithmetic on the same numbers, so equal to float rounding
 * of the update; 1e-3 of the learning rate leaves room for that. (Beside the kit's step's
 * parameters they would not do: Adam's first step is lr * g / (|g| + eps), where a gradient
 * near 0 turns rounding into any update in [-lr, lr].) A missing, doubled or other optimizer
 * step moves parameters by about the learning rate. */
static const double PARAM_TOL = 1e-3;

/* The check's batch: the first of a shuffle of the training pairs by a generator of its own
 * (the run's stream does not move), on the host like the trainer's. */
static NmtBatch check_batch(const NmtData *d) {
  Rng r;
  rng_init(&r, 1);
  NmtIter it;
  nmt_iter_init(&it, d, d->cfg.batch_size, true, &r);
  NmtBatch b;
  nmt_iter_next(&it, &b);
  nmt_iter_free(&it);
  return b;
}

static void block_put(const ParamSet *ps, float *block, const float *host) {
  KERNEL(ps->device, from_host, block, host, sizeof(float) * (size_t)ps->total);
}
static void block_get(const ParamSet *ps, float *host, const float *block) {
  KERNEL(ps->device, to_host, host, block, sizeof(float) * (size_t)ps->total);
}

/* A fresh optimizer like s->opt (its hyperparameters, no moments yet), as at a run's start. */
static Adam fresh_adam(const Seq2SeqStep *s, ParamSet *ps) {
  Adam a;
  Adam_init(&a, ps, s->opt->lr);
  a.beta1 = s->opt->beta1, a.beta2 = s->opt->beta2, a.eps = s->opt->eps;
  return a;
}

/* One step, eval mode, from parameters p0 with gradients left over (p0's values: a step must
 * zero them first), by mine or (mine NULL) the kit's step e. Gradients and parameters after it
 * into g and p (host). Returns the step's loss. */
static double one_step(Seq2SeqModel *m, const NmtData *d, Seq2SeqExec *e, Seq2SeqStepFn mine,
                       const Seq2SeqStep *s, const float *p0, float *g, float *p) {
  ParamSet *ps = m->ps;
  block_put(ps, ps->data, p0);
  block_put(ps, ps->grad, p0);
  Adam opt = fresh_adam(s, ps);
  Seq2SeqStep sc = *s;
  sc.opt = &opt;
  sc.training = false; /* no dropout: the two steps draw no random numbers */
  NmtBatch b = check_batch(d);
  double l;
  if (mine) {
    NmtBatch db = nmt_batch_to(&b, ps->device);
    l = mine(m, &db, &sc);
  } else {
    l = seq2seq_exec_step(e, &b, &sc);
  }
  block_get(ps, g, ps->grad);
  block_get(ps, p, ps->data);
  ag_step_reset();
  Adam_free(&opt);
  return l;
}

/* The kit's Adam step from p0 with gradients g: into p (host). */
static void adam_from(const Seq2SeqStep *s, ParamSet *ps, const float *p0, const float *g,
                      float *p) {
  block_put(ps, ps->data, p0);
  block_put(ps, ps->grad, g);
  Adam opt = fresh_adam(s, ps);
  Adam_step(&opt);
  block_get(ps, p, ps->data);
  Adam_free(&opt);
}

/* max |a - b| over n floats (NaN if any difference is) and max |b| */
static double max_diff(const float *a, const float *b, long n, double *bmax) {
  double dm = 0, m = 0;
  for (long i = 0; i < n; i++) {
    const double x = fabs((double)a[i] - b[i]);
    if (x > dm || isnan(x)) dm = x;
    m = fmax(m, fabs(b[i]));
  }
  if (bmax) *bmax = m;
  return dm;
}

Seq2SeqStepCheck seq2seq_step_compare(Seq2SeqModel *m, const NmtData *d, Seq2SeqExec *e,
                                      Seq2SeqStepFn mine, const Seq2SeqStep *s) {
  Seq2SeqStepCheck c = {.rows = d->n_train < d->cfg.batch_size ? d->n_train : d->cfg.batch_size};
  if (c.rows <= 0) return c;
  ParamSet *ps = m->ps;
  paramset_pack(ps);
  const Rng rng = g_rng; /* the twin's part draws a seed from it */
  const long N = ps->total;
  float *p0 = xmalloc(sizeof(float) * (size_t)N * 6), *gk = p0 + N, *pk = gk + N, *gm = pk + N,
        *pm = gm + N, *pe = pm + N;
  block_get(ps, p0, ps->data);
  const int todo = exercise_todo_calls();
  const double lm = one_step(m, d, e, mine, s, p0, gm, pm);
  c.stub = isnan(lm) && exercise_todo_calls() > todo;
  if (!c.stub) {
    const double lk = one_step(m, d, e, NULL, s, p0, gk, pk);
    adam_from(s, ps, p0, gm, pe);
    double gmax;
    c.loss_diff = fabs(lm - lk) / fmax(fabs(lk), 1e-30);
    c.grad_diff = max_diff(gm, gk, N, &gmax) / fmax(gmax, 1e-30);
    c.param_diff = max_diff(pm, pe, N, NULL) / s->opt->lr;
    c.agrees = c.loss_diff <= STEP_TOL && c.grad_diff <= STEP_TOL &&
               c.param_diff <= PARAM_TOL; /* not on NaN */
  }
  block_put(ps, ps->data, p0);
  paramset_zero_grad(ps);
  g_rng = rng;
  free(p0);
  return c;
}

bool seq2seq_step_use_kit(Seq2SeqModel *m, const NmtData *d, Seq2SeqExec *e, Seq2SeqStepFn mine,
                          const Seq2SeqStep *s, bool quiet) {
  const Seq2SeqStepCheck c = seq2seq_step_compare(m, d, e, mine, s);
  const char *how = seq2seq_exec_twin_params(e) ? ", on two threads" : "";
  if (c.rows <= 0) {
    return true; /* no training pairs: nothing to train either way */
  } else if (c.stub) {
    printf("train step: your seq2seq_train_step (exercise 3.4) is a stub, and training needs "
           "it\n");
    exercise_missing("train_seq2seq");
  } else if (!c.agrees) {
    printf("train step: the kit's batched step differs from your seq2seq_train_step on %d "
           "training pairs (loss by %.2g, gradients by %.2g of the largest, parameters by %.2g "
           "of the learning rate; tolerances %g, %g, %g): training with yours, slower\n",
           c.rows, c.loss_diff, c.grad_diff, c.param_diff, STEP_TOL, STEP_TOL, PARAM_TOL);
    return false;
  } else if (!quiet) {
    printf("train step: the kit's batched step (rows sorted by length, cut in two parts%s) "
           "agrees with your seq2seq_train_step on %d training pairs (loss to %.1g, gradients to "
           "%.1g of the largest, parameters to %.1g of the learning rate): training with it\n",
           how, c.rows, c.loss_diff, c.grad_diff, c.param_diff);
  }
  return true;
}
