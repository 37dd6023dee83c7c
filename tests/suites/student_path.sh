#!/usr/bin/env bash
# student_path: labs 01, 02, 04, 05 and 06 run the student's exercises on their default path.
# In a copy of the tree, the solutions' exercise files are copied over the stubs in labs/ and the
# labs are built with VARIANT=labs: each short run must give the solutions build's summary.json
# (every number the run computes; timings aside), so nothing of the solutions' stands in for the
# student's code. Then a bug planted in the copied masked_softmax (lab02's exercise, which
# lab04's and lab06's attention call) must change lab06's training loss, one in the copied
# decoder block's cache (exercise 6.5) lab06's token-by-token decoding, and one in the copied
# greedy loop (exercise 6.6) lab06's translations. And lab06 trains with the student's train
# step (exercise 3.4, lab03's seq2seq_train_step): the run says the kit's batched step agrees
# with it; with the clipping left out of the student's copy, it says they differ, trains with
# the student's step, and the loss moves.
# Then, on the emulated device, the student's softmax kernel (exercise 2.6) must train lab06 to
# the CPU run's numbers, and a planted kernel must move its loss.
# (lab03: tests/suites/lab03.sh; lab07: tests/suites/lab07_student.sh.)
# Run from the repository root: bash tests/suites/student_path.sh. Ends with "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin student_path
export AL_NO_GNUPLOT=1
suite_build labs-all "the labs (solutions build)"

suite_data
runs=("lab01 --epochs 5" "lab02" "lab04 --no-bench" "lab05")
if [ $have_fra = yes ]; then
  runs+=("lab06 --epochs 3 --heldout 5")
else
  skip "lab06: fra-eng.zip not found (make data): its student path is unchecked"
fi

w="$tmp/tree"
student_kit "$w"
mkl() { kit_make "$w" NO_CUDA=1 "$@"; }
if ! mkl lab01 lab02 lab04 lab05 lab06 >"$tmp/labs-build.log" 2>&1; then
  bad "make VARIANT=labs with the solutions copied into labs/ failed:"
  tail -20 "$tmp/labs-build.log"
  suite_end
  exit 1
fi
ok "make VARIANT=labs lab01 lab02 lab04 lab05 lab06 (the solutions' exercises in labs/)"

# same NAME ARGS...: the solutions build and the student build (run from the repository root,
# so both find the data), summaries compared to float rounding of the same code: 1e-7
same() {
  local lab=$1
  shift
  ./"$lab" "$@" --out "$tmp/sol-$lab" >"$tmp/sol-$lab.log" 2>&1 || { bad "$lab (solutions) failed:"; tail -5 "$tmp/sol-$lab.log"; return; }
  "$w/$lab" "$@" --out "$tmp/stu-$lab" >"$tmp/stu-$lab.log" 2>&1 || { bad "$lab (VARIANT=labs) failed:"; tail -5 "$tmp/stu-$lab.log"; return; }
  if python3 tests/tools/summary_diff.py "$tmp/sol-$lab/summary.json" "$tmp/stu-$lab/summary.json" 1e-7 >"$tmp/$lab.diff"; then
    ok "$lab $*: VARIANT=labs with the solutions' code gives the solutions build's summary"
  else
    bad "$lab $*: VARIANT=labs differs from the solutions build:"; head -5 "$tmp/$lab.diff"
  fi
}
for r in "${runs[@]}"; do
  # shellcheck disable=SC2086
  same $r
done

