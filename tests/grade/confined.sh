#!/usr/bin/env bash
# confined.sh — compile or link submission code unprivileged and within limits.
#
#   confined.sh compile B STAGED OBJ NOTE STUB -- CC CFLAGS...
#       STAGED (OUT/stage/labNN/FILE.c) compiled alone into OBJ. The file is preprocessed first
#       and the stream checked as it is written (include_check.awk): every file it opens must be
#       one of the kit's headers (B/grade-include/) or a system header, else the compile stops
#       there with the file and line. The object must pass check_submission.sh, and is rewritten
#       to export only exercise names (objcopy --keep-global-symbols). A kernel exercise (.cu) is
#       compiled as C++ against the CUDA emulator (its headers are kit headers: B/grade-include/
#       cuda/), may reference only device symbols (device_check.sh), and loses ThreadSanitizer's
#       module constructor, the one the emulator's instrumentation adds (it calls __tsan_init,
#       which the emulator leaves empty), so that it too has no constructor. Any failure — a
#       compile error, a refused include, a limit — leaves STUB (the kit's stub) as OBJ and the
#       reason in NOTE, so the file's exercises score 0 and the rest is graded; success removes
#       NOTE. A .cu is standard CUDA: cuda/emu_rewrite.awk (confined too, line for line) first
#       turns its launches and __shared__ declarations into the emulator's forms; what it cannot
#       read is refused with its line.
#       With VEC_INFO=1 in the environment (grade.mk: the kernel track's C loops), a compiled
#       file is also compiled for AVX2 (-O3 -march=x86-64-v3, confined as above, from the same
#       checked text) and NOTE's sibling NAME.vec.txt says, for information, which of its loops
#       GCC vectorized and GCC's reason where it did not (vec_info.awk). Not graded.
#   confined.sh link OUT -- CC ARGS...
#       links a runner; the input files are copied in, so the linker reads nothing else of ours.
#       The linker's map (which input each address range of code came from) is left at
#       OUT.map: tests/grade/isa_check.sh reads it.
#
# Both run in a fresh directory, with an empty environment, stdin /dev/null, and limits:
# CPU 60 s, address space 1 GiB, files 64 MiB, 1 MiB of log, 120 s of wall time. As root the
# work runs as nobody (setpriv): no submission code is ever compiled or linked as root, however
# make was started; root without setpriv refuses.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CPU_S=60
MEM_KIB=$((1 << 20))
FSIZE_KIB=$((64 << 10))
LOG_BYTES=$((1 << 20))
WALL_S=120

mode=$1
shift
t=$(mktemp -d "${TMPDIR:-/tmp}/attention-lab-cc.XXXXXX") || exit 2
trap 'rm -rf "$t"' EXIT
run_as=()
if [ "$(id -u)" = 0 ]; then
  if ! command -v setpriv >/dev/null; then
    echo "grade: make grade runs as root and setpriv (util-linux) is missing: submission code" \
      "is never compiled as root; install util-linux or run make grade as an ordinary user" >&2
    exit 2
  fi
  run_as=(setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs)
fi
cp "$here/include_check.awk" "$here/check_submission.sh" "$here/exercise_symbols.txt" \
  "$here/kit_answers.txt" "$here/keep_symbols.sh" "$here/device_check.sh" \
  "$here/device_symbols.txt" "$here/c_only.txt" "$here/../../cuda/emu_rewrite.awk" "$t/"
mkdir -p "$t/w"

