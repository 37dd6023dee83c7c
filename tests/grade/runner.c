/* runner.c — main() of a test runner: the graded tests linked with one submission's exercise
 * code. The grader (grader.c) starts one runner per test, already confined (a seccomp filter,
 * limits, an empty directory it cannot write, an unprivileged user when the grader is root):
 *
 *   runner --list        the tests it holds, one per line: name, points, timeout, file, desc
 *   runner --run NAME    run one test; its observations go out on fd 3 (record.h)
 *
 * Nothing here decides a score. This process holds student code, so whatever it says is only
 * evidence: the grader compares the values it reports with a trusted reference run. What this
 * file does take care of is that an honest test reports faithfully: signal handlers that
 * student constructors installed are reset before the test, and from then on no handler can
 * be installed (a handler would let student code run in the middle of the test's own code). */
#include <errno.h>
#include <fcntl.h>
#ifdef __linux__
#include <linux/filter.h>
#include <linux/seccomp.h>
#endif
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__ /* elsewhere (macOS's practice grade) no seccomp and no /proc */
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif
#include <unistd.h>

#include "../../common/rng.h"
#include "grade.h"
#include "record.h"

#define GRADE_SEED 1234 /* every test starts from the same random stream */
#define MAX_MSG 512     /* bytes of a check's message */

/* ------------------------------------------------------------------ registry */

typedef struct {
  const char *name, *desc, *file;
  int points;
  GradedFn fn;
  double timeout_s;
} Test;

static Test *g_tests;
static int g_ntests;

void graded_register(const char *name, int points, const char *desc, GradedFn fn,
                     const char *file) {
  g_tests = realloc(g_tests, (size_t)(g_ntests + 1) * sizeof *g_tests);
  if (!g_tests) _exit(70);
  g_tests[g_ntests++] = (Test){name, desc ? desc : "", file, points, fn, 0};
}

typedef struct {
  const char *name;
  double seconds;
} TimeoutOverride;
static TimeoutOverride *g_overrides;
static int g_noverrides;

void graded_set_timeout(const char *name, double seconds) {
  g_overrides = realloc(g_overrides, (size_t)(g_noverrides + 1) * sizeof *g_overrides);
  if (!g_overrides) _exit(70);
  g_overrides[g_noverrides++] = (TimeoutOverride){name, seconds};
}

/* ------------------------------------------------------------------ the channel */

static void send_all(const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t w = write(REC_CHAN_FD, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    c += w;
    n -= (size_t)w;
  }
}

static void send_record(uint32_t type, const void *payload, uint32_t len) {
  RecHeader h = {type, len};
  send_all(&h, sizeof h);
  if (len) send_all(payload, len);
}

/* One CHECK record; got/want are n_got/n_want doubles (NULL sends NaNs). */
static void send_check(uint32_t kind, const char *file, int line, const char *msg,
                       const double *got, uint32_t n_got, const double *want, uint32_t n_want,
                       double atol, double rtol) {
  const char *f = short_path(file);
  size_t fl = strlen(f), ml = strnlen(msg, MAX_MSG);
  size_t vals = ((size_t)n_got + n_want) * sizeof(double);
  if (sizeof(CheckHeader) + fl + ml + vals > REC_MAX_PAYLOAD) { /* too big: send no values */
    n_got = n_want = 0;
    vals = 0;
  }
  CheckHeader h = {kind, (uint32_t)line, n_got, n_want, (uint32_t)fl, (uint32_t)ml, atol, rtol};
  RecHeader rh = {REC_CHECK, (uint32_t)(sizeof h + fl + ml + vals)};
  size_t total = sizeof rh + rh.len; /* one write per record */
  char *rec = malloc(total);
  if (!rec) return;
  char *p = rec;
  memcpy(p, &rh, sizeof rh), p += sizeof rh;
  memcpy(p, &h, sizeof h), p += sizeof h;
  memcpy(p, f, fl), p += fl;
  memcpy(p, msg, ml), p += ml;
  if (n_got) memcpy(p, got, n_got * sizeof(double)), p += n_got * sizeof(double);
  if (n_want) memcpy(p, want, n_want * sizeof(double));
  send_all(rec, total);
  free(rec);
}

