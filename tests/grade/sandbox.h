/* sandbox.h — how the grader confines a test runner (sandbox.c). */
#ifndef AL_GRADE_SANDBOX_H
#define AL_GRADE_SANDBOX_H

#include <sys/resource.h>
#include <sys/types.h>

#define SANDBOX_EXEC_FD 100 /* the runner binary while it is exec'd; >= SANDBOX_NOFILE */
#define SANDBOX_NOFILE 64   /* RLIMIT_NOFILE: no descriptor numbered this or above can appear */

typedef struct {
  int exec_fd;        /* the runner binary, opened read-only by the grader */
  const char *exec_path; /* ... and its path (the practice grade execs by path: sandbox_practice.c) */
  char *const *argv;  /* its arguments */
  int out_fd;         /* stdout and stderr (a capture file) */
  int chan_fd;        /* fd 3: the channel's write end */
  const char *dir;    /* working directory (empty, not writable) */
  double cpu_s;       /* RLIMIT_CPU */
  rlim_t as_bytes;    /* RLIMIT_AS; 0: none */
  rlim_t fsize;       /* RLIMIT_FSIZE */
  pid_t parent;       /* the grader: the child dies with it */
  int static_exe;     /* the runner is statically linked: no new executable memory at all */
} SandboxSpec;

/* In a freshly forked child: limits, descriptors, an unprivileged user when root, the seccomp
 * filter, then exec of the runner. Never returns (exit 126/127 when a step fails). */
_Noreturn void sandbox_exec(const SandboxSpec *s);

/* Whether the ELF file open at fd is statically linked (no PT_INTERP). */
int sandbox_is_static(int fd);

/* One line on the confinement in force ("seccomp filter; ..."), for the grader's header. */
const char *sandbox_describe(void);

/* Nonzero in the practice grade (sandbox_practice.c: no confinement, a non-Linux system or
 * make grade PRACTICE=1): the grader says so on the terminal and in results.json. */
extern const int sandbox_practice;

/* The name of system call nr ("clone"), or NULL. */
const char *sandbox_syscall_name(int nr);

#endif
