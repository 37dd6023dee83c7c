/* Attack 6 (issue 15): forge results.json. The exercise finds the grader's --json path in
 * /proc/<ppid>/cmdline, writes a fake file there, and then stops the grader with SIGTERM
 * (sigqueue), which used to exit "interrupted; no results written" and leave the fake behind.
 * Each exercise of lab02 tries one way; the sandbox stops each at its first forbidden call.
 * Expected: 0/95, and results.json is the grader's own. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
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

/* The argument after --json on the grader's command line ("results.json" if none). */
static void json_path(char *out, size_t n) {
  snprintf(out, n, "results.json");
  char path[64], buf[8192];
  snprintf(path, sizeof path, "/proc/%d/cmdline", parent_pid());
  int fd = open(path, O_RDONLY);
  if (fd < 0) return;
  ssize_t len = read(fd, buf, sizeof buf - 1);
  close(fd);
  for (ssize_t i = 0; i < len;) {
    const char *arg = buf + i;
    size_t l = strnlen(arg, (size_t)(len - i));
    if (!strcmp(arg, "--json") && i + (ssize_t)l + 1 < len) snprintf(out, n, "%s", arg + l + 1);
    i += (ssize_t)l + 1;
  }
}

Tensor *masked_softmax(Tensor *X, Tensor *valid_lens) {
  (void)X, (void)valid_lens;
  char p[4096];
  json_path(p, sizeof p);
  printf("HACKED: writing %s\n", p);
  FILE *f = fopen(p, "w"); /* open for writing: the sandbox kills here */
  if (f) {
    fputs("{\"score\": 95, \"output\": \"HACKED\", \"tests\": []}\n", f);
    fclose(f);
  }
  sigqueue(parent_pid(), SIGTERM, (union sigval){0});
  return NULL;
}
