#!/usr/bin/env bash
# lab07_student: the student's code is the code that trains. In a copy of the tree, the
# solutions' exercise files are copied over the stubs in labs/ and lab07 is built with
# VARIANT=labs: a few steps must print the same losses as the solutions build (so the student's
# block, attention and embedding run on the default path, with nothing of the solutions' in
# it). Then a planted bug in the copied ViTBlock_forward (its attention residual dropped) must
# change the loss, and the lab must say in one line that the <cls>-only last block does not
# agree with it and run the student's block instead. Planted bugs in the copied ViTMLP_forward
# (ReLU for GELU) and ViT_head (no layer norm) must each change the loss too: the student's MLP
# and head are what trains, in every block and in the <cls>-only one (no fast path stands in
# for them, so there is no disagreement line).
# Run from the repository root: bash tests/suites/lab07_student.sh. Ends with "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin lab07_student
export AL_NO_GNUPLOT=1

suite_build lab07
args=(--steps 6 --show 1)
./lab07 "${args[@]}" --out "$tmp/sol" >"$tmp/sol.log" 2>&1
if grep -q 'Fashion-MNIST file .* not found' "$tmp/sol.log"; then
  skip "training runs: Fashion-MNIST not found (apt-get install dataset-fashion-mnist)"
  suite_end
  exit
fi
# the lines that hold numbers a run computes (not its timing)
losses() { grep -E '^(epoch|test image|parameters)' "$1" | sed 's/, [0-9.]* images\/sec//'; }
check "solutions build: an epoch line" grep -q '^epoch 1/1: train loss' "$tmp/sol.log"

w="$tmp/tree"
student_kit "$w"
mkl() { kit_make "$w" lab07; }
if ! mkl >"$tmp/labs-build.log" 2>&1; then
  bad "make VARIANT=labs lab07 with the solutions copied into labs/ failed:"
  tail -20 "$tmp/labs-build.log"
  suite_end
  exit 1
fi
ok "make VARIANT=labs lab07 (the solutions' exercises in labs/)"
# the copy runs from the repository root, so it finds the data where ./lab07 did
"$w/lab07" "${args[@]}" --out "$tmp/lab" >"$tmp/lab.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ -n "$(losses "$tmp/sol.log")" ] && diff <(losses "$tmp/sol.log") <(losses "$tmp/lab.log") >"$tmp/diff"; then
  ok "VARIANT=labs trains to the solutions' losses ($(losses "$tmp/lab.log" | grep '^epoch' | cut -c1-60))"
else
  bad "VARIANT=labs run (exit $rc) differs from the solutions':"
  head -10 "$tmp/diff"
fi
check "VARIANT=labs: no disagreement note for the solutions' block" bash -c "! grep -q 'note: ViTBlock_forward' '$tmp/lab.log'"

# the plant: ViTBlock_forward without its attention residual, in the student's copy only
blk="$w/labs/lab07/vit_block.c"
sed -i 's/^  X = t_add(X, A);$/  X = A; \/* planted *\//' "$blk"
if ! grep -q planted "$blk"; then
  bad "could not plant the bug in $blk (the solution changed? update the sed)"
elif ! mkl >"$tmp/plant-build.log" 2>&1; then
  bad "make VARIANT=labs lab07 with the planted bug failed"
  tail -5 "$tmp/plant-build.log"
else
  "$w/lab07" "${args[@]}" --out "$tmp/plant" >"$tmp/plant.log" 2>&1
  n=$(grep -c "note: ViTBlock_forward's <cls> row differs" "$tmp/plant.log")
  if [ "$n" = 1 ]; then ok "planted block: one line says the <cls>-only block disagrees"; else
    bad "planted block: $n disagreement lines, want 1"
  fi
  a=$(losses "$tmp/lab.log" | grep '^epoch')
  b=$(losses "$tmp/plant.log" | grep '^epoch')
  if [ -n "$b" ] && [ "$a" != "$b" ]; then ok "planted block: the loss changes ($(echo "$b" | cut -c1-60))"; else
    bad "planted block: the loss line '$b' is the unplanted one's: the student's block is not on the path"
  fi
fi

# plants in the MLP (7.4) and the head (7.5), one at a time, in the student's copy only
plant_changes_loss() { # name, file under labs/, sed expression
  local name=$1 f="$w/labs/$2" expr=$3
  cp "$f" "$tmp/$name.orig"
  sed -i "$expr" "$f"
  if cmp -s "$f" "$tmp/$name.orig"; then
    bad "could not plant '$name' in $f (the solution changed? update the sed)"
  elif ! mkl >"$tmp/$name-build.log" 2>&1; then
    bad "make VARIANT=labs lab07 with the planted $name failed"
    tail -5 "$tmp/$name-build.log"
  else
    "$w/lab07" "${args[@]}" --out "$tmp/$name" >"$tmp/$name.log" 2>&1
    local a b
    a=$(losses "$tmp/lab.log" | grep '^epoch')
    b=$(losses "$tmp/$name.log" | grep '^epoch')
    if [ -n "$b" ] && [ "$a" != "$b" ]; then ok "planted $name: the loss changes ($(echo "$b" | cut -c1-60))"; else
      bad "planted $name: the loss line '$b' is the unplanted one's: the student's code is not on the path"
    fi
    check "planted $name: no disagreement line (nothing stands in for it)" \
      bash -c "! grep -q 'note: ViTBlock_forward' '$tmp/$name.log'"
  fi
  cp "$tmp/$name.orig" "$f"
}
sed -i 's/^  X = A; \/\* planted \*\/$/  X = t_add(X, A);/' "$blk" # the block as it was
plant_changes_loss mlp_relu lab07/vit_mlp.c 's/t_gelu(A)/t_relu(A)/'
plant_changes_loss head_no_norm lab07/vit_head.c 's/LayerNorm_forward(&m->head_ln, Z)/Z/'
suite_end
