/* Tests of common/cli.c (flags, errors, progress line) and common/json.c (the summary writer).
 * The exit paths of cli_parse run in a forked child whose output and exit status we check. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/cli.h"
#include "../../common/data.h"
#include "../../common/json.h"
#include "../../common/rng.h"
#include "../../common/util.h"
#include "../test.h"

/* ---------- helpers ---------- */

/* Read a whole file into a malloc'd string ("" when missing). */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    char *e = malloc(1);
    e[0] = '\0';
    return e;
  }
  size_t cap = 4096, n = 0;
  char *s = malloc(cap);
  size_t k;
  while ((k = fread(s + n, 1, cap - n - 1, f)) > 0) {
    n += k;
    if (n + 1 == cap) s = realloc(s, cap *= 2);
  }
  s[n] = '\0';
  fclose(f);
  return s;
}

static char *make_tmpdir(void) {
  char tmpl[] = "/tmp/al_test_XXXXXX";
  char *d = mkdtemp(tmpl);
  return d ? strdup(d) : NULL;
}

typedef struct {
  int status; /* exit code, or -1 when the child did not exit normally */
  char out[8192]; /* stdout and stderr together */
} ChildResult;

/* Run cli_parse(argv) in a child process and collect what it printed and how it exited. */
static void run_cli_child(ChildResult *r, int argc, char **argv, const CliOpt *extra) {
  int fd[2];
  r->status = -1;
  r->out[0] = '\0';
  if (pipe(fd) != 0) return;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], STDOUT_FILENO);
    dup2(fd[1], STDERR_FILENO);
    close(fd[0]);
    close(fd[1]);
    LabArgs a;
    cli_parse(argc, argv, "labtest", "a lab for the tests", &a, extra);
    _exit(100); /* cli_parse returned: every case below expects it to exit */
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t k;
  while (n + 1 < sizeof r->out && (k = read(fd[0], r->out + n, sizeof r->out - 1 - n)) > 0)
    n += (size_t)k;
  r->out[n] = '\0';
  close(fd[0]);
  int st;
  if (waitpid(pid, &st, 0) == pid && WIFEXITED(st)) r->status = WEXITSTATUS(st);
}

/* ---------- cli_parse ---------- */

/* labtest trains (--epochs 1 or more) and has two presets, like lab03 */
static const char *const test_presets[] = {"d2l-0.17", "d2l-1.0", NULL};
static void labtest_info(void) {
  cli_lab_info(&(CliLabInfo){test_presets, NULL, 1, INT_MAX, "training runs at least one epoch",
                             0});
}
/* cli_parse turned on what a lab wants and a unit-test process does not */
static void undo_lab_state(void) {
  data_set_announce(0);
  die_set_program(NULL);
}

TEST(cli_defaults) {
  /* run in a scratch directory: the default --out is relative (out/<lab>) */
  char cwd[4096];
  CHECK(getcwd(cwd, sizeof cwd) != NULL);
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  CHECK(chdir(dir) == 0);
  char *argv[] = {"./labtest", NULL};
  LabArgs a;
  labtest_info();
  cli_parse(1, argv, "labtest", "summary", &a, NULL);
  undo_lab_state();
  CHECK(a.seed == 42);
  CHECK(strcmp(a.out, "out/labtest") == 0);
  CHECK(strcmp(a.device, "cpu") == 0);
  CHECK_INT(a.epochs, -1);
  CHECK(a.preset == NULL && a.data_dir == NULL);
  struct stat st;
  CHECK(stat("out/labtest", &st) == 0 && S_ISDIR(st.st_mode)); /* created */
  /* g_rng is seeded with the seed */
  Rng r;
  rng_init(&r, 42);
  CHECK(rng_next(&g_rng) == rng_next(&r));
  rmdir("out/labtest");
  rmdir("out");
  CHECK(chdir(cwd) == 0);
  rmdir(dir);
  free(dir);
}

