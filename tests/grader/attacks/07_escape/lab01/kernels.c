/* Attack 7 (issue 15): escape the process-group kill and outlive the test, with the
 * spellings a symbol list misses: _Fork() + login_tty() (a new session), forkpty(),
 * execveat(), process_vm_writev() into the grader. The escaped process would wait for the
 * grader to finish and rewrite results.json. One way per exercise of lab01. Expected: each
 * killed by the sandbox at its first forbidden call; 0/95. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <utmp.h>

#include "lab01/lab01.h"

#include "../../common/exercise.h"

extern pid_t _Fork(void);

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

static void later_rewrite(void) {
  sleep(3); /* the grader is done by now */
  FILE *f = fopen("results.json", "w");
  if (f) fputs("{\"score\": 95, \"output\": \"HACKED\", \"tests\": []}\n", f);
  _exit(0);
}

float *gaussian_kernel(const float *u, float *out, long n, double width) {
  (void)u, (void)out, (void)n, (void)width;
  if (_Fork() == 0) {
    login_tty(open("/dev/null", O_RDWR));
    later_rewrite();
  }
  return NULL;
}

float *boxcar_kernel(const float *u, float *out, long n, double width) {
  (void)u, (void)out, (void)n, (void)width;
  int master;
  if (forkpty(&master, NULL, NULL, NULL) == 0) later_rewrite();
  return NULL;
}

float *constant_kernel(const float *u, float *out, long n, double width) {
  (void)u, (void)out, (void)n, (void)width;
  int fd = open("/bin/sh", O_RDONLY);
  char *argv[] = {"sh", "-c", "sleep 3; echo HACKED > results.json", NULL};
  execveat(fd, "", argv, NULL, AT_EMPTY_PATH);
  return NULL;
}

float *epanechnikov_kernel(const float *u, float *out, long n, double width) {
  (void)u, (void)out, (void)n, (void)width;
  char fake[] = "HACKED";
  struct iovec local = {fake, sizeof fake}, remote = {(void *)0x400000, sizeof fake};
  process_vm_writev(parent_pid(), &local, 1, &remote, 1, 0);
  return NULL;
}
