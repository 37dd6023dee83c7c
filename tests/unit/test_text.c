/* Tests of common/text.h (nmt.c, vocab.c, bleu.c): preprocessing, tokenizing, Vocab (both
 * editions), arrays, minibatches, BLEU; and the whole pipeline against the Python golden files
 * in tests/golden/ (when fra-eng.zip is available). */
#include <stdlib.h>
#include <unistd.h>

#include "../../common/data.h"
#include "../../common/text.h"
#include "../test.h"

static int seq_is(const TokenSeq *s, int n, const char *const *want) {
  if (s->len != n) return 0;
  for (int i = 0; i < n; i++)
    if (strcmp(s->tok[i], want[i]) != 0) return 0;
  return 1;
}

/* ---------------------------------------------------------------- preprocessing */

TEST(preprocess_nmt_like_d2l) {
  const char *in = "Go.\tVa !\nRun!\tCours\xe2\x80\xaf!\nWho?\tQui\xc2\xa0?\n"
                   "\xc3\x87" "a va, " "\xc3\x89" "T\xc3\x89.\t\xc3\x80 " "\xc3\x8a" "TRE...\n.Hi";
  size_t n;
  char *out = preprocess_nmt(in, strlen(in), &n);
  const char *want = "go .\tva !\nrun !\tcours !\nwho ?\tqui ?\n"
                     "\xc3\xa7" "a va , " "\xc3\xa9" "t\xc3\xa9 .\t\xc3\xa0 " "\xc3\xaa" "tre . . .\n .hi";
  CHECK(strcmp(out, want) == 0);
  CHECK_INT(n, strlen(want));
  free(out);
  /* the first character never gets a space; Python lowercases U+0130 to two code points */
  out = preprocess_nmt(".A\xc4\xb0\xd0\xa1", 6, &n);
  CHECK(strcmp(out, ".ai\xcc\x87\xd1\x81") == 0);
  free(out);
  /* bytes that are not UTF-8 pass through without harm */
  const char bad[] = "\xff\xfe" "A.\xc3\t\xe2\x80" "B!\xf0\x9f";
  out = preprocess_nmt(bad, sizeof bad - 1, &n);
  CHECK(strcmp(out, "\xff\xfe" "a .\xc3\t\xe2\x80" "b !\xf0\x9f") == 0);
  free(out);
}

/* ---------------------------------------------------------------- tokenizing */

TEST(tokenize_nmt_d2l017) {
  const char *text = "go .\tva !\n"
                     "a  b\tc\n"         /* double space: an empty token, like split(' ') */
                     "no tab here\n"      /* malformed */
                     "\n"                 /* blank: skipped, not counted */
                     "x\ty\tz\n"          /* three parts: malformed */
                     "hi .\tsalut !\n"    /* line 5 */
                     "late\ttard\n";      /* line 6 */
  NmtPairs p = tokenize_nmt(text, 5); /* d2l stops once i > num_examples: lines 0..5 */
  CHECK_INT(p.n, 3);
  CHECK_INT(p.lines_read, 6);
  CHECK_INT(p.skipped, 2);
  CHECK(seq_is(&p.src[0], 2, (const char *[]){"go", "."}));
  CHECK(seq_is(&p.tgt[0], 2, (const char *[]){"va", "!"}));
  CHECK(seq_is(&p.src[1], 3, (const char *[]){"a", "", "b"}));
  CHECK(seq_is(&p.tgt[2], 2, (const char *[]){"salut", "!"}));
  nmt_pairs_free(&p);
  p = tokenize_nmt(text, 0); /* all lines, including the empty one after the last '\n' */
  CHECK_INT(p.n, 4);
  CHECK_INT(p.lines_read, 8);
  nmt_pairs_free(&p);
  p = tokenize_nmt("", 0);
  CHECK_INT(p.n, 0);
  nmt_pairs_free(&p);
}

TEST(tokenize_mtfraeng_d2l10) {
  NmtPairs p = tokenize_mtfraeng("go .\tva !\n a  b \t\nbad\n", 0);
  CHECK_INT(p.n, 2);
  CHECK_INT(p.skipped, 1);
  CHECK(seq_is(&p.src[0], 3, (const char *[]){"go", ".", "<eos>"}));
  CHECK(seq_is(&p.src[1], 3, (const char *[]){"a", "b", "<eos>"})); /* empty tokens dropped */
  CHECK(seq_is(&p.tgt[1], 1, (const char *[]){"<eos>"}));
  nmt_pairs_free(&p);
}

