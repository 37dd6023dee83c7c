#!/usr/bin/env bash
# check_submission.sh OBJ... — refuse student objects (labs/*) that could tamper with the
# grader they are linked into. The graded tests run exercise code inside the grader's own
# binary, so before linking each object must:
#   - define no global symbol but its exercises (tests/grade/exercise_symbols.txt): a global
#     `write` or `getrandom` would replace the C library's for the harness too;
#   - have no constructors or destructors (.init_array and friends run outside any test);
#   - not call the kit's own implementation of an exercise, nor process-control functions
#     (fork, kill, setsid, exec, dlsym, ...) that no exercise needs.
# Prints one line per problem, naming the source file, and exits 1 if there is any.
# What it cannot see: inline assembly issuing system calls directly (see docs/instructor-guide.md).
set -u
here=$(dirname "$0")
allowed=$(grep -v '^#' "$here/exercise_symbols.txt")
# The kit's reference implementations of exercises (common/ops.h, labs/lab03/lab03.h).
kit_answers='t_masked_softmax rnn_cell_fused additive_scores_fused'
process_calls='fork vfork clone clone3 kill killpg tgkill tkill getppid setsid setpgid setpgrp
  daemon execve execv execvp execvpe execl execlp execle fexecve system popen posix_spawn
  posix_spawnp ptrace prctl dlopen dlsym dlvsym dlmopen syscall mprotect getrandom'
bad=0
for o in "$@"; do
  src=$(sed -E 's#^.*/((labs|solutions)/lab[0-9]+/[^/]+)\.o$#\1.c#' <<<"$o")
  while read -r sym; do
    [ -n "$sym" ] || continue
    grep -qxF "$sym" <<<"$allowed" && continue
    echo "grade: $src defines the global symbol '$sym', which is not an exercise; make helper functions and variables static"
    bad=1
  done < <(nm -g --defined-only -P "$o" | awk 'NF > 1 {print $1}')
  for sec in $(readelf -SW "$o" | grep -oE '\.(preinit_array|init_array|fini_array|ctors|dtors)' | sort -u); do
    echo "grade: $src has a $sec section (a constructor or destructor); exercises may not run code outside their calls"
    bad=1
  done
  undef=$(nm -u -P "$o" | awk '{print $1}')
  for sym in $kit_answers; do
    grep -qxF "$sym" <<<"$undef" || continue
    echo "grade: $src calls $sym, the kit's own implementation of an exercise; write the exercise yourself"
    bad=1
  done
  for sym in $process_calls; do
    grep -qxF "$sym" <<<"$undef" || continue
    echo "grade: $src calls $sym(), which no exercise needs and the grader does not allow"
    bad=1
  done
done
exit $bad
