#!/usr/bin/env bash
# device_check.sh SRC OBJ [SKIP...] — a kernel exercise's object (SRC: labNN/FILE.cu, as the
# student named it, for the messages) may reference only what device code and its launcher
# can: the symbols of tests/grade/device_symbols.txt (the emulator's CUDA, device math, printf,
# the C++ runtime of a launch). In the emulator a kernel is host C++ in the runner, which also
# holds the kit's host code for the composition tests (the CPU backend, the ops, gemm): a
# "kernel" that calls it gets the right numbers and would not compile for a GPU.
# Prints one line per other undefined symbol (SKIP: names already reported) and exits 1 if any.
# KIT_HEADERS (a colon-separated list of directories, optional): where the kit's headers are,
# to say which one declares a refused kit function.
set -u
here=$(dirname "$0")
src=$1 obj=$2
shift 2
skip=" $* "
bad=0
mapfile -t allowed < <(grep -vE '^[[:space:]]*(#|$)' "$here/device_symbols.txt")
while IFS= read -r sym; do
  [ -n "$sym" ] || continue
  case $skip in *" $sym "*) continue ;; esac
  ok=0
  for pat in "${allowed[@]}"; do
    # shellcheck disable=SC2053 # a glob on purpose (device_symbols.txt's `*` lines)
    if [[ $sym == $pat ]]; then ok=1 && break; fi
  done
  [ $ok = 1 ] && continue
  what="host code, not a device function"
  if [[ $sym =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && [ -n "${KIT_HEADERS:-}" ]; then
    IFS=: read -ra dirs <<<"$KIT_HEADERS"
    for d in "${dirs[@]}"; do
      # the header that declares it (a call's or an extern's line), else any that names it
      h=$({ grep -rlE --include='*.h' -- "(\\b$sym *\\(|^extern .*\\b$sym\\b)" "$d"
        grep -rlw --include='*.h' -- "$sym" "$d"; } 2>/dev/null | head -n 1)
      [ -n "$h" ] && what="host code of the kit (${d##*/}/${h#"$d"/})" && break
    done
  fi
  echo "grade: $src uses $sym: a kernel can only call device functions, and $sym is $what" \
    "(a kernel exercise may use the CUDA of cuda/al_cuda.h, device math such as expf, printf:" \
    "tests/grade/device_symbols.txt)"
  bad=1
done < <(nm -u -P "$obj" | awk '{print $1}' | c++filt -p | LC_ALL=C sort -u)
exit $bad
