/* golden_io.c — the golden-file reader shared by the unit tests (see golden_io.h). */
#include "golden_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sine_fill.h"
#include "test.h"

char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (len < 0) {
    fclose(f);
    return NULL;
  }
  char *s = malloc((size_t)len + 1);
  size_t got = fread(s, 1, (size_t)len, f);
  s[got] = '\0';
  fclose(f);
  return s;
}

bool golden_open_(const char *file, int line, Golden *g, const char *path, const char *script) {
  g->path = path;
  g->script = script;
  g->text = slurp(path);
  if (!g->text)
    test_fail(file, line, "cannot read %s (run from the repository root; %s writes it)", path,
              script);
  return g->text != NULL;
}

void golden_close(Golden *g) {
  free(g->text);
  g->text = NULL;
}

float *golden_record_(const char *file, int line, const Golden *g, const char *name, long *n) {
  size_t len = strlen(name);
  for (const char *p = g->text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    if (strncmp(p, name, len) != 0 || p[len] != ' ') continue;
    char *end;
    long cnt = strtol(p + len, &end, 10);
    float *v = malloc(sizeof(float) * (size_t)(cnt > 0 ? cnt : 1));
    for (long i = 0; i < cnt; i++) v[i] = strtof(end, &end);
    *n = cnt;
    return v;
  }
  test_fail(file, line, "%s: golden record '%s' missing (rerun %s)", g->path, name, g->script);
  *n = 0;
  return NULL;
}

void golden_check_(const char *file, int line, const Golden *g, const char *name,
                   const float *got, long n, double atol, double rtol) {
  long m;
  float *want = golden_record_(file, line, g, name, &m);
  if (!want) return;
  if (m != n)
    test_fail(file, line, "%s: %ld values, golden has %ld", name, n, m);
  else
    check_close_(file, line, name, got, want, n, atol, rtol);
  free(want);
}

void golden_fill(float *v, long n, double a, double b, double scale) {
  sine_fill(v, n, a, b, scale);
}

Tensor *golden_gen(int ndim, const int *shape, double a, double b, double scale) {
  return sine_tensor(ndim, shape, a, b, scale);
}
