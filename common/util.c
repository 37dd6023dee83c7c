/* util.c — fatal errors, checked allocation, clocks, paths. */
#define _POSIX_C_SOURCE 200809L
/* macOS: _POSIX_C_SOURCE alone hides BSD parts of Apple's headers (ru_maxrss, strcasestr) */
#define _DARWIN_C_SOURCE
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

static const char *g_program; /* "lab03" once cli_parse has run: every error names the lab */

void die_set_program(const char *name) { g_program = name; }

const char *program_prefix(void) {
  static char buf[64];
  snprintf(buf, sizeof buf, "%s%s", g_program ? g_program : "", g_program ? ": " : "");
  return buf;
}

/* "error: lab03: message": the one prefix style of every lab's errors. A message that already
 * starts with "lab03: " is not prefixed twice. */
void error_prefix(FILE *f, const char *msg) {
  fputs("error: ", f);
  size_t n = g_program ? strlen(g_program) : 0;
  if (n && !(msg && strncmp(msg, g_program, n) == 0 && msg[n] == ':')) fprintf(f, "%s: ", g_program);
}

_Noreturn void die(const char *fmt, ...) {
  fflush(stdout);
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  error_prefix(stderr, msg);
  fprintf(stderr, "%s\n", msg);
  exit(1);
}

int fail(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || errlen == 0) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  for (char *p = err; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  return -1;
}

void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) die("out of memory allocating %zu bytes", n);
  return p;
}

void *xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) die("out of memory allocating %zu x %zu bytes", count, size);
  return p;
}

void *xaligned_alloc(size_t bytes) {
  size_t n = (bytes + 63) & ~(size_t)63;
  void *p = aligned_alloc(64, n ? n : 64);
  if (!p) die("out of memory: %zu bytes", bytes);
  return p;
}

void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) die("out of memory reallocating to %zu bytes", n);
  return q;
}

char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = xmalloc(n);
  memcpy(d, s, n);
  return d;
}

double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

long peak_rss_kb(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
#ifdef __APPLE__
  return ru.ru_maxrss / 1024; /* bytes on macOS */
#else
  return ru.ru_maxrss; /* kilobytes on Linux */
#endif
}

int mkdir_p(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char c = buf[i];
      buf[i] = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
      buf[i] = c;
    }
  }
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return 0;
}

char *path_join(const char *dir, const char *name) {
  size_t a = strlen(dir), b = strlen(name);
  char *p = xmalloc(a + b + 2);
  memcpy(p, dir, a);
  size_t k = a;
  if (a && dir[a - 1] != '/') p[k++] = '/';
  memcpy(p + k, name, b + 1);
  return p;
}
