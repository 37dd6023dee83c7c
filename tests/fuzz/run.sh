#!/usr/bin/env bash
# run.sh SECONDS CORPUS_ROOT — run every libFuzzer harness in build/fuzz/ for SECONDS each,
# starting from seeds made from the real data files (seeds.sh) and CORPUS_ROOT/<harness>
# (created; new inputs are kept there). Prints "ok"/"FAIL" per harness and "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
secs=${1:-3}
croot=${2:-build/fuzz/corpus}
seeds=build/fuzz/seeds
passed=0
failed=0
bash tests/fuzz/seeds.sh "$seeds" || { echo "FAIL fuzz: could not make the seed corpora"; echo "0 passed, 1 failed"; exit 1; }
# every harness there is (tests/fuzz/fuzz_*.c, as fuzz.mk builds them), not a second list
for src in tests/fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  bin=build/fuzz/$name
  mkdir -p "$croot/$name"
  log=build/fuzz/$name.log
  # -rss_limit_mb: a reader that allocates what a hostile header claims fails here
  ASAN_OPTIONS=detect_leaks=1 timeout $((secs * 4 + 60)) "$bin" -max_total_time="$secs" \
    -rss_limit_mb=1024 -timeout=20 -artifact_prefix=build/fuzz/ "$croot/$name" "$seeds/$name" \
    >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
  if [ $rc -eq 0 ] && [ -n "$runs" ] && [ "$runs" -gt 0 ]; then
    echo "ok   fuzz: $name: $runs inputs in ${secs} s, no crash, leak or sanitizer report"
    passed=$((passed + 1))
  else
    echo "FAIL fuzz: $name exited $rc (log: $log); the input that failed is build/fuzz/crash-* or leak-*:"
    grep -m5 -E 'ERROR|SUMMARY|runtime error|deadly signal' "$log"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
