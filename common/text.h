/* text.h — the English–French pipeline of labs 03 and 06 (d2l "Machine Translation and the
 * Dataset"), with d2l's names: read_data_nmt, preprocess_nmt, tokenize_nmt, Vocab,
 * truncate_pad, build_array_nmt, load_data_nmt (here nmt_load), bleu.
 *
 * Two presets, each reproducing its book edition exactly (checked token by token against a
 * Python re-implementation, tests/golden/make_vocab_golden.py):
 *   d2l-0.17  600 examples (601 pairs: d2l stops when the line index exceeds num_examples),
 *             Vocab(min_freq 2, reserved <pad> <bos> <eos>): '<unk>' = 0, then the reserved
 *             tokens, then by descending frequency (ties in first-seen order) -> 184 English
 *             and 201 French tokens; each sentence + '<eos>', padded to num_steps 10.
 *   d2l-1.0   MTFraEng: lines 0..num_train+num_val (641 pairs: 512 train, 129 validation,
 *             because d2l 1.0 has the same off-by-one), empty tokens dropped, '<eos>' appended
 *             before pad_or_trim to num_steps 9, targets prefixed with '<bos>'; its Vocab
 *             (min_freq 2, no reserved tokens) is the *sorted* set of tokens -> 194 / 214.
 * Both yield the same batch contract: X (batch, num_steps) source ids, X_valid_len (batch),
 * Y (batch, num_steps) target ids ending in '<eos>' (no '<bos>'), Y_valid_len (batch); the
 * decoder input is '<bos>' followed by Y[:, :-1].
 *
 * Text is UTF-8 bytes; nothing here crashes on invalid UTF-8 (bad bytes pass through).
 * Implemented in three files: nmt.c (the data set), vocab.c (Vocab), bleu.c (BLEU). */
#ifndef AL_TEXT_H
#define AL_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "rng.h"
#include "tensor.h"

/* ---------------------------------------------------------------- reading and tokenizing */

/* Read fra-eng/fra.txt from fra-eng.zip, found by data_find (data_dir = --data-dir, may be
 * NULL). Line ends are normalized like Python's text mode ("\r\n", "\r" -> "\n"). Returns 0 and
 * a malloc'd NUL-terminated text, or -1 and a one-line message (a missing archive lists the
 * places searched and says to run `make data`). */
int read_data_nmt(const char *data_dir, char **text, size_t *len, char *err, size_t errlen);

/* d2l's preprocess_nmt: U+202F and U+00A0 become spaces, letters are lowercased like Python's
 * str.lower() (ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic), and a space is inserted
 * before , . ! ? when the previous character is not a space. Returns a malloc'd string. */
char *preprocess_nmt(const char *text, size_t len, size_t *out_len);

typedef struct TokenSeq {
  const char **tok; /* len tokens (NUL-terminated; point into the owning NmtPairs) */
  int len;
} TokenSeq;

typedef struct NmtPairs {
  int n;           /* pairs kept */
  TokenSeq *src;   /* (n) English sentences */
  TokenSeq *tgt;   /* (n) French sentences */
  int lines_read;  /* lines looked at */
  int skipped;     /* non-empty lines read that did not have exactly one tab */
  char *buf_;      /* token storage */
  const char **pool_;
} NmtPairs;

/* d2l 0.17 tokenize_nmt: split on '\n'; stop once the line index exceeds num_examples (<= 0:
 * all lines); keep lines with exactly two tab-separated parts; split each on single spaces
 * (so a double space yields an empty token, as Python's split(' ') does). */
NmtPairs tokenize_nmt(const char *text, int num_examples);
/* d2l 1.0 MTFraEng._tokenize: the same lines, but empty tokens are dropped and '<eos>' is
 * appended to every sentence. */
NmtPairs tokenize_mtfraeng(const char *text, int max_examples);
void nmt_pairs_free(NmtPairs *p);

/* ---------------------------------------------------------------- Vocab */

typedef struct Vocab {
  int size;            /* len(vocab) */
  char **idx_to_token; /* (size) */
  int *freq;           /* (size) corpus count of each token (0 for reserved/'<unk>' if unseen) */
  int unk;             /* index of '<unk>': 0 for Vocab_new, its sorted place for Vocab_sorted */
  int *slots_;         /* open-addressing hash table: token -> index */
  unsigned mask_;
} Vocab;

/* d2l 0.17 Vocab(tokens, min_freq, reserved_tokens): '<unk>' = 0, reserved tokens next, then
 * every token with count >= min_freq by descending count, ties in first-seen order. */
Vocab *Vocab_new(const TokenSeq *lines, int nlines, int min_freq, const char *const *reserved,
                 int nreserved);
/* d2l 1.0 Vocab: sorted(set(['<unk>'] + reserved + tokens with count >= min_freq)), sorted by
 * code point (= byte order of UTF-8). */
Vocab *Vocab_sorted(const TokenSeq *lines, int nlines, int min_freq,
                    const char *const *reserved, int nreserved);
void Vocab_free(Vocab *v);
int vocab_idx(const Vocab *v, const char *token);  /* vocab[token]; unknown -> v->unk */
const char *vocab_token(const Vocab *v, int idx);  /* vocab.to_tokens(idx); out of range -> "<unk>" */
/* ids[i] = vocab[tokens[i]] for a whole sentence. */
void vocab_lookup(const Vocab *v, const TokenSeq *s, int *ids);

/* ---------------------------------------------------------------- arrays */

/* d2l truncate_pad on ids: the first num_steps of line[0..len), padded with pad. */
void truncate_pad(const int *line, int len, int num_steps, int pad, int *out);
/* d2l build_array_nmt: each sentence's ids + '<eos>', truncate_pad to num_steps with '<pad>'.
 * array (n, num_steps); valid_len (n) = count of non-'<pad>' ids per row. */
