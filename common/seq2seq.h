/* seq2seq.h — what labs 03 (Bahdanau) and 06 (Transformer) share: the encoder–decoder
 * interface and its loss (seq2seq_loss.c), the training loop (d2l's train_seq2seq,
 * seq2seq_train.c), greedy decoding, held-out BLEU and the common summary.json keys
 * (seq2seq_decode.c). Model code implements Seq2SeqModel; these files know nothing of GRUs or
 * heads. How a training batch is executed (in parts, trimmed, on two threads) is step.h's.
 * Token ids travel as float tensors holding integers (see ops.h). */
#ifndef AL_SEQ2SEQ_H
#define AL_SEQ2SEQ_H

#include <stdbool.h>
#include <stddef.h>

#include "summary.h"
#include "nn.h"
#include "rng.h"
#include "text.h"

struct Seq2SeqModel;
struct Seq2SeqPrediction;

/* ---------------------------------------------------------------- execution hooks */
/* (A first reading may skip to Seq2SeqModel, d2l's EncoderDecoder, below.) */

/* A part of a batch as common/step.c would run it (Seq2SeqExecHooks.part_cost). */
typedef struct Seq2SeqPartShape {
  int rows;
  int src_cols; /* source columns it runs: its longest source, or num_steps when the encoder
                   reads the padding (encoder_ignores_padding false) */
  int tgt_cols; /* target columns it runs: its longest target */
  double src_tokens, tgt_tokens; /* its valid source and target tokens */
} Seq2SeqPartShape;

/* Execution hooks: what common/step.c may use to run a training batch faster (trimmed, in parts,
 * on two threads). The training loop never reads them, and a model may leave them all zero. */
typedef struct Seq2SeqExecHooks {
  /* forward, told the target's valid lengths dec_valid_len (batch), so that the decoder may
   * skip the (row, position) pairs at or past a row's length, which the loss weighs 0; their
   * logits are then 0. Rows come sorted by target length, so a step-by-step decoder drops the
   * rows that have ended (lab03's). NULL: forward. */
  Tensor *(*forward_packed)(void *net, Tensor *X, Tensor *X_valid_len, Tensor *dec_X,
                            Tensor *dec_valid_len, bool training);
  /* true: the encoder's outputs at real source positions do not depend on the padding, and the
   * decoder reads them only through attention masked by X_valid_len (the Transformer), so the
   * source columns that are padding in every row of a batch may be dropped. false for the GRU
   * encoders: the book's decoder starts from the state after the padding. */
  bool encoder_ignores_padding;
  /* What running a part of this shape costs, forward and backward, in any unit (the step module
   * compares parts). NULL: 3 passes over rows x (src_cols + tgt_cols). */
  double (*part_cost)(const Seq2SeqPartShape *p);
  /* Build a twin: a second model like this one (the same constructor, so the same parameters in
   * the same order) whose parameters read this one's values (paramset_share_values) and keep
   * gradients of their own, so that a second thread can train part of a batch beside the first;
   * and free it. The step module builds it inside twin_build (step.h). NULL: no twins. */
  void (*twin_new)(const struct Seq2SeqModel *m, struct Seq2SeqModel *twin);
  void (*twin_free)(struct Seq2SeqModel *twin);
} Seq2SeqExecHooks;

/* ---------------------------------------------------------------- the model */

/* d2l's EncoderDecoder, as the trainer and the decoder call it. */
typedef struct Seq2SeqModel {
  const char *name;  /* "Seq2SeqAttentionDecoder (GRU)", "Transformer", ... */
  void *net;         /* the model's own struct */
  ParamSet *ps;      /* its parameters */
  /* Teacher-forced pass: X (batch, num_steps) source ids, X_valid_len (batch),
   * dec_X (batch, num_steps) = <bos> followed by Y[:, :-1]. Returns logits
   * (batch, num_steps, tgt_vocab). training switches dropout. */
  Tensor *(*forward)(void *net, Tensor *X, Tensor *X_valid_len, Tensor *dec_X, bool training);
  /* Greedy decoding, one sentence: encode X (1, num_steps) with X_valid_len (1) and keep what
   * the decoder needs inside net (arena tensors; the caller resets the arena afterwards). */
  void (*begin_decode)(void *net, Tensor *X, Tensor *X_valid_len);
  /* Feed one token at target position pos (0 for <bos>); returns logits (1, tgt_vocab). */
  Tensor *(*decode_step)(void *net, int token, int pos);
  /* Optional (may be NULL): the attention weights of the last decode_step, e.g. (1, 1, keys)
   * for Bahdanau. predict_seq2seq copies its `size` floats per step. */
  Tensor *(*step_attention)(void *net);
  /* Optional: greedy decoding's loop over the three above (d2l's predict_seq2seq after the
   * tokenizing; the signature of exercise 6.6, labs/lab06/lab06.h): lab06's Transformer sets
   * the student's. NULL: seq2seq_greedy_kit (lab03's). */
  int (*predict_greedy)(const struct Seq2SeqModel *m, Tensor *X, Tensor *X_valid_len, int bos,
                        int eos, int max_steps, bool save_attention,
                        struct Seq2SeqPrediction *out);
  Seq2SeqExecHooks exec; /* optional: how a training batch may run faster (step.h) */
} Seq2SeqModel;

