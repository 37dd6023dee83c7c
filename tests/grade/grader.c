/* grader.c — the grader behind `make grade`: it decides every score, and it never contains
 * student code. It links only the kit's common/ layer and this harness: no submission object,
 * no graded test, so no constructor, IFUNC resolver, .init section or header of the student's
 * ever runs in it.
 *
 * The graded tests live in test runners (runner.c + the tests + one submission's exercises):
 *
 *   grader (trusted, this file)                 runner of the student's code (confined)
 *   lists the tests from the reference runner
 *   per test: private capture file, pipe  ──►  fork; limits, seccomp filter, user nobody
 *                                               when root (sandbox.c); exec the runner
 *                                               runs one test; every EXPECT sends what it
 *   reads the channel, kills at the     ◄──    observed (values, not verdicts: record.h)
 *   wall-time limit
 *   judges: the student's values against the expected values and tolerances of a
 *   trusted reference run of the same test (the solutions' runner, or a precomputed one)
 *
 * So printing "PASS", exiting early, crashing, hanging, flooding the output, forging
 * records, writing files or signalling the grader all score zero for that test and cannot
 * touch the others. Without a reference (a student's handout) each run is judged against its
 * own expected values, and the header says that this run is a practice run.
 *
 * The grader's files are out of the runner's reach: scratch lives in a private directory
 * (mode 0700), capture files are opened by the grader, unlinked at once and read through
 * their descriptors; results.json is written at the very end (temporary file + rename) after
 * every runner is gone; an interrupted grader removes any results.json at its path.
 *
 * Outcomes: passed, wrong answer (with the failed checks), not implemented (a stub's message
 * in the output), crash (signal), timeout, out of memory, exited early (no end record),
 * forbidden (the sandbox stopped a system call), tampered (the channel carried malformed
 * data), broken (the reference run itself fails the test: the test's fault, not the student's).
 *
 *   grade [--runner DIR] [--reference DIR] [--lab NN] [--only TEXT] [--timeout S] [--mem MIB]
 *         [--json FILE] [--notes DIR] [--counters FILE] [--write-counters FILE] [--list] [-v]
 *
 * Exit status: 0 at full marks, 1 otherwise, 2 when there is nothing to grade or bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "../../common/json.h"
#include "../../common/util.h"
#include "record.h"
#include "sandbox.h"

#ifndef GRADE_VARIANT
#define GRADE_VARIANT ""
#endif

#define DEFAULT_TIMEOUT_S 10.0
#define DEFAULT_MEM_MIB 1024L
#define MAX_FAIL_SHOWN 8        /* failed checks reported per test: the first say enough */
#define CHAN_CAP (64L << 20)    /* more than this on the channel can only be tampering */
#define CAPTURE_CAP (1L << 20)  /* program output kept per test (RLIMIT_FSIZE) */
#define SHOW_HEAD 1536          /* output bytes shown from the start ... */
#define SHOW_TAIL 1536          /* ... and from the end */
#define OOM_MARGIN (64L << 20)  /* peak address space this close to the limit reads as OOM */
#define STUB_MARK "is not implemented yet" /* what exercise_todo() prints */
#define EMU_MARK "cuda emulator: "         /* what the CUDA emulator's reports start with */
#define MAX_NOTE 4096           /* bytes of a check's message (the runner sends at most 512) */
/* the practice grade's line, on the terminal and in results.json (sandbox_practice.c) */
#define PRACTICE_NOTE                                                                          \
  "PRACTICE GRADE: the same tests and scores, but no Linux sandbox (seccomp, user nobody, "   \
  "confined compile); the grade that counts is the instructor's sandboxed one, on Linux"
#define RUNNER "grade-run"               /* in a runner directory: the handed-out tests */
#define RUNNER_HIDDEN "grade-run-hidden" /* ... and the hidden ones, where there are any */

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

/* ------------------------------------------------------------------ the tests */

typedef enum {
  OUT_PASSED,
  OUT_WRONG,
  OUT_TODO,
  OUT_CRASH,
  OUT_TIMEOUT,
  OUT_OOM,
  OUT_EXITED,
  OUT_FORBIDDEN,
  OUT_TAMPERED,
  OUT_BROKEN,
  OUT_SANITIZER, /* the CUDA emulator's checks stopped a kernel (the kernel track) */
  OUT_BLOCKED,   /* failed while an exercise it builds on fails too (a practice run only) */
} Outcome;

static const char *const OUTCOME_TEXT[] = {
    "passed", "wrong answer", "not implemented", "crash", "timeout", "out of memory",
    "exited early", "forbidden", "tampered", "broken test", "sanitizer", "blocked"};
static const char *const OUTCOME_ID[] = {
    "passed", "wrong_answer", "not_implemented", "crash", "timeout", "out_of_memory",
    "exited_early", "forbidden", "tampered", "broken_test", "sanitizer", "blocked"};

typedef struct {
  /* from the reference runner's list */
  char *name, *desc, *file;
  int points, lab, seq;
  double timeout_s; /* 0: the default */
  char ex[16];      /* its exercise ("2.1"): the first word of desc */
  int level;        /* its file's level in the dependency map (exercises.txt); -1: none */
  const char *deps; /* the exercises it builds on, "2.1,2.3"; NULL: none */
  bool hidden;
  /* result */
  Outcome outcome;
  int score;
  double seconds;
  char *why;      /* one line on what happened, "" when passed or plainly wrong */
  char *fails;    /* failed checks: each a line, then its indented slice and hint */
  char *info;     /* memory counters of the student's kernels beside the reference's */
  char *passed_checks; /* the value checks that passed, a line each (shown with -v) */
  char *output;   /* program output, head and tail */
  long output_bytes;
  /* the device counters of the student's kernels (CHK_COUNTERS: kernel_test.h fills them from
   * whatever device model the runner holds, the CUDA emulator today), summed over the test */
  int ncounters;
  double kb, est_us;
} Graded;

static Graded *g_tests;
static int g_ntests;


/* "lab02_..." -> 2; -1 when the name does not start with its lab */
static int lab_of(const char *name) {
  if (strncmp(name, "lab", 3) != 0) return -1;
  if (name[3] < '0' || name[3] > '9' || name[4] < '0' || name[4] > '9' || name[5] != '_')
    return -1;
  return (name[3] - '0') * 10 + (name[4] - '0');
}

