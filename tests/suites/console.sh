#!/usr/bin/env bash
# What a student sees on the console (issue 16): live progress in a pipe or a file, one
# throughput with its definition, --translate warnings, --data-dir and the data path printed,
# --help and flag errors alike across the seven labs, --save checked before training, the
# checkpoint fsync'ed before its rename. Ends with "N passed, N failed".
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin console
export AL_NO_GNUPLOT=1
LABS="lab01 lab02 lab03 lab04 lab05 lab06 lab07"
for l in $LABS; do suite_build "$l"; done
root=$PWD

# fra-eng.zip (labs 03, 06) and Fashion-MNIST (lab07) may be missing on a fresh machine
# A probe that fails for another reason than the missing file is a failure, not a skip.
have_fra=1
if ! ./lab03 --epochs 1 --heldout 0 --out "$tmp/probe" >"$tmp/probe.log" 2>&1; then
  have_fra=0
  if grep -q 'fra-eng.zip not found' "$tmp/probe.log"; then
    skip "fra-eng.zip not found (make data): the lab03/lab06 runs are not checked"
  else bad "lab03 probe run failed: $(tail -1 "$tmp/probe.log")"; fi
fi
have_mnist=1
if ! ./lab07 --steps 1 --show 1 --out "$tmp/probe7" >"$tmp/probe7.log" 2>&1; then
  have_mnist=0
  if grep -q 'Fashion-MNIST file .* not found' "$tmp/probe7.log"; then
    skip "Fashion-MNIST not found (make deps): lab07's data path is not checked"
  else bad "lab07 probe run failed: $(tail -1 "$tmp/probe7.log")"; fi
fi

