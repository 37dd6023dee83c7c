/* vocab.c — d2l's Vocab: token counts in a string hash set, the two index orders of the two
 * book editions (by frequency, or sorted), and token <-> index lookups (text.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "util.h"

/* ================================================================ string hash set */

static uint64_t hash_str(const char *s) { /* FNV-1a */
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Distinct strings numbered in first-seen order (a Counter's key order). Keys are borrowed. */
typedef struct {
  const char **keys;
  int *count, *first;
  int n, cap;
  int *slots; /* index + 1; 0 = empty */
  unsigned mask;
} StrSet;

static void strset_init(StrSet *s, int cap_hint) {
  memset(s, 0, sizeof *s);
  unsigned sz = 16;
  while (sz < (unsigned)cap_hint * 2u && sz < (1u << 30)) sz <<= 1;
  s->slots = xcalloc(sz, sizeof(int));
  s->mask = sz - 1;
}

static void strset_free(StrSet *s) {
  free(s->keys);
  free(s->count);
  free(s->first);
  free(s->slots);
}

static int *probe(int *slots, unsigned mask, const char *const *keys, const char *k) {
  unsigned i = (unsigned)hash_str(k) & mask;
  while (slots[i] && strcmp(keys[slots[i] - 1], k) != 0) i = (i + 1) & mask;
  return &slots[i];
}

/* Count one occurrence of k (seen at position pos); returns its id. */
static int strset_add(StrSet *s, const char *k, int pos) {
  int *slot = probe(s->slots, s->mask, s->keys, k);
  if (*slot) {
    s->count[*slot - 1]++;
    return *slot - 1;
  }
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 64;
    s->keys = xrealloc(s->keys, sizeof(char *) * (size_t)s->cap);
    s->count = xrealloc(s->count, sizeof(int) * (size_t)s->cap);
    s->first = xrealloc(s->first, sizeof(int) * (size_t)s->cap);
  }
  int id = s->n++;
  s->keys[id] = k;
  s->count[id] = 1;
  s->first[id] = pos;
  *slot = id + 1;
  if ((unsigned)s->n * 2u > s->mask + 1u) { /* keep the load under 1/2 */
    unsigned sz = (s->mask + 1u) * 2u;
    free(s->slots);
    s->slots = xcalloc(sz, sizeof(int));
    s->mask = sz - 1;
    for (int j = 0; j < s->n; j++) *probe(s->slots, s->mask, s->keys, s->keys[j]) = j + 1;
  }
  return id;
}

static int strset_find(const StrSet *s, const char *k) {
  int *slot = probe(s->slots, s->mask, s->keys, k);
  return *slot - 1;
}

static void count_tokens(StrSet *c, const TokenSeq *lines, int nlines) {
  long total = 0;
  for (int i = 0; i < nlines; i++) total += lines[i].len;
  strset_init(c, total < 1024 ? 1024 : (int)(total < 65536 ? total : 65536)); /* grows on demand */
  int pos = 0;
  for (int i = 0; i < nlines; i++)
    for (int j = 0; j < lines[i].len; j++) strset_add(c, lines[i].tok[j], pos++);
}

/* ================================================================ Vocab */

/* Make the Vocab from its token list (copies the strings) and index it; the last duplicate
 * wins the lookup, like Python's dict comprehension. */
static Vocab *vocab_make(const char *const *toks, int n, const StrSet *counts) {
  Vocab *v = xcalloc(1, sizeof *v);
  v->size = n;
  v->idx_to_token = xmalloc(sizeof(char *) * (size_t)(n ? n : 1));
  v->freq = xcalloc((size_t)(n ? n : 1), sizeof(int));
  for (int i = 0; i < n; i++) {
    v->idx_to_token[i] = xstrdup(toks[i]);
    int id = counts ? strset_find(counts, toks[i]) : -1;
    v->freq[i] = id >= 0 ? counts->count[id] : 0;
  }
  unsigned sz = 16;
  while (sz < (unsigned)n * 2u) sz <<= 1;
  v->slots_ = xcalloc(sz, sizeof(int));
  v->mask_ = sz - 1;
  for (int i = 0; i < n; i++)
    *probe(v->slots_, v->mask_, (const char *const *)v->idx_to_token, v->idx_to_token[i]) = i + 1;
  int *u = probe(v->slots_, v->mask_, (const char *const *)v->idx_to_token, "<unk>");
  v->unk = *u ? *u - 1 : 0;
  return v;
}

static const StrSet *g_sort_counts; /* qsort has no context argument */
static int by_freq_desc(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  int cx = g_sort_counts->count[x], cy = g_sort_counts->count[y];
  if (cx != cy) return cx > cy ? -1 : 1;
  return g_sort_counts->first[x] - g_sort_counts->first[y]; /* stable: first seen first */
}

Vocab *Vocab_new(const TokenSeq *lines, int nlines, int min_freq, const char *const *reserved,
                 int nreserved) {
  StrSet c;
  count_tokens(&c, lines, nlines);
  int *order = xmalloc(sizeof(int) * (size_t)(c.n ? c.n : 1));
  for (int i = 0; i < c.n; i++) order[i] = i;
  g_sort_counts = &c;
  qsort(order, (size_t)c.n, sizeof(int), by_freq_desc);
  const char **toks = xmalloc(sizeof(char *) * (size_t)(1 + nreserved + c.n));
  int n = 0;
  toks[n++] = "<unk>";
  for (int i = 0; i < nreserved; i++) toks[n++] = reserved[i];
  StrSet have; /* the tokens already in, for d2l's `if token not in self.token_to_idx` */
  strset_init(&have, n + c.n);
  for (int i = 0; i < n; i++) strset_add(&have, toks[i], i);
  for (int i = 0; i < c.n; i++) {
    int id = order[i];
    if (c.count[id] < min_freq) break;
    if (strset_find(&have, c.keys[id]) >= 0) continue;
    strset_add(&have, c.keys[id], n);
    toks[n++] = c.keys[id];
  }
  Vocab *v = vocab_make(toks, n, &c);
  strset_free(&have);
  free(toks);
  free(order);
  strset_free(&c);
  return v;
}

static int by_strcmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

Vocab *Vocab_sorted(const TokenSeq *lines, int nlines, int min_freq,
                    const char *const *reserved, int nreserved) {
  StrSet c;
  count_tokens(&c, lines, nlines);
  StrSet set;
  strset_init(&set, 1 + nreserved + c.n);
  strset_add(&set, "<unk>", 0);
  for (int i = 0; i < nreserved; i++) strset_add(&set, reserved[i], 0);
  for (int i = 0; i < c.n; i++)
    if (c.count[i] >= min_freq) strset_add(&set, c.keys[i], 0);
  qsort(set.keys, (size_t)set.n, sizeof(char *), by_strcmp); /* byte order = code point order */
  Vocab *v = vocab_make(set.keys, set.n, &c);
  strset_free(&set);
  strset_free(&c);
  return v;
}

void Vocab_free(Vocab *v) {
  if (!v) return;
  for (int i = 0; i < v->size; i++) free(v->idx_to_token[i]);
  free(v->idx_to_token);
  free(v->freq);
  free(v->slots_);
  free(v);
}

int vocab_idx(const Vocab *v, const char *token) {
  int *slot = probe(v->slots_, v->mask_, (const char *const *)v->idx_to_token, token);
  return *slot ? *slot - 1 : v->unk;
}

const char *vocab_token(const Vocab *v, int idx) {
  return idx >= 0 && idx < v->size ? v->idx_to_token[idx] : "<unk>";
}

void vocab_lookup(const Vocab *v, const TokenSeq *s, int *ids) {
  for (int i = 0; i < s->len; i++) ids[i] = vocab_idx(v, s->tok[i]);
}
