/* cli.c — the flags every lab takes (--seed --out --device --epochs --preset --data-dir --help),
 * a lab's own flags from a table, and the one-line training progress report. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "data.h"
#include "rng.h"
#include "tensor.h"
#include "util.h"

/* The common flags, described once for both --help and the usage line. */
typedef struct {
  const char *name, *metavar, *help;
} CommonFlag;

static const CommonFlag COMMON[] = {
    {"--seed", "N", "seed of the random generator (default 42)"},
    {"--out", "DIR", "where figures and summary.json go (default out/<lab>)"},
    {"--device", "cpu|cuda", "where the tensors live (default cpu)"},
    {"--epochs", "N", "training epochs (default: the preset's)"},
    {"--preset", "NAME", "a configuration of the book"},
    {"--data-dir", "DIR", "where to look for data files first (it must exist)"},
    {"--help", NULL, "print this help and exit"},
};
#define N_COMMON ((int)(sizeof COMMON / sizeof COMMON[0]))

static char g_default_out[256]; /* "out/<lab>": args->out points here unless --out is given */
static char g_lab[32];          /* the lab's name, for errors after cli_parse */
static CliLabInfo g_info;       /* presets and --epochs range (cli_lab_info); zero: neither */

void cli_lab_info(const CliLabInfo *info) {
  memset(&g_info, 0, sizeof g_info);
  if (info) g_info = *info;
}

static bool has_presets(void) { return g_info.presets && g_info.presets[0]; }
static bool trains(void) { return g_info.epochs_max > 0; }

/* A common flag this lab does not take is left out of --help and is an error. */
static bool common_applies(const char *name) {
  if (strcmp(name, "--preset") == 0) return has_presets();
  if (strcmp(name, "--epochs") == 0) return trains();
  return true;
}

/* "d2l-0.17 (the default), d2l-1.0" */
static void preset_list(char *buf, size_t n) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; has_presets() && g_info.presets[i] && k + 1 < n; i++) {
    int w = snprintf(buf + k, n - k, "%s%s%s", i ? ", " : "", g_info.presets[i],
                     i == 0 ? " (the default)" : "");
    if (w < 0) break;
    k += (size_t)w;
  }
}

static const char *metavar(OptType t) {
  switch (t) {
  case OPT_INT: return "N";
  case OPT_FLOAT: return "X";
  case OPT_STR: return "S";
  default: return NULL;
  }
}

static const char *prog_name(char **argv, int argc) {
  return argc > 0 && argv[0] && argv[0][0] ? argv[0] : "lab";
}

/* One "[--flag V]" item of the usage line, wrapping before column 96. */
static void usage_item(FILE *f, int *col, const char *name, const char *mv) {
  int w = (int)strlen(name) + (mv ? (int)strlen(mv) + 1 : 0) + 3;
  if (*col + w > 96) {
    fputs("\n      ", f);
    *col = 6;
  }
  *col += mv ? fprintf(f, " [%s %s]", name, mv) : fprintf(f, " [%s]", name);
}

static void print_usage_line(FILE *f, const char *prog, const CliOpt *extra) {
  int col = fprintf(f, "usage: %s", prog);
  for (int i = 0; i < N_COMMON; i++)
    if (common_applies(COMMON[i].name)) usage_item(f, &col, COMMON[i].name, COMMON[i].metavar);
  if (extra)
    for (const CliOpt *o = extra; o->name; o++) usage_item(f, &col, o->name, metavar(o->type));
  fputc('\n', f);
}