/* ---------------------------------------------------------------- Vocab */

TEST(vocab_d2l017_order_and_lookup) {
  const char *l0[] = {"b", "a", "b", "<pad>"}, *l1[] = {"c", "a", "d", "e", "e"};
  TokenSeq lines[2] = {{l0, 4}, {l1, 5}};
  const char *res[] = {"<pad>", "<bos>", "<eos>"};
  /* counts: b 2, a 2, <pad> 1, c 1, d 1, e 2 -> by count, ties in first-seen order */
  Vocab *v = Vocab_new(lines, 2, 1, res, 3);
  const char *want[] = {"<unk>", "<pad>", "<bos>", "<eos>", "b", "a", "e", "c", "d"};
  CHECK_INT(v->size, 9);
  for (int i = 0; i < 9 && i < v->size; i++) CHECK(strcmp(vocab_token(v, i), want[i]) == 0);
  CHECK_INT(vocab_idx(v, "e"), 6);
  CHECK_INT(vocab_idx(v, "zebra"), 0);
  CHECK_INT(v->unk, 0);
  CHECK(strcmp(vocab_token(v, 99), "<unk>") == 0 && strcmp(vocab_token(v, -1), "<unk>") == 0);
  CHECK_INT(v->freq[4], 2);
  Vocab_free(v);
  v = Vocab_new(lines, 2, 2, res, 3); /* min_freq 2 drops c, d */
  CHECK_INT(v->size, 7);
  CHECK_INT(vocab_idx(v, "c"), 0);
  CHECK_INT(vocab_idx(v, "e"), 6);
  Vocab_free(v);
  v = Vocab_new(NULL, 0, 0, NULL, 0);
  CHECK_INT(v->size, 1);
  Vocab_free(v);
}

TEST(vocab_d2l10_sorted) {
  const char *l0[] = {"b", "a", "b", "<pad>", "<pad>"}, *l1[] = {"c", "a", "\xc3\xa0", "\xc3\xa0"};
  TokenSeq lines[2] = {{l0, 5}, {l1, 4}};
  Vocab *v = Vocab_sorted(lines, 2, 2, NULL, 0);
  const char *want[] = {"<pad>", "<unk>", "a", "b", "\xc3\xa0"}; /* code point order */
  CHECK_INT(v->size, 5);
  for (int i = 0; i < 5 && i < v->size; i++) CHECK(strcmp(vocab_token(v, i), want[i]) == 0);
  CHECK_INT(v->unk, 1);
  CHECK_INT(vocab_idx(v, "c"), 1); /* dropped (count 1) -> '<unk>' */
  Vocab_free(v);
}

TEST(vocab_many_tokens_hash_growth) {
  /* 5000 distinct tokens, each twice: exercises the hash table's growth */
  enum { N = 5000 };
  static char names[N][16];
  const char **toks = malloc(sizeof(char *) * 2 * N);
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "w%d", i);
    toks[i] = toks[N + i] = names[i];
  }
  TokenSeq line = {toks, 2 * N};
  Vocab *v = Vocab_new(&line, 1, 2, NULL, 0);
  CHECK_INT(v->size, N + 1);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += vocab_idx(v, names[i]) != i + 1;
  CHECK_INT(bad, 0);
  Vocab_free(v);
  free(toks);
}

/* ---------------------------------------------------------------- arrays */