# Run "$@" in $t/w as the unprivileged user, with the limits; its stdout+stderr go to $t/log
# (at most LOG_BYTES). Returns its status (137: killed at the wall-time limit).
confine() {
  [ ${#run_as[@]} -eq 0 ] || chown -R 65534:65534 "$t"
  local body='cd "$T/w" || exit 2
ulimit -c 0 && ulimit -t '$CPU_S' && ulimit -v '$MEM_KIB' && ulimit -f '$FSIZE_KIB' || exit 2
"$@"'
  timeout -s KILL $WALL_S "${run_as[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin LC_ALL=C \
    T="$t" bash -c "$body" confined "$@" </dev/null 2>&1 | head -c $LOG_BYTES >"$t/log"
  local s=${PIPESTATUS[0]}
  [ "$(stat -c %s "$t/log")" -lt $LOG_BYTES ] || echo "[log cut at 1 MiB]" >>"$t/log"
  return "$s"
}

# Why a confined step failed, in one line, from its status and log.
limit_reason() { # status
  local s=$1
  if [ "$s" = 137 ] && ! grep -qaE 'memory|Killed signal' "$t/log"; then
    echo "over the wall-time limit ($WALL_S s)"
  elif grep -qaE 'CPU time limit exceeded' "$t/log" || [ "$s" = 152 ]; then
    echo "over the CPU time limit ($CPU_S s)"
  elif grep -qaE 'memory exhausted|Cannot allocate memory|out of memory|Killed signal' "$t/log"; then
    echo "over the memory limit (1 GiB)"
  elif grep -qaE 'File size limit exceeded' "$t/log" || [ "$s" = 153 ]; then
    echo "over the file size limit (64 MiB)"
  elif [ "$(stat -c %s "$t/log")" -ge $LOG_BYTES ]; then
    echo "printed more than 1 MiB of diagnostics"
  fi
}

if [ "$mode" = link ]; then
  out=$1
  shift 2 # OUT --
  args=()
  n=0
  for a in "$@"; do # inputs copied in (kit-chosen names only: objects and archives)
    if [ -f "$a" ] && [ "$a" != "$1" ]; then
      n=$((n + 1))
      cp "$a" "$t/$n-${a##*/}"
      args+=("$t/$n-${a##*/}")
    else
      args+=("$a")
    fi
  done
  confine "${args[@]}" -o "$t/w/out" -Wl,-Map="$t/w/out.map"
  s=$?
  if [ $s -ne 0 ]; then
    r=$(limit_reason $s)
    echo "grade: linking $out failed${r:+ ($r)}:" >&2
    head -n 40 "$t/log" >&2
    exit 1
  fi
  # 0711: nobody (a runner under the sandbox) may execute a runner, never read one (a hidden
  # runner holds the hidden tests)
  cat "$t/w/out" >"$out.tmp" && chmod 711 "$out.tmp" && mv -f "$out.tmp" "$out" &&
    { [ ! -f "$t/w/out.map" ] || cp "$t/w/out.map" "$out.map"; }
  exit
fi

# ------------------------------------------------------------------ compile
B=$1 staged=$2 obj=$3 note=$4 stub=$5
shift 6 # ... --
vec_note=${note%.txt}.vec.txt
rm -f "$vec_note"
rel=${staged%/*}
rel=${rel##*/}/${staged##*/} # labNN/FILE.c
cc=$1
# GRADE_OBJ_CACHE (make grade-all): this compile's outcome stored by what determines it (the
# file's name and bytes, the command, VEC_INFO, the stub; the directory itself is named after
# the kit's headers, these scripts and the compiler, by grade_all.sh), and reused when a file
# comes again byte for byte. Written here, never by the confined user.
cache_entry=
if [ -n "${GRADE_OBJ_CACHE:-}" ] && [ -d "$GRADE_OBJ_CACHE" ]; then
  key=$({ printf '%s\0%s\0' "$rel" "${VEC_INFO:-}"; printf '%s\0' "$@"; cat -- "$staged" "$stub"; } |
    sha256sum | cut -c1-40)
  cache_entry=$GRADE_OBJ_CACHE/$key
  if [ -f "$cache_entry.o" ]; then
    mkdir -p "$(dirname "$obj")" "$(dirname "$note")"
    cat "$cache_entry.o" >"$obj.tmp" && mv -f "$obj.tmp" "$obj"
    if [ -f "$cache_entry.note" ]; then cat "$cache_entry.note" >"$note.tmp" && mv -f "$note.tmp" "$note"; else rm -f "$note"; fi
    [ ! -f "$cache_entry.vec" ] || { cat "$cache_entry.vec" >"$vec_note.tmp" && mv -f "$vec_note.tmp" "$vec_note"; }
    exit 0
  fi
fi
# store OBJ, NOTE (when there is one) and the vectorizer's note under the entry (tmp + rename:
# another submission's compile may store the same entry at once)
cache_store() {
  [ -n "$cache_entry" ] || return 0
  local tmp=$cache_entry.$$
  if [ -f "$note" ]; then cp -f "$note" "$tmp.note" && mv -f "$tmp.note" "$cache_entry.note"; fi
  if [ -f "$vec_note" ]; then cp -f "$vec_note" "$tmp.vec" && mv -f "$tmp.vec" "$cache_entry.vec"; fi
  cp -f "$obj" "$tmp.o" && mv -f "$tmp.o" "$cache_entry.o"
}

inc=$(cd "$B/grade-include" && pwd)
if [ ${#run_as[@]} -gt 0 ] && ! "${run_as[@]}" test -r "$inc/kit/labs" -a -x "$inc/kit/labs"; then
  echo "grade: user nobody cannot read the kit's headers in $inc (submission code is compiled" \
    "as nobody when make runs as root): make the directories above it world-searchable" \
    "(chmod a+rX), as the Gradescope recipe does for /autograder/source" >&2
  exit 2
fi
# the system's include directories, as this compiler reports them
sys=$("$cc" -E -Wp,-v -xc /dev/null 2>&1 >/dev/null | awk '/^ \//{printf ":%s", $1}')
mkdir -p "$t/w/${rel%/*}"
cat -- "$staged" >"$t/w/$rel"
o=${rel%.*}.o

# One step, confined: preprocess (checked as a stream), compile the checked text, check the
# object's symbols and sections, make non-exercise globals local.
step='in=$1; o=$2; shift 2
if [ "$PPLANG" = c++-cpp-output ]; then
  awk -v F="$in" -f "$T/emu_rewrite.awk" "$in" >"$T/rw.cu" 2>"$T/why" || exit 3
  cat "$T/rw.cu" >"$in"
fi
{ "$@" -I "$INC" -E "$in" 2>&3 | awk -v MAIN="$in" -v CWD="$T/w" -v ALLOW="$ALLOW" \
    -v WHY="$T/why" -f "$T/include_check.awk" >"$T/x.i"
  echo "${PIPESTATUS[*]}" >"$T/pp.status"; } 3>&1
[ -s "$T/why" ] && exit 3
read -r pp awk_s <"$T/pp.status"
[ "$pp" = 0 ] && [ "$awk_s" = 0 ] || exit 1
"$@" -fmax-errors=20 -c -x "$PPLANG" "$T/x.i" -o "$o" || exit 1
if [ "$PPLANG" = c++-cpp-output ]; then
  objcopy -R .init_array.00099 -R .rela.init_array.00099 "$o" || exit 1
fi
bash "$T/check_submission.sh" "$o" || exit 5
bash "$T/keep_symbols.sh" "$o" "$T/exercise_symbols.txt" >"$T/keep.txt" || exit 1
objcopy --keep-global-symbols="$T/keep.txt" "$o" "$o.kept" || exit 1'
pplang=cpp-output
case $rel in *.cu) pplang=c++-cpp-output ;; esac
# KIT_HEADERS: device_check.sh names the kit header that declares a host function a kernel calls
export_env=(INC="$inc/kit/labs" ALLOW="$inc/kit:$inc/common:$inc/cuda$sys" PPLANG=$pplang
  KIT_HEADERS="$inc/common:$inc/cuda")
confine env "${export_env[@]}" bash -c "$step" step "$rel" "$o" "$@"
s=$?
reason=
case $s in
0) ;;
3) reason=$(head -n 1 "$t/why") ;;
5) reason="is refused by the grader's checks:" ;;
*)
  reason=$(limit_reason $s)
  [ -n "$reason" ] || reason="does not compile:"
  [ "$reason" = "does not compile:" ] || reason="is $reason"
  ;;