static void print_help(FILE *f, const char *prog, const char *lab, const char *summary,
                       const CliOpt *extra) {
  fprintf(f, "%s — %s\n\n", lab, summary ? summary : "");
  print_usage_line(f, prog, extra);
  fprintf(f, "\ncommon flags:\n");
  for (int i = 0; i < N_COMMON; i++) {
    char left[64];
    if (!common_applies(COMMON[i].name)) continue;
    snprintf(left, sizeof left, "%s%s%s", COMMON[i].name, COMMON[i].metavar ? " " : "",
             COMMON[i].metavar ? COMMON[i].metavar : "");
    if (strcmp(COMMON[i].name, "--out") == 0) {
      fprintf(f, "  %-20s where figures and summary.json go (default out/%s)\n", left, lab);
    } else if (strcmp(COMMON[i].name, "--preset") == 0) {
      char list[256];
      preset_list(list, sizeof list);
      fprintf(f, "  %-20s one of %s%s%s\n", left, list, g_info.presets_note ? "; " : "",
              g_info.presets_note ? g_info.presets_note : "");
    } else if (strcmp(COMMON[i].name, "--epochs") == 0) {
      char range[64];
      if (g_info.epochs_max == INT_MAX) snprintf(range, sizeof range, "at least %d", g_info.epochs_min);
      else snprintf(range, sizeof range, "%d..%d", g_info.epochs_min, g_info.epochs_max);
      if (g_info.epochs_default > 0)
        fprintf(f, "  %-20s training epochs, %s (default %d)\n", left, range, g_info.epochs_default);
      else
        fprintf(f, "  %-20s training epochs, %s (default: the preset's)\n", left, range);
    } else {
      fprintf(f, "  %-20s %s\n", left, COMMON[i].help);
    }
  }
  if (extra && extra[0].name) {
    fprintf(f, "\n%s flags:\n", lab);
    for (const CliOpt *o = extra; o->name; o++) {
      char left[64], def[96] = "";
      const char *mv = metavar(o->type);
      snprintf(left, sizeof left, "%s%s%s", o->name, mv ? " " : "", mv ? mv : "");
      /* the value in dest before parsing is the default, unless the help line says it */
      if (o->dest && !(o->help && (strstr(o->help, "default") || strstr(o->help, "preset")))) {
        if (o->type == OPT_INT)
          snprintf(def, sizeof def, " (default %d)", *(const int *)o->dest);
        else if (o->type == OPT_FLOAT)
          snprintf(def, sizeof def, " (default %g)", (double)*(const float *)o->dest);
        else if (o->type == OPT_STR && *(const char *const *)o->dest)
          snprintf(def, sizeof def, " (default %s)", *(const char *const *)o->dest);
      }
      fprintf(f, "  %-20s %s%s\n", left, o->help ? o->help : "", def);
    }
  }
}

/* Levenshtein distance, for "did you mean" on a mistyped flag (short strings only). */
static int edit_distance(const char *a, const char *b) {
  int la = (int)strlen(a), lb = (int)strlen(b);
  if (la > 63 || lb > 63) return 99;
  int prev[64], cur[64];
  for (int j = 0; j <= lb; j++) prev[j] = j;
  for (int i = 1; i <= la; i++) {
    cur[0] = i;
    for (int j = 1; j <= lb; j++) {
      int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
      int del = prev[j] + 1, ins = cur[j - 1] + 1;
      cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
    memcpy(prev, cur, sizeof(int) * (size_t)(lb + 1));
  }
  return prev[lb];
}

typedef struct {
  const char *prog, *lab;
  const CliOpt *extra;
  jmp_buf *jb;      /* cli_parse_args: a usage error jumps back here with the message */
  char *err;
  size_t errlen;
} Ctx;

/* Print "error: lab03: MSG", the usage line and a pointer to --help; exit 2. */
_Noreturn static void usage_exit(const char *prog, const char *lab, const CliOpt *extra,
                                 const char *msg) {
  fflush(stdout);
  fprintf(stderr, "error: %s: %s\n", lab, msg);
  print_usage_line(stderr, prog, extra);
  fprintf(stderr, "(%s --help explains every flag)\n", prog);
  exit(2);
}

/* A usage error: one line saying what was wrong (returned by cli_parse_args). */
__attribute__((format(printf, 2, 3))) _Noreturn static void usage_error(const Ctx *c,
                                                                         const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, c->errlen, fmt, ap);
  va_end(ap);
  longjmp(*c->jb, 1);
}

static long parse_long(const Ctx *c, const char *flag, const char *s, long lo, long hi) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE)
    usage_error(c, "%s expects an integer, got '%s'", flag, s);
  if (v < lo || v > hi) usage_error(c, "%s must be in [%ld, %ld], got %ld", flag, lo, hi, v);
  return v;
}

