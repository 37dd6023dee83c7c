#!/usr/bin/env bash
# run_lab.sh — run one lab command and print one table row: wall time, peak RSS and, with
# --unit, the throughput the lab printed last (e.g. "51234.5 tokens/sec").
#
#   tests/bench/run_lab.sh --header
#   tests/bench/run_lab.sh [--unit UNIT] LABEL -- COMMAND [ARGS...]
#
# --unit tokens/sec picks the last "NUMBER tokens/sec" in the command's output (any unit text
# works: images/s, s/epoch). The command's output goes to a log (RUN_LAB_LOG, default a temp
# file), not the table; on failure the row says FAILED and the log's tail goes to stderr.
# Peak RSS comes from GNU time (/usr/bin/time, Debian package `time`); without it the column
# says n/a. Figures are not rendered (AL_NO_GNUPLOT=1 unless set): gnuplot is not the lab.
# Exit status: the command's.
set -u

row() { printf '%-34s %9s %12s  %s\n' "$1" "$2" "$3" "$4"; }

if [ "${1:-}" = "--header" ]; then
  row "lab run" "wall s" "peak RSS MB" "throughput"
  exit 0
fi

unit=""
if [ "${1:-}" = "--unit" ]; then
  unit="${2:?run_lab.sh: --unit needs a value, e.g. tokens/sec}"
  shift 2
fi
label="${1:?usage: run_lab.sh [--unit UNIT] LABEL -- COMMAND [ARGS...]}"
shift
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "run_lab.sh: no command given for '$label'" >&2; exit 2; }

log="${RUN_LAB_LOG:-$(mktemp "${TMPDIR:-/tmp}/run_lab.XXXXXX")}"
tfile="$(mktemp "${TMPDIR:-/tmp}/run_lab_time.XXXXXX")"
trap 'rm -f "$tfile"; [ -n "${RUN_LAB_LOG:-}" ] || rm -f "$log"' EXIT
export AL_NO_GNUPLOT="${AL_NO_GNUPLOT:-1}"

start=$(date +%s.%N)
if [ -x /usr/bin/time ] && /usr/bin/time -f '' true 2>/dev/null; then
  /usr/bin/time -f '%M' -o "$tfile" "$@" >"$log" 2>&1
  rc=$?
  rss_kb=$(tail -n 1 "$tfile")
else
  "$@" >"$log" 2>&1
  rc=$?
  rss_kb=""
fi
end=$(date +%s.%N)

wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
rss="n/a"
[[ "$rss_kb" =~ ^[0-9]+$ ]] && rss=$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')

metric=""
if [ -n "$unit" ]; then
  # the lab may redraw its progress line with \r: split on those too
  num=$(tr '\r' '\n' <"$log" | grep -oE "[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)? *${unit}" | tail -n 1 |
    grep -oE '^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?')
  metric="${num:-?} $unit"
  [ -n "$num" ] || metric="(no '$unit' in the output)"
fi

if [ $rc -ne 0 ]; then
  row "$label" "$wall" "$rss" "FAILED (exit $rc)"
  echo "run_lab.sh: '$*' exited with $rc; last lines of its output:" >&2
  tail -n 15 "$log" >&2
else
  row "$label" "$wall" "$rss" "$metric"
fi
exit $rc
