/* json.c — a streaming JSON writer: it tracks commas and nesting so callers just emit keys and
 * values in order. Pretty-printing puts each object member (and each row of a nested array) on
 * its own line and keeps arrays of numbers on one line, so a 1000-point loss curve stays
 * readable. The file appears atomically: everything goes to path.tmp, which json_close renames
 * over path. */
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor.h"
#include "util.h"

#define JSON_MAXDEPTH 32

/* The handle the caller sees is the first member, so a JsonW* converts back to this. */
typedef struct JsonImpl {
  JsonW w;
  char *path, *tmp;
  char is_obj[JSON_MAXDEPTH];   /* container kind at each depth */
  char multiline[JSON_MAXDEPTH]; /* did this container break lines (so its end does too)? */
} JsonImpl;

static JsonImpl *impl(JsonW *w) { return (JsonImpl *)w; }

JsonW *json_open(const char *path) {
  JsonImpl *j = xcalloc(1, sizeof *j);
  j->path = xstrdup(path);
  j->tmp = xmalloc(strlen(path) + 5);
  sprintf(j->tmp, "%s.tmp", path);
  j->w.f = fopen(j->tmp, "w");
  if (!j->w.f) {
    fprintf(stderr, "error: %scannot write %s: %s\n", program_prefix(), j->tmp, strerror(errno));
    free(j->path);
    free(j->tmp);
    free(j);
    return NULL;
  }
  j->w.indent = 1;
  j->w.first[0] = 1;
  return &j->w;
}

static void newline(JsonW *w, int depth) {
  fputc('\n', w->f);
  for (int i = 0; i < depth; i++) fputs("  ", w->f);
}

/* Before any value or key: the comma, and in pretty mode the line break an object member (or a
 * container inside an array) gets. */
static void before_item(JsonW *w, int is_key, int opens_container) {
  JsonImpl *j = impl(w);
  if (w->after_key) { /* a member's value follows its key on the same line */
    if (is_key) die("json: a key ('json_key') must be followed by a value, not another key");
    w->after_key = 0;
    return;
  }
  int d = w->depth;
  if (d == 0) {
    if (!w->first[0]) die("json: the document already has its top-level value");
    w->first[0] = 0;
    return;
  }
  if (j->is_obj[d] && !is_key)
    die("json: a value inside an object needs a key first (json_key)");
  if (!j->is_obj[d] && is_key) die("json: json_key used inside an array");
  if (!w->first[d]) fputc(',', w->f);
  if (w->indent && (j->is_obj[d] || opens_container)) {
    newline(w, d);
    j->multiline[d] = 1;
  } else if (!w->first[d] && w->indent) {
    fputc(' ', w->f);
  }
  w->first[d] = 0;
}

static void open_container(JsonW *w, int obj) {
  before_item(w, 0, 1);
  if (w->depth + 1 >= JSON_MAXDEPTH) die("json: nesting deeper than %d", JSON_MAXDEPTH - 1);
  JsonImpl *j = impl(w);
  fputc(obj ? '{' : '[', w->f);
  w->depth++;
  w->first[w->depth] = 1;
  j->is_obj[w->depth] = (char)obj;
  j->multiline[w->depth] = 0;
}

static void close_container(JsonW *w, int obj) {
  JsonImpl *j = impl(w);
  if (w->depth == 0 || j->is_obj[w->depth] != obj)
    die("json: %s without a matching %s", obj ? "json_obj_end" : "json_arr_end",
        obj ? "json_obj_begin" : "json_arr_begin");
  if (w->after_key) die("json: a key at the end of an object has no value");
  if (w->indent && j->multiline[w->depth]) newline(w, w->depth - 1);
  fputc(obj ? '}' : ']', w->f);
  w->depth--;
}

void json_obj_begin(JsonW *w) { open_container(w, 1); }
void json_obj_end(JsonW *w) { close_container(w, 1); }
void json_arr_begin(JsonW *w) { open_container(w, 0); }
void json_arr_end(JsonW *w) { close_container(w, 0); }

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong forms, no surrogates
 * D800-DFFF, nothing above U+10FFFF), or 0 when the bytes there are not one. */
size_t json_utf8_len(const unsigned char *p) {
  unsigned c = p[0];
  if (c < 0x80) return 1;
  unsigned lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
  size_t n;
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;      /* below: overlong */
    else if (c == 0xed) hi = 0x9f; /* above: surrogates */
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;      /* below: overlong */
    else if (c == 0xf4) hi = 0x8f; /* above: past U+10FFFF */
  } else
    return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  return n;
}

/* A JSON string: quotes, backslashes and control characters escaped; well-formed UTF-8 passes
 * through, any other byte becomes U+FFFD, so the file is always valid JSON. */
