#!/usr/bin/env bash
# cuda_labs: every lab with --device cuda, its kernels running in the CUDA emulator
# (build/emu-bin/labNN: the same lab, linked with the emulated CUDA backend), against the same
# run on the CPU: summary.json must agree (tests/tools/summary_diff.py: numbers within a relative
# tolerance, strings such as translations equal), and the device must be recorded. Short runs:
# the emulator computes every kernel on the CPU, thread by thread.
. "$(dirname "$0")/../suite_lib.sh" && suite_begin cuda_labs
export AL_NO_GNUPLOT=1
export AL_CHECK_HOST_COPIES=1 # a stale host copy of an index tensor stops the run (tensor.c)
VARIANT=${VARIANT:-solutions}
if [ "$VARIANT" != solutions ]; then
  skip "the labs' exercises are stubs in this build (VARIANT=$VARIANT)"
  suite_end
  exit 0
fi
for l in 01 02 03 04 05 06 07; do suite_build "build/emu-bin/lab$l" "the emulated-CUDA lab$l"; done
suite_build labs-all "the labs"

# The student's kernels train lab06: in a copy of the tree the solutions' exercise files (the
# kernels of labs/*/*.cu with them) are copied over the stubs, lab06 is built for the emulated
# device with VARIANT=labs, and one epoch must match the CPU's. Then a planted bug in the copy's
# layer norm kernel (exercise 6.7: the variance divided by D - 1, the unbiased estimate) must
# change the run: the student's kernel is the one that runs.
student_layer_norm() {
  local w=$tmp/student args=(--epochs 1 --no-heldout --translate "i lost .")
  student_kit "$w"
  # the kit's emulated objects come along (the same sources, times kept): only labs/ compiles
  cp -a build/emu build/emu-flags-*.stamp "$w/build/" 2>/dev/null
  if ! kit_make "$w" build/emu-bin/lab06 >"$tmp/student-build.log" 2>&1; then
    bad "make VARIANT=labs build/emu-bin/lab06 with the solutions copied into labs/ failed:"
    tail -10 "$tmp/student-build.log"; return
  fi
  ./lab06 "${args[@]}" --out "$tmp/st.cpu" >"$tmp/st.cpu.log" 2>&1
  "$w/build/emu-bin/lab06" --device cuda "${args[@]}" --out "$tmp/st.cuda" >"$tmp/st.cuda.log" 2>&1
  if python3 tests/tools/summary_diff.py "$tmp/st.cpu/summary.json" "$tmp/st.cuda/summary.json" \
    1e-3 >"$tmp/st.diff" && ! grep -q 'note: until exercise' "$tmp/st.cuda.log"; then
    ok "VARIANT=labs lab06 --device cuda (emulated, the student's kernels) matches the CPU run"
  else
    bad "VARIANT=labs lab06 --device cuda (the student's kernels) differs from the CPU run:"
    head -5 "$tmp/st.diff"; grep 'note: until exercise' "$tmp/st.cuda.log"
  fi
  local k=$w/labs/lab06/layer_norm_kernel.cu
  sed -i 's|block_reduce_sum(q, red) / (float)D + eps|block_reduce_sum(q, red) / (float)(D - 1) + eps /* planted */|' "$k"
  if ! grep -q planted "$k"; then
    bad "could not plant the bug in $k (the solution changed? update the sed)"; return
  fi
  if ! kit_make "$w" build/emu-bin/lab06 >"$tmp/student-build.log" 2>&1; then
    bad "make with the planted layer norm failed"; tail -5 "$tmp/student-build.log"; return
  fi
  "$w/build/emu-bin/lab06" --device cuda "${args[@]}" --out "$tmp/st.plant" >"$tmp/st.plant.log" 2>&1
  if python3 tests/tools/summary_diff.py "$tmp/st.cpu/summary.json" "$tmp/st.plant/summary.json" \
    1e-3 >"$tmp/st.plant.diff"; then
    bad "a planted bug in the student's layer norm kernel (variance / (D - 1)) did not change the run"
  else
    ok "a planted bug in the student's layer norm kernel changes the run ($(head -1 "$tmp/st.plant.diff" | cut -c1-80))"
  fi
}

suite_data

# compare NAME REL FLAGS...: the lab on the CPU and on the emulated GPU, summaries compared
compare() {
  local name=$1 rel=$2 lab=$3
  shift 3
  local c="$tmp/$name.cpu" g="$tmp/$name.cuda"
  if ! ./"$lab" "$@" --out "$c" >"$c.log" 2>&1; then
    bad "$name: the CPU run failed:"; tail -5 "$c.log"; return
  fi
  local t0=$SECONDS
  if ! build/emu-bin/"$lab" --device cuda "$@" --out "$g" >"$g.log" 2>&1; then
    bad "$name --device cuda (emulated) failed:"; tail -5 "$g.log"; return
  fi
  if ! grep -q '"device": "cuda"' "$g/summary.json"; then
    bad "$name --device cuda: summary.json does not record the device"; return
  fi
  if python3 tests/tools/summary_diff.py "$c/summary.json" "$g/summary.json" "$rel" >"$tmp/$name.diff"; then
    ok "$name --device cuda (emulated, $((SECONDS - t0))s) matches the CPU run (rel $rel)"
  else
    bad "$name --device cuda differs from the CPU run:"; cat "$tmp/$name.diff"
  fi
}

