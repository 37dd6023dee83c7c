/* nmt_input.c — what a user typed after --translate, checked before it is translated: the
 * words the model cannot know, and what does not fit into num_steps. See nmt_input.h. */
#include "nmt_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Append "'word'" to a comma-separated list, shortening it past cap. */
static void add_word(char *list, size_t cap, const char *w, size_t wn) {
  size_t used = strlen(list);
  if (used + 8 >= cap) {
    if (!strstr(list, ", ...")) snprintf(list + used, cap - used, ", ...");
    return;
  }
  snprintf(list + used, cap - used, "%s'%.*s'", used ? ", " : "", (int)(wn < 40 ? wn : 40), w);
}

int nmt_check_sentence(const NmtData *d, const char *sentence, char *warn, size_t warnlen,
                       char *err, size_t errlen) {
  if (warn && warnlen) warn[0] = '\0';
  if (err && errlen) err[0] = '\0';
  const Vocab *v = d->src_vocab;
  const int T = d->num_steps;
  char unknown[400] = "";
  int n_unknown = 0, n_tokens = 0, n_words = 0;
  if (d->cfg.preset == NMT_D2L_10) {
    /* the tokens nmt_encode_source makes (d2l 1.0: _preprocess, _tokenize, '<eos>' appended) */
    char *text = preprocess_nmt(sentence, strlen(sentence), NULL);
    for (char *q = text; *q; q++)
      if (*q == '\n' || *q == '\t') *q = ' ';
    size_t tl = strlen(text);
    char *line = xmalloc(tl + 2);
    memcpy(line, text, tl);
    memcpy(line + tl, "\t", 2);
    NmtPairs P = tokenize_mtfraeng(line, 0);
    if (P.n > 0) {
      n_tokens = P.src[0].len; /* '<eos>' included */
      for (int k = 0; k < P.src[0].len; k++) {
        const char *t = P.src[0].tok[k];
        if (strcmp(t, "<eos>") == 0) continue;
        n_words++;
        if (k < T && vocab_idx(v, t) == v->unk) { /* a word past num_steps is cut anyway */
          n_unknown++;
          add_word(unknown, sizeof unknown, t, strlen(t));
        }
      }
    }
    nmt_pairs_free(&P);
    free(line);
    free(text);
  } else {
    /* d2l 0.17: sentence.lower().split(' ') + ['<eos>']; split the original the same way (case
     * changes no space) and look each word up as nmt_encode_source does */
    int *ids = xmalloc(sizeof(int) * (size_t)T);
    nmt_encode_source(d, sentence, ids);
    const char *p = sentence;
    for (int k = 0;; k++) {
      const char *sp = strchr(p, ' ');
      size_t wn = sp ? (size_t)(sp - p) : strlen(p);
      n_tokens++;
      if (wn > 0) n_words++;
      /* only the first num_steps ids exist; a word past them is cut anyway (said below) */
      if (k < T && ids[k] == v->unk) {
        n_unknown++;
        if (wn) add_word(unknown, sizeof unknown, p, wn);
        else add_word(unknown, sizeof unknown, "", 0); /* '' from a double space */
      }
      if (!sp) break;
      p = sp + 1;
    }
    n_tokens++; /* '<eos>' */
    free(ids);
  }
  if (n_words == 0) {
    snprintf(err, errlen, "the sentence to translate has no words (got '%.60s')", sentence);
    return -1;
  }
  size_t used = 0;
  if (n_unknown && warn) {
    int k = snprintf(warn, warnlen,
                     "%d of %d words are not in the source vocabulary (%d tokens, built from the "
                     "training pairs) and are read as <unk>: %s",
                     n_unknown, n_words, v->size, unknown);
    used = k > 0 ? (size_t)k : 0;
  }
  if (n_tokens > T && warn && used + 1 < warnlen)
    snprintf(warn + used, warnlen - used,
             "%sthe sentence is %d tokens with <eos> but the model reads num_steps = %d: only "
             "the first %d are translated",
             used ? "; " : "", n_tokens, T, T);
  return 0;
}

void nmt_translate_flag(const NmtData *d, const char *sentence, int warn) {
  char w[1024], e[256];
  if (!sentence) return;
  if (nmt_check_sentence(d, sentence, w, sizeof w, e, sizeof e) != 0) {
    fflush(stdout);
    error_prefix(stderr, "");
    fprintf(stderr, "--translate: %s\n", e);
    exit(2);
  }
  if (warn && w[0]) {
    fflush(stdout);
    fprintf(stderr, "warning: %s--translate: %s\n", program_prefix(), w);
  }
}
