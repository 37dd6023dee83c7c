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
version=
while [ $# -gt 0 ]; do
  case $1 in
  --json) json=${2-}; shift ;;
  --tests-version) version=${2-}; shift ;;
  esac
  shift
done
[ -n "$json" ] || exit 0
# Well-formed UTF-8 passes, any other byte becomes U+FFFD (no overlongs, no surrogates, nothing
# past U+10FFFF: results.json must be valid JSON whatever the compiler printed).
valid_utf8() {
  LC_ALL=C perl -pe 's/([\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2})|[\x80-\xff]/defined $1 ? $1 : "\xef\xbf\xbd"/ge'
}
{
  echo "The submission did not build, or the grader refused to link it, so no test could run"
  echo "(score 0). Fix the first problem below and run make grade again."
  echo
  # -a: a log with one non-UTF-8 byte is still text to us (grep would say "binary file matches")
  grep -aE '^grade: |error|Error' "$log" | grep -av '^make' | head -n 40
} | valid_utf8 | V=$version perl -e '
  # one JSON string: escapes, and no control character but the newlines (as \n)
  local $/;
  $_ = <STDIN>;
  s/\\/\\\\/g; s/"/\\"/g; s/\t/\\t/g; s/\n/\\n/g; s/[\x00-\x1f\x7f]//g;
  my $v = $ENV{V} // ""; $v =~ s/[^ -~]//g; $v =~ s/\\/\\\\/g; $v =~ s/"/\\"/g;
  print "{\n  \"score\": 0,\n  \"output\": \"$_\",\n  \"test_output_format\": \"text\",\n" .
    "  \"extra_data\": {\"tests_version\": \"$v\"},\n  \"leaderboard\": [],\n  \"tests\": []\n}\n";' >"$json.tmp" && mv "$json.tmp" "$json"
echo "results: $json (score 0: the submission could not be graded)"