/* Registration problems are the test author's: refuse to grade at all. */
static bool validate_tests(void) {
  bool ok = true;
  for (int i = 0; i < g_ntests; i++) {
    Graded *t = &g_tests[i];
    t->lab = lab_of(t->name);
    size_t exn = strcspn(t->desc, " ");
    if (exn < sizeof t->ex) memcpy(t->ex, t->desc, exn), t->ex[exn] = '\0';
    t->level = -1;
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
  return ok;
}

/* The exercise number a test's description starts with ("2.1 masked_softmax ..." -> 201,
 * "4.4,4.5 ..." -> 404); INT_MAX when it starts with none (such tests go last). */
static int exercise_number(const char *desc) {
  char *end;
  long major = strtol(desc, &end, 10);
  if (end == desc || *end != '.' || end[1] < '0' || end[1] > '9') return INT_MAX;
  long minor = strtol(end + 1, &end, 10);
  return major < 0 || major > 99 || minor < 0 || minor > 99 ? INT_MAX : (int)(major * 100 + minor);
}

/* The exercise a test belongs to by its file: "masked_softmax" for
 * tests/grade/lab02/test_masked_softmax.c; "" for another name. */
static const char *exercise_stem(const Graded *t, size_t *len) {
  const char *f = short_path(t->file), *base = strrchr(f, '/');
  base = base ? base + 1 : f;
  size_t n = strlen(base);
  if (strncmp(base, "test_", 5) || n < 8 || strcmp(base + n - 2, ".c")) {
    *len = 0;
    return "";
  }
  *len = n - 7;
  return base + 5;
}

/* Whether --only TEXT names the exercise of t exactly: its number ("2.1") or its test file's
 * exercise ("masked_softmax", not masked_softmax_rows). */
static bool names_exercise(const Graded *t, const char *only) {
  size_t n = strlen(only), len;
  const char *stem = exercise_stem(t, &len);
  if (len && len == n && !strncmp(stem, only, n)) return true;
  return n && !strncmp(t->desc, only, n) && (t->desc[n] == ' ' || t->desc[n] == ',') &&
         exercise_number(only) != INT_MAX;
}

/* Labs in order; within a lab the handed-out tests first, then exercise number (2.1, 2.2,
 * ..., not file names: an exercise runs after those it builds on, so a practice run can tell
 * "blocked"), file and definition order. */
static int cmp_tests(const void *pa, const void *pb) {
  const Graded *a = pa, *b = pb;
  if (a->lab != b->lab) return a->lab < b->lab ? -1 : 1;
  if (a->hidden != b->hidden) return a->hidden ? 1 : -1;
  int ea = exercise_number(a->desc), eb = exercise_number(b->desc);
  if (ea != eb) return ea < eb ? -1 : 1;
  int c = strcmp(short_path(a->file), short_path(b->file));
  if (c) return c;
  return (a->seq > b->seq) - (a->seq < b->seq);
}

/* ------------------------------------------------------------------ options */

typedef struct {
  const char *runner;    /* directory of the submission's runners; NULL: the grader's own */
  const char *reference; /* directory of the reference runners; NULL: none */
  int lab;            /* -1: every lab */
  const char *only;   /* substring of test names, or NULL */
  double timeout_s;   /* default wall-time limit per test */
  long mem_mib;       /* address space a test may add to the runner's own; 0: no limit */
  const char *json;   /* results file; NULL: none */
  const char *notes;  /* directory of build notes (*.txt) shown at the top; NULL: none */
  const char *counters, *write_counters; /* the reference kernels' counters: read, written */
  const char *ref_cache; /* directory of stored reference runs (make grade-all); NULL: none */
  const char *tests_version; /* recorded in results.json (make grade: a hash of the tests) */
  const char *prairielearn;  /* PrairieLearn's external-grader results file; NULL: none */
  bool list, verbose;
} Options;

static _Noreturn void usage(int status) {
  FILE *f = status ? stderr : stdout;
  fprintf(f,
          "usage: grade [--runner DIR] [--reference DIR] [--lab NN] [--only TEXT] [--timeout S]\n"
          "             [--mem MIB] [--json FILE] [--notes DIR] [--counters FILE]\n"
          "             [--write-counters FILE] [--list] [-v]\n"
          "  --runner DIR     the submission's test runners " RUNNER " and " RUNNER_HIDDEN "\n"
          "                   (default: the grader's own directory)\n"
          "  --reference DIR  the reference solution's runners: the expected values come\n"
          "                   from them (without: each run is judged against its own)\n"
          "  --lab NN      grade one lab (02, 2 or lab02)\n"
          "  --only TEXT   one exercise: its number (2.1) or its name (masked_softmax, as in\n"
          "                tests/grade/lab02/test_masked_softmax.c); else the tests whose name\n"
          "                contains TEXT\n"
          "  --timeout S   wall-time limit per test in seconds (default %g; GRADED_TIMEOUT "
          "overrides)\n"
          "  --mem MIB     memory a test may use, MiB (default %ld; 0 = no limit)\n"
          "  --json FILE   Gradescope results file (default results.json; '' = none)\n"
          "  --notes DIR   build notes (DIR/*.txt) shown at the top of the report\n"
          "  --counters FILE  without --reference: the reference kernels' memory counters\n"
          "                   (tests/grade/reference_counters.txt), shown and judged against\n"
          "  --write-counters FILE  with --reference: write the reference run's counters\n"
          "  --tests-version TEXT  recorded in results.json (extra_data.tests_version)\n"
          "  --prairielearn FILE   also write PrairieLearn's external-grader results.json\n"
          "  --ref-cache DIR  reuse the reference runs stored in DIR, store new ones there\n"
          "                (make grade-all: one reference run per test for a whole batch;\n"
          "                DIR must be private to the grader and named after the reference)\n"
          "  --list        list the tests and their points, run nothing\n"
          "  -v            show every failed check and each failing test's full output\n"
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
    if (!strcmp(a, "--runner") || !strcmp(a, "--reference")) {
      if (!v || !*v) usage(2);
      *(a[2] == 'r' && a[3] == 'u' ? &o.runner : &o.reference) = v;
      i++;
    } else if (!strcmp(a, "--lab")) {
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
    } else if (!strcmp(a, "--tests-version") || !strcmp(a, "--prairielearn")) {
      if (!v || !*v) usage(2);
      *(a[2] == 't' ? &o.tests_version : &o.prairielearn) = v;
      i++;
    } else if (!strcmp(a, "--ref-cache")) {
      if (!v || !*v) usage(2);
      o.ref_cache = v;
      i++;
    } else if (!strcmp(a, "--notes")) {
      if (!v || !*v) usage(2);
      o.notes = v;
      i++;
    } else if (!strcmp(a, "--counters") || !strcmp(a, "--write-counters")) {
      if (!v || !*v) usage(2);
      *(a[2] == 'c' ? &o.counters : &o.write_counters) = v;
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

/* ------------------------------------------------------------------ running a runner */

static pid_t g_parent;
/* pipe2(O_CLOEXEC) where there is one; macOS has none (no other thread of ours can fork in
 * between: the grader is single-threaded) */
static int cloexec_pipe(int p[2]) {
#ifdef __linux__
  return pipe2(p, O_CLOEXEC);
#else
  if (pipe(p) != 0) return -1;
  return fcntl(p[0], F_SETFD, FD_CLOEXEC) | fcntl(p[1], F_SETFD, FD_CLOEXEC);
#endif
}

static int g_wake[2] = {-1, -1};        /* self-pipe: SIGCHLD and SIGINT wake the wait loop */
static volatile sig_atomic_t g_stop;    /* a signal asked the grader to stop */
static char g_scratch[PATH_MAX];        /* this run's private directory (0700) */
static char g_cwd[PATH_MAX + 8];        /* the runners' working directory, inside it */
static int g_nout;                      /* capture files made so far */

/* A system call of the grader's own failed: say so, leave no scratch, stop (status 2). */
__attribute__((format(printf, 1, 2))) static _Noreturn void fatal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  if (g_cwd[0]) rmdir(g_cwd);
  if (g_scratch[0]) rmdir(g_scratch);
  _exit(2);
}

static void on_signal(int sig) {
  int saved = errno;
  if (sig != SIGCHLD) g_stop = sig;
  ssize_t w = write(g_wake[1], "", 1); /* full pipe: a wake-up is already pending */
  (void)w;
  errno = saved;
}

static void install_handlers(void) {
  if (cloexec_pipe(g_wake) != 0 || fcntl(g_wake[0], F_SETFL, O_NONBLOCK) != 0 ||
      fcntl(g_wake[1], F_SETFL, O_NONBLOCK) != 0)
    fatal("grader: pipe: %s", strerror(errno));
  struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  signal(SIGIO, SIG_IGN); /* no runner may make a descriptor signal us (the filter refuses it too) */
}

/* A runner binary: opened once, exec'd through its descriptor (sandbox.c). */
typedef struct {
  int fd;
  bool static_exe; /* statically linked: the sandbox can refuse executable memory */
  char path[PATH_MAX];
  char abs_path[PATH_MAX]; /* what the practice grade execs (from the runners' working dir) */
} Runner;

static bool runner_open(Runner *r, const char *dir, const char *name) {
  snprintf(r->path, sizeof r->path, "%s/%s", dir, name);
  r->fd = open(r->path, O_RDONLY | O_CLOEXEC);
  r->static_exe = r->fd >= 0 && sandbox_is_static(r->fd);
  if (r->fd >= 0 && !realpath(r->path, r->abs_path)) snprintf(r->abs_path, sizeof r->abs_path, "%s", r->path);
  return r->fd >= 0;
}

/* What the grader saw of one run. */
typedef struct {
  unsigned char *chan;   /* bytes read from the channel */
  size_t chan_len, chan_cap;
  bool chan_overflow, timed_out, stopped;
  int status;            /* from waitpid */
  double seconds;
  int out_fd;            /* the capture file (already unlinked) */
} RunInfo;

static void drain_wake(void) {
  char buf[64];
  while (read(g_wake[0], buf, sizeof buf) > 0) {
  }
}

/* Read what the pipe holds now; false once it is closed (or over its cap). */
static bool read_chan(int fd, RunInfo *r) {
  for (;;) {
    if (r->chan_cap - r->chan_len < 65536) {
      if (r->chan_cap >= (size_t)CHAN_CAP) {
        r->chan_overflow = true;
        return false;
      }
      r->chan_cap = r->chan_cap ? 2 * r->chan_cap : 1 << 16;
      r->chan = xrealloc(r->chan, r->chan_cap);
    }
    ssize_t n = read(fd, r->chan + r->chan_len, r->chan_cap - r->chan_len);
    if (n > 0) {
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

/* A capture file nobody else can name: created in the private directory, unlinked at once. */
static int new_capture(void) {
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/%04d.out", g_scratch, g_nout++);
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_APPEND | O_CLOEXEC,
                0600);
  if (fd < 0) fatal("grader: cannot create %s: %s", path, strerror(errno));
  unlink(path);
  return fd;
}

/* Run `runner ARGS` confined until it exits or its time is up; collect channel and output. */
/* A test that runs long says so: every SAY_EVERY_S seconds without a line on the terminal,
 * one line naming it (no step of make grade is silent for more than 10 s). */
#define SAY_EVERY_S 8.0
static const char *g_running; /* the test being run, NULL when none */
static double g_running_t0, g_said;

static void say_still_running(void) {
  double now = now_seconds();
  if (!g_running || now - g_said < SAY_EVERY_S) return;
  printf("  ... %s: still running (%.0f s)\n", g_running, now - g_running_t0);
  fflush(stdout);
  g_said = now;
}

static void run_confined(const Runner *rn, const char *arg1, const char *arg2, double timeout_s,
                         rlim_t as_bytes, RunInfo *r) {
  int p[2];
  if (cloexec_pipe(p) != 0) fatal("grader: pipe: %s", strerror(errno));
  r->out_fd = new_capture();
  char *argv[] = {RUNNER, (char *)arg1, (char *)arg2, NULL};
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  SandboxSpec spec = {.exec_fd = rn->fd, .exec_path = rn->abs_path, .argv = argv, .out_fd = r->out_fd, .chan_fd = p[1],
                      .dir = g_cwd, .cpu_s = timeout_s * (double)(ncpu > 0 ? ncpu : 1),
                      .as_bytes = as_bytes, .fsize = (rlim_t)CAPTURE_CAP, .parent = g_parent,
                      .static_exe = rn->static_exe};
  fflush(NULL); /* nothing buffered may be written twice */
  double t0 = now_seconds();
  pid_t pid = fork();
  if (pid < 0) fatal("grader: fork: %s", strerror(errno));
  if (pid == 0) sandbox_exec(&spec);
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
    double wait_s = left;
    if (g_running && g_said + SAY_EVERY_S - now_seconds() < wait_s)
      wait_s = fmax(0.01, g_said + SAY_EVERY_S - now_seconds());
    if (poll(fds, 2, (int)ceil(wait_s * 1000.0)) < 0 && errno != EINTR)
      fatal("grader: poll: %s", strerror(errno));
    drain_wake();
    say_still_running();
    if (open_chan && fds[0].revents) open_chan = read_chan(p[0], r);
  }
  r->seconds = now_seconds() - t0;
  kill(-pid, SIGKILL); /* the runner if it is still running (it cannot have children) */
  kill(pid, SIGKILL);
  while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR) {
  }
  /* anything that was orphaned to us (we are a subreaper): none can exist, as the sandbox
   * refuses fork and clone; reaped here all the same */
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  if (open_chan) read_chan(p[0], r);
  close(p[0]);
}

/* At most SHOW_HEAD + SHOW_TAIL bytes of the capture file, NULs made visible. */
static char *read_capture(int fd, long *total) {
  Str b = {0};
  *total = 0;
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return str_take(&b);
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
  for (size_t i = 0; i < b.len; i++)
    if (b.s[i] == '\0') b.s[i] = '?';
  return str_take(&b);
}

static void signal_name(int sig, char *buf, size_t n) {
#ifdef __GLIBC__
  const char *abbrev = sigabbrev_np(sig), *desc = strsignal(sig);
#else /* macOS: no sigabbrev_np (its sys_signame is lower case) */
  const char *abbrev = NULL, *desc = strsignal(sig);
  if (desc) {
    snprintf(buf, n, "signal %d (%s)", sig, desc);
    return;
  }
#endif
  if (abbrev)
    snprintf(buf, n, "SIG%s (%s)", abbrev, desc ? desc : "signal");
  else
    snprintf(buf, n, "signal %d", sig);
}


/* ------------------------------------------------------------------ what a runner sent */

typedef struct {
  CheckHeader h;
  char *file, *msg;
  double *got, *want;
} Check;

typedef struct {
  Check *c;
  int n;
  bool done, malformed;
  uint64_t vm_peak;
  int syscall_nr; /* the system call the sandbox trapped; -1: none */
} Stream;

static void stream_free(Stream *s) {
  for (int i = 0; i < s->n; i++) {
    free(s->c[i].file);
    free(s->c[i].msg);
    free(s->c[i].got);
    free(s->c[i].want);
  }
  free(s->c);
  *s = (Stream){.syscall_nr = -1};
}

static char *copy_text(const unsigned char *p, size_t n) {
  char *s = xmalloc(n + 1);
  memcpy(s, p, n);
  s[n] = '\0';
  for (size_t i = 0; i < n; i++)
    if (s[i] == '\0') s[i] = '?';
  return s;
}

static double *copy_doubles(const unsigned char *p, uint32_t n) {
  double *d = xmalloc((size_t)n * sizeof *d + 1);
  memcpy(d, p, (size_t)n * sizeof *d);
  return d;
}

/* Parse the channel's bytes. Anything that is not a well-formed record, or a record after the
 * end record, marks the stream malformed (tampering: the runner never writes such bytes). */
static void parse_stream(const unsigned char *buf, size_t len, Stream *s) {
  *s = (Stream){.syscall_nr = -1};
  int cap = 0;
  for (size_t off = 0; off < len;) {
    RecHeader rh;
    if (len - off < sizeof rh || s->done) goto bad;
    memcpy(&rh, buf + off, sizeof rh);
    off += sizeof rh;
    if (rh.len > REC_MAX_PAYLOAD || rh.len > len - off) goto bad;
    const unsigned char *p = buf + off;
    off += rh.len;
    if (rh.type == REC_DONE && rh.len == 0) {
      s->done = true;
    } else if (rh.type == REC_VMPEAK && rh.len == sizeof s->vm_peak) {
      memcpy(&s->vm_peak, p, sizeof s->vm_peak);
    } else if (rh.type == REC_SYSCALL && rh.len == sizeof(int32_t)) {
      int32_t nr;
      memcpy(&nr, p, sizeof nr);
      s->syscall_nr = nr;
    } else if (rh.type == REC_NOTE && s->n > 0 && rh.len <= MAX_NOTE) {
      Check *c = &s->c[s->n - 1]; /* the text of the check just before it */
      free(c->msg);
      c->msg = copy_text(p, rh.len);
    } else if (rh.type == REC_CHECK && rh.len >= sizeof(CheckHeader)) {
      CheckHeader h;
      memcpy(&h, p, sizeof h);
      uint64_t need = (uint64_t)h.file_len + h.msg_len + ((uint64_t)h.n_got + h.n_want) * 8;
      if (h.kind < CHK_CLOSE || h.kind > CHK_INPUT || need != rh.len - sizeof h) goto bad;
      if (s->n == cap) {
        cap = cap ? 2 * cap : 16;
        s->c = xrealloc(s->c, (size_t)cap * sizeof *s->c);
      }
      const unsigned char *q = p + sizeof h;
      Check *c = &s->c[s->n++];
      c->h = h;
      c->file = copy_text(q, h.file_len);
      c->msg = copy_text(q + h.file_len, h.msg_len);
      c->got = copy_doubles(q + h.file_len + h.msg_len, h.n_got);
      c->want = copy_doubles(q + h.file_len + h.msg_len + (size_t)h.n_got * 8, h.n_want);
    } else {
      goto bad;
    }
  }
  return;
bad:
  s->malformed = true;
}

/* ------------------------------------------------------------------ judging */

static void fmt_shape(Str *b, const double *v, uint32_t n) {
  if (n < 1 || v[0] < 0) {
    str_printf(b, "NULL");
    return;
  }
  str_printf(b, "(");
  for (uint32_t i = 1; i < n; i++) str_printf(b, i > 1 ? ", %g" : "%g", v[i]);
  str_printf(b, ")");
}

/* got within atol + rtol*|want| of want; a NaN expected is matched only by a NaN, an infinite
 * one only by the same infinity (NaN tolerances match nothing). */
static bool close_enough(double g, double w, double atol, double rtol) {
  if (isnan(w)) return isnan(g);
  return g == w || fabs(g - w) <= atol + rtol * fabs(w);
}

/* ------------------------------------------------------------------ feedback in the tensor's terms */
/* A failed value check names its first wrong entry as the tensor's index, (b, i, j), shows a
 * few values of that row, expected above observed, and gives a hint only when the values show
 * a pattern with a known cause (hint_for). The shape is the one the test stated for the tensor
 * (its EXPECT_SHAPE, in the trusted run: shape_before); without one, flat indices. */

#define MAX_SHAPE_DIMS 8
#define SLICE_VALUES 8 /* values of a row shown around the first difference */

typedef struct {
  int ndim; /* 0: not known (flat indices) */
  long dim[MAX_SHAPE_DIMS];
} Shape;

/* The input a value check's output is computed from (GRADE_INPUT, the reference run's). */
typedef struct {
  const double *v;
  uint32_t n;
  const char *name;
} Input;

static long shape_numel(const Shape *s) {
  long n = 1;
  for (int d = 0; d < s->ndim; d++) n *= s->dim[d];
  return n;
}

/* (b, i, j) of a flat index; [k] when the shape is not known */
static void fmt_index(Str *b, const Shape *s, long flat) {
  if (!s || s->ndim == 0) {
    str_printf(b, "[%ld]", flat);
    return;
  }
  long idx[MAX_SHAPE_DIMS];
  for (int d = s->ndim - 1; d >= 0; d--) {
    idx[d] = flat % s->dim[d];
    flat /= s->dim[d];
  }
  str_printf(b, "(");
  for (int d = 0; d < s->ndim; d++) str_printf(b, d ? ", %ld" : "%ld", idx[d]);
  str_printf(b, ")");
}

/* The row of entry first along the last axis: where it starts and how long it is (the whole
 * array when the shape is not known). */
static void row_of(const Shape *s, long first, long n, long *start, long *len) {
  *len = s && s->ndim ? s->dim[s->ndim - 1] : n;
  if (*len < 1) *len = 1;
  *start = first - first % *len;
}

/* a value to print: a NaN without its sign ("nan", never "-nan") */
static double shown(double x) { return isnan(x) ? fabs(x) : x; }

static void trim_end(Str *b) { /* no blanks at the end of a line */
  while (b->len && b->s[b->len - 1] == ' ') b->s[--b->len] = '\0';
}

/* "  (0, 1, 0:4)  expected  0.7311  0.2689  0  0" and the observed values below, each off one
 * marked with '*'. top_name, bot_name: "expected" and "got", or an agreement's two outputs. */
static void fmt_slice(Str *b, const Shape *s, long first, long n, const double *top,
                      const double *bot, const char *top_name, const char *bot_name,
                      double atol, double rtol) {
  long start, len;
  row_of(s, first, n, &start, &len);
  long j = first - start, lo = j - SLICE_VALUES / 2 + 1;
  if (lo + SLICE_VALUES > len) lo = len - SLICE_VALUES;
  if (lo < 0) lo = 0;
  long hi = lo + SLICE_VALUES < len ? lo + SLICE_VALUES : len;
  Str where = {0};
  if (s && s->ndim) {
    fmt_index(&where, s, start); /* "(0, 1, 0)": the last index becomes lo:hi */
    char *p = strrchr(where.s, ' ');
    where.len = p ? (size_t)(p + 1 - where.s) : 1;
    where.s[where.len] = '\0';
    str_printf(&where, "%ld:%ld)", lo, hi);
  } else {
    str_printf(&where, "[%ld:%ld]", lo, hi);
  }
  int w = (int)where.len;
  str_printf(b, "\n    %s  %-8s", where.s, top_name);
  for (long k = lo; k < hi; k++) str_printf(b, " %10.5g ", shown(top[start + k]));
  trim_end(b);
  str_printf(b, "\n    %*s  %-8s", w, "", bot_name);
  for (long k = lo; k < hi; k++) {
    double g = bot[start + k], t = top[start + k];
    str_printf(b, " %10.5g%c", shown(g), close_enough(g, t, atol, rtol) ? ' ' : '*');
  }
  trim_end(b);
  if (hi < len || lo > 0) str_printf(b, "  (%ld values in the row)", len);
  free(where.s);
}

/* Where the row's nonzero entries end: the length a mask left it (len when it ends nonzero). */
static long valid_length(const double *row, long len, double atol) {
  long k = len;
  while (k > 0 && fabs(row[k - 1]) <= atol) k--;
  return k;
}

/* Whether x is the poison of fresh device memory: the kernel tests' outputs come from
 * kt_alloc, 0xff bytes (a NaN no arithmetic makes: x86's own NaN is 0xffc00000), so a value
 * still holding it was never written by the kernel. (float) keeps a NaN's top payload bits. */
static bool is_poison(double x) {
  if (!isnan(x)) return false;
  float f = (float)x;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u == 0xffffffffu;
}

/* The index of row r (its first entry) without the last axis: "(0, 1)". */
static void fmt_row(Str *b, const Shape *s, long start) {
  Str row = {0};
  fmt_index(&row, s, start);
  char *p = strrchr(row.s, ',');
  if (p) strcpy(p, ")");
  str_printf(b, "%s", row.s);
  free(row.s);
}

/* One line naming the likely cause, only for a pattern that has one; nothing otherwise.
 * Each pattern is checked on all the values (not just the first difference). */
static void hint_for(Str *b, const Shape *s, const Input *in, const double *got,
                     const double *want, long n, long first, double atol, double rtol) {
  /* 0. entries never written (the poison of fresh device memory): the grid or the loop does
   * not reach them; no other NaN hint for these */
  long unwritten = 0, unwritten_first = -1;
  for (long i = 0; i < n; i++)
    if (!isnan(want[i]) && is_poison(got[i]) && unwritten++ == 0) unwritten_first = i;
  if (unwritten) {
    str_printf(b, "\n    hint: %ld element%s never written: your grid or loop does not cover "
               "all of them (%s the NaN of fresh device memory; first at ", unwritten,
               unwritten == 1 ? "" : "s", unwritten == 1 ? "it still holds" : "they still hold");
    fmt_index(b, s, unwritten_first);
    str_printf(b, ")");
  }
  /* 1. NaN or inf where the expected values are finite: in a row with something to keep, an
   * overflow (or 0/0 after an underflow); in a row expected all 0, a 0/0 of an empty row */
  long start, len, live = 0, empty = 0, live_first = -1, empty_first = -1;
  for (long i = 0; i < n; i++) {
    if (isfinite(got[i]) || !isfinite(want[i]) || is_poison(got[i])) continue;
    row_of(s, i, n, &start, &len);
    bool all0 = s && s->ndim >= 2 && valid_length(want + start, len, 0) == 0;
    if (all0 ? empty++ == 0 : live++ == 0) *(all0 ? &empty_first : &live_first) = i;
  }
  if (live) {
    str_printf(b, "\n    hint: %ld value%s NaN or inf where finite ones are expected (first at ",
               live, live == 1 ? " is" : "s are");
    fmt_index(b, s, live_first);
    str_printf(b, "): exp() overflows float above ~88 and is 0 below ~-103, giving inf/inf or "
               "0/0; subtract the row's max before exp");
  }
  if (empty) {
    str_printf(b, "\n    hint: %ld value%s NaN or inf in rows expected all 0 (first at ", empty,
               empty == 1 ? " is" : "s are");
    fmt_index(b, s, empty_first);
    str_printf(b, "): a row with no valid entry (valid length 0) gives 0/0; it must give zeros");
  }
  if (unwritten || live || empty) return;
  /* 2. the output is the input it was to be computed from */
  if (in && in->v && in->n == (uint32_t)n) {
    bool same = true;
    for (long i = 0; i < n && same; i++) same = close_enough(got[i], in->v[i], atol, rtol);
    if (same) {
      str_printf(b, "\n    hint: the output equals the input %s: nothing was computed or added "
                 "to it (a branch left out, or the input returned as it came)", in->name);
      return;
    }
  }
  /* 3. masking: the expected rows end in zeros (a valid length). */
  if (s && s->ndim >= 2) {
    long masked_rows = 0;
    row_of(s, first, n, &start, &len);
    for (long r = 0; r + len <= n; r += len) masked_rows += valid_length(want + r, len, 0) < len;
    /* 3a. the lengths right, the fill wrong: in every masked row the kept entries are nonzero
     * (or all 0: a fill above the scores) and those past the valid length hold one value (exp
     * of one fill value over the row's sum), nonzero in some row, where a wrong length leaves
     * distinct values (exp of the scores) or zeros. Told apart only where such a row masks
     * two entries or more. The row named: the first with something to keep, if any. */
    bool fill = masked_rows > 0;
    long several = 0, fill_row = -1, uniform_empty = 0, nonzero_rows = 0;
    for (long r = 0; fill && r + len <= n; r += len) {
      long lw = valid_length(want + r, len, 0);
      if (lw == len) continue;
      double c = got[r + lw];
      long kept = 0, wanted = 0; /* the kept entries: all nonzero, or all 0 under a high fill */
      for (long j = 0; j < lw; j++) kept += got[r + j] != 0, wanted += want[r + j] != 0;
      fill = kept == wanted || kept == 0;
      for (long j = lw; j < len && fill; j++) fill = close_enough(got[r + j], c, atol, rtol);
      if (fabs(c) <= atol) continue;
      nonzero_rows++;
      several += len - lw >= 2;
      if (fill_row < 0 || (lw > 0 && valid_length(want + fill_row, len, 0) == 0)) fill_row = r;
      uniform_empty += lw == 0 && close_enough(c, 1.0 / (double)len, atol, rtol);
    }
    if (fill && several && nonzero_rows) {
      long lw = valid_length(want + fill_row, len, 0);
      str_printf(b, "\n    hint: row ");
      fmt_row(b, s, fill_row);
      if (uniform_empty == nonzero_rows) /* only rows of length 0 are off: the -1e6 fill */
        str_printf(b, " has valid length 0 and every entry is %.4g = 1/%ld where 0 is "
                   "expected: a finite fill (the book's -1e6) leaves a row with no valid entry "
                   "uniform; fill with -INFINITY and give such a row zeros, not 0/0",
                   got[fill_row], len);
      else
        str_printf(b, " is masked at the right length (%ld) but its %ld masked entr%s "
                   "%.4g%s, not 0: the masked scores were filled with a value from which exp() "
                   "does not reach 0; fill them with -INFINITY before the softmax", lw, len - lw,
                   len - lw == 1 ? "y holds" : "ies hold", got[fill_row + lw],
                   len - lw == 1 ? "" : " each");
      return;
    }
    /* 3b. a wrong length: the first wrong row's nonzero entries end elsewhere */
    long lw = valid_length(want + start, len, 0), lg = valid_length(got + start, len, atol);
    if (masked_rows && lw != lg) {
      str_printf(b, "\n    hint: row ");
      fmt_row(b, s, start);
      str_printf(b, " has %ld nonzero entr%s in the expected values (valid "
                 "length %ld) and %ld in yours: it is masked with another length (2-D "
                 "valid_lens: one per (batch, query) row; 1-D: one per batch row, shared by "
                 "its queries)", lw, lw == 1 ? "y" : "ies", lw, lg);
      return;
    }
  }
  bool all_zero = true;
  for (long i = 0; i < n && all_zero; i++) all_zero = got[i] == 0;
  /* 4. the last two axes swapped */
  if (s && s->ndim >= 2 && s->dim[s->ndim - 1] == s->dim[s->ndim - 2] &&
      s->dim[s->ndim - 1] > 1 && !all_zero) {
    long m = s->dim[s->ndim - 1], mm = m * m;
    bool transposed = true;
    for (long i = 0; i < n && transposed; i++) {
      long base = i - i % mm, r = (i % mm) / m, c = i % m;
      transposed = close_enough(got[i], want[base + c * m + r], atol, rtol);
    }
    if (transposed) {
      str_printf(b, "\n    hint: these are the expected values transposed: entry (..., i, j) "
                 "holds the expected (..., j, i) (the last two axes swapped)");
      return;
    }
  }
  /* 5. every value off by one factor */
  double gw = 0, ww = 0;
  long nonzero = 0;
  for (long i = 0; i < n; i++) {
    gw += got[i] * want[i];
    ww += want[i] * want[i];
    nonzero += fabs(want[i]) > atol;
  }
  if (nonzero >= 2 && ww > 0 && !all_zero) {
    double c = gw / ww;
    bool scaled = fabs(c - 1) > 1e-3;
    for (long i = 0; i < n && scaled; i++) scaled = close_enough(got[i], c * want[i], atol, rtol);
    if (scaled) {
      if (fabs(c + 1) <= 1e-3)
        str_printf(b, "\n    hint: every value is the expected one with its sign flipped");
      else
        str_printf(b, "\n    hint: every value is %.4g times the expected one: a constant "
                   "factor is missing or extra (a scale such as 1/sqrt(d) or 1/(1-p), a sum "
                   "where a mean belongs)", c);
      return;
    }
  }
  /* 6. nothing written */
  if (all_zero && nonzero)
    str_printf(b, "\n    hint: every value is 0: the output was never written (or it was "
               "multiplied by zeros)");
}

/* Whether got passes a check of this kind against want (trusted: the reference's want, atol
 * and rtol; for CHK_AGREE nw is the number of pairs); on failure why says why: a first line,
 * and for value checks a few values around the first difference and a hint (hint_for). msg:
 * the check's text; shape: the checked tensor's (NULL or ndim 0: flat indices). */
static bool eval_check(uint32_t kind, const double *got, uint32_t ng, const double *want,
                       uint32_t nw, double atol, double rtol, const char *msg,
                       const Shape *shape, const Input *in, Str *why) {
  switch (kind) {
  case CHK_CLOSE: {
    if (ng != nw) {
      str_printf(why, "%s: expected %u values, got %u", msg, nw, ng);
      return false;
    }
    long bad = 0, first = -1;
    for (uint32_t i = 0; i < ng; i++) {
      if (close_enough(got[i], want[i], atol, rtol)) continue;
      if (first < 0) first = i;
      bad++;
    }
    if (!bad) return true;
    const Shape *s = shape && shape->ndim && shape_numel(shape) == (long)ng ? shape : NULL;
    str_printf(why, "%s", msg);
    if (s) str_printf(why, " at ");
    fmt_index(why, s, first);
    if (s) {
      str_printf(why, " of shape (");
      for (int d = 0; d < s->ndim; d++) str_printf(why, d ? ", %ld" : "%ld", s->dim[d]);
      str_printf(why, ")");
    }
    str_printf(why, ": expected %.7g, got %.7g (%ld of %u values off; tolerance %.1g + "
               "%.1g*|expected|)", shown(want[first]), shown(got[first]), bad, ng, atol, rtol);
    if (ng > 1) fmt_slice(why, s, first, ng, want, got, "expected", "got", atol, rtol);
    hint_for(why, s, in, got, want, ng, first, atol, rtol);
    return false;
  }
  case CHK_AGREE: { /* got: a then b, nw pairs; both the run's own outputs */
    if (ng != 2 * (uint64_t)nw) {
      str_printf(why, "%s: expected %u values, got %u", msg, nw, ng / 2);
      return false;
    }
    long bad = 0, first = -1;
    for (uint32_t i = 0; i < nw; i++) {
      if (close_enough(got[i], got[nw + i], atol, rtol)) continue;
      if (first < 0) first = i;
      bad++;
    }
    if (!bad) return true;
    const Shape *s = shape && shape->ndim && shape_numel(shape) == (long)nw ? shape : NULL;
    str_printf(why, "%s", msg);
    if (s) str_printf(why, " at ");
    fmt_index(why, s, first);
    str_printf(why, ": %.7g and %.7g differ (%ld of %u values; tolerance %.1g + "
               "%.1g*|value|)", shown(got[first]), shown(got[nw + first]), bad, nw, atol, rtol);
    if (nw > 1) fmt_slice(why, s, first, nw, got, got + nw, "first", "second", atol, rtol);
    return false;
  }
  case CHK_NEAR:
    if (ng == 1 && nw == 1 && close_enough(got[0], want[0], atol, 0)) return true;
    str_printf(why, "%s: expected %.6g, got %.6g (tolerance %.1g)", msg, nw ? want[0] : NAN,
               ng ? got[0] : NAN, atol);
    return false;
  case CHK_SHAPE:
    if (ng == nw && !memcmp(got, want, (size_t)ng * sizeof *got)) return true;
    str_printf(why, "%s: expected shape ", msg);
    fmt_shape(why, want, nw);
    str_printf(why, ", got ");
    fmt_shape(why, got, ng);
    if (ng < 1 || got[0] < 0) str_printf(why, " (not implemented yet?)");
    return false;
  case CHK_NOTNULL:
    if (ng == 1 && got[0] == 1) return true;
    str_printf(why, "%s: got NULL (not implemented yet?)", msg);
    return false;
  case CHK_INPUT: /* not a check: the input of the next one */
    return true;
  case CHK_BOOL:
  case CHK_SANITY:
    if (ng == 1 && got[0] == 1) return true;
    str_printf(why, "%s", msg);
    return false;
  case CHK_DROPOUT: {
    if (ng != nw) {
      str_printf(why, "training-mode output: expected %u values, got %u", nw, ng);
      return false;
    }
    long zeros = 0, kept = 0, other = 0, first = -1;
    for (uint32_t i = 0; i < ng; i++) {
      double o = got[i], w2 = 2.0 * want[i];
      if (o == 0) zeros++;
      else if (fabs(o - w2) <= 1e-5 * (1 + w2)) kept++; /* float32 rounding of w / (1 - p) */
      else if (other++ == 0) first = i;
    }
    const Shape *s = shape && shape->ndim && shape_numel(shape) == (long)ng ? shape : NULL;
    if (other) {
      str_printf(why, "training with dropout 0.5: every entry must be 0 or twice its value "
                 "without dropout (inverted dropout, Dropout_forward); %ld entries are neither, "
                 "the first at ", other);
      fmt_index(why, s, first);
      str_printf(why, ": 0 or %.7g expected, got %.7g", shown(2.0 * want[first]),
                 shown(got[first]));
    } else if (!zeros || !kept) {
      str_printf(why, "training with dropout 0.5: expected some entries dropped and some kept, "
                 "got %ld dropped and %ld kept (is dropout applied when training?)", zeros, kept);
    }
    return !other && zeros && kept;
  }
  case CHK_COUNTERS: { /* atol: the factor (0: information only), rtol: the CNT_* metrics */
    if (ng != CNT_N || nw != CNT_N) {
      str_printf(why, "%s: expected %d memory counters, got %u", msg, CNT_N, ng);
      return false;
    }
    const struct {
      int bit;
      double got, want;
      const char *name, *hint;
    } m[] = {
        {CNT_SECTORS, got[CNT_LD_SECT] + got[CNT_ST_SECT], want[CNT_LD_SECT] + want[CNT_ST_SECT],
         "global memory sectors (loads + stores)",
         "lanes of a warp far apart (uncoalesced), or data read more than once"},
        {CNT_LD_SECTORS, got[CNT_LD_SECT], want[CNT_LD_SECT], "global load sectors",
         "uncoalesced loads, or data read more than once"},
        {CNT_ST_SECTORS, got[CNT_ST_SECT], want[CNT_ST_SECT], "global store sectors",
         "uncoalesced stores: consecutive lanes should write consecutive addresses"},
        {CNT_CONFLICTS, got[CNT_SH_CONFLICTS], want[CNT_SH_CONFLICTS],
         "shared-memory bank-conflict replays", "pad the shared tile (33 floats a row for 32)"},
    };
    if (!(atol > 0)) return true;
    for (size_t k = 0; k < sizeof m / sizeof *m; k++) {
      if (!((int)rtol & m[k].bit) || m[k].got <= atol * m[k].want) continue;
      str_printf(why, "%s: %s: your kernel %.0f, the reference %.0f: more than %g times (%s)",
                 msg, m[k].name, m[k].got, m[k].want, atol, m[k].hint);
      return false;
    }
    return true;
  }
  default: /* CHK_FAIL */
    str_printf(why, "%s", msg);
    return false;
  }
}

/* Whether the counters' bracketed figures are a reference's: false in a practice run (no
 * --reference), where the "expected" counters are the student's own kernel's, unless the
 * kit's recorded table (--counters) has the reference kernel's. */
static bool g_counters_ref = true;

/* The reference kernels' counters, recorded by the kit (tests/grade/reference_counters.txt,
 * written by --write-counters from a graded run of the solutions; grading.sh, section 2,
 * checks that it is current): a practice run in a handout has no reference runner, and shows
 * and judges a kernel's counters against these. One line per counters check: TEST K (its index among the
 * test's counters checks) and CNT_N numbers. Not trusted for scoring: a practice run is not. */
typedef struct {
  char *test;
  int k;
  double v[CNT_N];
} RefCounters;
static RefCounters *g_refc;
static int g_nrefc;
static Str g_refc_out; /* --write-counters: the lines of this run */

static void read_ref_counters(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "grade: note: no reference counters (%s: %s); kernel counters are shown "
                    "alone\n", path, strerror(errno));
    return;
  }
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    RefCounters c = {0};
    char name[256];
    int used = 0;
    if (sscanf(line, "%255s %d%n", name, &c.k, &used) != 2) continue;
    const char *p = line + used;
    int got = 0;
    for (; got < CNT_N; got++) {
      char *end;
      c.v[got] = strtod(p, &end);
      if (end == p) break;
      p = end;
    }
    if (got != CNT_N) continue;
    c.test = xstrdup(name);
    g_refc = xrealloc(g_refc, (size_t)(g_nrefc + 1) * sizeof *g_refc);
    g_refc[g_nrefc++] = c;
  }
  fclose(f);
}

