/* bleu.c — BLEU as d2l defines it (per sentence, with the brevity penalty and n-gram weights
 * 1/2^n), and the corpus statistics behind the held-out BLEU-4 (text.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "util.h"

/* ================================================================ BLEU */

static int ngram_eq(const char *const *a, const char *const *b, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(a[i], b[i]) != 0) return 0;
  return 1;
}

/* Clipped n-gram matches: each label n-gram can be matched once (d2l's label_subs counts). */
static long clipped_matches(const char *const *pred, int lp, const char *const *label, int ll,
                            int n, unsigned char *used) {
  int nl = ll - n + 1;
  if (nl <= 0 || lp - n + 1 <= 0) return 0;
  memset(used, 0, (size_t)nl);
  long m = 0;
  for (int i = 0; i + n <= lp; i++)
    for (int j = 0; j < nl; j++)
      if (!used[j] && ngram_eq(pred + i, label + j, n)) {
        used[j] = 1;
        m++;
        break;
      }
  return m;
}

double bleu(const char *const *pred, int len_pred, const char *const *label, int len_label,
            int k) {
  if (len_pred <= 0 || k < 1) return 0.0;
  if (k > len_pred) k = len_pred; /* d2l 1.0: n runs to min(k, len_pred) (0.17 divided by 0) */
  double score = exp(fmin(0.0, 1.0 - (double)len_label / (double)len_pred));
  unsigned char *used = xmalloc((size_t)(len_label > 0 ? len_label : 1));
  for (int n = 1; n <= k; n++) {
    long m = clipped_matches(pred, len_pred, label, len_label, n, used);
    score *= pow((double)m / (double)(len_pred - n + 1), pow(0.5, n));
  }
  free(used);
  return score;
}

/* Split s on single spaces like Python's split(' ') (empty string: no tokens). */
static int split_spaces(const char *s, char **copy, const char ***toks) {
  *copy = xstrdup(s);
  int n = *s ? 1 : 0;
  for (const char *q = s; *q; q++) n += *q == ' ';
  *toks = xmalloc(sizeof(char *) * (size_t)(n ? n : 1));
  if (!n) return 0;
  int k = 0;
  char *q = *copy;
  (*toks)[k++] = q;
  for (; *q; q++)
    if (*q == ' ') {
      *q = '\0';
      (*toks)[k++] = q + 1;
    }
  return n;
}

double bleu_str(const char *pred_seq, const char *label_seq, int k) {
  char *pc, *lc;
  const char **pt, **lt;
  int np = split_spaces(pred_seq, &pc, &pt), nl = split_spaces(label_seq, &lc, &lt);
  double s = bleu(pt, np, lt, nl, k);
  free(pc);
  free(lc);
  free(pt);
  free(lt);
  return s;
}

void bleu_stats_add(BleuStats *s, const char *const *pred, int len_pred,
                    const char *const *label, int len_label) {
  if (len_pred < 0) len_pred = 0;
  if (len_label < 0) len_label = 0;
  unsigned char *used = xmalloc((size_t)(len_label > 0 ? len_label : 1));
  for (int n = 1; n <= 4; n++) {
    s->match[n - 1] += clipped_matches(pred, len_pred, label, len_label, n, used);
    s->total[n - 1] += len_pred - n + 1 > 0 ? len_pred - n + 1 : 0;
  }
  free(used);
  s->pred_len += len_pred;
  s->label_len += len_label;
}

double bleu_stats_score_upto(const BleuStats *s, int N) {
  if (s->pred_len == 0 || N < 1 || N > 4) return 0.0;
  double logp = 0.0;
  for (int n = 0; n < N; n++) {
    if (s->total[n] == 0 || s->match[n] == 0) return 0.0;
    logp += log((double)s->match[n] / (double)s->total[n]) / N;
  }
  double bp = s->pred_len < s->label_len ? exp(1.0 - (double)s->label_len / (double)s->pred_len)
                                         : 1.0;
  return bp * exp(logp);
}

double bleu_stats_score(const BleuStats *s) { return bleu_stats_score_upto(s, 4); }

double corpus_bleu(const TokenSeq *preds, const TokenSeq *labels, int n) {
  BleuStats s;
  memset(&s, 0, sizeof s);
  for (int i = 0; i < n; i++)
    bleu_stats_add(&s, preds[i].tok, preds[i].len, labels[i].tok, labels[i].len);
  return bleu_stats_score(&s);
}
