#!/usr/bin/env bash
# cuda: every CUDA kernel against its CPU op (tests/cuda/cuda_check.c), four ways:
#   emu     the kernels of cuda/ built as host C++ against the emulator (cuda/emu.h)
#   asan    the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   tsan    the families whose kernels use barriers or warp shuffles (--sync) under
#           ThreadSanitizer: the emulator runs a block's threads as real threads
#   gpu     the nvcc build on a real GPU; "skip" where there is no device or no nvcc
# and every lab with --device cuda on the emulated device, against its CPU run ([labs]).
# Each program's own "ok/FAIL/skip" lines count here, one check each, so the CUDA test count
# is in make test's summary. Ends with "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin cuda
V=build/${VARIANT:-solutions}
suite_build cuda-check-build "make cuda-check-build (cuda_check emulated, under ASan and TSan, and the nvcc build)"

# run_check LABEL COMMAND...: run one cuda_check and fold its lines and counts into the suite's
run_check() {
  local label=$1
  shift
  "$@" >"$tmp/$label.log" 2>&1
  fold_check $? "$label" "$@"
}
# fold_check RC LABEL COMMAND...: the same for a run whose output is in $tmp/LABEL.log
fold_check() {
  local rc=$1 label=$2
  shift 2
  local log=$tmp/$label.log
  local line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
  # the program's checks, as this suite's (run_all.sh shows all but the ok lines)
  sed -nE "s/^(ok|FAIL|skip) (.*)$/\1 [$label] \2/p" "$log" |
    while read -r kind rest; do
      case $kind in
      ok) echo "ok   $suite_name: $rest" ;;
      FAIL) echo "FAIL $suite_name: $rest" ;;
      skip) echo "skip $suite_name: $rest" ;;
      esac
    done
  if [ -z "$line" ]; then
    bad "[$label] $* ended without its summary (exit $rc); the end of its output:"
    tail -25 "$log"
    return
  fi
  read -r p _ f _ s _ <<<"${line//,/}"
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + s))
  if [ "$rc" -ne 0 ] && [ "$f" = 0 ]; then
    bad "[$label] $* exited $rc with no failed check; the end of its output:"
    tail -25 "$log"
  elif [ "$f" != 0 ]; then # a sanitizer's report or a case's details: show them
    grep -vE '^(ok|skip|FAIL) |^[0-9]+ passed' "$log" | tail -40
  fi
}

run_check emu "$V/cuda_check_emu"
run_check asan env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  build/asan/cuda_check_emu

# ThreadSanitizer needs its fixed address layout; some kernels' mmap randomisation breaks it
# ("unexpected memory mapping"): then once more without address randomisation, else skip.
tsan_cant() { grep -qE 'ThreadSanitizer: (unexpected memory mapping|failed to allocate|CHECK failed)|FATAL: ThreadSanitizer' "$1"; }
export TSAN_OPTIONS=halt_on_error=1
tsan=(build/tsan/cuda_check_emu --sync)
"${tsan[@]}" >"$tmp/tsan.log" 2>&1
rc=$?
if tsan_cant "$tmp/tsan.log" && command -v setarch >/dev/null; then
  tsan=(setarch "$(uname -m)" -R "${tsan[@]}")
  "${tsan[@]}" >"$tmp/tsan.log" 2>&1
  rc=$?
fi
if tsan_cant "$tmp/tsan.log"; then
  skip "[tsan] ThreadSanitizer cannot run on this machine: $(grep -m1 ThreadSanitizer "$tmp/tsan.log")"
else
  fold_check $rc tsan "${tsan[@]}"
fi

