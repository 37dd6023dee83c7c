#!/usr/bin/env bash
# layering: calls go one way, chapters -> exercises (labs/ or solutions/) -> common/, so the
# Makefile links the three archives in that order without --start-group. Checked on the symbol
# tables: nothing an archive needs may be defined only in an archive linked before it. Inside
# common/, no circle of calls between files (tests/tools/filecycles.py); and no function longer
# than 80 lines (tests/tools/funclen.py).
# Run from the repository root: bash tests/suites/layering.sh. Ends with "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin layering

defined() { nm -g --defined-only "$@" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u; }
needed() { nm -u "$@" 2>/dev/null | awk '{ print $NF }' | sort -u; }

if ! command -v nm >/dev/null 2>&1; then
  skip "nm not found (binutils): the symbol tables cannot be read"
  suite_end
  exit
fi
for variant in solutions labs; do
  ex=build/$variant/libex.a chap=build/$variant/libchap.a
  if ! make -s VARIANT=$variant "$ex" "$chap" build/libcommon.a >"$tmp/build.log" 2>&1; then
    bad "make VARIANT=$variant (the archives) failed:"
    tail -20 "$tmp/build.log"
    continue
  fi
  back=$(comm -12 <(needed "$ex") <(defined "$chap") | tr '\n' ' ')
  if [ -z "$back" ]; then ok "$variant: the exercises call no chapter code"; else
    bad "$variant: exercises call chapter code: $back(define it in labs/ headers or common/)"
  fi
  back=$(comm -12 <(needed build/libcommon.a) <(defined "$ex" "$chap") | tr '\n' ' ')
  if [ -z "$back" ]; then ok "$variant: common/ calls no exercise or chapter code"; else
    bad "$variant: common/ calls up into the labs: $back"
  fi
done
# Within common/, calls go one way too (the layers are listed in common/context.h): no file calls
# a file that calls it back, directly or round a circle. Checked on the objects libcommon.a is
# made of (built above). Planted: backend.c calling tensor_new again -> the circle is named.
if ! command -v python3 >/dev/null 2>&1; then
  skip "python3 not found: the circles between common/'s files are not checked"
else
  common_objs=$(for f in common/*.c common/ops/*.c common/cpu/*.c; do echo "build/obj/${f%.c}.o"; done)
  # shellcheck disable=SC2086
  if circles=$(python3 tests/tools/filecycles.py $common_objs 2>&1); then
    ok "common/: no two files call each other, directly or round a circle"
  else
    bad "common/: files that call each other (move the shared part below both): $circles"
  fi
fi
# cuda/ sits beside common/ (linked as objects): it calls only common/, and every CUDA entry
# point common/ calls is also in cuda/nocuda.c, so a CPU-only build links. Checked on the
# kernels as the tests build them (against the emulator: no nvcc needed).
cuda_objs=$(for f in cuda/*.cu; do b=${f%.cu}; echo "build/emu/$b.o"; done)
# shellcheck disable=SC2086
if ! make -s $cuda_objs build/emu/cuda/emu.o build/obj/cuda/nocuda.o build/libcommon.a \
  build/solutions/libex.a build/solutions/libchap.a >"$tmp/build.log" 2>&1; then
  bad "make (the emulated cuda/ objects, nocuda.o) failed:"
  tail -20 "$tmp/build.log"
else
  # shellcheck disable=SC2086
  back=$(comm -12 <(needed $cuda_objs) <(defined build/solutions/libex.a build/solutions/libchap.a) | tr '\n' ' ')
  if [ -z "$back" ]; then ok "cuda/ calls no exercise or chapter code"; else
    bad "cuda/ calls up into the labs: $back"
  fi
  # shellcheck disable=SC2086
  entry=$(comm -12 <(needed build/libcommon.a) <(defined $cuda_objs))
  missing=$(comm -23 <(echo "$entry") <(defined build/obj/cuda/nocuda.o) | tr '\n' ' ')
  if [ -n "$entry" ] && [ -z "${missing// /}" ]; then
    ok "cuda/nocuda.c defines every CUDA entry point common/ calls ($(echo $entry))"
  else bad "common/ calls CUDA entry points that cuda/nocuda.c lacks: $missing(a CPU-only build would not link)"; fi
fi
# Functions fit on a screen or two: none in common/, chapters/ or cuda/ is longer than 80 lines,
# except each chapter's literate main (chapters/*/labNN.c), which is the chapter's text.
# Planted: an 81-line function -> named with its length, and the check fails.
if ! command -v python3 >/dev/null 2>&1; then
  skip "python3 not found: function lengths are not checked"
elif long=$(python3 tests/tools/funclen.py --max 80 --allow-main 'chapters/*/lab[0-9][0-9].c' \
  common chapters cuda 2>&1); then
  ok "no function in common/, chapters/ or cuda/ is longer than 80 lines (besides the labs' main)"
else
  bad "functions longer than 80 lines (file:line:name:lines; split them): $(echo $long)"
fi
check "the Makefile links without --start-group" bash -c "! grep -q -- '--start-group' Makefile"
suite_end
