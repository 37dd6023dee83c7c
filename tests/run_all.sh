#!/usr/bin/env bash
# make test: runs every suite and ends with one "N passed, N failed, N skipped" line.
# A suite prints "skip NAME: why" for each check it could not run; those count as skipped,
# never as passed. Under CI (CI=true, set by .ci/run) a skip for want of fra-eng.zip while
# ../shared/data/fra-eng.zip exists is a failure: the data search is broken, and CI would
# otherwise be green without ever training lab03 or lab06.
set -u
VARIANT=${VARIANT:-solutions}
passed=0; failed=0; skipped=0
shared_zip=../shared/data/fra-eng.zip
run_suite() { # name, command...: a suite that prints its own "N passed, N failed[, N skipped]" line
  local name=$1; shift
  echo "== $name"
  local out; out=$("$@" 2>&1); local rc=$?
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
run_suite "unit tests" build/$VARIANT/test_unit
run_suite "unit tests under ASan+UBSan" env ASAN_OPTIONS=detect_leaks=1 build/asan/test_unit
for f in tests/suites/*.sh; do
  [ -f "$f" ] || continue
  run_suite "$(basename "$f" .sh)" bash "$f"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
