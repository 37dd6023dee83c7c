# suite_lib.sh — the shared start and end of the shell suites (tests/suites/*.sh), sourced
# as their first command:  . "$(dirname "$0")/../suite_lib.sh" && suite_begin lab04
# (It lives outside tests/suites/ because tests/run_all.sh runs every *.sh there.)
#
#   suite_begin NAME    cd to the repository root; zero the counters; $tmp, a fresh temporary
#                       directory removed on exit; ok/bad/skip lines are prefixed "NAME:"
#   ok MSG / bad MSG    count one passed / failed check and print it
#   skip MSG            count one check that could not run, MSG saying why (never a pass)
#   check MSG CMD...    ok when CMD (output discarded) succeeds, else bad
#   suite_build TARGET [WHAT]  make -s TARGET; on failure print the log's tail, the summary,
#                       and exit 1 (nothing else can be checked)
#   suite_end           the "N passed, N failed, N skipped" line run_all.sh reads; status 0
#                       when none failed
#   student_kit DIR     a copy of the kit in DIR whose labs/ hold the solutions' exercise files,
#                       as a student's finished work (the student-path suites); build/obj's
#                       compiled common objects come along, times kept, so only labs and
#                       chapters compile there
#   kit_make DIR ARGS...  make -s ARGS in DIR with VARIANT=labs, apart from any make around us
#   suite_data          have_fra, have_mnist = yes or no: whether fra-eng.zip (data/,
#                       ../shared/data/, D2L_DATA_DIR) and Fashion-MNIST (data/, the Debian
#                       package's directory: common/fashion_mnist.c) are where the labs look

suite_begin() {
  suite_name=$1
  cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
  passed=0
  failed=0
  skipped=0
  tmp=$(mktemp -d "/tmp/${suite_name}_suite.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
}

ok() { passed=$((passed + 1)); echo "ok   $suite_name: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $suite_name: $1"; }
skip() { skipped=$((skipped + 1)); echo "skip $suite_name: $1"; }
check() { # description, command...
  local what=$1
  shift
  if "$@" >/dev/null 2>&1; then ok "$what"; else bad "$what"; fi
}

suite_build() { # target, description (default "make TARGET")
  local what=${2:-make $1}
  if ! make -s "$1" >"$tmp/build.log" 2>&1; then
    bad "$what failed:"
    tail -20 "$tmp/build.log"
    suite_end
    exit 1
  fi
  ok "$what"
}

suite_end() {
  echo "$passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
}

student_kit() {
  mkdir -p "$1/build"
  tar --exclude=./build --exclude=./out --exclude=./.git --exclude='./lab[0-9][0-9]' -cf - . |
    tar -xf - -C "$1"
  for f in solutions/lab*/*; do cp -p "$f" "$1/labs/${f#solutions/}"; done # with private headers
  [ -d build/obj ] && cp -a build/obj build/flags-*.stamp build/libcommon.a "$1/build/" 2>/dev/null
  # the emulated CUDA backend's objects (build/emu-bin/labNN), when built
  [ -d build/emu ] && cp -a build/emu build/emu-flags-*.stamp "$1/build/" 2>/dev/null
  return 0
}

kit_make() {
  local dir=$1
  shift
  env -u MAKEFLAGS -u MFLAGS -u VARIANT MAKELEVEL=1 make -s -C "$dir" VARIANT=labs "$@"
}

suite_data() {
  have_fra=no
  { [ -f data/fra-eng.zip ] || [ -f ../shared/data/fra-eng.zip ] || [ -n "${D2L_DATA_DIR:-}" ]; } &&
    have_fra=yes
  have_mnist=no
  ls data/train-images-idx3-ubyte.gz /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \
    2>/dev/null | grep -q . && have_mnist=yes
  return 0
}
