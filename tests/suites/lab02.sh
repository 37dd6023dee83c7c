#!/usr/bin/env bash
# lab02 smoke run: builds ./lab02, runs the chapter, checks what it prints (the three masked
# softmax demos: zeros past each valid length, rows summing to 1, an all-zero row for length 0;
# the bmm shape; the toy example's outputs, known by hand: means of the valid value rows),
# summary.json, the two heatmaps, the 1/sqrt(d) experiment; the exercise flags and flag errors.
# Run from the repository root: bash tests/suites/lab02.sh. Ends with "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin lab02

suite_build lab02

./lab02 --out "$tmp/run" >"$tmp/run.log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok "./lab02 exits 0"; else
  bad "./lab02 exited $rc"
  tail -20 "$tmp/run.log"
fi

# The first three printed tensors are the masked softmax demos, (2, 2, 4) each: rows of 4.
awk '/^t_bmm/ { exit } /:$/ { next } { gsub(/[][(),a-z]/, " "); if (NF == 4) print }' "$tmp/run.log" \
  >"$tmp/ms_rows"
n=$(wc -l <"$tmp/ms_rows")
if [ "$n" = 12 ]; then ok "three masked softmax tensors of (2, 2, 4)"; else
  bad "masked softmax rows: $n, want 12"
fi
# valid length of each printed row: [2, 3] (1-D), [[1, 3], [2, 4]] (2-D), [0, 2] (length 0)
lens="2 2 3 3 1 3 2 4 0 0 2 2"
if awk -v lens="$lens" 'BEGIN { split(lens, L, " ") }
  { r++; s = 0
    for (j = 1; j <= 4; j++) {
      if (j > L[r] && $j != 0) exit 1        # masked entry not exactly 0
      if (j <= L[r] && !($j > 0)) exit 1     # valid entry must be positive
      s += $j }
    want = L[r] > 0 ? 1 : 0
    if (s - want > 2e-4 || want - s > 2e-4) exit 1 }   # 4 printed decimals each
  END { exit r != 12 }' "$tmp/ms_rows"; then
  ok "masked softmax: zero past each valid length, rows sum to 1, length-0 rows all zero"
else
  bad "masked softmax rows wrong:"
  cat "$tmp/ms_rows"
fi
for l in '[2, 3]' '[[1, 3], [2, 4]]' '[0, 2]'; do
  check "labelled demo valid_lens $l" grep -qxF "masked_softmax(X (2, 2, 4), valid_lens $l):" "$tmp/run.log"
done
check "bmm shape check (2, 3, 6)" grep -qx 't_bmm(Q (2, 3, 4), K (2, 4, 6)) shape: (2, 3, 6)' "$tmp/run.log"
# toy example: equal keys, so each output is the mean of the valid value rows of arange(40)
n=$(grep -c '^tensor(\[\[\[2.0000, 3.0000, 4.0000, 5.0000\]\],$' "$tmp/run.log")
m=$(grep -c '^        \[\[10.0000, 11.0000, 12.0000, 13.0000\]\]\])$' "$tmp/run.log")
if [ "$n" = 2 ] && [ "$m" = 2 ]; then ok "additive and dot-product outputs [[2..5]], [[10..13]]"; else
  bad "toy outputs: $n and $m matching lines, want 2 and 2"
fi
check "weights agree on equal keys" grep -qx 'max |additive - dot-product| attention weight: 0.0000' "$tmp/run.log"
check "no NaN printed" bash -c "! grep -qi 'nan' '$tmp/run.log'"

sum="$tmp/run/summary.json"
if [ -s "$sum" ]; then ok "summary.json written"; else bad "no summary.json"; fi
for key in masked_softmax X_1d weights_1d weights_2d weights_zero bmm_shape additive \
  dot_product output attention_weights queries keys valid_lens; do
  grep -q "\"$key\":" "$sum" 2>/dev/null && ok "summary.json has \"$key\"" ||
    bad "summary.json lacks \"$key\""
done
flat=$(tr -d ' \n' <"$sum")
if grep -q '"bmm_shape":\[2,3,6\]' <<<"$flat"; then ok "summary bmm_shape [2, 3, 6]"; else
  bad "summary bmm_shape"
fi
# numbers of one array of the "additive" object, comma-separated
additive_array() {
  grep -o '"additive":{.*"dot_product"' <<<"$flat" | grep -o "\"$1\":\[[^\"]*" | head -1 |
    sed 's/^"[a-z_]*"://; s/[][}]//g; s/,$//'
}
o=$(additive_array output)
if awk -F, '{ if (NF != 8) exit 1
    for (j = 1; j <= 8; j++) { w = j <= 4 ? j + 1 : j + 5
      if ($j - w > 1e-5 || w - $j > 1e-5) exit 1 } }' <<<"$o"; then # float32 means of ints
  ok "summary additive output [[2..5]], [[10..13]]"
else
  bad "summary additive output: $o"