TEST(truncate_pad_and_build_array) {
  int line[5] = {7, 8, 9, 10, 11}, out[4];
  truncate_pad(line, 2, 4, 1, out);
  CHECK(out[0] == 7 && out[1] == 8 && out[2] == 1 && out[3] == 1);
  truncate_pad(line, 5, 4, 1, out);
  CHECK(out[0] == 7 && out[3] == 10);
  const char *a[] = {"x", "y"}, *b[] = {"x", "y", "z"}, *c[] = {"y", "z", "x", "q", "x"};
  TokenSeq lines[3] = {{a, 2}, {b, 3}, {c, 5}};
  const char *res[] = {"<pad>", "<bos>", "<eos>"};
  Vocab *v = Vocab_new(lines, 3, 1, res, 3); /* x 4, y 3, z 2, q 1 -> 4 5 6 7 */
  int arr[3 * 4], valid[3];
  build_array_nmt(lines, 3, v, 4, arr, valid);
  int want[12] = {4, 5, 3, 1, /* x y <eos> <pad> */
                  4, 5, 6, 3, /* x y z <eos> */
                  5, 6, 4, 7}; /* truncated: no <eos> */
  for (int i = 0; i < 12; i++) CHECK_INT(arr[i], want[i]);
  CHECK(valid[0] == 3 && valid[1] == 4 && valid[2] == 4);
  Vocab_free(v);
}

/* A small fra.txt-like corpus for the data-set tests. */
static const char *k_corpus =
    "Go.\tVa !\nHi.\tSalut !\nRun!\tCours\xe2\x80\xaf!\nRun!\tCourez\xe2\x80\xaf!\n"
    "Who?\tQui ?\nWow!\tÇa alors\xe2\x80\xaf!\nI lost.\tJ'ai perdu.\nGo.\tVa !\n"
    "He's calm.\tIl est calme.\nI'm home.\tJe suis chez moi.\nGo now.\tVa maintenant.\n";

TEST(nmt_build_d2l017_small) {
  NmtConfig cfg;
  CHECK_INT(nmt_preset(NULL, &cfg), 0);
  CHECK(cfg.batch_size == 64 && cfg.num_steps == 10 && cfg.num_examples == 600);
  CHECK_INT(nmt_preset("d2l-2.0", &cfg), -1);
  nmt_preset("d2l-0.17", &cfg);
  cfg.num_steps = 4;
  cfg.batch_size = 3;
  char err[512];
  NmtData *d = nmt_build(k_corpus, strlen(k_corpus), &cfg, err, sizeof err);
  CHECK(d != NULL);
  if (!d) return;
  CHECK_INT(d->n, 11);
  CHECK_INT(d->n_train, 11);
  /* "go ." -> go . <eos> <pad> */
  int go = vocab_idx(d->src_vocab, "go"), dot = vocab_idx(d->src_vocab, ".");
  CHECK(go > 3 && dot > 3);
  CHECK(d->src[0] == go && d->src[1] == dot && d->src[2] == 3 && d->src[3] == 1);
  CHECK_INT(d->src_valid[0], 3);
  /* "je suis chez moi ." is 5 tokens: truncated to 4, no <eos>, valid 4 */
  CHECK_INT(d->tgt_valid[9], 4);
  CHECK(d->tgt[9 * 4 + 3] != 3 && d->tgt[9 * 4 + 3] != 1);
  /* the narrow no-break space became a space: "cours !" */
  CHECK(seq_is(&d->pairs.tgt[2], 2, (const char *[]){"cours", "!"}));
  int ids[4];
  CHECK_INT(nmt_encode_source(d, "Go .", ids), 3);
  CHECK(ids[0] == go && ids[1] == dot && ids[2] == 3 && ids[3] == 1);
  CHECK_INT(nmt_encode_source(d, "i lost . again and again", ids), 4); /* capped at num_steps */
  char buf[64];
  int tids[5] = {vocab_idx(d->tgt_vocab, "va"), vocab_idx(d->tgt_vocab, "!"), 3, 7, 7};
  CHECK_INT(nmt_decode(d->tgt_vocab, tids, 5, buf, sizeof buf), 2);
  CHECK(strcmp(buf, "va !") == 0);
  CHECK_INT(nmt_decode(d->tgt_vocab, tids, 5, buf, 4), 1); /* no half tokens when short */
  CHECK(strcmp(buf, "va") == 0);
  nmt_data_free(d);
}

