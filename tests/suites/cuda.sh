#!/usr/bin/env bash
# cuda: every CUDA kernel against its CPU op (tests/cuda/cuda_check.c), four ways:
#   emu     the kernels of cuda/ built as host C++ against the emulator (cuda/emu.h), with its
#           checks on every access: memcheck, initcheck, racecheck, synccheck
#   asan    the same under AddressSanitizer + UndefinedBehaviorSanitizer, the kernels' multiply-
#           adds contracted into FMAs as nvcc does (tolerance-0 cases must hold both ways)
#   tsan    the same under ThreadSanitizer: every launch runs as fibers ordered only by
#           barriers, shuffles and launch boundaries, so a missing __syncthreads or two
#           threads or blocks writing one element without an atomic is a reported race (a
#           second opinion to racecheck; under CI=true its absence is a failure)
#   gpu     the nvcc build on a real GPU; "skip" where there is no device or no nvcc
# then the planted bugs of tests/cuda/plants (each must fail with its check's report naming its
# line) and the profiler's counters on kernels with hand-known ideals.
# The emulated runs cap every capped grid at 2 blocks (AL_CUDA_EMU_GRID_CAP), so grid-stride
# loops take several trips, as a GPU's do on large tensors.
# (Every lab with --device cuda on the emulated device: tests/suites/cuda_labs.sh.)
# Each program's own "ok/FAIL/skip" lines count here, one check each, so the CUDA test count
# is in make test's summary. Ends with "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin cuda
V=build/${VARIANT:-solutions}
suite_build cuda-check-build "make cuda-check-build (cuda_check emulated, under ASan and TSan, and the nvcc build)"

# run_check LABEL COMMAND...: run one cuda_check and fold its lines and counts into the suite's
run_check() {
  local label=$1
  shift
  "$@" >"$tmp/$label.log" 2>&1
  fold_check $? "$label" "$@"
}
# fold_check RC LABEL COMMAND...: the same for a run whose output is in $tmp/LABEL.log
fold_check() {
  local rc=$1 label=$2
  shift 2
  local log=$tmp/$label.log
  local line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
  # the program's checks, as this suite's (run_all.sh shows all but the ok lines)
  sed -nE "s/^(ok|FAIL|skip) (.*)$/\1 [$label] \2/p" "$log" |
    while read -r kind rest; do
      case $kind in
      ok) echo "ok   $suite_name: $rest" ;;
      FAIL) echo "FAIL $suite_name: $rest" ;;
      skip) echo "skip $suite_name: $rest" ;;
      esac
    done
  if [ -z "$line" ]; then
    bad "[$label] $* ended without its summary (exit $rc); the end of its output:"
    tail -25 "$log"
    return
  fi
  read -r p _ f _ s _ <<<"${line//,/}"
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + s))
  if [ "$rc" -ne 0 ] && [ "$f" = 0 ]; then
    bad "[$label] $* exited $rc with no failed check; the end of its output:"
    tail -25 "$log"
  elif [ "$f" != 0 ]; then # a sanitizer's report or a case's details: show them
    grep -vE '^(ok|skip|FAIL) |^[0-9]+ passed' "$log" | tail -40
  fi
}

export AL_CUDA_EMU_GRID_CAP=2
run_check emu "$V/cuda_check_emu"
# the kit's own kernels where an exercise serves the entry (cuda/exercises.cu): the fallbacks a
# student's stub runs on
run_check emu-kit env AL_CUDA_KIT_KERNELS=1 "$V/cuda_check_emu"
run_check asan env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  build/asan/cuda_check_emu

# ThreadSanitizer needs its fixed address layout; some kernels' mmap randomisation breaks it
# ("unexpected memory mapping"): then once more without address randomisation, else skip.
tsan_cant() { grep -qE 'ThreadSanitizer: (unexpected memory mapping|failed to allocate|CHECK failed)|FATAL: ThreadSanitizer' "$1"; }
export TSAN_OPTIONS=halt_on_error=1
tsan=(build/tsan/cuda_check_emu)
"${tsan[@]}" >"$tmp/tsan.log" 2>&1
rc=$?
if tsan_cant "$tmp/tsan.log" && command -v setarch >/dev/null; then
  tsan=(setarch "$(uname -m)" -R "${tsan[@]}")
  "${tsan[@]}" >"$tmp/tsan.log" 2>&1
  rc=$?
