/* grader.c — the harness and main() behind `make grade`.
 *
 * Every GRADED_TEST registers itself before main() (grade.h). main() runs each selected test in
 * its own child process and turns what happened into points:
 *
 *   parent                                    child (fork)
 *   pipe, fresh 128-bit random nonce    ──►   own process group, killed if the parent dies
 *                                             stdin </dev/null, stdout+stderr -> capture file
 *                                             cwd: an empty scratch directory
 *                                             limits: address space, CPU time, file size
 *                                             runs the test; each failed EXPECT, and at the
 *   reads the pipe, kills the group at  ◄──   end the verdict, go over the pipe as records
 *   the wall-time limit                       stamped with the nonce
 *
 * Only a verdict earns points, and only the harness writes one, after the test function has
 * returned. So exit(0) or _exit() in exercise code, printing "PASS" or "Score: 100/100",
 * crashing, hanging, flooding the terminal or writing results.json all score zero for that
 * test and cannot touch the others: each test starts from a fresh fork of a parent that never
 * calls exercise code, in its own scratch directory. results.json is written by the parent at
 * the very end (to a temporary file, then renamed), and the parent leaves with _exit() so no
 * atexit handler or destructor planted by student code runs after it.
 *
 * Outcomes: passed, wrong answer (with the EXPECT messages), not implemented (a stub's message
 * in the output), crash (signal), timeout, out of memory, exited early (no verdict), tampered
 * (the verdict channel carried bytes the harness did not write).
 *
 *   grade [--lab NN] [--only TEXT] [--timeout S] [--mem MIB] [--json FILE] [--list] [-v]
 *
 * Exit status: 0 at full marks, 1 otherwise, 2 when there is nothing to grade or bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../common/rng.h"
#include "../../common/util.h"
#include "grade.h"

#ifndef GRADE_VARIANT
#define GRADE_VARIANT ""
#endif

#define DEFAULT_TIMEOUT_S 10.0
#define DEFAULT_MEM_MIB 1024L
#define GRADE_SEED 1234         /* every test starts from the same random stream */
#define CHAN_FD 3               /* the child's end of the verdict pipe */
#define MAX_FAIL_RECORDS 8      /* failed EXPECTs reported per test: the first say enough */
#define MAX_MSG 512             /* bytes per failure message (a record stays < PIPE_BUF) */
#define CHAN_CAP (64 * 1024)    /* more than this on the channel can only be tampering */
#define CAPTURE_CAP (1L << 20)  /* program output kept per test (RLIMIT_FSIZE) */
#define SHOW_HEAD 1536          /* output bytes shown from the start ... */
#define SHOW_TAIL 1536          /* ... and from the end */
#define OOM_MARGIN (64L << 20)  /* peak address space this close to the limit reads as OOM */
#define STUB_MARK "is not implemented yet" /* what exercise_todo() prints */

/* ------------------------------------------------------------------ small strings */

typedef struct {
  char *s;
  size_t len, cap;
} Str;

static void str_add(Str *b, const char *p, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    b->s = xrealloc(b->s, cap);
    b->cap = cap;
  }
  memcpy(b->s + b->len, p, n);
  b->len += n;
  b->s[b->len] = '\0';
}

