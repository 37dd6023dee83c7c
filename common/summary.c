/* summary.c — the summary.json recorder: a small tree of copied values, written with json.c. */
#include "summary.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

typedef enum {
  N_OBJ, N_ARR, N_STR, N_NUM, N_INT, N_BOOL, N_NULL, N_FLOATS, N_DOUBLES, N_TENSOR
} Kind;

typedef struct Node {
  char *key; /* member name; NULL for an array element */
  Kind kind;
  struct Node **kids; /* N_OBJ, N_ARR: members or elements, in recording order */
  int n, cap;
  char *s;                /* N_STR */
  double d;               /* N_NUM */
  long i;                 /* N_INT, N_BOOL */
  void *v;                /* N_FLOATS (float), N_DOUBLES (double), N_TENSOR (float) */
  long len;               /* their count */
  int ndim, shape[T_MAXDIM]; /* N_TENSOR */
} Node;

struct Summary {
  Node root;
};

static void clear(Node *x) { /* free what x holds, keep its key */
  for (int k = 0; k < x->n; k++) {
    clear(x->kids[k]);
    free(x->kids[k]->key);
    free(x->kids[k]);
  }
  free(x->kids);
  free(x->s);
  free(x->v);
  char *key = x->key;
  memset(x, 0, sizeof *x);
  x->key = key;
}

static Node *add_kid(Node *parent, const char *key, size_t keylen) {
  if (parent->n == parent->cap) {
    parent->cap = parent->cap ? 2 * parent->cap : 8;
    parent->kids = xrealloc(parent->kids, sizeof(Node *) * (size_t)parent->cap);
  }
  Node *x = xcalloc(1, sizeof *x);
  x->kind = N_NULL;
  if (key) {
    x->key = xmalloc(keylen + 1);
    memcpy(x->key, key, keylen);
    x->key[keylen] = 0;
  }
  parent->kids[parent->n++] = x;
  return x;
}

static bool is_index(const char *seg, size_t len) {
  if (len == 0) return false;
  for (size_t k = 0; k < len; k++)
    if (!isdigit((unsigned char)seg[k])) return false;
  return true;
}

/* The node at path, created (with the objects and arrays leading to it) when missing. */
static Node *at(Summary *s, const char *path) {
  if (!s || !path || !*path) die("summary: a value needs a path (got '%s')", path ? path : "");
  Node *x = &s->root;
  const char *seg = path;
  for (;;) {
    const char *dot = strchr(seg, '/');
    size_t len = dot ? (size_t)(dot - seg) : strlen(seg);
    if (len == 0) die("summary: empty segment in path '%s'", path);
    const bool index = is_index(seg, len);
    if (x->kind != N_OBJ && x->kind != N_ARR) { /* a fresh node becomes the container it needs */
      clear(x);
      x->kind = index ? N_ARR : N_OBJ;
    }
    Node *next = NULL;
    if (x->kind == N_ARR) {
      if (!index) die("summary: '%.*s' in '%s' names a member of an array", (int)len, seg, path);
      long i = strtol(seg, NULL, 10);
      if (i > x->n) die("summary: '%s' skips array elements (the array has %d)", path, x->n);
      next = i < x->n ? x->kids[i] : add_kid(x, NULL, 0);
    } else {
      for (int k = 0; k < x->n && !next; k++)
        if (strlen(x->kids[k]->key) == len && memcmp(x->kids[k]->key, seg, len) == 0)
          next = x->kids[k];
      if (!next) next = add_kid(x, seg, len);
    }
    x = next;
    if (!dot) return x;
    seg = dot + 1;
  }
}

static Node *leaf(Summary *s, const char *path, Kind kind) {
  Node *x = at(s, path);
  clear(x);
  x->kind = kind;
  return x;
}

Summary *summary_new(const char *lab, uint64_t seed) {
  Summary *s = xcalloc(1, sizeof *s);
  s->root.kind = N_OBJ;
  summary_str(s, "lab", lab);
  summary_int(s, "seed", (long)seed);
  return s;
}

