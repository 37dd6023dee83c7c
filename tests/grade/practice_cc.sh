#!/bin/bash
# practice_cc.sh — the practice grade's stand-in for confined.sh (grade.mk, GRADE_PRACTICE):
# the same interface and the same outcome for a file that compiles, with none of the
# confinement (no other user, no limits, no include or symbol checks, no objcopy). Runs under
# macOS's bash 3.2.
#
#   practice_cc.sh compile B STAGED OBJ NOTE STUB -- CC ARGS...
#       STAGED (OUT/stage/labNN/FILE.c) compiled into OBJ against the kit's headers, from the
#       stage directory (so __FILE__ reads labNN/FILE.c, as in confined.sh); a file that does
#       not compile leaves STUB as OBJ and the compiler's first lines in NOTE (its exercises
#       score 0, the rest is graded).
set -u
[ "$1" = compile ] || { echo "practice_cc.sh: compile only (runners are linked by grade.mk)" >&2; exit 2; }
B=$2 staged=$3 obj=$4 note=$5 stub=$6
shift 7 # compile B STAGED OBJ NOTE STUB --
inc=$(cd "$B/grade-include/kit/labs" && pwd) || exit 2
rel=${staged%/*}
rel=${rel##*/}/${staged##*/} # labNN/FILE.c
stage=$(cd "${staged%/*}/.." && pwd) || exit 2
mkdir -p "$(dirname "$obj")" "$(dirname "$note")" || exit 2
abs_obj=$(cd "$(dirname "$obj")" && pwd)/${obj##*/}
log=$(cd "$(dirname "$note")" && pwd)/${note##*/}.log
src=$rel
case $rel in *.cu) # standard CUDA made the emulator's C++ first, line for line (as confined.sh)
  src=$rel.emu.cu
  awk -v F="$rel" -v LINE=1 -f "$(cd "$(dirname "$0")/../../cuda" && pwd)/emu_rewrite.awk" \
    "$stage/$rel" >"$stage/$src" 2>"$log" || src= ;;
esac
if [ -n "$src" ] && (cd "$stage" && "$@" -I "$inc" -iquote "${rel%/*}" -c "$src" -o "$abs_obj.tmp") >>"$log" 2>&1; then
  mv -f "$abs_obj.tmp" "$abs_obj"
  rm -f "$note" "$log"
  exit 0
fi
rm -f "$abs_obj.tmp"
{
  echo "grade: $rel does not compile (graded as the kit's stub: its exercises score 0):"
  grep -A3 -E 'error|cannot read' "$log" | head -n 15 | sed 's/^/  /'
} >"$note"
rm -f "$log"
cp "$stub" "$abs_obj"