/* The text of the check just sent (REC_NOTE). */
static void send_note(const char *msg) {
  send_record(REC_NOTE, msg, (uint32_t)strnlen(msg, MAX_MSG));
}

/* Floats as doubles in one buffer: a then b (b may be absent: m = 0). */
static double *widen(const float *a, long n, const float *b, long m) {
  double *d = malloc(((size_t)n + (size_t)m + 1) * sizeof *d);
  if (!d) return NULL;
  for (long i = 0; i < n; i++) d[i] = a ? a[i] : NAN;
  for (long i = 0; i < m; i++) d[n + i] = b ? b[i] : NAN;
  return d;
}

/* A check over too many values: one that fails (never a vacuous check). */
static int too_many(uint32_t kind, const char *file, int line, long n) {
  if (n >= 0 && n <= (long)(REC_MAX_PAYLOAD / 16)) return 0;
  double nan = NAN;
  send_check(kind, file, line, "too many values for one check (split it)", &nan, 1, NULL, 0, 0,
             0);
  return 1;
}

/* ------------------------------------------------------------------ the checks (grade.h) */
/* Every check sends its observation first, with no formatting on the way (a printf handler
 * registered by student code runs only in the formatting of messages, after the values are
 * gone). The student's runner sends got only; the reference runner got, want and tolerances. */

