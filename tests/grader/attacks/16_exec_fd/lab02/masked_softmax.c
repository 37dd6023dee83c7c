/* Own attack 16: the sandbox allows exactly one exec, execveat() on descriptor 100. Put a
 * shell there (dup2) and exec it, or raise the descriptor limit first. Expected: descriptor
 * 100 cannot exist (RLIMIT_NOFILE is 64: dup2 fails with EBADF), raising the limit is
 * killed: 0/95. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)X, (void)valid_lens;
  int sh = open("/bin/sh", O_RDONLY);
  int rc = dup2(sh, 100);
  printf("dup2 onto 100: %d\n", rc);
  char *argv[] = {"sh", "-c", "echo HACKED", NULL};
  execveat(100, "", argv, NULL, AT_EMPTY_PATH);
  struct rlimit rl = {1024, 1024};
  setrlimit(RLIMIT_NOFILE, &rl); /* killed here */
  dup2(sh, 100);
  execveat(100, "", argv, NULL, AT_EMPTY_PATH);
  return NULL;
}
