/* step.h — how a training batch is executed, apart from what it computes.
 *
 * A trainer's loop reads like the book's: for each batch, forward, loss, backward, clip, step.
 * The "forward, loss, backward" of a batch is one call into this module, which decides how to
 * run it: whole, or sorted by length and cut in two parts, each trimmed to its own longest row,
 * one after the other or side by side on two threads (the second on a twin of the model). Every
 * way gives the gradients of the whole batch at once (tests/unit/test_seq2seq_trim.c); a reader
 * of the training loop may skip this module.
 *
 * The model supplies what only it knows, through Seq2SeqExecHooks (seq2seq.h): what a part of a
 * batch costs, whether its encoder ignores padding, a packed forward, and how to build a twin. */
#ifndef AL_STEP_H
#define AL_STEP_H

#include <stdbool.h>

#include "nn.h"
#include "rng.h"
#include "seq2seq.h"

/* ---------------------------------------------------------------- the step's losses */

/* The losses of a step's parts stay where they were computed until the step reads them all in
 * one copy, after the last part's backward: on a device, the step's one wait for the host. */
enum { STEP_LOSS_PARTS = 2 };
typedef struct {
  Device device;
  float *slots; /* STEP_LOSS_PARTS floats of the device's memory */
} StepLosses;
void step_losses_init(StepLosses *s, Device d);
void step_losses_put(StepLosses *s, int part, const Tensor *loss); /* loss (1), a copy on d */
void step_losses_read(StepLosses *s, int parts, float *out);      /* slots [0, parts) */
void step_losses_free(StepLosses *s);

/* ---------------------------------------------------------------- twins */

/* Build a twin: build(arg) runs with this thread's generator set to gen (rng_use), so the
 * initial values the twin's layers draw (thrown away: a twin reads the model's values through
 * paramset_share_values) come from gen, and the program's generator g_rng does not move: the run
 * stays what --seed says whether a twin is built or not. */
void twin_build(Rng *gen, void (*build)(void *arg), void *arg);

/* The two parts of a training step, part(0, arg) then part(1, arg). With a twin (twin_ps, its
 * context ctx and generator rng) they run at once, the second on another thread (in turn when
 * OpenMP grants one) inside ctx (ag_context_use); twin_ps's gradients are zeroed first and added
 * into ps's after both. Without (twin_ps NULL) they run on this thread, the arena rewound in
 * between, so the caller's batch must live outside it. Either way the second part's dropout
 * draws from a generator seeded by one draw of g_rng (rng_use): a run is the same on one thread,
 * two and a device. part(1, ...) must use the twin's model where there is one. Each part's ops
 * run on one thread (OpenMP does not nest); BLAS is kept to one thread per caller. */
typedef void (*TwinPartFn)(int part, void *arg);
void twin_parts_run(TwinPartFn part, void *arg, ParamSet *ps, ParamSet *twin_ps, AgContext *ctx,
                    Rng *rng);

/* ---------------------------------------------------------------- seq2seq batches */

/* One batch's loss as the trainer takes it: the sum over the batch of each sequence's
 * MaskedSoftmaxCELoss (mean over num_steps), forward in training mode, ready for backward.
 * trim drops the columns that cannot change it: target positions at or past every row's valid
 * length (the loss weighs them 0, the decoders are causal), and source columns that are padding
 * in every row when the encoder ignores padding; with trim, a model's packed forward skips the
 * rows that have ended. Tests compare both ways. Returns (1). */
Tensor *seq2seq_batch_loss(Seq2SeqModel *m, const NmtBatch *b, int num_steps, int bos,
                           bool trim);

/* How batches run. SEQ2SEQ_RUN_BEST: parts on two threads where seq2seq_set_threads granted two
 * and the model builds twins, else parts one after the other. */
typedef enum Seq2SeqRun {
  SEQ2SEQ_RUN_WHOLE,     /* the whole batch at once, trimmed */
  SEQ2SEQ_RUN_PARTS,     /* sorted by length, cut in two where that pays, one part after the other */
  SEQ2SEQ_RUN_TWIN,      /* the same, the parts side by side on two threads (with a twin) */
  SEQ2SEQ_RUN_BEST,
} Seq2SeqRun;

typedef struct Seq2SeqExec Seq2SeqExec;
/* An executor for model m's batches of num_steps columns, decoder input starting with bos.
 * token_mean: d2l 1.0's loss (the mean over valid tokens), else d2l 0.17's (the summed
 * per-sequence loss). SEQ2SEQ_RUN_TWIN falls back to parts on this thread when the model has no
 * twin or is not on the CPU. Free with seq2seq_exec_free. */
Seq2SeqExec *seq2seq_exec_new(Seq2SeqModel *m, int num_steps, int bos, bool token_mean,
                              Seq2SeqRun run);
void seq2seq_exec_free(Seq2SeqExec *e);
/* Forward, loss and backward of batch b: the gradients of its loss are added into the model's
 * (the intermediate gradients are released as backward goes: ag_set_release_grads). The arena
 * may be rewound between parts, so b is gone after the call. Returns the summed per-sequence
 * loss (the book's metric). */
double seq2seq_exec_backward(Seq2SeqExec *e, const NmtBatch *b);
/* The kit's batched step, what train_seq2seq runs for each batch (a Seq2SeqStepFn with e):
 * zero the gradients, seq2seq_exec_backward (in s->training's mode, with e's token_mean), clip
 * to s->clip, s->opt's step. Returns the summed per-sequence loss. */
double seq2seq_exec_step(Seq2SeqExec *e, const NmtBatch *b, const Seq2SeqStep *s);
/* The twin's parameters (values shared with the model's, gradients its own), NULL without one. */
const ParamSet *seq2seq_exec_twin_params(const Seq2SeqExec *e);

/* ---------------------------------------------------------------- the student's step */

/* How the kit's batched step (e) compares with a student's step on one batch (step_check.c). */
typedef struct Seq2SeqStepCheck {
  bool agrees;
  bool stub;          /* the student's step returned NAN after a stub said so */
  int rows;           /* training pairs in the batch (0: none to check on) */
  double loss_diff;   /* |mine - kit| / |kit|, the returned losses */
  double grad_diff;   /* max |mine - kit| / max |kit| over the gradients after the step */
  double param_diff;  /* max |mine - Adam's step with mine's gradients| / lr, the parameters */
} Seq2SeqStepCheck;

/* One step of mine and one of the kit's step e (seq2seq_exec_step), each in eval mode from m's
 * parameters, with gradients left over (a step zeroes them), a fresh optimizer like s->opt,
 * on the first batch of a shuffle of d's training pairs by a generator of its own. Leaves the
 * parameters as they were, the gradients zero and g_rng where it was. */
Seq2SeqStepCheck seq2seq_step_compare(Seq2SeqModel *m, const NmtData *d, Seq2SeqExec *e,
                                      Seq2SeqStepFn mine, const Seq2SeqStep *s);
/* Whether train_seq2seq may run the kit's step e in place of mine: seq2seq_step_compare, said in
 * one line (where they agree, unless quiet). Where mine is a stub, says so and stops the program
 * (exercise_missing). */
bool seq2seq_step_use_kit(Seq2SeqModel *m, const NmtData *d, Seq2SeqExec *e, Seq2SeqStepFn mine,
                          const Seq2SeqStep *s, bool quiet);

#endif
