#!/usr/bin/env bash
# lab04 smoke run: builds ./lab04, runs the chapter (a short timing too), checks what it prints,
# summary.json and the per-head heatmap; checks --heads and the flag errors.
# Run from the repository root: bash tests/suites/lab04.sh. Ends with "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin lab04

suite_build lab04

./lab04 --bench-reps 3 --out "$tmp/run" >"$tmp/run.log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok "./lab04 exits 0"; else
  bad "./lab04 exited $rc"
  tail -20 "$tmp/run.log"
fi
check "transpose_qkv shape (8, 3, 3)" grep -q '^transpose_qkv(X (2, 3, 12), 4 heads): (8, 3, 3)$' "$tmp/run.log"
check "transpose round trip exact" grep -qx 'round trip exact: yes' "$tmp/run.log"
check "book check: output shape (2, 4, 100)" grep -qx 'output shape: (2, 4, 100)' "$tmp/run.log"
check "weights shape (10, 4, 6)" grep -qx 'attention weights shape: (10, 4, 6)' "$tmp/run.log"
check "40000 parameters" grep -q '^parameters: 40000 ' "$tmp/run.log"
# parallel heads == loop over heads (float32 rounding at most)
diff=$(sed -n 's/^max |parallel - loop over heads| = //p' "$tmp/run.log")
if [ -n "$diff" ] && awk -v d="$diff" 'BEGIN { exit !(d + 0 <= 1e-5) }'; then
  ok "parallel heads equal the loop over heads ($diff)"
else
  bad "parallel vs loop difference '$diff'"
fi
# the loop-vs-parallel counts: the same matrix-product FLOPs in fewer ops (machine-independent)
cnt=$(sed -n 's/^forward (32, 20, 256), 8 heads: parallel \([0-9]*\) ops, \([0-9.]*\) GFLOP in matrix products; loop over heads \([0-9]*\) ops, \([0-9.]*\) GFLOP$/\1 \2 \3 \4/p' "$tmp/run.log")
if [ -n "$cnt" ] && echo "$cnt" | awk '{ exit !($1 > 0 && $3 >= 2 * $1 && $2 > 0 && $2 == $4) }'; then
  ok "counts: parallel and loop do the same GFLOP, the loop in at least twice the ops ($cnt)"
else
  bad "counts line: '$cnt' (want: parallel ops, GFLOP, loop ops >= 2x, the same GFLOP)"
fi
check "--bench-reps 3: median and quartiles of both ways" grep -qE '^timed, 3 forwards each: parallel median [0-9.]+ ms \(quartiles [0-9.]+-[0-9.]+\), loop over heads median [0-9.]+ ms' "$tmp/run.log"
n=$(grep -c '^example [12], head [1-4]: argmax key per query:' "$tmp/run.log")
if [ "$n" = 8 ]; then ok "8 per-head argmax lines"; else bad "per-head lines: $n, want 8"; fi
# example 2 has valid length 5: no query may pick a padded key 5..7
if grep '^example 2, head' "$tmp/run.log" | sed 's/.*query://' | grep -q '[567]'; then
  bad "example 2 attends to a padded key"
else
  ok "example 2 never attends to padded keys"
fi
check "no NaN printed" bash -c "! grep -qi 'nan' '$tmp/run.log'"

sum="$tmp/run/summary.json"
if [ -s "$sum" ]; then ok "summary.json written"; else bad "no summary.json"; fi
for key in transpose_qkv_shape book_check output_shape attention_weights_shape \
  max_abs_diff_parallel_vs_loop cost timing_ms heads_demo weights; do
  grep -q "\"$key\":" "$sum" 2>/dev/null && ok "summary.json has \"$key\"" ||
    bad "summary.json lacks \"$key\""
done
check "summary transpose_qkv_shape [8, 3, 3]" bash -c "tr -d ' \n' <'$sum' | grep -q '\"transpose_qkv_shape\":\[8,3,3\]'"
if tr -d ' \n' <"$sum" | grep -q '"output_shape":\[2,4,100\]'; then ok "summary output_shape [2, 4, 100]"; else
  bad "summary output_shape"
fi

ext=png
command -v gnuplot >/dev/null 2>&1 || ext=gp
if [ -s "$tmp/run/heads.$ext" ] || [ -s "$tmp/run/heads.svg" ]; then ok "figure heads.$ext"; else
  bad "figure heads.$ext missing"
fi

# --heads changes the heatmap grid; bad values are clear errors
AL_NO_GNUPLOT=1 ./lab04 --heads 8 --no-bench --out "$tmp/h8" >"$tmp/h8.log" 2>&1
n=$(grep -c '^example [12], head [1-8]: argmax' "$tmp/h8.log")
if [ "$n" = 16 ]; then ok "--heads 8: 16 panels"; else bad "--heads 8: $n lines, want 16"; fi
check "--no-bench skips the counts" bash -c "! grep -q '^forward (32' '$tmp/h8.log'"
AL_NO_GNUPLOT=1 ./lab04 --out "$tmp/plain" >"$tmp/plain.log" 2>&1
check "by default: the counts and no timing" bash -c "grep -q '^forward (32' '$tmp/plain.log' && ! grep -q '^timed' '$tmp/plain.log'"
./lab04 --heads 3 --out "$tmp/bad" >"$tmp/bad.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q -- '--heads must divide' "$tmp/bad.log"; then ok "--heads 3 rejected (exit $rc)"; else
  bad "--heads 3: exit $rc"
fi
check "--help exits 0" ./lab04 --help

suite_end