/* ---------------------------------------------------------------- loss */

/* d2l 0.17's MaskedSoftmaxCELoss: pred (batch, num_steps, vocab) logits, label (batch,
 * num_steps) ids, valid_len (batch). Cross-entropy per token, tokens at j >= valid_len weighted
 * 0, then the mean over num_steps (padding included in the divisor, as the book does).
 * Returns (batch). */
Tensor *MaskedSoftmaxCELoss(Tensor *pred, Tensor *label, Tensor *valid_len);
/* The decoder input of teacher forcing: <bos> followed by Y[:, :-1]. Y (batch, num_steps);
 * returns (batch, num_steps) (arena, no gradient). */
Tensor *seq2seq_dec_input(const Tensor *Y, int bos);

/* ---------------------------------------------------------------- training */

/* Why labs 03 and 06 refuse --epochs 0 (said with the range error). */
#define SEQ2SEQ_EPOCHS_WHY \
  "training runs at least one epoch; to translate without training, --load a checkpoint " \
  "saved with --save"

/* What one step of train_seq2seq needs beside the model and the batch (Seq2SeqStepFn). */
typedef struct Seq2SeqStep {
  Adam *opt;        /* the optimizer over the model's parameters */
  int bos;          /* '<bos>': the decoder input is <bos> followed by Y[:, :-1] */
  float clip;       /* d2l's grad_clipping theta; <= 0: no clipping */
  bool token_mean;  /* false: d2l 0.17 (backward of the summed per-sequence losses);
                       true: d2l 1.0 (backward of the mean over the valid target tokens) */
  bool training;    /* net.train(): dropout on (the agreement check runs a step in eval mode) */
} Seq2SeqStep;

/* One step of d2l's train_seq2seq on batch b (on the model's device): zero the gradients,
 * forward with teacher forcing, the masked loss, backward, clip, the optimizer's step. Returns
 * the summed per-sequence loss l.sum() (the book's metric), NAN when it could not run (a stub).
 * Exercise 3.4 (seq2seq_train_step, labs/lab03/lab03.h) is one. */
typedef double (*Seq2SeqStepFn)(Seq2SeqModel *m, const NmtBatch *b, const Seq2SeqStep *s);

typedef struct Seq2SeqTrainConfig {
  int epochs;
  float lr;            /* Adam */
  float clip;          /* gradient-norm clip (the book: 1); <= 0 disables */
  bool token_mean;     /* false: d2l 0.17 (backward of the summed per-sequence losses);
                          true: d2l 1.0 (backward of the mean over valid tokens) */
  const char *device;  /* "cpu" (printed in the progress line) */
  const char *fig_base;/* animator figure path without extension (NULL: no figure) */
  int plot_every;      /* animator point every N epochs (the book: 10; <= 0 -> 10) */
  bool quiet;          /* no progress lines (tests) */
  Rng *rng;            /* minibatch shuffling; NULL -> g_rng */
  /* The student's step (exercise 3.4), passed by the chapter; NULL: the kit's batched step
   * (step.h). Given, the kit's batched step stands in for it only where the two agree on one
   * batch of this run's data (seq2seq_step_check, said in one line); else every step is it. */
  Seq2SeqStepFn step;
} Seq2SeqTrainConfig;

typedef struct Seq2SeqTrainResult {
  int epochs;
  double *epoch_losses;   /* (epochs) malloc'd: summed loss / valid tokens, as the book prints */
  double final_loss;      /* epoch_losses[epochs - 1] */
  double tokens_per_sec;  /* valid target tokens / seconds inside the training loop, all epochs
                             (data preparation, plotting and printing excluded) */
  double train_seconds;
  double first_epoch_seconds; /* the first epoch alone: it pays for the arenas' first touch */
  long tokens;            /* valid target tokens seen */
} Seq2SeqTrainResult;

/* d2l's train_seq2seq: Adam, MaskedSoftmaxCELoss, clip, a progress line per 10 epochs and a
 * closing line in the book's form ("loss 0.020, 51234.5 tokens/sec on cpu", the rate over all
 * epochs, with its definition) and the matrix products' GFLOP/s. Returns 0 (or -1 when the loss
 * became NaN/Inf, with a message on stderr). Free res with seq2seq_train_result_free. */
int train_seq2seq(Seq2SeqModel *m, const NmtData *d, const Seq2SeqTrainConfig *cfg,
                  Seq2SeqTrainResult *res);
void seq2seq_train_result_free(Seq2SeqTrainResult *res);

/* ---------------------------------------------------------------- prediction */

#define SEQ2SEQ_MAX_STEPS 64

