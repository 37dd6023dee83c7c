#!/usr/bin/env bash
# gpu_arch: the nvcc build carries machine code for every card a course meets and PTX for the
# newest (Makefile, CUDA_ARCH): sm_75 (T4, RTX 20), sm_80 (A100; RTX 30/40 run it), sm_90
# (H100), PTX compute_90 (RTX 50 and later compile it at start). The list is the issue's
# (#34), not read from the Makefile, so a Makefile that drops a card fails here. Checked on
# every nvcc object and on lab06 as linked, by cuobjdump where the toolkit has it and by
# tests/tools/fatbin_list.py (the fatbin's own headers) always; ptxas's report of every object
# holds each kernel for each sm (cuda/nvcc_check.sh ran its local-memory check on all three);
# CUDA_ARCH=86 builds that one card. No GPU needed. Reads B (default build) and VARIANT.
# Run from the repository root: bash tests/suites/gpu_arch.sh.
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin gpu_arch
B=${B:-build}
VARIANT=${VARIANT:-solutions}
mk() { env -u MAKEFLAGS -u MFLAGS MAKELEVEL=1 make --no-print-directory "$@"; }

if ! env -u MAKEFLAGS -u MFLAGS MAKELEVEL=0 make -n --no-print-directory B="$tmp/probe" \
  "$tmp/probe/obj/cuda/softmax.o" 2>/dev/null | grep -q 'nvcc: yes ('; then
  skip "no nvcc with CUDA's libraries here, or NO_CUDA=1: no GPU code to list"
  suite_end
  exit $?
fi
want='ELF sm_75
ELF sm_80
ELF sm_90
PTX sm_90'

# the program a student runs: ./lab06 in the default tree, $B/bin/lab06 in another
if [ "$B" = build ]; then prog=lab06; else prog=$B/bin/lab06; fi
if ! mk -s B="$B" VARIANT="$VARIANT" "$prog" >"$tmp/build.log" 2>&1; then
  bad "make $prog failed:"
  tail -20 "$tmp/build.log"
  suite_end
  exit 1
fi
objs=$(ls "$B"/obj/cuda/*.o "$B/$VARIANT/$VARIANT"/lab*/*.o 2>/dev/null | grep -v '/nocuda\.o$' |
  while read -r o; do [ -f "$o.ptxas" ] && echo "$o"; done)
n=$(echo "$objs" | grep -c .)
if [ "$n" -lt 12 ]; then
  bad "only $n nvcc objects (with a ptxas report) under $B: expected cuda/*.cu and the kernel exercises"
fi

# every object and the program: exactly the wanted images
listed() { python3 tests/tools/fatbin_list.py "$1" 2>&1 | sed "s|^$1: ||"; }
nbad=0
for f in $objs "$prog"; do
  got=$(listed "$f")
  if [ "$got" != "$want" ]; then
    nbad=$((nbad + 1))
    [ $nbad -le 3 ] && echo "  $f carries: $(echo "$got" | tr '\n' ',')"
  fi
done
if [ $nbad = 0 ]; then
  ok "$n nvcc objects and $prog each carry ELF sm_75, sm_80, sm_90 and PTX sm_90 ($(listed "$prog" | tr '\n' ',' | sed 's/,$//'))"
else
  bad "$nbad of $((n + 1)) files do not carry exactly ELF sm_75, sm_80, sm_90 and PTX sm_90"
fi

# cuobjdump, where the toolkit has one, lists the same for the program
nvcc_bin=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
cuobjdump=$(command -v cuobjdump || ls "$(dirname "$(readlink -f "$nvcc_bin")")/cuobjdump" 2>/dev/null)
if [ -n "$cuobjdump" ] && [ -x "$cuobjdump" ]; then
  dump=$("$cuobjdump" --list-elf --list-ptx "$prog" 2>&1 |
    sed -nE 's/^(ELF|PTX) file +[0-9]+: .*\.(sm_[0-9]+a?)\.(cubin|ptx)$/\1 \2/p' | sort -u)
  if [ "$dump" = "$want" ]; then ok "cuobjdump --list-elf --list-ptx $prog: the same four images"
  else bad "cuobjdump lists for $prog: $(echo "$dump" | tr '\n' ',') (fatbin_list.py: $(listed "$prog" | tr '\n' ','))"; fi
else
  skip "cuobjdump: not in this toolkit (checked by tests/tools/fatbin_list.py only)"
fi

# ptxas ran for each sm: every kernel of every object is in its report once per sm (the report
# is what nvcc_check.sh's local-memory check reads)
nbad=0 kernels=0
for o in $objs; do
  r=$o.ptxas
  k=$(awk '{print $1}' "$r" | sort -u | wc -l)
  kernels=$((kernels + k))
  for sm in sm_75 sm_80 sm_90; do
    if [ "$(awk -v sm=$sm '$2 == sm {print $1}' "$r" | sort -u | wc -l)" != "$k" ]; then
      nbad=$((nbad + 1)); echo "  $r: not every one of its $k kernels has a $sm line"
    fi
  done
done
if [ $nbad = 0 ] && [ $kernels -gt 50 ]; then
  ok "ptxas reports: each of $kernels kernels compiled and checked for local memory on sm_75, sm_80 and sm_90"
else
  bad "ptxas reports: $nbad gaps, $kernels kernels"
fi

# CUDA_ARCH names the cards: 86 alone is SASS and PTX for 86 only (a make -n, nothing built)
line=$(mk -n B="$tmp/one" CUDA_ARCH=86 "$tmp/one/obj/cuda/softmax.o" 2>/dev/null | grep nvcc_check.sh)
if echo "$line" | grep -qF -- '-gencode arch=compute_86,code=sm_86 -gencode arch=compute_86,code=compute_86' &&
  ! echo "$line" | grep -qE 'sm_(75|80|90)'; then
  ok "make CUDA_ARCH=86: nvcc builds sm_86 and compute_86 only"
else
  bad "make CUDA_ARCH=86: $line"
fi
suite_end
