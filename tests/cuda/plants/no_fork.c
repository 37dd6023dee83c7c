/* no_fork — runs a program as the grader's sandbox would for this purpose: a seccomp filter
 * kills the process at once if it starts a process or a thread (fork, vfork, clone, clone3).
 * tests/suites/cuda.sh runs planted bugs under it: the emulator's checks must work and report
 * without helper threads or processes.   usage: no_fork PROGRAM ARGS... */
#include <seccomp.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PROGRAM ARGS...\n", argv[0]);
    return 2;
  }
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  int rc = !ctx;
  const char *banned[] = {"fork", "vfork", "clone", "clone3"};
  for (int i = 0; i < 4 && !rc; i++) {
    int nr = seccomp_syscall_resolve_name(banned[i]);
    if (nr != __NR_SCMP_ERROR) rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, nr, 0);
  }
  if (rc || seccomp_load(ctx) != 0) {
    fprintf(stderr, "no_fork: cannot install the seccomp filter\n");
    return 2;
  }
  execv(argv[1], argv + 1);
  perror("no_fork: execv");
  return 127;
}