__attribute__((format(printf, 2, 3))) static void str_printf(Str *b, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  str_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static char *str_take(Str *b) { /* the string, "" when empty; b is reset */
  char *s = b->s ? b->s : xstrdup("");
  *b = (Str){0};
  return s;
}

/* "tests/grade/lab02/test_x.c" out of whatever path the compiler was given */
static const char *short_path(const char *file) {
  const char *p = strstr(file, "tests/");
  return p ? p : file;
}

/* ------------------------------------------------------------------ registry */

typedef enum {
  OUT_PASSED,
  OUT_WRONG,
  OUT_TODO,
  OUT_CRASH,
  OUT_TIMEOUT,
  OUT_OOM,
  OUT_EXITED,
  OUT_TAMPERED,
} Outcome;

static const char *const OUTCOME_TEXT[] = {"passed", "wrong answer", "not implemented", "crash",
                                           "timeout", "out of memory", "exited early",
                                           "tampered"};
static const char *const OUTCOME_ID[] = {"passed", "wrong_answer", "not_implemented", "crash",
                                         "timeout", "out_of_memory", "exited_early", "tampered"};

typedef struct {
  /* registration */
  const char *name, *desc, *file;
  int points, lab, seq;
  GradedFn fn;
  double timeout_s; /* 0: the default */
  bool hidden;
  /* result */
  Outcome outcome;
  int score;
  double seconds;
  char *why;      /* one line on what happened, "" when passed or plainly wrong */
  char *fails;    /* failed EXPECT messages, one per line */
  int nfails;     /* how many EXPECTs failed (may exceed the messages kept) */
  char *output;   /* program output, head and tail */
  long output_bytes;
} Graded;

static Graded *g_tests;
static int g_ntests, g_tests_cap;
static bool g_frozen; /* main() has started: registrations are over */

typedef struct {
  const char *name;
  double seconds;
} TimeoutOverride;
static TimeoutOverride *g_overrides;
static int g_noverrides;

void graded_register(const char *name, int points, const char *desc, GradedFn fn,
                     const char *file) {
  if (g_frozen) return; /* only constructors register; nothing may add tests at run time */
  if (g_ntests == g_tests_cap) {
    g_tests_cap = g_tests_cap ? 2 * g_tests_cap : 64;
    g_tests = xrealloc(g_tests, (size_t)g_tests_cap * sizeof *g_tests);
  }
  g_tests[g_ntests] = (Graded){.name = name, .desc = desc ? desc : "", .file = file,
                               .points = points, .fn = fn, .seq = g_ntests,
                               .hidden = strstr(file, "hidden/") != NULL};
  g_ntests++;
}

void graded_set_timeout(const char *name, double seconds) {
  if (g_frozen) return;
  g_overrides = xrealloc(g_overrides, (size_t)(g_noverrides + 1) * sizeof *g_overrides);
  g_overrides[g_noverrides++] = (TimeoutOverride){name, seconds};
}

/* "lab02_..." -> 2; -1 when the name does not start with its lab */
static int lab_of(const char *name) {
  if (strncmp(name, "lab", 3) != 0) return -1;
  if (name[3] < '0' || name[3] > '9' || name[4] < '0' || name[4] > '9' || name[5] != '_')
    return -1;
  return (name[3] - '0') * 10 + (name[4] - '0');
}

/* Registration problems are the test author's (or a cheat's): refuse to grade at all. */
static bool validate_tests(void) {
  bool ok = true;
  for (int i = 0; i < g_ntests; i++) {
    Graded *t = &g_tests[i];
    t->lab = lab_of(t->name);
    const char *f = short_path(t->file);
    if (t->lab < 0) {
      fprintf(stderr, "grade: test %s (%s): a graded test's name starts with its lab, "
                      "like lab02_masked_softmax\n", t->name, f);
      ok = false;
    }
    if (t->points < 1) {
      fprintf(stderr, "grade: test %s (%s): points must be at least 1, got %d\n", t->name, f,
              t->points);
      ok = false;
    }
    if (strncmp(f, "tests/grade/", 12) && strncmp(f, "tests/hidden/", 13) &&
        strncmp(f, "tests/grader/", 13)) {
      fprintf(stderr, "grade: test %s is registered from %s; graded tests live in "
                      "tests/grade/labNN/ or tests/hidden/labNN/\n", t->name, f);
      ok = false;
    }
    for (int j = 0; j < i; j++)
      if (!strcmp(g_tests[j].name, t->name)) {
        fprintf(stderr, "grade: test %s is defined twice (%s and %s); names must be unique\n",
                t->name, short_path(g_tests[j].file), f);
        ok = false;
      }
  }
  for (int k = 0; k < g_noverrides; k++) {
    int found = 0;
    for (int i = 0; i < g_ntests; i++)
      if (!strcmp(g_tests[i].name, g_overrides[k].name)) {
        g_tests[i].timeout_s = g_overrides[k].seconds;
        found = 1;
      }
    if (!found || !(g_overrides[k].seconds > 0)) {
      fprintf(stderr, "grade: GRADED_TIMEOUT(%s, %g): %s\n", g_overrides[k].name,
              g_overrides[k].seconds, found ? "seconds must be positive" : "no such test");
      ok = false;
    }
  }
  return ok;
}

/* Labs in order; within a lab the handed-out tests first, then file and definition order. */
static int cmp_tests(const void *pa, const void *pb) {
  const Graded *a = pa, *b = pb;
  if (a->lab != b->lab) return a->lab < b->lab ? -1 : 1;
  if (a->hidden != b->hidden) return a->hidden ? 1 : -1;
  int c = strcmp(short_path(a->file), short_path(b->file));
  if (c) return c;
  return (a->seq > b->seq) - (a->seq < b->seq);
}

/* ------------------------------------------------------------------ the child's side */
/* The channel is a stream of records: header (nonce, type, length) + payload. A child writes
 * one record per failed EXPECT (up to MAX_FAIL_RECORDS) and a verdict when the test returns; a
 * child that dies of a signal or calls exit() first reports its peak address space (VmPeak),
 * which tells "out of memory" from other deaths. */

enum { REC_FAIL = 1, REC_VERDICT = 2, REC_VMPEAK = 3 };
typedef struct {
  uint64_t nonce[2];
  uint32_t type, len;
} RecHeader;

static int g_chan = -1;       /* in a child: the verdict pipe; -1 in the parent */
static uint64_t g_nonce[2];   /* this test's nonce, set by the parent just before fork */
static int g_failures;        /* failed EXPECTs in the running test */

static void chan_send(uint32_t type, const void *payload, size_t len) {
  unsigned char rec[sizeof(RecHeader) + MAX_MSG];
  if (len > MAX_MSG) len = MAX_MSG;
  RecHeader h = {{g_nonce[0], g_nonce[1]}, type, (uint32_t)len};
  memcpy(rec, &h, sizeof h);
  memcpy(rec + sizeof h, payload, len);
  /* one write of < PIPE_BUF bytes is atomic on a pipe */
  ssize_t w;
  do w = write(g_chan, rec, sizeof h + len);
  while (w < 0 && errno == EINTR);
}

void grade_fail(const char *file, int line, const char *fmt, ...) {
  char msg[MAX_MSG];
  int k = snprintf(msg, sizeof msg, "%s:%d: ", short_path(file), line);
  if (k < 0 || k >= (int)sizeof msg) k = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap);
  va_end(ap);
  g_failures++;
  if (g_chan < 0)
    fprintf(stderr, "%s\n", msg); /* not inside a graded test */
  else if (g_failures <= MAX_FAIL_RECORDS)
    chan_send(REC_FAIL, msg, strlen(msg));
}

