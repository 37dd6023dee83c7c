#!/usr/bin/env bash
# grade_all.sh SUBS OUT [JOBS] — make grade-all: a course's submissions, graded in parallel.
#
#   SUBS   a directory with one folder per submission (the folder's name is the student's);
#          each folder is what make grade's GRADE_SUB would be (laid out flat, under labs/, or
#          one folder deeper: tests/grade/stage.sh finds the files)
#   OUT    OUT/students/NAME/{results.json,feedback.txt,build.log,cpu.txt} per submission, then
#          OUT/grades.csv (student x exercise points), OUT/report.txt and, with gnuplot,
#          OUT/histogram.png and OUT/pass_rate.png (tests/grade/class_report.sh)
#   JOBS   submissions graded at once (default: the cores)
#
# Each submission is graded exactly as `make grade GRADE_SUB=...` grades it (its own staging,
# confined compile, runners and grader; nothing of one submission reaches another), with two
# things shared by the whole batch and built once: what make grade-batch-prep builds (the grader,
# the reference runners and objects, the kit's stubs, tests and chapter code), and the reference
# runs (the grader's --ref-cache, in a private directory named after a hash of the reference
# runners and the grader, so a changed test or reference never reuses a stale run).
set -uo pipefail
cd "$(dirname "$0")/../.."
subs=${1%/}
out=${2%/}
jobs=${3:-}
[ -n "$jobs" ] || jobs=$(nproc 2>/dev/null || echo 2)
# make regrade: the same submissions as the batch before, unless SUBS says otherwise
[ -n "$subs" ] || [ ! -s "$out/subs.txt" ] || subs=$(cat "$out/subs.txt")
if [ -z "$subs" ] || [ ! -d "$subs" ]; then
  echo "grade-all: SUBS=DIR names a directory with one folder per submission (got '${subs}')" >&2
  exit 2
fi
case $jobs in '' | *[!0-9]* | 0) echo "grade-all: GRADE_JOBS must be a positive number, got '$jobs'" >&2; exit 2 ;; esac
# make grade-all passes B, REF (its GRADE_REF), REF_GIVEN (yes: GRADE_REF was given to it, so
# pass it on) and HIDDEN_OBJ (GRADE_HIDDEN_OBJ); run by hand, the defaults are make's own.
B=${B:-build}
REF=${REF:-}
mk() {
  local on=(B="$B")
  [ "${REF_GIVEN:-}" = yes ] && on+=(GRADE_REF="$REF")
  [ -n "${HIDDEN_OBJ:-}" ] && on+=(GRADE_HIDDEN_OBJ="$HIDDEN_OBJ")
  env -u MAKEFLAGS -u MFLAGS MAKELEVEL=0 make -s --no-print-directory VARIANT=labs "${on[@]}" "$@"
}

