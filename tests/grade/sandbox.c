/* sandbox.c — the confinement of a test runner, set up in the forked child before it execs the
 * runner, so that not even code that runs at load time (constructors, IFUNC resolvers, .init)
 * runs unconfined.
 *
 * The seccomp filter allows what a test needs — memory, reading, writing to stdout/stderr and
 * the channel, time, exiting — and stops everything else:
 *   - killed at once: starting processes or threads (fork, clone, clone3, vfork, execve),
 *     signals to any other process, ptrace and process_vm_*, setsid/setpgid, namespaces,
 *     opening a file for writing, creating, renaming or removing files, timers (alarm,
 *     setitimer, timer_create: no code may run asynchronously in the middle of the test),
 *     raising a resource limit;
 *   - trapped (SIGSYS, which the runner reports by name): any other system call.
 * Threads are refused too: with a second thread student code could rewrite the test's memory
 * while the test computes its checks. The runner gets OMP_NUM_THREADS=1.
 * exec itself is allowed once: execveat on descriptor SANDBOX_EXEC_FD, which is close-on-exec
 * and above RLIMIT_NOFILE, so after the exec no such descriptor can exist again.
 * When the grader runs as root (Gradescope) the child also becomes nobody (65534), so the
 * autograder's files (mode 0700) are out of its reach even for reading. */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#ifdef AL_HAVE_SECCOMP
#include <seccomp.h>
#endif

static void set_limit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit cur, rl = {soft, hard};
  if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
    if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > cur.rlim_max) rl.rlim_max = cur.rlim_max;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > rl.rlim_max) rl.rlim_cur = rl.rlim_max;
  }
  if (setrlimit(resource, &rl) != 0) _exit(126);
}

#ifdef AL_HAVE_SECCOMP
static int load_filter(pid_t self, int static_exe) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
  if (!ctx) return -1;
  int rc = 0;
