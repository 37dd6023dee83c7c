/* golden_io.h — reading the golden files the PyTorch scripts in tests/golden/ write, for the
 * unit tests (linked into the unit runner like gradcheck.c).
 *
 * A golden text file holds one record per line, "name count v0 v1 ...". The scripts fill their
 * inputs and weights with gen(i) = scale * sin(a i + b), computed in double and rounded to
 * float32, so a test rebuilds the same tensors with golden_gen / golden_fill. */
#ifndef AL_GOLDEN_IO_H
#define AL_GOLDEN_IO_H

#include "../common/tensor.h"

/* A golden file read whole: path relative to the repository root (where the runner starts),
 * script the tests/golden/ script that writes it (named in "rerun ..." messages). */
typedef struct {
  const char *path, *script;
  char *text; /* NUL-terminated contents, malloc'd */
} Golden;

/* The whole file as a malloc'd NUL-terminated string, or NULL when it cannot be read. */
char *slurp(const char *path);

/* Read g->path; false (with a test failure naming the file) when it cannot be read. */
#define golden_open(g, path, script) golden_open_(__FILE__, __LINE__, (g), (path), (script))
bool golden_open_(const char *file, int line, Golden *g, const char *path, const char *script);
void golden_close(Golden *g);

/* The record `name` as a malloc'd array of *n floats, or NULL (and a test failure) when the
 * file has no such record. */
#define golden_record(g, name, n) golden_record_(__FILE__, __LINE__, (g), (name), (n))
float *golden_record_(const char *file, int line, const Golden *g, const char *name, long *n);

/* Compare got (n floats) with the record `name`: same count, then |got - want| <= atol +
 * rtol |want| elementwise (check_close_). */
#define golden_check(g, name, got, n, atol, rtol) \
  golden_check_(__FILE__, __LINE__, (g), (name), (got), (n), (atol), (rtol))
void golden_check_(const char *file, int line, const Golden *g, const char *name,
                   const float *got, long n, double atol, double rtol);

/* v[i] = scale * sin(a i + b) for i < n, in double rounded to float32: the scripts' gen()
 * (sine_fill, tests/sine_fill.h, which the graded tests use too). */
void golden_fill(float *v, long n, double a, double b, double scale);
/* A new tensor of the given shape filled by golden_fill. */
Tensor *golden_gen(int ndim, const int *shape, double a, double b, double scale);

#endif
