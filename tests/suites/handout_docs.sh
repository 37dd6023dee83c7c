#!/usr/bin/env bash
# The handout's pages (issue 27): `make handout` ships pages built from a reference run (the
# solutions run, the stubs shown), and in the unpacked handout `make docs` builds the pages with
# the student's stubs, marks where a lab stopped at an unfinished exercise, goes on with the
# prose and code, and takes the output after the stop from the shipped reference run.
# Two fast labs (lab01, lab02) keep it short. Run from the repository root.
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin handout_docs
if [ ! -d solutions ]; then
  skip "a student handout: no solutions/ to make a handout's reference pages from"
  suite_end
  exit $?
fi
mk() { env -u MAKEFLAGS -u MFLAGS -u VARIANT MAKELEVEL=1 make -s --no-print-directory -j2 "$@"; }
labs="lab01 lab02"
tarball=$tmp/handout.tar.gz
# timed line by line (tests/tools/max_gap.sh): the pages' build takes minutes and must say what
# it does at least every 10 s (tests/tools/progress.sh)
if HANDOUT_DOCS_LABS="$labs" bash tests/tools/max_gap.sh "$tmp/handout.gap" "$tmp/handout.log" \
  bash tests/grade/handout.sh "$tarball"; then
  ok "make handout with reference pages for $labs"
  read -r gap gap_line <"$tmp/handout.gap"
  check "make handout is never silent for more than 10 s (longest: $gap s, before: ${gap_line:0:60})" \
    awk -v g="$gap" 'BEGIN {exit !(g <= 10)}'
else
  bad "make handout failed:"
  tail -20 "$tmp/handout.log"
  suite_end
  exit $?