#define RULE(action, name, ...) rc |= seccomp_rule_add(ctx, (action), SCMP_SYS(name), __VA_ARGS__)
#define ALLOW(name) RULE(SCMP_ACT_ALLOW, name, 0)
#define KILL(name) RULE(SCMP_ACT_KILL_PROCESS, name, 0)
  /* memory. A static runner never needs new executable memory (the kernel maps its code at
   * exec); refusing PROT_EXEC then means no code of the runner can be patched (write the
   * page, make it executable again) and no code can be made up at run time. A dynamic runner
   * needs it for the loader, and gets it. */
  ALLOW(brk), ALLOW(munmap), ALLOW(madvise);
  if (static_exe) {
    /* mremap(MREMAP_FIXED) could move a page of the student's own code (PROT_EXEC kept) over
     * the harness's; malloc only ever needs MREMAP_MAYMOVE. */
    const scmp_datum_t fixed = MREMAP_FIXED | MREMAP_DONTUNMAP;
    RULE(SCMP_ACT_ALLOW, mremap, 1, SCMP_A3(SCMP_CMP_MASKED_EQ, fixed, 0));
    RULE(SCMP_ACT_KILL_PROCESS, mremap, 1, SCMP_A3(SCMP_CMP_MASKED_EQ, MREMAP_FIXED, MREMAP_FIXED));
    RULE(SCMP_ACT_KILL_PROCESS, mremap, 1,
         SCMP_A3(SCMP_CMP_MASKED_EQ, MREMAP_DONTUNMAP, MREMAP_DONTUNMAP));
    RULE(SCMP_ACT_ALLOW, mmap, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    RULE(SCMP_ACT_KILL_PROCESS, mmap, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
    RULE(SCMP_ACT_ALLOW, mprotect, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    RULE(SCMP_ACT_KILL_PROCESS, mprotect, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
    KILL(pkey_mprotect);
  } else {
    ALLOW(mmap), ALLOW(mprotect), ALLOW(mremap);
  }
  /* reading, descriptors, file metadata */
  ALLOW(read), ALLOW(readv), ALLOW(pread64), ALLOW(preadv), ALLOW(close), ALLOW(lseek);
  ALLOW(fstat), ALLOW(newfstatat), ALLOW(stat), ALLOW(lstat), ALLOW(statx), ALLOW(fstatfs);
  ALLOW(access), ALLOW(faccessat), ALLOW(faccessat2), ALLOW(readlink), ALLOW(readlinkat);
  ALLOW(getcwd), ALLOW(getdents64), ALLOW(dup), ALLOW(dup2), ALLOW(dup3);
  /* fcntl up to F_SETLKW (descriptor flags, status flags, locks) and F_DUPFD_CLOEXEC; not
   * F_SETOWN/F_SETSIG, which would make the kernel signal another process (the grader). */
  RULE(SCMP_ACT_ALLOW, fcntl, 1, SCMP_A1(SCMP_CMP_LE, F_SETLKW));
  RULE(SCMP_ACT_ALLOW, fcntl, 1, SCMP_A1(SCMP_CMP_EQ, F_DUPFD_CLOEXEC));
  /* open only for reading: O_WRONLY, O_RDWR (and so O_TMPFILE), O_CREAT, O_TRUNC, O_APPEND kill */
  const scmp_datum_t wr_bits[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND};
  scmp_datum_t wr = 0;
  for (size_t i = 0; i < sizeof wr_bits / sizeof *wr_bits; i++) {
    wr |= wr_bits[i];
    RULE(SCMP_ACT_KILL_PROCESS, open, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, wr_bits[i], wr_bits[i]));
    RULE(SCMP_ACT_KILL_PROCESS, openat, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, wr_bits[i], wr_bits[i]));
  }
  RULE(SCMP_ACT_ALLOW, open, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, wr, 0));
  RULE(SCMP_ACT_ALLOW, openat, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, wr, 0));
  KILL(creat), KILL(openat2);
  /* writing: stdout, stderr and the channel only */
  RULE(SCMP_ACT_ALLOW, write, 1, SCMP_A0(SCMP_CMP_LE, 3));
  RULE(SCMP_ACT_ALLOW, writev, 1, SCMP_A0(SCMP_CMP_LE, 3));
  RULE(SCMP_ACT_ERRNO(EBADF), write, 1, SCMP_A0(SCMP_CMP_GT, 3));
  RULE(SCMP_ACT_ERRNO(EBADF), writev, 1, SCMP_A0(SCMP_CMP_GT, 3));
  RULE(SCMP_ACT_ALLOW, ioctl, 1, SCMP_A1(SCMP_CMP_EQ, TCGETS)); /* isatty() */
  RULE(SCMP_ACT_ERRNO(ENOTTY), ioctl, 1, SCMP_A1(SCMP_CMP_NE, TCGETS));
  /* signals: its own handlers, and signals to itself only (raise, abort) */
  ALLOW(rt_sigreturn), ALLOW(rt_sigprocmask), ALLOW(rt_sigaction), ALLOW(sigaltstack);
  RULE(SCMP_ACT_ALLOW, kill, 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
  RULE(SCMP_ACT_KILL_PROCESS, kill, 1, SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)self));
  RULE(SCMP_ACT_ALLOW, tgkill, 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
  RULE(SCMP_ACT_KILL_PROCESS, tgkill, 1, SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)self));
  RULE(SCMP_ACT_ALLOW, tkill, 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
  RULE(SCMP_ACT_KILL_PROCESS, tkill, 1, SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)self));
  KILL(rt_sigqueueinfo), KILL(rt_tgsigqueueinfo), KILL(pidfd_open), KILL(pidfd_send_signal);
  KILL(pidfd_getfd);
  /* identity, time, the runtime */
  ALLOW(getpid), ALLOW(gettid), ALLOW(getppid), ALLOW(getuid), ALLOW(geteuid), ALLOW(getgid);
  ALLOW(getegid), ALLOW(uname), ALLOW(sysinfo), ALLOW(getrusage), ALLOW(times);
  ALLOW(clock_gettime), ALLOW(clock_getres), ALLOW(gettimeofday), ALLOW(time);
  ALLOW(nanosleep), ALLOW(clock_nanosleep), ALLOW(sched_yield), ALLOW(sched_getaffinity);
  ALLOW(getrandom), ALLOW(futex), ALLOW(set_robust_list), ALLOW(rseq), ALLOW(set_tid_address);
  ALLOW(arch_prctl), ALLOW(getrlimit), ALLOW(exit), ALLOW(exit_group);
  /* OpenBLAS's buffer allocator and CPU queries (memory policy only concerns this process) */
  ALLOW(mbind), ALLOW(get_mempolicy), ALLOW(set_mempolicy), ALLOW(getcpu);
  ALLOW(sched_getparam), ALLOW(sched_getscheduler);
  RULE(SCMP_ACT_ALLOW, prlimit64, 1, SCMP_A2(SCMP_CMP_EQ, 0)); /* reading a limit */
  RULE(SCMP_ACT_KILL_PROCESS, prlimit64, 1, SCMP_A2(SCMP_CMP_NE, 0));
  KILL(setrlimit);
  /* more filters may only narrow this one (the runner adds one) */
  RULE(SCMP_ACT_ALLOW, prctl, 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_NO_NEW_PRIVS));
  RULE(SCMP_ACT_ALLOW, prctl, 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_SECCOMP));
  RULE(SCMP_ACT_ALLOW, seccomp, 1, SCMP_A0(SCMP_CMP_EQ, 1) /* SECCOMP_SET_MODE_FILTER */);
  /* the one exec: the runner, through its descriptor */
  RULE(SCMP_ACT_ALLOW, execveat, 2, SCMP_A0(SCMP_CMP_EQ, SANDBOX_EXEC_FD),
       SCMP_A4(SCMP_CMP_EQ, AT_EMPTY_PATH));
  /* never: processes, threads, other processes' memory, sessions, namespaces, timers */
  KILL(fork), KILL(vfork), KILL(clone), KILL(clone3), KILL(execve), KILL(ptrace);
  KILL(process_vm_readv), KILL(process_vm_writev), KILL(setsid), KILL(setpgid), KILL(unshare);
  KILL(setns), KILL(alarm), KILL(setitimer), KILL(timer_create), KILL(kcmp);
  /* never: changing the file system */
  KILL(mkdir), KILL(mkdirat), KILL(mknod), KILL(mknodat), KILL(unlink), KILL(unlinkat);
  KILL(rename), KILL(renameat), KILL(renameat2), KILL(link), KILL(linkat), KILL(symlink);
  KILL(symlinkat), KILL(chmod), KILL(fchmod), KILL(fchmodat), KILL(chown), KILL(fchown);
  KILL(lchown), KILL(fchownat), KILL(truncate), KILL(ftruncate), KILL(rmdir), KILL(utimensat);
  KILL(socket), KILL(socketpair), KILL(mount), KILL(chroot), KILL(pivot_root);
