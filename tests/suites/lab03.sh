#!/usr/bin/env bash
# lab03 smoke run: builds ./lab03, trains the classic preset for a few epochs (no gnuplot),
# checks what it prints, summary.json and the figure data; a checkpoint saved by one run
# reproduces its translations in a --load run; broken checkpoints and missing data are clear
# errors. The student's code trains the model: a VARIANT=labs copy of the kit with the
# solutions as the student's files trains to this build's losses, and with a bug planted in its
# gru_cell falls back from the fast path and trains to other losses. Run from the repository root: bash tests/suites/lab03.sh. Ends with "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin lab03
root=$(pwd)
export AL_NO_GNUPLOT=1

suite_build lab03

# the data set (fra-eng.zip) must be present for the training runs; say so plainly if not
if ! ./lab03 --epochs 1 --heldout 0 --out "$tmp/probe" >"$tmp/probe.log" 2>&1 &&
  grep -q 'make data' "$tmp/probe.log"; then
  skip "training runs: fra-eng.zip not found (run make data); only the error path is checked"
  check "missing data is a clear error" grep -q 'make data' "$tmp/probe.log"
  suite_end
  exit
fi

./lab03 --epochs 30 --heldout 50 --save "$tmp/m.ckpt" --translate "i lost ." --out "$tmp/run" \
  >"$tmp/run.log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok "./lab03 --epochs 30 exits 0"; else
  bad "./lab03 exited $rc"
  tail -20 "$tmp/run.log"
fi
check "decoder shape check" grep -qx 'output shape (4, 7, 10), len(state) 3, enc_outputs (4, 7, 16), len(hidden_state) 2, hidden_state\[0\] (4, 16)' "$tmp/run.log"
diff=$(sed -n 's/^fused GRU cell vs your gru_cell: max |difference| = //p' "$tmp/run.log")
# 1e-5: the same float32 gates of order 1 summed in a different order by the fused kernel
if [ -n "$diff" ] && awk -v d="$diff" 'BEGIN { exit !(d + 0 <= 1e-5) }'; then
  ok "fused GRU cell equals gru_cell ($diff)"
else
  bad "fused vs gru_cell difference '$diff'"
fi
check "the fast path agrees with the exercises on this run's data" grep -q '^fast path (fused GRU cells, packed decoder) agrees with your gru_cell, additive_attention_cached and masked_softmax on 16 training pairs' "$tmp/run.log"
check "the kit's batched step agrees with the exercise's train step (3.4) on one batch" grep -q "^train step: the kit's batched step (rows sorted by length, cut in two parts[^)]*) agrees with your seq2seq_train_step on 64 training pairs" "$tmp/run.log"
check "vocab 184 / 201, 601 pairs" grep -q '^preset d2l-0.17: 601 pairs (601 train), source vocab 184, target vocab 201, num_steps 10$' "$tmp/run.log"
check "the book's closing line" grep -Eq '^loss [0-9]+\.[0-9]{3}, [0-9]+\.[0-9] tokens/sec on cpu$' "$tmp/run.log"
n=$(grep -Ec "^(go \.|i lost \.|he's calm \.|i'm home \.) => .*, bleu [01]\.[0-9]{3}$" "$tmp/run.log")
if [ "$n" = 4 ]; then ok "four translations with BLEU"; else bad "translation lines: $n, want 4"; fi
check "training-pair check" grep -qx "'he's calm .' is not a training sentence" "$tmp/run.log"
check "held-out BLEU-4 line" grep -Eq '^held-out corpus BLEU-4 on 50 unseen pairs: [0-9.]+' "$tmp/run.log"
check "--translate line" grep -q "^i lost \. => " "$tmp/run.log"
# BLEU-2 = BP * sqrt(p1 * p2) with the brevity penalty BP <= 1: bounded by the printed precisions
b2=$(sed -n 's/^held-out corpus BLEU-2: \([0-9.]*\)$/\1/p' "$tmp/run.log")
pp=$(sed -n 's/^held-out corpus BLEU-4 on .*(n-gram precisions \([0-9.]*\) \([0-9.]*\) .*/\1 \2/p' "$tmp/run.log")
if [ -n "$b2" ] && [ -n "$pp" ] && awk -v b="$b2" -v pp="$pp" 'BEGIN { split(pp, p, " ");
  m = sqrt(p[1] * p[2]); exit !(b <= m + 0.002 && (m == 0 ? b == 0 : b > 0)) }'; then
  ok "held-out BLEU-2 $b2 consistent with precisions $pp"
