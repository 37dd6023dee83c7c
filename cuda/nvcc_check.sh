#!/usr/bin/env bash
# nvcc_check.sh NVCC SRC OBJ [flags...] — compile one .cu with warnings as errors and ptxas's
# register/spill report (kept in OBJ.ptxas), then fail if a kernel uses local memory (a stack
# frame or spills) on any of the architectures the flags name (ptxas runs once per sm_XY: a
# kernel may spill on sm_75 and not on sm_90) unless the .cu file says why it is accepted, in a
# comment of the form
#   /* local memory accepted (kernel_name): reason */
set -euo pipefail
nvcc=$1 src=$2 obj=$3; shift 3
report=$obj.ptxas
"$nvcc" "$@" -Werror all-warnings -Xptxas -v -c "$src" -o "$obj" 2>"$report.raw" || {
  grep -v '^ptxas info' "$report.raw" >&2; rm -f "$obj"; exit 1; }
# one line per kernel and architecture: name, sm_XY, registers, stack frame, spill stores, spill
# loads ("Compiling entry function 'NAME' for 'sm_XY'")
awk '
  /Compiling entry function/ { match($0, /'"'"'[^'"'"']+'"'"'/); fn = substr($0, RSTART + 1, RLENGTH - 2)
                               arch = "sm_?"; if (match($0, /for '"'"'sm_[0-9a-z]+'"'"'/)) arch = substr($0, RSTART + 5, RLENGTH - 6) }
  /bytes stack frame/ { stack = $1; spills = $5; loads = $9 }
  /Used [0-9]+ registers/ { match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART + 5, RLENGTH - 15)
                            print fn, arch, regs, stack, spills, loads }
' "$report.raw" | c++filt | sed -E 's/\(.*\)//' >"$report"
rm -f "$report.raw"
bad=0
while read -r fn arch regs stack spills loads; do
  if [ "$stack" != 0 ] || [ "$spills" != 0 ] || [ "$loads" != 0 ]; then
    if ! grep -q "local memory accepted ($fn)" "$src"; then
      echo "$src: kernel $fn uses local memory on $arch ($stack bytes stack frame, $spills bytes" \
        "spill stores, $loads bytes spill loads, $regs registers): keep its arrays in registers, or" \
        "say why it is accepted: /* local memory accepted ($fn): reason */" >&2
      bad=1
    fi
  fi
done <"$report"
if [ $bad = 1 ]; then rm -f "$obj"; exit 1; fi