static const double *ref_counters(const char *test, int k) {
  for (int i = 0; i < g_nrefc; i++)
    if (g_refc[i].k == k && !strcmp(g_refc[i].test, test)) return g_refc[i].v;
  return NULL;
}

/* One line of a CHK_COUNTERS check for the report: the student's counters, the reference's
 * in brackets (none in a practice run: they would be the student's own again). */
static void counters_line(Str *b, const char *msg, const double *g, const double *w,
                          bool have_ref) {
  char ref[64];
#define REF(fmt, x) (have_ref ? (snprintf(ref, sizeof ref, " [" fmt "]", (x)), ref) : "")
  str_printf(b, "%s%s%.0f launch%s", msg, *msg ? ": " : "", g[CNT_LAUNCHES],
             g[CNT_LAUNCHES] == 1 ? "" : "es");
  const struct {
    int req, sect;
    const char *name;
  } kinds[] = {{CNT_LD_REQ, CNT_LD_SECT, "loads"}, {CNT_ST_REQ, CNT_ST_SECT, "stores"}};
  for (int k = 0; k < 2; k++) {
    int q = kinds[k].req, s = kinds[k].sect;
    if (!g[q] && !w[q]) continue;
    str_printf(b, "; %s %.0f req, %.1f sectors/req", kinds[k].name, g[q], g[q] ? g[s] / g[q] : 0.0);
    str_printf(b, "%s", REF("%.1f", w[q] ? w[s] / w[q] : 0.0));
  }
  if (g[CNT_ATOMICS] || w[CNT_ATOMICS])
    str_printf(b, "; atomics %.0f%s", g[CNT_ATOMICS], REF("%.0f", w[CNT_ATOMICS]));
  if (g[CNT_SH_REQ] || w[CNT_SH_REQ]) {
    str_printf(b, "; shared %.0f req, %.0f conflict replays", g[CNT_SH_REQ], g[CNT_SH_CONFLICTS]);
    str_printf(b, "%s", REF("%.0f", w[CNT_SH_CONFLICTS]));
  }
  str_printf(b, "; %.1f KB moved%s", g[CNT_KB], REF("%.1f", w[CNT_KB]));
  str_printf(b, "; H100 estimate %.3g us%s\n", g[CNT_H100_US], REF("%.3g", w[CNT_H100_US]));
#undef REF
}