fi
tar -tzf "$tarball" >"$tmp/list"
mkdir -p "$tmp/ho" && tar -xzf "$tarball" -C "$tmp/ho"
h=$tmp/ho/attention-lab
# a page's body: without the collapsed program section
body() { sed '/^<details class="program">/,/^<\/details>/d' "$1"; }
for lab in $labs; do
  md=$h/docs/$lab.md
  check "shipped: docs/$lab.md" test -s "$md"
  check "shipped: docs/ref/$lab/output.txt (the reference run)" test -s "$h/docs/ref/$lab/output.txt"
  if command -v pandoc >/dev/null 2>&1; then check "shipped: docs/$lab.html" test -s "$h/docs/$lab.html"; fi
  check "shipped $lab: the exercises spliced from labs/ (stubs)" bash -c \
    "grep -q '^/\* labs/$lab/.*\.c \*/' '$md' && grep -q EXERCISE_TODO '$md'"
  check "shipped $lab: no solution code" bash -c "! grep -q '^/\* solutions/' '$md'"
  src=$(ls chapters/*/"$lab.c")
  check "shipped $lab: links its chapter from docs/" grep -qF "](../$src)" "$md"
  check "shipped $lab: the reference run's output, not stopped" bash -c \
    "grep -q '^\`\`\`text' '$md' && ! grep -qF '**Unfinished:**' '$md'"
  nfig=$(ls "$h/docs/ref/$lab"/*.png 2>/dev/null | wc -l)
  if ! command -v gnuplot >/dev/null 2>&1; then skip "$lab: no gnuplot, no figures to ship"; elif
    [ "$nfig" -gt 0 ] && grep -q "](ref/$lab/" "$md"; then ok "shipped $lab: $nfig figures, linked from ref/$lab/"; else
    bad "shipped $lab: $nfig figures in ref/$lab/"
  fi
  check "shipped $lab: no #include or free( in the page body" bash -c \
    "! (sed '/^<details class=\"program\">/,/^<\\/details>/d' '$md' | grep -qE '#include|free\\(')"
  # the pages were built in build/handout-docs and from this machine's directories: neither shows
  check "shipped $lab: no path of the build directory (build/handout-docs)" bash -c "! grep -q 'build/handout-docs' '$md'"
  abs=$(grep -oP '(?<![\w:/.\-~$])/[A-Za-z_.][\w.+-]*(/[\w.+-]+)+' "$md" | grep -vE '^/(usr|dev|proc|etc)/' | sort -u | head -3)
  if [ -z "$abs" ]; then ok "shipped $lab: no absolute path outside the kit"; else
    bad "shipped $lab: absolute paths outside the kit: $(echo $abs)"; fi
  cp "$md" "$tmp/shipped_$lab.md"
done
# The figures are the only binary files added; nothing from solutions/ in the archive.
check "no solutions/ in the archive" bash -c "! grep -qE '^attention-lab/solutions(/|$)' '$tmp/list'"
# Nothing of the instructor's side (this suite's own list, not handout.sh's), and no shipped page
# or guide that links to such a file (the student's index once linked the instructor guide).
instructor_only='solutions/ tests/hidden/ tests/grader/kernels/ tests/grader/feedback/ .ci/
docs/instructor-guide.md docs/instructor-guide.html docs/performance.md docs/performance.html'
found=""
for f in $instructor_only; do
  grep -qE "^attention-lab/$(printf '%s' "$f" | sed 's/[.]/\\./g')" "$tmp/list" && found="$found $f"
done
if [ -z "$found" ]; then ok "no instructor-only file in the archive ($(echo $instructor_only | wc -w) paths checked)"; else
  bad "instructor-only files in the handout:$found"; fi
links=$(cd "$h" && python3 - $instructor_only <<'PY'
import os, re, sys
only = sys.argv[1:]
hits = []
for root, _, files in os.walk("."):
    for name in files:
        if not name.endswith((".md", ".html")):
            continue
        path = os.path.join(root, name)
        text = open(path, errors="replace").read()
        for target in re.findall(r'\]\(([^)#\s]+)|href="([^"#]+)"', text):
            t = target[0] or target[1]
            if "://" in t:
                continue
            rel = os.path.normpath(os.path.join(os.path.dirname(path), t))
            if any(rel == o.rstrip("/") or rel.startswith(o) for o in only):
                hits.append("%s -> %s" % (path[2:], t))
print("\n".join(sorted(set(hits))))
PY
)
if [ -z "$links" ]; then ok "no shipped page or guide links an instructor-only file"; else
  bad "shipped files link instructor-only files: $(echo "$links" | head -5 | tr '\n' ';')"; fi
check "the student's index has no instructor guide link" bash -c "! grep -q 'instructor-guide' '$h/docs/index.html'"

# ---------------------------------------------------------------- make docs in the handout
# -O0: only the pages are checked here, not speed
if (cd "$h" && mk OPT=-O0 NO_CUDA=1 docs DOCS_LABS="$labs" >docs.log 2>&1); then
  ok "handout: make docs with the stubs exits 0"
else
  bad "handout: make docs with the stubs failed"
  tail -15 "$h/docs.log"
fi
for lab in $labs; do
  md=$h/docs/$lab.md
  src=$(ls "$h"/chapters/*/"$lab.c")
  check "$lab: page rebuilt from the student's run" bash -c "! cmp -s '$md' '$tmp/shipped_$lab.md'"
  check "$lab: marked unfinished at the stub's exercise" grep -qE '^\*\*Unfinished:\*\* the run stopped here: `exercise [0-9]+\.[0-9]+ ' "$md"
  # carries on: every heading of the chapter, in order, after the mark too
  grep -E '^#{1,3} ' "$src" >"$tmp/want"
  grep -E '^#{1,3} ' "$md" >"$tmp/got"
  if diff -q "$tmp/want" "$tmp/got" >/dev/null; then ok "$lab: all $(wc -l <"$tmp/want") headings, in order"; else
    bad "$lab: headings differ from the chapter's"
    diff "$tmp/want" "$tmp/got" | head -5
  fi
  last=$(tail -1 "$tmp/want")
  if [ "$(grep -n -m1 -F '**Unfinished:**' "$md" | cut -d: -f1)" -lt "$(grep -nxF -- "$last" "$md" | cut -d: -f1)" ]; then
    ok "$lab: the page goes on after the mark (to '$last')"
  else
    bad "$lab: nothing after the mark"
  fi
  check "$lab: the output after the stop is the reference run's, marked" grep -q '^```{.text .reference}' "$md"
  check "$lab: the student's stubs spliced" grep -q EXERCISE_TODO "$md"
done
suite_end
