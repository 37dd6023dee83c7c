/* exercise.c — what a stub says when it is called. */
#include "exercise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_todo_calls;

int exercise_todo_calls(void) { return g_todo_calls; }

void exercise_todo(const char *number, const char *name, const char *file) {
  g_todo_calls++;
  /* Say it once per exercise: a stub inside a training loop must not flood the terminal. */
  static const char *said[64];
  static int nsaid;
  for (int i = 0; i < nsaid; i++)
    if (said[i] == name) return;
  if (nsaid < 64) said[nsaid++] = name;
  const char *rel = strstr(file, "labs/");
  fflush(stdout);
  fprintf(stderr, "exercise %s %s is not implemented yet (%s)\n", number, name, rel ? rel : file);
}

void exercise_missing(const char *what) {
  fflush(stdout);
  fprintf(stderr,
          "stopping here: %s needs an exercise you have not implemented yet (see the message "
          "above). Fill in the stub, then run make again.\n",
          what);
  exit(3);
}

void *exercise_need(void *ptr, const char *what) {
  if (!ptr) exercise_missing(what);
  return ptr;
}
