#!/usr/bin/env bash
# weave.sh LAB SRC BIN MODE "ARGS" — one lab of `make docs` (docs/docs.mk calls it).
#   MODE yes:   run BIN --out $DOCS_DIR/out/LAB ARGS (gnuplot on), keep its stdout+stderr
#   MODE reuse: weave from $DOCS_DIR/out/LAB/ as the last `yes` run left it
#   MODE no:    prose and code only
# then $DOCS_DIR/LAB.md from SRC with $WEAVE, and LAB.html next to it with pandoc when
# $PANDOC=yes. Environment: WEAVE (the weave tool), PANDOC, DOCS_TIMEOUT (seconds for one run),
# DOCS_DIR (default docs; the test suite weaves into a temporary directory), DOCS_OUT (the
# run's directory under DOCS_DIR, default out; the handout's reference run uses ref),
# DOCS_EXERCISES (where @code reads labs/... and solutions/... files: the build's VARIANT).
# A run that stopped early is woven with $DOCS_DIR/ref/LAB/output.txt (a handout's reference
# run) filling in the output after the stop, when that file is there.
set -u
lab=$1 src=$2 bin=$3 mode=$4 args=$5
: "${WEAVE:?set by docs/docs.mk}"
docs=${DOCS_DIR:-docs}
out=$docs/${DOCS_OUT:-out}/$lab
ref=$docs/ref/$lab
log=$out/output.txt
md=$docs/$lab.md

if [ -z "$src" ] || [ ! -f "$src" ]; then
  echo "docs: $lab: no chapter source found (chapters/NN_*/$lab.c)" >&2
  exit 1
fi

mkdir -p "$docs" || exit 1
# run_limited SECONDS CMD...: GNU timeout, Homebrew's gtimeout, else perl's alarm (macOS has
# perl but no timeout; the alarm survives exec and SIGALRM ends the run: 142, read as 124)
run_limited() {
  if [ -z "${AL_NO_GNU_TIMEOUT:-}" ] && command -v timeout >/dev/null 2>&1; then timeout "$@"
  elif [ -z "${AL_NO_GNU_TIMEOUT:-}" ] && command -v gtimeout >/dev/null 2>&1; then gtimeout "$@"
  elif command -v perl >/dev/null 2>&1; then
    perl -e '$s = shift @ARGV; alarm $s; exec @ARGV or die "$ARGV[0]: $!\n"' "$@"
    local s=$?
    [ $s -eq 142 ] && return 124
    return $s
  else
    echo "docs: neither timeout nor perl found: $lab runs without the ${1} s limit" >&2
    shift
    "$@"
  fi
}
weave_args=()
case $mode in
yes)
  rm -rf "$out"
  mkdir -p "$out" || exit 1
  command="./$lab --out $out${args:+ $args}"
  echo "docs: $lab: running $command"
  start=$(date +%s)
  # shellcheck disable=SC2086  # ARGS is a flag list
  (unset AL_NO_GNUPLOT; run_limited "${DOCS_TIMEOUT:-900}" "$bin" --out "$out" $args) >"$log" 2>&1
  status=$?
  [ $status -eq 124 ] && echo "docs: $lab: stopped after ${DOCS_TIMEOUT:-900} s (DOCS_TIMEOUT)" >&2
  [ $status -ne 0 ] && echo "docs: $lab: the run exited with status $status; the page shows its output up to there" >&2
  printf '%s\n' "$command" >"$out/command.txt"
  printf '%s\n' "$status" >"$out/status.txt"
  echo "docs: $lab: ran in $(($(date +%s) - start)) s"
  weave_args=(--log "$log" --fig-dir "$out" --command "$command" --status "$status")
  ;;
reuse)
  if [ -f "$log" ] && [ -f "$out/command.txt" ]; then
    weave_args=(--log "$log" --fig-dir "$out" --command "$(cat "$out/command.txt")"
      --status "$(cat "$out/status.txt" 2>/dev/null || echo 0)")
  else
    echo "docs: $lab: DOCS_RUN=reuse but $log is missing: weaving prose and code only" \
      "(run make docs once without DOCS_RUN=reuse)" >&2
  fi
  ;;
no) ;;
*)
  echo "docs: $lab: DOCS_RUN must be yes, reuse or no, got '$mode'" >&2
  exit 1
  ;;
esac

if [ "$ref" != "$out" ] && [ -f "$ref/output.txt" ]; then
  weave_args+=(--ref-log "$ref/output.txt" --ref-dir "$ref")
fi
if ! "$WEAVE" doc "$src" --md-dir "$docs" --captions docs/captions.txt \
  ${DOCS_EXERCISES:+--exercises "$DOCS_EXERCISES"} ${DOCS_CLAIMS:+--claims "$DOCS_CLAIMS"} \
  "${weave_args[@]}" >"$md.tmp"; then
  rm -f "$md.tmp"
  echo "docs: $lab: weaving $src failed (the lines above say why)" >&2
  exit 1
fi
mv "$md.tmp" "$md"
echo "docs: wrote $md"

if [ "${PANDOC:-}" = yes ]; then
  title=$(sed -n 's/^# //p' "$md" | head -1)
  # The site's bars: home, previous and next lab (docs/site.sh), above and below the page.
  nav=$(bash docs/site.sh nav "$lab")
  printf '<header class="site"><a href="index.html">attention-lab</a>%s</header>\n' "$nav" >"$docs/.nav_$lab.html"
  printf '<footer class="site"><a href="index.html">all chapters</a>%s</footer>\n' "$nav" >"$docs/.foot_$lab.html"
  [ "$(cd "$docs" && pwd)" = "$(cd docs && pwd)" ] || cp docs/style.css "$docs/style.css"
  # Run next to the .md so the relative figure links stay as the .md has them. MathML needs no
  # script (offline); weave mathml sets \mathrm names upright in Chromium too.
  # A warning is a page shown wrong (TeX pandoc could not convert is printed raw): it fails
  # the build, with pandoc's own words.
  warnings=$docs/.pandoc_$lab.log
  if (cd "$docs" && pandoc --from markdown --to html5 --mathml --standalone --css style.css \
    --include-before-body ".nav_$lab.html" --include-after-body ".foot_$lab.html" \
    --metadata pagetitle="$lab: ${title:-$lab}" -o "$lab.html.tmp" "$lab.md") 2>"$warnings" &&
    [ ! -s "$warnings" ] && "$WEAVE" mathml "$docs/$lab.html.tmp" >"$docs/$lab.html"; then
    echo "docs: wrote $docs/$lab.html"
    status=0
  else
    echo "docs: $lab: pandoc failed or warned on $md (fix the chapter, $src):" >&2
    sed 's/^/  /' "$warnings" >&2
    rm -f "$docs/$lab.html"
    status=1
  fi
  rm -f "$docs/$lab.html.tmp" "$docs/.nav_$lab.html" "$docs/.foot_$lab.html" "$warnings"
  exit $status
fi
