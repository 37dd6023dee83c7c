/* cli.c — the flags every lab takes (--seed --out --device --epochs --preset --data-dir --help),
 * a lab's own flags from a table, and the one-line training progress report. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
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
    {"--preset", "NAME", "a configuration of the book (default: this lab's own)"},
    {"--data-dir", "DIR", "where to look for data files first"},
    {"--help", NULL, "print this help and exit"},
};
#define N_COMMON ((int)(sizeof COMMON / sizeof COMMON[0]))

static char g_default_out[256]; /* "out/<lab>": args->out points here unless --out is given */

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
  for (int i = 0; i < N_COMMON; i++) usage_item(f, &col, COMMON[i].name, COMMON[i].metavar);
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
    snprintf(left, sizeof left, "%s%s%s", COMMON[i].name, COMMON[i].metavar ? " " : "",
             COMMON[i].metavar ? COMMON[i].metavar : "");
    if (strcmp(COMMON[i].name, "--out") == 0)
      fprintf(f, "  %-20s where figures and summary.json go (default out/%s)\n", left, lab);
    else
      fprintf(f, "  %-20s %s\n", left, COMMON[i].help);
  }
  if (extra && extra[0].name) {
    fprintf(f, "\n%s flags:\n", lab);
    for (const CliOpt *o = extra; o->name; o++) {
      char left[64], def[96] = "";
      const char *mv = metavar(o->type);
      snprintf(left, sizeof left, "%s%s%s", o->name, mv ? " " : "", mv ? mv : "");
      /* the value in dest before parsing is the default */
      if (o->dest) {
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
} Ctx;

/* A usage error: one line saying what was wrong, the usage line, exit 2. */
__attribute__((format(printf, 2, 3))) _Noreturn static void usage_error(const Ctx *c,
                                                                         const char *fmt, ...) {
  fflush(stdout);
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", c->lab);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  print_usage_line(stderr, c->prog, c->extra);
  fprintf(stderr, "(%s --help explains every flag)\n", c->prog);
  exit(2);
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

void cli_parse(int argc, char **argv, const char *lab, const char *summary, LabArgs *args,
               const CliOpt *extra) {
  Ctx c = {prog_name(argv, argc), lab ? lab : "lab", extra};
  snprintf(g_default_out, sizeof g_default_out, "out/%s", c.lab);
  args->seed = 42;
  args->out = g_default_out;
  args->device = "cpu";
  args->epochs = -1;
  args->preset = NULL;
  args->data_dir = NULL;

  /* --help wins wherever it is, even after a bad flag */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      print_help(stdout, c.prog, c.lab, summary, extra);
      exit(0);
    }
  }

  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
      usage_error(&c, "unexpected argument '%s' (flags start with --)", arg);
    /* split "--flag=value" */
    char name[128];
    const char *eq = strchr(arg, '=');
    const char *inline_val = NULL;
    size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
    if (nlen >= sizeof name) usage_error(&c, "unknown flag '%.40s...'", arg);
    memcpy(name, arg, nlen);
    name[nlen] = '\0';
    if (eq) inline_val = eq + 1;

    /* what kind of value does it take? */
    int common = -1;
    const CliOpt *opt = NULL;
    for (int k = 0; k < N_COMMON; k++)
      if (strcmp(name, COMMON[k].name) == 0) common = k;
    if (common < 0 && extra)
      for (const CliOpt *o = extra; o->name; o++)
        if (strcmp(name, o->name) == 0) opt = o;
    if (common < 0 && !opt) {
      const char *best = NULL;
      int bd = 3; /* suggest only close matches */
      for (int k = 0; k < N_COMMON; k++) {
        int d = edit_distance(name, COMMON[k].name);
        if (d < bd) bd = d, best = COMMON[k].name;
      }
      if (extra)
        for (const CliOpt *o = extra; o->name; o++) {
          int d = edit_distance(name, o->name);
          if (d < bd) bd = d, best = o->name;
        }
      if (best) usage_error(&c, "unknown flag '%s' (did you mean %s?)", name, best);
      usage_error(&c, "unknown flag '%s'", name);
    }

    bool is_flag = opt && opt->type == OPT_FLAG;
    const char *val = NULL;
    if (is_flag) {
      if (inline_val) usage_error(&c, "%s is a switch and takes no value (got '%s')", name,
                                  inline_val);
    } else if (inline_val) {
      val = inline_val;
    } else {
      /* a following "--something" is the next flag, not this one's value */
      if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)
        usage_error(&c, "%s needs a value", name);
      val = argv[++i];
    }
    if (val && !*val) usage_error(&c, "%s needs a value, got an empty one", name);

    if (common >= 0) {
      const char *n = COMMON[common].name;
      if (strcmp(n, "--seed") == 0) {
        args->seed = parse_seed(&c, val);
      } else if (strcmp(n, "--out") == 0) {
        args->out = val;
      } else if (strcmp(n, "--device") == 0) {
        if (strcmp(val, "cpu") != 0 && strcmp(val, "cuda") != 0)
          usage_error(&c, "--device is cpu or cuda, got '%s'", val);
        args->device = val;
      } else if (strcmp(n, "--epochs") == 0) {
        args->epochs = (int)parse_long(&c, "--epochs", val, 0, INT_MAX);
      } else if (strcmp(n, "--preset") == 0) {
        args->preset = val;
      } else if (strcmp(n, "--data-dir") == 0) {
        args->data_dir = val;
      }
      continue;
    }
    if (!opt->dest) continue;
    switch (opt->type) {
    case OPT_FLAG: *(bool *)opt->dest = true; break;
    case OPT_INT: *(int *)opt->dest = (int)parse_long(&c, name, val, INT_MIN, INT_MAX); break;
    case OPT_FLOAT: *(float *)opt->dest = parse_float(&c, name, val); break;
    case OPT_STR: *(const char **)opt->dest = val; break;
    }
  }

  /* The one check of a device request: a device without a kernel table in this build. From
   * here on every tensor the lab creates lives on it (tensor_set_default_device). */
  args->dev = strcmp(args->device, "cuda") == 0 ? DEV_CUDA : DEV_CPU;
  if (!backend_available(args->dev)) {
    fflush(stdout);
    fprintf(stderr,
            "%s: this build has no CUDA kernels (the CUDA backend is not written yet, or nvcc "
            "was not found at build time); run with --device cpu\n",
            c.lab);
    exit(2);
  }
  tensor_set_default_device(args->dev);

  if (mkdir_p(args->out) != 0)
    die("%s: cannot create the output directory '%s': %s (choose another with --out DIR)",
        c.lab, args->out, strerror(errno));
  rng_seed(args->seed);
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
