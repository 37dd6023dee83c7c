#!/usr/bin/env bash
# kit_include.sh B [setup] — the kit's own exercise headers and stubs for grading, from a pristine
# source, never from the working tree's labs/ (where a submission laid over a checkout lives).
#
#   kit_include.sh B         make B/grade-include/ current (every grading target runs this first)
#   kit_include.sh B setup   make grade-setup: copy the working tree's labs/ headers and stubs to
#                            B/grade-setup/ with their checksums (run it on a tree you trust)
#
# The pristine source is the first of:
#   1. B/grade-setup/         made by `make grade-setup`
#   2. tests/grade/kit/       the read-only copy a handout ships (tests/grade/handout.sh)
#   3. the committed tree     a git checkout: HEAD's labs/, extracted to B/grade-git/TREE/
# Each holds labNN/*.h, labNN/*.c (the stubs) and SHA256SUMS, verified here on every run.
# B/grade-include/ then holds what submissions and the graded tests compile against:
#   kit/labs/labNN/*.h  the exercise headers (the include path: -I B/grade-include/kit/labs)
#   common/**/*.h       the kit's common/ headers, reached by the headers' "../../common/x.h"
#   cuda/al_cuda.h, cuda/emu.h   what a kernel exercise (.cu) includes ("../../cuda/al_cuda.h"):
#                       the launch macros and, in the grader's build, the CUDA emulator
#   stubs/labNN/*.c, *.cu   the stubs: what a missing or refused submission file is graded as
# Files there are rewritten only when their content changes (objects depend on their mtimes).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=$1
mode=${2:-}
out=$B/grade-include

sums() { # DIR: SHA256SUMS of its labNN/*.h, labNN/*.c and labNN/*.cu
  (cd "$1" && shopt -s nullglob && LC_ALL=C sha256sum lab[0-9][0-9]/*.h lab[0-9][0-9]/*.c lab[0-9][0-9]/*.cu)
}

if [ "$mode" = setup ]; then
  d=$B/grade-setup
  rm -rf "$d.tmp" && mkdir -p "$d.tmp"
  for f in labs/lab[0-9][0-9]/*.h labs/lab[0-9][0-9]/*.c labs/lab[0-9][0-9]/*.cu; do
    [ -f "$f" ] || continue
    mkdir -p "$d.tmp/$(dirname "${f#labs/}")" && cp "$f" "$d.tmp/${f#labs/}"
  done
  sums "$d.tmp" >"$d.tmp/SHA256SUMS"
  chmod -R a-w "$d.tmp"
  [ ! -e "$d" ] || { chmod -R u+w "$d" && rm -rf "$d"; }
  mv "$d.tmp" "$d"
  echo "grade-setup: the kit's exercise headers and stubs copied to $d ($(wc -l <"$d/SHA256SUMS") files);"
  echo "  make grade now grades against them (and verifies them) whatever labs/ holds later"
fi

if [ -f "$B/grade-setup/SHA256SUMS" ]; then
  src=$B/grade-setup
  what="the copy made by make grade-setup"
elif [ -f tests/grade/kit/SHA256SUMS ]; then
  src=tests/grade/kit
  what="the handout's copy (tests/grade/kit/)"
elif tree=$(git rev-parse -q --verify 'HEAD:labs' 2>/dev/null); then
  src=$B/grade-git/$tree
  what="the committed tree (HEAD:labs)"
  if [ ! -f "$src/SHA256SUMS" ]; then
    rm -rf "$src.tmp" && mkdir -p "$src.tmp"
    git archive --format=tar 'HEAD:labs' | tar -x -C "$src.tmp" --wildcards 'lab[0-9][0-9]/*.[ch]' 'lab[0-9][0-9]/*.cu'
    sums "$src.tmp" >"$src.tmp/SHA256SUMS"
    chmod -R a-w "$src.tmp"
    mv "$src.tmp" "$src"
  fi
else
  echo "grade: no pristine copy of the kit's exercise headers: this tree has no .git, no" >&2
  echo "  tests/grade/kit/ and no make grade-setup copy. Run make grade-setup on a tree you trust" >&2
  echo "  (before any submission is laid over it), then make grade." >&2
  exit 2
fi
# Verified on every run: a copy that was changed after it was made is refused.
if ! bad=$(cd "$src" && LC_ALL=C sha256sum --quiet --strict -c SHA256SUMS 2>&1); then
  echo "grade: the kit's exercise headers in $src do not match their checksums:" >&2
  echo "$bad" | head -n 5 >&2
  echo "  ($what; make it again: make grade-setup, or extract the handout afresh)" >&2
  exit 2
fi

# B/grade-include/, rewritten only where its source changed: one checksum list for all of it.
want=$(
  cat "$src/SHA256SUMS"
  LC_ALL=C sha256sum common/*.h common/*/*.h cuda/al_cuda.h cuda/emu.h 2>/dev/null || true
)
complete=yes # every file of the copy is there (shell tests only: this runs on every grade)
while read -r _ f; do
  case $f in *.h) [ -f "$out/kit/labs/$f" ] ;; *) [ -f "$out/stubs/$f" ] ;; esac || complete=