# ---------------------------------------------------------------- every lab with --device cuda
# The labs linked with the emulated backend ($V/emu/labNN) run with --device cuda, short, and
# print what the CPU run prints: the same lines, numbers within float drift (timings, rates,
# paths and the device's name aside). Device memory is closed to the host in the emulator, so
# a lab that reads a device tensor without a copy crashes here. A checkpoint written on one
# device loads on the other and translates alike.
export AL_NO_GNUPLOT=1
# compare_runs CPU_LOG CUDA_LOG: 0 when alike; else prints the first difference
compare_runs() {
  python3 - "$1" "$2" <<'EOF'
import re, sys
skip = re.compile(r"GFLOP|RSS|training time|images in |s per epoch|^data: |^wrote |^\[figure|"
                  r"figures not rendered|written as \.dat|^loaded |^saved ")
mask = [(re.compile(r"[0-9.]+ (tokens|images)/sec"), "RATE"), (re.compile(r"[0-9.]+ ms\b"), "T ms"),
        (re.compile(r"\b(cpu|cuda)\b"), "DEV"), (re.compile(r"\(cuBLAS GEMM\)|\([A-Za-z]+ GEMM\)"), "(GEMM)"),
        (re.compile(r"/tmp/\S+"), "PATH")]
num = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
def lines(path):
    out = []
    for l in open(path, errors="replace").read().splitlines():
        if skip.search(l): continue
        for r, s in mask: l = r.sub(s, l)
        out.append(l)
    return out
a, b = lines(sys.argv[1]), lines(sys.argv[2])
if len(a) != len(b):
    print(f"{len(a)} lines on the cpu, {len(b)} on cuda"); sys.exit(1)
for x, y in zip(a, b):
    if num.sub("#", x) != num.sub("#", y):
        print(f"cpu: {x!r} / cuda: {y!r}"); sys.exit(1)
    for p, q in zip(num.findall(x), num.findall(y)):
        p, q = float(p), float(q)
        # printed to 3-4 decimals after a few float32 training steps summed in another order
        if abs(p - q) > 2e-3 + 2e-3 * abs(p):
            print(f"cpu: {x!r} / cuda: {y!r}"); sys.exit(1)
EOF
}
short_run() { # the flags that keep a lab's run short
  case $1 in
  lab03) echo --epochs 2 --heldout 0 ;;
  lab06) echo --epochs 2 --no-heldout ;;
  lab07) echo --steps 2 --show 2 ;;
  esac
}
fra=$(for d in "${D2L_DATA_DIR:-}" data ../shared/data; do
  [ -n "$d" ] && [ -f "$d/fra-eng.zip" ] && echo "$d" && break; done)
mnist=$( [ -f data/train-images-idx3-ubyte.gz ] || [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] && echo yes)
for l in $(ls chapters/*/lab[0-9][0-9].c | sed 's|.*/||; s|\.c$||'); do
  case $l in
  lab03 | lab06) if [ -z "$fra" ]; then
    skip "[labs] $l --device cuda: fra-eng.zip not found (make data)"
    continue
  fi ;;
  lab07) if [ -z "$mnist" ]; then
    skip "[labs] $l --device cuda: Fashion-MNIST not found (make deps)"
    continue
  fi ;;
  esac
  save=()
  case $l in lab03 | lab06) save=(--save "$tmp/$l-DEV.ckpt") ;; esac
  # shellcheck disable=SC2046
  "./$l" $(short_run $l) "${save[@]/DEV/cpu}" --out "$tmp/$l-cpu" >"$tmp/$l-cpu.log" 2>&1
  rc_cpu=$?
  # shellcheck disable=SC2046
  "$V/emu/$l" --device cuda $(short_run $l) "${save[@]/DEV/cuda}" --out "$tmp/$l-cuda" \
    >"$tmp/$l-cuda.log" 2>&1
  rc=$?
  if [ $rc_cpu != 0 ] || [ $rc != 0 ]; then
    bad "[labs] $l --device cuda: exit $rc (the cpu run: $rc_cpu):"
    tail -5 "$tmp/$l-cuda.log"
  elif ! grep -q '"device": *"cuda"' "$tmp/$l-cuda/summary.json"; then
    bad "[labs] $l --device cuda: summary.json does not say device cuda"
  elif why=$(compare_runs "$tmp/$l-cpu.log" "$tmp/$l-cuda.log"); then
    ok "[labs] $l --device cuda (emulated) prints what the cpu run prints"
  else
    bad "[labs] $l --device cuda differs from the cpu run: $why"
  fi
  [ ${#save[@]} = 0 ] && continue
  # the checkpoint of each device, loaded on the other, translates as on its own device
  for pair in "cuda cpu" "cpu cuda"; do
    read -r from to <<<"$pair"
    bin=./$l
    [ "$to" = cuda ] && bin=$V/emu/$l
    # shellcheck disable=SC2046
    "$bin" --device "$to" --load "$tmp/$l-$from.ckpt" $(short_run $l | sed 's/--epochs [0-9]*//') \
      --out "$tmp/$l-load" >"$tmp/$l-load.log" 2>&1
    rc=$?
    grep -E ' => |BLEU' "$tmp/$l-$from.log" >"$tmp/want.log"
    grep -E ' => |BLEU' "$tmp/$l-load.log" >"$tmp/got.log"
    if [ $rc = 0 ] && [ -s "$tmp/want.log" ] && why=$(compare_runs "$tmp/want.log" "$tmp/got.log"); then
      ok "[labs] $l: a checkpoint saved on $from loads on $to and translates alike"
    else
      bad "[labs] $l: the $from checkpoint on $to: exit $rc, ${why:-no translations}"
      tail -3 "$tmp/$l-load.log"
    fi
  done
done

# The nvcc build: on a GPU it checks every kernel for real; without one it says
# "skip cuda_check: no CUDA device (...)", a skip, never a pass.
if [ -x "$V/cuda_check" ]; then
  run_check gpu "$V/cuda_check"
else
  skip "[gpu] no nvcc build of the kernels (CPU-only: no nvcc found, or NO_CUDA=1): the real GPU check was not built"
fi
suite_end