fi
# the additive weights: 1/2 on 2 keys, 1/6 on 6 keys, exactly 0 elsewhere (2 x 10); 1e-6: the
# float32 softmax of equal scores, printed with 7 digits
w=$(additive_array attention_weights)
if awk -F, '{ if (NF != 20) exit 1
    for (j = 1; j <= 10; j++) { w0 = j <= 2 ? 0.5 : 0; w1 = j <= 6 ? 1 / 6 : 0
      if ($j - w0 > 1e-6 || w0 - $j > 1e-6 || $(j + 10) - w1 > 1e-6 || w1 - $(j + 10) > 1e-6) exit 1
      if ((j > 2 && $j != 0) || (j > 6 && $(j + 10) != 0)) exit 1 } }' <<<"$w"; then
  ok "summary additive weights (2 x 10): uniform over the valid keys, exactly 0 past them"
else
  bad "summary additive weights: $w"
fi

ext=png
command -v gnuplot >/dev/null 2>&1 || ext=gp
for f in attention_additive attention_dot_product; do
  if [ -s "$tmp/run/$f.$ext" ] || [ -s "$tmp/run/$f.svg" ]; then ok "figure $f.$ext"; else
    bad "figure $f.$ext missing"
  fi
  # the heatmap data: 2 query rows x 10 key columns
  check "$f.dat exists" test -s "$tmp/run/$f.dat"
done

# the 1/sqrt(d) experiment (exercise 2.4): 9 rows d = 1..256, each variance within 5 standard
# errors of the theory's (d unscaled, 1 scaled; the sample variance of 5000 scores has a
# standard error of sqrt((2 + 6/d) / 5000) of it: tests/grade/lab02/test_score_variance.c)
awk '/^the 1\/sqrt\(d\) experiment/ { on = 1; next } on && NF == 3 && $1 ~ /^[0-9]+$/ { print }
  on && /^\[figure|^figure/ { exit }' "$tmp/run.log" >"$tmp/var_rows"
if [ "$(wc -l <"$tmp/var_rows")" = 9 ] && awk '{ d = $1; t = 5 * sqrt((2 + 6 / d) / 5000)
    if (d != 2 ^ (NR - 1)) exit 1
    if ($2 < d * (1 - t) || $2 > d * (1 + t) || $3 < 1 - t || $3 > 1 + t) exit 1 }' "$tmp/var_rows"; then
  ok "1/sqrt(d) experiment: var(q.k) near d and var(q.k/sqrt(d)) near 1 for d = 1..256"
else
  bad "1/sqrt(d) experiment rows:"; cat "$tmp/var_rows"
fi
check "score_variance.dat (the experiment's figure data)" test -s "$tmp/run/score_variance.dat"

# the exercise flags
AL_NO_GNUPLOT=1 ./lab02 --random-keys --distance --bilinear --out "$tmp/ex" >"$tmp/ex.log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok "--random-keys --distance --bilinear exit 0"; else bad "flags exited $rc"; fi
d=$(sed -n 's/^max |additive - dot-product| attention weight: //p' "$tmp/ex.log")
# > 0.01: with random keys the two scores rank keys differently (weights of order 0.1 move)
if [ -n "$d" ] && awk -v d="$d" 'BEGIN { exit !(d + 0 > 0.01) }'; then
  ok "--random-keys: the two scoring functions disagree ($d)"
else
  bad "--random-keys difference '$d'"
fi
e=$(sed -n 's/^max |definition - expansion without |q|^2| = //p' "$tmp/ex.log")
# < 1e-5: the same softmax computed from float32 scores of order 1 in two algebraic forms
if [ -n "$e" ] && awk -v e="$e" 'BEGIN { exit !(e + 0 < 1e-5) }'; then
  ok "--distance: expansion equals the definition ($e)"
else
  bad "--distance expansion error '$e'"
fi
check "--bilinear prints its output" grep -q '^--bilinear: q^T M k attention output' "$tmp/ex.log"
# --covariance (d2l 1.0, 11.1 exercise 2): the Jacobian of attention in q against the keys'
# covariance; < 1e-5: float32 softmax and products of order-1 numbers, entries near 1
AL_NO_GNUPLOT=1 ./lab02 --covariance --out "$tmp/cov" >"$tmp/cov.log" 2>&1
c=$(sed -n 's/^--covariance: max |sqrt(d) \* d(attention)\/dq - Cov\[k\]| = \([^ ]*\) .*: the gradient is the covariance$/\1/p' "$tmp/cov.log")
if [ -n "$c" ] && awk -v c="$c" 'BEGIN { exit !(c + 0 < 1e-5) }'; then
  ok "--covariance: the gradient of attention in q is the keys' covariance ($c)"
else
  bad "--covariance: '$(grep -e '--covariance' "$tmp/cov.log")'"
fi
check "--help exits 0" ./lab02 --help
./lab02 --frobnicate >"$tmp/bad.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then ok "an unknown flag is an error (exit $rc)"; else bad "unknown flag accepted"; fi

suite_end
