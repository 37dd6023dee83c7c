/* lab01_data.c — the book's generated data and the `x y` file reader of lab01. */
#include "lab01_data.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/rng.h"
#include "../../common/util.h"

float lab01_f(float x) { return 2.0f * sinf(x) + powf(x, 0.8f); }

float lab01_f10(float x) { return 2.0f * sinf(x) + x; }

void lab01_arange(float start, double step, int n, float *out) {
  for (int i = 0; i < n; i++) out[i] = (float)((double)start + step * i);
}

/* x sorted uniform [0, 5), then y = f(x) + N(0, std) noise, both from r */
static void make_data(Rng *r, int n, float *x, float *y, float (*f)(float), float std) {
  for (int i = 0; i < n; i++) x[i] = rng_uniform(r, 0.0f, 1.0f) * 5.0f;
  float *tmp = xcalloc((size_t)n, sizeof(float)); /* y is generated after the sort */
  lab01_sort_xy(x, tmp, n);
  free(tmp);
  for (int i = 0; i < n; i++) y[i] = f(x[i]) + rng_normal(r, 0.0f, std);
}

void lab01_make_data(int n, float *x, float *y) { make_data(&g_rng, n, x, y, lab01_f, 0.5f); }

void lab01_make_data10(Rng *r, int n, float *x, float *y) {
  make_data(r, n, x, y, lab01_f10, 1.0f);
}

int lab01_sort_xy(float *x, float *y, int n) {
  /* insertion sort: stable, in place, and n is small (tens to thousands of points) */
  int changed = 0;
  for (int i = 1; i < n; i++) {
    float kx = x[i], ky = y[i];
    int j = i - 1;
    while (j >= 0 && x[j] > kx) {
      x[j + 1] = x[j];
      y[j + 1] = y[j];
      j--;
    }
    if (j != i - 1) changed = 1;
    x[j + 1] = kx;
    y[j + 1] = ky;
  }
  return changed;
}

/* Parse one float token; 1 on success. */
static int parse_num(const char **p, float *v) {
  while (**p == ' ' || **p == '\t' || **p == ',') (*p)++;
  if (!**p) return 0;
  char *end;
  errno = 0;
  float f = strtof(*p, &end);
  if (end == *p) return 0;
  if (*end && *end != ' ' && *end != '\t' && *end != ',') return 0; /* "1.5abc" */
  *p = end;
  *v = f;
  return 1;
}

int lab01_read_xy(const char *path, float **x, float **y, int *n, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "%s: cannot open (%s)", path, strerror(errno));
    return -1;
  }
  int cap = 64, cnt = 0, lineno = 0, rc = 0;
  float *xs = xmalloc(sizeof(float) * (size_t)cap), *ys = xmalloc(sizeof(float) * (size_t)cap);
  char *line = NULL;
  size_t linecap = 0;
  ssize_t len;
  while ((len = getline(&line, &linecap, f)) >= 0) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    for (char *c = line; *c; c++)
      if (*c == '\r' || *c == '\n') *c = '\0';
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) continue; /* blank or comment-only */
    float vx, vy, extra;
    const char *q = p;
    if (!parse_num(&q, &vx) || !parse_num(&q, &vy) || parse_num(&q, &extra) ||
        (q = q + strspn(q, " \t,"), *q)) {
      snprintf(err, errlen, "%s:%d: expected two numbers \"x y\", got \"%.60s\"", path, lineno,
               p);
      rc = -1;
      break;
    }
    if (!isfinite(vx) || !isfinite(vy)) {
      snprintf(err, errlen, "%s:%d: x and y must be finite numbers, got \"%.60s\"", path,
               lineno, p);
      rc = -1;
      break;
    }
    if (cnt == cap) {
      cap *= 2;
      xs = xrealloc(xs, sizeof(float) * (size_t)cap);
      ys = xrealloc(ys, sizeof(float) * (size_t)cap);
    }
    xs[cnt] = vx;
    ys[cnt] = vy;
    cnt++;
  }
  free(line);
  if (rc == 0 && ferror(f)) {
    snprintf(err, errlen, "%s: read error after line %d", path, lineno);
    rc = -1;
  }
  fclose(f);
  if (rc == 0 && cnt < 2) {
    snprintf(err, errlen,
             "%s: %d data point%s; need at least 2 (the parametric model leaves one out)", path,
             cnt, cnt == 1 ? "" : "s");
    rc = -1;
  }
  if (rc) {
    free(xs);
    free(ys);
    return -1;
  }
  *x = xs;
  *y = ys;
  *n = cnt;
  return 0;
}