TEST(cli_both_forms_and_extras) {
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  char out[512], data_dir[512];
  snprintf(out, sizeof out, "--out=%s/a/b", dir); /* nested: mkdir -p */
  snprintf(data_dir, sizeof data_dir, "--data-dir=%s", dir); /* it must exist */
  int steps = 5;
  float lr = 0.1f;
  const char *name = "default";
  bool verbose = false, quiet = false;
  CliOpt extra[] = {
      {"--steps", OPT_INT, &steps, "number of steps"},
      {"--lr", OPT_FLOAT, &lr, "learning rate"},
      {"--name", OPT_STR, &name, "a name"},
      {"--verbose", OPT_FLAG, &verbose, "say more"},
      {"--quiet", OPT_FLAG, &quiet, "say less"},
      {NULL, 0, NULL, NULL},
  };
  char *argv[] = {"./labtest", "--seed=7",   "--epochs", "3",       "--device=cpu", out,
                  "--preset",  "d2l-1.0",    data_dir,    "--steps=-4",   "--lr",
                  "2.5e-3",    "--name=a=b", "--verbose",          NULL};
  int argc = (int)(sizeof argv / sizeof argv[0]) - 1;
  LabArgs a;
  labtest_info();
  cli_parse(argc, argv, "labtest", "summary", &a, extra);
  undo_lab_state();
  CHECK(a.seed == 7);
  CHECK_INT(a.epochs, 3);
  CHECK(strcmp(a.device, "cpu") == 0);
  CHECK_STR_CONTAINS(a.out, "/a/b");
  CHECK(a.preset && strcmp(a.preset, "d2l-1.0") == 0);
  CHECK(a.data_dir && strcmp(a.data_dir, dir) == 0);
  CHECK_INT(steps, -4);
  CHECK_NEAR(lr, 2.5e-3, 1e-9); /* strtof of "2.5e-3": float rounding only */
  CHECK(strcmp(name, "a=b") == 0); /* only the first '=' splits */
  CHECK(verbose && !quiet);
  struct stat st;
  CHECK(stat(a.out, &st) == 0 && S_ISDIR(st.st_mode));
  Rng r;
  rng_init(&r, 7);
  CHECK(rng_next(&g_rng) == rng_next(&r));
  char p[600];
  snprintf(p, sizeof p, "%s/a/b", dir);
  rmdir(p);
  snprintf(p, sizeof p, "%s/a", dir);
  rmdir(p);
  rmdir(dir);
  free(dir);
}

