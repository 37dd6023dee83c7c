#!/usr/bin/env bash
# gpu_report: `make gpu-report` without a GPU (--no-gpu forces that path even on a card): every
# part that needs a card says "skip: no GPU (why)", the emulator part still runs, and the report
# is written. Its GPU parts run only on a GPU machine (make gpu-report there).
. "$(dirname "$0")/../suite_lib.sh" && suite_begin gpu_report
r=$tmp/report.md
if bash tests/tools/gpu_report.sh --no-gpu "$r" >"$tmp/log" 2>&1; then
  ok "gpu_report.sh --no-gpu exits 0"
else
  bad "gpu_report.sh --no-gpu failed:"; tail -10 "$tmp/log"
fi
n=$(grep -c '^skip: no GPU (--no-gpu was given)$' "$r" 2>/dev/null)
# the five parts that need a card: cuda_check, compute-sanitizer, lab comparisons, timings, ncu
if [ "${n:-0}" = 5 ]; then
  ok "the report's five GPU parts each say 'skip: no GPU' and why"
else
  bad "expected 5 'skip: no GPU' parts in the report, found ${n:-0}:"; cat "$r"
fi
if grep -q '^- card: none (--no-gpu was given)$' "$r"; then
  ok "the report's header says there is no card, and why"
else
  bad "the report's header does not say why there is no card"
fi
if grep -qE '^exit 0: [0-9]+ passed, 0 failed' "$r"; then
  ok "the emulator part of the report ran without a GPU: $(grep -E '^exit 0: ' "$r")"
else
  bad "the emulator part of the report did not pass:"; grep -A3 'emulator' "$r"
fi
suite_end