static float parse_float(const Ctx *c, const char *flag, const char *s) {
  char *end;
  errno = 0;
  float v = strtof(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
    usage_error(c, "%s expects a number, got '%s'", flag, s);
  return v;
}

static uint64_t parse_seed(const Ctx *c, const char *s) {
  char *end;
  errno = 0;
  while (*s == ' ') s++;
  if (*s == '-') usage_error(c, "--seed expects a non-negative integer, got '%s'", s);
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE)
    usage_error(c, "--seed expects a non-negative integer, got '%s'", s);
  return (uint64_t)v;
}

/* --epochs N against the lab's range, one message for every lab and every value */
static int parse_epochs(const Ctx *c, const char *val) {
  char *end;
  errno = 0;
  long v = strtol(val, &end, 10);
  if (end == val || *end != '\0' || errno == ERANGE)
    usage_error(c, "--epochs expects an integer, got '%s'", val);
  if (v < g_info.epochs_min || v > g_info.epochs_max) {
    char range[64];
    if (g_info.epochs_max == INT_MAX) snprintf(range, sizeof range, "at least %d", g_info.epochs_min);
    else snprintf(range, sizeof range, "in %d..%d", g_info.epochs_min, g_info.epochs_max);
    usage_error(c, "--epochs %ld: must be %s%s%s%s", v, range, g_info.epochs_why ? " (" : "",
                g_info.epochs_why ? g_info.epochs_why : "", g_info.epochs_why ? ")" : "");
  }
  return (int)v;
}

static int parse_into(const Ctx *cp, int argc, char **argv, LabArgs *args);

/* usage_error longjmps back here with its message in c->err */
static int parse_guarded(Ctx *c, int argc, char **argv, LabArgs *args) {
  jmp_buf jb;
  c->jb = &jb;
  if (setjmp(jb) == 0) return parse_into(c, argc, argv, args);
  return -1;
}

int cli_parse_args(int argc, char **argv, const char *lab, LabArgs *args, const CliOpt *extra,
                   char *err, size_t errlen) {
  char dummy[8];
  bool own = err && errlen;
  Ctx c = {prog_name(argv, argc), lab ? lab : "lab", extra, NULL, own ? err : dummy,
           own ? errlen : sizeof dummy};
  c.err[0] = '\0';
  snprintf(g_default_out, sizeof g_default_out, "out/%s", c.lab);
  return parse_guarded(&c, argc, argv, args);
}

/* The flag `name` (without its value) among the common flags (*common: its index) or the lab's
 * own (*opt); a usage error for a common flag this lab has no use for, or an unknown flag (with
 * the closest known one, when one is close). */
static void find_flag(const Ctx *c, const char *name, int *common, const CliOpt **opt) {
  *common = -1;
  *opt = NULL;
  for (int k = 0; k < N_COMMON; k++)
    if (strcmp(name, COMMON[k].name) == 0) *common = k;
  if (*common < 0 && c->extra)
    for (const CliOpt *o = c->extra; o->name; o++)
      if (strcmp(name, o->name) == 0) *opt = o;
  if (*common >= 0 && !common_applies(name)) {
    if (strcmp(name, "--preset") == 0)
      usage_error(c, "this lab has no presets (--preset is for lab03, lab06 and lab07)");
    usage_error(c, "this lab does not train, so --epochs does not apply");
  }
  if (*common >= 0 || *opt) return;
  const char *best = NULL;
  int bd = 3; /* suggest only close matches */
  for (int k = 0; k < N_COMMON; k++) {
    int d = edit_distance(name, COMMON[k].name);
    if (d < bd) bd = d, best = COMMON[k].name;
  }
  if (c->extra)
    for (const CliOpt *o = c->extra; o->name; o++) {
      int d = edit_distance(name, o->name);
      if (d < bd) bd = d, best = o->name;
    }
  if (best) usage_error(c, "unknown flag '%s' (did you mean %s?)", name, best);
  usage_error(c, "unknown flag '%s'", name);
}

/* The value of flag `name` at argv[*i]: after its '=', else the next argument (*i moves on);
 * NULL for a switch. */
