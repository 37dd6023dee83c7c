#!/usr/bin/env bash
# gpu_report.sh [--no-gpu] [--quick] [OUT.md] — `make gpu-report`: one command that checks and
# times the CUDA backend on the card this machine has, and writes one Markdown report
# (default build/gpu-report.md):
#   1. the machine: card, driver, toolkit, CPU, commit
#   2. every op's kernels against the CPU op on the card (cuda_check)
#   3. compute-sanitizer memcheck, racecheck, synccheck and initcheck over cuda_check and a short
#      run of every lab
#   4. every lab's --device cuda run against its CPU run (summary.json, tests/tools/summary_diff.py)
#   5. the presets' training time on the card beside the book's models in PyTorch on the same card
#   6. ncu: the three kernels of a lab07 book-preset step with the most GPU time
#   7. without a GPU too: the kernels in the emulator (cuda_check_emu)
# Every part that needs a GPU says "skip: no GPU (why)" where there is none, and the rest runs.
# --no-gpu takes that path on any machine (make test checks it); --quick shortens the runs.
# Budget: about 25 minutes of a card's time; every run has its own timeout.
set -u
cd "$(dirname "$0")/../.."
NO_GPU=0 QUICK=0 OUT=build/gpu-report.md
for a in "$@"; do
  case $a in
  --no-gpu) NO_GPU=1 ;;
  --quick) QUICK=1 ;;
  -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "gpu_report.sh: unknown option '$a' (--no-gpu, --quick, OUT.md)" >&2; exit 2 ;;
  *) OUT=$a ;;
  esac
done
mkdir -p "$(dirname "$OUT")" || exit 2
B=build/gpu # its own tree: the kernels with -lineinfo, so sanitizer reports name source lines
V=$B/solutions
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu_report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export AL_NO_GNUPLOT=1
: >"$OUT"
say() { printf '%s\n' "$*" >>"$OUT"; printf '%s\n' "$*"; }
block() { say '```'; sed -e 's/\r$//' "$1" | tail -n "${2:-40}" >>"$OUT"; tail -n "${2:-40}" "$1"; say '```'; }

# Is there a card? nvidia-smi must list one and the nvcc build must find it.
why_no_gpu=""
if [ $NO_GPU = 1 ]; then
  why_no_gpu="--no-gpu was given"
elif ! command -v nvidia-smi >/dev/null 2>&1; then
  why_no_gpu="no nvidia-smi on the PATH (no NVIDIA driver)"
elif ! nvidia-smi -L >"$tmp/smi" 2>&1 || ! grep -q '^GPU ' "$tmp/smi"; then
  why_no_gpu="nvidia-smi lists no GPU: $(head -1 "$tmp/smi")"
elif [ -z "$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)" ]; then
  why_no_gpu="no nvcc: the kernels cannot be built"
fi
gpu() { [ -z "$why_no_gpu" ]; }
skip_part() { say ""; say "skip: no GPU ($why_no_gpu)"; }

say "# GPU report — attention-lab"
say ""
say "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
say "- commit: $(git describe --always --dirty 2>/dev/null || echo unknown)"
say "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
if gpu; then
  say "- card: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1) (name, memory, driver)"
  say "- toolkit: $( (command -v nvcc >/dev/null && nvcc --version || /usr/local/cuda/bin/nvcc --version) | tail -2 | head -1)"
else
  say "- card: none ($why_no_gpu)"
fi

# The build: the kernels with -lineinfo in build/gpu (the CPU-only parts need none of it).
build_ok=0
if gpu; then
  say ""
  say "## Build"
  if timeout 900 make -j"$(nproc)" B=$B NVCC_LINEINFO=1 \
    $(for l in 01 02 03 04 05 06 07; do echo $B/bin/lab$l; done) $V/cuda_check \
    >"$tmp/build.log" 2>&1; then
    build_ok=1
    say "built in $B with -lineinfo"
  else
    say "the build failed; the GPU parts below are skipped:"
    block "$tmp/build.log" 30
    why_no_gpu="the nvcc build failed"
  fi
fi

# part 2
say ""
say "## Every op on the card against the CPU (cuda_check)"
if gpu; then
  timeout 600 $V/cuda_check --time >"$tmp/check.log" 2>&1
  say "exit $?: $(grep -E '^[0-9]+ passed' "$tmp/check.log" | tail -1)"
  grep -E '^FAIL' "$tmp/check.log" >"$tmp/fails" && block "$tmp/fails" 40
  block "$tmp/check.log" 60
