#!/usr/bin/env bash
# lab05 smoke run: builds ./lab05, runs the chapter, checks what it prints (the self-attention
# shape, the complexity table, the binary table, the rotation check), summary.json against the
# golden table (tests/golden/lab05_reference.txt) and the figures; an odd --encoding-dim and the
# flag errors. Run from the repository root: bash tests/suites/lab05.sh.
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin lab05

suite_build lab05

./lab05 --out "$tmp/run" >"$tmp/run.log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok "./lab05 exits 0"; else
  bad "./lab05 exited $rc"
  tail -20 "$tmp/run.log"
fi
check "self-attention shape (2, 4, 100)" grep -qx 'self-attention output shape: (2, 4, 100)' "$tmp/run.log"
check "table: CNN row with O(n/k) and the dilated O(log_k n)" grep -q '^CNN  *O(k n d^2)  *O(1)  *O(n/k)  \[O(log_k n) dilated\]' "$tmp/run.log"
check "table: RNN row" grep -q '^RNN  *O(n d^2)  *O(n)  *O(n)$' "$tmp/run.log"
check "table: self-attention row" grep -q '^self-attention  *O(n^2 d)  *O(1)  *O(1)$' "$tmp/run.log"
check "n = 1024 example row" grep -q '^1024  *8.05e+08  *2.68e+08  *5.37e+08  *| 512  *7  *1023  *1$' "$tmp/run.log"
nb=0
for i in 0 1 2 3 4 5 6 7; do
  b=$(printf '%d%d%d' $(((i >> 2) & 1)) $(((i >> 1) & 1)) $((i & 1)))
  grep -qx "$i in binary is $b" "$tmp/run.log" && nb=$((nb + 1))
done
if [ $nb = 8 ]; then ok "binary representations of 0..7"; else bad "binary lines: $nb of 8"; fi
check "P[1, 6:10] printed" grep -qx '  \[0.1769, 0.9842, 0.0998, 0.9950\]' "$tmp/run.log"
err=$(sed -n 's/^rotation check, delta = 1..20, positions i < 60: max error //p' "$tmp/run.log")
if [ -n "$err" ] && awk -v e="$err" 'BEGIN { exit !(e + 0 > 0 && e + 0 < 1e-5) }'; then
  ok "rotation property holds to float32 rounding ($err; torch: 2.92e-06)"
else
  bad "rotation max error '$err'"
fi
check "dot product line" grep -q '^p_i . p_(i+5) = 11.77738[0-9] for every i < 60' "$tmp/run.log"
check "no NaN printed" bash -c "! grep -qi 'nan' '$tmp/run.log'"

sum="$tmp/run/summary.json"
if [ -s "$sum" ]; then ok "summary.json written"; else bad "no summary.json"; fi
for key in self_attention_output_shape complexity_table complexity_example P_cols_6_9 binary \
  rotation max_error_first_60 max_error_whole_table; do
  grep -q "\"$key\":" "$sum" 2>/dev/null && ok "summary.json has \"$key\"" ||
    bad "summary.json lacks \"$key\""
done
# columns 6..9 of the first 60 positions against the book's PyTorch numbers (1e-6: both are
# float32 with the same operations; they agree to one ulp)
got=$(tr -d ' \n' <"$sum" | sed -n 's/.*"P_cols_6_9":\[\[\([^]]*\)\],\[\([^]]*\)\],\[\([^]]*\)\],\[\([^]]*\)\]\].*/\1;\2;\3;\4/p')
want=$(sed -n 's/^P.cols6_9 240 //p' tests/golden/lab05_reference.txt)
verdict=$(awk -v got="$got" -v want="$want" 'BEGIN {
    nc = split(got, cols, ";"); nw = split(want, w, " ");
    if (nc != 4 || nw != 240) { printf "columns %d, golden values %d", nc, nw; exit }
    for (c = 1; c <= 4; c++) { n = split(cols[c], g, ",");
      if (n != 60) { printf "column %d has %d values", c + 5, n; exit }
      for (i = 1; i <= 60; i++) { d = g[i] - w[(i - 1) * 4 + c]; if (d < 0) d = -d;
        if (d > 1e-6) { printf "P[%d, %d] = %s, torch %s", i - 1, c + 5, g[i], w[(i - 1) * 4 + c]; exit } } }
    print "same" }')
if [ "$verdict" = same ]; then ok "P[0:60, 6:10] matches PyTorch (1e-6)"; else bad "P columns: $verdict"; fi

ext=png
command -v gnuplot >/dev/null 2>&1 || ext=gp
for fig in pe_columns pe_heatmap; do
  if [ -s "$tmp/run/$fig.$ext" ] || [ -s "$tmp/run/$fig.svg" ]; then ok "figure $fig.$ext"; else
    bad "figure $fig.$ext missing"
  fi
done

# an odd encoding dimension works; bad flags are clear errors
AL_NO_GNUPLOT=1 ./lab05 --encoding-dim 33 --delta 100 --out "$tmp/odd" >"$tmp/odd.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q 'rotation check, delta = 100' "$tmp/odd.log"; then ok "--encoding-dim 33 --delta 100 runs"; else
  bad "--encoding-dim 33: exit $rc"
fi
./lab05 --encoding-dim 8 --out "$tmp/bad" >"$tmp/bad.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q -- '--encoding-dim must be' "$tmp/bad.log"; then ok "--encoding-dim 8 rejected (exit $rc)"; else
  bad "--encoding-dim 8: exit $rc"
fi
./lab05 --num-steps 2000 --out "$tmp/bad" >"$tmp/bad.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q -- '--num-steps must be' "$tmp/bad.log"; then ok "--num-steps 2000 rejected"; else
  bad "--num-steps 2000: exit $rc"
fi
check "--help exits 0" ./lab05 --help

suite_end
