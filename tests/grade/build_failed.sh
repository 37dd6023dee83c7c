#!/usr/bin/env bash
# build_failed.sh LOG [GRADER FLAGS...] — when the grader cannot be built (a labs/ file does not
# compile, or check_submission.sh refused it), still leave a results.json: score 0 and the end
# of the build log as its output, so Gradescope shows the student why instead of an autograder
# error. The results path comes from the grader's own --json flag (default results.json; '' =
# none), so `make grade GRADE_FLAGS="--json FILE"` behaves the same whether or not it builds.
set -u
log=$1
shift
json=results.json
while [ $# -gt 0 ]; do
  case $1 in
  --json) json=${2-}; shift ;;
  esac
  shift
done
[ -n "$json" ] || exit 0
{
  echo "The submission did not build, or the grader refused to link it, so no test could run"
  echo "(score 0). Fix the first problem below and run make grade again."
  echo
  grep -E '^grade: |error|Error' "$log" | grep -v '^make' | head -n 40
} | awk '
  BEGIN { printf "{\n  \"score\": 0,\n  \"output\": \"" }
  {
    gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t"); gsub(/[\001-\037]/, "")
    printf "%s\\n", $0
  }
  END { printf "\",\n  \"tests\": []\n}\n" }' >"$json.tmp" && mv "$json.tmp" "$json"
echo "results: $json (score 0: the submission could not be graded)"