void build_array_nmt(const TokenSeq *lines, int n, const Vocab *v, int num_steps, int *array,
                     int *valid_len);

/* ---------------------------------------------------------------- the data set */

typedef enum { NMT_D2L_017 = 0, NMT_D2L_10 = 1 } NmtPreset;

typedef struct NmtConfig {
  NmtPreset preset;
  int batch_size;
  int num_steps;
  int num_examples; /* d2l-0.17: read lines 0..num_examples */
  int num_train;    /* d2l-1.0: read lines 0..num_train+num_val; the first num_train pairs */
  int num_val;      /*          train, the rest validate */
} NmtConfig;

/* The book's settings for a preset name: NULL or "d2l-0.17" (batch 64, num_steps 10, 600
 * examples), "d2l-1.0" (batch 128, num_steps 9, 512 + 128). Returns -1 for another name. */
int nmt_preset(const char *name, NmtConfig *cfg);

typedef struct NmtData {
  NmtConfig cfg;
  int n;             /* pairs */
  int n_train;       /* pairs [0, n_train) train; [n_train, n) validate (d2l-1.0 only) */
  int num_steps;
  int *src;          /* (n, num_steps) source ids */
  int *src_valid;    /* (n) */
  int *tgt;          /* (n, num_steps) target ids, '<bos>' not included */
  int *tgt_valid;    /* (n) */
  Vocab *src_vocab, *tgt_vocab;
  NmtPairs pairs;    /* the tokenized sentences (for printing and evaluation) */
} NmtData;

/* Build the data set from raw fra.txt text (what read_data_nmt returns). NULL + err on error. */
NmtData *nmt_build(const char *raw, size_t len, const NmtConfig *cfg, char *err, size_t errlen);
/* read_data_nmt + nmt_build. NULL + err on error. */
NmtData *nmt_load(const NmtConfig *cfg, const char *data_dir, char *err, size_t errlen);
void nmt_data_free(NmtData *d);

/* A source sentence as the preset's predict step encodes it ("go ." -> ids + '<eos>', padded
 * to num_steps): d2l-0.17 lowercases and splits on ' '; d2l-1.0 runs _preprocess/_tokenize.
 * out (num_steps); returns the valid length (capped at num_steps). */
int nmt_encode_source(const NmtData *d, const char *sentence, int *out);
/* Join the tokens of ids[0..n) with spaces, stopping before the first '<eos>' (how the book
 * prints a translation). Returns the number of tokens written; buf is always terminated. */
int nmt_decode(const Vocab *v, const int *ids, int n, char *buf, size_t buflen);

/* ---------------------------------------------------------------- minibatches */

typedef struct NmtBatch {
  Tensor *X;           /* (batch, num_steps) source ids (floats holding integers) */
  Tensor *X_valid_len; /* (batch) */
  Tensor *Y;           /* (batch, num_steps) target ids */
  Tensor *Y_valid_len; /* (batch) */
  int size;            /* batch rows (the last batch of an epoch may be smaller) */
  long num_tokens;     /* valid target tokens, the sum of Y_valid_len (counted once, here) */
} NmtBatch;

typedef struct NmtIter {
  const NmtData *d;
  int *order;      /* pair indices of this split, in this epoch's order */
  int count, pos, batch_size;
  bool shuffle;
  Rng *rng;
} NmtIter;

/* Iterate the training pairs (train = true: shuffled each epoch with rng, NULL -> g_rng, like
 * d2l's load_array) or the validation pairs (in order). batch_size <= 0: the preset's. */
void nmt_iter_init(NmtIter *it, const NmtData *d, int batch_size, bool train, Rng *rng);
/* The next minibatch as arena tensors (call after ag_step_reset of the previous step). At the
 * end of an epoch returns false and rewinds (reshuffling), so the next call starts a new one. */
bool nmt_iter_next(NmtIter *it, NmtBatch *b);
/* The batch's tensors on device d (arena copies; on the host, the same tensors). */
NmtBatch nmt_batch_to(const NmtBatch *b, Device d);
int nmt_iter_num_batches(const NmtIter *it);
void nmt_iter_free(NmtIter *it);

/* ---------------------------------------------------------------- BLEU */

/* d2l's bleu: exp(min(0, 1 - len_label/len_pred)) * prod_{n=1..k} p_n^(1/2^n), p_n the
 * clipped n-gram precision; as in d2l 1.0, n stops at min(k, len_pred) (d2l 0.17 divided by
 * zero there). An empty prediction scores 0. */
double bleu(const char *const *pred, int len_pred, const char *const *label, int len_label,
            int k);
/* The same on space-separated strings, split like Python's split(' ') ("" has no tokens). */
double bleu_str(const char *pred_seq, const char *label_seq, int k);

/* Corpus BLEU-4 (Papineni et al.): clipped n-gram matches and n-gram counts summed over the
 * corpus, geometric mean of the four precisions, brevity penalty over the total lengths. */
typedef struct BleuStats {
  long match[4], total[4];
  long pred_len, label_len;
} BleuStats;
void bleu_stats_add(BleuStats *s, const char *const *pred, int len_pred,
                    const char *const *label, int len_label);
double bleu_stats_score(const BleuStats *s); /* 0 when some precision is 0 */
/* Corpus BLEU over n-grams 1..N (1 <= N <= 4): on small held-out sets p_4 is often 0, which
 * zeroes BLEU-4 and hides whether unigrams and bigrams improved; BLEU-2 still shows it. */
double bleu_stats_score_upto(const BleuStats *s, int N);
double corpus_bleu(const TokenSeq *preds, const TokenSeq *labels, int n);

#endif