static bool is_value_check(uint32_t kind) {
  return kind == CHK_CLOSE || kind == CHK_NEAR || kind == CHK_DROPOUT;
}

/* How many values a check of the reference run expects (pairs for CHK_AGREE). */
static uint32_t expected_count(const Check *r) {
  return r->h.kind == CHK_AGREE ? r->h.n_got / 2 : r->h.n_want;
}

/* Whether a reference run is fit to judge with: it ended, passes every check of its own, and
 * observes values. Otherwise why says what is wrong with the test. */
static bool reference_ok(const Stream *ref, const RunInfo *r, Str *why) {
  if (ref->malformed || !ref->done) {
    str_printf(why, "the reference run of this test did not finish (%s); the test or the "
               "reference solution is broken, not the submission",
               ref->malformed ? "bad records" : r->timed_out ? "timeout" : "no end record");
    return false;
  }
  bool values = false;
  for (int i = 0; i < ref->n; i++) {
    const Check *c = &ref->c[i];
    Str tmp = {0};
    if (!eval_check(c->h.kind, c->got, c->h.n_got, c->want, expected_count(c), c->h.atol,
                    c->h.rtol, c->msg, NULL, NULL, &tmp)) {
      str_printf(why, "the reference solution fails this test at %s:%u: %s", c->file,
                 c->h.line, tmp.s ? tmp.s : "");
      free(tmp.s);
      return false;
    }
    free(tmp.s);
    values |= is_value_check(c->h.kind);
  }
  if (!values)
    str_printf(why, "this test observes no values of the submission (only EXPECT, "
               "EXPECT_NOT_NULL or EXPECT_SHAPE), so a forged record could pass it; add an "
               "EXPECT_CLOSE or EXPECT_NEAR");
  return values;
}