TEST(nmt_build_d2l10_small) {
  NmtConfig cfg;
  CHECK_INT(nmt_preset("d2l-1.0", &cfg), 0);
  CHECK(cfg.batch_size == 128 && cfg.num_steps == 9 && cfg.num_train == 512 && cfg.num_val == 128);
  cfg.num_steps = 4;
  cfg.num_train = 6;
  cfg.num_val = 3; /* lines 0..9 -> 10 pairs: 6 train, 4 validation (d2l's i > max stop) */
  char err[512];
  NmtData *d = nmt_build(k_corpus, strlen(k_corpus), &cfg, err, sizeof err);
  CHECK(d != NULL);
  if (!d) return;
  CHECK_INT(d->n, 10);
  CHECK_INT(d->n_train, 6);
  const Vocab *sv = d->src_vocab, *tv = d->tgt_vocab;
  /* sorted vocab: '!' < '.' < '<eos>' < '<pad>' < '<unk>' < letters */
  CHECK(strcmp(vocab_token(sv, 0), "!") == 0);
  int pad = vocab_idx(sv, "<pad>"), eos = vocab_idx(sv, "<eos>");
  CHECK(pad != sv->unk && eos != sv->unk);
  /* "go ." -> go . <eos> <pad>, valid 3 */
  CHECK(d->src[0] == vocab_idx(sv, "go") && d->src[2] == eos && d->src[3] == pad);
  CHECK_INT(d->src_valid[0], 3);
  /* labels: "va ! <eos> <pad>" (the '<bos>' row prefix is dropped) */
  CHECK(d->tgt[0] == vocab_idx(tv, "va") && d->tgt[2] == vocab_idx(tv, "<eos>"));
  CHECK(d->tgt[3] == vocab_idx(tv, "<pad>"));
  CHECK_INT(d->tgt_valid[0], 3);
  /* '<bos>' is counted in the target vocabulary (it starts every row) */
  CHECK(vocab_idx(tv, "<bos>") != tv->unk);
  int ids[4];
  CHECK_INT(nmt_encode_source(d, "Go.", ids), 3);
  CHECK(ids[0] == d->src[0] && ids[1] == d->src[1] && ids[2] == eos && ids[3] == pad);
  nmt_data_free(d);
}

TEST(nmt_build_errors_and_garbage) {
  NmtConfig cfg;
  nmt_preset(NULL, &cfg);
  char err[512] = "";
  const char *junk = "no tabs at all\nstill none\n";
  CHECK(nmt_build(junk, strlen(junk), &cfg, err, sizeof err) == NULL);
  CHECK_STR_CONTAINS(err, "no sentence pairs");
  cfg.num_steps = 0;
  CHECK(nmt_build(k_corpus, strlen(k_corpus), &cfg, err, sizeof err) == NULL);
  CHECK_STR_CONTAINS(err, "num_steps");
  /* random bytes (tabs, newlines, invalid UTF-8): no crash in either edition */
  Rng r;
  rng_init(&r, 99);
  char *buf = malloc(4001);
  for (int it = 0; it < 20; it++) {
    for (int i = 0; i < 4000; i++) {
      int x = rng_int(&r, 10);
      buf[i] = x == 0 ? '\t' : x == 1 ? '\n' : x == 2 ? ' ' : (char)(1 + rng_int(&r, 255));
    }
    buf[4000] = '\0';
    for (int preset = 0; preset < 2; preset++) {
      nmt_preset(preset ? "d2l-1.0" : NULL, &cfg);
      NmtData *d = nmt_build(buf, 4000, &cfg, err, sizeof err);
      if (d) {
        int ids[10];
        nmt_encode_source(d, buf + 100, ids);
        nmt_data_free(d);
      }
    }
  }
  free(buf);
}

TEST(read_data_nmt_missing_archive) {
  char cwd[4096];
  CHECK(getcwd(cwd, sizeof cwd) != NULL);
  const char *old = getenv("D2L_DATA_DIR");
  char *saved = old ? strdup(old) : NULL;
  unsetenv("D2L_DATA_DIR");
  CHECK(chdir("/") == 0); /* so ./data and ../shared/data find nothing */
  char *text = NULL;
  size_t len = 0;
  char err[1536] = "";
  CHECK_INT(read_data_nmt("/nonexistent-dir", &text, &len, err, sizeof err), -1);
  CHECK(text == NULL);
  CHECK_STR_CONTAINS(err, "fra-eng.zip not found");
  CHECK_STR_CONTAINS(err, "/nonexistent-dir/fra-eng.zip");
  CHECK_STR_CONTAINS(err, "../shared/data/fra-eng.zip");
  CHECK_STR_CONTAINS(err, "make data");
  CHECK(!strchr(err, '\n'));
  CHECK(chdir(cwd) == 0);
  if (saved) setenv("D2L_DATA_DIR", saved, 1);
  free(saved);
}