else
  bad "held-out BLEU-2 '$b2' vs precisions '$pp'"
fi
check "no NaN printed" bash -c "! grep -qi 'nan' '$tmp/run.log'"
# 30 epochs: the loss must have gone down from the first epoch's ~0.45
loss=$(sed -n 's/^loss \([0-9.]*\), .*/\1/p' "$tmp/run.log")
if [ -n "$loss" ] && awk -v l="$loss" 'BEGIN { exit !(l + 0 < 0.2) }'; then ok "loss after 30 epochs $loss < 0.2"; else
  bad "loss after 30 epochs '$loss'"
fi

sum="$tmp/run/summary.json"
if [ -s "$sum" ]; then ok "summary.json written"; else bad "no summary.json"; fi
for key in preset src_vocab_size tgt_vocab_size num_pairs epochs epoch_losses final_loss \
  tokens_per_sec peak_rss_kb translations src pred ref bleu mean_bleu heldout_bleu4 heldout_bleu2 \
  heldout_ngram_precisions; do
  grep -q "\"$key\":" "$sum" 2>/dev/null && ok "summary.json has \"$key\"" ||
    bad "summary.json lacks \"$key\""
done
check "summary vocab sizes" bash -c "tr -d ' \n' <'$sum' | grep -q '\"src_vocab_size\":184,\"tgt_vocab_size\":201'"
for f in loss.dat loss.gp attention.dat attention.gp; do
  if [ -s "$tmp/run/$f" ]; then ok "figure file $f"; else bad "figure file $f missing"; fi
done

# the checkpoint reproduces the run's translations without training
./lab03 --load "$tmp/m.ckpt" --heldout 0 --out "$tmp/load" >"$tmp/load.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^loaded ' "$tmp/load.log"; then ok "--load runs ($rc)"; else
  bad "--load exited $rc"
  tail -5 "$tmp/load.log"
fi
if [ "$(grep ' => ' "$tmp/run.log" | head -4)" = "$(grep ' => ' "$tmp/load.log" | head -4)" ]; then
  ok "loaded model translates like the saved one"
else
  bad "translations differ after --load"
fi
check "--load does not train" bash -c "! grep -q '^epoch ' '$tmp/load.log'"

# broken checkpoints: a clear error, non-zero, no crash
head -c 300 "$tmp/m.ckpt" >"$tmp/trunc.ckpt"
./lab03 --load "$tmp/trunc.ckpt" --heldout 0 --out "$tmp/bad" >"$tmp/bad.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q 'trunc.ckpt: CRC-32 mismatch\|trunc.ckpt: truncated' "$tmp/bad.log"; then
  ok "truncated checkpoint rejected (exit $rc)"
else
  bad "truncated checkpoint: exit $rc"
fi
printf 'hello, not a model\n' >"$tmp/foreign.ckpt"
./lab03 --load "$tmp/foreign.ckpt" --heldout 0 --out "$tmp/bad" >"$tmp/bad.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q 'not an attention-lab checkpoint' "$tmp/bad.log"; then
  ok "foreign file rejected (exit $rc)"
else
  bad "foreign file: exit $rc"
fi
./lab03 --load "$tmp/m.ckpt" --rnn lstm --heldout 0 --out "$tmp/bad" >"$tmp/bad.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q "saved for model 'bahdanau gru" "$tmp/bad.log"; then
  ok "checkpoint of another architecture rejected (exit $rc)"
else
  bad "--rnn lstm with a GRU checkpoint: exit $rc"
fi

# flags: the book's exercises run; bad values are errors
./lab03 --rnn lstm --attention dot --epochs 3 --heldout 0 --out "$tmp/lstm" >"$tmp/lstm.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^training-time comparison (3 epochs): lstm + dot' "$tmp/lstm.log"; then
  ok "--rnn lstm --attention dot with the timing comparison"
else
  bad "--rnn lstm --attention dot: exit $rc"
  tail -5 "$tmp/lstm.log"
fi
./lab03 --rnn rnn --out "$tmp/bad" >"$tmp/bad.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q -- '--rnn must be gru or lstm' "$tmp/bad.log"; then ok "--rnn rnn rejected"; else bad "--rnn rnn: exit $rc"; fi
./lab03 --preset d2l-9 --out "$tmp/bad" >"$tmp/bad.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "unknown --preset" "$tmp/bad.log"; then ok "unknown preset rejected"; else bad "--preset d2l-9: exit $rc"; fi
check "--help exits 0" ./lab03 --help

