#!/usr/bin/env bash
# crlf_checkout.sh — a checkout made the way Git for Windows makes one (core.autocrlf=true) still
# has LF in every text file (.gitattributes), so its scripts run: make data in it copies
# fra-eng.zip. A control clone of the same commit without .gitattributes must come out with CRLF
# (else this git converts nothing and the check would prove nothing). Clones HEAD: what is
# committed. About 2 s. (By hand on the same kind of clone: make data and make grade LAB=01,
# 19/19.) Ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.."
passed=0 failed=0 skipped=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit; }
if ! command -v git >/dev/null || ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
  echo "skip crlf_checkout: not a git checkout (a handout), nothing to clone"
  skipped=1
  finish
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the line ends of a clone's working tree, counted: "N w/crlf" ... (git ls-files --eol)
eols() { (cd "$1" && git ls-files --eol | awk '{ n[$2]++ } END { for (k in n) printf "%s %s\n", n[k], k }'); }

git -c core.autocrlf=true clone -q --no-hardlinks "$PWD" "$tmp/w/crlf" || { fail "git clone"; finish; }
crlf=$(cd "$tmp/w/crlf" && git ls-files --eol | awk '$2 == "w/crlf" { print $NF }')
n=$(cd "$tmp/w/crlf" && git ls-files | wc -l)
check_msg="autocrlf=true clone of HEAD: no CRLF in any of its $n files"
if [ -z "$crlf" ] && [ -f "$tmp/w/crlf/.gitattributes" ]; then ok "$check_msg"; else
  fail "$check_msg (.gitattributes committed? CRLF in: $(echo "$crlf" | head -5 | tr '\n' ' '))"; fi

# the control: the same commit without .gitattributes, cloned the same way
git clone -q --no-hardlinks "$PWD" "$tmp/ctl-src" &&
  (cd "$tmp/ctl-src" && git rm -q .gitattributes &&
    git -c user.name=t -c user.email=t@t commit -q -m "no .gitattributes") &&
  git -c core.autocrlf=true clone -q "$tmp/ctl-src" "$tmp/ctl" || { fail "control clone"; finish; }
nc=$(eols "$tmp/ctl" | awk '$2 == "w/crlf" { print $1 }')
if [ "${nc:-0}" -gt 0 ]; then ok "control: without .gitattributes the same clone has CRLF in $nc files"; else
  fail "control: without .gitattributes the clone has no CRLF either: this check cannot fail"; fi

# its scripts run: make data (from ../shared/data beside the clone, as in this checkout)
if [ -f ../shared/data/fra-eng.zip ]; then
  mkdir -p "$tmp/w/shared/data" && ln -s "$(cd ../shared/data && pwd)/fra-eng.zip" "$tmp/w/shared/data/"
  if out=$(env -u MAKEFLAGS -u MFLAGS MAKELEVEL=1 make -s -C "$tmp/w/crlf" data 2>&1) &&
    [ -s "$tmp/w/crlf/data/fra-eng.zip" ]; then
    ok "make data in the autocrlf clone: $(echo "$out" | tail -1)"
  else
    fail "make data in the autocrlf clone: $(echo "$out" | tail -2 | tr '\n' ' ')"
  fi
else
  echo "skip crlf_checkout: make data in the clone: no ../shared/data/fra-eng.zip to copy"
  skipped=$((skipped + 1))
fi
finish
