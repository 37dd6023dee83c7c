#!/usr/bin/env bash
# aarch64_test.sh — `make test-aarch64`: the kit cross-compiled for ARM64 (Debian's
# gcc-aarch64-linux-gnu) and run under qemu-user: the unit tests, every CUDA kernel in the
# emulator, then a short run of each lab (a training epoch or a few steps where the lab trains).
# Speed under emulation means nothing; what this checks is that the NEON build (8x12 GEMM tile,
# vectorized hot loops) computes the same things the x86 build does: the unit tests compare
# against independent references. Everything must pass: a skipped unit test is a failure here,
# with one exception that make test has too: without fra-eng.zip anywhere the labs look
# (make data), its unit tests and the lab03/lab06 runs are skips, counted and named.
#
# Needs (Debian; make deps-dev installs them, .ci/run too): gcc-aarch64-linux-gnu,
# g++-aarch64-linux-gnu (the emulator is C++), qemu-user, and an ARM64 zlib
# (dpkg --add-architecture arm64 && apt-get update && apt-get install zlib1g-dev:arm64).
# Missing pieces are a skip that names them (exit 0), a failure under CI=true.
#
# The build links the built-in GEMM (NO_BLAS=1): that NEON kernel (common/cpu) is the kit's own
# code and what needs checking here; OpenBLAS is a library already tested on ARM64 by its
# makers. A native ARM64 build finds OpenBLAS in /usr/include/aarch64-linux-gnu (the Makefile).
#
# One sysroot: the programs run with the cross toolchain's loader AND its libc, libm, libgomp
# and libstdc++ (qemu-aarch64 -L SYSROOT, SYSROOT/lib first on the library path); from the
# multiarch directory only libz, through a directory holding that one library. Mixing the
# cross loader with the multiarch libc (Debian's libc6:arm64, which zlib1g:arm64 pulls in) made
# pthread_create and the child of fork() spin forever under qemu; a check below stops the run
# at once, naming the library, if any other library is resolved.
#
# Time: see docs/performance.md (fresh clone, 2 cores). The emulated programs run
# AARCH64_JOBS at a time (default: the number of cores, at most 4); AARCH64_TIMEOUT (s,
# default 1200) bounds each.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=build/aarch64
cc=aarch64-linux-gnu-gcc
cxx=aarch64-linux-gnu-g++ # the unit tests link the CUDA emulator (C++)
mkdir -p "$B"
missing=()
command -v $cc >/dev/null 2>&1 || missing+=("gcc-aarch64-linux-gnu")
command -v $cxx >/dev/null 2>&1 || missing+=("g++-aarch64-linux-gnu")
command -v qemu-aarch64 >/dev/null 2>&1 || missing+=("qemu-user")
# zlib.h alone proves nothing (the amd64 header is on the cross compiler's path too): link it
if command -v $cc >/dev/null 2>&1 &&
  ! printf '#include <zlib.h>\nint main(void){return zlibVersion()[0] == 0;}\n' |
    $cc -x c - -o /dev/null -lz >/dev/null 2>&1; then
  missing+=("zlib1g-dev:arm64 (after dpkg --add-architecture arm64 && apt-get update)")
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "${CI:-}" = true ]; then
    echo "FAIL test-aarch64: missing ${missing[*]} (CI=true: .ci/run installs them from the Makefile's DEB_PACKAGES_DEV)"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "skip test-aarch64: missing ${missing[*]}; not run (make deps-dev installs them)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   aarch64: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL aarch64: $1"; }
t_all=$(date +%s)