# missing data: run from a directory where none of the searched places exist
mkdir -p "$tmp/empty/cwd" "$tmp/empty/none"
(cd "$tmp/empty/cwd" && D2L_DATA_DIR= "$root/lab03" --data-dir "$tmp/empty/none" --epochs 1 \
  --out "$tmp/empty/out") >"$tmp/nodata.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q 'make data' "$tmp/nodata.log" &&
  grep -q "$tmp/empty/none" "$tmp/nodata.log"; then
  ok "missing data: clear error naming the places searched (exit $rc)"
else
  bad "missing data: exit $rc"
  cat "$tmp/nodata.log" | head -5
fi

# The student's code is on the training path. A copy of the kit built VARIANT=labs, the
# solutions' exercise files copied in as the student's (the compiled common/ objects copied
# with their times, so only the labs and chapters compile), trains to exactly this build's
# losses. Then a bug goes into its gru_cell: h' = (1 - z) * H + z * n instead of
# (1 - z) * n + z * H, the update gate's roles swapped (as if its sign were flipped). The lab
# must say in one line that its fast path differs from the student's code, train with the
# student's cell, and end at other losses.
losses() { tr -d ' \n' <"$1" 2>/dev/null | grep -o '"epoch_losses":\[[^]]*\]'; }
if [ ! -d solutions/lab03 ]; then
  skip "the student-path runs: no solutions/ here (a handout) to copy in as the student's files"
else
  kit="$tmp/kit"
  student_kit "$kit"
  ./lab03 --epochs 3 --heldout 0 --out "$tmp/sol3" >"$tmp/sol3.log" 2>&1
  if ! kit_make "$kit" lab03 >"$tmp/kit.log" 2>&1; then
    bad "make VARIANT=labs lab03 in a copy with the solutions as the student's files failed:"
    tail -10 "$tmp/kit.log"
  else
    "$kit/lab03" --epochs 3 --heldout 0 --out "$tmp/kit3" >"$tmp/kit3.log" 2>&1
    if [ -n "$(losses "$tmp/sol3/summary.json")" ] &&
      [ "$(losses "$tmp/kit3/summary.json")" = "$(losses "$tmp/sol3/summary.json")" ] &&
      grep -q '^fast path (fused GRU cells, packed decoder) agrees' "$tmp/kit3.log"; then
      ok "VARIANT=labs with the solutions' files: the fast path agrees, the same losses as this build"
    else
      bad "VARIANT=labs with the solutions' files: losses $(losses "$tmp/kit3/summary.json") vs $(losses "$tmp/sol3/summary.json")"
      grep -i 'fast path' "$tmp/kit3.log"
    fi
    g="$kit/labs/lab03/gru_cell.c"
    sed -i 's/return t_add(n, t_mul(z, t_sub(H, n)));/return t_sub(H, t_mul(z, t_sub(H, n)));/' "$g"
    if ! grep -q 'return t_sub(H, t_mul(z, t_sub(H, n)));' "$g"; then
      bad "the planted gru_cell bug did not apply: solutions/lab03/gru_cell.c no longer ends as this suite expects"
    elif ! kit_make "$kit" lab03 >"$tmp/kit.log" 2>&1; then
      bad "make VARIANT=labs lab03 with the planted gru_cell failed:"
      tail -10 "$tmp/kit.log"
    else
      "$kit/lab03" --epochs 3 --heldout 0 --out "$tmp/plant3" >"$tmp/plant3.log" 2>&1
      rc=$?
      planted=$(losses "$tmp/plant3/summary.json")
      if [ $rc -eq 0 ] && [ "$(grep -c '^fast path' "$tmp/plant3.log")" = 1 ] &&
        grep -q '^fast path not used: it differs from your gru_cell, additive_attention_cached and masked_softmax on 16 training pairs' "$tmp/plant3.log" &&
        [ -n "$planted" ] && [ "$planted" != "$(losses "$tmp/sol3/summary.json")" ]; then
        ok "a bug planted in the student's gru_cell: the lab says so in one line, trains with it, and the losses move"
      else
        bad "planted gru_cell bug: exit $rc, losses $planted vs $(losses "$tmp/sol3/summary.json")"
        grep -i 'fast path' "$tmp/plant3.log"
      fi
    fi
  fi
fi

./lab03 --epochs 0 --out "$tmp/x" >"$tmp/e0.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q -- '--epochs 0: must be at least 1 (training runs at least one epoch' "$tmp/e0.log"; then
  ok "--epochs 0 rejected with a reason (not silently one epoch)"
else bad "--epochs 0: exit $rc"; fi
suite_end
