#!/usr/bin/env bash
# make test: runs every suite and ends with one "N passed, N failed" line.
set -u
VARIANT=${VARIANT:-solutions}
passed=0; failed=0; skipped=0
run_suite() { # name, command...: a suite that prints its own "N passed, N failed" line
  local name=$1; shift
  echo "== $name"
  local out; out=$("$@" 2>&1); local rc=$?
  echo "$out" | grep -v '^ok ' 
  local line; line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
  if [ -n "$line" ]; then
    local p f; p=$(echo "$line" | awk '{print $1}'); f=$(echo "$line" | awk '{print $3}')
    passed=$((passed + p)); failed=$((failed + f))
    local sk; sk=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p'); skipped=$((skipped + ${sk:-0}))
    if [ $rc -ne 0 ] && [ "$f" = 0 ]; then failed=$((failed + 1)); echo "FAIL $name exited $rc"; fi
  else
    if [ $rc -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $name (exit $rc)"; fi
  fi
}
run_suite "unit tests" build/$VARIANT/test_unit
run_suite "unit tests under ASan+UBSan" env ASAN_OPTIONS=detect_leaks=1 build/asan/test_unit
for f in tests/suites/*.sh; do
  [ -f "$f" ] || continue
  run_suite "$(basename "$f" .sh)" bash "$f"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