labs=$(ls chapters/*/lab[0-9][0-9].c | sed -E 's|.*/(lab[0-9]+)\.c|\1|')
targets="$B/solutions/test_unit $B/solutions/cuda_check_emu $(for l in $labs; do printf '%s ' "$B/bin/$l"; done)"
# -fvect-cost-model=very-cheap: Debian's GCC 12.2 for aarch64 crashes (internal compiler error in
# vect_transform_reduction) on loops like  m = fmax(m, fabs((double)a[i] - b[i]))  that the
# tests and labs use to compare results; this cost model leaves those alone. The GEMM kernel
# (vector extensions) and the `omp simd` loops are vectorized regardless of the cost model.
opt="-O3 -fvect-cost-model=very-cheap"
echo "building for aarch64 in $B (make CC=$cc CXX_EMU=$cxx OPT='$opt' NO_CUDA=1 NO_BLAS=1) ..."
TIMEFORMAT='%R %U %S' # wall, user, system s of `time` (CPU time is steadier on a shared machine)
# shellcheck disable=SC2086
{ time make -s -j2 CC=$cc CXX_EMU=$cxx OPT="$opt" NO_CUDA=1 NO_BLAS=1 B=$B $targets >"$B/build.log" 2>&1; } 2>"$B/build.time"
build_rc=$?
took=$(tail -1 "$B/build.time" | awk '{ printf "%.0f s, CPU %.0f s", $1, $2 + $3 }')
if [ $build_rc -ne 0 ]; then
  bad "cross build failed; last lines of $B/build.log:"
  tail -20 "$B/build.log"
  echo "$passed passed, $failed failed"
  exit 1
fi
if file "$B/bin/lab01" 2>/dev/null | grep -q aarch64; then
  ok "cross build (ARM aarch64 binaries, built-in NEON GEMM; $took)"
else
  bad "the binaries are not aarch64: $(file "$B/bin/lab01")"
fi

# The sysroot is where the cross compiler's own libc lives (Debian: /usr/aarch64-linux-gnu)
sysroot=$(realpath -m "$(dirname "$($cc -print-file-name=libc.so.6)")/..")
libz=$(realpath -e "$($cc -print-file-name=libz.so.1)" 2>/dev/null)
zdir=$PWD/$B/zlib
mkdir -p "$zdir" && ln -sf "$libz" "$zdir/libz.so.1"
libpath=$sysroot/lib:$zdir
if [ ! -e "$sysroot/lib/ld-linux-aarch64.so.1" ]; then
  bad "no ARM64 loader at $sysroot/lib/ld-linux-aarch64.so.1 (Debian: libc6-arm64-cross)"
  echo "$passed passed, $failed failed"
  exit 1
fi
# One OpenMP thread under emulation (passive: an idle worker sleeps rather than spins): the
# emulated programs run AARCH64_JOBS at a time, and spinning threads crawl under qemu. The
# threaded paths are the same C on every architecture; one check below runs two threads.
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
# qemu's -E sets the guest's library path only: qemu itself is an x86-64 program
run() { timeout "${AARCH64_TIMEOUT:-1200}" qemu-aarch64 -L "$sysroot" -E LD_LIBRARY_PATH="$libpath" "$@"; }

# Every library comes from the sysroot, but zlib from its own directory
libs=$(run -E LD_TRACE_LOADED_OBJECTS=1 "$B/solutions/test_unit" 2>&1)
stray=$(echo "$libs" | awk '$2 == "=>" { print $1 " => " $3 }' | grep -vE "=> ($sysroot/lib|$zdir)/")
if [ -n "$libs" ] && [ -z "$stray" ] && echo "$libs" | grep -q "libc.so.6 => $sysroot/lib/"; then
  ok "one sysroot: the loader, libc, libm, libgomp, libstdc++ from $sysroot/lib, libz from $libz"
else
  bad "libraries from outside the sysroot $sysroot (the loader and libc must be one build):"
  echo "${stray:-$libs}"
  echo "$passed passed, $failed failed" # the programs would hang: not run
  exit 1
fi

# The emulated programs, AARCH64_JOBS at a time; each writes NAME.out and NAME.rc, read below
tmp=$(mktemp -d /tmp/aarch64_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
declare -A args=(
  [lab01]="--epochs 1"
  [lab02]=""
  [lab03]="--epochs 1 --heldout 0"
  [lab04]="--no-bench"
  [lab05]=""
  [lab06]="--epochs 1 --no-heldout"
  [lab07]="--epochs 1 --steps 3"
)
# (nproc would answer OMP_NUM_THREADS, exported above)
jobs_max=${AARCH64_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
[ "$jobs_max" -gt 4 ] && jobs_max=4
job() { # NAME command...: runs in the background, at most jobs_max at once; writes NAME.out
  # and NAME.rc: the exit status and "W s, CPU C s"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  local name=$1
  shift
  (
    { time "$@" >"$tmp/$name.out" 2>&1; } 2>"$tmp/$name.time"
    rc=$?
    tail -1 "$tmp/$name.time" | awk -v rc=$rc '{ printf "%d %.0f s, CPU %.0f s\n", rc, $1, $2 + $3 }' >"$tmp/$name.rc"
  ) &
}
# fra-eng.zip, searched where the labs search (common/data.c: data_find)
zip=""
for d in "${D2L_DATA_DIR:-}" ./data ../shared/data; do
  [ -n "$d" ] && [ -r "$d/fra-eng.zip" ] && { zip=$d/fra-eng.zip; break; }
done
skipped=0
# the longest first. AL_NO_GNUPLOT stays unset for the unit tests, which check the figures;
# the labs write .dat + .gp only (their figures are checked on x86)
job unit run "$B/solutions/test_unit"
job cuda run "$B/solutions/cuda_check_emu"
for l in lab06 lab03 $(echo "$labs" | grep -vxE 'lab06|lab03'); do
  if [ -z "$zip" ] && { [ "$l" = lab03 ] || [ "$l" = lab06 ]; }; then continue; fi
  # shellcheck disable=SC2086
  job "$l" run -E AL_NO_GNUPLOT=1 "$B/bin/$l" ${args[$l]:-} --out "$tmp/$l.dir"
done
# two OpenMP threads (the kit's threaded paths): pthread_create is what spun with two libcs
job threads run -E OMP_NUM_THREADS=2 -E AL_NO_GNUPLOT=1 "$B/bin/lab02" --out "$tmp/threads.dir"
wait

for name in unit cuda; do
  read -r rc took <"$tmp/$name.rc"
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/$name.out" | tail -1)
  what="unit tests"; [ $name = cuda ] && what="CUDA kernels in the emulator (fibers on ucontext)"
  skips=$(grep -E '^skip ' "$tmp/$name.out")
  # without fra-eng.zip, the skips that say so are skips here too; every other skip fails
  nzip=0
  [ -z "$zip" ] && [ -n "$skips" ] && nzip=$(echo "$skips" | grep -c 'fra-eng\.zip')
  nskip=$(echo "$line" | awk '{print $5 + 0}')
  if [ "$rc" = 0 ] && [ -n "$line" ] && [ "$(echo "$line" | awk '{print $3}')" = 0 ] && [ "$nskip" = "$nzip" ]; then
    ok "$what under qemu: $line ($took)"
    if [ "$nzip" -gt 0 ]; then
      skipped=$((skipped + nzip))
      echo "skip aarch64: $nzip $name test(s) for want of fra-eng.zip (make data)"
    fi
  else
    bad "$what under qemu: ${line:-no summary line} (exit $rc after $took); not ok:"
    grep -E '^(FAIL|skip)' "$tmp/$name.out" | head -20
    [ -n "$skips" ] &&
      echo "  (a skip fails here: make deps-dev installs what they name, make data fetches fra-eng.zip)"
    tail -5 "$tmp/$name.out"
  fi
done
for l in $labs threads; do
  what="$l ${args[$l]:-}"; [ "$l" = threads ] && what="lab02 with OMP_NUM_THREADS=2"
  if [ ! -f "$tmp/$l.rc" ]; then
    skipped=$((skipped + 1))
    echo "skip aarch64: $what: no fra-eng.zip in \$D2L_DATA_DIR, ./data or ../shared/data (make data)"
    continue
  fi
  read -r rc took <"$tmp/$l.rc"
  if [ "$rc" = 0 ]; then
    ok "$what under qemu ($(grep -ciE 'loss|tokens/sec|images/s' "$tmp/$l.out") progress lines, $took)"
  else
    bad "$what under qemu exited $rc after $took; last lines:"
    tail -8 "$tmp/$l.out"
  fi
done
# lab02 prints no timings: its output is the same with two threads as with one
if [ "$(grep -c . "$tmp/threads.out")" -gt 0 ] &&
  diff <(sed "s|$tmp/threads.dir|OUT|g" "$tmp/threads.out") <(sed "s|$tmp/lab02.dir|OUT|g" "$tmp/lab02.out") >"$tmp/threads.diff"; then
  ok "lab02's output with 2 OpenMP threads equals its output with 1 ($(wc -l <"$tmp/threads.out") lines)"
else
  bad "lab02's output differs between 2 OpenMP threads and 1:"
  head -10 "$tmp/threads.diff"
fi
cpu=$(cat "$B/build.time" "$tmp"/*.time | awk '{ c += $2 + $3 } END { printf "%.0f", c }')
echo "test-aarch64: $(($(date +%s) - t_all)) s in all, CPU $cpu s; load average now" \
  "$(cut -d' ' -f1-3 /proc/loadavg) on $(getconf _NPROCESSORS_ONLN) cores, $jobs_max programs at a time"

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
