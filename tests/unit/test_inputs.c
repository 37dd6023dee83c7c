/* Careful inputs (issue 16): IDX files sized by their header before any allocation, valid
 * UTF-8 in every JSON string, the flag parser without exits (cli_parse_args), and the checks
 * of a --translate sentence. */
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "../../common/cli.h"
#include "../../common/data.h"
#include "../../common/json.h"
#include "../../common/nmt_input.h"
#include "../../common/text.h"
#include "../test.h"

static void tmp_path(char *buf, size_t n, const char *name) {
  const char *d = getenv("TMPDIR");
  snprintf(buf, n, "%s/al_inputs_%d_%s", d && *d ? d : "/tmp", (int)getpid(), name);
}

/* A gzip file: the 8- or 16-byte IDX header, then `zeros` zero bytes, streamed through
 * deflate so a large claim costs no memory here either. */
static int write_idx_gz(const char *path, const unsigned char *hdr, size_t hlen, size_t zeros) {
  gzFile g = gzopen(path, "wb1");
  if (!g) return -1;
  if (gzwrite(g, hdr, (unsigned)hlen) != (int)hlen) return gzclose(g), -1;
  static unsigned char z[1 << 16];
  while (zeros) {
    unsigned k = zeros > sizeof z ? (unsigned)sizeof z : (unsigned)zeros;
    if (gzwrite(g, z, k) != (int)k) return gzclose(g), -1;
    zeros -= k;
  }
  return gzclose(g) == Z_OK ? 0 : -1;
}

static void be32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

