#!/usr/bin/env bash
# The virtual GPU (cuda/vgpu, issue 33): nvcc-compiled CUDA programs run against libvgpu, their
# kernels interpreted from nvcc's PTX by a vgpu-device process (built here under ASan+UBSan).
# Checks: the hand-known counters (coalesced copy 4 sectors/request, stride-32 read 32, an
# unpadded 32x32 transpose's column read 31 extra wavefronts a warp, padded 0) and their source
# line; divergence and reconvergence, shuffle, block reduction, counted atomics, ballot, copy
# log; ~6100 integer/float/double results bit-equal to the host's (ops.cu); faults with their
# .cu line: out-of-bounds write, unsupported instruction, races between warps and within a warp
# (__syncwarp), a shuffle half a warp reaches, never-written reads; launches refused as a card
# refuses them (49 KB shared, 2048 threads, registers x threads via ptxas), a watchdog; the five
# solutions' kernels against CPU references in three block orders (skipped in a handout).
# Skips (saying so) without nvcc. Cost: 7 nvcc compiles, two at a time (~16-19 s of CPU cold:
# 57-66 s wall on the loaded shared 2-core machine, ~10-15 s idle), 7 s warm (objects kept in
# build/vgpu/tests).
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin vgpu
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)}
if [ -z "$NVCC" ]; then
  skip "no nvcc found: the virtual GPU runs nvcc's PTX, nothing to test"
  suite_end
  exit 0
fi
root=$PWD
# (its own make, not make test's jobserver: a -j2 parent would make it warn "jobserver unavailable")
out=$root/build/vgpu/tests
mkdir -p "$out"
san="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all"
if env -u MAKEFLAGS -u MFLAGS make -s -C cuda/vgpu BUILD="$root/build/vgpu-asan" CFLAGS="$san" >"$tmp/build.log" 2>&1 &&
  ! grep -q 'warning' "$tmp/build.log"; then
  ok "vgpu-device and libvgpu build, -Wall -Wextra clean, under ASan+UBSan"
else
  bad "building cuda/vgpu failed or warned:"; tail -20 "$tmp/build.log"; suite_end; exit 1
fi
export VGPU_DEVICE=$root/build/vgpu-asan/vgpu-device ASAN_OPTIONS=detect_leaks=1

# One nvcc pass a program: the host object and (-keep) the PTX beside it, with line info.
# Rebuilt when the .cu, the harness or a solution it includes is newer than the program.
compile() { # name
  local n=$1 src=tests/vgpu/$1.cu
  local deps="$src tests/vgpu/harness.cuh solutions/lab0*/*.cu cuda/al_cuda.h cuda/vgpu/runtime.c"
  if [ -x "$out/$n" ] && [ -z "$(find $deps -newer "$out/$n" 2>/dev/null | head -1)" ]; then return 0; fi
  mkdir -p "$out/$n.keep"
  local extra=""
  [ "$n" = ops ] && extra=-fmad=false # host and device round a * b + c alike
  "$NVCC" -c -lineinfo -O3 $extra -gencode arch=compute_80,code=compute_80 -keep -keep-dir "$out/$n.keep" \
    -Isolutions -Ilabs -I. "$src" -o "$out/$n.o" >"$out/$n.log" 2>&1 &&
    cp "$out/$n.keep/$n.ptx" "$out/$n.ptx" &&
    g++ "$out/$n.o" "$root/build/vgpu-asan/libvgpu.a" -fsanitize=address,undefined -o "$out/$n" >>"$out/$n.log" 2>&1
}
progs="counters ops faults"
have_sol=0 # a student's handout has no solutions/
[ -d solutions/lab02 ] && { have_sol=1; progs="$progs sol_lab02 sol_lab04 sol_lab05 sol_lab06"; }
pids=""
set -- $progs
while [ $# -gt 0 ]; do # two at a time
  compile "$1" & p1=$!
  p2=""
  if [ $# -gt 1 ]; then compile "$2" & p2=$!; fi
  wait $p1 || bad "nvcc $1: $(tail -3 "$out/$1.log")"
  [ -n "$p2" ] && { wait $p2 || bad "nvcc $2: $(tail -3 "$out/$2.log")"; }
  shift; [ $# -gt 0 ] && shift
done
run() { # name, args...: runs build/vgpu/tests/NAME on the device; its stats in $tmp/NAME.stats
  local n=$1
  shift
  VGPU_PTX=$out/$n.ptx VGPU_STATS=$tmp/$n.stats VGPU_LOG=$tmp/$n.log "$out/$n" "$@" >"$tmp/$n.out" 2>&1
}
counter() { # stats file, kernel substring, counter: the counter of that kernel's first launch
  awk -v k="$2" -v c="$3" '$1 == "launch" && index($2, k) {
    for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == c) { print kv[2]; exit } } }' "$1"
}
expect() { # what, stats, kernel, counter, value
  local got; got=$(counter "$2" "$3" "$4")
  if [ "$got" = "$5" ]; then ok "$1: $4 = $5"; else bad "$1: $4 = ${got:-none}, expected $5"; fi
}

