/* util.h — small helpers shared by everything: fatal errors, checked allocation, timing. */
#ifndef AL_UTIL_H
#define AL_UTIL_H

#include <stddef.h>

#include <stdio.h>

/* Print "error: <lab>: <message>" to stderr and exit(1) (the lab's name once cli_parse set it
 * with die_set_program; a message already starting with "<lab>:" keeps its own). */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The readers' error report: write the message into err (when err and errlen) as one line,
 * control characters (from file names and file contents) turned into '?', and return -1, so
 * that a reader can `return fail(err, errlen, "...", ...);`. */
int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void die_set_program(const char *name);
/* Writes that prefix ("error: lab03: ") for msg to f: for errors reported without exiting. */
void error_prefix(FILE *f, const char *msg);
/* "lab03: " (or "" before cli_parse): for warnings in the same style. */
const char *program_prefix(void);
void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* 64-byte aligned host memory (bytes rounded up to 64; free() releases it): the CPU's device
 * memory (cpu/cpu_backend.c) and the host arena's chunks (context.c). Dies when out of memory. */
void *xaligned_alloc(size_t bytes);
double now_seconds(void);  /* monotonic clock */
long peak_rss_kb(void);    /* from getrusage */
/* mkdir -p; returns 0 on success, -1 with errno set. */
int mkdir_p(const char *path);
/* Join dir and name into a malloc'd "dir/name". */
char *path_join(const char *dir, const char *name);

#endif