# Tolerances: one forward is float rounding apart (1e-4); training compounds the differences
# of sum order (GPU trees vs CPU loops) over every step, so trained runs get 1e-3 of each value.
compare lab01 1e-3 lab01 --epochs 5
compare lab02 1e-4 lab02
compare lab04 1e-4 lab04 --no-bench
# lab04's table of the permute kernels' counters (exercises 4.4, 4.5): with the solutions the
# measured rows ("yours") equal the recorded reference rows, and the chapter quotes the table
# as the run prints it
cols() { awk '{print $1, $2, $3, $4, $(NF - 3), $(NF - 2), $(NF - 1), $NF}'; }
log=$tmp/lab04.cuda.log
for k in 4.4 4.5; do
  if [ -n "$(grep " $k yours" "$log")" ] &&
    diff <(grep " $k yours" "$log" | cols) <(grep " $k reference" "$log" | cols) >"$tmp/t.diff"; then
    ok "lab04 --device cuda: exercise $k's measured counters are the recorded reference's"
  else
    bad "lab04 --device cuda: exercise $k's counters differ from the reference rows in lab04.c:"
    cat "$tmp/t.diff"
  fi
done
missing=$(sed -n '/^```text$/,/^```$/p' chapters/04_multihead_attention/lab04.c | sed '1d;$d' |
  while IFS= read -r l; do grep -qxF -- "$l" "$log" || echo "$l"; done)
if [ -z "$missing" ] && grep -q '^```text$' chapters/04_multihead_attention/lab04.c; then
  ok "lab04's chapter quotes the counter table as the run prints it"
else
  bad "lab04's chapter quotes lines the run does not print:"; echo "$missing"
fi
compare lab05 1e-4 lab05
if [ $have_fra = yes ]; then
  compare lab03 1e-3 lab03 --epochs 2 --heldout 5 --translate "i lost ." --save "$tmp/lab03.ckpt"
  compare lab03-lstm-dot 1e-3 lab03 --rnn lstm --attention dot --no-compare --epochs 1 --heldout 5
  compare lab06 1e-3 lab06 --epochs 2 --heldout 5 --translate "i lost ."
  student_layer_norm
  # a checkpoint written on the CPU loads on the device and translates the same
  if [ -f "$tmp/lab03.ckpt" ]; then
    compare lab03-load 1e-4 lab03 --load "$tmp/lab03.ckpt" --heldout 5 --translate "he's calm ."
  fi
else
  skip "lab03, lab06: fra-eng.zip not found (make data)"
fi
if [ $have_mnist = yes ]; then
  compare lab07 1e-3 lab07 --epochs 1 --steps 3
else
  skip "lab07: Fashion-MNIST not installed (make deps: dataset-fashion-mnist)"
fi

# The kernel track: with VARIANT=labs the student's kernels are what --device cuda runs
# (cuda/exercises.cu). A copy of the kit whose labs/ hold the solutions (student_kit; the
# emulated kernels' objects come along, times kept): lab05 on the emulated device matches the
# CPU run; the student's kernel planted wrong changes that run (it stops: the device's table
# disagrees with exercise 5.1's host table, t_positional_encoding); the kernel's stub put back,
# the run uses the kit's kernel, says so once, and matches again.
k=$tmp/kit
student_kit "$k"
cp -a build/emu build/emu-flags-*.stamp "$k/build/" 2>/dev/null
kit_lab05() { # NAME: build the kit's lab05 and its emulated twin, run both; 0 when both ran
  kit_make "$k" lab05 build/emu-bin/lab05 >"$tmp/$1.build.log" 2>&1 || {
    bad "$1: the student kit does not build:"; tail -n 10 "$tmp/$1.build.log"; return 2; }
  (cd "$k" && ./lab05 --out "$tmp/$1.cpu" >"$tmp/$1.cpu.log" 2>&1) || {
    bad "$1: the CPU run failed:"; tail -n 5 "$tmp/$1.cpu.log"; return 2; }
  # grids capped at 2 blocks: the student's and the kit's grid-stride loops take many trips
  (cd "$k" && AL_CUDA_EMU_GRID_CAP=2 build/emu-bin/lab05 --device cuda --out "$tmp/$1.cuda" \
    >"$tmp/$1.cuda.log" 2>&1)
}
same_as_cpu() { python3 tests/tools/summary_diff.py "$tmp/$1.cpu/summary.json" "$tmp/$1.cuda/summary.json" 1e-4; }
kit_lab05 student; rc=$?
if [ $rc -ne 2 ]; then
  check "student's kernel (VARIANT=labs, 5.2 done): lab05 --device cuda runs and matches the CPU run" \
    eval '[ $rc -eq 0 ] && same_as_cpu student'
  check "student's kernel: no fallback note" eval '! grep -q "kit.s own kernel" "$tmp/student.cuda.log"'
  # PLANT: sine and cosine swapped in the student's kernel
  sed -i 's/P\[e\] = (c & 1) ? cosf(x) : sinf(x);/P[e] = (c \& 1) ? sinf(x) : cosf(x);/' \
    "$k/labs/lab05/posenc_kernel.cu"
  if ! grep -q '? sinf(x) : cosf(x)' "$k/labs/lab05/posenc_kernel.cu"; then
    bad "the plant in the student's kernel did not apply"
  else
    kit_lab05 planted; rc=$?
    [ $rc -eq 2 ] || check "student's kernel planted wrong: the --device cuda run stops, naming exercise 5.2" \
      eval '[ $rc -ne 0 ] && grep -q "positional-encoding kernel (exercise 5.2" "$tmp/planted.cuda.log"'
  fi
  cp labs/lab05/posenc_kernel.cu "$k/labs/lab05/" # the stub
  kit_lab05 stub; rc=$?
  [ $rc -eq 2 ] || check "kernel 5.2 a stub: --device cuda uses the kit's kernel, says so once, matches the CPU run" \
    eval '[ $rc -eq 0 ] && [ "$(grep -c "until exercise 5.2 is done" "$tmp/stub.cuda.log")" = 1 ] && same_as_cpu stub'
fi
suite_end