# ---------------------------------------------------------------- live progress
# The lab trains "forever" with stdout in a file; we watch the file. Line-buffered output shows
# the first progress line on its own; block-buffered output shows nothing, then a 4 KiB block
# holding dozens of progress lines at once.
live_check() { # name, command...
  local name=$1
  shift
  : >"$tmp/live.log"
  "$@" >"$tmp/live.log" 2>&1 &
  local pid=$! n=0 waited=0
  while [ $waited -lt 600 ]; do # up to 60 s
    n=$(grep -c '^epoch [0-9]*/' "$tmp/live.log")
    [ "$n" -gt 0 ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
    waited=$((waited + 1))
  done
  local alive=0
  kill -0 $pid 2>/dev/null && alive=1
  kill $pid 2>/dev/null
  wait $pid 2>/dev/null
  if [ "$alive" = 1 ] && [ "$n" -ge 1 ] && [ "$n" -le 5 ]; then
    ok "$name: progress is live in a file (first line seen after $((waited / 10)) s, $n line(s))"
  else
    bad "$name: $n progress lines at first sight after $((waited / 10)) s (alive $alive)"
  fi
}
if [ $have_fra = 1 ]; then
  live_check "lab03" ./lab03 --epochs 1000000 --heldout 0 --out "$tmp/live3"
  live_check "lab06" ./lab06 --epochs 1000000 --no-heldout --out "$tmp/live6"
fi

# ---------------------------------------------------------------- one throughput
# The closing line, the last progress line and every other tokens/sec figure: one number, and
# its definition said once.
one_rate() { # name, log
  local name=$1 log=$2
  local rates
  rates=$(grep -o '[0-9][0-9.]* tokens/sec' "$log" | tail -2 | awk '{print $1}' | sort -u)
  local all
  all=$(grep -o '[0-9][0-9.]* tokens/sec' "$log" | wc -l)
  if [ "$(echo "$rates" | wc -l)" = 1 ] && grep -q '^(tokens/sec: target tokens, padding excluded' "$log" &&
    [ "$(grep -c 'tokens/sec over all epochs' "$log")" = 0 ]; then
    ok "$name: one throughput ($rates tokens/sec, $all mentions) with its definition"
  else
    bad "$name: throughputs '$(echo $rates)' / definition line missing"
    grep 'tokens/sec' "$log" | tail -3
  fi
}
if [ $have_fra = 1 ]; then
  ./lab06 --epochs 20 --no-heldout --out "$tmp/tp6" >"$tmp/tp6.log" 2>&1
  one_rate lab06 "$tmp/tp6.log"
  ./lab03 --epochs 20 --heldout 0 --out "$tmp/tp3" >"$tmp/tp3.log" 2>&1
  one_rate lab03 "$tmp/tp3.log"
fi
if [ $have_mnist = 1 ]; then
  # lab07: the epoch line and the closing line give the same images/sec, defined once
  log=$tmp/probe7.log
  r1=$(sed -n 's/^epoch 1\/1: .*, \([0-9.]*\) images\/sec.*/\1/p' "$log")
  r2=$(sed -n 's/^[0-9]* training images in .*: \([0-9.]*\) images\/sec on .*/\1/p' "$log")
  if [ -n "$r1" ] && [ "$r1" = "$r2" ] && grep -q '^(images/sec: training images per second' "$log"; then
    ok "lab07: one throughput ($r1 images/sec) with its definition"
  else bad "lab07: images/sec '$r1' on the epoch line, '$r2' at the end, definition $(grep -c '^(images/sec' "$log")"; fi
fi

# ---------------------------------------------------------------- --translate
if [ $have_fra = 1 ]; then
  ./lab03 --epochs 2 --heldout 0 --translate "xyzzy frobnicate ." --out "$tmp/tr" >"$tmp/tr.out" 2>"$tmp/tr.err"
  rc=$?
  if [ $rc = 0 ] && grep -q "^warning: lab03: --translate: 2 of 3 words are not in the source vocabulary.*'xyzzy', 'frobnicate'" "$tmp/tr.err" &&
    grep -q '^xyzzy frobnicate \. => ' "$tmp/tr.out"; then
    ok "--translate: unknown words are named"
  else bad "--translate unknown words: exit $rc: $(cat "$tmp/tr.err")"; fi
  long="i think it is time that we went home now because it is late ."
  ./lab06 --epochs 2 --no-heldout --translate "$long" --out "$tmp/tr" >"$tmp/tr.out" 2>"$tmp/tr.err"
  if grep -q 'the sentence is 16 tokens with <eos> but the model reads num_steps = 10: only the first 10 are translated' "$tmp/tr.err"; then
    ok "--translate: an over-long sentence says it is cut to num_steps"
  else bad "--translate over-long: $(cat "$tmp/tr.err")"; fi
  for s in "" "   "; do
    ./lab06 --epochs 50 --no-heldout --translate "$s" --out "$tmp/tr" >"$tmp/tr.out" 2>"$tmp/tr.err"
    rc=$?
    if [ $rc = 2 ] && grep -q '^error: lab06: --translate' "$tmp/tr.err" && ! grep -q '^epoch' "$tmp/tr.out"; then
      ok "--translate '$s': an error before training"
    else bad "--translate '$s': exit $rc, $(grep -c '^epoch' "$tmp/tr.out") epoch lines: $(cat "$tmp/tr.err")"; fi
  done
fi

# ---------------------------------------------------------------- data: named, never guessed
short_run() { # the flags that keep a lab's run short, should a bad flag not stop it
  case $1 in
  lab03) echo --epochs 1 --heldout 0 ;;
  lab06) echo --epochs 1 --no-heldout ;;
  lab07) echo --steps 1 --show 1 ;;
  esac
}
for l in $LABS; do
  # shellcheck disable=SC2046
  "./$l" --data-dir "$tmp/no/such/dir" $(short_run $l) --out "$tmp/dd" >"$tmp/dd.out" 2>"$tmp/dd.err"
  rc=$?
  if [ $rc = 2 ] && grep -q "^error: $l: --data-dir $tmp/no/such/dir: no such directory" "$tmp/dd.err" &&
    [ ! -s "$tmp/dd.out" ]; then ok "$l: a --data-dir that does not exist is an error"
  else bad "$l --data-dir missing: exit $rc: $(head -1 "$tmp/dd.err")"; fi
done
D2L_DATA_DIR="$tmp/none" ./lab07 --steps 1 --out "$tmp/dd" >"$tmp/dd.out" 2>"$tmp/dd.err"
rc=$?
if [ $rc = 2 ] && grep -q "D2L_DATA_DIR=$tmp/none: no such directory" "$tmp/dd.err"; then
  ok "a \$D2L_DATA_DIR that does not exist is an error"