/* The shape of the tensor that check i of the reference run looks at: the shape that the
 * test's last EXPECT_SHAPE before it stated (in the trusted run), when no other value check
 * came between them and it holds n values; ndim 0 (flat indices) otherwise. */
static Shape shape_before(const Stream *ref, int i, uint32_t n) {
  Shape s = {0};
  for (int k = i - 1; k >= 0; k--) {
    const Check *c = &ref->c[k];
    if (is_value_check(c->h.kind) || c->h.kind == CHK_AGREE) break;
    if (c->h.kind != CHK_SHAPE) continue;
    int nd = c->h.n_want >= 1 ? (int)c->want[0] : 0;
    if (nd < 1 || nd > MAX_SHAPE_DIMS || c->h.n_want != (uint32_t)(1 + nd)) break;
    s.ndim = nd;
    for (int d = 0; d < nd; d++) s.dim[d] = (long)c->want[1 + d];
    if (shape_numel(&s) != (long)n) s.ndim = 0;
    break;
  }
  return s;
}

/* The student's checks against the reference's, in order: the same check at each step, each
 * within the reference's tolerance of the reference's expected values. Returns the number of
 * failed checks; the first MAX_FAIL_SHOWN are described in fails. */
static int g_ncounters; /* judge(): the test's counter checks, and the sums of two of them */
static double g_kb, g_est_us;

static int judge(const char *test, const Stream *ref_all, const Stream *stu_all, Str *fails,
                 Str *info, Str *oks) {
  int kc = 0; /* counters checks seen */
  /* the reference's checks of its own setup are not the student's: left out on both sides */
  Stream refs = *ref_all, stus = *stu_all;
  refs.c = xmalloc(((size_t)ref_all->n + 1) * sizeof *refs.c);
  stus.c = xmalloc(((size_t)stu_all->n + 1) * sizeof *stus.c);
  refs.n = stus.n = 0;
  /* ... and so are the inputs it names (GRADE_INPUT): each goes with the next value check */
  Input *inputs = xmalloc(((size_t)ref_all->n + 1) * sizeof *inputs), pending = {0};
  for (int i = 0; i < ref_all->n; i++) {
    const Check *c = &ref_all->c[i];
    if (c->h.kind == CHK_INPUT) pending = (Input){c->got, c->h.n_got, c->msg};
    if (c->h.kind == CHK_SANITY || c->h.kind == CHK_INPUT) continue;
    inputs[refs.n] = pending;
    if (is_value_check(c->h.kind) || c->h.kind == CHK_AGREE) pending = (Input){0};
    refs.c[refs.n++] = *c;
  }
  for (int i = 0; i < stu_all->n; i++)
    if (stu_all->c[i].h.kind != CHK_SANITY && stu_all->c[i].h.kind != CHK_INPUT)
      stus.c[stus.n++] = stu_all->c[i];
  const Stream *ref = &refs, *stu = &stus;
  int nf = 0;
  for (int i = 0; i < ref->n || i < stu->n; i++) {
    Str why = {0};
    bool stop = false;
    if (i >= stu->n) {
      if (!stu->done) break; /* it died: the outcome says how */
      str_printf(&why, "the test ended after %d of the %d checks of the reference run", stu->n,
                 ref->n);
      stop = true;
    } else if (i >= ref->n) {
      const Check *s = &stu->c[i];
      str_printf(&why, "%s:%u: a check the reference run does not make: %s", s->file,
                 s->h.line, s->msg);
      stop = true;
    } else {
      const Check *r = &ref->c[i], *s = &stu->c[i];
      if (r->h.kind != s->h.kind || r->h.line != s->h.line || strcmp(r->file, s->file)) {
        str_printf(&why, "%s:%u: the test took another path than the reference run (next "
                   "check there: %s:%u)", s->file, s->h.line, r->file, r->h.line);
        if (s->h.kind == CHK_FAIL || s->h.kind == CHK_BOOL) str_printf(&why, ": %s", s->msg);
        stop = true;
      } else {
        const char *msg = s->h.kind == CHK_BOOL || s->h.kind == CHK_FAIL ? s->msg : r->msg;
        const double *want = r->want;
        if (s->h.kind == CHK_COUNTERS && s->h.n_got == CNT_N && r->h.n_want == CNT_N) {
          int k = kc++;
          const double *rec = g_counters_ref ? NULL : ref_counters(test, k);
          if (rec) want = rec; /* a practice run: the kit's recorded reference counters */
          counters_line(info, r->msg, s->got, want, g_counters_ref || rec);
          if (g_counters_ref) {
            str_printf(&g_refc_out, "%s %d", test, k);
            for (int c = 0; c < CNT_N; c++) str_printf(&g_refc_out, " %.9g", r->want[c]);
            str_printf(&g_refc_out, "\n");
          }
          g_ncounters++;
          g_kb += s->got[CNT_KB];
          g_est_us += s->got[CNT_H100_US];
        }
        Str m = {0};
        Shape shape = shape_before(ref, i, expected_count(r));
        if (!eval_check(s->h.kind, s->got, s->h.n_got, want, expected_count(r), r->h.atol,
                        r->h.rtol, msg, &shape, &inputs[i], &m)) {
          str_printf(&why, "%s:%u: %s", r->file, r->h.line, m.s ? m.s : "");
        } else if (s->h.kind == CHK_CLOSE && s->h.n_got) { /* the output check, passed */
          double worst = 0;
          for (uint32_t k = 0; k < s->h.n_got; k++)
            if (isfinite(r->want[k])) worst = fmax(worst, fabs(s->got[k] - r->want[k]));
          str_printf(oks, "%s: %u value%s as expected (largest difference %.2g; tolerance "
                     "%.1g + %.1g*|expected|)\n", msg, s->h.n_got, s->h.n_got == 1 ? "" : "s",
                     worst, r->h.atol, r->h.rtol);
        }
        free(m.s);
      }
    }
    if (why.len) {
      if (++nf <= MAX_FAIL_SHOWN) str_printf(fails, "%s\n", why.s);
    }
    free(why.s);
    if (stop) break;
  }
  if (nf > MAX_FAIL_SHOWN) str_printf(fails, "(%d more failed checks not shown)\n", nf - MAX_FAIL_SHOWN);
  free(refs.c);
  free(stus.c);
  free(inputs);
  return nf;
}

/* ------------------------------------------------------------------ one test */

static rlim_t g_as_limit;       /* RLIMIT_AS of a runner; 0: none */
static Runner g_stu, g_stu_hidden, g_ref, g_ref_hidden;
static bool g_have_ref;  /* there are reference runners */
static bool g_self_ref;  /* ... and they are the submission's own (grading the solutions) */

/* The dependency map (tests/grade/deps.awk; make writes it as RUNNER_DIR/exercises.txt): per
 * exercise, its file's level and the exercises it builds on. "#levels N" with N > 0 (make built
 * the instructor's runners: references present) means each exercise is graded alone: the tests
 * of level k run in RUNNER_DIR/levelk/, whose runner holds the student's files of that level,
 * the references of what they build on (never their own) and the stubs of the rest. Otherwise
 * (a practice run) every test runs in the one runner, and a test that fails while an exercise
 * it builds on fails too is "blocked" by it. */
#define MAX_LEVELS 16
#define EXERCISES "exercises.txt"
typedef struct {
  char ex[16];
  int level;
  char *deps; /* NULL: none */
} ExRow;
static ExRow *g_ex;
static int g_nex, g_nlevels;
static Runner g_lvl[MAX_LEVELS], g_lvl_hidden[MAX_LEVELS];

/* RUNNER_DIR/exercises.txt, when there is one (a runner directory make did not write, like the
 * grader's own tests', has none: no map, no levels). */
static void load_exercises(const char *dir) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, EXERCISES);
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    int n;
    if (sscanf(line, "#levels %d", &n) == 1) {
      if (n < 0 || n > MAX_LEVELS) die("grade: %s: %d levels (at most %d)", path, n, MAX_LEVELS);
      g_nlevels = n;
      continue;
    }
    char ex[16], file[256], deps[256];
    int level;
    if (line[0] == '#' || sscanf(line, "%15s %255s %d %255s", ex, file, &level, deps) != 4)
      continue;
    g_ex = xrealloc(g_ex, (size_t)(g_nex + 1) * sizeof *g_ex);
    ExRow *r = &g_ex[g_nex++];
    snprintf(r->ex, sizeof r->ex, "%s", ex);
    r->level = level;
    r->deps = strcmp(deps, "-") ? xstrdup(deps) : NULL;
  }
  fclose(f);
}

/* Whether exercise ex is one of the comma-separated list. */
static bool in_list(const char *list, const char *ex) {
  size_t n = strlen(ex);
  for (const char *p = list; p && *p;) {
    size_t k = strcspn(p, ",");
    if (k == n && !strncmp(p, ex, n)) return true;
    p += k + (p[k] == ',');
  }
  return false;
}

/* A practice run (no reference: the student's own make grade): the exercise a failed test
 * builds on that failed too (its first failed test in run order), or NULL. (A grade against a
 * reference is the instructor's: each exercise alone where the reference's objects are there,
 * and plain outcomes where they are not.) A stub of the test's own exercise is its own outcome (not
 * implemented), whatever its dependencies do. */
