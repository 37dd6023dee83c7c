#!/usr/bin/env bash
# practice_grade.sh — the practice grade (what `make grade` is on macOS, tests/grade/grade.mk:
# GRADE_PRACTICE), forced on Linux with PRACTICE=1: the same tests with the same points as the
# sandboxed grade, the solutions at full marks and the stubs at zero, and it says on the
# terminal and in results.json that it is a practice grade. Also: the sandboxed grade does not
# say so, and the preflight stops at once, with the Homebrew line, on macOS's make 3.81 or
# bash 3.2. Ends with "N passed, N failed, N skipped".
# Cost: builds build/practice (the submissions compiled plainly and two runners; the kit's test
# objects and the solutions' raw objects are the sandboxed build's) and runs every graded test
# twice per variant: about 23 s of CPU after make test's grade-build (93 s of wall time on this
# 2-core machine shared with seven other builds).
set -u
cd "$(dirname "$0")/../.."
passed=0 failed=0 skipped=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
mk() { env -u MAKEFLAGS -u MFLAGS -u VARIANT MAKELEVEL=1 make -s --no-print-directory -j2 "$@"; }
finish() { echo "$passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit; }
if ! ls -d solutions/lab[0-9]* >/dev/null 2>&1; then
  echo "skip practice_grade: no solutions/ here (a handout): nothing to compare the scores with"
  skipped=1
  finish
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The preflight: macOS's make 3.81 and bash 3.2 are refused before anything is built.
mk PRACTICE=1 MAKE_VERSION=3.81 grade >"$tmp/pre1.log" 2>&1
s=$?
check "practice grade under make 3.81: exit 2 and the Homebrew line, nothing built (status $s)" \
  eval '[ $s -eq 2 ] && grep -q "needs GNU make 4.*brew install make bash coreutils" "$tmp/pre1.log" &&
    ! grep -q "Score" "$tmp/pre1.log"'
mkdir -p "$tmp/bin"
printf '#!/bin/sh\nexit 1\n' >"$tmp/bin/bash" # a bash that is not 4 or newer
chmod +x "$tmp/bin/bash"
PATH="$tmp/bin:$PATH" mk PRACTICE=1 grade >"$tmp/pre2.log" 2>&1
s=$?
check "practice grade with an old bash first on PATH: exit 2 and the Homebrew line (status $s)" \
  eval '[ $s -eq 2 ] && grep -q "needs bash 4.*brew install" "$tmp/pre2.log"'

# The tests and points of a runner's list (name, points), sorted.
tests_of() { "$1" --list 2>/dev/null | awk -F'\t' '!/^#/ && NF >= 2 { print $1, $2 }' | LC_ALL=C sort; }
# results.json: every test's outcome, and the practice flag and note
outcomes() { python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["extra_data"]["practice"], "PRACTICE GRADE" in d["output"], d.get("score"), d["extra_data"]["max_score"])
for t in d["tests"]: print(t["name"], t["score"], t["max_score"], t["extra_data"]["outcome"])' "$1"; }

t0=$(date +%s)
for variant in solutions labs; do
  mk PRACTICE=1 VARIANT=$variant grade GRADE_FLAGS="--json $tmp/$variant.json" >"$tmp/$variant.log" 2>&1
  eval "status_$variant=$?"
done
t1=$(date +%s)
echo "practice grades of the solutions and the stubs: $((t1 - t0)) s"

# same tests, same points as the sandboxed reference runner (built by make test's grade-build)
sandboxed=build/solutions/grade-run
practice=build/practice/solutions/grade-run
if [ -x "$sandboxed" ] && [ -x "$practice" ]; then
  tests_of "$sandboxed" >"$tmp/sandboxed.list"
  tests_of "$practice" >"$tmp/practice.list"
  n=$(wc -l <"$tmp/practice.list")
  check "the practice runner lists the sandboxed runner's $n tests with the same points" \
    eval '[ "$n" -gt 0 ] && cmp -s "$tmp/sandboxed.list" "$tmp/practice.list"'
else
  fail "no $sandboxed or $practice to compare (make grade-build, then make PRACTICE=1 grade)"
fi
max=$(awk '{ s += $2 } END { print s + 0 }' "$tmp/practice.list" 2>/dev/null)

# the solutions: full marks, every test passed, said to be a practice grade
check "solutions: practice grade exits 0 with Score: $max/$max (practice grade)" \
  eval '[ "$status_solutions" -eq 0 ] && [ "${max:-0}" -gt 0 ] &&
    grep -qx "Score: $max/$max (practice grade)" "$tmp/solutions.log"'
check "solutions: the terminal says PRACTICE GRADE and that the sandboxed grade counts" \
  eval 'grep -q "^grade: PRACTICE GRADE: .*instructor.s sandboxed one" "$tmp/solutions.log" &&
    grep -q "^grade: sandbox: NONE (practice grade" "$tmp/solutions.log"'
if outcomes "$tmp/solutions.json" >"$tmp/solutions.out" 2>&1; then
  check "solutions: results.json has practice: true, the note, score $max of $max" \
    eval '[ "$(head -1 "$tmp/solutions.out")" = "True True $max $max" ]'
  bad=$(tail -n +2 "$tmp/solutions.out" | awk '$2 != $3 || $4 != "passed"' | head -3)
  check "solutions: every test in results.json passed at full points${bad:+ (not: $bad)}" [ -z "$bad" ]
else
  fail "solutions: results.json unreadable: $(tail -1 "$tmp/solutions.out")"
fi

# the stubs: zero, every test failed, said to be a practice grade
check "stubs: practice grade fails (make: 2) with Score: 0/$max (practice grade)" \
  eval '[ "$status_labs" -ne 0 ] && grep -qx "Score: 0/$max (practice grade)" "$tmp/labs.log"'
if outcomes "$tmp/labs.json" >"$tmp/labs.out" 2>&1; then
  check "stubs: results.json has practice: true, the note, score 0 of $max" \
    eval '[ "$(head -1 "$tmp/labs.out")" = "True True 0 $max" ]'
  bad=$(tail -n +2 "$tmp/labs.out" | awk '$2 != 0 || $4 == "passed"' | head -3)
  n=$(tail -n +2 "$tmp/labs.out" | wc -l)
  check "stubs: all $n tests in results.json scored 0${bad:+ (not: $bad)}" \
    eval '[ -z "$bad" ] && [ "$n" -eq "$(wc -l <"$tmp/practice.list")" ]'
else
  fail "stubs: results.json unreadable: $(tail -1 "$tmp/labs.out")"
fi

# the sandboxed grade never calls itself a practice one (lab01 only: grading.sh does the rest)
mk grade LAB=01 GRADE_FLAGS="--json $tmp/sandboxed.json" >"$tmp/sandboxed.log" 2>&1
check "the sandboxed grade (no PRACTICE): practice: false, no practice note" \
  eval '! grep -q "PRACTICE\|practice grade" "$tmp/sandboxed.log" &&
    outcomes "$tmp/sandboxed.json" >"$tmp/sandboxed.out" 2>&1 &&
    [ "$(head -1 "$tmp/sandboxed.out" | cut -d" " -f1-2)" = "False False" ]'
finish
