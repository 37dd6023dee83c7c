#!/usr/bin/env bash
# vs_torch.sh LAB_BIN BENCH_GEMM — the kit against the book's models in PyTorch, in one sitting
# (`make bench-vs-torch [ISA=avx2]`): for each workload of issues 14 and 17, the kit's run, then
# PyTorch's (tests/bench/torch_step_time.py), then the kit again, and the ratio of PyTorch's
# time to the kit's (best of the kit's two runs, so a neighbour's burst on the shared machine
# does not decide it). Seconds per epoch for the translation labs (an epoch: 10 steps of the
# classic presets, 4 of d2l-1.0, in both), images per second for the ViT. With ISA=avx2,
# PyTorch is pinned to its AVX2 kernels too (ATEN_CPU_CAPABILITY, OPENBLAS_CORETYPE), as an
# AVX2 laptop would run both. Needs Debian's python3-torch; says so and stops without it.
set -u
LAB_BIN=${1:?usage: vs_torch.sh LAB_BIN BENCH_GEMM}
BENCH_GEMM=${2:?usage: vs_torch.sh LAB_BIN BENCH_GEMM}
PY=/usr/bin/python3
if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "skip bench-vs-torch: no PyTorch for $PY (apt-get install python3-torch)"
  exit 0
fi
export AL_NO_GNUPLOT=1 OMP_WAIT_POLICY=PASSIVE
if [ "${ISA:-}" = avx2 ]; then
  export ATEN_CPU_CAPABILITY=avx2 OPENBLAS_CORETYPE=Haswell
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vs_torch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# kit_run NAME ARGS...: one run of the kit; prints "SECONDS_OF_TRAINING GFLOP/s IMAGES/s WARM"
# with WARM the rate after the first epoch (s/epoch) or step (images/s), from summary.json:
# PyTorch's figure is a median step after two warm-up steps, and the kit's first step pays for
# its arenas' first touch, so both columns are printed
kit_run() {
  local lab=$1
  shift
  "$LAB_BIN/$lab" --out "$tmp/$lab" "$@" >"$tmp/log" 2>&1 || {
    echo "bench-vs-torch: $LAB_BIN/$lab $* failed:" >&2
    tail -5 "$tmp/log" >&2
    return 1
  }
  local secs gfs ips
  secs=$(sed -n 's/^matrix products: .* in \([0-9.]*\) s of training, .*/\1/p' "$tmp/log" | tail -1)
  gfs=$(sed -n 's/^matrix products: .*, \([0-9.]*\) GFLOP\/s$/\1/p' "$tmp/log" | tail -1)
  ips=$(sed -n 's/.*: \([0-9.]*\) images\/sec on .*/\1/p' "$tmp/log" | tail -1)
  local warm
  warm=$("$PY" -c 'import json, sys
s = json.load(open(sys.argv[1]))
if "images_per_sec_after_first_step" in s:
    print(s["images_per_sec_after_first_step"] or "nan")
elif s.get("train_seconds_after_first_epoch") and s.get("epochs", 0) > 1:
    print(s["train_seconds_after_first_epoch"] / (s["epochs"] - 1))
else:
    print("nan")' "$tmp/$lab/summary.json" 2>/dev/null)
  echo "${secs:-nan} ${gfs:-nan} ${ips:-nan} ${warm:-nan}"
}

torch_run() { # prints PyTorch's s/epoch or images/sec
  "$PY" tests/bench/torch_step_time.py "$1" "$2" 2>&1 |
    sed -n 's/.*, \([0-9.]*\) \(s\/epoch\|images\/sec\)$/\1/p' | tail -1
}

# The FMA peak of both cores together, the best of three readings (a neighbour's job on the
# shared machine lowers one: one reading once gave 117 on 2 cores for 117 on 1). Still below
# 1.5x one core's: the second core was busy throughout; then 2x one core's is used, and said.
peak1=0 peak2=0
for _ in 1 2 3; do
  p=$("$BENCH_GEMM" --peak)
  p1=$(echo "$p" | sed -n 's/^peak \([0-9.]*\) GFLOP\/s on 1 thread.*/\1/p')
  p2=$(echo "$p" | sed -n 's/.*, \([0-9.]*\) on 2$/\1/p')
  peak1=$(awk -v a="$peak1" -v b="${p1:-0}" 'BEGIN { print (b > a ? b : a) }')
  peak2=$(awk -v a="$peak2" -v b="${p2:-0}" 'BEGIN { print (b > a ? b : a) }')
done
peak="FMA peak $peak1 GFLOP/s on 1 thread, $peak2 on 2 (best of 3 readings)"
if awk -v a="$peak1" -v b="$peak2" 'BEGIN { exit !(b < 1.5 * a) }'; then
  peak2=$(awk -v a="$peak1" 'BEGIN { print 2 * a }')
  peak="$peak; the second core was busy while it was read: percentages use 2 x $peak1"
fi
echo "kit: $LAB_BIN (${ISA:-native} build); PyTorch $("$PY" -c 'import torch; print(torch.__version__)') (2 threads); CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores"
echo "$peak"
printf '%-19s %15s %12s %7s  %-14s %7s  %s\n' workload kit PyTorch ratio "kit, warm" ratio \
  "kit's matrix products"

# row LABEL LAB EPOCHS_OR_0 TORCH_WORKLOAD TORCH_STEPS UNIT KIT_ARGS...
row() {
  local label=$1 lab=$2 epochs=$3 tw=$4 tsteps=$5 unit=$6
  shift 6
  local a b t
  a=$(kit_run "$lab" "$@") || return 1
  t=$(torch_run "$tw" "$tsteps")
  b=$(kit_run "$lab" "$@") || return 1
  awk -v a="$a" -v b="$b" -v t="${t:-nan}" -v e="$epochs" -v unit="$unit" -v label="$label" \
      -v peak="${peak2:-0}" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    if (unit == "s/epoch") {
      k = (x[1] < y[1] ? x[1] : y[1]) / e; r = t / k
      w = (x[4] < y[4] ? x[4] : y[4]); rw = t / w
    } else {
      k = (x[3] > y[3] ? x[3] : y[3]); r = k / t
      w = (x[4] > y[4] ? x[4] : y[4]); rw = w / t
    }
    g = x[2] > y[2] ? x[2] : y[2]
    pct = peak > 0 ? sprintf(" (%.0f%% of the 2-core peak)", 100 * g / peak) : ""
    fmt = k >= 1000 ? "%.0f" : "%.4g" # 14540 images/s, not 1.454e+04
    wfmt = w >= 1000 ? "%.0f" : "%.4g"
    printf "%-19s %15s %12s %6.2fx  %-14s %6.2fx  %.1f GFLOP/s%s\n", label,
           sprintf(fmt " %s", k, unit), sprintf(t >= 1000 ? "%.0f" : "%.4g", t), r,
           sprintf(wfmt, w), rw, g, pct
  }'
}

row "lab03 classic" lab03 60 lab03-classic 30 s/epoch --epochs 60 --heldout 0
row "lab06 classic" lab06 40 lab06-classic 30 s/epoch --epochs 40 --no-heldout
row "lab07 CPU preset" lab07 1 lab07-cpu 30 images/s --steps 150
row "lab07 book preset" lab07 1 lab07-d2l 6 images/s --preset d2l --steps 8
row "lab03 d2l-1.0" lab03 4 lab03-d2l10 8 s/epoch --preset d2l-1.0 --epochs 4 --heldout 0
row "lab06 d2l-1.0" lab06 4 lab06-d2l10 8 s/epoch --preset d2l-1.0 --epochs 4 --no-heldout
echo "(ratio: PyTorch's time over the kit's; the kit runs its presets' thread counts: one thread for the classic presets, every core for the rest)"
echo "(kit: over every epoch or step of its run; kit, warm: after the first epoch or step, as PyTorch's median step after two warm-up steps is)"