#undef RULE
#undef ALLOW
#undef KILL
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  return rc;
}
#endif

_Noreturn void sandbox_exec(const SandboxSpec *s) {
  setpgid(0, 0);                    /* one group: the grader kills it as a whole */
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* no orphans if the grader is killed */
  if (getppid() != s->parent) _exit(127);
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);

  /* descriptors: 0 /dev/null, 1 and 2 the capture file, 3 the channel, the binary at
   * SANDBOX_EXEC_FD; nothing else (moved high first so no dup2 clobbers a source) */
  int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  int hi_in = fcntl(in, F_DUPFD_CLOEXEC, 200), hi_out = fcntl(s->out_fd, F_DUPFD_CLOEXEC, 200);
  int hi_chan = fcntl(s->chan_fd, F_DUPFD_CLOEXEC, 200);
  int hi_exec = fcntl(s->exec_fd, F_DUPFD_CLOEXEC, 200);
  if (in < 0 || hi_in < 0 || hi_out < 0 || hi_chan < 0 || hi_exec < 0) _exit(126);
  if (dup2(hi_in, 0) != 0 || dup2(hi_out, 1) != 1 || dup2(hi_out, 2) != 2 ||
      dup2(hi_chan, 3) != 3 || dup3(hi_exec, SANDBOX_EXEC_FD, O_CLOEXEC) != SANDBOX_EXEC_FD)
    _exit(126);
  close_range(4, SANDBOX_EXEC_FD - 1, 0);
  close_range(SANDBOX_EXEC_FD + 1, ~0U, 0);
  if (chdir(s->dir) != 0) _exit(126);

  set_limit(RLIMIT_CORE, 0, 0);
  set_limit(RLIMIT_FSIZE, s->fsize, s->fsize);
  if (s->as_bytes) set_limit(RLIMIT_AS, s->as_bytes, s->as_bytes);
  rlim_t cpu = (rlim_t)(s->cpu_s + 1);
  set_limit(RLIMIT_CPU, cpu, cpu + 1);
  set_limit(RLIMIT_NOFILE, SANDBOX_NOFILE, SANDBOX_NOFILE);

  if (geteuid() == 0) { /* root (Gradescope): become nobody, for good */
    if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0 || setuid(0) == 0)
      _exit(126);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a change of user cleared it */
    if (getppid() != s->parent) _exit(127);
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(126);
#ifdef AL_HAVE_SECCOMP
  if (load_filter(getpid(), s->static_exe) != 0) _exit(126);
#endif
  static char *const envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", "OMP_NUM_THREADS=1",
                               "OPENBLAS_NUM_THREADS=1", "HOME=/nonexistent", NULL};
  syscall(SYS_execveat, SANDBOX_EXEC_FD, "", s->argv, envp, AT_EMPTY_PATH);
  _exit(127);
}

int sandbox_is_static(int fd) {
  Elf64_Ehdr eh;
  if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
    return 0;
  for (int i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (Elf64_Off)i * sizeof ph)) != (ssize_t)sizeof ph)
      return 0;
    if (ph.p_type == PT_INTERP || ph.p_type == PT_DYNAMIC) return 0;
  }
  return 1;
}

const int sandbox_practice = 0;

const char *sandbox_describe(void) {
#ifdef AL_HAVE_SECCOMP
  return geteuid() == 0 ? "seccomp filter, user nobody" : "seccomp filter";
#else
  return "NO seccomp filter (built without libseccomp: apt-get install libseccomp-dev, then "
         "make grade again); limits only";
#endif
}

const char *sandbox_syscall_name(int nr) {
#ifdef AL_HAVE_SECCOMP
  static char name[64];
  char *n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  if (!n) return NULL;
  snprintf(name, sizeof name, "%s", n);
  free(n);
  return name;
#else
  (void)nr;
  return NULL;
#endif
}