esac
mkdir -p "$(dirname "$obj")" "$(dirname "$note")"
if [ $s -eq 0 ] && [ -s "$t/w/$o.kept" ]; then
  cat "$t/w/$o.kept" >"$obj.tmp" && mv -f "$obj.tmp" "$obj"
  rm -f "$note"
  if [ "${VEC_INFO:-}" = 1 ]; then
    # the text include_check.awk passed, compiled again for AVX2 with GCC's vectorizer report
    confine "$@" -O3 -march=x86-64-v3 -fopt-info-vec-all="$t/vec.info" -c -x cpp-output \
      "$t/x.i" -o /dev/null
    if [ $? -eq 0 ] && [ -f "$t/vec.info" ]; then
      LC_ALL=C awk -v F="$rel" -f "$here/vec_info.awk" "$t/vec.info" >"$vec_note.tmp" &&
        mv -f "$vec_note.tmp" "$vec_note"
    else
      echo "grade: $rel: the AVX2 vectorization report (information only) could not be made" >"$vec_note"
    fi
  fi
  cache_store
  exit 0
fi
{
  case $reason in
  *:) echo "grade: $rel ${reason%:} (graded as the kit's stub: its exercises score 0):"
      # the checks' own lines, or the compiler's errors (with their context), or the log's head
      { grep -a '^grade: ' "$t/log" || grep -a -A3 -E 'error|Error' "$t/log" ||
        grep -av '^\[log cut' "$t/log"; } | head -n 15 | sed 's/^/  /' ;;
  *) echo "grade: $rel: $reason (graded as the kit's stub: its exercises score 0)" ;;
  esac
} >"$note.tmp"
mv -f "$note.tmp" "$note"
cat "$stub" >"$obj.tmp" && mv -f "$obj.tmp" "$obj"
# a limit hit under load may not come again: only a compile's own verdict is stored
case $reason in *limit*) ;; *) cache_store ;; esac