static const char *blocked_by(const Graded *t, Graded *const *done, int ndone) {
  if (g_have_ref || !t->deps || t->outcome == OUT_PASSED || t->outcome == OUT_BROKEN) return NULL;
  if (t->outcome == OUT_TODO) {
    char own[32];
    snprintf(own, sizeof own, "exercise %s ", t->ex);
    if (strstr(t->why, own)) return NULL;
  }
  for (int i = 0; i < ndone; i++)
    if (done[i]->outcome != OUT_PASSED && in_list(t->deps, done[i]->ex)) return done[i]->ex;
  return NULL;
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

/* Turn what the grader saw into an outcome, a score and the messages. */
static void classify(Graded *t, const RunInfo *r, const Stream *stu, int nfails,
                     double timeout_s, long mem_mib, Str *why) {
  char sig[96] = "";
  if (WIFSIGNALED(r->status)) signal_name(WTERMSIG(r->status), sig, sizeof sig);
  char *stub = line_with(t->output, STUB_MARK);
  /* the CUDA emulator stops the program at its first finding (cuda/emu.cpp, check_fail):
   * memcheck, initcheck, racecheck, synccheck, one line, then abort() */
  char *emu = WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGABRT
                  ? line_with(t->output, EMU_MARK) : NULL;
  /* out of memory: address space near the limit when it died, a message saying so, or a
   * SIGKILL the grader did not send (the kernel's OOM killer) */
  uint64_t margin = (uint64_t)(mem_mib << 20) / 4 < (uint64_t)OOM_MARGIN
                        ? (uint64_t)(mem_mib << 20) / 4 : (uint64_t)OOM_MARGIN;
  bool oom = (g_as_limit && stu->vm_peak && stu->vm_peak + margin >= g_as_limit) ||
             strstr(t->output, "out of memory") || strstr(t->output, "Cannot allocate memory") ||
             (WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGKILL && !r->timed_out);

  if (stu->malformed || r->chan_overflow) {
    t->outcome = OUT_TAMPERED;
    str_printf(why, "the channel to the grader carried data the test runner never writes");
  } else if (stu->done) {
    t->outcome = nfails == 0 ? OUT_PASSED : stub ? OUT_TODO : OUT_WRONG;
    if (t->outcome == OUT_TODO) str_printf(why, "%s", stub);
  } else if (r->timed_out) {
    t->outcome = OUT_TIMEOUT;
    str_printf(why, "still running after %g s (the time limit); stopped", timeout_s);
  } else if (WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGXCPU) {
    t->outcome = OUT_TIMEOUT;
    str_printf(why, "used up its CPU time; stopped");
  } else if (WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGSYS) {
    t->outcome = OUT_FORBIDDEN;
    const char *name = stu->syscall_nr >= 0 ? sandbox_syscall_name(stu->syscall_nr) : NULL;
    if (name)
      str_printf(why, "stopped by the grader's sandbox: system call %s is not allowed in a "
                 "test", name);
    else
      str_printf(why, "stopped by the grader's sandbox: a forbidden system call (starting a "
                 "process or thread, signalling another process, opening a file for writing, "
                 "changing files, timers)");
  } else if (emu) {
    t->outcome = OUT_SANITIZER;
    str_printf(why, "stopped by the CUDA emulator's checks (0 points whatever the numbers: on a "
               "GPU this kernel corrupts memory, reads garbage, races or hangs; make %.5s-emu && "
               "build/emu-bin/%.5s --device cuda names the source line):\n%s",
               t->name, t->name, strstr(emu, EMU_MARK) + strlen(EMU_MARK));
  } else if (oom) {
    t->outcome = OUT_OOM;
    if (mem_mib > 0)
      str_printf(why, "ran out of memory (limit %ld MiB); ", mem_mib);
    else
      str_printf(why, "ran out of memory; ");
    if (*sig)
      str_printf(why, "then killed by %s", sig);
    else
      str_printf(why, "then exited with status %d", WEXITSTATUS(r->status));
  } else if (WIFSIGNALED(r->status)) {
    t->outcome = OUT_CRASH;
    str_printf(why, "killed by %s", sig);
  } else if (stub) {
    t->outcome = OUT_TODO;
    str_printf(why, "%s", stub);
  } else {
    t->outcome = OUT_EXITED;
    str_printf(why, "the process exited (status %d) before the test finished: exit() or "
                    "_exit() in exercise code, or a fatal error (see the output)",
               WEXITSTATUS(r->status));
  }
  free(stub);
  free(emu);
}

/* The reference runs of a batch (--ref-cache DIR): a test's channel bytes, stored once its run
 * passed reference_ok, so that grading 200 submissions runs each reference test once. The
 * directory is the grader's (make grade-all makes it 0700 and names it after a hash of the
 * reference runners and the grader); runners cannot write files (the sandbox). */
static const char *g_ref_cache;

static bool ref_cache_path(const Graded *t, char *path, size_t n) {
  if (!g_ref_cache) return false;
  for (const char *p = t->name; *p; p++) /* test names are C identifiers; anything else: no cache */
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  return snprintf(path, n, "%s/%s%s.ref", g_ref_cache, t->name, t->hidden ? ".hidden" : "") < (int)n;
}

static bool ref_cache_load(const Graded *t, RunInfo *r) {
  char path[PATH_MAX];
  if (!ref_cache_path(t, path, sizeof path)) return false;
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < CHAN_CAP;
  if (ok) {
    r->chan = xmalloc((size_t)st.st_size);
    r->chan_len = r->chan_cap = (size_t)st.st_size;
    for (size_t got = 0; ok && got < r->chan_len;) {
      ssize_t k = read(fd, r->chan + got, r->chan_len - got);
      if (k <= 0) ok = false;
      else got += (size_t)k;
    }
    if (!ok) free(r->chan), r->chan = NULL, r->chan_len = r->chan_cap = 0;
  }
  close(fd);
  return ok;
}

static void ref_cache_store(const Graded *t, const RunInfo *r) {
  char path[PATH_MAX], tmp[PATH_MAX + 32];
  if (!ref_cache_path(t, path, sizeof path)) return;
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  bool ok = true;
  for (size_t put = 0; ok && put < r->chan_len;) {
    ssize_t k = write(fd, r->chan + put, r->chan_len - put);
    if (k <= 0) ok = false;
    else put += (size_t)k;
  }
  if (close(fd) != 0 || !ok || rename(tmp, path) != 0) unlink(tmp);
}

static void run_one(Graded *t, double default_timeout, long mem_mib) {
  double timeout_s = t->timeout_s > 0 ? t->timeout_s : default_timeout;
  RunInfo rr = {.out_fd = -1}, rs = {.out_fd = -1};
  Stream ref = {.syscall_nr = -1}, stu = {.syscall_nr = -1};
  Str why = {0}, fails = {0}, info = {0}, oks = {0};
  bool ref_ok = true;
  g_running = t->name;
  g_said = g_running_t0 = now_seconds(); /* a line (its lab's, or the last row) was just printed */
  if (g_have_ref && !g_self_ref) { /* the trusted run first: its values judge the student's */
    bool cached = ref_cache_load(t, &rr);
    if (!cached) {
      run_confined(t->hidden ? &g_ref_hidden : &g_ref, "--run", t->name, timeout_s, g_as_limit,
                   &rr);
      if (rr.stopped) goto out;
    }
    parse_stream(rr.chan, rr.chan_len, &ref);
    ref_ok = reference_ok(&ref, &rr, &why);
    if (ref_ok && !cached) ref_cache_store(t, &rr);
  }
  const Runner *runner = t->hidden ? &g_stu_hidden : &g_stu;
  if (g_nlevels && t->level >= 0)
    runner = t->hidden ? &g_lvl_hidden[t->level] : &g_lvl[t->level];
  run_confined(runner, "--run", t->name, timeout_s, g_as_limit, &rs);
  if (rs.stopped) goto out;
  parse_stream(rs.chan, rs.chan_len, &stu);
  t->seconds = rs.seconds;
  t->output = read_capture(rs.out_fd, &t->output_bytes);
  if (g_self_ref) ref_ok = reference_ok(&stu, &rs, &why);
  if (!ref_ok) {
    t->outcome = OUT_BROKEN;
  } else {
    /* without a reference each check is judged against the run's own expected values */
    g_ncounters = 0, g_kb = g_est_us = 0;
    int nf = stu.malformed ? 0
                           : judge(t->name, g_have_ref && !g_self_ref ? &ref : &stu, &stu,
                                   &fails, &info, &oks);
    classify(t, &rs, &stu, nf, timeout_s, mem_mib, &why);
    t->ncounters = g_ncounters, t->kb = g_kb, t->est_us = g_est_us;
  }
  t->score = t->outcome == OUT_PASSED ? t->points : 0;
out:
  t->why = str_take(&why);
  t->fails = str_take(&fails);
  t->info = str_take(&info);
  if (!t->info) t->info = xstrdup("");
  t->passed_checks = str_take(&oks);
  if (!t->passed_checks) t->passed_checks = xstrdup("");
  if (!t->output) t->output = xstrdup("");
  stream_free(&ref);
  stream_free(&stu);
  free(rr.chan);
  free(rs.chan);
  if (rr.out_fd >= 0) close(rr.out_fd);
  if (rs.out_fd >= 0) close(rs.out_fd);
}

/* The tests a runner holds (runner --list), appended to g_tests. Returns the runner's own
 * address-space size (the base of a test's memory limit), 0 when it cannot list. */
static rlim_t list_tests(const Runner *rn, bool hidden) {
  RunInfo r = {.out_fd = -1};
  run_confined(rn, "--list", NULL, 30, 0, &r);
  free(r.chan);
  Str all = {0};
  char buf[65536];
  ssize_t got;
  for (off_t off = 0; (got = pread(r.out_fd, buf, sizeof buf, off)) > 0; off += got)
    str_add(&all, buf, (size_t)got);
  char *text = str_take(&all);
  close(r.out_fd);
  if (r.stopped || !WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
    fprintf(stderr, "grade: %s --list failed (%s); its output:\n%s\n", rn->path,
            r.stopped ? "interrupted" : "exit status or signal", text);
    free(text);
    return 0;
  }
  rlim_t vm = 1;
  bool ok = true, reference_role = false;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#') { /* "#vm BYTES", "#role reference|student" */
      unsigned long long v;
      if (sscanf(line, "#vm %llu", &v) == 1) vm = (rlim_t)v;
      if (!strcmp(line, "#role reference")) reference_role = true;
      continue;
    }
    if (line[0] == '!') {
      fprintf(stderr, "grade: %s\n", line + 1);
      ok = false;
      continue;
    }
    char *f[5];
    int nf = 0;
    for (char *p = line; nf < 5; nf++) {
      f[nf] = p;
      p = nf < 4 ? strchr(p, '\t') : NULL;
      if (!p) {
        nf++;
        break;
      }
      *p++ = '\0';
    }
    if (nf != 5) {
      fprintf(stderr, "grade: %s --list: bad line '%s'\n", rn->path, line);
      ok = false;
      continue;
    }
    g_tests = xrealloc(g_tests, (size_t)(g_ntests + 1) * sizeof *g_tests);
    g_tests[g_ntests] = (Graded){.name = xstrdup(f[0]), .points = atoi(f[1]),
                                 .timeout_s = atof(f[2]), .file = xstrdup(f[3]),
                                 .desc = xstrdup(f[4]), .seq = g_ntests, .hidden = hidden};
    g_ntests++;
  }
  free(text);
  /* the expected values come from this runner: it must be a reference build (a student's
   * runner holds none, by design) */
  if (ok && !reference_role) {
    fprintf(stderr, "grade: %s is a submission's runner: it holds no expected values, so it "
                    "cannot judge itself; grade it with --reference DIR (the runners built from "
                    "solutions/ with -DGRADE_REFERENCE, make grade-build)\n", rn->path);
    ok = false;
  }
  return ok ? vm : 0;
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
    print_clean(p, (size_t)(z - p) < 600 ? (size_t)(z - p) : 600);
    putchar('\n');
    p = nl ? nl + 1 : end;
  }
}

