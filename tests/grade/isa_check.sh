#!/usr/bin/env bash
# isa_check.sh RUNNER... — a runner built for a grading fleet runs on any x86-64 machine of
# the last decade: the code the kit compiled into it uses no instruction beyond x86-64-v2
# (SSE4.2, POPCNT: Nehalem, 2008, and later). Gradescope builds the image on one machine and
# grades on others; a runner built there with -march=native dies on a grading machine without
# that machine's AVX-512 with an illegal instruction, and every test reads "broken_test"
# (docs/instructor-guide.md, the recipe's setup.sh runs this).
#
# The linker's map beside each runner (DIR/.NAME.map, written by grade.mk's runner_link) says
# which input each address range came from; objdump -d disassembles the runner as linked
# (stripped) over the ranges of the kit's own objects (those confined.sh copied in to link).
# Flagged there: AVX and later (a %ymm, %zmm or %k mask register, any VEX/EVEX "v" mnemonic
# such as vmovss or vfmadd231ps, the AVX-512 mask instructions), BMI1/BMI2, LZCNT, MOVBE, ADX.
# The system's static libraries (glibc, libm, libgomp, OpenBLAS) are not checked: they choose
# their AVX paths at run time from the CPU they find (glibc's ifuncs, OpenBLAS's DYNAMIC_ARCH).
# TZCNT is not flagged: for baseline x86-64 GCC writes `rep bsf`, which objdump shows as tzcnt
# and older CPUs run as bsf.
# Exit 0: every runner clean; 1: a flagged instruction (the first few shown, with their object);
# 2: no objdump, no map, or a map without the kit's objects (the check could not run).
set -uo pipefail
isa=x86-64-v2
if ! command -v objdump >/dev/null; then
  echo "isa_check: objdump (binutils) is missing: cannot check the runners" >&2
  exit 2
fi
t=$(mktemp -d "${TMPDIR:-/tmp}/isa_check.XXXXXX") || exit 2
trap 'rm -rf "$t"' EXIT
rc=0
for runner in "$@"; do
  map=$(dirname "$runner")/.$(basename "$runner").map
  if [ ! -f "$map" ]; then
    echo "isa_check: $runner: no linker map ($map); relink it with make grade-build" >&2
    rc=2
    continue
  fi
  # the map's input sections, "START END FILE" in address order (decimal: mawk has no
  # strtonum, and addresses fit a double exactly). A map line is "[.section] 0xADDR 0xSIZE
  # FILE"; a long section name puts the rest on the next line.
  awk '
    function hex(t,   i, v) {
      sub(/^0x/, "", t); v = 0
      for (i = 1; i <= length(t); i++) v = v * 16 + index("0123456789abcdef", substr(t, i, 1)) - 1
      return v
    }
    /^Linker script and memory map/ { inmap = 1 }
    inmap {
      n = split($0, f, /[ \t]+/)
      for (i = 1; i <= n - 2; i++)
        if (f[i] ~ /^0x[0-9a-f]+$/ && f[i + 1] ~ /^0x[0-9a-f]+$/ && f[i + 2] !~ /^0x/ && f[i + 2] != "") {
          a = hex(f[i]); s = hex(f[i + 1])
          if (a > 0 && s > 0) printf "%.0f %.0f %s\n", a, a + s, f[i + 2]
          break
        }
    }' "$map" | sort -n -k1,1 >"$t/sections"
  # the kit's sections merged into runs: the only ranges disassembled (a runner is ~25 MB,
  # mostly OpenBLAS's kernels for every CPU)
  awk '
    { kit = ($3 ~ /attention-lab-cc\./) }
    kit && open && $1 >= hi { if ($2 > hi) hi = $2; next }
    kit { if (open) printf "%.0f %.0f\n", lo, hi; lo = $1; hi = $2; open = 1; next }
    open && $1 < hi { next } # an entry nested in the run
    { if (open) printf "%.0f %.0f\n", lo, hi; open = 0 }
    END { if (open) printf "%.0f %.0f\n", lo, hi }' "$t/sections" >"$t/runs"
  if [ ! -s "$t/runs" ]; then
    echo "isa_check: $runner: its map names none of the kit's objects (not linked by grade.mk?)" >&2
    rc=2
    continue
  fi
  out=$(while read -r lo hi; do
      objdump -d --no-show-raw-insn --start-address="$lo" --stop-address="$hi" "$runner"
    done <"$t/runs" | awk -v isa=$isa -v runner="$runner" '
    function hex(t,   i, v) {
      v = 0
      for (i = 1; i <= length(t); i++) v = v * 16 + index("0123456789abcdef", substr(t, i, 1)) - 1
      return v
    }
    NR == FNR { if ($3 ~ /attention-lab-cc\./) { n++; lo[n] = $1; hi[n] = $2; src[n] = $3 }; next }
    # an instruction line: "  401d40:\tmnemonic operands"
    /^ *[0-9a-f]+:\t/ {
      insn = $0; sub(/^ *[0-9a-f]+:\t/, "", insn)
      split(insn, w, /[ \t]+/); m = w[1]
      if (m ~ /^(rep|repz|repnz|lock|notrack|bnd|data16|cs|ds|addr32)$/) m = w[2]
      total++
      why = ""
      if (insn ~ /%[yz]mm[0-9]/) why = "a 256/512-bit register"
      else if (insn ~ /%k[0-7]([^0-9]|$)/) why = "an AVX-512 mask register"
      else if (m ~ /^v/ && m !~ /^(verr|verw|vmcall|vmlaunch|vmresume|vmxon|vmxoff|vmread|vmwrite|vmptrld|vmptrst|vmclear|vmfunc)$/) why = "AVX (VEX/EVEX)"
      else if (m ~ /^k(mov|and|andn|or|xor|xnor|not|test|ortest|shiftl|shiftr|add|unpck)[bwdq]/) why = "AVX-512 mask"
      else if (m ~ /^(andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx)$/) why = "BMI"
      else if (m ~ /^(lzcnt|movbe|adcx|adox)$/) why = m
      if (why == "") next
      bad++
      if (bad <= 5) {
        a = hex(substr($1, 1, length($1) - 1)); from = "?"
        for (k = 1; k <= n; k++) if (a >= lo[k] && a < hi[k]) { from = src[k]; break }
        sub(/.*attention-lab-cc\.[^\/]*\/[0-9]+-/, "", from) # confined.sh names inputs N-NAME
        ex = ex sprintf("\n  %s %s (%s; from %s)", $1, insn, why, from)
      }
    }
    END {
      if (bad) {
        printf "FAIL %s: %d instructions beyond %s in code the kit compiled (built with -march=native, or a -m flag?), e.g.:%s\n", runner, bad, isa, ex
        exit 1
      }
      if (total < 1000) { printf "FAIL %s: only %d instructions of the kit found\n", runner, total; exit 1 }
      printf "ok %s: code the kit compiled uses %s only (%d instructions)\n", runner, isa, total
    }' "$t/sections" -)
  s=$?
  echo "isa_check: $out"
  [ $s = 0 ] || rc=1
done
exit $rc