else bad "D2L_DATA_DIR missing: exit $rc"; fi
if [ $have_fra = 1 ]; then
  if grep -q '^data: /.*/fra-eng\.zip$' "$tmp/probe.log"; then ok "lab03 prints the data file it reads"
  else bad "lab03 does not print its data file"; fi
  if grep -q '^data: /.*/fra-eng\.zip$' "$tmp/tp6.log"; then ok "lab06 prints the data file it reads"
  else bad "lab06 does not print its data file"; fi
fi
if [ $have_mnist = 1 ]; then
  n=$(grep -c '^data: /.*-idx[13]-ubyte\.gz$' "$tmp/probe7.log")
  if [ "$n" = 4 ]; then ok "lab07 prints the 4 data files it reads"; else bad "lab07 printed $n data files"; fi
fi

# ---------------------------------------------------------------- --help and flag errors
for l in $LABS; do
  "./$l" --help >"$tmp/help.txt" 2>&1
  twice=$(grep -c 'default.*default' "$tmp/help.txt")
  if [ "$twice" = 0 ]; then ok "$l --help: no default said twice"
  else bad "$l --help: $(grep 'default.*default' "$tmp/help.txt" | head -1)"; fi
  # a usage error and an error after parsing, both "error: labNN: ..."
  "./$l" --bogus >/dev/null 2>"$tmp/e1"
  # shellcheck disable=SC2046
  "./$l" $(short_run $l) --out /proc/al_no_such >/dev/null 2>"$tmp/e2"
  if head -1 "$tmp/e1" | grep -q "^error: $l: unknown flag '--bogus'" &&
    head -1 "$tmp/e2" | grep -q "^error: $l: cannot create the output directory"; then
    ok "$l: one error prefix ('error: $l: ')"
  else bad "$l error prefixes: '$(head -1 "$tmp/e1")' / '$(head -1 "$tmp/e2")'"; fi
done
for l in lab03 lab06 lab07; do
  ./$l --help >"$tmp/help.txt" 2>&1
  case $l in lab07) want="cpu (the default), d2l" ;; *) want="d2l-0.17 (the default), d2l-1.0" ;; esac
  if grep -q -- "--preset NAME .*one of $want" "$tmp/help.txt"; then ok "$l --help names its presets"
  else bad "$l --help: $(grep -- '--preset' "$tmp/help.txt")"; fi
  # shellcheck disable=SC2046
  ./$l --preset foo $(short_run $l) --out "$tmp/pf" >"$tmp/pf.out" 2>"$tmp/pf.err"
  rc=$?
  if [ $rc = 2 ] && grep -q "^error: $l: unknown --preset 'foo' ($l's presets: $want)" "$tmp/pf.err" &&
    [ ! -s "$tmp/pf.out" ]; then ok "$l --preset foo: refused before anything runs"
  else bad "$l --preset foo: exit $rc, $(wc -l <"$tmp/pf.out") stdout lines"; fi
done
for l in lab01 lab02 lab04 lab05; do
  ./$l --preset foo --out "$tmp/pf" >"$tmp/pf.out" 2>"$tmp/pf.err"
  rc=$?
  if [ $rc = 2 ] && grep -q "^error: $l: this lab has no presets" "$tmp/pf.err"; then ok "$l --preset: this lab has none"
  else bad "$l --preset foo: exit $rc"; fi