/* Send VmPeak from /proc/self/status. Async-signal-safe: it runs in fatal-signal handlers. */
static void report_vm_peak(void) {
  static char buf[4096];
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = '\0';
  const char *p = strstr(buf, "VmPeak:");
  if (!p) return;
  uint64_t kb = 0;
  for (p += 7; *p == ' ' || *p == '\t'; p++) {
  }
  for (; *p >= '0' && *p <= '9'; p++) kb = kb * 10 + (uint64_t)(*p - '0');
  uint64_t bytes = kb << 10;
  chan_send(REC_VMPEAK, &bytes, sizeof bytes);
}

static void on_fatal_signal(int sig) {
  report_vm_peak();
  raise(sig); /* the handler was reset on entry (SA_RESETHAND): this one is fatal */
}

static void watch_fatal_signals(void) {
  static char altstack[64 * 1024]; /* a stack overflow needs somewhere to run the handler */
  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
  sigaltstack(&ss, NULL);
  struct sigaction sa = {.sa_handler = on_fatal_signal,
                         .sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER};
  sigemptyset(&sa.sa_mask);
  const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
  atexit(report_vm_peak); /* exit() before the verdict, e.g. die("out of memory ...") */
}

static void fmt_shape(char *buf, size_t n, int ndim, const int *shape) {
  size_t k = (size_t)snprintf(buf, n, "(");
  for (int i = 0; i < ndim && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, i ? ", %d" : "%d", shape[i]);
  if (k < n) snprintf(buf + k, n - k, ")");
}

/* Returns 1 when t has the shape, else records a failure and returns 0. */
int expect_shape_(const char *file, int line, const Tensor *t, const char *what, int ndim,
                  const int *shape) {
  char want[64], got[64];
  fmt_shape(want, sizeof want, ndim, shape);
  if (!t) {
    grade_fail(file, line, "%s: expected a tensor of shape %s, got NULL (not implemented yet?)",
               what, want);
    return 0;
  }
  if (t->ndim == ndim && !memcmp(t->shape, shape, (size_t)ndim * sizeof *shape)) return 1;
  fmt_shape(got, sizeof got, t->ndim < 0 || t->ndim > T_MAXDIM ? 0 : t->ndim, t->shape);
  grade_fail(file, line, "%s: expected shape %s, got %s", what, want, got);
  return 0;
}

/* Returns 1 when every got[i] is within atol + rtol*|want[i]| of want[i] (equal infinities
 * match; NaN never does), else records the first mismatch and how many there are. */
int expect_close_(const char *file, int line, const float *got, const float *want, long n,
                  double atol, double rtol, const char *what) {
  if (!got) {
    grade_fail(file, line, "%s: got NULL (not implemented yet?)", what);
    return 0;
  }
  long bad = 0, first = -1;
  for (long i = 0; i < n; i++) {
    double g = got[i], w = want[i];
    if (g == w || fabs(g - w) <= atol + rtol * fabs(w)) continue;
    if (first < 0) first = i;
    bad++;
  }
  if (!bad) return 1;
  grade_fail(file, line,
             "%s[%ld]: expected %.7g, got %.7g (%ld of %ld values off; tolerance %.1g + %.1g*|expected|)",
             what, first, (double)want[first], (double)got[first], bad, n, atol, rtol);
  return 0;
}

int expect_inverted_dropout_half_(const char *file, int line, const float *got,
                                  const float *want, long n) {
  if (!got) {
    grade_fail(file, line, "training-mode output: got NULL (not implemented yet?)");
    return 0;
  }
  long zeros = 0, kept = 0, other = 0;
  for (long i = 0; i < n; i++) {
    double o = got[i], w2 = 2.0 * want[i];
    if (o == 0) zeros++;
    else if (fabs(o - w2) <= 1e-5 * (1 + w2)) kept++; /* float32 rounding of w / (1 - p) */
    else other++;
  }
  if (other)
    grade_fail(file, line, "training with dropout 0.5: every output weight must be 0 or 2 w "
               "(inverted dropout on the weights, Dropout_forward); %ld entries are neither", other);
  else if (!zeros || !kept)
    grade_fail(file, line, "training with dropout 0.5: expected some weights dropped and some "
               "kept, got %ld dropped and %ld kept (is dropout applied when training?)", zeros, kept);
  return !other && zeros && kept;
}

/* ------------------------------------------------------------------ options */

typedef struct {
  int lab;            /* -1: every lab */
  const char *only;   /* substring of test names, or NULL */
  double timeout_s;   /* default wall-time limit per test */
  long mem_mib;       /* address space a test may add to the grader's own; 0: no limit */
  const char *json;   /* results file; NULL: none */
  bool list, verbose;
} Options;

static _Noreturn void usage(int status) {
  FILE *f = status ? stderr : stdout;
  fprintf(f,
          "usage: grade [--lab NN] [--only TEXT] [--timeout S] [--mem MIB] [--json FILE] "
          "[--list] [-v]\n"
          "  --lab NN      grade one lab (02, 2 or lab02)\n"
          "  --only TEXT   only tests whose name contains TEXT\n"
          "  --timeout S   wall-time limit per test in seconds (default %g; GRADED_TIMEOUT "
          "overrides)\n"
          "  --mem MIB     memory a test may use, MiB (default %ld; 0 = no limit)\n"
          "  --json FILE   Gradescope results file (default results.json; '' = none)\n"
          "  --list        list the tests and their points, run nothing\n"
          "  -v            show each failing test's full captured output\n"
          "Exit status: 0 at full marks, 1 otherwise, 2 on usage errors.\n",
          DEFAULT_TIMEOUT_S, DEFAULT_MEM_MIB);
  fflush(f);
  _exit(status);
}

