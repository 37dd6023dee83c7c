/* error.c — tensor_error, the error every check of the kit reports through, its catch for the
 * tests, and shape_str for the messages. Layer: calls only util.c (context.h has the map). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tensor.h"
#include "util.h"

/* per thread: an error in a twin's thread (ag_context_use) must not jump into the main thread's
 * handler */
static _Thread_local jmp_buf *g_catch;
static _Thread_local char g_errmsg[1024];

void tensor_catch_errors(jmp_buf *env) { g_catch = env; }
const char *tensor_last_error(void) { return g_errmsg; }

_Noreturn void tensor_error(const char *op, const char *fmt, ...) {
  int n = snprintf(g_errmsg, sizeof g_errmsg, "%s: ", op ? op : "tensor");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_errmsg + n, sizeof g_errmsg - (size_t)n, fmt, ap);
  va_end(ap);
  if (g_catch) {
    jmp_buf *env = g_catch;
    g_catch = NULL; /* one catch per arming: a second error inside a handler must not loop */
    longjmp(*env, 1);
  }
  fflush(stdout);
  fprintf(stderr, "error: %s%s\n", program_prefix(), g_errmsg); /* "error: lab06: op: ..." */
  exit(1);
}

char *shape_str(const Tensor *t, char *buf, size_t n) {
  if (!t) {
    snprintf(buf, n, "(null)");
    return buf;
  }
  size_t k = (size_t)snprintf(buf, n, "(");
  for (int i = 0; i < t->ndim && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, i ? ", %d" : "%d", t->shape[i]);
  if (k < n) snprintf(buf + k, n - k, ")");
  return buf;
}
