#!/usr/bin/env bash
# stage.sh B SUBDIR OUT — take a submission as data: exactly the files tests/grade/manifest.txt
# names, read as bytes from SUBDIR/labNN/FILE and copied to OUT/stage/labNN/FILE (kit-chosen
# names; rewritten only when the content changed, so make rebuilds only what changed).
#   - a file that is missing, not a regular file, a symbolic link (or under one), or over 1 MiB
#     is replaced by the kit's stub (B/grade-include/stubs/: its exercises score 0), with a note;
#   - every other file or directory under SUBDIR is ignored and listed (names made printable).
# Notes go to OUT/notes/00-stage.txt, which the grader shows at the top of its report. No name
# from SUBDIR is ever passed to a command but as one quoted argument.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=$1
sub=${2%/}
out=$3
stubs=$B/grade-include/stubs
max_bytes=$((1 << 20))
mkdir -p "$out/stage" "$out/notes"
notes=$out/notes/00-stage.txt
: >"$notes.tmp"
note() { printf '%s\n' "$*" >>"$notes.tmp"; }
# Printable: control characters become '?' (names are the student's: newlines, escapes...).
printable() { LC_ALL=C printf '%s' "${1//[[:cntrl:]]/?}"; }

declare -A wanted=()
entries=()
while read -r path _; do
  case $path in lab[0-9][0-9]/*.c | lab[0-9][0-9]/*.cu) ;; *) continue ;; esac
  entries+=("$path")
  wanted[$path]=1
  wanted[${path%/*}]=1
done <tests/grade/manifest.txt

if [ ! -d "$sub" ]; then
  note "grade: the submission directory $(printable "$sub") does not exist; every exercise is graded as the stub"
fi
# Few processes (make grade must stay quick): the checks are shell tests, and sizes and contents
# are read by one stat and one sha256sum for all files.
froms=()
dirs=()
for rel in "${entries[@]}"; do
  src=$sub/$rel
  why=
  if [ -L "$sub/${rel%%/*}" ]; then
    why="${rel%%/*}/ is a symbolic link"
  elif [ -L "$src" ]; then
    why="it is a symbolic link"
  elif [ ! -e "$src" ]; then
    why=missing
  elif [ ! -f "$src" ]; then
    why="it is not a regular file"
  fi
  if [ -n "$why" ]; then
    [ "$why" = missing ] && [ -d "$sub" ] && why="it is missing from the submission"
    [ "$why" = missing ] || note "grade: $rel: $why; graded as the kit's stub (its exercises score 0)"
    froms+=("$stubs/$rel")
  else
    froms+=("$src")
  fi
  dirs+=("$out/stage/${rel%/*}")
done
mkdir -p "${dirs[@]}"
declare -A size=() hash=()
while read -r n f; do size[$f]=$n; done < <(stat -c '%s %n' -- "${froms[@]}" 2>/dev/null)
for k in "${!entries[@]}"; do
  f=${froms[$k]}
  if [ "${size[$f]:-0}" -gt $max_bytes ]; then
    note "grade: ${entries[$k]}: it is larger than 1 MiB; graded as the kit's stub (its exercises score 0)"
    froms[$k]=$stubs/${entries[$k]}
  fi
done
dsts=()
for rel in "${entries[@]}"; do [ -f "$out/stage/$rel" ] && dsts+=("$out/stage/$rel"); done
while read -r h f; do hash[${f#\*}]=$h; done < <(sha256sum -- "${froms[@]}" "${dsts[@]}" 2>/dev/null)
for k in "${!entries[@]}"; do
  rel=${entries[$k]}
  from=${froms[$k]}
  dst=$out/stage/$rel
  [ -n "${hash[$from]:-}" ] && [ "${hash[$from]}" = "${hash[$dst]:-}" ] && continue
  # read as bytes (cat), never followed as a link; rewritten only when different
  rm -f -- "$dst"
  if ! cat -- "$from" >"$dst.tmp" 2>/dev/null; then
    note "grade: $rel: cannot be read; graded as the kit's stub (its exercises score 0)"
    cat -- "$stubs/$rel" >"$dst.tmp"
  fi
  mv -f -- "$dst.tmp" "$dst"
done

# Everything else in the submission: ignored, and listed. The kit's own headers, unchanged, are
# expected there (a submission made from the handout) and not listed.
if [ -d "$sub" ]; then
  n=0
  heads=()
  while IFS= read -r -d '' p; do
    rel=${p#"$sub"/}
    [ -n "${wanted[$rel]+x}" ] && [ ! -L "$p" ] && continue
    if [[ $rel == lab[0-9][0-9]/lab[0-9][0-9].h || $rel == lab[0-9][0-9]/lab[0-9][0-9]_kernels.h ]] &&
      [ -f "$p" ] && [ ! -L "$p" ] &&
      [ ! -L "$sub/${rel%/*}" ] && [ -f "$B/grade-include/kit/labs/$rel" ]; then
      heads+=("$rel")
      continue
    fi
    n=$((n + 1))
    [ $n -le 20 ] && note "grade: ignored: $(printable "$rel") (not an exercise file of tests/grade/manifest.txt)"
  done < <(find "$sub" -mindepth 1 -print0 2>/dev/null | LC_ALL=C sort -z)
  [ $n -le 20 ] || note "grade: ignored: $((n - 20)) more files"
  if [ ${#heads[@]} -gt 0 ]; then
    declare -A hh=()
    files=()
    for rel in "${heads[@]}"; do files+=("$sub/$rel" "$B/grade-include/kit/labs/$rel"); done
    while read -r h f; do hh[${f#\*}]=$h; done < <(sha256sum -- "${files[@]}" 2>/dev/null)
    for rel in "${heads[@]}"; do
      [ "${hh[$sub/$rel]:-x}" = "${hh[$B/grade-include/kit/labs/$rel]:-y}" ] ||
        note "grade: ignored: $rel differs from the kit's; the grade uses the kit's own header"
    done
  fi
fi
mv -f "$notes.tmp" "$notes"
