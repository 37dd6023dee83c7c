#!/usr/bin/env bash
# cuda_step: a training step on the CUDA device waits for it once. lab06 and lab07 at both
# presets run a few steps with --device cuda on the emulated device (build/emu-bin/labNN), which
# prints one line per step (cuda/backend.cu, cu_step_end): launches, host<->device copies and
# host waits, every blocking call counted by the emulator (cuda/emu.cpp: synchronous copies,
# copies to or from pageable memory, stream and device synchronizations, frees). Held to:
#   - at most 1 host wait per step (the read of the step's losses, after the last backward);
#   - at most 1 copy to the device per part of the step (the part's batch, packed in one block;
#     constants such as the positional-encoding table are sent once and counted apart).
# The launches a step makes are printed beside (cuda/README.md states them).
# Step 1 is left out: it also sends the model (parameters, one copy each) and starts the arenas.
# Short runs: the emulator computes every kernel on the CPU. CUDA_STEP_ONLY=NAME runs only the
# cases whose name contains NAME (lab07-d2l, ...).
. "$(dirname "$0")/../suite_lib.sh" && suite_begin cuda_step
export AL_NO_GNUPLOT=1
VARIANT=${VARIANT:-solutions}
if [ "$VARIANT" != solutions ]; then
  skip "the labs' exercises are stubs in this build (VARIANT=$VARIANT)"
  suite_end
  exit 0
fi
suite_build build/emu-bin/lab06 "the emulated-CUDA lab06"
suite_build build/emu-bin/lab07 "the emulated-CUDA lab07"

suite_data

# steps NAME PARTS LAB FLAGS...: run the lab on the emulated device; every step after the first
# must wait at most once and send at most PARTS copies of its own
steps() {
  local name=$1 parts=$2 lab=$3
  shift 3
  [ -n "${CUDA_STEP_ONLY:-}" ] && [[ $name != *"$CUDA_STEP_ONLY"* ]] && return # one case
  local log="$tmp/$name.log"
  if ! build/emu-bin/"$lab" --device cuda "$@" --out "$tmp/$name" >"$log" 2>&1; then
    bad "$name --device cuda (emulated) failed:"; tail -5 "$log"; return
  fi
  if python3 - "$log" "$parts" >"$tmp/$name.check" 2>&1 <<'PY'; then
import re, sys
log, parts = sys.argv[1], int(sys.argv[2])
pat = re.compile(r"cuda step (\d+): (\d+) launches; copies: (\d+) to the device \([0-9.]+ KB; "
                 r"(\d+) of them constants, sent once\), (\d+) to the host \([0-9]+ B\); "
                 r"(\d+) host waits")
rows = [tuple(map(int, m.groups())) for m in map(pat.match, open(log)) if m]
steady = [r for r in rows if r[0] > 1]
if not steady:
    sys.exit("no 'cuda step N' lines after the first step in the log")
bad = []
for step, launches, to_dev, consts, to_host, waits in steady:
    if waits > 1:
        bad.append(f"step {step}: {waits} host waits (at most 1)")
    if to_dev - consts > parts:
        bad.append(f"step {step}: {to_dev - consts} copies to the device (at most {parts}, one "
                   f"per part)")
if bad:
    sys.exit("\n".join(bad))
launches = sorted({r[1] for r in steady})
print(f"{len(steady)} steps: at most {max(r[5] for r in steady)} host wait(s), "
      f"{max(r[2] - r[3] for r in steady)} copies to the device, "
      f"{launches[-1]} launches a step")
PY
    ok "$name: $(cat "$tmp/$name.check")"
  else
    bad "$name: a step waits or copies more than it may:"; cat "$tmp/$name.check"
  fi
}

# Parts: lab06 cuts a batch of 64 rows or more in two by length (common/step.c), lab07's CPU
# preset trains in two halves (chapters/07_vit/vit_step.c), the book's ViT in one.
if [ $have_fra = yes ]; then
  steps lab06-d2l-1.0 2 lab06 --preset d2l-1.0 --epochs 1 --no-heldout
  steps lab06-d2l-0.17 2 lab06 --epochs 1 --no-heldout
else
  skip "lab06: fra-eng.zip not found (make data)"
fi
if [ $have_mnist = yes ]; then
  steps lab07-cpu 2 lab07 --epochs 1 --steps 3 --show 1
  # the book's model (96 x 96, 512 hiddens) on batches of 2: its step, at the emulator's pace
  steps lab07-d2l 1 lab07 --preset d2l --batch-size 2 --epochs 1 --steps 3 --show 1
else
  skip "lab07: Fashion-MNIST not installed (make deps: dataset-fashion-mnist)"
fi
suite_end
