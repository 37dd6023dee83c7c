#!/usr/bin/env bash
# submission.sh [OUT.zip] — make submission: the zip a student hands in, made of exactly the
# exercise files of tests/grade/manifest.txt, read from labs/ and stored as labs/labNN/FILE
# (the layout the grader looks for first; tests/grade/stage.sh). Nothing else goes in: the
# grader would ignore it anyway, and a zip of only these files is small and says what counts.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/submission.zip}
files=()
missing=()
while read -r path _; do
  case $path in lab[0-9][0-9]/*.c | lab[0-9][0-9]/*.cu) ;; *) continue ;; esac
  if [ -f "labs/$path" ] && [ ! -L "labs/$path" ]; then files+=("labs/$path"); else missing+=("labs/$path"); fi
done <tests/grade/manifest.txt
if [ ${#missing[@]} -gt 0 ]; then
  echo "submission: missing (or not a regular file): ${missing[*]}; restore the stub (git checkout, or the handout) and run make submission again" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
rm -f "$out" "$out.tmp"
if command -v zip >/dev/null; then
  zip -q -X "$out.tmp" "${files[@]}"
elif command -v python3 >/dev/null; then
  python3 -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for f in sys.argv[2:]: z.write(f)' "$out.tmp" "${files[@]}"
else
  echo "submission: neither zip nor python3 is installed: install zip (apt-get install zip)" >&2
  exit 1
fi
mv -f "$out.tmp" "$out"
echo "submission: $out (${#files[@]} exercise files under labs/; nothing else). Upload it as it is."
