/* seq2seq_decode.c — greedy decoding (d2l's predict_seq2seq), held-out BLEU and the summary of
 * the two sequence-to-sequence labs (03 and 06). See seq2seq.h. */
#include "seq2seq.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "data.h"
#include "exercise.h"
#include "util.h"

/* ================================================================ prediction */

void predict_seq2seq_ids(Seq2SeqModel *m, const NmtData *d, const int *src_ids, int src_valid,
                         int max_steps, bool save_attention, Seq2SeqPrediction *out) {
  memset(out, 0, sizeof *out);
  int T = d->num_steps;
  int steps = max_steps > 0 ? max_steps : T;
  if (steps > SEQ2SEQ_MAX_STEPS) steps = SEQ2SEQ_MAX_STEPS;
  bool was = ag_grad_enabled();
  ag_set_grad_enabled(false);
  const Device dv = m->ps->device;
  float *xh = arena_alloc(sizeof(float) * (size_t)T), xv = (float)src_valid;
  for (int j = 0; j < T; j++) xh[j] = (float)src_ids[j];
  Tensor *X = tensor_new_on(dv, 2, (const int[]){1, T});       /* (1, num_steps) */
  Tensor *X_valid = tensor_new_on(dv, 1, (const int[]){1});    /* (1) */
  tensor_copy_from_host(X, xh);
  tensor_copy_from_host(X_valid, &xv);
  int eos = vocab_idx(d->tgt_vocab, "<eos>"), bos = vocab_idx(d->tgt_vocab, "<bos>");
  /* the loop itself is the model's (exercise 6.6 for lab06) or the kit's */
  int rc = (m->predict_greedy ? m->predict_greedy : seq2seq_greedy_kit)(m, X, X_valid, bos, eos,
                                                                       steps, save_attention, out);
  if (rc != 0) exercise_missing("greedy decoding (predict_seq2seq)");
  if (out->n < 0 || out->n > steps || out->steps < out->n || out->steps > steps)
    die("predict_seq2seq: the greedy loop returned n = %d ids after %d steps; want 0 <= n <= "
        "steps <= max_steps = %d (labs/lab06/predict.c, exercise 6.6)",
        out->n, out->steps, steps);
  out->src_len = src_valid;
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