# ---- hand-known counters and warp semantics (values checked by the program itself)
if run counters; then ok "counters.cu: every value right ($(grep -c '^ok' "$tmp/counters.out") checks)"
else bad "counters.cu: $(grep -v '^ok' "$tmp/counters.out" | head -5 | tr '\n' ' ')"; fi
s=$tmp/counters.stats
expect "coalesced copy, 32 warps" "$s" copy_kernel gld_requests 32
expect "coalesced copy: 4 sectors a request" "$s" copy_kernel gld_sectors 128
expect "stride-32 read: 32 sectors a request" "$s" stride_kernel gld_sectors 1024
expect "unpadded transpose: 32 column reads of 32 words in one bank" "$s" 16transpose_kernel shld_wavefronts 1024
expect "unpadded transpose: 31 extra wavefronts each" "$s" 16transpose_kernel shld_conflicts 992
expect "unpadded transpose: its row writes are conflict-free" "$s" 16transpose_kernel shst_conflicts 0
expect "padded [32][33] transpose" "$s" transpose_padded shld_conflicts 0
expect "atomics: 300 lanes counted by the device" "$s" atomic_kernel atom_ops 300
expect "block reduction with its barriers: no race" "$s" block_sum racecheck 0
expect "if/else by lane: the two halves reconverge before the store (1 request a warp)" "$s" diverge_kernel gst_requests 2
expect "shuffle reduction: lanes converged" "$s" shuffle_kernel synccheck 0
if grep -q '^total launches=11 h2d_copies=1 h2d_bytes=131072 ' "$s"; then
  ok "the device counts 11 launches and 1 host-to-device copy of 131072 bytes"
else bad "device totals: $(grep '^total' "$s" | cut -c1-120)"; fi
if grep -q "^site kernel=_Z16transpose_kernelPKfPf at=.*tests/vgpu/counters.cu:$(grep -n 'a column: 32-way' tests/vgpu/counters.cu | cut -d: -f1) kind=shared_load requests=32 wavefronts=1024 conflicts=992$" "$s"; then
  ok "the transpose's 992 conflicts attributed to its column-read line"
else bad "site lines: $(grep '^site kernel=_Z16transpose' "$s" | head -3 | tr '\n' ' ')"; fi
if [ "$(grep -c '^copy dir=d2h ' "$s")" = 11 ] && grep -q '^copy dir=h2d dst=0x[0-9a-f]* src=0x0 bytes=131072 after_launches=0$' "$s"; then
  ok "every copy logged with its direction, bytes and the launches before it"
else bad "copy log: $(grep '^copy' "$s" | head -2 | tr '\n' ' ')"; fi
if command -v python3 >/dev/null 2>&1; then
  if python3 tests/vgpu/grader_mode.py "$VGPU_DEVICE" "$out/counters" "$out/counters.ptx" "$tmp/graded.stats" \
    >"$tmp/graded.out" 2>&1 && [ "$(grep -c '^ok' "$tmp/graded.out")" = 11 ] &&
    [ "$(counter "$tmp/graded.stats" 16transpose_kernel shld_conflicts)" = 992 ]; then
    ok "grader mode: a device the grader started, the program given only its socket (VGPU_FD): same results and counts"
  else bad "grader mode: $(tail -3 "$tmp/graded.out" | tr '\n' ' ')"; fi
