/* fuzz_fra — the fra.txt pipeline of labs 03 and 06 (preprocess_nmt, tokenize, Vocab, arrays:
 * nmt_build) for both presets on arbitrary text, then what a lab does with it: encode and
 * check a sentence (--translate), and write tokens into a JSON file, which must come out as
 * valid UTF-8 whatever bytes the text held. */
#include "../../common/json.h"
#include "../../common/nmt_input.h"
#include "../../common/tensor.h"
#include "../../common/text.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  atexit(fuzz_remove_file);
  return 0;
}

/* RFC 3629 well-formedness, written independently of json.c's check */
static int valid_utf8(const unsigned char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    unsigned cp, need;
    if (c < 0x80) { i++; continue; }
    if ((c & 0xE0) == 0xC0) cp = c & 0x1F, need = 1;
    else if ((c & 0xF0) == 0xE0) cp = c & 0x0F, need = 2;
    else if ((c & 0xF8) == 0xF0) cp = c & 0x07, need = 3;
    else return 0;
    for (unsigned k = 1; k <= need; k++) {
      if (i + k >= n || (s[i + k] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    static const unsigned min[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < min[need] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    i += need + 1;
  }
  return 1;
}

static void json_roundtrip(const char *text) {
  char path[300];
  const char *d = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/al_fuzz_%d.json", d && *d ? d : "/tmp", (int)getpid());
  JsonW *w = json_open(path);
  if (!w) abort();
  json_obj_begin(w);
  json_kv_str(w, "src", text);
  json_obj_end(w);
  if (json_close(w) != 0) abort();
  FILE *f = fopen(path, "rb");
  if (!f) abort();
  static unsigned char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  if (!valid_utf8(buf, n)) abort(); /* summary.json must be UTF-8 */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0; /* the pipeline is linear; long inputs only slow the search */
  char *raw = malloc(size + 1);
  memcpy(raw, data, size);
  raw[size] = '\0';
  for (int preset = 0; preset < 2; preset++) {
    NmtConfig cfg;
    nmt_preset(preset ? "d2l-1.0" : "d2l-0.17", &cfg);
    if (preset) cfg.num_train = 24, cfg.num_val = 8; /* small: the fuzzer's texts are short */
    else cfg.num_examples = 32;
    char err[512];
    NmtData *nd = nmt_build(raw, size, &cfg, err, sizeof err);
    if (!nd) {
      if (!err[0]) abort();
      continue;
    }
    /* the first line's English half as a --translate sentence */
    size_t cut = strcspn(raw, "\t\n");
    char *sent = malloc(cut + 1);
    memcpy(sent, raw, cut);
    sent[cut] = '\0';
    int *ids = malloc(sizeof(int) * (size_t)nd->num_steps);
    int valid = nmt_encode_source(nd, sent, ids);
    if (valid < 0 || valid > nd->num_steps) abort();
    for (int k = 0; k < nd->num_steps; k++)
      if (ids[k] < 0 || ids[k] >= nd->src_vocab->size) abort();
    char warn[1024], e2[256];
    nmt_check_sentence(nd, sent, warn, sizeof warn, e2, sizeof e2);
    json_roundtrip(sent);
    if (nd->n > 0 && nd->pairs.tgt[0].len > 0) json_roundtrip(nd->pairs.tgt[0].tok[0]);
    free(ids);
    free(sent);
    nmt_data_free(nd);
  }
  free(raw);
  ag_step_reset();
  return 0;
}
