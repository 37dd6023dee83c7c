#!/usr/bin/env bash
# Attack 19 (issue 25, route 1): file names that are shell code. The old grade.mk took every
# labNN/*.c of the submission and pasted its name unquoted into compile, objcopy and link
# recipes, so a name holding `...` or $(...) ran its command at every step (as root under the
# Gradescope recipe). Each file here holds a correct masked_softmax, so a build that takes any
# of them would also score. setup.sh SUBDIR ROOT makes them (git keeps no such names well).
# Expected: none is compiled or run (the marker file below never appears), each is listed as
# ignored, and the submission scores what the stubs score. (A name cannot hold '/': the commands
# write their marker into the directory make runs in, the kit's root.)
set -eu
sub=$1 root=$2
mark=attention-lab-attack19-ran
body=$(cat "$root/solutions/lab02/masked_softmax.c")
for name in '`touch attention-lab-attack19-ran`.c' \
  '$(touch attention-lab-attack19-ran).c' 'masked softmax.c' '-rf masked_softmax.c' \
  $'masked_softmax.c\n.c' $'\e[31mred.c' '--help.c' "x';touch \$HOME.c"; do
  printf '%s\n' "$body" >"$sub/lab02/$name"
done
mkdir -p "$sub/\$(touch $mark)"
printf '%s\n' "$body" >"$sub/\$(touch $mark)/masked_softmax.c"
