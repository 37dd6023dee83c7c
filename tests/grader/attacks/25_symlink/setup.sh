#!/usr/bin/env bash
# Attack 25 (issue 25, the manifest): the exercise file is a symbolic link to the solution, and
# a whole lab directory is a link to solutions/. Reading it "as bytes" through the link would
# hand the grader the kit's own answer. Expected: links are refused (graded as the stub, named).
set -eu
sub=$1 root=$2
rm -f "$sub/lab02/masked_softmax.c"
ln -s "$root/solutions/lab02/masked_softmax.c" "$sub/lab02/masked_softmax.c"
rm -rf "$sub/lab05"
ln -s "$root/solutions/lab05" "$sub/lab05"
