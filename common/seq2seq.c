/* seq2seq.c — the training loop, greedy decoding, held-out BLEU, checkpoints and summary of
 * the two sequence-to-sequence labs (03 and 06). See seq2seq.h. */
#include "seq2seq.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "data.h"
#include "gemm.h"
#include "plot.h"
#include "util.h"

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

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
  Tensor *w = tensor_new(2, label->shape); /* (batch, num_steps) */
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) w->data[b * T + t] = (float)t < valid_len->data[b] ? 1.0f : 0.0f;
  Tensor *l = t_cross_entropy(pred, label, w); /* (batch, num_steps) */
  return t_mean(l, 1, false);                  /* (batch) */
}

Tensor *seq2seq_dec_input(const Tensor *Y, int bos) {
  int B = Y->shape[0], T = Y->shape[1];
  Tensor *d = tensor_new(2, Y->shape); /* (batch, num_steps) */
  for (int b = 0; b < B; b++) {
    d->data[b * T] = (float)bos;
    for (int t = 1; t < T; t++) d->data[b * T + t] = Y->data[b * T + t - 1];
  }
  return d;
}

/* ================================================================ training */

int train_seq2seq(Seq2SeqModel *m, const NmtData *d, const Seq2SeqTrainConfig *cfg,
                  Seq2SeqTrainResult *res) {
  memset(res, 0, sizeof *res);
  int epochs = cfg->epochs > 0 ? cfg->epochs : 1;
  int every = cfg->plot_every > 0 ? cfg->plot_every : 10;
  const char *dev = cfg->device ? cfg->device : "cpu";
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
    anim = animator_new(cfg->fig_base, "epoch", legend, 1, every < epochs ? every : 1, epochs,
                        false, 0); /* drawn once, at the end: no gnuplot inside the timing */
  }
  int rc = 0;
  double total_time = 0, last_rate = 0, flops0 = gemm_flops();
  ag_set_release_grads(true); /* only the parameters' gradients are read after backward */
  long total_tokens = 0;
  for (int ep = 0; ep < epochs; ep++) {
    double t0 = now_seconds();
    double loss_sum = 0;
    long ntok = 0;
    NmtBatch b;
    while (nmt_iter_next(&it, &b)) {
      paramset_zero_grad(m->ps);
      Tensor *dec_X = seq2seq_dec_input(b.Y, bos);            /* (batch, num_steps) */
      Tensor *Y_hat = m->forward(m->net, b.X, b.X_valid_len, dec_X, true);
      Tensor *l = MaskedSoftmaxCELoss(Y_hat, b.Y, b.Y_valid_len); /* (batch) */
      long nt = 0;
      for (int i = 0; i < b.size; i++) nt += (long)b.Y_valid_len->data[i];
      Tensor *ls = t_sum_all(l);                              /* (1) */
      double lsum = ls->data[0];
      /* d2l 1.0 averages over the valid tokens: its l is mean CE over tokens, so the summed
       * per-sequence loss (each a mean over num_steps) is rescaled to that. */
      if (cfg->token_mean) ls = t_scale(ls, (float)d->num_steps / (float)(nt ? nt : 1));
      ag_backward(ls);
      if (cfg->clip > 0) clip_grad_norm(m->ps, cfg->clip);
      Adam_step(&opt);
      ag_step_reset();
      loss_sum += lsum; /* the book's metric.add(l.sum(), num_tokens) */
      ntok += nt;
    }
    double dt = now_seconds() - t0;
    total_time += dt;
    total_tokens += ntok;
    last_rate = dt > 0 ? ntok / dt : 0;
    /* d2l 0.17's metric: l.sum() / num_tokens, l the per-sequence mean over num_steps */
    double loss = ntok ? loss_sum / (double)ntok : NAN;
    res->epoch_losses[ep] = loss;
    if (!isfinite(loss)) {
      progress_done();
      fprintf(stderr, "error: train_seq2seq: the loss became %g at epoch %d; try a smaller "
              "learning rate (--lr) or check the model's forward pass\n", loss, ep + 1);
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
  if (!cfg->quiet) progress_done();
  if (anim) animator_close(anim);
  nmt_iter_free(&it);
  Adam_free(&opt);
  res->final_loss = res->epoch_losses[res->epochs - 1];
  res->train_seconds = total_time;
  res->tokens = total_tokens;
  res->tokens_per_sec = total_time > 0 ? total_tokens / total_time : 0;
  res->last_epoch_tokens_per_sec = last_rate;
  if (!cfg->quiet && rc == 0) {
    printf("loss %.3f, %.1f tokens/sec on %s\n", res->final_loss, res->last_epoch_tokens_per_sec,
           dev);
    /* the arithmetic rate of the matrix products (most of the work at the d2l-1.0 sizes) */
    double gf = (gemm_flops() - flops0) * 1e-9;
    if (total_time > 0)
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
  Tensor *X = tensor_new(2, (const int[]){1, T});       /* (1, num_steps) */
  Tensor *X_valid = tensor_new(1, (const int[]){1});    /* (1) */
  for (int j = 0; j < T; j++) X->data[j] = (float)src_ids[j];
  X_valid->data[0] = (float)src_valid;
  m->begin_decode(m->net, X, X_valid);
  int eos = vocab_idx(d->tgt_vocab, "<eos>");
  int tok = vocab_idx(d->tgt_vocab, "<bos>");
  bool attn = save_attention && m->step_attention;
  for (int s = 0; s < steps; s++) {
    Tensor *logits = m->decode_step(m->net, tok, s); /* (1, tgt_vocab) */
    int V = logits->shape[logits->ndim - 1], best = 0;
    for (int v = 1; v < V; v++)
      if (logits->data[v] > logits->data[best]) best = v;
    if (attn) { /* d2l saves the weights before checking for <eos>: the <eos> step is a row */
      Tensor *w = m->step_attention(m->net);
      if (w) {
        if (!out->attn) {
          out->attn_len = (int)w->size;
          out->attn = xcalloc((size_t)steps * (size_t)w->size, sizeof(float));
        }
        if (w->size == out->attn_len)
          memcpy(out->attn + (size_t)s * (size_t)out->attn_len, w->data,
                 sizeof(float) * (size_t)w->size);
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

void seq2seq_heldout_json(JsonW *w, const Seq2SeqHeldout *h) {
  json_kv_int(w, "heldout_pairs", h->pairs);
  json_kv_num(w, "heldout_bleu2", h->bleu2);
  if (h->pairs > 0) {
    json_key(w, "heldout_ngram_precisions");
    json_doubles(w, h->precisions, 4);
  }
}

/* ================================================================ checkpoints */

/* Layout (little-endian host order; the magic's version word rejects foreign byte orders):
 *   "ALCKPT\0\0"  u32 version  u32 tag_len  tag bytes  u32 count
 *   per tensor: u32 name_len, name, u32 ndim, i32 shape[ndim], f32 data[size]
 *   u32 crc32 of every byte above. */
#define CKPT_MAGIC "ALCKPT\0\0"
#define CKPT_VERSION 1u

typedef struct Buf {
  unsigned char *p;
  size_t n, cap;
} Buf;

static void buf_put(Buf *b, const void *src, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 256;
    b->p = xrealloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}
static void buf_u32(Buf *b, uint32_t v) { buf_put(b, &v, 4); }

int checkpoint_save(const ParamSet *ps, const char *tag, const char *path, char *err,
                    size_t errlen) {
  if (!ps || !path) return fail(err, errlen, "checkpoint_save: NULL argument");
  if (!tag) tag = "";
  Buf b = {0};
  buf_put(&b, CKPT_MAGIC, 8);
  buf_u32(&b, CKPT_VERSION);
  buf_u32(&b, (uint32_t)strlen(tag));
  buf_put(&b, tag, strlen(tag));
  buf_u32(&b, (uint32_t)ps->n);
  for (int i = 0; i < ps->n; i++) {
    const Tensor *t = ps->items[i];
    const char *nm = t->name ? t->name : "";
    buf_u32(&b, (uint32_t)strlen(nm));
    buf_put(&b, nm, strlen(nm));
    buf_u32(&b, (uint32_t)t->ndim);
    for (int k = 0; k < t->ndim; k++) buf_u32(&b, (uint32_t)t->shape[k]);
    float *host = xmalloc(sizeof(float) * (size_t)(t->size ? t->size : 1));
    tensor_to_host(t, host);
    buf_put(&b, host, sizeof(float) * (size_t)t->size);
    free(host);
  }
  buf_u32(&b, crc32_update(0, b.p, b.n));
  size_t tl = strlen(path) + 5;
  char *tmp = xmalloc(tl);
  snprintf(tmp, tl, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  int rc = 0;
  if (!f) {
    rc = fail(err, errlen, "checkpoint_save: cannot create %s: %s", tmp, strerror(errno));
  } else {
    bool ok = fwrite(b.p, 1, b.n, f) == b.n;
    ok = (fflush(f) == 0) && ok;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
      rc = fail(err, errlen, "checkpoint_save: writing %s failed: %s (disk full?)", tmp,
                strerror(errno));
      remove(tmp);
    } else if (rename(tmp, path) != 0) {
      rc = fail(err, errlen, "checkpoint_save: cannot rename %s to %s: %s", tmp, path,
                strerror(errno));
      remove(tmp);
    }
  }
  free(tmp);
  free(b.p);
  return rc;
}

/* A bounds-checked reader over the loaded file. */
typedef struct Rd {
  const unsigned char *p;
  size_t n, off;
} Rd;
static bool rd(Rd *r, void *dst, size_t n) {
  if (n > r->n - r->off) return false;
  memcpy(dst, r->p + r->off, n);
  r->off += n;
  return true;
}

int checkpoint_load(ParamSet *ps, const char *tag, const char *path, char *err, size_t errlen) {
  if (!ps || !path) return fail(err, errlen, "checkpoint_load: NULL argument");
  if (!tag) tag = "";
  FILE *f = fopen(path, "rb");
  if (!f) return fail(err, errlen, "checkpoint %s: cannot open: %s", path, strerror(errno));
  Buf b = {0};
  unsigned char chunk[65536];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (b.n + k > ((size_t)1 << 31)) {
      fclose(f);
      free(b.p);
      return fail(err, errlen, "checkpoint %s: larger than 2 GiB, not a lab checkpoint", path);
    }
    buf_put(&b, chunk, k);
  }
  bool rerr = ferror(f);
  fclose(f);
  int rc = -1;
  float **staged = xcalloc((size_t)(ps->n ? ps->n : 1), sizeof(float *));
  char name[512];
  Rd r = {b.p, b.n, 0};
  char magic[8];
  uint32_t ver, tlen, count, crc;
  if (rerr) {
    fail(err, errlen, "checkpoint %s: read error", path);
    goto out;
  }
  if (!rd(&r, magic, 8) || memcmp(magic, CKPT_MAGIC, 8) != 0) {
    fail(err, errlen, "checkpoint %s: not an attention-lab checkpoint (bad magic); was it "
         "written by --save?", path);
    goto out;
  }
  if (!rd(&r, &ver, 4)) goto truncated;
  if (ver != CKPT_VERSION) {
    fail(err, errlen, "checkpoint %s: format version %u, this build reads version %u", path,
         ver, CKPT_VERSION);
    goto out;
  }
  if (b.n < 8 + 4 + 4) goto truncated;
  memcpy(&crc, b.p + b.n - 4, 4);
  if (crc32_update(0, b.p, b.n - 4) != crc) {
    fail(err, errlen, "checkpoint %s: CRC-32 mismatch: the file is truncated or corrupted "
         "(%zu bytes); save it again", path, b.n);
    goto out;
  }
  r.n = b.n - 4; /* the CRC is not payload */
  if (!rd(&r, &tlen, 4) || tlen > r.n - r.off) goto truncated;
  if (tlen != strlen(tag) || memcmp(r.p + r.off, tag, tlen) != 0) {
    fail(err, errlen, "checkpoint %s: saved for model '%.*s', but this model is '%s'; use the "
         "same --preset and model flags as when it was saved (./labNN --help lists them)", path,
         (int)(tlen < 200 ? tlen : 200), (const char *)r.p + r.off, tag);
    goto out;
  }
  r.off += tlen;
  if (!rd(&r, &count, 4)) goto truncated;
  if ((int)count != ps->n) {
    fail(err, errlen, "checkpoint %s: holds %u tensors, the model has %d", path, count, ps->n);
    goto out;
  }
  for (int i = 0; i < ps->n; i++) {
    Tensor *t = ps->items[i];
    uint32_t nl, nd;
    if (!rd(&r, &nl, 4) || nl >= sizeof name || !rd(&r, name, nl)) goto truncated;
    name[nl] = '\0';
    if (strcmp(name, t->name ? t->name : "") != 0) {
      fail(err, errlen, "checkpoint %s: tensor %d is '%s', the model expects '%s'", path, i,
           name, t->name ? t->name : "");
      goto out;
    }
    if (!rd(&r, &nd, 4) || nd < 1 || nd > T_MAXDIM) goto truncated;
    int shape[T_MAXDIM];
    bool same = (int)nd == t->ndim;
    for (uint32_t d = 0; d < nd; d++) {
      uint32_t v;
      if (!rd(&r, &v, 4)) goto truncated;
      shape[d] = (int)v;
      if (same && shape[d] != t->shape[d]) same = false;
    }
    if (!same) {
      char st[64], sf[96];
      int o = snprintf(sf, sizeof sf, "(");
      for (uint32_t d = 0; d < nd && o < 80; d++)
        o += snprintf(sf + o, sizeof sf - (size_t)o, "%s%d", d ? ", " : "", shape[d]);
      snprintf(sf + o, sizeof sf - (size_t)o, ")");
      fail(err, errlen, "checkpoint %s: tensor '%s' has shape %s in the file but %s in the model",
           path, name, sf, shape_str(t, st, sizeof st));
      goto out;
    }
    staged[i] = xmalloc(sizeof(float) * (size_t)(t->size ? t->size : 1));
    if (!rd(&r, staged[i], sizeof(float) * (size_t)t->size)) goto truncated;
  }
  if (r.off != r.n) {
    fail(err, errlen, "checkpoint %s: %zu unexpected bytes after the last tensor", path,
         r.n - r.off);
    goto out;
  }
  for (int i = 0; i < ps->n; i++) /* everything checked out: now overwrite the model */
    memcpy(ps->items[i]->data, staged[i], sizeof(float) * (size_t)ps->items[i]->size);
  rc = 0;
  goto out;
truncated:
  fail(err, errlen, "checkpoint %s: truncated or malformed (%zu bytes); save it again", path, b.n);
out:
  for (int i = 0; i < ps->n; i++) free(staged[i]);
  free(staged);
  free(b.p);
  return rc;
}

/* ================================================================ summary.json */

int seq2seq_write_summary(const char *path, const char *preset, const NmtData *d,
                          const Seq2SeqTrainResult *r, const Seq2SeqTranslation *tr, int ntr,
                          double heldout_bleu4, void (*extra)(JsonW *w, void *ctx), void *ctx) {
  JsonW *w = json_open(path);
  if (!w) return -1;
  json_obj_begin(w);
  json_kv_str(w, "preset", preset ? preset : "d2l-0.17");
  json_kv_int(w, "src_vocab_size", d->src_vocab->size);
  json_kv_int(w, "tgt_vocab_size", d->tgt_vocab->size);
  json_kv_int(w, "num_pairs", d->n);
  json_kv_int(w, "epochs", r ? r->epochs : 0);
  json_key(w, "epoch_losses");
  json_doubles(w, r ? r->epoch_losses : NULL, r ? r->epochs : 0);
  json_kv_num(w, "final_loss", r && r->epochs ? r->final_loss : NAN);
  json_kv_num(w, "tokens_per_sec", r ? r->tokens_per_sec : NAN);
  json_kv_int(w, "peak_rss_kb", peak_rss_kb());
  json_key(w, "translations");
  json_arr_begin(w);
  double sum = 0;
  for (int i = 0; i < ntr; i++) {
    json_obj_begin(w);
    json_kv_str(w, "src", tr[i].src);
    json_kv_str(w, "pred", tr[i].pred);
    json_kv_str(w, "ref", tr[i].ref);
    json_kv_num(w, "bleu", tr[i].bleu);
    json_obj_end(w);
    sum += tr[i].bleu;
  }
  json_arr_end(w);
  json_kv_num(w, "mean_bleu", ntr ? sum / ntr : NAN);
  json_kv_num(w, "heldout_bleu4", heldout_bleu4);
  if (extra) extra(w, ctx);
  json_obj_end(w);
  return json_close(w) == 0 ? 0 : -1;
}