static const char *flag_value(const Ctx *c, int argc, char **argv, int *i, const char *name,
                              const char *inline_val, bool is_switch) {
  const char *val = NULL;
  if (is_switch) {
    if (inline_val) usage_error(c, "%s is a switch and takes no value (got '%s')", name,
                                inline_val);
  } else if (inline_val) {
    val = inline_val;
  } else {
    /* a following "--something" is the next flag, not this one's value */
    if (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0)
      usage_error(c, "%s needs a value", name);
    val = argv[++*i];
  }
  if (val && !*val) usage_error(c, "%s needs a value, got an empty one", name);
  return val;
}

/* A common flag's value into args. */
static void set_common(const Ctx *c, LabArgs *args, const char *n, const char *val) {
  if (strcmp(n, "--seed") == 0) {
    args->seed = parse_seed(c, val);
  } else if (strcmp(n, "--out") == 0) {
    args->out = val;
  } else if (strcmp(n, "--device") == 0) {
    if (strcmp(val, "cpu") != 0 && strcmp(val, "cuda") != 0)
      usage_error(c, "--device is cpu or cuda, got '%s'", val);
    args->device = val;
  } else if (strcmp(n, "--epochs") == 0) {
    args->epochs = parse_epochs(c, val);
  } else if (strcmp(n, "--preset") == 0) {
    bool known = false;
    for (int k = 0; g_info.presets[k]; k++) known |= strcmp(val, g_info.presets[k]) == 0;
    if (!known) {
      char list[256];
      preset_list(list, sizeof list);
      usage_error(c, "unknown --preset '%s' (%s's presets: %s)", val, c->lab, list);
    }
    args->preset = val;
  } else if (strcmp(n, "--data-dir") == 0) {
    args->data_dir = val;
  }
}

/* A lab's own flag's value into its destination. */
static void set_extra(const Ctx *c, const CliOpt *opt, const char *name, const char *val) {
  if (!opt->dest) return;
  switch (opt->type) {
  case OPT_FLAG: *(bool *)opt->dest = true; break;
  case OPT_INT: *(int *)opt->dest = (int)parse_long(c, name, val, INT_MIN, INT_MAX); break;
  case OPT_FLOAT: *(float *)opt->dest = parse_float(c, name, val); break;
  case OPT_STR: *(const char **)opt->dest = val; break;
  }
}

/* One flag at argv[*i] (and its value, which may be the next argument: *i moves on). */
static void parse_flag(const Ctx *c, int argc, char **argv, int *i, LabArgs *args) {
  const char *arg = argv[*i];
  if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
    usage_error(c, "unexpected argument '%s' (flags start with --)", arg);
  /* split "--flag=value" */
  char name[128];
  const char *eq = strchr(arg, '=');
  size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
  if (nlen >= sizeof name) usage_error(c, "unknown flag '%.40s...'", arg);
  memcpy(name, arg, nlen);
  name[nlen] = '\0';
  int common;
  const CliOpt *opt;
  find_flag(c, name, &common, &opt);
  const char *val =
      flag_value(c, argc, argv, i, name, eq ? eq + 1 : NULL, opt && opt->type == OPT_FLAG);
  if (common >= 0)
    set_common(c, args, COMMON[common].name, val);
  else
    set_extra(c, opt, name, val);
}

static int parse_into(const Ctx *cp, int argc, char **argv, LabArgs *args) {
  const Ctx c = *cp;
  args->seed = 42;
  args->out = g_default_out;
  args->device = "cpu";
  args->epochs = -1;
  args->preset = NULL;
  args->data_dir = NULL;

  /* --help wins wherever it is, even after a bad flag */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
  }
  for (int i = 1; i < argc; i++) parse_flag(&c, argc, argv, &i, args);

  /* The one check of a device request: no GPU, no driver, or a CPU-only build. Not a usage
   * error (the flags were right): -2, and the lab says it in one line, without the usage. */
  args->dev = strcmp(args->device, "cuda") == 0 ? DEV_CUDA : DEV_CPU;
  if (args->dev == DEV_CUDA) {
    char why[400]; /* a card's name, both versions and what to do (cuda_start_problem) */
    if (!cuda_open(why, sizeof why)) {
      snprintf(c.err, c.errlen, "--device cuda: %s", why);
      return -2;
    }
  }
  return 0;
}