static double parse_number(const char *opt, const char *s, double lo) {
  char *end;
  double v = s ? strtod(s, &end) : NAN;
  if (!s || end == s || *end || !(v >= lo)) {
    fprintf(stderr, "grade: %s needs a number >= %g, got '%s'\n", opt, lo, s ? s : "");
    usage(2);
  }
  return v;
}

static Options parse_args(int argc, char **argv) {
  Options o = {.lab = -1, .timeout_s = DEFAULT_TIMEOUT_S, .mem_mib = DEFAULT_MEM_MIB,
               .json = "results.json"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--lab")) {
      const char *s = v ? v : "";
      if (!strncmp(s, "lab", 3)) s += 3;
      o.lab = (int)parse_number(a, s, 0);
      i++;
    } else if (!strcmp(a, "--only")) {
      if (!v) usage(2);
      o.only = v;
      i++;
    } else if (!strcmp(a, "--timeout")) {
      o.timeout_s = parse_number(a, v, 0.01);
      i++;
    } else if (!strcmp(a, "--mem")) {
      o.mem_mib = (long)parse_number(a, v, 0);
      i++;
    } else if (!strcmp(a, "--json")) {
      if (!v) usage(2);
      o.json = *v ? v : NULL;
      i++;
    } else if (!strcmp(a, "--list")) {
      o.list = true;
    } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
      o.verbose = true;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(0);
    } else {
      fprintf(stderr, "grade: unknown argument '%s'\n", a);
      usage(2);
    }
  }
  return o;
}

/* ------------------------------------------------------------------ the parent's side */

static pid_t g_parent;
static int g_wake[2] = {-1, -1};        /* self-pipe: SIGCHLD and SIGINT wake the wait loop */
static volatile sig_atomic_t g_stop;    /* a signal asked the grader to stop */
static char g_root[4096];               /* where the grader started ($GRADE_ROOT) */
static char g_scratch[4096];            /* this run's temporary directory */
static rlim_t g_as_limit;               /* RLIMIT_AS for a child; 0: none */

static void on_signal(int sig) {
  int saved = errno;
  if (sig != SIGCHLD) g_stop = sig;
  ssize_t w = write(g_wake[1], "", 1); /* full pipe: a wake-up is already pending */
  (void)w;
  errno = saved;
}

static void install_handlers(void) {
  if (pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) die("grader: pipe: %s", strerror(errno));
  struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

/* The grader's own address-space size: a test's limit comes on top of it, so thread pools
 * and BLAS buffers reserved before main() do not eat into the test's share. */
static rlim_t current_vm_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (f) {
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
  }
  return (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
}

static void set_limit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit cur, rl = {soft, hard};
  if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
    if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > cur.rlim_max) rl.rlim_max = cur.rlim_max;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > rl.rlim_max) rl.rlim_cur = rl.rlim_max;
  }
  setrlimit(resource, &rl);
}

static void close_fds_from(int lowfd) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  if (close_range((unsigned)lowfd, ~0U, 0) == 0) return;
#endif
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536) max = 65536;
  for (int fd = lowfd; fd < max; fd++) close(fd);
}

/* In the child: isolate, limit, run the test, and report. Never returns. */
static _Noreturn void child_run(const Graded *t, int chan, const char *out_path,
                                const char *dir, double timeout_s) {
  setpgid(0, 0);                        /* one group: a timeout kills its descendants too */
  prctl(PR_SET_PDEATHSIG, SIGKILL);     /* no orphans if the grader is killed */
  if (getppid() != g_parent) _exit(127);
  signal(SIGCHLD, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGHUP, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGXFSZ, SIG_IGN);             /* past the output cap writes fail, the test goes on */

  int in = open("/dev/null", O_RDONLY);
  int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
  if (in < 0 || out < 0) _exit(126);
  dup2(in, 0);
  dup2(out, 1);
  dup2(out, 2);
  if (chan != CHAN_FD) dup2(chan, CHAN_FD);
  close_fds_from(CHAN_FD + 1);          /* the capture file, the grader's other pipes */
  g_chan = CHAN_FD;
  if (chdir(dir) != 0) _exit(125);
  setenv("GRADE_ROOT", g_root, 1);

  set_limit(RLIMIT_CORE, 0, 0);
  set_limit(RLIMIT_FSIZE, (rlim_t)CAPTURE_CAP, (rlim_t)CAPTURE_CAP);
  if (g_as_limit) set_limit(RLIMIT_AS, g_as_limit, g_as_limit);
  /* CPU time is a backstop behind the wall clock; every core may be busy for the whole time */
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  rlim_t cpu = (rlim_t)ceil(timeout_s * (double)(ncpu > 0 ? ncpu : 1)) + 1;
  set_limit(RLIMIT_CPU, cpu, cpu + 1);

  watch_fatal_signals();
  g_failures = 0;
  rng_seed(GRADE_SEED);
  ag_set_grad_enabled(true);
  t->fn();
  fflush(stdout);
  uint32_t failures = (uint32_t)g_failures;
  chan_send(REC_VERDICT, &failures, sizeof failures);
  _exit(0); /* no atexit handlers: the verdict is in */
}