/* The failed checks of a test: whole checks (a check's first line is not indented, its
 * slice and hints are), as many as fit in max lines, the first always, every one when all;
 * then how many were left out and how to see them. */
#define CHECK_LINES_SHOWN 8
static void print_checks(const char *fails, bool all, const char *indent) {
  int lines = 0, shown = 0, left = 0;
  bool printing = true;
  for (const char *p = fails; *p;) {
    const char *q = p; /* the check: its first line and the indented lines under it */
    int nl = 0;
    do {
      const char *e = strchr(q, '\n');
      q = e ? e + 1 : q + strlen(q);
      nl++;
    } while (*q == ' ');
    if (printing && (all || shown == 0 || lines + nl <= CHECK_LINES_SHOWN)) {
      Str one = {0};
      str_add(&one, p, (size_t)(q - p));
      print_lines(one.s, nl, false, indent);
      free(one.s);
      lines += nl;
      shown++;
    } else {
      printing = false; /* in order: never a later check without the ones before it */
      left += strncmp(p, "(", 1) != 0; /* the judge's "(N more failed checks not shown)" */
    }
    p = q;
  }
  if (left)
    printf("%s(%d more failed check%s: make grade V=1 shows every one; results.json has them "
           "too)\n", indent, left, left == 1 ? "" : "s");
}

static void print_row(const Graded *t, int name_w, bool verbose) {
  g_running = NULL;
  g_said = now_seconds();
  printf("  %-15s %3d/%-3d %-*s  %s%s", OUTCOME_TEXT[t->outcome], t->score, t->points, name_w,
         t->name, t->desc, t->hidden ? " (hidden)" : "");
  if (t->seconds >= 1.0) printf("  [%.1f s]", t->seconds);
  putchar('\n');
  const char *ind = "        ";
  if (verbose && t->passed_checks && *t->passed_checks) { /* -v: what was checked, and how close */
    printf("%soutput checks passed:\n", ind);
    print_lines(t->passed_checks, 1 << 20, false, "          ");
  }
  if (t->info && *t->info) { /* the kernel track's memory counters, passed or not */
    printf("%smemory counters of your kernel%s:\n", ind,
           g_counters_ref ? " [the reference's]"
           : g_nrefc      ? " [the reference kernel's, as the kit recorded them]"
                          : " (a practice run: no reference kernel's to show beside them)");
    print_lines(t->info, 8, false, "          ");
  }
  if (t->outcome == OUT_PASSED) return;
  if (*t->why)
    print_lines(t->why, verbose ? 1 << 20 : t->outcome == OUT_SANITIZER ? 2 : 1, false, ind);
  if (*t->fails && t->outcome != OUT_TODO && t->outcome != OUT_BLOCKED) print_checks(t->fails, verbose, ind);
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


static char *test_report(const Graded *t) {
  Str b = {0};
  str_printf(&b, "%s\nResult: %s (%d/%d)\n", t->desc, OUTCOME_TEXT[t->outcome], t->score,
             t->points);
  if (*t->why) str_printf(&b, "%s\n", t->why);
  if (*t->fails) str_add(&b, t->fails, strlen(t->fails));
  if (t->info && *t->info)
    str_printf(&b, "Memory counters of your kernel%s, from the CUDA emulator:\n%s",
               g_counters_ref ? " [the reference's]"
               : g_nrefc      ? " [the reference kernel's, as the kit recorded them]"
                              : " (a practice run: no reference's)",
               t->info);
  if (t->output_bytes) {
    str_printf(&b, "--- program output (%ld bytes) ---\n", t->output_bytes);
    str_add(&b, t->output, strlen(t->output));
  }
  return str_take(&b);
}

/* Gradescope's results format (common/json.c's writer), one test object per line. The
 * student sees the top-level output and score before the due date, so neither counts a hidden
 * test: with hidden tests selected the top-level score is left out (Gradescope then adds up the
 * tests, each shown by its own visibility) and max_score counts the visible tests only. The
 * file appears at once (json_close renames it over path). */
static const char *g_tests_version = "";

/* Ends a results file's tests array and top-level object, and closes it (Gradescope's and
 * PrairieLearn's writers). */
static bool json_finish(JsonW *w, const char *path) {
  json_arr_end(w);
  json_obj_end(w);
  fputc('\n', w->f);
  if (json_close(w) != 0) {
    fprintf(stderr, "grade: cannot write %s: %s\n", path, strerror(errno));
    return false;
  }
  return true;
}

/* Gradescope's leaderboard: for each kernel exercise whose tests all passed, the device counters
 * of the student's kernels summed over its tests (kilobytes moved, estimated H100 microseconds;
 * lower is better). The counts are what the runner's device model reports (the CUDA emulator
 * today; tests/grade/kernel_test.h is the one place that fills them), so another model swaps in
 * there. They come from the student's process: a leaderboard to compare kernels by, not a
 * grade. */
static void write_leaderboard(JsonW *w, Graded **sel, int n) {
  json_key(w, "leaderboard");
  json_arr_begin(w);
  for (int i = 0; i < n; i++) {
    const Graded *t = sel[i];
    if (!t->ncounters || (i > 0 && !strcmp(sel[i - 1]->ex, t->ex))) continue;
    double kb = 0, us = 0;
    bool all = true;
    for (int j = i; j < n && !strcmp(sel[j]->ex, t->ex); j++) {
      all &= sel[j]->outcome == OUT_PASSED;
      kb += sel[j]->kb, us += sel[j]->est_us;
    }
    if (!all) continue;
    char name[96];
    snprintf(name, sizeof name, "%s KB moved", t->ex);
    json_obj_begin(w);
    json_kv_str(w, "name", name);
    json_kv_num(w, "value", round(kb * 10) / 10);
    json_kv_str(w, "order", "asc");
    json_obj_end(w);
    snprintf(name, sizeof name, "%s H100 estimate (us)", t->ex);
    json_obj_begin(w);
    json_kv_str(w, "name", name);
    json_kv_num(w, "value", round(us * 1e4) / 1e4);
    json_kv_str(w, "order", "asc");
    json_obj_end(w);
  }
  json_arr_end(w);
}

static bool write_results(const char *path, Graded **sel, int n, int vis_score, int vis_max,
                          bool any_hidden, const char *summary, double seconds) {
  JsonW *w = json_open(path);
  if (!w) return false;
  json_obj_begin(w);
  if (!any_hidden) json_kv_int(w, "score", vis_score);
  json_kv_num(w, "execution_time", round(seconds * 100) / 100);
  json_kv_str(w, "output", summary);
  json_kv_str(w, "visibility", "visible");
  json_kv_str(w, "test_output_format", "text"); /* monospace: expected/got columns stay aligned */
  json_key(w, "extra_data");
  w->indent = 0;
  json_obj_begin(w);
  json_kv_int(w, "max_score", vis_max);
  json_kv_str(w, "variant", GRADE_VARIANT);
  json_key(w, "reference");
  json_bool(w, g_have_ref);
  json_key(w, "practice"); /* no sandbox: not the grade that counts (PRACTICE_NOTE) */
  json_bool(w, sandbox_practice);
  json_kv_str(w, "tests_version", g_tests_version);
  json_obj_end(w);
  w->indent = 1;
  write_leaderboard(w, sel, n);
  json_key(w, "tests");
  json_arr_begin(w);
  for (int i = 0; i < n; i++) {
    const Graded *t = sel[i];
    char *report = test_report(t);
    json_obj_begin(w); /* on a line of its own; its members on that line */
    w->indent = 0;
    json_kv_str(w, "name", t->name);
    /* Gradescope orders tests by number: the exercise, then the test's rank in it */
    int rank = 1;
    for (int j = 0; j < i; j++) rank += !strcmp(sel[j]->ex, t->ex);
    char number[40];
    if (*t->ex)
      snprintf(number, sizeof number, "%s.%d", t->ex, rank);
    else
      snprintf(number, sizeof number, "%d.%d", t->lab, i + 1);
    json_kv_str(w, "number", number);
    json_kv_int(w, "score", t->score);
    json_kv_int(w, "max_score", t->points);
    json_kv_str(w, "status", t->outcome == OUT_PASSED ? "passed" : "failed");
    json_kv_str(w, "visibility", t->hidden ? "after_due_date" : "visible");
    json_key(w, "extra_data");
    json_obj_begin(w);
    json_kv_str(w, "outcome", OUTCOME_ID[t->outcome]);
    json_kv_str(w, "exercise", t->ex);
    json_kv_num(w, "seconds", round(t->seconds * 100) / 100);
    json_obj_end(w);
    json_kv_str(w, "output", report);
    json_obj_end(w);
    w->indent = 1;
    free(report);
  }
  return json_finish(w, path);
}

/* PrairieLearn's external-grader results (its "results.json" of an external grader): score as
 * a fraction, gradable, message, output, and per test name, description, points, max_points,
 * message and output. The same visibility rule as Gradescope's top level: hidden tests count
 * in neither the score nor the output (PrairieLearn shows every test it is given, so hidden ones
 * are left out). */
static bool write_prairielearn(const char *path, Graded **sel, int n, int vis_score, int vis_max,
                               const char *summary) {
  JsonW *w = json_open(path);
  if (!w) return false;
  json_obj_begin(w);
  json_key(w, "gradable");
  json_bool(w, 1);
  json_kv_num(w, "score", vis_max ? (double)vis_score / vis_max : 0);
  json_kv_str(w, "message", summary);
  json_kv_str(w, "output", summary);
  json_key(w, "tests");
  json_arr_begin(w);
  for (int i = 0; i < n; i++) {
    const Graded *t = sel[i];
    if (t->hidden) continue;
    char *report = test_report(t);
    json_obj_begin(w);
    w->indent = 0;
    json_kv_str(w, "name", t->name);
    json_kv_str(w, "description", t->desc);
    json_kv_int(w, "points", t->score);
    json_kv_int(w, "max_points", t->points);
    json_kv_str(w, "message", OUTCOME_TEXT[t->outcome]);
    json_kv_str(w, "output", report);
    json_obj_end(w);
    w->indent = 1;
    free(report);
  }
  return json_finish(w, path);
}

/* The build notes (the .txt files of DIR, in name order: the staging's first, then one per
 * refused or failed file), as one text; "" when there are none. Written by the kit's build scripts; the
 * text in them (file names, compiler messages) is the student's, so it is shown cleaned. */
static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether a note is about what is graded: labNN_FILE[.vec].txt (a refused file, a vectorizer
 * report) only when a selected test is of lab NN and of that exercise (the tests of
 * tests/grade/labNN/test_FILE.c; any test of lab NN when none has that file); others always. */
static bool note_wanted(const char *name, Graded **sel, int n) {
  if (strncmp(name, "lab", 3) || lab_of(name) < 0) return true;
  int lab = lab_of(name);
  const char *stem = name + 6;
  size_t len = strcspn(stem, ".");
  bool lab_selected = false, stem_selected = false, stem_known = false;
  for (int i = 0; i < g_ntests; i++) {
    size_t l;
    const char *st = exercise_stem(&g_tests[i], &l);
    stem_known |= g_tests[i].lab == lab && l == len && !strncmp(st, stem, len);
  }
  for (int i = 0; i < n; i++) {
    size_t l;
    const char *st = exercise_stem(sel[i], &l);
    lab_selected |= sel[i]->lab == lab;
    stem_selected |= sel[i]->lab == lab && l == len && !strncmp(st, stem, len);
  }
  return lab_selected && (stem_selected || !stem_known);
}

static char *read_notes(const char *dir, Graded **sel, int nsel) {
  Str b = {0};
  DIR *d = dir ? opendir(dir) : NULL;
  if (!d) return str_take(&b);
  char **names = NULL;
  int nn = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".txt") || !note_wanted(e->d_name, sel, nsel))
      continue;
    names = xrealloc(names, (size_t)(nn + 1) * sizeof *names);
    names[nn++] = xstrdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)nn, sizeof *names, cmp_names);
  for (int i = 0; i < nn; i++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      char buf[8192];
      ssize_t got;
      size_t total = 0;
      while (total < (64u << 10) && (got = read(fd, buf, sizeof buf)) > 0) {
        str_add(&b, buf, (size_t)got);
        total += (size_t)got;
      }
      close(fd);
      if (b.len && b.s[b.len - 1] != '\n') str_add(&b, "\n", 1);
    }
    free(names[i]);
  }
  free(names);
  for (size_t i = 0; i < b.len; i++) /* one text: NULs would cut it */
    if (b.s[i] == '\0') b.s[i] = '?';
  return str_take(&b);
}

