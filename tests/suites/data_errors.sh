#!/usr/bin/env bash
# Damaged data files must give a one-line error and a non-zero exit, with no sanitizer report.
# Builds tests/tools/readcheck.c against common/data.c under ASan+UBSan, then feeds it a good,
# a corrupted and a truncated zip and gzip made in a temp dir.
set -u
cd "$(dirname "$0")/../.." || exit 1
T=$(mktemp -d /tmp/al_data_errors.XXXXXX)
trap 'rm -rf "$T"' EXIT
passed=0; failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }

CC=${CC:-gcc}
if ! $CC -std=c11 -D_GNU_SOURCE -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    tests/tools/readcheck.c common/data.c common/util.c -lz -o "$T/readcheck" 2>"$T/cc.log"; then
  cat "$T/cc.log"; echo "0 passed, 1 failed"; exit 1
fi
export ASAN_OPTIONS=detect_leaks=1:exitcode=99 UBSAN_OPTIONS=exitcode=99

# expect_ok NAME ARGS...: exit 0, "ok" on stdout, nothing on stderr
expect_ok() {
  local name=$1; shift
  "$T/readcheck" "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ $rc -eq 0 ] && grep -q '^ok ' "$T/out" && [ ! -s "$T/err" ]; then ok "$name"
  else bad "$name (exit $rc)"; cat "$T/err"; fi
}
# expect_err NAME SUBSTRING ARGS...: exit 1 (not a sanitizer's 99), exactly one stderr line
# naming the file and containing SUBSTRING
expect_err() {
  local name=$1 sub=$2; shift 2; local file=$2
  "$T/readcheck" "$@" >"$T/out" 2>"$T/err"; local rc=$?
  local lines; lines=$(wc -l <"$T/err")
  if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] && grep -qF -- "$sub" "$T/err" && grep -qF -- "$file" "$T/err" \
     && ! grep -q 'Sanitizer\|runtime error' "$T/err"; then ok "$name"
  else bad "$name (exit $rc, $lines stderr lines)"; head -5 "$T/err"; fi
}

# --- a zip made with python's zipfile if there is one, else with zip(1); else from gzip only
printf 'Go.\tVa !\nHi.\tSalut !\n%.0s' $(seq 1 200) >"$T/fra.txt"
PY=$(command -v /usr/bin/python3 || command -v python3 || true)
if [ -n "$PY" ] && "$PY" - "$T" <<'PYEOF'
import sys, zipfile
d = sys.argv[1]
with zipfile.ZipFile(d + '/good.zip', 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('__MACOSX/fra-eng/._fra.txt', b'\0\5\x16\7junk')
    z.write(d + '/fra.txt', 'fra-eng/fra.txt')
PYEOF
then
  expect_ok "zip: good archive reads" zip "$T/good.zip" fra-eng/fra.txt
  expect_err "zip: missing member" "no member 'fra-eng/eng.txt'" zip "$T/good.zip" fra-eng/eng.txt
  # corrupt one byte in the middle of the compressed data
  cp "$T/good.zip" "$T/corrupt.zip"
  printf '\x55' | dd of="$T/corrupt.zip" bs=1 seek=120 conv=notrunc status=none
  expect_err "zip: corrupted byte" "fra-eng/fra.txt" zip "$T/corrupt.zip" fra-eng/fra.txt
  size=$(stat -c %s "$T/good.zip")
  for cut in 10 100 $((size / 2)) $((size - 30)) $((size - 1)); do
    head -c "$cut" "$T/good.zip" >"$T/cut.zip"
    expect_err "zip: truncated at $cut bytes" "truncated" zip "$T/cut.zip" fra-eng/fra.txt
  done
  expect_err "zip: not a zip" "not a zip archive" zip "$T/fra.txt" fra-eng/fra.txt
else
  bad "no python3 to build a test zip"
fi

# --- gzip
gzip -c "$T/fra.txt" >"$T/good.gz"
expect_ok "gz: good file reads" gz "$T/good.gz"
gsize=$(stat -c %s "$T/good.gz")
head -c $((gsize - 5)) "$T/good.gz" >"$T/cut.gz"
expect_err "gz: truncated" "truncated" gz "$T/cut.gz"
cp "$T/good.gz" "$T/corrupt.gz"
printf '\xff\xff\xff' | dd of="$T/corrupt.gz" bs=1 seek=$((gsize / 2)) conv=notrunc status=none
expect_err "gz: corrupted" "gzip" gz "$T/corrupt.gz"
expect_err "gz: missing file" "cannot open" gz "$T/nothere.gz"

echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