/* What the parent saw of one child. */
typedef struct {
  uint64_t nonce[2];     /* the nonce this child was given */
  unsigned char *chan;   /* bytes read from the verdict pipe (CHAN_CAP) */
  size_t chan_len;
  bool chan_overflow, timed_out, stopped;
  int status;            /* from waitpid */
  double seconds;
} RunInfo;

static void drain_wake(void) {
  char buf[64];
  while (read(g_wake[0], buf, sizeof buf) > 0) {
  }
}

/* Read what the pipe holds now; false once it is closed (or over its cap). */
static bool read_chan(int fd, RunInfo *r) {
  for (;;) {
    unsigned char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      if (r->chan_len + (size_t)n > CHAN_CAP) {
        r->chan_overflow = true;
        return false;
      }
      memcpy(r->chan + r->chan_len, buf, (size_t)n);
      r->chan_len += (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;
  }
}

/* Whether the child has exited, without reaping it: until it is reaped its pid (and so its
 * process group id) cannot be reused, which makes killing the group safe. */
static bool has_exited(pid_t pid) {
  siginfo_t si = {0};
  return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

static void kill_group(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL); /* in case it never got to setpgid */
}

static void new_nonce(uint64_t nonce[2]) {
  if (getrandom(nonce, 2 * sizeof *nonce, 0) == (ssize_t)(2 * sizeof *nonce)) return;
  /* no getrandom(): still unknown to student code until the fork hands it over */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 48;
  for (int i = 0; i < 2; i++) { /* splitmix64 */
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    nonce[i] = z ^ (z >> 31);
  }
}

/* Fork the test, watch it until it exits or its time is up, and collect the channel. */
static void supervise(const Graded *t, const char *out_path, const char *dir, double timeout_s,
                      RunInfo *r) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) die("grader: pipe: %s", strerror(errno));
  new_nonce(r->nonce);
  memcpy(g_nonce, r->nonce, sizeof g_nonce); /* the child inherits it with its memory */
  fflush(NULL);                              /* nothing buffered may be written twice */
  double t0 = now_seconds();
  pid_t pid = fork();
  if (pid < 0) die("grader: fork: %s", strerror(errno));
  if (pid == 0) {
    close(p[0]);
    child_run(t, p[1], out_path, dir, timeout_s);
  }
  memset(g_nonce, 0, sizeof g_nonce);
  setpgid(pid, pid); /* also here, so a kill of the group can never miss it */
  close(p[1]);
  fcntl(p[0], F_SETFL, O_NONBLOCK);

  bool open_chan = true;
  double deadline = t0 + timeout_s;
  for (;;) {
    if (has_exited(pid)) break;
    double left = deadline - now_seconds();
    if (left <= 0 || g_stop || r->chan_overflow) {
      r->timed_out = left <= 0 && !g_stop && !r->chan_overflow;
      r->stopped = g_stop != 0;
      break;
    }
    /* sleep until the pipe has data, the child exits (SIGCHLD), a signal, or the deadline */
    struct pollfd fds[2] = {{open_chan ? p[0] : -1, POLLIN, 0}, {g_wake[0], POLLIN, 0}};
    if (poll(fds, 2, (int)ceil(left * 1000.0)) < 0 && errno != EINTR)
      die("grader: poll: %s", strerror(errno));
    drain_wake();
    if (open_chan && fds[0].revents) open_chan = read_chan(p[0], r);
  }
  r->seconds = now_seconds() - t0;
  kill_group(pid); /* the test if it is still running, and descendants that outlived it */
  while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR) {
  }
  if (open_chan) read_chan(p[0], r);
  close(p[0]);
}

/* At most SHOW_HEAD + SHOW_TAIL bytes of the capture file, NULs made visible. */
static char *read_capture(const char *path, long *total) {
  Str b = {0};
  *total = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) close(fd);
    return str_take(&b);
  }
  long size = (long)st.st_size;
  *total = size;
  char buf[SHOW_HEAD + SHOW_TAIL];
  if (size <= SHOW_HEAD + SHOW_TAIL) {
    ssize_t n = pread(fd, buf, (size_t)size, 0);
    if (n > 0) str_add(&b, buf, (size_t)n);
  } else {
    ssize_t n = pread(fd, buf, SHOW_HEAD, 0);
    if (n > 0) str_add(&b, buf, (size_t)n);
    str_printf(&b, "\n[... %ld bytes not shown ...]\n", size - SHOW_HEAD - SHOW_TAIL);
    n = pread(fd, buf, SHOW_TAIL, (off_t)(size - SHOW_TAIL));
    if (n > 0) str_add(&b, buf, (size_t)n);
    if (size >= CAPTURE_CAP)
      str_printf(&b, "\n[output cut off at the %ld MiB limit]\n", CAPTURE_CAP >> 20);
  }
  close(fd);
  for (size_t i = 0; i < b.len; i++)
    if (b.s[i] == '\0') b.s[i] = '?';
  return str_take(&b);
}

static void signal_name(int sig, char *buf, size_t n) {
  const char *abbrev = sigabbrev_np(sig), *desc = strsignal(sig);
  if (abbrev)
    snprintf(buf, n, "SIG%s (%s)", abbrev, desc ? desc : "signal");
  else
    snprintf(buf, n, "signal %d", sig);
}

/* The line of s that contains mark, as a new string; NULL when there is none. */
static char *line_with(const char *s, const char *mark) {
  const char *m = strstr(s, mark);
  if (!m) return NULL;
  const char *a = m, *z = m;
  while (a > s && a[-1] != '\n') a--;
  while (*z && *z != '\n') z++;
  Str b = {0};
  str_add(&b, a, (size_t)(z - a));
  return str_take(&b);
}