done
# --epochs: one message shape for every bad value, in the lab's own range
epochs_case() { # lab, value, expected message
  local extra=
  [ "$1" = lab07 ] && extra="--steps 1 --show 1"
  # shellcheck disable=SC2086
  "./$1" --epochs "$2" $extra --out "$tmp/ep" >"$tmp/ep.out" 2>"$tmp/ep.err"
  local rc=$?
  if [ $rc = 2 ] && grep -qF -- "error: $1: --epochs $2: $3" "$tmp/ep.err" && [ ! -s "$tmp/ep.out" ]; then
    ok "$1 --epochs $2: $3"
  else bad "$1 --epochs $2: exit $rc: $(head -1 "$tmp/ep.err")"; fi
}
epochs_case lab03 -1 "must be at least 1 (training runs"
epochs_case lab03 0 "must be at least 1 (training runs"
epochs_case lab06 -1 "must be at least 1 (training runs"
epochs_case lab06 0 "must be at least 1 (training runs"
epochs_case lab07 -1 "must be at least 0"
epochs_case lab01 -1 "must be in 0..1024"
epochs_case lab01 2000 "must be in 0..1024"
./lab02 --epochs 3 --out "$tmp/ep" >/dev/null 2>"$tmp/ep.err"
if grep -q "^error: lab02: this lab does not train, so --epochs does not apply" "$tmp/ep.err"; then
  ok "lab02 --epochs: this lab does not train"
else bad "lab02 --epochs: $(head -1 "$tmp/ep.err")"; fi

# ---------------------------------------------------------------- --device cuda, no GPU
# Built with nvcc on a machine without a GPU or driver, or built CPU-only: one line naming the
# CUDA error (or the build) and what to do, exit 2, nothing on stdout, no usage text, no crash.
# Where a GPU works the labs run instead: then this is skipped, saying so.
cuda_line() { # lab: the one line --device cuda may print here
  echo "^error: $1: --device cuda: (no CUDA device \(cuda[A-Za-z]+: [^)]+\)|cannot use CUDA device 0 \(cuda[A-Za-z]+: [^)]+\)|cuBLAS did not start \([A-Z_]+\)|this build has no CUDA backend \([^)]+\)); run with --device cpu\$"
}
./lab02 --device cuda --out "$tmp/dc" >"$tmp/dc.out" 2>"$tmp/dc.err"
if [ $? = 0 ]; then
  skip "--device cuda: a CUDA device works here, so the labs ran on it; the no-GPU line is not checked"
else
  for l in $LABS; do
    # shellcheck disable=SC2046
    "./$l" --device cuda $(short_run $l) --out "$tmp/dc" >"$tmp/dc.out" 2>"$tmp/dc.err"
    rc=$?
    if [ $rc = 2 ] && [ ! -s "$tmp/dc.out" ] && [ "$(wc -l <"$tmp/dc.err")" = 1 ] &&
      grep -qE "$(cuda_line $l)" "$tmp/dc.err"; then
      ok "$l --device cuda without a GPU: one line, exit 2 ($(cut -c1-90 "$tmp/dc.err")...)"
    else
      bad "$l --device cuda without a GPU: exit $rc, $(wc -l <"$tmp/dc.out") stdout and $(wc -l <"$tmp/dc.err") stderr lines: $(head -3 "$tmp/dc.err")"
    fi
  done
fi

# ---------------------------------------------------------------- --save
for l in lab03 lab06; do
  # shellcheck disable=SC2046
  ./$l --save "$tmp/missing/dir/model.ckpt" $(short_run $l) --out "$tmp/sv" >"$tmp/sv.out" 2>"$tmp/sv.err"
  rc=$?
  if [ $rc = 2 ] && grep -qF "error: $l: --save $tmp/missing/dir/model.ckpt: the directory $tmp/missing/dir does not exist" "$tmp/sv.err" &&
    ! grep -q '^epoch' "$tmp/sv.out"; then ok "$l --save into a missing directory: refused before training"
  else bad "$l --save missing dir: exit $rc, $(grep -c '^epoch' "$tmp/sv.out") epoch lines: $(head -1 "$tmp/sv.err")"; fi
done