static bool is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

void cli_parse(int argc, char **argv, const char *lab, const char *summary, LabArgs *args,
               const CliOpt *extra) {
  /* Line-buffered even into a pipe or a file: `./lab06 | tee log` shows each line as it comes. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *prog = prog_name(argv, argc);
  lab = lab ? lab : "lab";
  snprintf(g_lab, sizeof g_lab, "%s", lab);
  die_set_program(g_lab);
  char err[512];
  int rc = cli_parse_args(argc, argv, lab, args, extra, err, sizeof err);
  if (rc == 1) {
    print_help(stdout, prog, lab, summary, extra);
    exit(0);
  }
  if (rc == -2) { /* the device: one line, exit 2 */
    fflush(stdout);
    fprintf(stderr, "error: %s: %s\n", lab, err);
    exit(2);
  }
  if (rc != 0) usage_exit(prog, lab, extra, err);
  /* A directory the user names must exist: no silent fall back to another place. */
  if (args->data_dir && !is_dir(args->data_dir)) {
    snprintf(err, sizeof err, "--data-dir %.400s: no such directory", args->data_dir);
    usage_exit(prog, lab, extra, err);
  }
  const char *env = getenv("D2L_DATA_DIR");
  if (env && *env && !is_dir(env)) {
    snprintf(err, sizeof err,
             "D2L_DATA_DIR=%.400s: no such directory (unset it, or point it at your data)", env);
    usage_exit(prog, lab, extra, err);
  }
  if (mkdir_p(args->out) != 0)
    die("cannot create the output directory '%s': %s (choose another with --out DIR)", args->out,
        strerror(errno));
  data_set_announce(1);
  tensor_set_default_device(args->dev); /* every tensor the lab creates from here lives there */
  rng_seed(args->seed);
}

void cli_check_output_file(const char *flag, const char *path) {
  if (!path) return;
  const char *lab = g_lab[0] ? g_lab : "lab";
  size_t n = strlen(path);
  char *dir = xmalloc(n + 2);
  memcpy(dir, path, n + 1);
  char *slash = strrchr(dir, '/');
  if (!slash) strcpy(dir, ".");
  else if (slash == dir) dir[1] = '\0'; /* "/x.bin": the root */
  else *slash = '\0';
  char why[1100] = "";
  if (n == 0 || path[n - 1] == '/' || is_dir(path))
    snprintf(why, sizeof why, "that is a directory; name a file in it");
  else if (!is_dir(dir))
    snprintf(why, sizeof why, "the directory %.1000s does not exist (create it first)", dir);
  else if (access(dir, W_OK | X_OK) != 0)
    snprintf(why, sizeof why, "the directory %.1000s is not writable", dir);
  if (why[0]) {
    fflush(stdout);
    fprintf(stderr, "error: %s: %s %s: %s\n", lab, flag, path, why);
    free(dir);
    exit(2);
  }
  free(dir);
}

/* ---------- progress line ---------- */

static bool g_line_open; /* an in-place line is on the terminal, waiting for its newline */

void progress_report(int epoch, int epochs, double loss, double rate, const char *unit,
                     const char *device) {
  char line[256];
  int n = snprintf(line, sizeof line, "epoch %d/%d, loss %.3f", epoch, epochs, loss);
  if (rate > 0 && n > 0 && (size_t)n < sizeof line)
    snprintf(line + n, sizeof line - (size_t)n, ", %.1f %s on %s", rate,
             unit ? unit : "examples/sec", device ? device : "cpu");
  if (isatty(STDOUT_FILENO)) {
    printf("\r%s\033[K", line); /* back to column 0, write, clear what a longer line left */
    fflush(stdout);
    g_line_open = true;
  } else {
    printf("%s\n", line);
    fflush(stdout);
  }
}

void progress_done(void) {
  if (g_line_open) {
    putchar('\n');
    fflush(stdout);
    g_line_open = false;
  }
}

void print_shape(const char *what, const Tensor *t) {
  char s[64];
  printf("%s: %s\n", what, shape_str(t, s, sizeof s));
}