/* Turn what the parent saw into an outcome, a score and the messages. */
static void classify(Graded *t, const RunInfo *r, const char *out_path, double timeout_s,
                     long mem_mib) {
  /* the channel must hold records stamped with this child's nonce and nothing else */
  Str fails = {0}, why = {0};
  bool verdict = false, tampered = r->chan_overflow;
  uint32_t verdict_failures = 0;
  uint64_t vm_peak = 0;
  int nrec = 0;
  for (size_t off = 0; !tampered && off < r->chan_len;) {
    RecHeader h;
    if (r->chan_len - off < sizeof h) {
      tampered = true;
      break;
    }
    memcpy(&h, r->chan + off, sizeof h);
    off += sizeof h;
    if (h.nonce[0] != r->nonce[0] || h.nonce[1] != r->nonce[1] || h.len > MAX_MSG ||
        h.len > r->chan_len - off || verdict) {
      tampered = true;
    } else if (h.type == REC_FAIL) {
      str_add(&fails, (const char *)r->chan + off, h.len);
      str_add(&fails, "\n", 1);
      nrec++;
    } else if (h.type == REC_VMPEAK && h.len == sizeof vm_peak) {
      memcpy(&vm_peak, r->chan + off, sizeof vm_peak);
    } else if (h.type == REC_VERDICT && h.len == sizeof verdict_failures) {
      memcpy(&verdict_failures, r->chan + off, sizeof verdict_failures);
      verdict = true;
    } else {
      tampered = true;
    }
    off += h.len;
  }
  t->nfails = verdict && (int)verdict_failures > nrec ? (int)verdict_failures : nrec;
  if (t->nfails > nrec) str_printf(&fails, "(%d more failed checks not shown)\n", t->nfails - nrec);
  t->fails = str_take(&fails);
  t->seconds = r->seconds;
  t->output = read_capture(out_path, &t->output_bytes);

  char sig[96] = "";
  if (WIFSIGNALED(r->status)) signal_name(WTERMSIG(r->status), sig, sizeof sig);
  char *stub = line_with(t->output, STUB_MARK);
  /* out of memory: address space near the limit when it died, a message saying so, or a
   * SIGKILL the grader did not send (the kernel's OOM killer) */
  uint64_t margin = (uint64_t)(mem_mib << 20) / 4 < (uint64_t)OOM_MARGIN
                        ? (uint64_t)(mem_mib << 20) / 4 : (uint64_t)OOM_MARGIN;
  bool oom = (g_as_limit && vm_peak && vm_peak + margin >= g_as_limit) ||
             strstr(t->output, "out of memory") || strstr(t->output, "Cannot allocate memory") ||
             (WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGKILL);

  if (tampered) {
    t->outcome = OUT_TAMPERED;
    str_printf(&why, "the verdict channel carried data the grader did not write");
  } else if (verdict) {
    t->outcome = verdict_failures == 0 && nrec == 0 ? OUT_PASSED : stub ? OUT_TODO : OUT_WRONG;
    if (t->outcome == OUT_TODO) str_printf(&why, "%s", stub);
  } else if (r->timed_out) {
    t->outcome = OUT_TIMEOUT;
    str_printf(&why, "still running after %g s (the time limit); stopped", timeout_s);
  } else if (WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGXCPU) {
    t->outcome = OUT_TIMEOUT;
    str_printf(&why, "used up its CPU time; stopped");
  } else if (oom) {
    t->outcome = OUT_OOM;
    if (mem_mib > 0)
      str_printf(&why, "ran out of memory (limit %ld MiB); ", mem_mib);
    else
      str_printf(&why, "ran out of memory; ");
    if (*sig)
      str_printf(&why, "then killed by %s", sig);
    else
      str_printf(&why, "then exited with status %d", WEXITSTATUS(r->status));
  } else if (WIFSIGNALED(r->status)) {
    t->outcome = OUT_CRASH;
    str_printf(&why, "killed by %s", sig);
  } else if (stub) {
    t->outcome = OUT_TODO;
    str_printf(&why, "%s", stub);
  } else {
    t->outcome = OUT_EXITED;
    str_printf(&why, "the process exited (status %d) before the test finished: exit() or "
                     "_exit() in exercise code, or a fatal error (see the output)",
               WEXITSTATUS(r->status));
  }
  free(stub);
  t->why = str_take(&why);
  t->score = t->outcome == OUT_PASSED ? t->points : 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static void remove_tree(const char *path) {
  nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void run_one(Graded *t, const Options *o) {
  double timeout_s = t->timeout_s > 0 ? t->timeout_s : o->timeout_s;
  char dir[sizeof g_scratch + 16], out[sizeof g_scratch + 16];
  snprintf(dir, sizeof dir, "%s/%03d", g_scratch, t->seq);
  snprintf(out, sizeof out, "%s/%03d.out", g_scratch, t->seq);
  if (mkdir(dir, 0700) != 0) die("grader: cannot create %s: %s", dir, strerror(errno));
  RunInfo r = {.chan = xmalloc(CHAN_CAP)};
  supervise(t, out, dir, timeout_s, &r);
  if (!r.stopped) classify(t, &r, out, timeout_s, o->mem_mib);
  free(r.chan);
  remove_tree(dir);
  unlink(out);
}

/* ------------------------------------------------------------------ reporting */

/* Print n bytes of untrusted text: control characters (terminal escapes) become '?'. */
static void print_clean(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    putchar(c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f) ? c : '?');
  }
}

