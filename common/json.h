/* json.h — a small streaming JSON writer for summary.json files. Keeps commas and nesting
 * right; NaN/Inf become null (JSON has neither). */
#ifndef AL_JSON_H
#define AL_JSON_H

#include <stdio.h>

typedef struct JsonW {
  FILE *f;
  int depth;
  int first[32];   /* first element at this depth? */
  int after_key;
  int indent;      /* pretty-print when 1 */
} JsonW;

/* Open path for writing (writes to path.tmp then renames on json_close). NULL + message on error. */
JsonW *json_open(const char *path);
int json_close(JsonW *w);  /* 0 on success */
void json_obj_begin(JsonW *w);
void json_obj_end(JsonW *w);
void json_arr_begin(JsonW *w);
void json_arr_end(JsonW *w);
void json_key(JsonW *w, const char *key);
void json_str(JsonW *w, const char *s);
void json_num(JsonW *w, double v);
void json_int(JsonW *w, long v);
void json_bool(JsonW *w, int v);
void json_null(JsonW *w);
void json_floats(JsonW *w, const float *v, long n);   /* a flat array */
void json_doubles(JsonW *w, const double *v, long n);
/* Host floats of shape (ndim dims, row-major) as nested arrays, the innermost dim as one row
 * of numbers. */
void json_nested(JsonW *w, const float *data, int ndim, const int *shape);
/* A tensor as nested arrays following its shape (json_nested of its data, from any device). */
struct Tensor;
void json_tensor(JsonW *w, const struct Tensor *t);
/* Length of the well-formed UTF-8 sequence at p, 0 when it is not one (string writers turn
 * such bytes into U+FFFD). */
#include <stddef.h>
size_t json_utf8_len(const unsigned char *p);
/* s as a JSON string literal on f: quotes, backslashes and control characters escaped, and
 * U+FFFD for each byte that is not part of well-formed UTF-8 (untrusted text is safe here). */
void json_write_string(FILE *f, const char *s);
/* key + value shorthands */
#define json_kv_num(w, k, v) (json_key((w), (k)), json_num((w), (v)))
#define json_kv_int(w, k, v) (json_key((w), (k)), json_int((w), (v)))
#define json_kv_str(w, k, v) (json_key((w), (k)), json_str((w), (v)))

#endif
