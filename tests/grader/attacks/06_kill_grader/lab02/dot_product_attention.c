/* Attack 6, second way: stop the grader first (pidfd_send_signal, then sigqueue), so that it
 * would exit without writing its own results. Expected: the sandbox kills the runner instead. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"

/* The parent's pid from /proc/self/stat (getppid() is on check_submission.sh's list). */
static int parent_pid(void) {
  char buf[512] = "";
  int fd = open("/proc/self/stat", O_RDONLY), ppid = 0;
  if (fd >= 0) {
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n > 0) buf[n] = '\0';
  }
  const char *p = strrchr(buf, ')');
  if (p) sscanf(p + 2, "%*c %d", &ppid);
  return ppid;
}

Tensor *DotProductAttention_forward(DotProductAttention *a, Tensor *queries, Tensor *keys,
                                    Tensor *values, Tensor *valid_lens, bool training) {
  (void)a, (void)queries, (void)keys, (void)values, (void)valid_lens, (void)training;
  int pfd = pidfd_open(parent_pid(), 0);
  pidfd_send_signal(pfd, SIGTERM, NULL, 0);
  sigqueue(parent_pid(), SIGTERM, (union sigval){0});
  return NULL;
}