/* Print up to max lines of text, each indented; the last max lines when from_end. */
static void print_lines(const char *text, int max, bool from_end, const char *indent) {
  const char *start = text, *end = text + strlen(text);
  while (end > text && end[-1] == '\n') end--;
  if (from_end) {
    int k = 0;
    for (start = end; start > text; start--)
      if (start[-1] == '\n' && ++k == max) break;
  }
  int shown = 0;
  for (const char *p = start; p < end && shown < max; shown++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *z = nl ? nl : end;
    fputs(indent, stdout);
    print_clean(p, (size_t)(z - p) < 300 ? (size_t)(z - p) : 300);
    putchar('\n');
    p = nl ? nl + 1 : end;
  }
}

static void print_row(const Graded *t, int name_w, bool verbose) {
  printf("  %-15s %3d/%-3d %-*s  %s%s", OUTCOME_TEXT[t->outcome], t->score, t->points, name_w,
         t->name, t->desc, t->hidden ? " (hidden)" : "");
  if (t->seconds >= 1.0) printf("  [%.1f s]", t->seconds);
  putchar('\n');
  if (t->outcome == OUT_PASSED) return;
  const char *ind = "        ";
  if (*t->why) print_lines(t->why, 1, false, ind);
  if (*t->fails && t->outcome != OUT_TODO) print_lines(t->fails, 4, false, ind);
  bool show_tail = t->outcome == OUT_CRASH || t->outcome == OUT_EXITED ||
                   t->outcome == OUT_OOM || t->outcome == OUT_TIMEOUT;
  if (verbose && t->output_bytes) {
    printf("%s--- output (%ld bytes) ---\n", ind, t->output_bytes);
    print_lines(t->output, 1 << 20, false, ind);
  } else if (show_tail && t->output_bytes) {
    printf("%soutput ends with:\n", ind);
    print_lines(t->output, 3, true, "          ");
  }
}

/* JSON string from untrusted bytes: escapes, and U+FFFD for bytes that are not UTF-8. */
static size_t utf8_seq_len(const unsigned char *p) {
  int n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
  if (p[0] >= 0xf5) n = 0;
  for (int i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  return (size_t)n;
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    unsigned c = *p;
    if (c == '"' || c == '\\') {
      fputc('\\', f);
      fputc((int)c, f);
    } else if (c == '\n') {
      fputs("\\n", f);
    } else if (c == '\t') {
      fputs("\\t", f);
    } else if (c < 0x20 || c == 0x7f) {
      fprintf(f, "\\u%04x", c);
    } else if (c >= 0x80) {
      size_t n = utf8_seq_len(p);
      if (n)
        fwrite(p, 1, n, f);
      else
        fputs("\\ufffd", f);
      p += n ? n : 1;
      continue;
    } else {
      fputc((int)c, f);
    }
    p++;
  }
  fputc('"', f);
}

static char *test_report(const Graded *t) {
  Str b = {0};
  str_printf(&b, "%s\nResult: %s (%d/%d)\n", t->desc, OUTCOME_TEXT[t->outcome], t->score,
             t->points);
  if (*t->why) str_printf(&b, "%s\n", t->why);
  if (*t->fails) str_add(&b, t->fails, strlen(t->fails));
  if (t->output_bytes) {
    str_printf(&b, "--- program output (%ld bytes) ---\n", t->output_bytes);
    str_add(&b, t->output, strlen(t->output));
  }
  return str_take(&b);
}

/* Gradescope's results format, one test object per line. Written to a temporary file in the
 * same directory and renamed over FILE, so a reader never sees half of it. */
static bool write_results(const char *path, Graded **sel, int n, int score, int max_score,
                          const char *summary, double seconds) {
  size_t len = strlen(path);
  char *tmp = xmalloc(len + 8);
  memcpy(tmp, path, len);
  memcpy(tmp + len, ".XXXXXX", 8);
  int fd = mkstemp(tmp);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    fprintf(stderr, "grade: cannot write %s: %s\n", path, strerror(errno));
    if (fd >= 0) close(fd);
    free(tmp);
    return false;
  }
  fprintf(f, "{\n  \"score\": %d,\n  \"execution_time\": %.2f,\n  \"output\": ", score, seconds);
  json_string(f, summary);
  fprintf(f, ",\n  \"visibility\": \"visible\",\n  \"extra_data\": {\"max_score\": %d, "
             "\"variant\": ", max_score);
  json_string(f, GRADE_VARIANT);
  fprintf(f, "},\n  \"tests\": [\n");
  for (int i = 0; i < n; i++) {
    const Graded *t = sel[i];
    char *report = test_report(t);
    fprintf(f, "    {\"name\": ");
    json_string(f, t->name);
    fprintf(f, ", \"score\": %d, \"max_score\": %d, \"status\": \"%s\", \"visibility\": \"%s\", "
               "\"extra_data\": {\"outcome\": \"%s\", \"seconds\": %.2f}, \"output\": ",
            t->score, t->points, t->outcome == OUT_PASSED ? "passed" : "failed",
            t->hidden ? "after_due_date" : "visible", OUTCOME_ID[t->outcome], t->seconds);
    json_string(f, report);
    fprintf(f, "}%s\n", i + 1 < n ? "," : "");
    free(report);
  }
  fprintf(f, "  ]\n}\n");
  bool ok = fflush(f) == 0 && !ferror(f);
  ok = fclose(f) == 0 && ok;
  if (ok) ok = chmod(tmp, 0644) == 0 && rename(tmp, path) == 0;
  if (!ok) {
    fprintf(stderr, "grade: cannot write %s: %s\n", path, strerror(errno));
    unlink(tmp);
  }
  free(tmp);
  return ok;
}

