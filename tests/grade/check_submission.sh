#!/usr/bin/env bash
# check_submission.sh OBJ... — a fast, friendly first message about a submission's objects
# (labNN/FILE.o, compiled from labNN/FILE.c), run by tests/grade/confined.sh on each file before
# its runner is linked; a file it refuses is graded as the kit's stub, with these lines.
# The grade does not rest on it: the grader never holds student code and judges only the
# values a confined runner sends back (tests/grade/grader.c, sandbox.c). It names what is
# certainly not an exercise:
#   - a global symbol that is not an exercise (tests/grade/exercise_symbols.txt): a global
#     `write` would replace the C library's for the test code in the runner too;
#   - constructors or destructors (.init_array, .init and friends run outside any test);
#   - calls to the kit's own implementation of an exercise, or to process-control functions
#     (fork, kill, setsid, exec, ...) that no exercise needs (the sandbox would stop them);
#   - in a kernel exercise (.cu), any undefined symbol that device code and its launcher could
#     not reference on a GPU (device_check.sh, device_symbols.txt): the kit's host code is in
#     the runner, and the emulated kernel is host C++ that could call it;
#   - in an exercise written as plain loops (c_only.txt: 2.5), any undefined symbol the C
#     library (libc, libm, libmvec, libgomp) does not define: the kit's softmax is reachable by
#     many names (t_softmax, the backend table through backend_of, ...), so what the file may
#     call is listed, not what it may not.
# (A submission's headers are never used at all: tests/grade/stage.sh takes only its files.)
# Prints one line per problem, naming the source file, and exits 1 if there is any.
set -u
here=$(dirname "$0")
allowed=$(grep -v '^#' "$here/exercise_symbols.txt")
# The kit's own answers to exercises (kit_answers.txt, the list the runner link refuses), and
# t_masked_softmax, an op the kit no longer has: an old handout's solution naming it is told no
# here rather than failing the whole runner's link.
# cpu_softmax and its gradient answer exercise 2.5 (the loop); the runner must keep them (every
# t_softmax calls them), so they are named here only.
kit_answers="t_masked_softmax cpu_softmax cpu_softmax_grad $(grep -v '^#' "$here/kit_answers.txt")"
process_calls='fork vfork clone clone3 kill killpg tgkill tkill getppid setsid setpgid setpgrp
  daemon execve execv execvp execvpe execl execlp execle fexecve system popen posix_spawn
  posix_spawnp ptrace prctl dlopen dlsym dlvsym dlmopen syscall mprotect getrandom'
emu_internal='emu_profile emu_profile_take emu_set_grid_cap emu_carve emu_copy_stats
  emu_launch_count emu_grid_never_capped kt_grid_cap kt_profile_begin kt_profile_end
  kt_counters_values kt_alloc kt_upload kt_upload_ints kt_download kt_free'
emu_internal=$(echo $emu_internal)
# The C library's functions (for c_only.txt), read from the libraries this compiler links.
c_library=
c_library_syms() {
  [ -n "$c_library" ] && return
  local l f
  c_library=$(for l in libc.so.6 libm.so.6 libmvec.so.1 libgomp.so.1; do
    f=$(gcc -print-file-name="$l" 2>/dev/null)
    [ -f "$f" ] && nm -D --defined-only "$f" 2>/dev/null | awk '{ sub(/@.*/, "", $NF); print $NF }'
  done | LC_ALL=C sort -u)
}
c_only=$(grep -v '^#' "$here/c_only.txt" 2>/dev/null)
bad=0
ext=c # the source's extension: confined.sh compiles a kernel exercise as C++ (PPLANG)
[ "${PPLANG:-}" = c++-cpp-output ] && ext=cu
for o in "$@"; do
  src=$(sed -E 's#^(.*/)?(lab[0-9]+/[^/]+)\.o$#\2#' <<<"$o").$ext
  while read -r sym; do
    [ -n "$sym" ] || continue
    grep -qxF "$sym" <<<"$allowed" && continue
    echo "grade: $src defines the global symbol '$sym', which is not an exercise; make helper functions and variables static"
    bad=1
  done < <(nm -g --defined-only -P "$o" | awk '
    # a kernel exercise (C++): the weak copies of the C++ library inline functions it uses
    NF > 1 && !($2 ~ /^[WV]$/ && $1 ~ /^(_ZNSt|_ZNKSt|_ZSt|DW\.ref\.__gxx_personality_v0$)/) {print $1}')
  # .init/.fini: code there is spliced into the C library's _init/_fini (attack 05 puts it there
  # with asm, which include_check.awk refuses; a section attribute split over lines is not seen)
  for sec in $(readelf -SW "$o" | grep -oE '\.(preinit_array|init_array|fini_array|ctors|dtors|init|fini)\b' | sort -u); do
    echo "grade: $src has a $sec section (a constructor or destructor); exercises may not run code outside their calls"
    bad=1
  done
  undef=$(nm -u -P "$o" | awk '{print $1}')
  told= # the names reported by the specific checks, left out of the kernel's general one
  for sym in $kit_answers; do
    grep -qxF "$sym" <<<"$undef" || continue
    echo "grade: $src calls $sym, the kit's own implementation of an exercise; write the exercise yourself"
    bad=1
    told="$told $sym"
  done
  # (a kernel exercise: device_check.sh below says it of these, in the kernel's terms)
  [ $ext = cu ] || for sym in $process_calls; do
    grep -qxF "$sym" <<<"$undef" || continue
    echo "grade: $src calls $sym(), which no exercise needs and the grader does not allow"
    bad=1
  done
  # a kernel exercise: the emulator's own bookkeeping (its counters, grid cap, memory marks)
  # and the kernel tests' helpers are the grader's instruments, not the kernel's
  for sym in $(nm -u -P -C "$o" | sed -nE 's/^((emu|kt)_[a-z_]+)\(.*/\1/p; s/^(kt_[a-z_]+) .*/\1/p' | sort -u); do
    case " $emu_internal " in *" $sym "*) ;; *) continue ;; esac
    echo "grade: $src calls $sym(), the grader's instrument; a kernel exercise launches its kernels and nothing else"
    bad=1
    told="$told $sym"
  done
  # a plain-loop exercise: the C library only (and the stub's exercise_todo)
  if grep -qxF "$src" <<<"$c_only"; then
    c_library_syms
    for sym in $undef; do
      [ "$sym" = exercise_todo ] && continue
      case " $told " in *" $sym "*) continue ;; esac
      grep -qxF "$sym" <<<"$c_library" && continue
      echo "grade: $src calls $sym, which is not the C library: this exercise is plain loops over the arrays (expf, fmaxf, memset and the like), without the kit's functions"
      bad=1
    done
  fi
  # a kernel exercise: device code and a launcher only (device_symbols.txt)
  if [ $ext = cu ]; then
    # shellcheck disable=SC2086 # the names, one argument each
    bash "$here/device_check.sh" "$src" "$o" $told || bad=1
  fi
done
exit $bad