# the plant: masked_softmax fills masked scores with 0 instead of -inf (so padding keys get
# weight), in the student's copy only: lab06's loss must move
if [ $have_fra = yes ]; then
  ms="$w/labs/lab02/masked_softmax.c"
  sed -i 's|valid_lens, -INFINITY)|valid_lens, 0.0f) /* planted */|' "$ms"
  if ! grep -q planted "$ms"; then
    bad "could not plant the bug in $ms (the solution changed? update the sed)"
  elif ! mkl lab06 >"$tmp/plant-build.log" 2>&1; then
    bad "make VARIANT=labs lab06 with the planted masked_softmax failed:"; tail -5 "$tmp/plant-build.log"
  else
    "$w/lab06" --epochs 3 --heldout 5 --out "$tmp/plant" >"$tmp/plant.log" 2>&1
    a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["final_loss"])' "$tmp/stu-lab06/summary.json" 2>/dev/null)
    b=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["final_loss"])' "$tmp/plant/summary.json" 2>/dev/null)
    if [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]; then
      ok "planted masked_softmax (mask value 0): lab06's final loss moves ($a -> $b)"
    else
      bad "planted masked_softmax: lab06's final loss '$b' is the unplanted '$a': the student's masked_softmax is not on lab06's path"
    fi
  fi
  cp solutions/lab02/masked_softmax.c "$ms"
  # plant FILE SED WHAT KEYS...: the planted copy of an exercise must move one of lab06's summary
  # KEYS (each a JSON path a/b/c) from the unplanted student run's
  plant() {
    local rel=$1 f="$w/labs/$1" sed=$2 what=$3
    shift 3
    cp "solutions/$rel" "$f" && sed -i "$sed" "$f"
    if ! grep -q planted "$f"; then
      bad "could not plant the bug in $f (the solution changed? update the sed)"
    elif ! mkl lab06 >"$tmp/plant-build.log" 2>&1; then
      bad "make VARIANT=labs lab06 with the planted $what failed:"; tail -5 "$tmp/plant-build.log"
    else
      rm -rf "$tmp/plant"
      "$w/lab06" --epochs 3 --heldout 5 --out "$tmp/plant" >"$tmp/plant.log" 2>&1
      if moved=$(python3 - "$tmp/stu-lab06/summary.json" "$tmp/plant/summary.json" "$@" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def get(d, path):
    for k in path.split('/'):
        d = d[int(k)] if isinstance(d, list) else d.get(k)
    return d
moved = [f"{k}: {get(a, k)!r} -> {get(b, k)!r}" for k in sys.argv[3:] if get(a, k) != get(b, k)]
print("; ".join(moved)[:300])
sys.exit(0 if moved else 1)
PY
      ); then
        ok "planted $what: lab06 moves ($moved)"
      else
        bad "planted $what: lab06's $* are the unplanted run's: the student's copy is not on lab06's path"
      fi
    fi
  }
  # the decoder block's cache: the keys and values are X alone (no concatenation with the
  # cache); training is untouched, token-by-token decoding no longer equals the full pass
  plant lab06/decoder_block.c 's|    kv = t_cat2(cache, X, 1);|    (void)cache; /* planted */|' \
    "decoder-block cache (no concatenation)" max_abs_diff_full_vs_incremental
  cp solutions/lab06/decoder_block.c "$w/labs/lab06/"
  # the greedy loop feeds <bos> at every step instead of the last argmax
  plant lab06/predict.c 's|    tok = best;|    tok = bos; /* planted */|' \
    "greedy loop (feeds <bos> every step)" translations/0/pred translations/1/pred \
    translations/2/pred translations/3/pred heldout_ngram_precisions
  cp solutions/lab06/predict.c "$w/labs/lab06/"
fi

