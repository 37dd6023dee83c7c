#!/usr/bin/env bash
# grading.sh — tests of the grading system (a suite of make test). Ends with "N passed, N failed".
#   1. The grader against hostile submissions: a fake lab 99 (tests/grader/) graded with a
#      well-behaved submission (full marks; also the reference) and a hostile one (each attack
#      scores zero with the right outcome; the honest tests around them keep their points).
#   2. The invariant on the real labs: VARIANT=solutions earns full marks, and with
#      VARIANT=labs (the stubs) every graded test scores zero.
#   2b. Attacks on the real labs (tests/grader/attacks/NAME/: the stubs with a few hostile
#      files), graded as on Gradescope: each scores what the stubs earn (0) and leaves a valid
#      results.json that is the grader's own.
#   3. make handout: no solutions/ or tests/hidden/ inside; unpacked, it builds and grades
#      (zero points, no crash).
#   4. the Gradescope recipe of docs/instructor-guide.md, end to end (as root when root).
#   5. feedback in the student's terms: plausible wrong exercises (tests/grader/feedback/NAME/,
#      laid over the stubs) get their first wrong entry as (b, i, j), a slice of its row, and
#      only the hints their failure pattern calls for.
#   6. wrong kernels (the kernel track): kernel exercises with one classic mistake each
#      (tests/grader/kernels/NAME/, laid over the solutions) score 0 on the tests they should,
#      with the outcome they should (sanitizer: the emulator's report shown) and its text.
#   7. a course: the dependency map of manifest.txt against solutions/' objects; make grade-all
#      over 6 generated submissions (solutions, stubs, one hostile, and the solutions with one
#      exercise broken: a compile error in 2.1, a NULL dereference in transpose_qkv, 6.1 wrong):
#      each broken one loses exactly that file's points, the others keep theirs, a score equals
#      its single make grade, grades.csv and the class report exist; a practice run (no
#      reference) shows "blocked by 2.1" for 2.2 and 2.3.
# GRADING_SECTIONS=24 (say) runs only those sections (2 also runs the attacks); default: all.
set -u
sections=${GRADING_SECTIONS:-1234567}
cd "$(dirname "$0")/../.."
root=$PWD
passed=0
failed=0
skipped=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
skip() { echo "skip grading: $*"; skipped=$((skipped + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
check() { # description, command...: ok when the command succeeds
  local what=$1
  shift
  if "$@"; then ok "$what"; else fail "$what"; return 1; fi
}
exit_status_is() { # status, command...
  local want=$1
  shift
  "$@" >/dev/null 2>&1
  [ $? -eq "$want" ]
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # as root, make grade compiles as nobody: the handout's and the recipe's copies
                 # of the kit (below) must be readable by nobody, as /autograder/source is
# Own make flags: -j2, and no jobserver inherited from an outer make that did not pass one.
mk() { env -u MAKEFLAGS -u MFLAGS -u VARIANT MAKELEVEL=1 make -s --no-print-directory -j2 "$@"; }
have_solutions=$(ls -d solutions/lab[0-9]* 2>/dev/null | head -1)
have_graded=$(ls tests/grade/lab[0-9]*/*.c 2>/dev/null | head -1)
py=$(command -v /usr/bin/python3 || command -v python3 || true)

# A test's line in results.json (the grader writes one test object per line).
test_line() { grep -F "\"name\":\"$2\"," "$1"; }
json_valid() { [ -z "$py" ] || "$py" -c 'import json,sys; json.load(open(sys.argv[1]))' "$1"; }
# The tests' scores and maxima add up to the Score line (every test: the instructor's view),
# and the visible tests' to results.json's top-level score and output (the student's view
# before the due date: no hidden point in it; no top-level score at all with hidden tests).
totals_agree() { # results.json, terminal log
  local s m vs vm t o
  s=$(grep -o '"score":[0-9]*,"max_score":[0-9]*' "$1" | tr ':,' '  ' | awk '{t += $2} END {print t + 0}')
  m=$(grep -o '"score":[0-9]*,"max_score":[0-9]*' "$1" | tr ':,' '  ' | awk '{t += $4} END {print t + 0}')
  vs=$(grep '"visibility":"visible"' "$1" | grep -o '"score":[0-9]*,"max_score":[0-9]*' | tr ':,' '  ' | awk '{t += $2} END {print t + 0}')
  vm=$(grep '"visibility":"visible"' "$1" | grep -o '"score":[0-9]*,"max_score":[0-9]*' | tr ':,' '  ' | awk '{t += $4} END {print t + 0}')
  t=$(grep -m1 -o '^  "score": [0-9]*' "$1" | awk '{print $2}')
  o=$(grep -m1 -o '^  "output": .*' "$1")
  if grep -q '"visibility":"after_due_date"' "$1"; then [ -z "$t" ]; else [ "$t" = "$vs" ]; fi &&
    [[ $o == *"Score: $vs/$vm\""* ]] && grep -q "\"max_score\":$vm," "$1" &&
    [ "$(tail -n 1 "$2")" = "Score: $s/$m" ]
}

# ------------------------------------------------------------------ 1. hostile submissions
# What each fake lab-99 test must score with the hostile submission (fake_tests.c).
expected_hostile='
lab99_square_first passed 2
lab99_exit_zero exited_early 0
lab99_underscore_exit exited_early 0
lab99_print_pass wrong_answer 0
lab99_flood wrong_answer 0
lab99_write_results forbidden 0
lab99_segfault crash 0
lab99_recurse crash 0
lab99_abort crash 0
lab99_loop timeout 0
lab99_alloc out_of_memory 0
lab99_forge_verdict tampered 0
lab99_grandchild forbidden 0
lab99_poison forbidden 0
lab99_interpose wrong_answer 0
lab99_stub not_implemented 0
lab99_wrong wrong_answer 0
lab99_row_sums wrong_answer 0
lab99_hint_transposed wrong_answer 0
lab99_hint_scaled wrong_answer 0
lab99_hint_zeros wrong_answer 0
lab99_hint_none wrong_answer 0
lab99_hint_input wrong_answer 0
lab99_slow passed 1
lab99_square_last passed 2
lab99_hidden_square passed 1
'
# The fake lab needs only libcommon: it runs even while a real lab does not build.
if [[ $sections == *1* ]]; then
if ! mk build/grader/grade build/grader/good/grade-run build/grader/good/grade-run-hidden \
  build/grader/hostile/grade-run build/grader/hostile/grade-run-hidden >"$tmp/build.log" 2>&1; then
  fail "build the grader's test binaries (build/grader/)"
  tail -n 20 "$tmp/build.log"
else
  ok "build the grader's test binaries (build/grader/)"
  # graded with 1 s and 64 MiB per test (lab99_slow and lab99_flood have their own limits)
  # the good submission is the reference: its runs supply the expected values
  grade_fake() { # submission, dir
    mkdir -p "$2/tmp"
    (cd "$2" && TMPDIR="$2/tmp" "$root/build/grader/grade" --runner "$root/build/grader/$1" \
      --reference "$root/build/grader/good" --timeout 1 --mem 64 >term.log 2>&1)
  }
  max=$(build/grader/grade --runner build/grader/good --list | tail -n 1 | awk '{print $3}')
  want=$(awk 'NF {t += $3} END {print t + 0}' <<<"$expected_hostile")

  d=$tmp/good
  grade_fake good "$d"
  rc=$?
  check "good submission: exit status 0" [ $rc -eq 0 ]
  check "good submission: full marks (Score: $max/$max)" grep -qx "Score: $max/$max" "$d/term.log"
  check "good submission: results.json is valid JSON" json_valid "$d/results.json"
  check "good submission: test scores add up" totals_agree "$d/results.json" "$d/term.log"

  d=$tmp/hostile
  start=$(date +%s)
  grade_fake hostile "$d"
  rc=$?
  secs=$(($(date +%s) - start))
  check "hostile submission: exit status 1" [ $rc -eq 1 ]
  check "hostile submission: only the honest tests score (last line Score: $want/$max)" \
    [ "$(tail -n 1 "$d/term.log")" = "Score: $want/$max" ]
  check "hostile submission: results.json is valid JSON" json_valid "$d/results.json"
  check "hostile submission: results.json is the grader's, not the fake one" \
    grep -q '"name":"lab99_square_last"' "$d/results.json"
  check "hostile submission: test scores add up" totals_agree "$d/results.json" "$d/term.log"
  check "hostile submission: graded in under 30 s (took ${secs} s)" [ "$secs" -lt 30 ]
  check "hostile submission: scratch directories removed" \
    [ -z "$(ls -A "$d/tmp" 2>/dev/null)" ]
  size=$(wc -c <"$d/results.json")
  check "hostile submission: results.json stays small after a 20 MB flood ($size bytes)" \
    [ "$size" -lt 65536 ]
  check "hostile submission: every fake test has an expected outcome" \
    [ "$(grep -c '"name":"lab99_' "$d/results.json")" -eq "$(grep -c . <<<"$expected_hostile")" ]
  while read -r name outcome score; do
    [ -n "$name" ] || continue
    line=$(test_line "$d/results.json" "$name")
    check "hostile $name: $outcome, $score points" \
      grep -q "\"score\":$score,.*\"outcome\":\"$outcome\"" <<<"$line"
  done <<<"$expected_hostile"
  check "hostile: a crash names its signal" grep -q 'killed by SIGSEGV' "$d/term.log"
  check "hostile: a wrong answer shows expected and got" \
    grep -q 'fake_wrong(4): expected 16, got 17' "$d/term.log"
  check "hostile: a wrong shape shows both shapes" \
    grep -q 'row sums: expected shape (2), got (1, 2)' "$d/term.log"
  # feedback: the first wrong entry as (b, i, j) with its row; a hint only for a pattern
  hint_of() { grep -o 'hint: [^\\]*' <<<"$(test_line "$d/results.json" "$1")"; }
  check "hostile: a wrong tensor names (b, i, j) of its shape and shows the row" \
    eval 'grep -qF "fake_matrix at (0, 0, 1) of shape (2, 3, 3): expected 0.7, got 1.5" "$d/term.log" &&
      grep -qE "^ +\(0, 0, 0:3\)  expected +1 +0\.7 +-0\.2$" "$d/term.log"'
  check "hostile: a transposed answer is told so" \
    grep -q "^hint: these are the expected values transposed" <<<"$(hint_of lab99_hint_transposed)"
  check "hostile: an answer off by a factor is told the factor" \
    grep -q "^hint: every value is 0.5 times the expected one" <<<"$(hint_of lab99_hint_scaled)"
  check "hostile: an answer of zeros is told so" \
    grep -q "^hint: every value is 0:" <<<"$(hint_of lab99_hint_zeros)"
  check "hostile: an output that is its input is told so (GRADE_INPUT)" \
    grep -q "^hint: the output equals the input x: nothing was computed" <<<"$(hint_of lab99_hint_input)"
  check "hostile: a wrong answer with no pattern gets no hint, but its (b, i, j)" \
    eval '[ -z "$(hint_of lab99_hint_none)" ] &&
      grep -qF "fake_matrix at (1, 2, 1) of shape (2, 3, 3)" <<<"$(test_line "$d/results.json" lab99_hint_none)"'
  check "hostile: flood output is cut in results.json" \
    grep -q 'bytes not shown' <<<"$(test_line "$d/results.json" lab99_flood)"
  check "hostile: hidden tests are shown only after the due date" \
    grep -q '"visibility":"after_due_date"' <<<"$(test_line "$d/results.json" lab99_hidden_square)"
  check "hostile: no other test is hidden" \
    [ "$(grep -c '"visibility":"after_due_date"' "$d/results.json")" -eq 1 ]
  check "hostile: a sandboxed call is named as such" \
    grep -q "stopped by the grader's sandbox" <<<"$(test_line "$d/results.json" lab99_grandchild)"
  check "grader: --lab 98 finds nothing to grade (exit 2)" \
    exit_status_is 2 build/grader/grade --runner build/grader/good --lab 98 --json ''
  check "grader: an unknown option is a usage error (exit 2)" \
    exit_status_is 2 build/grader/grade --frobnicate
  # Without a reference each run is judged against its own values, and says so: only a
  # reference build can do that (a student's runner holds no expected values).
  d=$tmp/practice
  mkdir -p "$d/tmp"
  (cd "$d" && TMPDIR="$d/tmp" "$root/build/grader/grade" --runner "$root/build/grader/good" \
    --timeout 1 --mem 64 --only square >term.log 2>&1)
  check "grader without --reference: a practice run, said in the header and results.json" \
    eval 'grep -q "no --reference: a practice run" "$d/term.log" && grep -q "practice run" "$d/results.json"'
  d=$tmp/no_reference
  mkdir -p "$d/tmp"
  (cd "$d" && TMPDIR="$d/tmp" "$root/build/grader/grade" --runner "$root/build/grader/hostile" \
    --timeout 1 --mem 64 --only square >term.log 2>&1)
  rc=$?
  check "a student's runner without --reference is refused (exit $rc): it holds no expected values" \
    eval '[ $rc -eq 2 ] && grep -q "holds no expected values" "$d/term.log"'
  check "grade.mk refuses to build a submission's runners (GRADE_REF given) with expected values" \
    eval '! mk -n grade-runners VARIANT=labs GRADE_REF="$tmp" GRADE_ROLE=reference >"$tmp/role.log" 2>&1 &&
      grep -q "built in the student role" "$tmp/role.log"'
  # Interrupted: a results.json the grader did not write does not survive it.
  d=$tmp/interrupted
  mkdir -p "$d/tmp"
  echo '{"score": 95, "output": "HACKED"}' >"$d/results.json"
  (cd "$d" && TMPDIR="$d/tmp" exec "$root/build/grader/grade" --runner "$root/build/grader/good" \
    --reference "$root/build/grader/good" --only slow >term.log 2>&1) &
  gpid=$!
  sleep 0.6
  kill -TERM "$gpid"
  wait "$gpid"
  rc=$?
  check "an interrupted grader exits 128+SIGTERM (got $rc)" [ $rc -eq 143 ]
  check "an interrupted grader removes the results.json it did not write" [ ! -e "$d/results.json" ]
  check "an interrupted grader removes its scratch" [ -z "$(ls -A "$d/tmp" 2>/dev/null)" ]
fi
fi

# ------------------------------------------------------------------ 2. real labs: the invariant
manifest_files() { grep -oE '^lab[0-9][0-9]/[^ ]+\.cu?' tests/grade/manifest.txt | LC_ALL=C sort; }
# The points of the manifest, of lab NN only when given: totals the checks below expect, read
# here rather than written out, so that a new exercise does not break them.
manifest_points() { # [NN]
  awk -v L="${1:-}" '/^lab[0-9][0-9]\// && (L == "" || index($1, "lab" L "/") == 1) { s += $3 }
    END { print s + 0 }' tests/grade/manifest.txt
}
if [ -n "$have_graded" ]; then
  check "tests/grade/manifest.txt lists exactly the exercise files of labs/" \
    diff <(manifest_files) <(cd labs && ls lab[0-9][0-9]/*.c lab[0-9][0-9]/*.cu 2>/dev/null | LC_ALL=C sort)
  [ -z "$have_solutions" ] || check "tests/grade/manifest.txt lists exactly the files of solutions/" \
    diff <(manifest_files) <(cd solutions && ls lab[0-9][0-9]/* | LC_ALL=C sort)
fi
if [[ $sections == *2* ]]; then
if [ -z "$have_graded" ]; then
  echo "no graded tests under tests/grade/ yet: invariant not checked"
else
  for v in solutions labs; do
    [ $v = solutions ] && [ -z "$have_solutions" ] && continue
    if ! mk grade-build VARIANT=$v >"$tmp/build-$v.log" 2>&1; then
      fail "make grade-build VARIANT=$v"
      tail -n 20 "$tmp/build-$v.log"
      continue
    fi
    mkdir -p "$tmp/$v"
    # as make grade runs it: the solutions' runners are the reference for both variants, and the
    # solutions are graded through student-role runners of their own, like any submission
    runners=$root/build/$v
    [ $v = solutions ] && runners=$root/build/solutions/as-submission
    wc=() # the solutions' run records the reference kernels' counters (checked below)
    [ $v = solutions ] && wc=(--write-counters "$tmp/counters.txt")
    (cd "$tmp/$v" && "$root/build/$v/grade" --runner "$runners" --reference "$root/build/solutions" \
      "${wc[@]}" >term.log 2>&1)
    rc=$?
    r=$tmp/$v/results.json
    check "VARIANT=$v: results.json is valid JSON" json_valid "$r"
    check "VARIANT=$v: test scores add up" totals_agree "$r" "$tmp/$v/term.log"
    no_symbols() { [ -z "$(nm "$1" 2>/dev/null)" ] && [ -z "$(readelf -S "$1" | grep -E '\.(symtab|debug_info)')" ]; }
    # every runner of the submission: one, or one per level of the dependency map (each exercise
    # graded alone: with the solutions as reference, both variants here), named, not globbed away
    runners_stripped() { local f n=0; for f in "$runners/grade-run" "$runners"/level*/grade-run; do
        [ -e "$f" ] || continue; n=$((n + 1)); no_symbols "$f" || return 1; done; [ $n -gt 0 ]; }
    check "VARIANT=$v: the submission's runners are stripped (no symbol table, no debug info)" \
      runners_stripped
    check "VARIANT=$v: graded each exercise alone (one runner per level, none holding every file)" \
      eval '[ -x "$runners/level0/grade-run" ] && [ ! -e "$runners/grade-run" ] && grep -q "^#levels [1-9]" "$runners/exercises.txt"'
    if [ $v = solutions ]; then
      # one object per file of solutions/ (made by grade-build above), named, not globbed: a
      # missing or stale-only build/solutions/sub/ fails here rather than checking nothing
      sol_raw=$(cd solutions && ls lab[0-9][0-9]/*.c lab[0-9][0-9]/*.cu 2>/dev/null |
        sed -E 's#^#build/solutions/sub/#; s#\.cu?$#.raw.o#')
      # (a kernel exercise's object also holds weak copies of C++ library functions)
      sol_globals() { local o; for o in $sol_raw; do [ -f "$o" ] || { echo "missing $o"; continue; }
        nm -g --defined-only -P "$o" | awk 'NF > 1 && $2 !~ /^[WV]$/ {print $1}'; done | LC_ALL=C sort -u; }
      check "tests/grade/exercise_symbols.txt lists exactly the globals solutions/ defines" \
        diff <(grep -v '^#' tests/grade/exercise_symbols.txt) <(sol_globals)
      # every kernel exercise's solution and stub references only device symbols: a new
      # exercise that needs one more fails here, with the line to add
      device_ok() { local f o r=0; for f in $(cd solutions && ls lab[0-9][0-9]/*.cu 2>/dev/null); do
          for o in "build/solutions/sub/${f%.cu}.raw.o" "build/grade-kit/stubs/${f%.cu}.o"; do
            [ -f "$o" ] || { echo "    missing $o"; r=1; continue; }
            bash tests/grade/device_check.sh "$f ($o)" "$o" | sed 's/^/    /'
            [ "${PIPESTATUS[0]}" = 0 ] || r=1
          done; done
        [ $r = 0 ] || echo "    (a symbol a kernel or launcher could use on a GPU: add it to tests/grade/device_symbols.txt)"
        return $r; }
      check "every kernel exercise's solution and stub uses only device symbols (tests/grade/device_symbols.txt)" device_ok
      # The kit's recorded reference counters (a handout's practice run shows and judges a
      # kernel's against them) are this run's, for every test that passed here (one whose
      # reference run timed out on a loaded machine records none), and name no test that
      # is gone.
      counters_current() {
        local passed t
        passed=$(grep -o '"name":"[^"]*",[^{}]*"status":"passed"' "$r" | cut -d'"' -f4)
        diff <(grep -v '^#' tests/grade/reference_counters.txt | awk 'NR == FNR {p[$1]; next} $1 in p' <(echo "$passed") -) \
          <(grep -v '^#' "$tmp/counters.txt" | awk 'NR == FNR {p[$1]; next} $1 in p' <(echo "$passed") -) || return 1
        for t in $(grep -v '^#' tests/grade/reference_counters.txt | cut -d' ' -f1 | sort -u); do
          grep -q "\"name\":\"$t\"" "$r" || { echo "    $t: no such test now"; return 1; }
        done
      }
      check "tests/grade/reference_counters.txt is current (else: make grade GRADE_FLAGS=\"--write-counters tests/grade/reference_counters.txt\")" \
        counters_current
      max=$(grep -o '"max_score":[0-9]*' "$r" | head -1 | cut -d: -f2)
      if [ $rc -eq 0 ] && grep -qx "Score: $max/$max" "$tmp/$v/term.log"; then
        ok "VARIANT=solutions: full marks ($(tail -n 1 "$tmp/$v/term.log"))"
      else
        fail "VARIANT=solutions: not full marks (exit $rc); tests that lost points:"
        grep '"status":"failed"' "$r" | grep -o '"name":"[^"]*"' | sed 's/^/    /'
        grep -A4 -E '^  (wrong answer|crash|timeout|out of memory|exited early|tampered|not implemented) ' \
          "$tmp/$v/term.log" | head -n 40
      fi
    else
      scoring=$(grep '"status":"passed"' "$r" | grep -o '"name":"[^"]*"')
      if [ $rc -eq 1 ] && [ -z "$scoring" ] && grep -qE '^Score: 0/[1-9]' "$tmp/$v/term.log"; then
        ok "VARIANT=labs: every graded test fails on the stubs ($(tail -n 1 "$tmp/$v/term.log"))"
      else
        fail "VARIANT=labs: graded tests that pass on the stubs (they cannot fail):"
        echo "${scoring:-    (none; exit status $rc)}" | sed 's/^/    /'
      fi
    fi
  done
fi
fi

# ------------------------------------------------------------------ 2b. attacks on the real labs
# Each tests/grader/attacks/NAME/ holds a few hostile files laid over the stubs of labs/. The
# submission is graded as on Gradescope: its own runners, the solutions' as the reference, kept
# in a mode-0700 directory. Each must score what the stubs earn (0/<all points>, or 0 when it is
# refused before linking), leave a valid results.json that the grader wrote, never show text
# the attack printed only on success (HACKED, LEAK), and leave no scratch behind. The table
# names, per attack, one test and its expected outcome ("refused: TEXT" when the submission
# must not even link, TEXT being the reason that results.json gives).
expected_attacks='
01_forge_records lab02_masked_softmax_1d wrong_answer
02_header_redefine lab02_masked_softmax_1d not_implemented
03_include_next lab02_masked_softmax_1d not_implemented
03_include_next - refused: grade: ignored: math.h
04_ifunc lab02_masked_softmax_1d crash
05_init_section lab02_masked_softmax_1d not_implemented
06_kill_grader lab02_masked_softmax_1d forbidden
06_kill_grader lab02_dot_product_lens forbidden
07_escape lab01_gaussian_kernel forbidden
07_escape lab01_boxcar_kernel forbidden
07_escape lab01_constant_kernel forbidden
07_escape lab01_epanechnikov_kernel forbidden
08_fifo_mkdir lab02_masked_softmax_1d forbidden
08_fifo_mkdir lab02_additive_toy_example forbidden
09_read_secrets lab02_masked_softmax_1d not_implemented
10_bad_utf8 lab02_masked_softmax_1d not_implemented
11_build_log_utf8 - refused: error
12_signal_hijack lab02_masked_softmax_1d crash
13_timer lab02_masked_softmax_1d forbidden
14_thread lab02_masked_softmax_1d forbidden
15_patch_code lab02_masked_softmax_1d forbidden
16_exec_fd lab02_masked_softmax_1d forbidden
17_rewrite_capture lab02_masked_softmax_1d forbidden
18_mremap_code lab02_masked_softmax_1d forbidden
30_printf_hook lab05_pe_table wrong_answer
30_printf_hook lab05_pe_table_odd wrong_answer
31_stack_scan lab01_nadaraya_watson_weights not_implemented
32_symtab_lookup lab01_nwkr_forward not_implemented
33_mimic_record lab02_masked_softmax_1d wrong_answer
34_backend_kernel lab03_gru_cell_forward crash
35_nan_expected lab01_nadaraya_watson_unsupported wrong_answer
35_nan_expected lab01_nadaraya_watson_weights wrong_answer
40_kernel_calls_host - refused: layer_norm_kernel.cu uses backend_of: a kernel can only call device functions, and backend_of is host code of the kit (common/backend.h)
40_kernel_calls_host - refused: layer_norm_kernel.cu uses cpu_backend: a kernel can only call device functions
41_kernel_dlsym - refused: masked_softmax_kernel.cu uses dlsym: a kernel can only call device functions, and dlsym is host code
42_softmax_table lab02_masked_softmax_rows_1d not_implemented
42_softmax_table - refused: lab02/masked_softmax_rows.c calls backend_of, which is not the C library
43_variance_theory lab02_score_variance_unscaled wrong_answer
43_variance_theory lab02_score_variance_scaled wrong_answer
43_variance_theory lab02_score_variance_measured wrong_answer
19_hostile_names lab02_masked_softmax_1d not_implemented
19_hostile_names - refused: grade: ignored: lab02/`touch attention-lab-attack19-ran`.c
19_hostile_names - refused: grade: ignored: lab02/?[31mred.c
20_header_solves lab02_masked_softmax_1d not_implemented
20_header_solves - refused: grade: ignored: lab02/lab02.h differs from the kit
21_include_answers lab02_masked_softmax_1d not_implemented
21_include_answers - refused: lab02/masked_softmax.c:6: #include of
21_include_answers - refused: lab02/additive_attention.c:2: #include of /etc/hostname
21_include_answers - refused: lab02/dot_product_attention.c:2: #include of
22_incbin lab02_masked_softmax_1d not_implemented
22_incbin - refused: lab02/masked_softmax.c:8: inline assembly
22_incbin - refused: lab02/additive_attention.c:4: a section or symver attribute
23_self_include - refused: the file includes itself
24_diagnostic_flood - refused: grade: lab02/masked_softmax.c: is over the
25_symlink lab02_masked_softmax_1d not_implemented
25_symlink - refused: grade: lab02/masked_softmax.c: it is a symbolic link
25_symlink - refused: grade: lab05/positional_encoding.c: lab05/ is a symbolic link
26_line_rename - refused: lab02/masked_softmax.c:5: #line names another file
27_include_device - refused: grade: lab02/masked_softmax.c: is over the
'
if [[ $sections == *2* ]]; then
if [ -n "$have_graded" ] && [ -n "$have_solutions" ] && [ -x build/labs/grade ] &&
  [ -x build/solutions/grade-run ]; then
  ref=$tmp/reference
  mkdir -p "$ref" && chmod 700 "$ref" && cp build/solutions/grade-run* "$ref/"
  all=$(grep -o '"max_score":[0-9]*' "$tmp/solutions/results.json" 2>/dev/null | head -1 | cut -d: -f2)
  for a in tests/grader/attacks/*/; do
    a=${a%/}
    name=${a##*/}
    w=$tmp/attack/$name
    mkdir -p "$w/tmp" "$w/out"
    cp -a labs "$w/sub"
    cp -r "$a"/. "$w/sub/"
    rm -f "$w/sub/setup.sh"
    [ ! -f "$a/setup.sh" ] || bash "$a/setup.sh" "$w/sub" "$root" # names git cannot keep well
    # the stubs' staged files and objects: only the hostile files are compiled
    cp -a build/labs/stage build/labs/sub build/labs/notes "$w/out/"
    rm -f /tmp/attention-lab-attack19-ran attention-lab-attack19-ran
    # what make grade does, with one make run instead of three (grading.sh's time is precious):
    # build the runners; when that fails, build_failed.sh writes results.json
    if mk grade-runners VARIANT=labs GRADE_SUB="$w/sub" GRADE_OUT="$w/out" GRADE_REF="$ref" \
      >"$w/build.log" 2>&1; then
      (cd "$w" && TMPDIR="$w/tmp" "$root/build/labs/grade" --runner "$w/out" --reference "$ref" --notes "$w/out/notes" \
        --json "$w/results.json" >"$w/term.log" 2>&1)
      rc=$?
    else
      bash tests/grade/build_failed.sh "$w/build.log" --json "$w/results.json" >"$w/term.log" 2>&1
      rc=1
    fi
    r=$w/results.json
    check "attack $name: make grade fails (exit $rc)" [ $rc -ne 0 ]
    check "attack $name: results.json is valid UTF-8 JSON" json_valid "$r"
    check "attack $name: score 0" grep -q '^  "score": 0,' "$r"
    check "attack $name: no success marker (HACKED, LEAK) anywhere" \
      eval '! grep -aqE "HACKED|LEAK" "$r" "$w/term.log"'
    check "attack $name: scratch removed" [ -z "$(ls -A "$w/tmp" 2>/dev/null)" ]
    check "attack $name: no command from a file name ran" eval '[ ! -e /tmp/attention-lab-attack19-ran ] && [ ! -e attention-lab-attack19-ran ]'
    while read -r aname test outcome; do
      [ "$aname" = "$name" ] || continue
      if [ "$test" = - ]; then
        why=${outcome#refused: }
        check "attack $name: results.json says '$why'" grep -aqF "$why" "$r"
      else
        check "attack $name: graded over all the points (Score: 0/$all)" \
          grep -qx "Score: 0/$all" "$w/term.log"
        check "attack $name: $test is $outcome" \
          grep -q "\"score\":0,.*\"outcome\":\"$outcome\"" <<<"$(test_line "$r" "$test")"
      fi
    done <<<"$expected_attacks"
  done
  # the same names both ways (a renamed attack would otherwise keep the count and lose its rows)
  check "every attack under tests/grader/attacks/ has an expected outcome, and every row an attack" \
    diff <(cd tests/grader/attacks && ls -d */ | sed 's#/$##' | LC_ALL=C sort) \
    <(awk 'NF {print $1}' <<<"$expected_attacks" | LC_ALL=C sort -u)
else
  skip "attacks on the real labs: they need solutions/ and both graders built"
fi
fi

# ------------------------------------------------------------------ 2c. wrong kernels
# Each tests/grader/kernels/NAME/ holds a kernel exercise (the kernel track) with one classic
# mistake (its PLANT line; or labNN/FILE.sed, a sed script that plants it in the solution's
# FILE), laid over the solutions: graded as a submission against the
# solutions' runners, the lab of its file only. The table names, per plant, a test, the outcome
# it must get with 0 points (or `passed`: a test the mistake must not cost, such as the numbers'
# points of an uncoalesced permute), and a text its report in results.json must show: for a finding of
# the emulator's sanitizers, the report itself (0 points even where the numbers are right:
# 03_race_blocks writes the right value from every block).
expected_kernels='
01_missing_bound lab05_pe_kernel sanitizer memcheck: kernel posenc_kernel
01_missing_bound lab05_pe_kernel_uneven sanitizer past the end of its allocation
02_wrong_formula lab05_pe_kernel wrong_answer P: rows 0..99
02_wrong_formula lab05_pe_kernel_large wrong_answer expected
03_race_blocks lab05_pe_kernel sanitizer racecheck: kernel posenc_kernel
03_race_blocks lab05_pe_kernel_large sanitizer with no barrier between them
04_no_grid_stride lab05_pe_kernel_large wrong_answer got nan
05_uninit_read lab05_pe_kernel sanitizer initcheck: kernel posenc_kernel
06_uncoalesced lab05_pe_kernel_coalesced wrong_answer global store sectors: your kernel
07_softmax_mask_zero lab02_softmax_kernel_lab_shapes wrong_answer masked_softmax_cuda(x (2, 2, 4)
07_softmax_mask_zero lab02_softmax_kernel_zero_and_large wrong_answer expected 0, got 0.02777778
08_softmax_no_bound lab02_softmax_kernel_lab_shapes sanitizer memcheck: kernel masked_softmax_warp_kernel
08_softmax_no_bound lab02_softmax_kernel_uneven sanitizer past the end of its allocation
09_softmax_shfl_mask lab02_softmax_kernel_lab_shapes sanitizer synccheck: kernel masked_softmax_warp_kernel
09_softmax_shfl_mask lab02_softmax_kernel_uneven sanitizer which leaves the lane itself out
10_softmax_partial_warp lab02_softmax_kernel_lab_shapes sanitizer names lanes 16-31 of a warp that has 16
10_softmax_partial_warp lab02_softmax_kernel_backward sanitizer synccheck: kernel masked_softmax_warp_backward_kernel
11_softmax_race lab02_softmax_kernel_lab_shapes sanitizer racecheck: kernel masked_softmax_warp_kernel
11_softmax_race lab02_softmax_kernel_many_rows sanitizer with no barrier between them
21_flash_untiled lab06_flash_attention_reads wrong_answer global load sectors
22_flash_mask_zero lab06_flash_attention wrong_answer a length per batch row
22_flash_mask_zero lab06_flash_attention_causal wrong_answer causal lengths
23_flash_no_barrier lab06_flash_attention sanitizer kernel flash_attention_kernel
24_flash_missing_bound lab06_flash_attention_uneven sanitizer memcheck: kernel flash_attention_kernel
12_permute_no_bound lab04_permute_naive sanitizer memcheck: kernel permute0213_naive_kernel
12_permute_no_bound lab04_permute_tiled passed
13_permute_no_barrier lab04_permute_tiled sanitizer initcheck: kernel permute0213_tiled_kernel
13_permute_no_barrier lab04_permute_tiled_coalesced sanitizer initcheck: kernel permute0213_tiled_kernel
13_permute_no_barrier lab04_permute_tiled_banks sanitizer that no thread of this block has written
13_permute_no_barrier lab04_permute_naive passed
14_permute_uncoalesced lab04_permute_tiled passed
14_permute_uncoalesced lab04_permute_tiled_coalesced wrong_answer global load sectors: your kernel
14_permute_uncoalesced lab04_permute_tiled_small_d wrong_answer global store sectors: your kernel
14_permute_uncoalesced lab04_permute_tiled_banks wrong_answer made no shared-memory request
15_permute_per_element lab04_permute_tiled_coalesced passed
15_permute_per_element lab04_permute_tiled_small_d wrong_answer global load sectors: your kernel
15_permute_per_element lab04_permute_tiled_banks wrong_answer made no shared-memory request
16_permute_unpadded lab04_permute_tiled_small_d passed
16_permute_unpadded lab04_permute_tiled_banks wrong_answer bank-conflict replays per shared-memory request
17_layer_norm_no_barrier lab06_layer_norm_kernel sanitizer racecheck: kernel layer_norm_block_kernel
17_layer_norm_no_barrier lab06_layer_norm_grad_kernel sanitizer racecheck: kernel layer_norm_dx_block_kernel
18_layer_norm_no_bound lab06_layer_norm_grad_kernel_uneven sanitizer memcheck: kernel layer_norm_cols_block_kernel
18_layer_norm_no_bound lab06_layer_norm_kernel passed
18_layer_norm_no_bound lab06_layer_norm_grad_kernel passed
25_posenc_on_host lab05_pe_kernel wrong_answer your launcher computed on the host
25_posenc_on_host lab05_pe_kernel_large wrong_answer copied 132000 bytes from the host
26_posenc_hand_capped lab05_pe_kernel wrong_answer got nan
26_posenc_hand_capped lab05_pe_kernel_large wrong_answer got nan
27_posenc_leak lab05_pe_kernel_uneven wrong_answer a call leaves 256 more bytes of device memory
27_posenc_leak lab05_pe_kernel passed
28_flash_shared_49k lab06_flash_attention sanitizer a GPU refuses this launch
28_flash_shared_49k lab06_flash_attention_causal sanitizer 16384 bytes of static shared memory
28_flash_shared_49k lab06_flash_attention_uneven passed
29_flash_no_running_max lab06_flash_attention_uneven wrong_answer scale 0.9, Q and K in [-5, 5)
29_flash_no_running_max lab06_flash_attention passed
30_flash_ignores_scale lab06_flash_attention_uneven wrong_answer scale 0.9, Q and K in [-5, 5)
30_flash_ignores_scale lab06_flash_attention passed
31_layer_norm_one_pass lab06_layer_norm_kernel_uneven wrong_answer y (7, 1100)
31_layer_norm_one_pass lab06_layer_norm_kernel passed
32_layer_norm_pow2_block lab06_layer_norm_kernel_uneven sanitizer block of 2048 threads
32_layer_norm_pow2_block lab06_layer_norm_kernel passed
'
if [[ $sections == *6* ]]; then
if [ -n "$have_graded" ] && [ -n "$have_solutions" ] && [ -x build/labs/grade ] &&
  [ -x build/solutions/grade-run ] && [ -d build/solutions/as-submission/sub ]; then
  kref=$tmp/kernel-reference
  mkdir -p "$kref" && chmod 700 "$kref" && cp build/solutions/grade-run* "$kref/"
  for a in tests/grader/kernels/*/; do
    a=${a%/}
    name=${a##*/}
    # GRADING_KERNELS=GLOB: only the wrong kernels whose name matches (a quicker rerun)
    [[ -z ${GRADING_KERNELS:-} || $name == $GRADING_KERNELS ]] || continue
    w=$tmp/kernels/$name
    mkdir -p "$w/out"
    cp -a solutions "$w/sub"
    cp -r "$a"/. "$w/sub/"
    # a plant kept as a sed script (labNN/FILE.sed: the solution's FILE with its PLANT lines):
    # the mistake alone, applied to the solution as it is now
    for p in "$w"/sub/lab[0-9][0-9]/*.sed; do
      [ -f "$p" ] || continue
      f=${p%.sed}
      sed -f "$p" "solutions/${f#"$w"/sub/}" >"$f" && rm -f "$p"
      check "wrong kernel $name: its sed script still plants in solutions/${f#"$w"/sub/}" \
        grep -q PLANT "$f"
    done
    lab=$(cd "$a" && ls -d lab[0-9][0-9] | head -1)
    # the solutions' staged files and objects: only the planted file is compiled
    cp -a build/solutions/as-submission/stage build/solutions/as-submission/sub \
      build/solutions/as-submission/notes "$w/out/"
    if mk grade-runners VARIANT=labs GRADE_SUB="$w/sub" GRADE_OUT="$w/out" GRADE_REF="$kref" \
      >"$w/build.log" 2>&1; then
      (cd "$w" && "$root/build/labs/grade" --runner "$w/out" --reference "$kref" \
        --notes "$w/out/notes" --lab "${lab#lab}" --json "$w/results.json" >"$w/term.log" 2>&1)
    else
      fail "wrong kernel $name: the runners do not build"
      tail -n 20 "$w/build.log"
      continue
    fi
    r=$w/results.json
    check "wrong kernel $name: results.json is valid JSON" json_valid "$r"
    while read -r kname test outcome text; do
      [ "$kname" = "$name" ] || continue
      line=$(test_line "$r" "$test")
      if [ "$outcome" = passed ]; then # a test the mistake must not cost (the numbers' points)
        check "wrong kernel $name: $test keeps its points" grep -q '"status":"passed"' <<<"$line"
        continue
      fi
      check "wrong kernel $name: $test is $outcome with 0 points" \
        grep -q "\"score\":0,.*\"outcome\":\"$outcome\"" <<<"$line"
      check "wrong kernel $name: $test's report shows '$text'" grep -qF "$text" <<<"$line"
    done <<<"$expected_kernels"
    # the exercises around it keep their points
    check "wrong kernel $name: the lab's other tests pass" grep -q '"status":"passed"' "$r"
    if grep -q '"outcome":"sanitizer"' "$r"; then
      check "wrong kernel $name: the terminal shows the emulator's report" \
        grep -qE "^        ((memcheck|initcheck|racecheck|synccheck|launch): kernel |kernel [A-Za-z0-9_]+ \()" "$w/term.log"
    fi
  done
  check "every wrong kernel under tests/grader/kernels/ has expected outcomes, and every row a kernel" \
    diff <(cd tests/grader/kernels && ls -d */ | sed 's#/$##' | LC_ALL=C sort) \
    <(awk 'NF {print $1}' <<<"$expected_kernels" | LC_ALL=C sort -u)
else
  skip "wrong kernels: they need solutions/, both graders and make grade-build VARIANT=solutions"
fi
fi

# ------------------------------------------------------------------ 3. make handout
no_line_matches() { ! grep -qE "$1" "$2"; }
lists_all_stubs() { # every file under labs/ is in the listing $1
  local f
  for f in labs/lab*/*; do grep -qx "attention-lab/$f" "$1" || return 1; done
}
# make exits 2 when the grader exits 1: graded, not full marks (no crash, no usage error)
graded_zero() { [ "$1" -eq 2 ] && grep -qE '^Score: 0/[1-9]' "$2" && grep -q '(VARIANT=labs)' "$2"; }

if [[ $sections == *3* ]]; then
# HANDOUT_DOCS=no: without the reference run of the labs for the prebuilt pages (checked by
# tests/suites/handout_docs.sh); this section checks what the handout grades
if ! HANDOUT_DOCS=no mk handout >"$tmp/handout.log" 2>&1; then
  fail "make handout"
  cat "$tmp/handout.log"
else
  tarball=build/attention-lab-handout.tar.gz
  tar -tzf "$tarball" >"$tmp/handout.list"
  check "handout: no solutions/, tests/hidden/, tests/grader/kernels/ or feedback/, build/, .git, out/, data/ inside" \
    no_line_matches '^attention-lab/(solutions|tests/hidden|tests/grader/(kernels|feedback)|build|\.git|out|data)(/|$)' "$tmp/handout.list"
  check "handout: has the grader" grep -qx 'attention-lab/tests/grade/grader.c' "$tmp/handout.list"
  check "handout: has every file of labs/" lists_all_stubs "$tmp/handout.list"
  # the student's README stands in for the repository's (which is about developing the kit)
  check "handout: README.md, once, is docs/handout-README.md" bash -c \
    "[ \$(grep -cx 'attention-lab/README.md' '$tmp/handout.list') = 1 ] &&
     ! grep -q 'handout-README' '$tmp/handout.list' &&
     tar -xzOf '$tarball' attention-lab/README.md | cmp -s - docs/handout-README.md"
  mkdir -p "$tmp/ho" && tar -xzf "$tarball" -C "$tmp/ho"
  h=$tmp/ho/attention-lab
  # -O0: this only checks that the handout builds and grades; it need not be fast.
  # The first make grade LAB=02 of a fresh handout builds everything it needs from clean
  # (minutes): it must never be silent for more than 10 s (tests/tools/progress.sh says what
  # it builds every 8 s; the grader names a test still running after 8 s). Timed line by line
  # here, where this suite builds the handout anyway: no extra build.
  bash tests/tools/max_gap.sh "$tmp/grade.gap" "$h/grade.log" \
    bash -c 'cd "$1" && env -u MAKEFLAGS -u MFLAGS -u VARIANT MAKELEVEL=1 make -s --no-print-directory -j2 OPT=-O0 grade LAB=02' _ "$h"
  rc=$?
  read -r gap gap_line <"$tmp/grade.gap"
  check "handout: the first make grade LAB=02 (a build from clean) is never silent for more than 10 s (longest: $gap s, before: ${gap_line:0:60})" \
    awk -v g="$gap" 'BEGIN {exit !(g <= 10)}'
  if [ -n "$have_graded" ]; then
    check "handout: make grade LAB=02 runs on the stubs (VARIANT=labs) and scores zero" \
      graded_zero $rc "$h/grade.log" || tail -n 15 "$h/grade.log"
  fi
  if ls "$h"/chapters/*/lab01.c >/dev/null 2>&1; then
    if (cd "$h" && mk OPT=-O0 lab01 >build.log 2>&1 && [ -x lab01 ]); then
      ok "handout: make lab01 builds"
    else
      fail "handout: make lab01 builds"
      tail -n 15 "$h/build.log"
    fi
  fi
  (cd "$h" && mk OPT=-O0 grade >grade.log 2>&1)
  rc=$?
  if [ -n "$have_graded" ]; then
    check "handout: make grade runs on the stubs (VARIANT=labs) and scores zero" \
      graded_zero $rc "$h/grade.log" || tail -n 15 "$h/grade.log"
  else
    check "handout: make grade says there is nothing to grade yet" \
      grep -q 'no graded tests' "$h/grade.log"
  fi
  # Submissions the grader must refuse to link (check_submission.sh), and one that does not
  # compile: each still leaves a results.json with score 0 and says why.
  if [ -n "$have_graded" ]; then
    s=$h/labs
    cp "$s/lab05/positional_encoding.c" "$s/lab02/masked_softmax.c" "$s/lab06/ffn.c" "$tmp/"
    printf '#include <unistd.h>\nssize_t write(int fd, const void *b, size_t n) { (void)fd; (void)b; return (ssize_t)n; }\n' \
      >>"$s/lab05/positional_encoding.c"
    # the kit no longer has a t_masked_softmax, but an old handout's solution may call it: the
    # object then names it, and check_submission.sh refuses it before the link would fail
    sed -i 's|^  return NULL;|  extern Tensor *t_masked_softmax(Tensor *, Tensor *);\n  return t_masked_softmax(X, valid_lens);|' "$s/lab02/masked_softmax.c"
    echo '__attribute__((constructor)) static void early(void) {}' >>"$s/lab06/ffn.c"
    touch "$s/lab05/positional_encoding.c" "$s/lab02/masked_softmax.c" "$s/lab06/ffn.c"
    (cd "$h" && rm -f results.json && mk OPT=-O0 grade >refused.log 2>&1)
    rc=$?
    check "refused submission: make grade fails" [ $rc -ne 0 ]
    check "refused submission: results.json is valid JSON with score 0" \
      grep -q '"score": 0,' "$h/results.json"
    json_valid "$h/results.json" || fail "refused submission: results.json is not valid JSON"
    check "refused: a global write() that would replace the harness's is named" \
      grep -q "positional_encoding.c defines the global symbol 'write'" "$h/results.json"
    check "refused: calling the kit's t_masked_softmax for exercise 2.1 is named" \
      grep -q 'masked_softmax.c calls t_masked_softmax' "$h/results.json"
    check "refused: a constructor in student code is named" \
      grep -q 'ffn.c has a .init_array section' "$h/results.json"
    cp "$tmp/positional_encoding.c" "$s/lab05/" && cp "$tmp/masked_softmax.c" "$s/lab02/"
    sed 's|^#include "lab06/lab06.h"|&\nint missing_semicolon(void) { return 1 }|' "$tmp/ffn.c" >"$s/lab06/ffn.c"
    touch "$s/lab05/positional_encoding.c" "$s/lab02/masked_softmax.c"
    (cd "$h" && rm -f results.json && mk OPT=-O0 grade >broken.log 2>&1)
    check "a submission that does not compile: results.json with score 0 and the compiler error" \
      grep -q '"score": 0,.*ffn.c:[0-9]*:[0-9]*: error' <<<"$(tr -d '\n' <"$h/results.json")"
    cp "$tmp/ffn.c" "$s/lab06/"
    # A submission laid over the tree (attack 20, route 2): its lab02.h solves exercise 2.1 in
    # the tests' own objects if the build takes it. The handout grades against its read-only,
    # checksummed tests/grade/kit/ instead.
    cp "$s/lab02/lab02.h" "$tmp/lab02.h"
    cp tests/grader/attacks/20_header_solves/lab02/lab02.h "$s/lab02/lab02.h"
    (cd "$h" && rm -f results.json && mk OPT=-O0 grade LAB=02 >header.log 2>&1)
    check "a lab02.h laid over the handout's labs/ (attack 20): lab 02 still scores 0" \
      grep -q "^Score: 0/$(manifest_points 02)\$" "$h/header.log"
    check "a lab02.h laid over the handout's labs/: results.json names it as ignored" \
      grep -q 'lab02/lab02.h differs from the kit' "$h/results.json"
    cp "$tmp/lab02.h" "$s/lab02/lab02.h"
    # The pristine copy itself changed: make grade refuses it.
    k=$h/tests/grade/kit/lab02/lab02.h
    chmod u+w "$k" && echo '#define masked_softmax(X, v) 0' >>"$k"
    (cd "$h" && mk OPT=-O0 grade LAB=02 >tampered.log 2>&1)
    check "a changed tests/grade/kit/ copy is refused (checksums)" \
      grep -q 'do not match their checksums' "$h/tampered.log"
  fi
fi
fi

# A git checkout with a student's lab02.h laid over labs/ (route 2): the pristine copy is the
# committed one, and make grade says that labs/lab02/lab02.h differs. (The script alone, in a
# small repository: nothing is compiled.)
if [[ $sections == *3* ]] && command -v git >/dev/null; then
  g=$tmp/gitco
  mkdir -p "$g/tests/grade" && cp -r labs common cuda "$g/" && cp tests/grade/kit_include.sh "$g/tests/grade/"
  (cd "$g" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm kit &&
    cp "$root/tests/grader/attacks/20_header_solves/lab02/lab02.h" labs/lab02/lab02.h &&
    bash tests/grade/kit_include.sh build) >"$tmp/gitco.log" 2>&1
  check "a checkout with a lab02.h laid over labs/: the grade's copy is the committed one" \
    cmp -s "$g/build/grade-include/kit/labs/lab02/lab02.h" labs/lab02/lab02.h
  check "a checkout with a lab02.h laid over labs/: make grade says it differs" \
    grep -q 'labs/lab02/lab02.h differs from the committed tree' "$tmp/gitco.log"
fi

# ------------------------------------------------------------------ 4. the Gradescope recipe
# docs/instructor-guide.md's setup.sh and run_autograder, run end to end on a copy of this tree
# (with a hidden test of its own), /tmp paths for /autograder, as root when this runs as root:
# the submission (exercise 2.1 solved, a probe elsewhere) compiles as nobody or not at all,
# results.json is valid, and no hidden point shows in what the student sees. Then the hidden
# test is removed: its runner goes too.
recipe() { # the guide's two scripts, with $ag for /autograder, built at -O0 (quicker; the
  # guide's -march stays, so its portable ISA is what isa_check.sh checks in setup.sh)
  sed -n '/^# setup.sh — /,/^```/p' docs/instructor-guide.md | grep -v '^```' >"$tmp/setup.sh"
  sed -n '/^# run_autograder — /,/^```/p' docs/instructor-guide.md | grep -v '^```' >"$tmp/run_autograder"
  sed -i "s|/autograder|$ag|g; s|^make deps$|: make deps|; s|^make |make OPT=-O0 -j2 |; s|OPT='-O3 |OPT='-O0 |g" \
    "$tmp/setup.sh" "$tmp/run_autograder"
}
hidden_demo='#include "../../grade/grade.h"
#include "lab02/lab02.h"
GRADED_TEST(lab02_hidden_demo, 7, "2.1 masked_softmax, hidden: two equal scores") {
  Tensor *Y = masked_softmax(tensor_from(SHAPE(1, 1, 2), (const float[]){0.25f, 0.25f}), NULL);
  EXPECT_NOT_NULL(Y, "masked_softmax");
  EXPECT_NEAR(Y->data[0], 0.5, 1e-6, "softmax of two equal scores"); /* float32 exp, 2 terms */
}'
if [[ $sections == *4* ]]; then
if [ -z "$have_solutions" ] || [ -z "$have_graded" ]; then
  skip "the Gradescope recipe: it needs solutions/ and the graded tests"
elif ! grep -q '^# setup.sh — ' docs/instructor-guide.md; then
  fail "the Gradescope recipe: docs/instructor-guide.md has no setup.sh block"
else
  ag=$tmp/ag
  mkdir -p "$ag/source/tests/hidden/lab02" "$ag/results" "$ag/submission"
  git ls-files -z --cached --others --exclude-standard | grep -zv '^tests/hidden/' |
    while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 cp --parents -t "$ag/source"
  printf '%s\n' "$hidden_demo" >"$ag/source/tests/hidden/lab02/test_demo_hidden.c"
  cp -a labs "$ag/submission/labs"
  cp solutions/lab02/masked_softmax.c "$ag/submission/labs/lab02/"
  # __has_include opens the reference (mode 0700): as root the file stops at an #error saying
  # so, as nobody at "Permission denied"
  printf '#if __has_include("%s/ref/grade-run")\n#error "COMPILED-AS-ROOT"\n#endif\n' "$ag" |
    cat - labs/lab02/additive_attention.c >"$ag/submission/labs/lab02/additive_attention.c"
  recipe
  if (cd "$ag/source" && bash -e "$tmp/setup.sh") >"$tmp/setup.log" 2>&1; then
    ok "Gradescope setup.sh runs (as $(id -un))"
  else
    fail "Gradescope setup.sh runs"
    tail -n 20 "$tmp/setup.log"
  fi
  # setup.sh disassembles the reference runners (tests/grade/isa_check.sh; a failure stops it)
  if grep -q "^isa_check: ok .*grade-run: code the kit compiled uses x86-64-v2 only" "$tmp/setup.log"; then
    ok "Gradescope: the reference runners use x86-64-v2 only $(grep -m1 '^isa_check: ok' "$tmp/setup.log" | sed 's/.*only //')"
  else
    fail "Gradescope: setup.sh did not check the runners' ISA: $(grep -m3 'isa_check' "$tmp/setup.log")"
  fi
  check "Gradescope: make grade-build keeps the kit's headers (no intermediates deleted)" \
    [ -f "$ag/source/build/grade-include/kit/labs/lab02/lab02.h" ]
  (cd "$ag" && bash "$tmp/run_autograder") >"$tmp/run.log" 2>&1
  rc=$?
  r=$ag/results/results.json
  check "Gradescope run_autograder: exit 0 with a results.json (got $rc)" \
    eval '[ $rc -eq 0 ] && [ -s "$r" ]' || tail -n 20 "$tmp/run.log"
  check "Gradescope: results.json is valid JSON" json_valid "$r"
  check "Gradescope: the recipe grades each exercise alone (the reference's objects kept in ref/sub/)" \
    eval '[ -x "$ag/work/level0/grade-run" ] && grep -q "^grade: each exercise graded alone" "$tmp/run.log"'
  check "Gradescope: exercise 2.1 scores its 10 visible points" \
    grep -q "^  \"output\": \".*lab02: 10/$(manifest_points 02)\\\\nlab03: 0/$(manifest_points 03).*Score: 10/$(manifest_points)\"" "$r"
  check "Gradescope: the hidden test ran and passed, shown after the due date" \
    grep -qE '"name":"lab02_hidden_demo","number":"2\.1\.[0-9]+","score":7,"max_score":7,"status":"passed","visibility":"after_due_date"' "$r"
  check "Gradescope: no top-level score (Gradescope adds the tests, hidden ones by their visibility)" \
    eval '! grep -q "^  \"score\"" "$r"'
  # the hidden demo test is worth 7: a total with it (10 + 7, lab 02's + 7, the kit's + 7) leaked
  hid_re="17/|/$(($(manifest_points 02) + 7))|/$(($(manifest_points) + 7))|hidden"
  check "Gradescope: no hidden point in the top-level output or max_score (no ${hid_re//|/, })" \
    eval '! grep -m1 "^  \"output\"" "$r" | grep -qE "$hid_re" && grep -q "\"max_score\":$(manifest_points)," "$r"'
  if [ "$(id -u)" = 0 ]; then
    check "Gradescope: the submission compiled as nobody (it could not see the reference)" \
      eval '! grep -q COMPILED-AS-ROOT "$r" && grep -q "ref/grade-run: Permission denied" "$r"'
  else
    skip "Gradescope as root: this suite runs as $(id -un), so the compile runs as that user"
  fi
  # the hidden test removed (at setup: no hidden objects, a reference without it): the
  # submission's hidden runner goes too
  sed -i 's|GRADE_HIDDEN_OBJ="[^"]*"|GRADE_HIDDEN_OBJ=|' "$tmp/run_autograder"
  rm -f "$ag/ref/grade-run-hidden"
  (cd "$ag" && bash "$tmp/run_autograder") >"$tmp/run2.log" 2>&1
  check "Gradescope without the hidden test: no stale hidden runner, no hidden test graded" \
    eval '[ -z "$(ls "$ag/work/grade-run-hidden" "$ag"/work/level*/grade-run-hidden 2>/dev/null)" ] && ! grep -q lab02_hidden_demo "$r" && grep -q "^  \"score\": 10," "$r"'
  # This issue's attacks (routes 1, 2, 3, 7, 9 and the new parts) under the recipe, as root:
  # each scores 0 with a valid results.json, and no command from a file name runs.
  for a in tests/grader/attacks/{19..27}_*/; do
    a=${a%/}
    name=${a##*/}
    rm -rf "$ag/submission/labs" && cp -a labs "$ag/submission/labs" && cp -r "$a"/. "$ag/submission/labs/"
    rm -f "$ag/submission/labs/setup.sh" attention-lab-attack19-ran "$ag/source/attention-lab-attack19-ran"
    [ ! -f "$a/setup.sh" ] || bash "$a/setup.sh" "$ag/submission/labs" "$root"
    (cd "$ag" && bash "$tmp/run_autograder") >"$tmp/run-$name.log" 2>&1
    check "Gradescope, attack $name: results.json valid, score 0, nothing ran" \
      eval 'json_valid "$r" && grep -q "^  \"score\": 0," "$r" &&
        [ ! -e "$ag/source/attention-lab-attack19-ran" ] && [ ! -e attention-lab-attack19-ran ]' ||
      tail -n 5 "$tmp/run-$name.log"
  done
fi
fi

# ------------------------------------------------------------------ 5. feedback
# Plausible wrong exercises, graded like a submission (its own runners, the solutions' as the
# reference), the exercise alone (--only FILE's name): what the student reads must point at
# the real fault, and no other. lens_1d reads 2-D valid lengths as 1-D (one per batch row);
# no_max writes exp(X) / sum(exp(X)); fill_zero masks at the right lengths with 0 for
# -INFINITY; fill_1e6 with the book's -1e6 (only rows of length 0 go wrong: uniform);
# pe_unwritten (a sed script over the solution's 5.2 kernel) leaves most of P unwritten.
# The terminal shows whole checks: every "expected" row has its "got" row under it; -v shows
# every failed check.
if [[ $sections == *5* ]]; then
if [ -n "$have_graded" ] && [ -n "$have_solutions" ] &&
  mk grade-build VARIANT=solutions >"$tmp/fb-build.log" 2>&1 &&
  mk grade-build VARIANT=labs >>"$tmp/fb-build.log" 2>&1; then
  fref=$tmp/fb-reference
  mkdir -p "$fref" && chmod 700 "$fref" && cp build/solutions/grade-run* "$fref/"
  feedback() { # NAME: grade tests/grader/feedback/NAME over the stubs, its exercise only; dir in $w
    w=$tmp/feedback/$1
    mkdir -p "$w/tmp" "$w/out"
    cp -a labs "$w/sub" && cp -r "tests/grader/feedback/$1"/. "$w/sub/"
    local p f lab only
    for p in "$w"/sub/lab[0-9][0-9]/*.sed; do # a plant over the solution's file
      [ -f "$p" ] || continue
      f=${p%.sed}
      sed -f "$p" "solutions/${f#"$w"/sub/}" >"$f" && rm -f "$p"
      grep -q PLANT "$f" || { fail "feedback $1: its sed script no longer plants in solutions/${f#"$w"/sub/}"; return 1; }
    done
    f=$(cd "tests/grader/feedback/$1" && ls lab[0-9][0-9]/* | head -1)
    lab=${f%%/*} only=${f#*/} only=${only%%.*}
    cp -a build/labs/stage build/labs/sub build/labs/notes "$w/out/"
    mk grade-runners VARIANT=labs GRADE_SUB="$w/sub" GRADE_OUT="$w/out" GRADE_REF="$fref" \
      >"$w/build.log" 2>&1 || { fail "feedback $1: its runners do not build"; tail -n 5 "$w/build.log"; return 1; }
    (cd "$w" && TMPDIR="$w/tmp" "$root/build/labs/grade" --runner "$w/out" --reference "$fref" \
      --lab "${lab#lab}" --only "$only" --json "$w/results.json" >"$w/term.log" 2>&1)
    (cd "$w" && TMPDIR="$w/tmp" "$root/build/labs/grade" --runner "$w/out" --reference "$fref" \
      --lab "${lab#lab}" --only "$only" --json '' -v >"$w/term-v.log" 2>&1)
    check "feedback $1: results.json is valid JSON" json_valid "$w/results.json"
    local nums
    nums=$(grep -oE " ${lab}_[a-z0-9_]+ +[0-9]+\.[0-9]+ " "$w/term.log" | awk '{print $2}' | sort -u)
    check "feedback $1: --only $only grades one exercise's tests only (got: ${nums//$'\n'/ })" \
      eval '[ -n "$nums" ] && [ "$(wc -l <<<"$nums")" -eq 1 ]'
    whole_checks "$1" "$w/term.log"
    whole_checks "$1 (-v)" "$w/term-v.log"
  }
  # Checks are shown whole: a slice's top row ("(0, 1, 0:4)  expected ...", or an agreement's
  # "first") always has its bottom row under it.
  whole_checks() { # NAME, terminal log
    check "feedback $1: the terminal cuts only between whole checks" \
      awk '/^ +[[(][0-9:, ]*[])]  (expected|first) / {top = 1; next}
           top && !/^ +(got|second) / {bad = 1} {top = 0} END {exit bad || top}' "$2"
  }
  # what the terminal shows of one test: its row and the lines under it, up to the next test
  shown() { awk -v t="$2" '/^  [a-z]/ {on = index($0, " " t " ") > 0} on' "$1"; }
  if feedback lens_1d; then
    s=$(shown "$w/term.log" lab02_masked_softmax_large_scores)
    check "feedback lens_1d: large scores fails (its row 1 is masked with row 0's length)" \
      grep -q '^  wrong answer' <<<"$s"
    check "feedback lens_1d: large scores gets no 'subtract the max' hint (the max is not its fault)" \
      eval '! grep -qi "subtract" <<<"$s" && ! grep -qi "subtract" <<<"$(test_line "$w/results.json" lab02_masked_softmax_large_scores)"'
    check "feedback lens_1d: large scores names its first wrong entry as (b, i, j)" \
      grep -qF 'at (0, 1, 0) of shape (1, 2, 4): expected 0.7310586, got 0' <<<"$s"
    check "feedback lens_1d: large scores shows the row's expected and observed values" \
      eval 'grep -qE "^ +\(0, 1, 0:4\)  expected +0\.73106 +0\.26894 +0 +0$" <<<"$s" &&
        grep -qE "^ +got +0\* +0\* +1\* +0$" <<<"$s"'
    check "feedback lens_1d: large scores is told the row is masked with another length" \
      grep -qF 'hint: row (0, 1) has 2 nonzero entries in the expected values (valid length 2) and 3 in yours' <<<"$s"
    check "feedback lens_1d: 2-D lengths names (0, 1, 0) of (2, 3, 5)" \
      grep -qF 'at (0, 1, 0) of shape (2, 3, 5)' <<<"$(shown "$w/term.log" lab02_masked_softmax_2d)"
    check "feedback lens_1d: 1-D lengths still pass" \
      grep -q '^  passed .*lab02_masked_softmax_1d ' "$w/term.log"
  fi
  if feedback no_max; then
    s=$(shown "$w/term.log" lab02_masked_softmax_large_scores)
    check "feedback no_max: large scores: NaN in rows with values to keep, so subtract the row's max" \
      eval 'grep -qF "hint: 7 values are NaN or inf where finite ones are expected (first at (0, 0, 0))" <<<"$s" &&
        grep -qF "subtract the row'"'"'s max before exp" <<<"$s" && ! grep -q "rows expected all 0" <<<"$s"'
    s=$(shown "$w/term.log" lab02_masked_softmax_zero_length)
    check "feedback no_max: a length-0 row's NaN is told 0/0 of an empty row, not 'subtract the max'" \
      eval 'grep -qF "hint: 15 values are NaN or inf in rows expected all 0 (first at (0, 0, 0))" <<<"$s" &&
        ! grep -qi "subtract" <<<"$s"'
    check "feedback no_max: 1-D lengths pass (small scores do not overflow)" \
      grep -q '^  passed .*lab02_masked_softmax_1d ' "$w/term.log"
    check "feedback no_max: it used -INFINITY, so nothing speaks of the -1e6 fill" \
      eval '! grep -q "1e6" "$w/term-v.log"'
  fi
  if feedback fill_zero; then
    s=$(shown "$w/term.log" lab02_masked_softmax_1d)
    check "feedback fill_zero: 1-D lengths are told the length is right and the fill is not" \
      eval 'grep -q "^  wrong answer" <<<"$s" &&
        grep -qE "hint: row \(0, 0\) is masked at the right length \(3\) but its 2 masked entries hold [0-9.e-]+ each, not 0: .*fill them with -INFINITY" <<<"$s"'
    check "feedback fill_zero: no test is told 'another length' (the lengths are right)" \
      eval '! grep -q "another length" "$w/term-v.log"'
  fi
  if feedback fill_1e6; then
    s=$(shown "$w/term.log" lab02_masked_softmax_zero_length)
    check "feedback fill_1e6: a length-0 row is told it is uniform from the book's -1e6 fill" \
      grep -qF 'hint: row (0, 0) has valid length 0 and every entry is 0.2 = 1/5 where 0 is expected: a finite fill (the book'"'"'s -1e6)' <<<"$s"
    check "feedback fill_1e6: no 'another length', no NaN hint, and rows that keep something pass" \
      eval '! grep -qE "another length|NaN or inf" "$w/term-v.log" &&
        grep -q "^  passed .*lab02_masked_softmax_1d " "$w/term.log" &&
        grep -q "^  passed .*lab02_masked_softmax_2d " "$w/term.log"'
  fi
  if feedback pe_unwritten; then
    s=$(shown "$w/term.log" lab05_pe_kernel_large)
    check "feedback pe_unwritten: the large table counts the elements never written" \
      eval 'grep -q "^  wrong answer" <<<"$s" &&
        grep -qE "hint: [0-9]+ elements never written: your grid or loop does not cover all of them" <<<"$s"'
    check "feedback pe_unwritten: no softmax hint (exp, max, NaN or inf) anywhere" \
      eval '! grep -qE "exp\(\)|row.s max|NaN or inf" "$w/term-v.log"'
  fi
  # The table: in exercise order (2.1, 2.2, ..., not by file name), --list as the run.
  nums=$(build/labs/grade --runner "$fref" --lab 02 --list | grep -oE '^lab02_[a-z0-9_]+ +[0-9]+ +[0-9]+\.[0-9]+' | awk '{print $3}' | uniq)
  check "the grade table lists lab02 in exercise order (got: ${nums//$'\n'/ })" \
    eval '[ "$(sort -t. -k1,1n -k2,2n <<<"$nums")" = "$nums" ] && [ "$(wc -l <<<"$nums")" -ge 6 ]'
  # Build notes of one exercise (the 2.5 vectorizer report) only when it is graded, and counters
  # without a reference (a practice run) never bracket the student's own as the reference's.
  n5=build/solutions/as-submission/notes
  if [ -f "$n5/lab02_masked_softmax_rows.vec.txt" ]; then
    (build/labs/grade --runner "$fref" --notes "$n5" --lab 05 --only 5.2 --json '' >"$tmp/fb-l05.log" 2>&1)
    (build/labs/grade --runner "$fref" --notes "$n5" --lab 02 --only 2.5 --json '' >"$tmp/fb-l02.log" 2>&1)
    check "the 2.5 vectorizer note shows with 2.5 graded, not with lab 05" \
      eval 'grep -q "vectorizer" "$tmp/fb-l02.log" && ! grep -q "vectorizer" "$tmp/fb-l05.log"'
    check "a practice run's kernel counters say there is no reference (no [bracketed] figures)" \
      eval 'grep -q "practice run: no reference kernel" "$tmp/fb-l05.log" &&
        ! grep -A1 "memory counters of your kernel" "$tmp/fb-l05.log" | grep -q "\["'
    # with the kit's recorded table (what make grade passes in a handout): the reference's
    (build/labs/grade --runner "$fref" --counters tests/grade/reference_counters.txt --lab 05 \
      --only 5.2 --json '' >"$tmp/fb-l05c.log" 2>&1)
    check "a practice run with tests/grade/reference_counters.txt brackets the recorded reference counters" \
      eval 'grep -q "the reference kernel.s, as the kit recorded them" "$tmp/fb-l05c.log" &&
        grep -q "P (1000 x 33): 1 launch; stores [0-9]* req, 4.0 sectors/req \[4.0\]; 128.9 KB moved \[128.9\]" "$tmp/fb-l05c.log"'
  else
    skip "the notes' filter: no vectorizer note in $n5 (make grade-build VARIANT=solutions writes it)"
  fi
else
  skip "feedback: it needs solutions/ and both graders built (see $tmp/fb-build.log)"
fi
fi

# ------------------------------------------------------------------ 7. a course
# The dependency map (manifest.txt's last column, read by tests/grade/deps.awk) is what the
# solutions' objects call: file F's undefined symbols that another exercise file defines name
# exactly the files of F's listed exercises. Then a batch of generated submissions.
if [[ $sections == *7* ]]; then
if [ -n "$have_solutions" ] && [ -n "$have_graded" ] && ls build/solutions/sub/lab*/*.raw.o >/dev/null 2>&1; then
  deps_from_objects() { # FILE DEPFILES..., one line per manifest file, from nm
    declare -A own=()
    local o f s
    for o in build/solutions/sub/lab*/*.raw.o; do
      f=${o#build/solutions/sub/}; f=${f%.raw.o}
      for s in $(nm -g --defined-only -P "$o" | awk 'NF > 1 && $2 !~ /^[WV]$/ {print $1}'); do own[$s]=$f; done
    done
    for o in build/solutions/sub/lab*/*.raw.o; do
      f=${o#build/solutions/sub/}; f=${f%.raw.o}
      echo "$f $(for s in $(nm -u -P "$o" | awk '{print $1}'); do
        [ -n "${own[$s]:-}" ] && [ "${own[$s]}" != "$f" ] && echo "${own[$s]}"; done | LC_ALL=C sort -u | tr '\n' ' ')"
    done | sed 's/ *$//' | LC_ALL=C sort
  }
  deps_from_manifest() { # the same from manifest.txt: the files of each file's listed exercises
    awk '/^lab[0-9][0-9]\// { f = $1; sub(/\.cu?$/, "", f); n = split($2, e, ",")
        for (i = 1; i <= n; i++) file[e[i]] = f; files[++k] = f; dep[f] = $4 }
      END { for (i = 1; i <= k; i++) { f = files[i]; out = ""; delete seen
          if (dep[f] != "-") { n = split(dep[f], d, ","); for (j = 1; j <= n; j++) seen[file[d[j]]] = 1 }
          for (j = 1; j <= k; j++) if (files[j] in seen) out = out files[j] " "
          print f " " out } }' tests/grade/manifest.txt |
      while read -r f rest; do echo "$f $(printf '%s\n' $rest | LC_ALL=C sort -u | tr '\n' ' ')"; done |
      sed 's/ *$//' | LC_ALL=C sort
  }
  check "manifest.txt's dependency column is what solutions/' objects call (nm)" \
    diff <(deps_from_manifest) <(deps_from_objects)
  # deps.awk: no level's runner holds the reference of a file it runs; a cycle is refused
  levels_ok() {
    local mk; mk=$(awk -v MODE=mk -f tests/grade/deps.awk tests/grade/manifest.txt) || return 1
    local k stu ref f r=0
    for k in $(sed -n 's/^GRADE_LEVELS := //p' <<<"$mk"); do
      stu=" $(sed -n "s/^GLEVEL_STU_$k := //p" <<<"$mk") "
      ref=$(sed -n "s/^GLEVEL_REF_$k := //p" <<<"$mk")
      for f in $ref; do [[ $stu != *" $f "* ]] || { echo "    level $k runs $f and holds its reference"; r=1; }; done
    done
    return $r
  }
  check "deps.awk: no level's runner holds the reference of a file whose tests it runs" levels_ok
  printf 'lab01/a.c 1.1 1 1.2\nlab01/b.c 1.2 1 1.1\n' >"$tmp/cycle.txt"
  check "deps.awk refuses a dependency cycle" \
    eval '! awk -v MODE=table -f tests/grade/deps.awk "$tmp/cycle.txt" 2>"$tmp/cycle.err" && grep -q cycle "$tmp/cycle.err"'

  # Where a submission's files are found (tests/grade/stage.sh): a zip of the whole handout
  # stages exactly what its labs/ does; flat too; a file present twice is refused in one line.
  l=$tmp/layout
  mkdir -p "$l/labs/labs" "$l/whole/attention-lab" "$l/flat" "$l/amb/labs"
  cp -r labs/. "$l/labs/labs/"; cp solutions/lab02/masked_softmax.c "$l/labs/labs/lab02/"
  cp solutions/lab06/ffn.c "$l/labs/labs/lab06/"
  if command -v zip >/dev/null && command -v unzip >/dev/null; then
    mkdir -p "$l/zip/attention-lab" && cp -r "$l/labs/labs" common Makefile docs "$l/zip/attention-lab/"
    (cd "$l/zip" && zip -q -r ../whole.zip attention-lab) && (cd "$l/whole" && rm -rf attention-lab && unzip -q ../whole.zip)
  else
    cp -r "$l/labs/labs" common Makefile "$l/whole/attention-lab/"
  fi
  cp -r "$l/labs/labs/." "$l/flat/"
  cp -r "$l/labs/labs/." "$l/amb/labs/"; mkdir -p "$l/amb/lab06"; cp solutions/lab06/ffn.c "$l/amb/lab06/"
  for n in labs whole flat amb; do
    bash tests/grade/stage.sh build "$l/$n" "$l/out-$n" >/dev/null 2>&1
  done
  check "submission layouts: a whole handout (zip, one folder deeper) and a flat one stage exactly what labs/ does" \
    eval 'diff -r "$l/out-labs/stage" "$l/out-whole/stage" >/dev/null && diff -r "$l/out-labs/stage" "$l/out-flat/stage" >/dev/null &&
      cmp -s "$l/out-whole/stage/lab02/masked_softmax.c" solutions/lab02/masked_softmax.c'
  check "submission layouts: a file found twice is refused in one line naming both, graded as the stub" \
    eval '[ "$(grep -c "found twice" "$l/out-amb/notes/00-stage.txt")" = 1 ] &&
      grep -qF "grade: lab06/ffn.c: found twice, as lab06/ffn.c and labs/lab06/ffn.c" "$l/out-amb/notes/00-stage.txt" &&
      cmp -s "$l/out-amb/stage/lab06/ffn.c" build/grade-include/stubs/lab06/ffn.c &&
      cmp -s "$l/out-amb/stage/lab02/masked_softmax.c" solutions/lab02/masked_softmax.c'
  # make submission: the manifest's files of labs/, nothing else
  if command -v unzip >/dev/null; then
    bash tests/grade/submission.sh "$l/s.zip" >/dev/null
    check "make submission: the zip holds exactly labs/ + the manifest's files" \
      diff <(unzip -Z1 "$l/s.zip" | LC_ALL=C sort) <(manifest_files | sed 's#^#labs/#')
  else
    skip "make submission: unzip is not installed to read the zip"
  fi

  # The batch: 6 submissions (kept few: each is a full make grade)
  c=$tmp/course
  mkdir -p "$c/subs/sol/attention-lab" "$c/subs/stubs"
  # the solutions as a zip of a whole handout would unpack (attention-lab/labs/, the kit around
  # it); the stubs under labs/; the rest laid out flat
  cp -r solutions "$c/subs/sol/attention-lab/labs"; cp -r common Makefile "$c/subs/sol/attention-lab/"
  cp -r labs "$c/subs/stubs/labs"
  cp -r labs "$c/subs/hostile"; cp -r tests/grader/attacks/06_kill_grader/. "$c/subs/hostile/"
  rm -f "$c/subs/hostile/setup.sh"
  for n in b21 b41 b61; do cp -r solutions "$c/subs/$n"; done
  sed -i 's/return t_softmax(X);/return t_softmax(X)/' "$c/subs/b21/lab02/masked_softmax.c"
  sed -i '/^Tensor \*transpose_qkv(/a\  *(volatile int *)0 = num_heads; /* planted: a NULL dereference */' "$c/subs/b41/lab04/transpose_qkv.c"
  sed -i 's/t_relu(Linear_forward(&f->dense1, X))/Linear_forward(\&f->dense1, X)/' "$c/subs/b61/lab06/ffn.c"
  planted=yes
  cmp -s solutions/lab02/masked_softmax.c "$c/subs/b21/lab02/masked_softmax.c" && planted=no
  cmp -s solutions/lab04/transpose_qkv.c "$c/subs/b41/lab04/transpose_qkv.c" && planted=no
  cmp -s solutions/lab06/ffn.c "$c/subs/b61/lab06/ffn.c" && planted=no
  check "course: the three broken submissions differ from the solutions (the plants matched)" [ $planted = yes ]
  t0=$(date +%s)
  mk grade-all SUBS="$c/subs" GRADE_ALL_OUT="$c/out" GRADE_JOBS=2 >"$c/grade-all.log" 2>&1
  echo "     (make grade-all of 6 submissions: $(($(date +%s) - t0)) s; $(grep -m1 '^CPU per submission' "$c/out/report.txt" 2>/dev/null))"
  total=$(manifest_points)
  res() { echo "$c/out/students/$1/results.json"; }
  score_of() { sed -n 's/^Score: //p' "$c/out/students/$1/feedback.txt" | tail -n 1; }
  check "course: the solutions, laid out as a whole handout, score $total/$total" [ "$(score_of sol)" = "$total/$total" ]
  check "course: the stubs score 0/$total" [ "$(score_of stubs)" = "0/$total" ]
  check "course: the hostile submission scores 0/$total" [ "$(score_of hostile)" = "0/$total" ]
  # a broken file costs exactly its tests: every test of another file passed, every one of its own failed
  table=$(awk -v MODE=table -f tests/grade/deps.awk tests/grade/manifest.txt)
  only_file_lost() { # SUB FILE
    local r; r=$(res "$1")
    [ -s "$r" ] || { echo "    no $r"; return 1; }
    local exs; exs=" $(awk -v F="$2" '$2 == F { printf "%s ", $1 }' <<<"$table")"
    local bad=0 n=0 line ex st
    while IFS= read -r line; do
      ex=$(grep -o '"exercise":"[^"]*"' <<<"$line" | cut -d'"' -f4)
      st=$(grep -o '"status":"[^"]*"' <<<"$line" | cut -d'"' -f4)
      n=$((n + 1))
      if [[ $exs == *" $ex "* ]]; then [ "$st" = failed ] || { echo "    $ex passed: $line" | cut -c1-150; bad=1; }
      else [ "$st" = passed ] || { echo "    $ex lost points: $line" | cut -c1-150; bad=1; }; fi
    done < <(grep '"name":"lab' "$r")
    [ $n -gt 0 ] && [ $bad = 0 ]
  }
  file_points() { awk -v F="$1" '{ f = $1; sub(/\.cu?$/, "", f) } f == F { print $3 }' tests/grade/manifest.txt; }
  for pair in b21:lab02/masked_softmax b41:lab04/transpose_qkv b61:lab06/ffn; do
    n=${pair%%:*}; f=${pair#*:}
    check "course: $n loses exactly $f's points ($((total - $(file_points $f)))/$total), every other exercise full marks" \
      eval '[ "$(score_of $n)" = "$((total - $(file_points $f)))/$total" ] && only_file_lost $n $f'
  done
  check "course: b21's compile error is reported for masked_softmax.c only" \
    eval 'grep -q "lab02/masked_softmax.c does not compile" "$c/out/students/b21/feedback.txt" &&
      [ "$(grep -c "does not compile" "$c/out/students/b21/feedback.txt")" = 1 ]'
  check "course: grades.csv has a header, the maxima and one row per submission (6)" \
    eval '[ "$(wc -l <"$c/out/grades.csv")" = 8 ] && grep -q "^student,1.1," "$c/out/grades.csv" && grep -q "^b21,.*,$((total - 10)),$total," "$c/out/grades.csv"'
  check "course: the class report names the hardest exercises" \
    eval 'grep -q "^Hardest exercises" "$c/out/report.txt" && grep -qE "^  2\.1 .*most common failure: not implemented" "$c/out/report.txt"'
  if command -v gnuplot >/dev/null; then
    check "course: the class figures exist (histogram.png, pass_rate.png)" \
      eval '[ -s "$c/out/histogram.png" ] && [ -s "$c/out/pass_rate.png" ]'
  else
    skip "course: class figures: gnuplot is not installed"
  fi
  # a batch's score is make grade's: one submission graded alone, test by test
  mk grade VARIANT=labs GRADE_SUB="$c/subs/b61" GRADE_OUT="$c/single" GRADE_BUILD_LOG="$c/single.log" \
    GRADE_FLAGS="--json $c/single.json --prairielearn $c/single.pl.json" >"$c/single.term" 2>&1
  outcomes() { grep '"name":"lab' "$1" | grep -oE '"name":"[^"]*"|"score":[0-9]+|"outcome":"[^"]*"' | paste - - -; }
  check "course: b61 in the batch scores test for test what make grade gives it alone" \
    eval '[ -s "$c/single.json" ] && diff <(outcomes "$c/single.json") <(outcomes "$(res b61)")'
  if [ -n "$py" ]; then
    check "course: every results.json of the batch meets Gradescope's specification (fields, types), with number, test_output_format, leaderboard, tests_version" \
      "$py" tests/grader/gradescope_spec.py "$c"/out/students/*/results.json "$c/single.json"
    check "course: the solutions' results.json has a leaderboard (KB moved, H100 estimate) for every kernel file" \
      eval '[ "$("$py" -c "import json,sys; print(len(json.load(open(sys.argv[1]))[\"leaderboard\"]))" "$(res sol)")" -ge \
        $((2 * $(grep -cE "^lab[0-9][0-9]/[^ ]+\.cu " tests/grade/manifest.txt))) ]'
    check "course: --prairielearn writes PrairieLearn's external-grader results (score a fraction, tests with points)" \
      "$py" -c 'import json, sys
r = json.load(open(sys.argv[1]))
assert r["gradable"] is True and abs(r["score"] - float(sys.argv[2])) < 1e-5, r["score"]
assert all(set(t) >= {"name", "points", "max_points", "output"} for t in r["tests"]) and r["tests"]' \
      "$c/single.pl.json" "$(awk -v t="$total" -v s="$(( total - $(file_points lab06/ffn) ))" 'BEGIN { print s / t }')"
  else
    skip "course: results.json against Gradescope's specification: python3 is not installed"
  fi
  # make regrade: after a change (here b61's fix; a test change works the same), the scores that moved
  cp solutions/lab06/ffn.c "$c/subs/b61/lab06/ffn.c"
  mk regrade GRADE_ALL_OUT="$c/out" GRADE_JOBS=2 >"$c/regrade.log" 2>&1
  check "course: make regrade lists exactly the score that moved (b61: $((total - $(file_points lab06/ffn))) -> $total)" \
    eval 'grep -qE "^  b61 +$((total - $(file_points lab06/ffn))) -> $total$" "$c/out/regrade.txt" &&
      grep -qx "1 of 6 scores moved" "$c/out/regrade.txt"'
  # a practice run (no reference: the student's own make grade): 2.2 and 2.3 are blocked by 2.1
  if mk grade-runners GRADE_SUB="$c/subs/b21" GRADE_OUT="$c/practice" GRADE_ROLE=reference >"$c/practice.log" 2>&1; then
    (cd "$c" && "$root/build/labs/grade" --runner "$c/practice" --lab 02 --json "$c/practice.json" >"$c/practice.term" 2>&1)
    check "course: a practice run reports 2.2's and 2.3's tests as blocked by 2.1, and says the instructor grades each alone" \
      eval '[ "$(grep -c "\"exercise\":\"2\.[23]\"" "$c/practice.json")" -gt 0 ] &&
        ! grep "\"exercise\":\"2\.[23]\"" "$c/practice.json" | grep -v "\"outcome\":\"blocked\"" | grep -q . &&
        grep -q "blocked by 2.1: .*instructor.s grade tests each exercise alone" "$c/practice.term" &&
        grep "\"exercise\":\"2\.1\"" "$c/practice.json" | grep -q "\"outcome\":\"not_implemented\""'
  else
    fail "course: the practice runners of b21 did not build ($c/practice.log)"
  fi
else
  skip "course: it needs solutions/ and section 2's build (build/solutions/sub/*.raw.o)"
fi
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