else
  skip_part
fi

# The short runs every GPU part uses (the cuda_labs suite's, so they are known to be comparable).
LAB_RUNS=(
  "lab01 --epochs 5"
  "lab02"
  "lab03 --epochs 2 --heldout 5"
  "lab04 --no-bench"
  "lab05"
  "lab06 --epochs 2 --heldout 5"
  "lab07 --epochs 1 --steps 3"
)

# part 3
say ""
say "## compute-sanitizer"
if gpu && command -v compute-sanitizer >/dev/null 2>&1; then
  say ""
  say "| program | memcheck | racecheck | synccheck | initcheck |"
  say "|---|---|---|---|---|"
  runs=("cuda_check" "${LAB_RUNS[@]}")
  [ $QUICK = 1 ] && runs=("cuda_check" "lab02" "lab05")
  for r in "${runs[@]}"; do
    read -r prog args <<<"$r"
    if [ "$prog" = cuda_check ]; then cmd=($V/cuda_check); else cmd=($B/bin/$prog --device cuda $args --out "$tmp/san-$prog"); fi
    row="| \`$r\` |"
    for tool in memcheck racecheck synccheck initcheck; do
      log="$tmp/san-$prog-$tool.log"
      timeout 600 compute-sanitizer --tool $tool --error-exitcode 99 "${cmd[@]}" >"$log" 2>&1
      rc=$?
      n=$(sed -n 's/^========= ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" | tail -1)
      case $rc in
      0) row="$row ${n:-0} errors |" ;;
      124) row="$row timed out |" ;;
      *) row="$row **exit $rc, ${n:-?} errors** |"; cp "$log" "$tmp/san-bad-$prog-$tool.log" ;;
      esac
    done
    say "$row"
  done
  for f in "$tmp"/san-bad-*.log; do
    [ -e "$f" ] || continue
    say ""
    say "$(basename "$f" .log):"
    grep -E '^=========' "$f" | head -40 >"$tmp/excerpt"
    block "$tmp/excerpt" 40
  done
elif gpu; then
  say ""
  say "skip: no compute-sanitizer on the PATH"
else
  skip_part
fi

# part 4
say ""
say "## Every lab on the card against its CPU run"
if gpu; then
  say ""
  say "| run | CPU vs card (summary.json, relative tolerance) |"
  say "|---|---|"
  for r in "${LAB_RUNS[@]}"; do
    read -r prog args <<<"$r"
    rel=1e-3
    case $prog in lab02 | lab04 | lab05) rel=1e-4 ;; esac
    c="$tmp/cmp-$prog.cpu" g="$tmp/cmp-$prog.cuda"
    if ! timeout 600 $B/bin/$prog $args --out "$c" >"$c.log" 2>&1; then
      say "| \`$r\` | the CPU run failed: $(tail -1 "$c.log") |"; continue
    fi
    if ! timeout 600 $B/bin/$prog --device cuda $args --out "$g" >"$g.log" 2>&1; then
      say "| \`$r\` | **the card's run failed**: $(tail -1 "$g.log") |"; continue
    fi
    if python3 tests/tools/summary_diff.py "$c/summary.json" "$g/summary.json" $rel >"$tmp/diff" 2>&1; then
      say "| \`$r\` | same within $rel |"
    else
      say "| \`$r\` | **differs**: $(head -3 "$tmp/diff" | tr '\n' ' ') |"
    fi
  done
else
  skip_part
fi

