/* summary.h — what a lab records in OUT/summary.json, one call per value.
 *
 *   Summary *S = summary_new("lab04", args.seed);       // {"lab": "lab04", "seed": 42, ...}
 *   summary_shape(S, "book_check/output_shape", out);   // nested objects, '/' between keys
 *   summary_str(S, "complexity_table/0/architecture", "CNN"); // a number: an array index
 *   summary_write(S, args.out);                          // writes and frees
 *
 * A value is copied when it is recorded (a tensor through a host copy), so a chapter records it
 * where it computes it and the tensor may die with its arena afterwards. Members are written in
 * the order they were first recorded; recording a path again replaces its value in place. The
 * file appears atomically (common/json.c). */
#ifndef AL_SUMMARY_H
#define AL_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include "tensor.h"

typedef struct Summary Summary;

/* A new record holding "lab" and "seed". */
Summary *summary_new(const char *lab, uint64_t seed);
void summary_str(Summary *s, const char *path, const char *v); /* NULL records null */
void summary_num(Summary *s, const char *path, double v);      /* NaN/Inf record null */
void summary_int(Summary *s, const char *path, long v);
void summary_bool(Summary *s, const char *path, bool v);
void summary_null(Summary *s, const char *path);
void summary_floats(Summary *s, const char *path, const float *v, long n);
void summary_doubles(Summary *s, const char *path, const double *v, long n);
void summary_ints(Summary *s, const char *path, const int *v, int n);
void summary_shape(Summary *s, const char *path, const Tensor *t); /* [d0, d1, ...] */
void summary_tensor(Summary *s, const char *path, const Tensor *t); /* nested arrays; NULL: null */
/* A path built with printf (for array elements: summary_path("rows/%d/n", r)); the result lives
 * in a static buffer until the next call, so pass it straight to a summary_ function. */
const char *summary_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Write dir/summary.json, print "wrote PATH" and free s; exits with a clear error when the
 * file cannot be written. */
void summary_write(Summary *s, const char *dir);
void summary_free(Summary *s);

#endif