TEST(cli_errors_exit_2) {
  int steps = 1;
  float lr = 0.1f;
  CliOpt extra[] = {{"--steps", OPT_INT, &steps, "number of steps"},
                    {"--lr", OPT_FLOAT, &lr, "learning rate"},
                    {NULL, 0, NULL, NULL}};
  ChildResult r;
  labtest_info();
  struct {
    char *args[4];
    int status;
    const char *msg;
  } cases[] = {
      {{"--epoch", "3"}, 2, "unknown flag '--epoch' (did you mean --epochs?)"},
      {{"--frobnicate"}, 2, "unknown flag '--frobnicate'"},
      {{"--seed"}, 2, "--seed needs a value"},
      {{"--out", "--seed", "1"}, 2, "--out needs a value"},
      {{"--epochs=abc"}, 2, "--epochs expects an integer, got 'abc'"},
      {{"--epochs", "-3"}, 2, "--epochs -3: must be at least 1 (training runs at least one"},
      {{"--steps", "9999999999"}, 2, "--steps must be in"},
      {{"--lr=fast"}, 2, "--lr expects a number, got 'fast'"},
      {{"--seed=-1"}, 2, "--seed expects a non-negative integer"},
      {{"--device", "gpu"}, 2, "--device is cpu or cuda, got 'gpu'"},
      {{"stray"}, 2, "unexpected argument 'stray'"},
      {{"--out", "/proc/al_no_such_dir"}, 1, "cannot create the output directory"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *argv[6] = {"./labtest"};
    int argc = 1;
    for (int k = 0; k < 4 && cases[i].args[k]; k++) argv[argc++] = cases[i].args[k];
    run_cli_child(&r, argc, argv, extra);
    if (r.status != cases[i].status)
      test_fail(__FILE__, __LINE__, "case %zu (%s): exit %d, expected %d; output: %s", i,
                cases[i].args[0], r.status, cases[i].status, r.out);
    CHECK_STR_CONTAINS(r.out, cases[i].msg);
    if (cases[i].status == 2) /* usage errors show usage (--device cuda: test_cuda_emu.c) */
      CHECK_STR_CONTAINS(r.out, "usage: ./labtest");
  }
}

TEST(cli_help_exit_0) {
  int steps = 5;
  CliOpt extra[] = {{"--steps", OPT_INT, &steps, "number of optimizer steps"},
                    {NULL, 0, NULL, NULL}};
  ChildResult r;
  labtest_info();
  /* --help wins even after a bad flag */
  char *argv[] = {"./labtest", "--bogus", "--help", NULL};
  run_cli_child(&r, 3, argv, extra);
  CHECK_INT(r.status, 0);
  CHECK_STR_CONTAINS(r.out, "labtest");
  CHECK_STR_CONTAINS(r.out, "a lab for the tests");
  const char *flags[] = {"--seed N", "--out DIR", "--device cpu|cuda", "--epochs N",
                         "--preset NAME", "--data-dir DIR", "--help"};
  for (int i = 0; i < 7; i++) CHECK_STR_CONTAINS(r.out, flags[i]);
  CHECK_STR_CONTAINS(r.out, "number of optimizer steps (default 5)");
  CHECK_STR_CONTAINS(r.out, "default out/labtest");
}

/* ---------- progress line ---------- */

TEST(cli_progress_line_not_a_tty) {
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512];
  snprintf(path, sizeof path, "%s/progress.txt", dir);
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CHECK(saved >= 0 && fd >= 0);
  if (saved < 0 || fd < 0) return;
  dup2(fd, STDOUT_FILENO); /* a file: not a terminal, so one plain line per report */
  close(fd);
  progress_report(120, 250, 0.0421, 51234.54, "tokens/sec", "cpu");
  progress_report(1, 5, 1.23456, 0, "tokens/sec", "cpu"); /* no rate */
  progress_report(2, 5, 0.5, 12.0, "examples/sec", "cuda");
  progress_done(); /* nothing to end on a non-terminal */
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  char *s = slurp(path);
  const char *want = "epoch 120/250, loss 0.042, 51234.5 tokens/sec on cpu\n"
                     "epoch 1/5, loss 1.235\n"
                     "epoch 2/5, loss 0.500, 12.0 examples/sec on cuda\n";
  if (strcmp(s, want) != 0) test_fail(__FILE__, __LINE__, "got:\n%s\nwanted:\n%s", s, want);
  free(s);
  unlink(path);
  rmdir(dir);
  free(dir);
}

/* ---------- JSON ---------- */

