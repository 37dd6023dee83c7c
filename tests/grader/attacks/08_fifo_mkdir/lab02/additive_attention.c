/* Attack 8, second way: mkdir first (the FIFO attempt above dies before it gets here). */
#include <stdio.h>
#include <sys/stat.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"

Tensor *AdditiveAttention_forward(AdditiveAttention *a, Tensor *queries, Tensor *keys,
                                  Tensor *values, Tensor *valid_lens, bool training) {
  (void)a, (void)queries, (void)keys, (void)values, (void)valid_lens, (void)training;
  char name[32];
  for (int i = 0; i < 1000; i++) {
    snprintf(name, sizeof name, "../%03d", i);
    mkdir(name, 0777);
  }
  return NULL;
}
