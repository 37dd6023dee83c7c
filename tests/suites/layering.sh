#!/usr/bin/env bash
# layering: calls go one way, chapters -> exercises (labs/ or solutions/) -> common/, so the
# Makefile links the three archives in that order without --start-group. Checked on the symbol
# tables: nothing an archive needs may be defined only in an archive linked before it.
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
check "the Makefile links without --start-group" bash -c "! grep -q -- '--start-group' Makefile"
suite_end