void json_write_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    unsigned char ch = *p;
    switch (ch) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    case '\b': fputs("\\b", f); break;
    case '\f': fputs("\\f", f); break;
    default:
      if (ch < 0x20 || ch == 0x7f) {
        fprintf(f, "\\u%04x", ch);
      } else if (ch >= 0x80) {
        size_t n = json_utf8_len(p);
        if (n)
          fwrite(p, 1, n, f);
        else
          fputs("\\ufffd", f);
        p += n ? n : 1;
        continue;
      } else {
        fputc(ch, f);
      }
    }
    p++;
  }
  fputc('"', f);
}

void json_key(JsonW *w, const char *key) {
  before_item(w, 1, 0);
  json_write_string(w->f, key ? key : "");
  fputs(w->indent ? ": " : ":", w->f);
  w->after_key = 1;
}

void json_str(JsonW *w, const char *s) {
  before_item(w, 0, 0);
  if (s)
    json_write_string(w->f, s);
  else
    fputs("null", w->f);
}

/* %.9g round-trips a float exactly; doubles from float math need no more. */
static void write_num(FILE *f, double v) {
  if (isfinite(v))
    fprintf(f, "%.9g", v);
  else
    fputs("null", f); /* JSON has no NaN or Infinity */
}

void json_num(JsonW *w, double v) {
  before_item(w, 0, 0);
  write_num(w->f, v);
}

void json_int(JsonW *w, long v) {
  before_item(w, 0, 0);
  fprintf(w->f, "%ld", v);
}

void json_bool(JsonW *w, int v) {
  before_item(w, 0, 0);
  fputs(v ? "true" : "false", w->f);
}

void json_null(JsonW *w) {
  before_item(w, 0, 0);
  fputs("null", w->f);
}

void json_floats(JsonW *w, const float *v, long n) {
  json_arr_begin(w);
  const char *sep = w->indent ? ", " : ",";
  for (long i = 0; i < n; i++) {
    if (i) fputs(sep, w->f);
    write_num(w->f, (double)v[i]);
  }
  json_arr_end(w);
}

void json_doubles(JsonW *w, const double *v, long n) {
  json_arr_begin(w);
  const char *sep = w->indent ? ", " : ",";
  for (long i = 0; i < n; i++) {
    if (i) fputs(sep, w->f);
    write_num(w->f, v[i]);
  }
  json_arr_end(w);
}

static void nested_rec(JsonW *w, const float *data, int ndim, const int *shape, int dim,
                       long *off) {
  if (dim >= ndim - 1) { /* the innermost dim: numbers */
    json_floats(w, data + *off, shape[dim]);
    *off += shape[dim];
    return;
  }
  json_arr_begin(w);
  for (int i = 0; i < shape[dim]; i++) nested_rec(w, data, ndim, shape, dim + 1, off);
  json_arr_end(w);
}

void json_nested(JsonW *w, const float *data, int ndim, const int *shape) {
  long off = 0;
  nested_rec(w, data, ndim < 1 ? 1 : ndim > T_MAXDIM ? T_MAXDIM : ndim, shape, 0, &off);
}

void json_tensor(JsonW *w, const Tensor *t) {
  if (!t) {
    json_null(w);
    return;
  }
  const float *data = t->data;
  float *host = NULL;
  if (t->device != DEV_CPU) {
    host = xmalloc(sizeof(float) * (size_t)(t->size ? t->size : 1));
    tensor_to_host(t, host);
    data = host;
  }
  json_nested(w, data, t->ndim, t->shape);
  free(host);
}

int json_close(JsonW *w) {
  if (!w) return -1;
  JsonImpl *j = impl(w);
  int rc = 0;
  if (w->depth != 0 || w->after_key) {
    fprintf(stderr, "error: %s%s: closed with %d unclosed object(s)/array(s); not written\n",
            program_prefix(), j->path, w->depth);
    rc = -1;
  }
  if (rc == 0) fputc('\n', w->f);
  if (ferror(w->f)) {
    fprintf(stderr, "error: %swriting %s failed\n", program_prefix(), j->tmp);
    rc = -1;
  }
  if (fclose(w->f) != 0 && rc == 0) {
    fprintf(stderr, "error: %swriting %s failed: %s\n", program_prefix(), j->tmp, strerror(errno));
    rc = -1;
  }
  if (rc == 0 && rename(j->tmp, j->path) != 0) {
    fprintf(stderr, "error: %scannot rename %s to %s: %s\n", program_prefix(), j->tmp, j->path, strerror(errno));
    rc = -1;
  }
  if (rc != 0) remove(j->tmp); /* never leave a half-written file behind */
  free(j->path);
  free(j->tmp);
  free(j);
  return rc;
}