done <"$src/SHA256SUMS"
if [ -z "$complete" ] || [ "$want" != "$(cat "$out/.source" 2>/dev/null)" ]; then
  put() { # SRC DST: copy when the content differs (mtime kept otherwise), read-only
    if ! cmp -s "$1" "$2"; then
      mkdir -p "$(dirname "$2")"
      rm -f "$2" && cp "$1" "$2" && chmod a-w,a+r "$2"
    fi
  }
  mkdir -p "$out"
  # a file that left the source leaves the copy too
  { find "$out/kit" "$out/stubs" "$out/common" "$out/cuda" -type f 2>/dev/null || true; } | while IFS= read -r f; do
    case $f in
    "$out"/kit/labs/*) [ -f "$src/${f#"$out"/kit/labs/}" ] || rm -f "$f" ;;
    "$out"/stubs/*) [ -f "$src/${f#"$out"/stubs/}" ] || rm -f "$f" ;;
    "$out"/common/*) [ -f "common/${f#"$out"/common/}" ] || rm -f "$f" ;;
    "$out"/cuda/*) [ -f "cuda/${f#"$out"/cuda/}" ] || rm -f "$f" ;;
    esac
  done
  for f in "$src"/lab[0-9][0-9]/*.h; do put "$f" "$out/kit/labs/${f#"$src"/}"; done
  for f in "$src"/lab[0-9][0-9]/*.c "$src"/lab[0-9][0-9]/*.cu; do
    if [ -f "$f" ]; then put "$f" "$out/stubs/${f#"$src"/}"; fi
  done
  for f in common/*.h common/*/*.h cuda/al_cuda.h cuda/emu.h; do
    if [ -f "$f" ]; then put "$f" "$out/$f"; fi
  done
  chmod -R a+rX "$out"
  printf '%s\n' "$want" >"$out/.source"
fi
# A note for whoever edits labs/*.h on a checkout: the grade does not use the working copy.
if [ "$src" != tests/grade/kit ]; then
  for f in labs/lab[0-9][0-9]/*.h; do
    [ -f "$f" ] || continue
    if ! cmp -s "$f" "$src/${f#labs/}"; then
      echo "grade: note: $f differs from $what, which the grade uses" \
        "(commit it, or make grade-setup)" >&2
    fi
  done
fi
# The graded tests and runner.c are compiled from the working tree, not a pristine copy: on a
# checkout, say when they are not the committed ones (docs/instructor-guide.md, "Not guaranteed").
if git rev-parse -q --verify HEAD >/dev/null 2>&1; then
  changed=$({ git diff --name-only HEAD -- tests/grade tests/hidden
    git ls-files --others --exclude-standard -- 'tests/grade/lab[0-9][0-9]/*.c'; } 2>/dev/null |
    grep -E '^tests/(grade/(lab[0-9][0-9]/.*\.c|runner\.c|grade\.h|record\.h)|hidden/lab[0-9][0-9]/.*\.c)$' || true)
  if [ -n "$changed" ]; then
    echo "grade: note: graded test sources differ from the committed tree (HEAD), and the grade" \
      "compiles the working tree's:" $(head -n 5 <<<"$changed") >&2
  fi
fi