typedef struct Seq2SeqPrediction {
  int ids[SEQ2SEQ_MAX_STEPS]; /* predicted target ids, '<eos>' not included */
  int n;
  char text[1024];            /* the tokens joined with spaces (the book's translation) */
  int steps;                  /* decode steps run (n, +1 when '<eos>' was produced) */
  float *attn;                /* (steps, attn_len) malloc'd weights per step, or NULL */
  int attn_len;
  int src_len;                /* source tokens + '<eos>' (the heatmap's key cut) */
} Seq2SeqPrediction;

/* d2l's predict_seq2seq: encode `src` (a raw English sentence, encoded like the preset does),
 * feed '<bos>', then the argmax token each step, stopping at '<eos>' or after num_steps steps
 * (max_steps > 0 overrides). Grad off, eval mode; rewinds the arena before returning (so call it
 * outside a training step). save_attention needs m->step_attention. Free with
 * seq2seq_prediction_free. */
void predict_seq2seq(Seq2SeqModel *m, const NmtData *d, const char *src, int max_steps,
                     bool save_attention, Seq2SeqPrediction *out);
/* The same from source ids (num_steps, padded) and their valid length. */
void predict_seq2seq_ids(Seq2SeqModel *m, const NmtData *d, const int *src_ids, int src_valid,
                         int max_steps, bool save_attention, Seq2SeqPrediction *out);
void seq2seq_prediction_free(Seq2SeqPrediction *p);
/* The kit's greedy loop, for the models that set no predict_greedy (lab03): exercise 6.6's
 * answer, so no test runner links it and a submission may not call it
 * (tests/grade/kit_answers.txt). */
int seq2seq_greedy_kit(const Seq2SeqModel *m, Tensor *X, Tensor *X_valid_len, int bos, int eos,
                       int max_steps, bool save_attention, Seq2SeqPrediction *out);

/* ---------------------------------------------------------------- held-out BLEU */

/* Corpus n-gram statistics of greedy translations of pairs the model never trained on
 * (precision p_n = match[n-1] / total[n-1]; bleu_stats_score gives the BLEU-4). d2l-0.17: the
 * `count` lines after the training range of fra.txt (re-read with read_data_nmt from data_dir);
 * d2l-1.0: the preset's validation pairs (count caps them). Unknown words map to '<unk>'.
 * Returns 0, *st and *npairs; -1 and err on a data error. */
int seq2seq_heldout_stats(Seq2SeqModel *m, const NmtData *d, const char *data_dir, int count,
                          BleuStats *st, int *npairs, char *err, size_t errlen);

/* The held-out scores both seq2seq labs print and write to summary.json. */
typedef struct Seq2SeqHeldout {
  int pairs;            /* 0: not measured */
  double bleu4, bleu2;  /* NAN when not measured */
  double precisions[4]; /* corpus n-gram precisions p_1..p_4 */
} Seq2SeqHeldout;
/* seq2seq_heldout_stats, printed as
 *   held-out corpus BLEU-4 on N unseen pairs: B4 (n-gram precisions p1 p2 p3 p4)
 *   held-out corpus BLEU-2: B2
 * or, on a data error, "held-out BLEU: not computed (why)" with *h left unmeasured. */
void seq2seq_heldout_report(Seq2SeqModel *m, const NmtData *d, const char *data_dir, int count,
                            Seq2SeqHeldout *h);
/* Record heldout_pairs, heldout_bleu2 and (when measured) heldout_ngram_precisions. */
void seq2seq_heldout_record(Summary *S, const Seq2SeqHeldout *h);

/* OpenMP threads for labs 03 and 06 (--threads): requested > 0 is used as given; 0 means the
 * preset's choice for the ops, one thread for d2l-0.17 and every core for d2l-1.0. With two
 * threads granted (or, by default, two cores or more and at most two threads for the ops),
 * the trainer runs the two parts of a cut batch on two threads, one on a twin of the model
 * (step.c, where this policy lives). Returns the number set (1 without OpenMP). */
int seq2seq_set_threads(int requested, bool d2l10);

/* ---------------------------------------------------------------- summary.json */

typedef struct Seq2SeqTranslation {
  const char *src, *ref; /* the English sentence and the book's French reference */
  const char *pred;      /* the model's translation */
  double bleu;           /* bleu(pred, ref, k=2) as the book prints it */
} Seq2SeqTranslation;

/* Record the summary.json keys both seq2seq labs share: preset, src_vocab_size,
 * tgt_vocab_size, num_pairs, epochs, epoch_losses, final_loss, tokens_per_sec, peak_rss_kb,
 * translations [{src, pred, ref, bleu}], mean_bleu, heldout_bleu4 (NAN -> null). */
void seq2seq_summary_record(Summary *S, const char *preset, const NmtData *d,
                            const Seq2SeqTrainResult *r, const Seq2SeqTranslation *tr, int ntr,
                            double heldout_bleu4);

#endif