/* ------------------------------------------------------------------ main */

static _Noreturn void finish(int status) {
  fflush(stdout);
  fflush(stderr);
  if (g_cwd[0]) rmdir(g_cwd);
  if (g_scratch[0]) rmdir(g_scratch);
  _exit(status);
}

static void ensure_std_fds(void) {
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
      _exit(2);
}

/* The directory this executable is in (the default runner directory). */
static char *own_dir(void) {
  char buf[PATH_MAX];
#ifdef __linux__
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
#else
  ssize_t n = -1; /* elsewhere make grade names the runners (--runner) */
#endif
  if (n <= 0) return xstrdup(".");
  buf[n] = '\0';
  char *slash = strrchr(buf, '/');
  if (slash) *slash = '\0';
  return xstrdup(buf);
}

static void open_runners(Runner *vis, Runner *hid, const char *dir, const char *what) {
  if (!runner_open(vis, dir, RUNNER))
    die("grade: cannot open %s (the %s runner): %s; build it with make grade-build", vis->path,
        what, strerror(errno));
  if (!runner_open(hid, dir, RUNNER_HIDDEN)) hid->fd = -1;
}

int main(int argc, char **argv) {
  ensure_std_fds();
  setvbuf(stdout, NULL, _IOLBF, 0);
  Options o = parse_args(argc, argv);
  g_parent = getpid();
#ifdef __linux__
  prctl(PR_SET_CHILD_SUBREAPER, 1); /* whatever a runner leaves behind comes back to us */
  prctl(PR_SET_DUMPABLE, 0);        /* our /proc entries (cwd, fd, environ) are closed to runners */
#endif
  char *self_dir = own_dir();
  const char *runner_dir = o.runner ? o.runner : self_dir;

  g_ref_cache = o.ref_cache;
  if (o.tests_version) g_tests_version = o.tests_version;
  load_exercises(runner_dir);
  if (g_nlevels && o.reference) {
    for (int k = 0; k < g_nlevels; k++) {
      char dir[PATH_MAX];
      snprintf(dir, sizeof dir, "%s/level%d", runner_dir, k);
      open_runners(&g_lvl[k], &g_lvl_hidden[k], dir, "submission's");
    }
    g_stu = g_lvl[0];
    g_stu_hidden = g_lvl_hidden[0];
  } else {
    g_nlevels = 0; /* level runners are judged against a reference only */
    open_runners(&g_stu, &g_stu_hidden, runner_dir, "submission's");
  }
  if (o.reference) {
    char a[PATH_MAX], b[PATH_MAX];
    g_self_ref = realpath(o.reference, a) && realpath(runner_dir, b) && !strcmp(a, b);
    if (g_self_ref) {
      g_ref = g_stu;
      g_ref_hidden = g_stu_hidden;
    } else {
      open_runners(&g_ref, &g_ref_hidden, o.reference, "reference");
    }
    g_have_ref = true;
  }
  g_counters_ref = g_have_ref; /* self-reference: the runners are the reference */
  if (o.counters && !g_have_ref) read_ref_counters(o.counters);
  const char *tmpdir = getenv("TMPDIR");
  snprintf(g_scratch, sizeof g_scratch, "%s/attention-lab-grade-XXXXXX",
           tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (!mkdtemp(g_scratch)) die("grader: cannot create %s: %s", g_scratch, strerror(errno));
  snprintf(g_cwd, sizeof g_cwd, "%s/cwd", g_scratch);
  if (mkdir(g_cwd, 0500) != 0) fatal("grader: cannot create %s: %s", g_cwd, strerror(errno));
  install_handlers();

  /* The list of tests comes from the reference where there is one: a submission can neither
   * add a test nor change one's points. */
  const Runner *lv = g_have_ref ? &g_ref : &g_stu, *lh = g_have_ref ? &g_ref_hidden : &g_stu_hidden;
  rlim_t vm = list_tests(lv, false);
  if (vm && lh->fd >= 0) {
    if (g_have_ref && g_stu_hidden.fd < 0) {
      fprintf(stderr, "grade: %s has hidden tests but %s/%s is missing; build it with make "
                      "grade-build\n", lh->path, runner_dir, RUNNER_HIDDEN);
      finish(2);
    }
    rlim_t vh = list_tests(lh, true);
    vm = vh > vm ? vh : vh ? vm : 0;
  }
  if (!vm || !validate_tests()) finish(2);
  bool mapped = true;
  for (int i = 0; i < g_ntests; i++) {
    Graded *t = &g_tests[i];
    for (int k = 0; k < g_nex; k++)
      if (!strcmp(g_ex[k].ex, t->ex)) t->level = g_ex[k].level, t->deps = g_ex[k].deps;
    if (g_nlevels && (t->level < 0 || t->level >= g_nlevels)) {
      fprintf(stderr, "grade: test %s (%s): its description starts with no exercise of "
                      "tests/grade/manifest.txt, so no runner holds it alone\n",
              t->name, short_path(t->file));
      mapped = false;
    }
  }
  if (!mapped) finish(2);
  qsort(g_tests, (size_t)g_ntests, sizeof *g_tests, cmp_tests);

  Graded **sel = xmalloc(((size_t)g_ntests + 1) * sizeof *sel);
  int n = 0, max_score = 0, name_w = 4;
  bool exact = false; /* --only names an exercise: its tests only (not 2.5's for 2.1's name) */
  for (int i = 0; i < g_ntests && o.only; i++) exact |= names_exercise(&g_tests[i], o.only);
  for (int i = 0; i < g_ntests; i++) {
    Graded *t = &g_tests[i];
    if (o.lab >= 0 && t->lab != o.lab) continue;
    if (o.only && !(exact ? names_exercise(t, o.only) : strstr(t->name, o.only) != NULL))
      continue;
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
  if (o.mem_mib > 0) g_as_limit = vm + ((rlim_t)o.mem_mib << 20);
  /* whatever is at the results path now is not ours: it must not outlive this run */
  if (o.json) unlink(o.json);
  if (o.prairielearn) unlink(o.prairielearn);

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
  printf("grade: sandbox: %s%s; expected values: %s\n", sandbox_describe(),
         g_stu.static_exe ? ", static runner (no executable memory)" : "",
         g_self_ref ? "these runners are the reference (each run judged against its own, and "
                      "it must pass)"
         : g_have_ref ? "the reference run of each test"
                      : "each run's own (no --reference: a practice run)");

  if (sandbox_practice) printf("grade: %s\n", PRACTICE_NOTE);
  if (g_nlevels)
    printf("grade: each exercise graded alone: its tests run with the references of the "
           "exercises it builds on (tests/grade/manifest.txt), never with its own\n");

  char *notes = read_notes(o.notes, sel, n);
  if (*notes) {
    putchar('\n');
    print_lines(notes, 200, false, "");
  }

  double t0 = now_seconds();
  typedef struct {
    int lab, score, max, vis_score, vis_max; /* vis_: the visible tests only */
  } Subtotal;
  Subtotal *sub = xcalloc((size_t)nlabs, sizeof *sub);
  int score = 0, vis_score = 0, vis_max = 0, k = -1;
  bool any_hidden = false;
  for (int i = 0; i < n; i++) {
    Graded *t = sel[i];
    if (i == 0 || t->lab != sel[i - 1]->lab) {
      sub[++k].lab = t->lab;
      printf("\nlab%02d\n", t->lab);
    }
    run_one(t, o.timeout_s, o.mem_mib);
    const char *dep = g_stop ? NULL : blocked_by(t, sel, i);
    if (dep) {
      free(t->why);
      Str w = {0};
      str_printf(&w, "blocked by %s: exercise %s fails here too, and %s builds on it; fix %s "
                 "first (your instructor's grade tests each exercise alone, with the reference "
                 "%s)", dep, dep, t->ex, dep, dep);
      t->why = str_take(&w);
      t->outcome = OUT_BLOCKED;
      t->score = 0;
    }
    if (g_stop) {
      if (o.json) unlink(o.json); /* nothing there can be ours */
      fprintf(stderr, "grade: interrupted; no results written%s%s\n",
              o.json ? ", removed " : "", o.json ? o.json : "");
      finish(128 + (int)g_stop);
    }
    print_row(t, name_w, o.verbose);
    score += t->score;
    sub[k].score += t->score;
    sub[k].max += t->points;
    if (t->hidden) {
      any_hidden = true;
    } else {
      vis_score += t->score;
      vis_max += t->points;
      sub[k].vis_score += t->score;
      sub[k].vis_max += t->points;
    }
    if (i + 1 == n || sel[i + 1]->lab != t->lab)
      printf("  lab%02d: %d/%d\n", t->lab, sub[k].score, sub[k].max);
  }

  /* results.json's top-level output: what the student sees before the due date, so the
   * visible tests only (hidden ones count nowhere in it, not even as a lab's subtotal) */
  Str summary = {0};
  if (sandbox_practice) str_printf(&summary, "%s\n", PRACTICE_NOTE);
  if (*GRADE_VARIANT) str_printf(&summary, "VARIANT=%s\n", GRADE_VARIANT);
  if (!g_have_ref)
    str_printf(&summary, "practice run: no reference solution, each test judged against its "
                         "own expected values\n");
  if (*notes) str_add(&summary, notes, strlen(notes)); /* str_printf would cut it at 1 KiB */
  if (nlabs > 1) printf("\nSubtotals\n");
  for (k = 0; k < nlabs; k++) {
    if (sub[k].vis_max) str_printf(&summary, "lab%02d: %d/%d\n", sub[k].lab, sub[k].vis_score,
                                   sub[k].vis_max);
    if (nlabs > 1) printf("  lab%02d %4d/%d\n", sub[k].lab, sub[k].score, sub[k].max);
  }
  str_printf(&summary, "Score: %d/%d", vis_score, vis_max);
  char *summary_text = str_take(&summary);
  putchar('\n');
  if (any_hidden)
    printf("The student sees the visible tests only until the due date: %d/%d\n", vis_score,
           vis_max);
  /* every runner is gone (each was reaped before the next began) */
  if (o.json && write_results(o.json, sel, n, vis_score, vis_max, any_hidden, summary_text,
                              now_seconds() - t0))
    printf("results: %s\n", o.json);
  if (o.write_counters && g_counters_ref) {
    FILE *f = fopen(o.write_counters, "w");
    const char *head = "# The reference kernels' memory counters per counters check (TEST K, then\n"
                       "# record.h's CNT_* in order), from the CUDA emulator. Written by\n"
                       "# make grade GRADE_FLAGS=\"--write-counters FILE\" on the solutions\n"
                       "# (grading.sh checks that it is current); read by a practice run (a\n"
                       "# handout: no reference runner) through --counters.\n";
    if (!f || fprintf(f, "%s%s", head, g_refc_out.s ? g_refc_out.s : "") < 0 || fclose(f) != 0)
      fprintf(stderr, "grade: cannot write %s: %s\n", o.write_counters, strerror(errno));
  }
  if (o.prairielearn && write_prairielearn(o.prairielearn, sel, n, vis_score, vis_max, summary_text))
    printf("results (PrairieLearn): %s\n", o.prairielearn);
  printf("Score: %d/%d%s\n", score, max_score, sandbox_practice ? " (practice grade)" : "");
  finish(score == max_score ? 0 : 1);
}