void grade_fail(const char *file, int line, const char *fmt, ...) {
  send_check(CHK_FAIL, file, line, fmt, NULL, 0, NULL, 0, 0, 0);
  char msg[MAX_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  send_note(msg);
}

void grade_expect_(const char *file, int line, int ok, const char *fmt, ...) {
  double got = ok ? 1 : 0, want = 1;
  send_check(CHK_BOOL, file, line, fmt, &got, 1, &want, GRADE_REF, 0, 0);
  if (ok) return; /* the message of a passing check is never shown */
  char msg[MAX_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  send_note(msg);
}

int expect_not_null_(const char *file, int line, int not_null, const char *what) {
  double got = not_null ? 1 : 0, want = 1;
  send_check(CHK_NOTNULL, file, line, what ? what : "", &got, 1, &want, GRADE_REF, 0, 0);
  return not_null;
}

/* The shape is part of the exercise's statement: both builds know it, and the local verdict
 * lets the test stop before reading past a tensor of another shape. */
int expect_shape_(const char *file, int line, const Tensor *t, const char *what, int ndim,
                  const int *shape) {
  double got[1 + T_MAXDIM] = {-1}, want[1 + T_MAXDIM] = {(double)ndim};
  int gn = t && t->ndim >= 0 && t->ndim <= T_MAXDIM ? t->ndim : -1;
  if (ndim < 0 || ndim > T_MAXDIM) ndim = 0;
  got[0] = gn;
  for (int i = 0; i < gn; i++) got[1 + i] = t->shape[i];
  for (int i = 0; i < ndim; i++) want[1 + i] = shape[i];
  send_check(CHK_SHAPE, file, line, what ? what : "", got,
             (uint32_t)(1 + (gn > 0 ? gn : 0)), want, GRADE_REF ? (uint32_t)(1 + ndim) : 0, 0,
             0);
  return gn == ndim && !memcmp(got, want, (size_t)(1 + ndim) * sizeof *got);
}

/* got and want (or a and b) must be different memory: a returned tensor whose data points at
 * the buffer the test later fills would otherwise compare equal to it. */
static int overlaps(const float *a, const float *b, long n) {
  return a && b && n > 0 && a < b + n && b < a + n;
}

/* The student's side: n floats of a (and of b for CHK_AGREE), nothing else. */
void grade_observe_(const char *file, int line, int kind, const float *a, const float *b,
                    long n) {
  if (too_many((uint32_t)kind, file, line, n)) return;
  int two = kind == CHK_AGREE;
  double *d = widen(two && overlaps(a, b, n) ? NULL : a, n, b, two ? n : 0);
  if (!d) return;
  send_check((uint32_t)kind, file, line, "", d, (uint32_t)(two ? 2 * n : n), NULL, 0, 0, 0);
  free(d);
}

void grade_observe1_(const char *file, int line, double got) {
  send_check(CHK_NEAR, file, line, "", &got, 1, NULL, 0, 0, 0);
}

#if GRADE_REF
static void send_values(uint32_t kind, const char *file, int line, const float *got,
                        const float *want, long n, double atol, double rtol, const char *what) {
  if (too_many(kind, file, line, n)) return;
  double *d = widen(overlaps(got, want, n) ? NULL : got, n, want, n);
  if (!d) return;
  send_check(kind, file, line, what, d, (uint32_t)n, d + n, (uint32_t)n, atol, rtol);
  free(d);
}

void expect_close_(const char *file, int line, const float *got, const float *want, long n,
                   double atol, double rtol, const char *what) {
  send_values(CHK_CLOSE, file, line, got, want, n, atol, rtol, what);
}

void expect_near_(const char *file, int line, double got, double want, double tol,
                  const char *what) {
  send_check(CHK_NEAR, file, line, what, &got, 1, &want, 1, tol, 0);
}

void expect_inverted_dropout_half_(const char *file, int line, const float *got,
                                   const float *want, long n) {
  send_values(CHK_DROPOUT, file, line, got, want, n, 0, 0, "training-mode output");
}

void expect_agree_(const char *file, int line, const float *a, const float *b, long n,
                   double atol, double rtol, const char *what) {
  if (too_many(CHK_AGREE, file, line, n)) return;
  double *d = widen(overlaps(a, b, n) ? NULL : a, n, b, n);
  if (!d) return;
  send_check(CHK_AGREE, file, line, what, d, (uint32_t)(2 * n), NULL, 0, atol, rtol);
  free(d);
}

void grade_input_(const char *file, int line, const float *x, long n, const char *what) {
  if (!x || n < 1 || n > (long)(REC_MAX_PAYLOAD / 16)) return; /* no input: no hint from it */
  double *d = widen(x, n, NULL, 0);
  if (!d) return;
  send_check(CHK_INPUT, file, line, what, d, (uint32_t)n, NULL, 0, 0, 0);
  free(d);
}

void grade_sanity_(const char *file, int line, int ok, const char *fmt, ...) {
  char msg[MAX_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  double got = ok ? 1 : 0, want = 1;
  send_check(CHK_SANITY, file, line, msg, &got, 1, &want, 1, 0, 0);
}
#endif

void grade_counters_(const char *file, int line, const double *v, int n, double factor,
                     int metrics, const char *what) {
  if (n < 0 || n > CNT_N) n = 0;
#if GRADE_REF
  send_check(CHK_COUNTERS, file, line, what ? what : "", v, (uint32_t)n, v, (uint32_t)n, factor,
             metrics);
#else
  (void)factor, (void)metrics, (void)what;
  send_check(CHK_COUNTERS, file, line, "", v, (uint32_t)n, NULL, 0, 0, 0);
#endif
}

/* ------------------------------------------------------------------ signals */

static int g_status_fd = -1; /* /proc/self/status, opened before the test */

/* VmPeak from /proc/self/status: tells "out of memory" from other deaths. Async-signal-safe. */
static void report_vm_peak(void) {
  static char buf[4096];
  if (g_status_fd < 0) return;
  ssize_t n = pread(g_status_fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return;
  buf[n] = '\0';
  const char *p = strstr(buf, "VmPeak:");
  if (!p) return;
  uint64_t kb = 0;
  for (p += 7; *p == ' ' || *p == '\t'; p++) {
  }
  for (; *p >= '0' && *p <= '9'; p++) kb = kb * 10 + (uint64_t)(*p - '0');
  uint64_t bytes = kb << 10;
  send_record(REC_VMPEAK, &bytes, sizeof bytes);
}

static void on_fatal_signal(int sig, siginfo_t *si, void *ctx) {
  (void)ctx;
#ifdef __linux__
  if (sig == SIGSYS) {
    int32_t nr = si->si_syscall;
    send_record(REC_SYSCALL, &nr, sizeof nr);
  } else
#endif
  {
    (void)si;
    report_vm_peak();
  }
  raise(sig); /* the handler was reset on entry (SA_RESETHAND): this one is fatal */
}

/* Undo whatever student constructors did to signals, then watch the fatal ones. */
static void setup_signals(void) {
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP) signal(s, SIG_DFL);
  signal(SIGXFSZ, SIG_IGN); /* past the output cap writes fail, the test goes on */
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, NULL);
  static char altstack[64 * 1024]; /* a stack overflow needs somewhere to run the handler */
  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
  sigaltstack(&ss, NULL);
  struct sigaction sa = {.sa_sigaction = on_fatal_signal,
                         .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND | SA_NODEFER};
  sigemptyset(&sa.sa_mask);
  const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGSYS};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
  atexit(report_vm_peak); /* exit() before the end, e.g. die("out of memory ...") */
}

/* From here on rt_sigaction and sigaltstack fail with EPERM (a second seccomp filter on top
 * of the grader's; no_new_privs is already set). */
static void lock_signals(void) {
#ifdef __linux__
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigaction, 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sigaltstack, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = sizeof f / sizeof *f, .filter = f};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
#endif
}