TEST(idx_read_sized_by_its_header) {
  char path[512], err[512];
  tmp_path(path, sizeof path, "img.gz");
  unsigned char hdr[16];
  be32(hdr, 0x803), be32(hdr + 4, 10), be32(hdr + 8, 28), be32(hdr + 12, 28);
  int dims[3];
  unsigned char *buf = NULL;
  const unsigned char *pay = NULL;
  /* exactly what the header says: read */
  CHECK_INT(write_idx_gz(path, hdr, 16, 10 * 784), 0);
  CHECK_INT(idx_read(path, 3, dims, &buf, &pay, err, sizeof err), 0);
  CHECK(dims[0] == 10 && dims[1] == 28 && dims[2] == 28 && pay == buf + 16);
  free(buf);
  /* the file: a valid header and far more data (64 MiB of zeros here, 1 GiB there).
   * The reader stops after the header's 7840 bytes instead of inflating everything. */
  CHECK_INT(write_idx_gz(path, hdr, 16, (size_t)64 << 20), 0);
  CHECK_INT(idx_read(path, 3, dims, &buf, &pay, err, sizeof err), -1);
  CHECK(buf == NULL && pay == NULL);
  CHECK_STR_CONTAINS(err, "IDX size mismatch: more than the 7840 bytes of data the header says");
  CHECK_STR_CONTAINS(err, path);
  /* fewer bytes than promised */
  CHECK_INT(write_idx_gz(path, hdr, 16, 10 * 784 - 5), 0);
  CHECK_INT(idx_read(path, 3, dims, &buf, &pay, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "truncated IDX data: 7835 bytes, the header says 7840");
  /* a header promising more than GZ_MAX_BYTES is refused before any allocation */
  be32(hdr + 4, 60000), be32(hdr + 8, 1000), be32(hdr + 12, 1000);
  CHECK_INT(write_idx_gz(path, hdr, 16, 100), 0);
  CHECK_INT(idx_read(path, 3, dims, &buf, &pay, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "the IDX header promises 60000000000 bytes, more than the 256 MiB");
  /* labels, and a wrong kind of file */
  unsigned char lh[8];
  be32(lh, 0x801), be32(lh + 4, 3);
  CHECK_INT(write_idx_gz(path, lh, 8, 3), 0);
  CHECK_INT(idx_read(path, 1, dims, &buf, &pay, err, sizeof err), 0);
  CHECK(dims[0] == 3);
  free(buf);
  CHECK_INT(idx_read(path, 3, dims, &buf, &pay, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "expected 3");
  unlink(path);
}

/* json_kv_str of `in` as the file holds it, between the quotes */
static void json_string_of(const char *in, char *out, size_t n) {
  char path[512];
  tmp_path(path, sizeof path, "s.json");
  JsonW *w = json_open(path);
  out[0] = '\0';
  if (!w) return;
  json_obj_begin(w);
  json_kv_str(w, "s", in);
  json_obj_end(w);
  json_close(w);
  FILE *f = fopen(path, "rb");
  if (!f) return;
  char buf[512];
  size_t k = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  unlink(path);
  buf[k] = '\0';
  char *a = strstr(buf, "\"s\": \"");
  if (!a) return;
  a += 6;
  char *b = strrchr(a, '"');
  if (!b) return;
  snprintf(out, n, "%.*s", (int)(b - a), a);
}

TEST(json_strings_are_valid_utf8) {
  char s[256];
  /* well-formed UTF-8 passes unchanged: é (2 bytes), € (3), 😀 (4) */
  json_string_of("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", s, sizeof s);
  CHECK(strcmp(s, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == 0);
  /* a Latin-1 byte from a damaged fra.txt line, a stray continuation byte, a cut sequence */
  json_string_of("caf\xe9!", s, sizeof s);
  CHECK(strcmp(s, "caf\\ufffd!") == 0);
  json_string_of("\x80x", s, sizeof s);
  CHECK(strcmp(s, "\\ufffdx") == 0);
  json_string_of("ab\xe2\x82", s, sizeof s);
  CHECK(strcmp(s, "ab\\ufffd\\ufffd") == 0);
  /* overlong '/' (C0 AF), a UTF-16 surrogate (ED A0 80), past U+10FFFF (F4 90 80 80) */
  json_string_of("\xc0\xaf", s, sizeof s);
  CHECK(strcmp(s, "\\ufffd\\ufffd") == 0);
  json_string_of("\xed\xa0\x80", s, sizeof s);
  CHECK(strcmp(s, "\\ufffd\\ufffd\\ufffd") == 0);
  json_string_of("\xf4\x90\x80\x80", s, sizeof s);
  CHECK(strcmp(s, "\\ufffd\\ufffd\\ufffd\\ufffd") == 0);
}

TEST(cli_parse_args_returns_instead_of_exiting) {
  static const char *const presets[] = {"cpu", "d2l", NULL};
  cli_lab_info(&(CliLabInfo){presets, NULL, 0, INT_MAX, NULL, 0});
  LabArgs a;
  char err[256];
  char *ok[] = {"./labx", "--preset", "d2l", "--epochs=0", NULL};
  CHECK_INT(cli_parse_args(4, ok, "labx", &a, NULL, err, sizeof err), 0);
  CHECK(a.preset && strcmp(a.preset, "d2l") == 0 && a.epochs == 0);
  char *bad_preset[] = {"./labx", "--preset", "foo", NULL};
  CHECK_INT(cli_parse_args(3, bad_preset, "labx", &a, NULL, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "unknown --preset 'foo' (labx's presets: cpu (the default), d2l)");
  char *neg[] = {"./labx", "--epochs", "-1", NULL};
  CHECK_INT(cli_parse_args(3, neg, "labx", &a, NULL, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "--epochs -1: must be at least 0");
  char *help[] = {"./labx", "--bogus", "--help", NULL};
  CHECK_INT(cli_parse_args(3, help, "labx", &a, NULL, err, sizeof err), 1);
  /* a lab without presets or training refuses both */
  cli_lab_info(NULL);
  CHECK_INT(cli_parse_args(3, bad_preset, "labx", &a, NULL, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "this lab has no presets");
  char *ep[] = {"./labx", "--epochs", "3", NULL};
  CHECK_INT(cli_parse_args(3, ep, "labx", &a, NULL, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "this lab does not train");
}

TEST(cli_check_output_file_before_training) {
  char dir[512], file[600];
  tmp_path(dir, sizeof dir, "nodir");
  snprintf(file, sizeof file, "%s/model.ckpt", dir);
  int fd[2];
  CHECK(pipe(fd) == 0);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], STDERR_FILENO);
    close(fd[0]);
    cli_check_output_file("--save", file);
    _exit(100); /* returned: the check let a missing directory through */
  }
  close(fd[1]);
  char out[1024];
  ssize_t k = read(fd[0], out, sizeof out - 1);
  out[k > 0 ? k : 0] = '\0';
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
  CHECK_STR_CONTAINS(out, "--save");
  CHECK_STR_CONTAINS(out, "does not exist");
  /* an existing, writable directory passes (and returns) */
  cli_check_output_file("--save", "model.ckpt");
  cli_check_output_file("--save", NULL);
}

static const char *k_text =
    "Go.\tVa !\nHi.\tSalut !\nRun!\tCours !\nRun!\tCourez !\nWho?\tQui ?\nI lost.\tJ'ai perdu.\n"
    "Go.\tVa !\nHe's calm.\tIl est calme.\nI'm home.\tJe suis chez moi.\nGo now.\tVa maintenant.\n";

TEST(translate_sentence_checks) {
  for (int preset = 0; preset < 2; preset++) {
    NmtConfig cfg;
    nmt_preset(preset ? "d2l-1.0" : "d2l-0.17", &cfg);
    cfg.num_steps = 5;
    if (preset) cfg.num_train = 6, cfg.num_val = 3;
    char err[512], warn[1024];
    NmtData *d = nmt_build(k_text, strlen(k_text), &cfg, err, sizeof err);
    CHECK(d != NULL);
    if (!d) return;
    /* known words: nothing to say */
    CHECK_INT(nmt_check_sentence(d, "go .", warn, sizeof warn, err, sizeof err), 0);
    CHECK_INT((int)strlen(warn), 0);
    /* unknown words are named */
    CHECK_INT(nmt_check_sentence(d, "xyzzy frobnicate .", warn, sizeof warn, err, sizeof err), 0);
    CHECK_STR_CONTAINS(warn, "2 of 3 words are not in the source vocabulary");
    CHECK_STR_CONTAINS(warn, "'xyzzy', 'frobnicate'");
    /* longer than num_steps: said, with the numbers */
    CHECK_INT(nmt_check_sentence(d, "go go go go go go .", warn, sizeof warn, err, sizeof err), 0);
    CHECK_STR_CONTAINS(warn, "the sentence is 8 tokens with <eos> but the model reads num_steps = 5");
    /* nothing to translate */
    CHECK_INT(nmt_check_sentence(d, "   ", warn, sizeof warn, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "has no words");
    nmt_data_free(d);
  }
}