# part 5: the kit's s/epoch or images/s (summary.json) beside PyTorch's on the same card
kit_rate() { # LAB ARGS... -> "s/epoch" or "images/s" from its summary.json
  local lab=$1
  shift
  timeout 600 $B/bin/$lab --device cuda "$@" --out "$tmp/t-$lab" >"$tmp/t-$lab.log" 2>&1 || { echo "failed: $(tail -1 "$tmp/t-$lab.log")"; return; }
  python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
if "images_per_sec" in s: print("%.0f images/s" % s["images_per_sec"])
else: print("%.3f s/epoch" % s["seconds_per_epoch"])' "$tmp/t-$lab/summary.json" 2>&1 | tail -1
}
torch_rate() { # WORKLOAD -> PyTorch's figure on the card
  TORCH_DEVICE=cuda timeout 600 "$PY" tests/bench/torch_step_time.py "$1" 10 2>&1 |
    sed -n 's/.*, \([0-9.]*\) \(s\/epoch\|images\/sec\)$/\1 \2/p' | tail -1
}
say ""
say "## Training time on the card beside PyTorch on the same card"
if gpu; then
  have_torch=no
  for PY in python3 /usr/bin/python3; do # the first Python whose PyTorch sees the card
    "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null && { have_torch=yes; break; }
  done
  say ""
  say "| workload | kit, --device cuda | PyTorch (book's model), cuda |"
  say "|---|---|---|"
  e=10
  [ $QUICK = 1 ] && e=2
  while read -r name workload lab args; do
    k=$(kit_rate "$lab" $args)
    t="skip: no PyTorch with CUDA"
    [ $have_torch = yes ] && t=$(torch_rate "$workload")
    say "| $name | $k | ${t:-failed} |"
  done <<EOF
lab03-classic lab03-classic lab03 --epochs $e
lab03-d2l-1.0 lab03-d2l10 lab03 --preset d2l-1.0 --epochs $e
lab06-classic lab06-classic lab06 --epochs $e
lab06-d2l-1.0 lab06-d2l10 lab06 --preset d2l-1.0 --epochs $e
lab07-book lab07-d2l lab07 --preset d2l --steps $((e * 2))
EOF
else
  skip_part
fi

# part 6
say ""
say "## ncu: lab07 book preset, the three kernels with the most GPU time"
if gpu && command -v ncu >/dev/null 2>&1; then
  timeout 900 ncu --target-processes all --launch-skip 200 --launch-count 60 --csv \
    --section SpeedOfLight --metrics gpu__time_duration.sum \
    $B/bin/lab07 --device cuda --preset d2l --steps 3 --out "$tmp/ncu" >"$tmp/ncu.csv" 2>"$tmp/ncu.err"
  if python3 - "$tmp/ncu.csv" >"$tmp/ncu.md" 2>&1 <<'PY'
import csv, sys, collections
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if l.startswith('"'))]
t = collections.defaultdict(float); sol = {}
unit_ns = {"nsecond": 1, "usecond": 1e3, "msecond": 1e6, "second": 1e9}
for r in rows:
    name = r.get("Kernel Name", "?")
    if r.get("Metric Name") == "gpu__time_duration.sum":  # ncu scales the unit to the value
        t[name] += float(r["Metric Value"].replace(",", "")) * unit_ns[r.get("Metric Unit", "nsecond")]
    elif r.get("Metric Name") in ("Memory Throughput", "Compute (SM) Throughput"):
        sol.setdefault(name, {})[r["Metric Name"]] = r["Metric Value"]
print("| kernel | GPU time over the sampled launches (ns) | memory % of peak | SM % of peak |")
print("|---|---|---|---|")
for name, ns in sorted(t.items(), key=lambda kv: -kv[1])[:3]:
    s = sol.get(name, {})
    print(f"| `{name[:60]}` | {ns:.0f} | {s.get('Memory Throughput', '?')} | {s.get('Compute (SM) Throughput', '?')} |")
PY
  then
    cat "$tmp/ncu.md" >>"$OUT"; cat "$tmp/ncu.md"
  else
    say "ncu's output could not be read:"; block "$tmp/ncu.err" 20
  fi
elif gpu; then
  say ""
  say "skip: no ncu on the PATH"
else
  skip_part
fi

# part 7: needs no GPU
say ""
say "## The kernels in the emulator (no GPU needed)"
emu=build/solutions/cuda_check_emu
# a no-op when up to date; without the caller's make variables (B=, VARIANT=), which name
# another tree than $emu
if ! env -u MAKEFLAGS -u MFLAGS make -j"$(nproc)" $emu >"$tmp/emu-build.log" 2>&1; then
  say ""
  say "skip: the emulated build failed (make $emu):"
  block "$tmp/emu-build.log" 10
else
  timeout 900 $emu >"$tmp/emu.log" 2>&1
  rc=$?
  say ""
  say "exit $rc: $(grep -E '^[0-9]+ passed' "$tmp/emu.log" | tail -1)"
fi
echo "gpu-report: wrote $OUT"