/* ---------------------------------------------------------------- minibatches */

TEST(nmt_iter_covers_each_pair_once) {
  NmtConfig cfg;
  nmt_preset(NULL, &cfg);
  cfg.num_steps = 5;
  char err[256];
  NmtData *d = nmt_build(k_corpus, strlen(k_corpus), &cfg, err, sizeof err);
  if (!d) {
    CHECK(d != NULL);
    return;
  }
  Rng r;
  rng_init(&r, 5);
  NmtIter it;
  nmt_iter_init(&it, d, 4, true, &r);
  CHECK_INT(nmt_iter_num_batches(&it), 3);
  int first_order[2][11];
  for (int epoch = 0; epoch < 2; epoch++) {
    int seen[11] = {0}, rows = 0, batches = 0;
    NmtBatch b;
    while (nmt_iter_next(&it, &b)) {
      CHECK(b.X->ndim == 2 && b.X->shape[0] == b.size && b.X->shape[1] == 5);
      CHECK(b.Y->ndim == 2 && b.Y->shape[1] == 5);
      CHECK(b.X_valid_len->ndim == 1 && b.X_valid_len->shape[0] == b.size);
      CHECK_INT(b.size, batches < 2 ? 4 : 3); /* the last batch is smaller */
      for (int i = 0; i < b.size; i++) {
        /* find which pair this row is, by its source row and valid length */
        int match = -1;
        for (int p = 0; p < d->n && match < 0; p++) {
          int same = (int)b.X_valid_len->data[i] == d->src_valid[p] &&
                     (int)b.Y_valid_len->data[i] == d->tgt_valid[p];
          for (int j = 0; j < 5 && same; j++)
            same = (int)b.X->data[i * 5 + j] == d->src[p * 5 + j] &&
                   (int)b.Y->data[i * 5 + j] == d->tgt[p * 5 + j];
          if (same && !seen[p]) match = p;
        }
        CHECK(match >= 0);
        if (match >= 0) seen[match] = 1;
        if (rows < 11) first_order[epoch][rows] = match;
        rows++;
      }
      batches++;
      ag_step_reset();
    }
    CHECK_INT(rows, 11);
    CHECK_INT(batches, 3);
  }
  /* a new epoch is a new permutation */
  CHECK(memcmp(first_order[0], first_order[1], sizeof first_order[0]) != 0);
  nmt_iter_free(&it);
  /* d2l-0.17 has no validation split */
  nmt_iter_init(&it, d, 4, false, NULL);
  NmtBatch b;
  CHECK(!nmt_iter_next(&it, &b));
  nmt_iter_free(&it);
  nmt_data_free(d);
}

TEST(nmt_iter_validation_in_order) {
  NmtConfig cfg;
  nmt_preset("d2l-1.0", &cfg);
  cfg.num_train = 6;
  cfg.num_val = 3;
  char err[256];
  NmtData *d = nmt_build(k_corpus, strlen(k_corpus), &cfg, err, sizeof err);
  if (!d) {
    CHECK(d != NULL);
    return;
  }
  NmtIter it;
  nmt_iter_init(&it, d, 0, false, NULL); /* batch 0: the preset's (128) */
  NmtBatch b;
  CHECK(nmt_iter_next(&it, &b));
  CHECK_INT(b.size, 4);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 9; j++) CHECK_INT((int)b.X->data[i * 9 + j], d->src[(6 + i) * 9 + j]);
  CHECK(!nmt_iter_next(&it, &b));
  nmt_iter_free(&it);
  nmt_data_free(d);
}

/* ---------------------------------------------------------------- BLEU */