/* ------------------------------------------------------------------ main */

static _Noreturn void finish(int status) {
  /* _exit, not exit: no atexit handler or destructor from linked student code runs now */
  fflush(stdout);
  fflush(stderr);
  _exit(status);
}

static void ensure_std_fds(void) {
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
      _exit(2);
}

int main(int argc, char **argv) {
  g_frozen = true;
  ensure_std_fds();
  setvbuf(stdout, NULL, _IOLBF, 0); /* before any output: children inherit a clean stream */
  Options o = parse_args(argc, argv);
  if (!validate_tests()) finish(2);
  qsort(g_tests, (size_t)g_ntests, sizeof *g_tests, cmp_tests);

  Graded **sel = xmalloc(((size_t)g_ntests + 1) * sizeof *sel);
  int n = 0, max_score = 0, name_w = 4;
  for (int i = 0; i < g_ntests; i++) {
    Graded *t = &g_tests[i];
    if ((o.lab >= 0 && t->lab != o.lab) || (o.only && !strstr(t->name, o.only))) continue;
    sel[n++] = t;
    max_score += t->points;
    if ((int)strlen(t->name) > name_w) name_w = (int)strlen(t->name);
  }
  if (n == 0) {
    if (o.lab >= 0)
      fprintf(stderr, "grade: no graded tests for lab%02d%s\n", o.lab,
              o.only ? " that match --only" : "");
    else
      fprintf(stderr, "grade: no graded tests%s (tests/grade/labNN/*.c)\n",
              o.only ? " match --only" : "");
    finish(2);
  }
  if (o.list) {
    for (int i = 0; i < n; i++)
      printf("%-*s %3d  %s%s\n", name_w, sel[i]->name, sel[i]->points, sel[i]->desc,
             sel[i]->hidden ? " (hidden)" : "");
    printf("%d tests, %d points\n", n, max_score);
    finish(0);
  }

  g_parent = getpid();
  if (!getcwd(g_root, sizeof g_root)) die("grader: getcwd: %s", strerror(errno));
  const char *tmpdir = getenv("TMPDIR");
  snprintf(g_scratch, sizeof g_scratch, "%s/attention-lab-grade-XXXXXX",
           tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (!mkdtemp(g_scratch)) die("grader: cannot create %s: %s", g_scratch, strerror(errno));
  if (o.mem_mib > 0) g_as_limit = current_vm_bytes() + ((rlim_t)o.mem_mib << 20);
  install_handlers();

  int nlabs = 0;
  for (int i = 0; i < n; i++) nlabs += i == 0 || sel[i]->lab != sel[i - 1]->lab;
  printf("grade: %d test%s, %d point%s, %d lab%s%s%s%s; limits per test: %g s, ", n,
         n == 1 ? "" : "s", max_score, max_score == 1 ? "" : "s", nlabs, nlabs == 1 ? "" : "s",
         *GRADE_VARIANT ? " (VARIANT=" : "", GRADE_VARIANT, *GRADE_VARIANT ? ")" : "",
         o.timeout_s);
  if (o.mem_mib > 0)
    printf("%ld MiB\n", o.mem_mib);
  else
    printf("no memory limit\n");

  double t0 = now_seconds();
  typedef struct {
    int lab, score, max;
  } Subtotal;
  Subtotal *sub = xcalloc((size_t)nlabs, sizeof *sub);
  int score = 0, k = -1;
  for (int i = 0; i < n; i++) {
    Graded *t = sel[i];
    if (i == 0 || t->lab != sel[i - 1]->lab) {
      sub[++k].lab = t->lab;
      printf("\nlab%02d\n", t->lab);
    }
    run_one(t, &o);
    if (g_stop) {
      fprintf(stderr, "grade: interrupted; no results written\n");
      remove_tree(g_scratch);
      finish(128 + (int)g_stop);
    }
    print_row(t, name_w, o.verbose);
    score += t->score;
    sub[k].score += t->score;
    sub[k].max += t->points;
    if (i + 1 == n || sel[i + 1]->lab != t->lab)
      printf("  lab%02d: %d/%d\n", t->lab, sub[k].score, sub[k].max);
  }
  remove_tree(g_scratch);

  Str summary = {0}; /* results.json's top-level output */
  if (*GRADE_VARIANT) str_printf(&summary, "VARIANT=%s\n", GRADE_VARIANT);
  if (nlabs > 1) printf("\nSubtotals\n");
  for (k = 0; k < nlabs; k++) {
    str_printf(&summary, "lab%02d: %d/%d\n", sub[k].lab, sub[k].score, sub[k].max);
    if (nlabs > 1) printf("  lab%02d %4d/%d\n", sub[k].lab, sub[k].score, sub[k].max);
  }
  str_printf(&summary, "Score: %d/%d", score, max_score);
  char *summary_text = str_take(&summary);
  putchar('\n');
  if (o.json && write_results(o.json, sel, n, score, max_score, summary_text, now_seconds() - t0))
    printf("results: %s\n", o.json);
  printf("Score: %d/%d\n", score, max_score);
  finish(score == max_score ? 0 : 1);
}
