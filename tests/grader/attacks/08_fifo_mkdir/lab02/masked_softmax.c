/* Attack 8 (issue 15): break grading for everyone. Replacing the next test's capture file
 * with a FIFO blocked the old grader forever in openat; creating ../000 ... ../999 made it
 * stop with "File exists", no results.json, and scratch left in /tmp. Expected: the sandbox
 * kills the runner at mkfifo; the grader goes on, writes results.json, removes its scratch. */
#include <stdio.h>
#include <sys/stat.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)X, (void)valid_lens;
  char name[32];
  for (int i = 0; i < 1000; i++) {
    snprintf(name, sizeof name, "../%04d.out", i);
    mkfifo(name, 0666);
    snprintf(name, sizeof name, "../%03d", i);
    mkdir(name, 0777);
  }
  return NULL;
}
