#!/usr/bin/env bash
# progress.sh WHAT LOG COMMAND... — run COMMAND with its output in LOG and, while it runs, say
# what it is doing: after PROGRESS_FIRST seconds (default 5: what ran before this script, such
# as make reading its makefiles, counts too), then every PROGRESS_EVERY (default 8), a line
# "WHAT (N s): <the log's last line>" — so that no long step of the kit (make grade's first
# build, make handout, make deps) sits silent for more than 10 s. A command done within the
# first interval prints nothing.
# Exits with COMMAND's status; the log keeps its whole output.
set -u
what=$1 log=$2
shift 2
first=${PROGRESS_FIRST:-5} every=${PROGRESS_EVERY:-8}
start=$SECONDS
"$@" >"$log" 2>&1 &
pid=$!
# The ticker: a subshell whose sleep is killed with it (an orphaned sleep would hold the
# terminal's pipe open after the command ends).
(
  s= pause=$first
  trap '[ -z "$s" ] || kill "$s" 2>/dev/null; exit 0' TERM
  while :; do
    sleep "$pause" &
    pause=$every
    s=$!
    wait "$s"
    # the last line, without a compiler's flags: what is built, cut to the terminal's width
    last=$(tail -n 1 "$log" 2>/dev/null | tr -d '\r' | tr -c '[:print:]' ' ')
    case $last in *" -o "*) o=${last##* -o } && last="building ${o%% *}" ;; esac
    [ ${#last} -le 90 ] || last="${last:0:87}..."
    printf '%s (%d s)%s\n' "$what" $((SECONDS - start)) "${last:+: $last}"
  done
) &
tick=$!
wait "$pid"
rc=$?
kill "$tick" 2>/dev/null
wait "$tick" 2>/dev/null
exit "$rc"
