#!/usr/bin/env bash
# keep_symbols.sh OBJ EXERCISE_SYMBOLS — the global symbols an exercise object keeps (the list
# for objcopy --keep-global-symbols): the exercises, and in a kernel exercise (C++) the weak
# copies of the C++ library's inline functions it defines (check_submission.sh lets the same
# pass). Those are COMDAT: two kernel exercises each carry a copy and the linker keeps one;
# made local, the discarded copy's callers point into a dropped section and the link fails.
set -u
cat "$2"
nm --defined-only -P "$1" |
  awk '$2 ~ /^[WV]$/ && $1 ~ /^(_ZNSt|_ZNKSt|_ZSt|DW\.ref\.__gxx_personality_v0$)/ {print $1}'