void summary_str(Summary *s, const char *path, const char *v) {
  Node *x = leaf(s, path, v ? N_STR : N_NULL);
  if (v) x->s = xstrdup(v);
}
void summary_num(Summary *s, const char *path, double v) { leaf(s, path, N_NUM)->d = v; }
void summary_int(Summary *s, const char *path, long v) { leaf(s, path, N_INT)->i = v; }
void summary_bool(Summary *s, const char *path, bool v) { leaf(s, path, N_BOOL)->i = v; }
void summary_null(Summary *s, const char *path) { leaf(s, path, N_NULL); }

void summary_floats(Summary *s, const char *path, const float *v, long n) {
  Node *x = leaf(s, path, N_FLOATS);
  x->v = xmalloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  if (n > 0) memcpy(x->v, v, sizeof(float) * (size_t)n);
  x->len = n > 0 ? n : 0;
}

void summary_doubles(Summary *s, const char *path, const double *v, long n) {
  Node *x = leaf(s, path, N_DOUBLES);
  x->v = xmalloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (n > 0) memcpy(x->v, v, sizeof(double) * (size_t)n);
  x->len = n > 0 ? n : 0;
}

void summary_ints(Summary *s, const char *path, const int *v, int n) {
  Node *x = leaf(s, path, N_ARR);
  for (int k = 0; k < n; k++) {
    Node *e = add_kid(x, NULL, 0);
    e->kind = N_INT;
    e->i = v[k];
  }
}

void summary_shape(Summary *s, const char *path, const Tensor *t) {
  if (!t) {
    summary_null(s, path);
    return;
  }
  summary_ints(s, path, t->shape, t->ndim);
}

void summary_tensor(Summary *s, const char *path, const Tensor *t) {
  if (!t) {
    summary_null(s, path);
    return;
  }
  Node *x = leaf(s, path, N_TENSOR);
  x->ndim = t->ndim;
  memcpy(x->shape, t->shape, sizeof x->shape);
  x->len = t->size;
  x->v = xmalloc(sizeof(float) * (size_t)(t->size > 0 ? t->size : 1));
  tensor_to_host(t, x->v); /* the data may live on another device */
}

const char *summary_path(const char *fmt, ...) {
  static char buf[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof buf)
    die("summary: path '%s...' longer than %zu bytes", buf, sizeof buf - 1);
  return buf;
}

static void write_node(JsonW *w, const Node *x) {
  switch (x->kind) {
  case N_OBJ:
  case N_ARR:
    x->kind == N_OBJ ? json_obj_begin(w) : json_arr_begin(w);
    for (int k = 0; k < x->n; k++) {
      if (x->kind == N_OBJ) json_key(w, x->kids[k]->key);
      write_node(w, x->kids[k]);
    }
    x->kind == N_OBJ ? json_obj_end(w) : json_arr_end(w);
    break;
  case N_STR: json_str(w, x->s); break;
  case N_NUM: json_num(w, x->d); break;
  case N_INT: json_int(w, x->i); break;
  case N_BOOL: json_bool(w, (int)x->i); break;
  case N_NULL: json_null(w); break;
  case N_FLOATS: json_floats(w, x->v, x->len); break;
  case N_DOUBLES: json_doubles(w, x->v, x->len); break;
  case N_TENSOR: json_nested(w, x->v, x->ndim, x->shape); break;
  }
}

void summary_write(Summary *s, const char *dir) {
  char *path = path_join(dir, "summary.json");
  JsonW *w = json_open(path);
  if (!w) die("cannot write %s (is --out a writable directory?)", path);
  write_node(w, &s->root);
  if (json_close(w) != 0) die("writing %s failed", path);
  printf("wrote %s\n", path);
  free(path);
  summary_free(s);
}

void summary_free(Summary *s) {
  if (!s) return;
  clear(&s->root);
  free(s);
}