else skip "no python3: the grader mode (VGPU_FD) is not checked"; fi

# ---- arithmetic: the device's bits against the host's
if run ops; then ok "ops.cu: $(grep '^ok exact' "$tmp/ops.out" | cut -d: -f2), $(grep '^ok approx' "$tmp/ops.out" | cut -d: -f2)"
else bad "ops.cu: $(grep FAIL "$tmp/ops.out" | head -4 | tr '\n' ' ')"; fi

# ---- faults: what a card refuses or a sanitizer reports, with the line in the .cu
line_of() { grep -n "$1" tests/vgpu/faults.cu | head -1 | cut -d: -f1; }
run faults oob
l=$(line_of 'the bug: <=')
if grep -q cudaErrorIllegalAddress "$tmp/faults.out" &&
  grep -q "memcheck: invalid __global__ write of 4 bytes .*0 bytes past the end of an allocation of 1024 bytes.*thread (256,0,0), at .*tests/vgpu/faults.cu:$l" "$tmp/faults.log"; then
  ok "out-of-bounds write: cudaErrorIllegalAddress, reported at faults.cu:$l, thread 256"
else bad "out-of-bounds write not reported as expected: $(cat "$tmp/faults.out" "$tmp/faults.log" | head -3)"; fi
run faults unsupported
l=$(line_of 'nanosleep')
if grep -q cudaErrorNotSupported "$tmp/faults.out" &&
  grep -q "unsupported PTX instruction nanosleep.u32 at .*tests/vgpu/faults.cu:$l" "$tmp/faults.log"; then
  ok "unsupported instruction: launch refused, 'unsupported PTX instruction nanosleep.u32 at faults.cu:$l'"
else bad "unsupported instruction: $(cat "$tmp/faults.out" "$tmp/faults.log" | head -3)"; fi
run faults race
l=$(line_of 'no barrier after')
n=$(counter "$tmp/faults.stats" race_kernel racecheck)
if [ "${n:-0}" -gt 0 ] && grep -q "racecheck: .*faults.cu:$l" "$tmp/faults.log"; then
  ok "reduction without its trailing barrier: $n racecheck hazards at faults.cu:$l"
else bad "racy reduction not reported (racecheck=${n:-none})"; fi
run faults limits
if grep -q cudaErrorInvalidValue "$tmp/faults.out" && grep -q '1024 bytes of static + 49152 of dynamic' "$tmp/faults.log"; then
  ok "1 KB static + 48 KB dynamic shared memory: launch refused (the sum is checked)"
else bad "49 KB of shared memory was not refused: $(cat "$tmp/faults.out")"; fi
run faults threads
if grep -q cudaErrorInvalidConfiguration "$tmp/faults.out"; then ok "2048 threads a block: launch refused"
else bad "2048 threads a block was not refused: $(cat "$tmp/faults.out")"; fi
VGPU_MAX_WARP_INSTS=100000 run faults endless
if grep -q cudaErrorLaunchTimeout "$tmp/faults.out" && grep -q 'watchdog: the launch ran more than 100000' "$tmp/faults.log"; then
  ok "an endless loop: the watchdog ends it (cudaErrorLaunchTimeout)"
else bad "endless loop: $(cat "$tmp/faults.out" "$tmp/faults.log" | head -2)"; fi
run faults uninit
l=$(line_of 'never written \*/')
n=$(counter "$tmp/faults.stats" uninit_kernel initcheck)
if grep -q 'poisoned (NaN)' "$tmp/faults.out" && [ "${n:-0}" = 1 ] &&
  grep -q "initcheck: read of 4 bytes of __global__ memory never written .*faults.cu:$l" "$tmp/faults.log"; then
  ok "read of never-written memory: NaN poison, one initcheck report a warp-instruction at faults.cu:$l"