TEST(bleu_d2l_examples) {
  /* the book's "he's calm ." -> "il est paresseux ." line prints bleu 0.658:
   * p1 = 3/4, p2 = 1/3, no brevity penalty */
  double want = sqrt(0.75) * pow(1.0 / 3.0, 0.25);
  CHECK_NEAR(bleu_str("il est paresseux .", "il est calme .", 2), want, 1e-12); /* same formula: rounding only */
  CHECK_NEAR(bleu_str("il est paresseux .", "il est calme .", 2), 0.658, 5e-4); /* 3 printed digits */
  /* tolerances of 1e-12 below: closed forms in double, differing by rounding only */
  CHECK_NEAR(bleu_str("va !", "va !", 2), 1.0, 1e-12);
  CHECK_NEAR(bleu_str("je suis chez moi .", "je suis chez moi .", 4), 1.0, 1e-12);
  /* brevity: exp(1 - 4/2) */
  CHECK_NEAR(bleu_str("il est", "il est calme .", 2), exp(-1.0), 1e-12);
  /* clipping: "le" matches once -> p1 = 1/4, no penalty (pred longer) */
  CHECK_NEAR(bleu_str("le le le le", "le chat", 1), 0.5, 1e-12);
  /* an empty prediction scores 0; one shorter than k uses n <= len_pred (d2l 1.0):
   * exp(1 - 2/1) * 1 */
  CHECK(bleu_str("", "il est calme .", 2) == 0.0);
  CHECK(bleu(NULL, 0, NULL, 0, 2) == 0.0);
  CHECK_NEAR(bleu_str("va", "va !", 2), exp(-1.0), 1e-12);
  CHECK(bleu_str("x y", "", 2) == 0.0);
  CHECK(bleu_str("a b", "c d", 2) == 0.0);
}

TEST(corpus_bleu_known_values) {
  const char *p0[] = {"a", "b", "c", "d", "e"}, *l0[] = {"a", "b", "c", "d", "f"};
  TokenSeq P[2] = {{p0, 5}, {l0, 5}}, L[2] = {{l0, 5}, {l0, 5}};
  /* tolerances of 1e-12: closed forms in double, differing by rounding only */
  /* identical corpora score 1 */
  CHECK_NEAR(corpus_bleu(L, L, 2), 1.0, 1e-12);
  /* one sentence: p = 4/5, 3/4, 2/3, 1/2 -> (0.2)^(1/4) */
  CHECK_NEAR(corpus_bleu(P, L, 1), pow(0.2, 0.25), 1e-12);
  /* two sentences: counts add before the precisions are formed */
  CHECK_NEAR(corpus_bleu(P, L, 2), pow((9.0 / 10) * (7.0 / 8) * (5.0 / 6) * (3.0 / 4), 0.25),
             1e-12);
  /* brevity over total lengths: 4 predicted tokens vs 5 */
  TokenSeq S[1] = {{l0, 4}};
  CHECK_NEAR(corpus_bleu(S, L, 1), exp(1.0 - 5.0 / 4.0), 1e-12);
  /* no 4-gram match -> 0; empty corpus -> 0 */
  TokenSeq Z[1] = {{p0, 3}}, Zl[1] = {{l0 + 2, 3}};
  CHECK(corpus_bleu(Z, Zl, 1) == 0.0);
  CHECK(corpus_bleu(NULL, NULL, 0) == 0.0);
  BleuStats s;
  memset(&s, 0, sizeof s);
  bleu_stats_add(&s, NULL, 0, l0, 5);
  CHECK(bleu_stats_score(&s) == 0.0);
  /* BLEU-2: one sentence, p1 = 4/5, p2 = 3/4 -> sqrt(0.6); a corpus without 4-gram matches
   * scores 0 at N = 4 but not at N = 2 (c d e vs c d f: p1 = 2/3, p2 = 1/2) */
  memset(&s, 0, sizeof s);
  bleu_stats_add(&s, p0, 5, l0, 5);
  CHECK_NEAR(bleu_stats_score_upto(&s, 2), sqrt(0.6), 1e-12);
  CHECK_NEAR(bleu_stats_score_upto(&s, 4), bleu_stats_score(&s), 1e-15);
  memset(&s, 0, sizeof s);
  bleu_stats_add(&s, p0 + 2, 3, l0 + 2, 3);
  CHECK(bleu_stats_score(&s) == 0.0);
  CHECK_NEAR(bleu_stats_score_upto(&s, 2), sqrt((2.0 / 3) * (1.0 / 2)), 1e-12);
  CHECK(bleu_stats_score_upto(&s, 0) == 0.0 && bleu_stats_score_upto(&s, 5) == 0.0);
}