/* ------------------------------------------------------------------ main */

static int usage(void) {
  fprintf(stderr, "usage: runner --list | --run NAME   (started by the grader, grader.c)\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--list")) {
    /* its own size first: a test's memory limit comes on top of it */
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
      if (fscanf(f, "%lu", &pages) != 1) pages = 0;
      fclose(f);
    }
    if (pages) /* (no /proc/self/statm on macOS: the grader then adds its limit to nothing) */
      printf("#vm %llu\n", (unsigned long long)pages * (unsigned long long)sysconf(_SC_PAGESIZE));
    /* which build: a reference runner computes expected values, a student's never does */
    printf("#role %s\n", GRADE_REF ? "reference" : "student");
    for (int k = 0; k < g_noverrides; k++)
      for (int i = 0; i < g_ntests; i++)
        if (!strcmp(g_tests[i].name, g_overrides[k].name)) g_tests[i].timeout_s = g_overrides[k].seconds;
    for (int i = 0; i < g_ntests; i++) {
      const Test *t = &g_tests[i];
      printf("%s\t%d\t%g\t%s\t%s\n", t->name, t->points, t->timeout_s, short_path(t->file),
             t->desc);
    }
    for (int k = 0; k < g_noverrides; k++) { /* an override must name a test */
      int found = 0;
      for (int i = 0; i < g_ntests; i++) found |= !strcmp(g_tests[i].name, g_overrides[k].name);
      if (!found || !(g_overrides[k].seconds > 0))
        printf("!GRADED_TIMEOUT(%s, %g): %s\n", g_overrides[k].name, g_overrides[k].seconds,
               found ? "seconds must be positive" : "no such test");
    }
    return fflush(stdout) == 0 ? 0 : 1;
  }
  if (argc != 3 || strcmp(argv[1], "--run")) return usage();
  const Test *t = NULL;
  for (int i = 0; i < g_ntests && !t; i++)
    if (!strcmp(g_tests[i].name, argv[2])) t = &g_tests[i];
  if (!t) {
    fprintf(stderr, "runner: no test named %s\n", argv[2]);
    return 2;
  }
  g_status_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  setup_signals();
  lock_signals();
  rng_seed(GRADE_SEED);
  ag_set_grad_enabled(true);
  t->fn();
  fflush(stdout);
  fflush(stderr);
  send_record(REC_DONE, NULL, 0);
  _exit(0); /* no atexit handlers: the test is over */
}