# the train step: the kit's batched step stood in for the student's after checking it; a step
# without clipping (the first batch's gradient norm is above 1) is told apart and trains
if [ $have_fra = yes ]; then
  if grep -q "^train step: the kit's batched step .*agrees with your seq2seq_train_step on 64 training pairs" "$tmp/stu-lab06.log"; then
    ok "lab06 VARIANT=labs: the kit's batched step agrees with the student's seq2seq_train_step (one line)"
  else
    bad "lab06 VARIANT=labs: no agreement line for seq2seq_train_step:"; grep -i 'train step' "$tmp/stu-lab06.log"
  fi
  cp solutions/lab02/masked_softmax.c "$w/labs/lab02/masked_softmax.c"
  st="$w/labs/lab03/train_step.c"
  sed -i 's|  if (s->clip > 0) grad_clipping(m->ps, s->clip);|  /* planted: no clipping */|' "$st"
  if ! grep -q planted "$st"; then
    bad "could not plant the bug in $st (the solution changed? update the sed)"
  elif ! mkl lab06 >"$tmp/plant-build.log" 2>&1; then
    bad "make VARIANT=labs lab06 with the planted train step failed:"; tail -5 "$tmp/plant-build.log"
  else
    "$w/lab06" --epochs 3 --heldout 5 --out "$tmp/plant-step" >"$tmp/plant-step.log" 2>&1
    a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["final_loss"])' "$tmp/stu-lab06/summary.json" 2>/dev/null)
    b=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["final_loss"])' "$tmp/plant-step/summary.json" 2>/dev/null)
    if [ "$(grep -c '^train step' "$tmp/plant-step.log")" = 1 ] &&
      grep -q "^train step: the kit's batched step differs from your seq2seq_train_step on 64 training pairs .*: training with yours" "$tmp/plant-step.log" &&
      [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]; then
      ok "planted train step (no clipping): lab06 says so in one line, trains with it, the final loss moves ($a -> $b)"
    else
      bad "planted train step: final loss '$b' vs '$a', or no one-line 'differs' message:"; grep -i 'train step' "$tmp/plant-step.log"
    fi
  fi
fi
# The kernel track on the same path: with --device cuda on the emulated device, every softmax of
# lab06 is the student's exercise 2.6 kernel (cuda/exercises.cu). The student build (solutions'
# kernels in labs/) must train to the CPU run's numbers, and a kernel planted in the student's
# copy (the row's max not combined across the lanes: each lane shifts by its own max) must move
# lab06's loss. One epoch: the emulator runs every thread on the CPU.
if [ $have_fra = yes ]; then
  ks="$w/labs/lab02/masked_softmax_kernel.cu"
  e6=(--epochs 1 --heldout 5)
  for f in solutions/lab*/*; do cp -p "$f" "$w/labs/${f#solutions/}"; done # undo the plants above
  if ! mkl lab06 build/emu-bin/lab06 >"$tmp/emu-build.log" 2>&1; then
    bad "make VARIANT=labs build/emu-bin/lab06 (the emulated device) failed:"; tail -5 "$tmp/emu-build.log"
  else
    "$w/lab06" "${e6[@]}" --out "$tmp/k-cpu" >"$tmp/k-cpu.log" 2>&1
    "$w/build/emu-bin/lab06" --device cuda "${e6[@]}" --out "$tmp/k-gpu" >"$tmp/k-gpu.log" 2>&1
    # one epoch of training: float rounding of sum orders, as tests/suites/cuda_labs.sh allows
    if python3 tests/tools/summary_diff.py "$tmp/k-cpu/summary.json" "$tmp/k-gpu/summary.json" 1e-3 >"$tmp/k.diff"; then
      ok "lab06 --device cuda (emulated), VARIANT=labs: the student's softmax kernel trains to the CPU run's numbers"
    else
      bad "lab06 --device cuda (emulated), VARIANT=labs differs from the CPU run:"; head -5 "$tmp/k.diff"; tail -3 "$tmp/k-gpu.log"
    fi
    sed -i 's|for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));|/* planted: no max shuffle */|' "$ks"
    if ! grep -q planted "$ks"; then
      bad "could not plant the bug in $ks (the solution changed? update the sed)"
    elif ! mkl build/emu-bin/lab06 >"$tmp/kplant-build.log" 2>&1; then
      bad "make VARIANT=labs build/emu-bin/lab06 with the planted kernel failed:"; tail -5 "$tmp/kplant-build.log"
    else
      "$w/build/emu-bin/lab06" --device cuda "${e6[@]}" --out "$tmp/k-plant" >"$tmp/k-plant.log" 2>&1
      a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["final_loss"])' "$tmp/k-gpu/summary.json" 2>/dev/null)
      b=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["final_loss"])' "$tmp/k-plant/summary.json" 2>/dev/null)
      if [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]; then
        ok "planted softmax kernel (no max shuffle): lab06 --device cuda's final loss moves ($a -> $b)"
      else
        bad "planted softmax kernel: lab06 --device cuda's final loss '$b' is the unplanted '$a': the student's kernel is not on lab06's --device cuda path"
      fi
    fi
  fi
fi
suite_end
