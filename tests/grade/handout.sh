#!/usr/bin/env bash
# handout.sh [OUT.tar.gz] — the student handout (make handout): the working tree as one
# directory attention-lab/, without solutions/, tests/hidden/, build outputs, .git, out/ and
# data/. Without solutions/ the Makefile's default VARIANT is labs, so in the handout
# `make labNN` and `make grade` use the student's own exercise files.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/attention-lab-handout.tar.gz}
top=attention-lab
# Never in a handout (path prefixes relative to the repository root).
excluded='^(solutions|tests/hidden|build|out|data|\.git)(/|$)|^results\.json$|^lab[0-9][0-9]$|\.(o|d|tmp)$'

list=$(mktemp)
kit=$(mktemp -d)
trap 'rm -f "$list" "$out.tmp"; chmod -R u+w "$kit"; rm -rf "$kit"' EXIT
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

mkdir -p "$(dirname "$out")"
# The student's README (docs/handout-README.md) stands in for the repository's.
tar -czf "$out.tmp" --owner=0 --group=0 --numeric-owner \
  --transform "s,^docs/handout-README\.md\$,README.md," --transform "s,^,$top/,S" \
  --null -T "$list" -C "$kit" tests/grade/kit
# Belt and braces: the archive itself must not hold anything excluded.
if tar -tzf "$out.tmp" | sed "s,^$top/,," | grep -qE "$excluded"; then
  echo "handout: refusing to write $out: it would contain:" >&2
  tar -tzf "$out.tmp" | sed "s,^$top/,," | grep -E "$excluded" | head >&2
  exit 1
fi
mv "$out.tmp" "$out"
n=$(tr -cd '\0' <"$list" | wc -c)
echo "handout: $out ($n files, $(du -k "$out" | cut -f1) KiB; no solutions/, no tests/hidden/)"