TEST(json_compact_values_and_escapes) {
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512], tmp[520];
  snprintf(path, sizeof path, "%s/summary.json", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  JsonW *w = json_open(path);
  CHECK(w != NULL);
  if (!w) return;
  w->indent = 0;
  json_obj_begin(w);
  json_kv_str(w, "s", "q\"b\\s/\n\t\r\b\f\x01\x1f café ✓");
  json_kv_num(w, "nan", NAN);
  json_kv_num(w, "inf", -INFINITY);
  json_kv_num(w, "pi", 3.14159274f);
  json_kv_num(w, "small", 1e-7f);
  json_kv_int(w, "n", -42);
  json_key(w, "yes");
  json_bool(w, 1);
  json_key(w, "no");
  json_bool(w, 0);
  json_key(w, "none");
  json_null(w);
  json_key(w, "nullstr");
  json_str(w, NULL);
  json_key(w, "floats");
  json_floats(w, (const float[]){1, 2.5f, NAN}, 3);
  json_key(w, "doubles");
  json_doubles(w, (const double[]){0.1, -1e300}, 2);
  json_key(w, "empty");
  json_floats(w, NULL, 0);
  json_key(w, "nested");
  json_obj_begin(w);
  json_key(w, "list");
  json_arr_begin(w);
  json_int(w, 1);
  json_obj_begin(w);
  json_obj_end(w);
  json_arr_begin(w);
  json_arr_end(w);
  json_str(w, "x");
  json_arr_end(w);
  json_obj_end(w);
  json_key(w, "t");
  json_tensor(w, tensor_from(2, (int[]){2, 3}, (const float[]){1, 2, 3, 4, 5, 6}));
  json_key(w, "t3");
  json_tensor(w, tensor_from(3, (int[]){2, 1, 2}, (const float[]){1, 2, 3, 4}));
  json_obj_end(w);
  CHECK(access(tmp, F_OK) == 0); /* still being written: only the .tmp exists */
  CHECK(access(path, F_OK) != 0);
  CHECK_INT(json_close(w), 0);
  CHECK(access(tmp, F_OK) != 0); /* renamed into place */
  char *s = slurp(path);
  const char *want =
      "{\"s\":\"q\\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u001f café ✓\",\"nan\":null,\"inf\":null,"
      "\"pi\":3.14159274,\"small\":1.00000001e-07,\"n\":-42,\"yes\":true,\"no\":false,"
      "\"none\":null,\"nullstr\":null,\"floats\":[1,2.5,null],\"doubles\":[0.1,-1e+300],"
      "\"empty\":[],\"nested\":{\"list\":[1,{},[],\"x\"]},\"t\":[[1,2,3],[4,5,6]],"
      "\"t3\":[[[1,2]],[[3,4]]]}\n";
  if (strcmp(s, want) != 0) test_fail(__FILE__, __LINE__, "got:\n%s\nwanted:\n%s", s, want);
  free(s);
  unlink(path);
  rmdir(dir);
  free(dir);
}

TEST(json_pretty_layout) {
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512];
  snprintf(path, sizeof path, "%s/s.json", dir);
  JsonW *w = json_open(path);
  CHECK(w != NULL);
  if (!w) return;
  json_obj_begin(w); /* pretty is the default */
  json_kv_str(w, "lab", "lab06");
  json_key(w, "loss");
  json_floats(w, (const float[]){0.5f, 0.25f}, 2);
  json_key(w, "m");
  json_tensor(w, tensor_from(2, (int[]){2, 2}, (const float[]){1, 2, 3, 4}));
  json_key(w, "runs");
  json_arr_begin(w);
  json_obj_begin(w);
  json_kv_int(w, "epochs", 3);
  json_obj_end(w);
  json_arr_end(w);
  json_key(w, "e");
  json_obj_begin(w);
  json_obj_end(w);
  json_obj_end(w);
  CHECK_INT(json_close(w), 0);
  char *s = slurp(path);
  const char *want = "{\n"
                     "  \"lab\": \"lab06\",\n"
                     "  \"loss\": [0.5, 0.25],\n"
                     "  \"m\": [\n"
                     "    [1, 2],\n"
                     "    [3, 4]\n"
                     "  ],\n"
                     "  \"runs\": [\n"
                     "    {\n"
                     "      \"epochs\": 3\n"
                     "    }\n"
                     "  ],\n"
                     "  \"e\": {}\n"
                     "}\n";
  if (strcmp(s, want) != 0) test_fail(__FILE__, __LINE__, "got:\n%s\nwanted:\n%s", s, want);
  free(s);
  unlink(path);
  rmdir(dir);
  free(dir);
}

TEST(json_errors) {
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  char path[512], tmp[520];
  /* silence the error messages these cases print on purpose */
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  int devnull = open("/dev/null", O_WRONLY);
  dup2(devnull, STDERR_FILENO);
  close(devnull);

  snprintf(path, sizeof path, "%s/no/such/dir/s.json", dir);
  CHECK(json_open(path) == NULL); /* the directory is missing: NULL, not a crash */

  snprintf(path, sizeof path, "%s/half.json", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  JsonW *w = json_open(path);
  CHECK(w != NULL);
  if (w) {
    json_obj_begin(w);
    json_kv_int(w, "a", 1);
    CHECK_INT(json_close(w), -1); /* unclosed object: refuses to write a broken file */
  }
  CHECK(access(path, F_OK) != 0 && access(tmp, F_OK) != 0);
  CHECK_INT(json_close(NULL), -1);

  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  rmdir(dir);
  free(dir);
}
