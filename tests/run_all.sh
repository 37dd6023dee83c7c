#!/usr/bin/env bash
# make test: runs every suite and ends with one "N passed, N failed, N skipped" line.
# A suite prints "skip NAME: why" for each check it could not run; those count as skipped,
# never as passed. Under CI (CI=true, set by .ci/run) a skip for want of fra-eng.zip while
# ../shared/data/fra-eng.zip exists is a failure: the data search is broken, and CI would
# otherwise be green without ever training lab03 or lab06.
# SUITES=a,b (make test SUITES=a,b) runs only those: "unit", "asan-unit" and the names of
# tests/suites/*.sh. Each suite's wall time is printed beside its name, and the table of times
# at the end, so a slow suite is seen where it is.
set -u
VARIANT=${VARIANT:-solutions}
passed=0; failed=0; skipped=0
shared_zip=../shared/data/fra-eng.zip
SUITES=${SUITES:-}
times=""
wanted() { [ -z "$SUITES" ] || [[ ",$SUITES," == *",$1,"* ]]; }
if [ -n "$SUITES" ]; then # a name that matches nothing is a typo, not an empty pass
  for s in ${SUITES//,/ }; do
    case $s in unit|asan-unit) ;; *)
      [ -f "tests/suites/$s.sh" ] || { echo "run_all: no suite named '$s' (unit, asan-unit or one of tests/suites/*.sh)" >&2; exit 2; } ;;
    esac
  done
fi
run_suite() { # key, name, command...: a suite that prints its own "N passed, N failed[, N skipped]" line
  local key=$1 name=$2; shift 2
  wanted "$key" || return 0
  echo "== $name"
  local t0=$SECONDS
  local out; out=$("$@" 2>&1); local rc=$?
  local dt=$((SECONDS - t0))
  times="$times$(printf '%6d s  %s' "$dt" "$key")
"
  echo "$out" | grep -v '^ok '
  local line; line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' | tail -1)
  if [ -n "$line" ]; then
    local p f s; p=$(echo "$line" | awk '{print $1}'); f=$(echo "$line" | awk '{print $3}')
    s=$(echo "$line" | awk '{print $5}'); s=${s:-0}
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    if [ $rc -ne 0 ] && [ "$f" = 0 ]; then failed=$((failed + 1)); echo "FAIL $name exited $rc"; fi
  else
    if [ $rc -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $name (exit $rc)"; fi
  fi
  if [ "${CI:-}" = true ] && [ -f "$shared_zip" ]; then
    local n; n=$(echo "$out" | grep -c '^skip .*fra-eng\.zip')
    if [ "$n" -gt 0 ]; then
      failed=$((failed + n))
      echo "FAIL $name: $n check(s) skipped for want of fra-eng.zip, but $shared_zip exists (CI=true):" \
        "the data search is broken"
    fi
  fi
}
run_suite unit "unit tests" build/$VARIANT/test_unit
run_suite asan-unit "unit tests under ASan+UBSan" env ASAN_OPTIONS=detect_leaks=1 build/asan/test_unit
for f in tests/suites/*.sh; do
  [ -f "$f" ] || continue
  run_suite "$(basename "$f" .sh)" "$(basename "$f" .sh)" bash "$f"
done
echo "== time per suite (wall, this machine)"
printf '%s' "$times" | sort -rn
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
