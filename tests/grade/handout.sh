#!/usr/bin/env bash
# handout.sh [OUT.tar.gz] — the student handout (make handout): the working tree as one
# directory attention-lab/, without solutions/, tests/hidden/, build outputs, .git, out/ and
# data/. Without solutions/ the Makefile's default VARIANT is labs, so in the handout
# `make labNN` and `make grade` use the student's own exercise files.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/attention-lab-handout.tar.gz}
top=attention-lab
# Never in a handout (path prefixes relative to the repository root). tests/grader/kernels/
# holds the solutions' kernels with one planted bug each (grading.sh, section 6), and
# tests/grader/feedback/ near-solutions of exercise 2.1 with one plausible fault (section 5).
# The instructor's side stays out too: docs/instructor-guide.md (handouts, hidden tests, grading),
# docs/performance.md (the kit's measurements) and .ci/ (the kit's CI); tests/suites/handout_docs.sh
# keeps its own list of these and checks the archive, and that no shipped page links one.
excluded='^(solutions|tests/hidden|tests/grader/kernels|tests/grader/feedback|build|out|data|\.git|\.ci|docs/instructor-guide\.md|docs/performance\.md)(/|$)|^results\.json$|^lab[0-9][0-9]$|\.(o|d|tmp)$'

list=$(mktemp)
kit=$(mktemp -d)
trap 'rm -f "$list" "$list.docs.log" "$out.tmp"; chmod -R u+w "$kit"; rm -rf "$kit"' EXIT
mkdir -p "$kit/tests/grade/kit"
(cd labs && shopt -s nullglob && cp --parents lab[0-9][0-9]/*.h lab[0-9][0-9]/*.c lab[0-9][0-9]/*.cu "$kit/tests/grade/kit/")
(cd "$kit/tests/grade/kit" && shopt -s nullglob && LC_ALL=C sha256sum lab[0-9][0-9]/*.h lab[0-9][0-9]/*.c lab[0-9][0-9]/*.cu >SHA256SUMS)
find "$kit/tests/grade/kit" -type f -exec chmod a-w {} +
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard   # tracked + new, not ignored
else
  find . -type f -print0 | sed -z 's|^\./||'
fi | grep -zvE "$excluded" | grep -zv '^tests/grade/kit/' | while IFS= read -r -d '' f; do
  [ -f "$f" ] && printf '%s\0' "$f"   # skip tracked files deleted in the working tree
done | grep -zvx 'README\.md' | sort -z >"$list"

# Prebuilt pages (docs/labNN.html, .md, the site around them) from a reference run: the labs run
# with the solutions, the pages splice the stubs (DOCS_EXERCISES=labs), and the run's printed
# output and figures ship in docs/ref/labNN/, where a student's `make docs` takes the output
# after an unfinished exercise from. Short runs keep `make handout` quick (the pages show the
# command); HANDOUT_DOCS=no leaves the pages out, HANDOUT_DOCS_LABS="lab01 lab02" builds some.
docs_dir=build/handout-docs
if [ "${HANDOUT_DOCS:-yes}" = no ]; then
  echo "handout: no prebuilt pages (HANDOUT_DOCS=no)"
elif [ ! -d solutions ]; then
  echo "handout: no solutions/ here: no reference run, no prebuilt pages"
else
  rm -rf "$docs_dir"
  start=$(date +%s)
  # Every lab runs at its chapter's defaults, as its prose describes them (the weave checks the
  # prose's claims against the run: docs/weave.c), except lab07: one of its 10 epochs (the prose
  # states only the first epoch's numbers). lab03 and lab06 at full training add 25 s of CPU to
  # the 50-epoch runs they replace (measured: 18 + 15 s against 3.6 + 4.1 s; 90 s of wall time
  # on a 2-core machine shared at load 16).
  args=("DOCS_ARGS_lab03=" "DOCS_ARGS_lab06=" "DOCS_ARGS_lab07=--epochs 1" "DOCS_CLAIMS=check")
  [ -n "${HANDOUT_DOCS_LABS:-}" ] && args+=("DOCS_LABS=$HANDOUT_DOCS_LABS")
  echo "handout: building the reference pages (each lab runs with the solutions: minutes)"
  # every 8 s a line on what it is doing (tests/tools/progress.sh): never silent for minutes
  if ! DOCS_HANDOUT=yes bash tests/tools/progress.sh "handout: reference pages" "$list.docs.log" \
    make -s docs VARIANT=solutions DOCS_EXERCISES=labs DOCS_DIR="$docs_dir" DOCS_OUT=ref \
    DOCS_TIMEOUT=300 "${args[@]}"; then
    echo "handout: the reference pages failed to build:" >&2
    tail -20 "$list.docs.log" >&2
    exit 1
  fi
  mkdir -p "$kit/docs"
  # built in build/handout-docs, read in docs/: the chapter links and the run's --out as there
  for f in "$docs_dir"/*.html "$docs_dir"/lab[0-9][0-9].md; do
    [ -f "$f" ] && sed -e 's#\.\./\.\./chapters/#../chapters/#g' -e "s#$docs_dir/ref/#docs/ref/#g" \
      "$f" >"$kit/docs/${f##*/}"
  done
  for d in "$docs_dir"/ref/lab[0-9][0-9]; do
    [ -d "$d" ] || continue
    mkdir -p "$kit/docs/ref/${d##*/}"
    cp "$d"/output.txt "$d"/command.txt "$d"/status.txt "$kit/docs/ref/${d##*/}/" 2>/dev/null
    for png in "$d"/*.png; do [ -f "$png" ] && cp "$png" "$kit/docs/ref/${d##*/}/"; done
  done
  echo "handout: reference pages built in $(($(date +%s) - start)) s ($(ls "$kit/docs"/lab*.html 2>/dev/null | wc -l) labs)"
fi

mkdir -p "$(dirname "$out")"
# The student's README (docs/handout-README.md) stands in for the repository's.
tar -czf "$out.tmp" --owner=0 --group=0 --numeric-owner \
  --transform "s,^docs/handout-README\.md\$,README.md," --transform "s,^,$top/,S" \
  --null -T "$list" -C "$kit" tests/grade/kit $( [ -d "$kit/docs" ] && echo docs)
# Belt and braces: the archive itself must not hold anything excluded.
if tar -tzf "$out.tmp" | sed "s,^$top/,," | grep -qE "$excluded"; then
  echo "handout: refusing to write $out: it would contain:" >&2
  tar -tzf "$out.tmp" | sed "s,^$top/,," | grep -E "$excluded" | head >&2
  exit 1
fi
mv "$out.tmp" "$out"
n=$(tr -cd '\0' <"$list" | wc -c)
echo "handout: $out ($n files, $(du -k "$out" | cut -f1) KiB; no solutions/, no tests/hidden/)"
