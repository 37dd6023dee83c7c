#!/usr/bin/env bash
# stage.sh B SUBDIR OUT — take a submission as data: exactly the files tests/grade/manifest.txt
# names, read as bytes from SUBDIR and copied to OUT/stage/labNN/FILE (kit-chosen names;
# rewritten only when the content changed, so make rebuilds only what changed).
#   - where a file is found: SUBDIR/labNN/FILE (laid out flat), SUBDIR/labs/labNN/FILE, or one
#     folder deeper, SUBDIR/ANY/labNN/FILE or SUBDIR/ANY/labs/labNN/FILE (a zip of the whole
#     handout); a file found at two of these places is ambiguous: graded as the stub, with one
#     line naming both;
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
done <tests/grade/manifest.txt

# The places a file may be (prefixes of labNN/FILE, relative to SUBDIR): '', labs/, and for each
# folder ANY in SUBDIR (not a lab's own, not labs/), ANY/ and ANY/labs/. A prefix under a
# symbolic link is never one (nothing is followed out of the submission).
prefixes=("" "labs/")
if [ -d "$sub" ]; then
  nd=0
  while IFS= read -r -d '' d; do
    n=${d##*/}
    [[ $n == lab[0-9][0-9] || $n == labs ]] && continue
    [ -L "$d" ] && continue
    nd=$((nd + 1))
    [ $nd -le 50 ] && prefixes+=("$n/" "$n/labs/")
  done < <(find "$sub" -mindepth 1 -maxdepth 1 -type d -print0 2>/dev/null | LC_ALL=C sort -z)
  [ $nd -le 50 ] ||
    note "grade: the submission has $nd folders at its top: its files were looked for in the first 50 only"
fi
# rel's place: the one prefix under which it (or a link in its place) exists; several: ambiguous
declare -A place=()
ambiguous=()
for rel in "${entries[@]}"; do
  found=()
  for p in "${prefixes[@]}"; do
    [ -e "$sub/$p$rel" ] || [ -L "$sub/$p$rel" ] && found+=("$p")
  done
  if [ ${#found[@]} -gt 1 ]; then
    ambiguous+=("$rel")
    for p in "${found[@]}"; do wanted[$p$rel]=1; done # not "ignored": refused, said once
    note "grade: $rel: found twice, as $(printable "${found[0]}$rel") and $(printable "${found[1]}$rel"); graded as the kit's stub (its exercises score 0): submit one copy"
    place[$rel]=
  else
    place[$rel]=${found[0]-}
  fi
done
# The first folder of path A/B/C (relative to SUBDIR) that is a symbolic link; false if none.
link_in() {
  local q= c
  local IFS=/
  for c in $1; do
    q=${q:+$q/}$c
    [ -L "$sub/$q" ] && { printf '%s' "$(printable "$q")"; return 0; }
  done
  return 1
}
is_ambiguous() { local a; for a in "${ambiguous[@]}"; do [ "$a" = "$1" ] && return 0; done; return 1; }

if [ ! -d "$sub" ]; then
  note "grade: the submission directory $(printable "$sub") does not exist; every exercise is graded as the stub"
fi
# Few processes (make grade must stay quick): the checks are shell tests, and sizes and contents
# are read by one stat and one sha256sum for all files.
froms=()
dirs=()
for rel in "${entries[@]}"; do
  p=${place[$rel]}
  src=$sub/$p$rel
  why=
  if is_ambiguous "$rel"; then
    why=ambiguous
  elif link=$(link_in "$p${rel%%/*}"); then
    why="$link/ is a symbolic link"
  elif [ -L "$src" ]; then
    why="it is a symbolic link"
  elif [ ! -e "$src" ]; then
    why=missing
  elif [ ! -f "$src" ]; then
    why="it is not a regular file"
  fi
  if [ -n "$why" ]; then
    [ "$why" = missing ] && [ -d "$sub" ] && why="it is missing from the submission"
    [ "$why" = missing ] || [ "$why" = ambiguous ] ||
      note "grade: $rel: $why; graded as the kit's stub (its exercises score 0)"
    froms+=("$stubs/$rel")
  else
    froms+=("$src")
    wanted[$p$rel]=1
  fi
  # its folders are the submission's own (not listed as ignored)
  q=$p${rel%/*}
  while [ -n "$q" ]; do wanted[$q]=1; [[ $q == */* ]] && q=${q%/*} || q=; done
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
    # a kit header beside the files (labNN/labNN.h under any of the places): compared below
    hrel=$(sed -nE 's#^(.*/)?(lab[0-9][0-9]/lab[0-9][0-9](_kernels)?\.h)$#\2#p' <<<"$rel")
    if [ -n "$hrel" ] && [ -f "$p" ] && [ ! -L "$p" ] && [ ! -L "${p%/*}" ] &&
      [ -f "$B/grade-include/kit/labs/$hrel" ]; then
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
    for rel in "${heads[@]}"; do files+=("$sub/$rel" "$B/grade-include/kit/labs/$(sed -E 's#^(.*/)?(lab[0-9][0-9]/[^/]+)$#\2#' <<<"$rel")"); done
    while read -r h f; do hh[${f#\*}]=$h; done < <(sha256sum -- "${files[@]}" 2>/dev/null)
    for rel in "${heads[@]}"; do
      k=$(sed -E 's#^(.*/)?(lab[0-9][0-9]/[^/]+)$#\2#' <<<"$rel")
      [ "${hh[$sub/$rel]:-x}" = "${hh[$B/grade-include/kit/labs/$k]:-y}" ] ||
        note "grade: ignored: $(printable "$rel") differs from the kit's; the grade uses the kit's own header"
    done
  fi
fi
mv -f "$notes.tmp" "$notes"