mkdir -p "$out/students" "$out/.empty" && chmod 700 "$out"
out=$(cd "$out" && pwd)
(cd "$subs" && pwd) >"$out/subs.txt"
# A batch before this one (make regrade): its grades and tests' version, to say what moved.
rm -f "$out/grades.prev.csv" "$out/regrade.txt"
if [ -s "$out/grades.csv" ]; then
  mv -f "$out/grades.csv" "$out/grades.prev.csv"
  prev_version=$(cat "$out"/students/*/results.json 2>/dev/null | grep -o '"tests_version": *"[^"]*"' | head -n 1 | cut -d'"' -f4)
fi
start=$(date +%s)
echo "grade-all: building what every submission shares (make grade-batch-prep) ..."
if ! mk -j"$jobs" grade-batch-prep GRADE_SUB="$out/.empty" GRADE_OUT="$out/.prep" >"$out/prep.log" 2>&1; then
  tail -n 30 "$out/prep.log" >&2
  echo "grade-all: the shared build failed ($out/prep.log)" >&2
  exit 1
fi
ref=$REF
grader=$B/labs/grade
[ -n "$ref" ] || echo "grade-all: no reference (no solutions/, no GRADE_REF): practice runs, judged against themselves"
key=$(cat "$grader" ${ref:+"$ref"/grade-run*} 2>/dev/null | sha256sum | cut -c1-16)
cache=$out/.refcache/$key
mkdir -p "$cache" && chmod 700 "$out/.refcache" "$cache"
# Compiled files by content (confined.sh), in a directory named after all else a compile reads:
# the kit's pristine headers and stubs, the scripts that check and compile, the compilers, the
# flags (the stamps' names are their checksums).
okey=$({ find "$B/grade-include" -type f -print0 | LC_ALL=C sort -z | xargs -0 cat
  cat tests/grade/confined.sh tests/grade/include_check.awk tests/grade/check_submission.sh \
    tests/grade/exercise_symbols.txt tests/grade/kit_answers.txt tests/grade/keep_symbols.sh \
    tests/grade/device_check.sh tests/grade/device_symbols.txt tests/grade/vec_info.awk tests/grade/c_only.txt \
    cuda/emu_rewrite.awk
  gcc --version; g++ --version; ls "$B" | grep -E '^(emu-)?flags-.*\.stamp$'; } 2>&1 | sha256sum | cut -c1-16)
objcache=$out/.objcache/$okey
mkdir -p "$objcache" && chmod 700 "$out/.objcache" "$objcache"

# One folder per submission; a name made safe for a path (and unique).
names=()
dirs=()
declare -A used=()
while IFS= read -r -d '' d; do
  n=${d##*/}
  n=${n//[^A-Za-z0-9._-]/_}
  [[ $n == .* ]] && n=_${n#.}
  base=$n
  k=2
  while [ -n "${used[$n]+x}" ]; do n=$base-$k; k=$((k + 1)); done
  used[$n]=1
  names+=("$n")
  dirs+=("$d")
done < <(find "$subs" -mindepth 1 -maxdepth 1 -type d -print0 | LC_ALL=C sort -z)
if [ ${#names[@]} -eq 0 ]; then
  echo "grade-all: no submission folders in $subs" >&2
  exit 2
fi
echo "grade-all: ${#names[@]} submissions, $jobs at a time"

# One submission: make grade as usual, into its own directory; CPU seconds (user + system of
# make and everything under it) to cpu.txt.
grade_one() { # NAME DIR; OUT, CACHE, REF in the environment
  local name=$1 sub=$2 o=$OUT/students/$1
  mkdir -p "$o" && rm -f "$o/results.json"
  local t0=$SECONDS
  TIMEFORMAT='%U %S'
  { time mk grade GRADE_SUB="$sub" GRADE_OUT="$o/build" GRADE_BUILD_LOG="$o/build.log" GRADE_OBJ_CACHE="$OBJCACHE" \
      GRADE_FLAGS="--json $o/results.json --ref-cache $CACHE" >"$o/feedback.txt" 2>&1; } 2>"$o/cpu.txt"
  local score
  score=$(sed -n 's/^Score: //p' "$o/feedback.txt" | tail -n 1)
  [ -s "$o/results.json" ] || score="no results.json"
  printf 'grade-all: %-24s %s  (%d s wall)\n' "$name" "${score:-0 (did not build)}" $((SECONDS - t0))
}
export -f grade_one mk
export OUT=$out CACHE=$cache OBJCACHE=$objcache B REF REF_GIVEN HIDDEN_OBJ
for i in "${!names[@]}"; do printf '%s\0%s\0' "${names[$i]}" "${dirs[$i]}"; done |
  xargs -0 -n 2 -P "$jobs" bash -c 'grade_one "$1" "$2"' grade_one
wall=$(($(date +%s) - start))
bash tests/grade/class_report.sh "$out" "$wall" "$jobs"
if [ -s "$out/grades.prev.csv" ]; then
  version=$(cat "$out"/students/*/results.json 2>/dev/null | grep -o '"tests_version": *"[^"]*"' | head -n 1 | cut -d'"' -f4)
  # total is the third column from the end (total, max, cpu_s)
  LC_ALL=C awk -F, -v OLD="${prev_version:-?}" -v NEW="${version:-?}" '
    FNR == 1 { file++; next }
    $1 == "max" { next }
    file == 1 { old[$1] = $(NF - 2); next }
    { new[$1] = $(NF - 2); order[++n] = $1 }
    END {
      printf "Regrade: tests %s -> %s\n", OLD, NEW
      moved = 0
      for (i = 1; i <= n; i++) {
        s = order[i]
        if (!(s in old)) { printf "  %-24s new: %s\n", s, new[s]; moved++ }
        else if (old[s] != new[s]) { printf "  %-24s %s -> %s\n", s, old[s], new[s]; moved++ }
      }
      for (s in old) if (!(s in new)) { printf "  %-24s gone (was %s)\n", s, old[s]; moved++ }
      printf "%d of %d scores moved\n", moved, n
    }' "$out/grades.prev.csv" "$out/grades.csv" | tee "$out/regrade.txt"
fi