# checkpoint_save: the data reaches the disk (fsync) before the rename makes it the checkpoint.
# An LD_PRELOAD shim logs fsync and rename calls in order.
cat >"$tmp/shim.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void logf_(const char *what, const char *a, const char *b) {
  FILE *f = fopen(getenv("SHIM_LOG"), "a");
  if (f) { fprintf(f, "%s %s %s\n", what, a, b ? b : ""); fclose(f); }
}
int fsync(int fd) {
  char link[64], path[PATH_MAX] = "";
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n > 0) path[n] = '\0';
  logf_("fsync", path, NULL);
  int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  return real(fd);
}
int rename(const char *a, const char *b) {
  logf_("rename", a, b);
  int (*real)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
  return real(a, b);
}
EOF
if [ $have_fra = 1 ] && ${CC:-gcc} -shared -fPIC -O1 "$tmp/shim.c" -o "$tmp/shim.so" -ldl 2>"$tmp/shim.log"; then
  mkdir -p "$tmp/ck"
  SHIM_LOG="$tmp/shim.txt" LD_PRELOAD="$tmp/shim.so" ./lab03 --epochs 1 --heldout 0 \
    --save "$tmp/ck/model.ckpt" --out "$tmp/ck" >/dev/null 2>&1
  # the fsync of model.ckpt.tmp must come before its rename to model.ckpt
  if awk -v t="$tmp/ck/model.ckpt.tmp" '$1 == "fsync" && $2 == t { s = 1 }
       $1 == "rename" && $2 == t { exit !s } END { }' "$tmp/shim.txt" &&
    grep -q "^rename $tmp/ck/model.ckpt.tmp" "$tmp/shim.txt"; then
    ok "checkpoint_save: fsync before rename"
  else bad "checkpoint_save: no fsync before the rename: $(cat "$tmp/shim.txt" 2>/dev/null | tr '\n' ';')"; fi
elif [ $have_fra = 1 ]; then
  skip "cannot build the LD_PRELOAD shim ($(head -1 "$tmp/shim.log")): fsync order not checked"
fi

# ---------------------------------------------------------------- a .gz that inflates to 512 MiB
# A valid IDX header for 10 images (7,840 bytes) followed by 512 MiB of zeros, in a 0.5 MB
# gzip: the reader must stop at the header's size, well inside a 400 MB address-space limit.
PY=$(command -v python3 || true)
if [ -n "$PY" ] && "$PY" - "$tmp/bomb" <<'PYEOF'
import os, struct, sys, zlib, gzip
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
co = zlib.compressobj(1, zlib.DEFLATED, 31)
parts = [co.compress(struct.pack(">IIII", 0x803, 10, 28, 28))]
z = bytes(1 << 20)
parts += [co.compress(z) for _ in range(512)]
parts.append(co.flush())
open(d + "/train-images-idx3-ubyte.gz", "wb").write(b"".join(parts))
with gzip.open(d + "/train-labels-idx1-ubyte.gz", "wb") as f:
    f.write(struct.pack(">II", 0x801, 10) + bytes(10))
PYEOF
then
  # a build with nvcc maps cuBLAS's libraries at start (over 500 MB of address space, even on
  # the CPU): the 400 MB come on top of their size
  libs_kb=0
  for f in $(ldd ./lab07 2>/dev/null | awk '/libcublas|libcudart/ { print $3 }'); do
    libs_kb=$((libs_kb + $(stat -Lc %s "$f") / 1024))
  done
  (ulimit -v $((400000 + libs_kb)); ./lab07 --data-dir "$tmp/bomb" --steps 1 --out "$tmp/bo" >/dev/null 2>"$tmp/bomb.err")
  rc=$?
  if [ $rc = 1 ] && grep -q "^error: lab07: $tmp/bomb/train-images-idx3-ubyte.gz: IDX size mismatch: more than the 7840 bytes of data the header says" "$tmp/bomb.err"; then
    ok "a .gz inflating to 512 MiB: refused at the header's 7840 bytes, under a 400 MB memory limit (+$((libs_kb / 1024)) MB for the CUDA libraries)"
  else bad "gzip bomb: exit $rc: $(head -1 "$tmp/bomb.err")"; fi
else
  skip "no python3 to build the gzip bomb"
fi

# every summary.json written above is valid UTF-8 JSON
if [ -n "$PY" ]; then
  n=0
  for f in "$tmp"/*/summary.json; do
    [ -f "$f" ] || continue
    if "$PY" -c 'import json,sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$f" 2>/dev/null; then
      n=$((n + 1))
    else bad "$f: not valid UTF-8 JSON"; fi
  done
  ok "$n summary.json files are valid UTF-8 JSON"
fi
suite_end
