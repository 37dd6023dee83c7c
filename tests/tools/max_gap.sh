#!/usr/bin/env bash
# max_gap.sh GAPFILE LOG COMMAND... — run COMMAND with its output (stdout and stderr) in LOG,
# timing each line as it arrives, and write to GAPFILE the longest silence: "SECONDS LINE",
# the seconds between two lines (or from the start to the first line, or from the last line
# to the end) and the line that ended it ("(end)" for the end). Exits with COMMAND's status.
# For the tests that no long step of the kit is silent for more than 10 s (grading.sh, 3).
set -u
gapfile=$1 log=$2
shift 2
start=$EPOCHREALTIME
: >"$log"
"$@" 2>&1 | {
  prev=$start max=0 at="(no output)"
  while IFS= read -r line; do
    now=$EPOCHREALTIME
    printf '%s\n' "$line" >>"$log"
    gap=$(awk -v a="$prev" -v b="$now" 'BEGIN {printf "%.1f", b - a}')
    if awk -v g="$gap" -v m="$max" 'BEGIN {exit !(g > m)}'; then max=$gap at=$line; fi
    prev=$now
  done
  gap=$(awk -v a="$prev" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}')
  if awk -v g="$gap" -v m="$max" 'BEGIN {exit !(g > m)}'; then max=$gap at="(end)"; fi
  printf '%s %s\n' "$max" "$at" >"$gapfile"
}
exit "${PIPESTATUS[0]}"
