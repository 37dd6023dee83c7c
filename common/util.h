/* util.h — small helpers shared by everything: fatal errors, checked allocation, timing. */
#ifndef AL_UTIL_H
#define AL_UTIL_H

#include <stddef.h>

/* Print "error: <message>" to stderr and exit(1). */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
double now_seconds(void);  /* monotonic clock */
long peak_rss_kb(void);    /* from getrusage */
/* mkdir -p; returns 0 on success, -1 with errno set. */
int mkdir_p(const char *path);
/* Join dir and name into a malloc'd "dir/name". */
char *path_join(const char *dir, const char *name);

#endif
