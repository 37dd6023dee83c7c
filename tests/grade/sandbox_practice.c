/* sandbox_practice.c — sandbox.h for the practice grade: what a runner gets where the Linux
 * sandbox (sandbox.c: seccomp, user nobody, execveat) cannot be built — macOS — or where it is
 * left out on purpose (make grade PRACTICE=1, which tests this path on Linux).
 *
 * The same limits a test needs to be scored the same way (CPU time, output size, descriptors,
 * no core files; address space where the system enforces it), the same descriptors (0
 * /dev/null, 1 and 2 the capture file, 3 the channel) and environment, an empty working
 * directory; no confinement at all: student code runs as the student, with the student's
 * files. That is why this grade is a practice one and says so (grader.c, PRACTICE_NOTE). */
#define _DARWIN_C_SOURCE /* macOS: RLIMIT_* and setpgid beside _POSIX_C_SOURCE-only names */
#include "sandbox.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

const int sandbox_practice = 1;

static void set_limit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit cur, rl = {soft, hard};
  if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
    if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > cur.rlim_max) rl.rlim_max = cur.rlim_max;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > rl.rlim_max) rl.rlim_cur = rl.rlim_max;
  }
  if (setrlimit(resource, &rl) != 0) _exit(126);
}

_Noreturn void sandbox_exec(const SandboxSpec *s) {
  setpgid(0, 0); /* one group: the grader kills it as a whole */
  if (getppid() != s->parent) _exit(127);
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);

  /* descriptors: moved high first so no dup2 clobbers a source, then 0-3, nothing else */
  int in = open("/dev/null", O_RDONLY);
  int hi_in = fcntl(in, F_DUPFD, 200), hi_out = fcntl(s->out_fd, F_DUPFD, 200);
  int hi_chan = fcntl(s->chan_fd, F_DUPFD, 200);
  if (in < 0 || hi_in < 0 || hi_out < 0 || hi_chan < 0) _exit(126);
  if (dup2(hi_in, 0) != 0 || dup2(hi_out, 1) != 1 || dup2(hi_out, 2) != 2 || dup2(hi_chan, 3) != 3)
    _exit(126);
  long maxfd = sysconf(_SC_OPEN_MAX);
  for (int fd = 4; fd < (maxfd > 0 && maxfd < 65536 ? maxfd : 65536); fd++) close(fd);
  if (chdir(s->dir) != 0) _exit(126);

  set_limit(RLIMIT_CORE, 0, 0);
  set_limit(RLIMIT_FSIZE, s->fsize, s->fsize);
#ifdef __linux__ /* macOS accepts RLIMIT_AS but does not enforce it: out of memory is a crash */
  if (s->as_bytes) set_limit(RLIMIT_AS, s->as_bytes, s->as_bytes);
#endif
  rlim_t cpu = (rlim_t)(s->cpu_s + 1);
  set_limit(RLIMIT_CPU, cpu, cpu + 1);
  set_limit(RLIMIT_NOFILE, SANDBOX_NOFILE, SANDBOX_NOFILE);

  static char *const envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", "OMP_NUM_THREADS=1",
                               "OPENBLAS_NUM_THREADS=1", "HOME=/nonexistent", NULL};
  execve(s->exec_path, s->argv, envp);
  _exit(127);
}

int sandbox_is_static(int fd) {
  (void)fd;
  return 0; /* only the Linux sandbox uses it (refusing executable memory) */
}

const char *sandbox_describe(void) {
  return "NONE (practice grade: limits only; the runner runs as you)";
}

const char *sandbox_syscall_name(int nr) {
  (void)nr;
  return NULL;
}
