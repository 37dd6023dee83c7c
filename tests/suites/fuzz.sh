#!/usr/bin/env bash
# Short libFuzzer runs (3 s each) of the readers that take outside input: the zip reader, the
# gzip/IDX reader, the fra.txt pipeline, the checkpoint loader and the flag parser
# (tests/fuzz/). `make fuzz FUZZ_SECONDS=300` runs them longer. Skips, saying why, without
# clang or its libFuzzer runtime. Ends with "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin fuzz
cc=$(command -v clang-14 || command -v clang || true)
if [ -z "$cc" ]; then
  skip "no clang (apt-get install clang-14 libclang-rt-14-dev, or make deps-dev)"
  suite_end
  exit 0
fi
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }\n' >"$tmp/t.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$tmp/t.c" -o "$tmp/t" >"$tmp/cc.log" 2>&1; then
  skip "$cc cannot link a libFuzzer harness (apt-get install libclang-rt-14-dev): $(head -1 "$tmp/cc.log")"
  suite_end
  exit 0
fi
suite_build fuzz-build "build the 5 libFuzzer harnesses with $(basename "$cc")"
bash tests/fuzz/run.sh "${FUZZ_SECONDS_TEST:-3}" "$tmp/corpus" >"$tmp/run.log" 2>&1
rc=$?
grep -v '^[0-9]* passed, [0-9]* failed' "$tmp/run.log"
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/run.log" | tail -1)
if [ -z "$line" ]; then
  bad "tests/fuzz/run.sh printed no summary (exit $rc)"
else
  passed=$((passed + ${line%% passed*}))
  f=${line#*passed, }
  failed=$((failed + ${f%% failed*}))
fi
suite_end
