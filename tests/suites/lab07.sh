#!/usr/bin/env bash
# lab07 smoke run: builds ./lab07, trains a few batches of the default preset and of the book's
# preset (--steps), checks what it prints, summary.json and the figures' data; then damaged
# Fashion-MNIST files (built here) must give one clear error line, and bad flags clear errors.
# Run from the repository root: bash tests/suites/lab07.sh. Ends with "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin lab07
export AL_NO_GNUPLOT=1

suite_build lab07

# Probe the lab's own data search (--data-dir, $D2L_DATA_DIR, ./data/, the Debian package).
./lab07 --steps 1 --show 1 --out "$tmp/probe" >"$tmp/probe.log" 2>&1
if grep -q 'Fashion-MNIST file .* not found' "$tmp/probe.log"; then
  skip "training runs: Fashion-MNIST not found (apt-get install dataset-fashion-mnist)"
else
  # --- default preset, 30 batches
  ./lab07 --steps 30 --out "$tmp/run" >"$tmp/run.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then ok "./lab07 --steps 30 exits 0"; else
    bad "./lab07 --steps 30 exited $rc"
    tail -20 "$tmp/run.log"
  fi
  check "book check: patch embedding (4, 36, 512)" \
    grep -qx 'patch embedding of zeros (4, 3, 96, 96), patch 16, 512 hiddens: (4, 36, 512)' "$tmp/run.log"
  check "book check: ViT block keeps (2, 100, 24)" \
    grep -qx 'ViT block on ones (2, 100, 24): (2, 100, 24)' "$tmp/run.log"
  # 3200 patch projection + 64 <cls> + 1088 positions + 2 x 33216 per block + 778 head
  check "71562 parameters" grep -qx 'parameters: 71562' "$tmp/run.log"
  check "one epoch line" grep -q '^epoch 1/1: train loss [0-9.]*, val loss [0-9.]*, val acc 0\.[0-9]*' "$tmp/run.log"
  # after 30 SGD steps the model is well past chance (0.1) on the validation subset
  acc=$(sed -n 's/^epoch 1\/1: .*val acc \([0-9.]*\).*/\1/p' "$tmp/run.log")
  if [ -n "$acc" ] && awk -v a="$acc" 'BEGIN { exit !(a > 0.3) }'; then ok "val acc $acc > 0.3 after 30 steps"; else
    bad "val acc '$acc' after 30 steps"
  fi
  check "no NaN printed" bash -c "! grep -qi 'nan' '$tmp/run.log'"
  n=$(grep -c '^test image [0-9]: predicted ' "$tmp/run.log")
  if [ "$n" = 6 ]; then ok "6 prediction lines"; else bad "prediction lines: $n, want 6"; fi
  sum="$tmp/run/summary.json"
  if [ -s "$sum" ]; then ok "summary.json written"; else bad "no summary.json"; fi
  for key in preset train_loss val_loss val_acc images_per_sec peak_rss_kb; do
    grep -q "\"$key\":" "$sum" 2>/dev/null && ok "summary.json has \"$key\"" ||
      bad "summary.json lacks \"$key\""
  done
  if tr -d ' \n' <"$sum" | grep -q '"preset":"cpu"'; then ok 'summary preset "cpu"'; else bad "summary preset"; fi
  if tr -d ' \n' <"$sum" | grep -q '"val_acc":\[[0-9.]*\]'; then ok "summary val_acc has 1 entry"; else
    bad "summary val_acc"
  fi
  for fig in vit_training predictions cls_attention; do
    if [ -s "$tmp/run/$fig.dat" ] && [ -s "$tmp/run/$fig.gp" ]; then ok "figure data $fig"; else
      bad "figure $fig.dat/.gp missing"
    fi
  done

  # --- the book's preset runs (2 batches of 96x96 images) and mean pooling
  ./lab07 --preset d2l --steps 2 --batch-size 32 --show 2 --out "$tmp/d2l" >"$tmp/d2l.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && grep -q '^preset d2l: 96x96 images, patch 16 (36 patches + <cls>), 512 hiddens' "$tmp/d2l.log"; then
    ok "--preset d2l --steps 2 runs"
  else
    bad "--preset d2l exited $rc"
    tail -5 "$tmp/d2l.log"
  fi
  check "--preset d2l summary" grep -q '"preset": *"d2l"' "$tmp/d2l/summary.json"
  ./lab07 --steps 3 --mean-pool --img-size 14 --out "$tmp/mp" >"$tmp/mp.log" 2>&1
  if [ $? -eq 0 ] && grep -q 'mean pooling' "$tmp/mp.log" && grep -q '14x14 images, patch 7 (4 patches' "$tmp/mp.log"; then
    ok "--mean-pool --img-size 14 runs"
  else
    bad "--mean-pool --img-size 14"
    tail -5 "$tmp/mp.log"
  fi
  ./lab07 --epochs 0 --out "$tmp/e0" >"$tmp/e0.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && grep -q '"train_loss": \[\]' "$tmp/e0/summary.json"; then
    ok "--epochs 0 trains nothing (empty train_loss)"
  else bad "--epochs 0: exit $rc"; fi
fi

# --- damaged data: one error line naming the file, exit 1, never a crash
PY=$(command -v /usr/bin/python3 || command -v python3 || true)
mk() { # dir, images magic (hex), n images, n labels, bytes cut from the images payload
  [ -n "$PY" ] || return 1
  "$PY" - "$@" <<'EOF'
import gzip, struct, sys
d, magic, ni, nl, drop = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
img = struct.pack(">IIII", magic, ni, 28, 28) + bytes(ni * 784 - drop)
lab = struct.pack(">II", 0x801, nl) + bytes(nl)
for split in ("train", "t10k"):
    with gzip.open("%s/%s-images-idx3-ubyte.gz" % (d, split), "wb") as f:
        f.write(img)
    with gzip.open("%s/%s-labels-idx1-ubyte.gz" % (d, split), "wb") as f:
        f.write(lab)
EOF
}
bad_data() { # name, expected substring, mk args...
  local name=$1 sub=$2
  shift 2
  local d="$tmp/data_$name"
  mkdir -p "$d"
  if ! mk "$d" "$@"; then bad "$name: could not build the test files (no python3)"; return; fi
  ./lab07 --data-dir "$d" --steps 1 --out "$tmp/o_$name" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  local lines
  lines=$(wc -l <"$tmp/$name.err")
  if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] && grep -qF -- "$sub" "$tmp/$name.err" &&
    grep -q "$d/train-" "$tmp/$name.err"; then
    ok "$name: clear error ($(cut -c1-90 "$tmp/$name.err"))"
  else
    bad "$name: exit $rc, $lines stderr lines: $(head -2 "$tmp/$name.err")"
  fi
}
bad_data wrong_magic "magic" 0x0000080a 3 3 0
bad_data truncated "truncated IDX data" 0x00000803 3 3 100
bad_data count_mismatch "2 labels, but" 0x00000803 3 2 0

./lab07 --preset nope --out "$tmp/bad" >"$tmp/bad.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "unknown --preset 'nope'" "$tmp/bad.log"; then ok "--preset nope rejected"; else
  bad "--preset nope: exit $rc"
fi
./lab07 --img-size 30 --out "$tmp/bad" >"$tmp/bad.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q 'must be a multiple of the patch size 7' "$tmp/bad.log"; then ok "--img-size 30 rejected"; else
  bad "--img-size 30: exit $rc"
fi
check "--help exits 0" ./lab07 --help

suite_end