fi
if tsan_cant "$tmp/tsan.log"; then
  why="ThreadSanitizer cannot run on this machine: $(grep -m1 ThreadSanitizer "$tmp/tsan.log")"
  # racecheck above still ran; but CI must keep its second opinion
  if [ "${CI:-}" = true ]; then bad "[tsan] $why (CI=true: the TSan run is required)"; else skip "[tsan] $why"; fi
else
  fold_check $rc tsan "${tsan[@]}"
fi

# The planted bugs: each must stop with its check's report naming the line marked
# "PLANT: <check>" in its file.
plants=$("$V/cuda_plants_emu" --list 2>"$tmp/plants.log")
[ -n "$plants" ] || bad "[plants] $V/cuda_plants_emu --list listed nothing: $(head -3 "$tmp/plants.log")"
# every plant file registers itself (a file that does not would never run, silently)
for f in tests/cuda/plants/*.cu; do
  n=$(basename "$f" .cu)
  [ "$n" = counters ] || grep -qx "$n" <<<"$plants" || bad "[plants] $f is not in cuda_plants_emu --list (no PLANT registration?)"
done
for p in $plants; do
  src=tests/cuda/plants/$p.cu
  mark=$(grep -n 'PLANT: [a-z]*' "$src" | head -1)
  line=${mark%%:*}
  tool=$(sed -nE 's/.*PLANT: ([a-z]+).*/\1/p' <<<"$mark")
  if [ -z "$tool" ]; then
    bad "[plants] $src has no \"PLANT: <check>\" mark on its bug's line"
    continue
  fi
  { "$V/cuda_plants_emu" "$p"; } >"$tmp/plant.log" 2>&1 # grouped: bash's "Aborted" goes to the log
  rc=$?
  report=$(grep -m1 "^cuda emulator: $tool: " "$tmp/plant.log")
  if [ "$rc" -ne 0 ] && [ -n "$report" ] && grep -qE "$src:$line([^0-9]|$)" <<<"$report"; then
    ok "[plants] $p: $tool names $src:$line"
  else
    bad "[plants] $p: expected a $tool report naming $src:$line (exit $rc); got:"
    tail -3 "$tmp/plant.log"
  fi
done
# Inside a sandbox that kills a process starting a thread or a process (the grader's): the
# checks need neither, and the report still comes, with how to find the line (no addr2line).
if cc -O1 -o "$tmp/no_fork" tests/cuda/plants/no_fork.c -lseccomp >"$tmp/no_fork.log" 2>&1; then
  for p in atomic_race oob_le; do
    { "$tmp/no_fork" "$V/cuda_plants_emu" "$p"; } >"$tmp/plant.log" 2>&1
    if grep -qE '^cuda emulator: (racecheck|memcheck): .*sandboxed: addr2line' "$tmp/plant.log"; then
      ok "[plants] $p under a no-fork seccomp filter: reported, with the addr2line hint"
    else
      bad "[plants] $p under a no-fork seccomp filter: no report (killed for starting a thread or process?):"
      tail -3 "$tmp/plant.log"
    fi
  done
else
  skip "[plants] no libseccomp to build the no-fork sandbox ($(tail -1 "$tmp/no_fork.log"))"
fi
run_check counters "$V/cuda_plants_emu" --counters
# a whole run profiled from the environment (a lab's way): the totals at exit
AL_CUDA_EMU_PROFILE=1 "$V/cuda_check_emu" --family reduce >/dev/null 2>"$tmp/profile.log"
if grep -q '^cuda emulator profile' "$tmp/profile.log" &&
  grep -qE '^ +reduce_rows_kernel +[1-9][0-9]* ' "$tmp/profile.log"; then
  ok "[counters] AL_CUDA_EMU_PROFILE=1 prints the run's counters per kernel at exit"
else
  bad "[counters] AL_CUDA_EMU_PROFILE=1: no table at exit with a row for reduce_rows_kernel:"
  head -5 "$tmp/profile.log"
fi

# The nvcc build: on a GPU it checks every kernel for real; without one it says
# "skip cuda_check: no CUDA device (...)", a skip, never a pass.
if [ -x "$V/cuda_check" ]; then
  run_check gpu "$V/cuda_check"
else
  skip "[gpu] no nvcc build of the kernels (CPU-only: no nvcc found, or NO_CUDA=1): the real GPU check was not built"
fi
suite_end