else bad "uninitialized read: initcheck=${n:-none}, $(cat "$tmp/faults.out" "$tmp/faults.log" | head -2)"; fi
run faults warpsync
l=$(line_of 'without __syncwarp: reads')
n1=$(counter "$tmp/faults.stats" ILb1E racecheck) n0=$(counter "$tmp/faults.stats" ILb0E racecheck)
if grep -q 'sums right' "$tmp/faults.out" && [ "${n1:-x}" = 0 ] && [ "${n0:-0}" -gt 0 ] &&
  grep -q "racecheck: read .* by another lane of the same warp .* no __syncwarp() or barrier between.*faults.cu:$l" "$tmp/faults.log"; then
  ok "a warp's exchange through shared memory: clean with __syncwarp, $n0 intra-warp hazards without (faults.cu:$l)"
else bad "__syncwarp racecheck: with ${n1:-none}, without ${n0:-none}, $(head -2 "$tmp/faults.out" "$tmp/faults.log" | tr '\n' ' ')"; fi
run faults shfl
l=$(line_of 'half the warp: lanes')
if grep -q cudaErrorLaunchFailure "$tmp/faults.out" &&
  grep -q "synccheck: shfl.sync.bfly.b32 with member mask 0xffffffff, but lane 16 is not executing it.*faults.cu:$l\$" "$tmp/faults.log"; then
  ok "a shuffle half a warp reaches: synccheck fault at the kernel's line faults.cu:$l (through two inlined calls)"
else bad "diverged shuffle: $(cat "$tmp/faults.out"; grep synccheck "$tmp/faults.log" | tail -1)"; fi
run faults split
n=$(counter "$tmp/faults.stats" split_syncwarp racecheck)
if grep -q '^exchanged$' "$tmp/faults.out" && grep -q '^cudaSuccess$' "$tmp/faults.out" && [ "${n:-x}" = 0 ]; then
  ok "__syncwarp() in both branches of an if: the halves meet, values exchanged, no report"
else bad "split __syncwarp: $(cat "$tmp/faults.out" | tr '\n' ' ') racecheck=${n:-none}"; fi

ptxas=$(dirname "$NVCC")/ptxas
if [ -x "$ptxas" ]; then
  VGPU_PTXAS=$ptxas run faults registers
  if grep -q cudaErrorLaunchOutOfResources "$tmp/faults.out" &&
    grep -q 'registers a thread (ptxas) x 1024 threads needs' "$tmp/faults.log"; then
    ok "1024 threads of a kernel needing $(grep -o '[0-9]* registers a thread' "$tmp/faults.log" | tail -1): refused (out of resources)"
  else bad "register limit: $(cat "$tmp/faults.out"; tail -1 "$tmp/faults.log")"; fi
else skip "no ptxas beside nvcc: the register limit is not checked"; fi

# ---- the solutions' kernels against CPU references, in three block orders
[ $have_sol = 1 ] || skip "no solutions/ (a handout): the five solutions' kernels are not run"
orders="in reversed random:7"
[ $have_sol = 1 ] || orders=""
for order in $orders; do
  for p in sol_lab02 sol_lab04 sol_lab05 sol_lab06; do
    pt=""; [ "$order" = in ] && [ -x "$ptxas" ] && pt=$ptxas # register limits checked once
    if VGPU_ORDER=$order VGPU_PTXAS=$pt run "$p"; then
      ok "$p, blocks $order: $(grep -c '^ok' "$tmp/$p.out") results match the CPU"
    else bad "$p, blocks $order: $(grep -v '^ok' "$tmp/$p.out" "$tmp/$p.log" | head -4 | tr '\n' ' ')"; fi
    for c in memcheck initcheck racecheck synccheck; do
      n=$(awk -v c="$c" '$1 == "total" { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == c) print kv[2] } }' "$tmp/$p.stats")
      [ "${n:-x}" = 0 ] || bad "$p, blocks $order: $c reports ${n:-none}"
    done
  done
done
[ $have_sol = 0 ] ||
  expect "reference layer norm: no bank conflicts" "$tmp/sol_lab06.stats" layer_norm_block shld_conflicts 0
suite_end