/* ---------------------------------------------------------------- golden (real data) */

typedef struct {
  char **lines;
  int n;
} Golden;

static int golden_load(const char *path, Golden *g) {
  memset(g, 0, sizeof *g);
  unsigned char *buf;
  size_t len;
  char err[256];
  if (gz_read_all(path, &buf, &len, err, sizeof err) != 0) return -1;
  int cap = 0;
  char *s = (char *)buf;
  for (;;) {
    char *nl = strchr(s, '\n');
    if (!nl) break;
    *nl = '\0';
    if (g->n == cap) g->lines = realloc(g->lines, sizeof(char *) * (size_t)(cap = cap * 2 + 256));
    g->lines[g->n++] = strdup(s);
    s = nl + 1;
  }
  free(buf);
  return 0;
}

static void golden_free(Golden *g) {
  for (int i = 0; i < g->n; i++) free(g->lines[i]);
  free(g->lines);
}

/* The value after "key " on the line starting with it (NULL if absent). */
static const char *golden_get(const Golden *g, const char *key) {
  size_t k = strlen(key);
  for (int i = 0; i < g->n; i++)
    if (strncmp(g->lines[i], key, k) == 0 && g->lines[i][k] == ' ') return g->lines[i] + k + 1;
  return NULL;
}

/* Compare a Vocab with the "<prefix>_token" lines and the arrays with "<prefix>_row" lines. */
static void golden_check_side(const Golden *g, const char *side, const Vocab *v, const int *arr,
                              const int *valid, int n, int width, int row_offset) {
  char key[32];
  snprintf(key, sizeof key, "%s_size", side);
  const char *sz = golden_get(g, key);
  CHECK(sz != NULL);
  if (!sz) return;
  CHECK_INT(v->size, atoi(sz));
  snprintf(key, sizeof key, "%s_token ", side);
  size_t kl = strlen(key);
  int idx = 0, bad = 0;
  for (int i = 0; i < g->n; i++) {
    if (strncmp(g->lines[i], key, kl) != 0) continue;
    if (strcmp(vocab_token(v, idx), g->lines[i] + kl) != 0 || vocab_idx(v, g->lines[i] + kl) != idx)
      if (bad++ < 3)
        test_fail(__FILE__, __LINE__, "%s token %d: '%s', golden '%s'", side, idx,
                  vocab_token(v, idx), g->lines[i] + kl);
    idx++;
  }
  CHECK_INT(idx, v->size);
  snprintf(key, sizeof key, "%s_row ", side);
  kl = strlen(key);
  int row = 0;
  for (int i = 0; i < g->n; i++) {
    if (strncmp(g->lines[i], key, kl) != 0) continue;
    char *p = g->lines[i] + kl;
    for (int j = 0; j < width + row_offset; j++) {
      long x = strtol(p, &p, 10);
      if (j < row_offset) continue; /* d2l-1.0 target rows start with '<bos>' */
      if (row < n && x != arr[(size_t)row * (size_t)width + (size_t)(j - row_offset)])
        if (bad++ < 3) test_fail(__FILE__, __LINE__, "%s row %d col %d: %ld in golden", side, row, j, x);
    }
    row++;
  }
  CHECK_INT(row, n);
  if (valid) {
    snprintf(key, sizeof key, "%s_valid", side);
    const char *vl = golden_get(g, key);
    CHECK(vl != NULL);
    char *p = (char *)vl;
    for (int r = 0; vl && r < n; r++)
      if (strtol(p, &p, 10) != valid[r] && bad++ < 3)
        test_fail(__FILE__, __LINE__, "%s valid_len %d differs", side, r);
  }
  CHECK_INT(bad, 0);
}

static char *real_text(size_t *len) {
  char *text;
  char err[1536];
  if (read_data_nmt(NULL, &text, len, err, sizeof err) != 0) {
    test_skip("%s", err);
    return NULL;
  }
  return text;
}

TEST(golden_d2l017_classic_vocab) {
  Golden g;
  CHECK_INT(golden_load("tests/golden/vocab_classic.txt", &g), 0);
  size_t len;
  char *raw = real_text(&len);
  if (!raw) {
    golden_free(&g);
    return;
  }
  /* the whole preprocessed text, byte for byte (CRC-32), as Python produces it */
  size_t plen;
  char *pre = preprocess_nmt(raw, len, &plen);
  const char *b = golden_get(&g, "preprocessed_bytes"), *c = golden_get(&g, "preprocessed_crc32");
  CHECK(b && c);
  if (b && c) {
    CHECK_INT(plen, atol(b));
    CHECK(crc32_update(0, pre, plen) == (uint32_t)strtoul(c, NULL, 16));
  }
  /* 1000-example token counts */
  NmtPairs p = tokenize_nmt(pre, 1000);
  long ns = 0, nt = 0;
  for (int i = 0; i < p.n; i++) ns += p.src[i].len, nt += p.tgt[i].len;
  char line[128];
  snprintf(line, sizeof line, "%d src_tokens_1000 %ld tgt_tokens_1000 %ld", p.n, ns, nt);
  const char *l1000 = golden_get(&g, "pairs_1000");
  CHECK(l1000 && strcmp(l1000, line) == 0);
  nmt_pairs_free(&p);
  /* the book's full-corpus vocabulary: 10012 English tokens, vocab['go'] == 47 */
  p = tokenize_nmt(pre, 0);
  const char *res[] = {"<pad>", "<bos>", "<eos>"};
  Vocab *sv = Vocab_new(p.src, p.n, 2, res, 3), *tv = Vocab_new(p.tgt, p.n, 2, res, 3);
  snprintf(line, sizeof line, "%d full_src_size %d full_tgt_size %d full_src_go %d", p.n, sv->size,
           tv->size, vocab_idx(sv, "go"));
  const char *lfull = golden_get(&g, "full_pairs");
  CHECK(lfull && strcmp(lfull, line) == 0);
  CHECK_INT(sv->size, 10012);
  CHECK_INT(vocab_idx(sv, "go"), 47);
  const char *head = golden_get(&g, "full_src_head");
  char joined[1024] = "";
  for (int i = 0; i < 40; i++)
    snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", i ? " " : "",
             vocab_token(sv, i));
  CHECK(head && strcmp(head, joined) == 0);
  Vocab_free(sv);
  Vocab_free(tv);
  nmt_pairs_free(&p);
  free(pre);
  /* the classic data set: 601 pairs, 184 / 201 tokens, every token and every array entry */
  NmtConfig cfg;
  nmt_preset("d2l-0.17", &cfg);
  char err[512];
  NmtData *d = nmt_build(raw, len, &cfg, err, sizeof err);
  CHECK(d != NULL);
  if (d) {
    CHECK_INT(d->n, 601);
    CHECK_INT(d->src_vocab->size, 184);
    CHECK_INT(d->tgt_vocab->size, 201);
    golden_check_side(&g, "src", d->src_vocab, d->src, d->src_valid, d->n, 10, 0);
    golden_check_side(&g, "tgt", d->tgt_vocab, d->tgt, d->tgt_valid, d->n, 10, 0);
    nmt_data_free(d);
  }
  free(raw);
  golden_free(&g);
}

TEST(golden_d2l10_mtfraeng_vocab) {
  Golden g;
  CHECK_INT(golden_load("tests/golden/vocab_d2l10.txt", &g), 0);
  size_t len;
  char *raw = real_text(&len);
  if (!raw) {
    golden_free(&g);
    return;
  }
  NmtConfig cfg;
  nmt_preset("d2l-1.0", &cfg);
  char err[512];
  NmtData *d = nmt_build(raw, len, &cfg, err, sizeof err);
  CHECK(d != NULL);
  if (d) {
    const char *pairs = golden_get(&g, "pairs");
    CHECK(pairs && atoi(pairs) == d->n);
    CHECK_INT(d->n, 641);
    CHECK_INT(d->n_train, 512);
    golden_check_side(&g, "src", d->src_vocab, d->src, d->src_valid, d->n, 9, 0);
    golden_check_side(&g, "tgt", d->tgt_vocab, d->tgt, NULL, d->n, 9, 1);
    nmt_data_free(d);
  }
  free(raw);
  golden_free(&g);
}
