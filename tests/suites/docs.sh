#!/usr/bin/env bash
# make docs: the weaver (docs/weave.c) on a fixture chapter (tests/fixtures/weave/lab99.c) —
# prose, code, interleaved output, figures, Javadoc stars, markers, errors — and `make docs` on
# one real, fast chapter (lab02) woven into a temporary directory. No slow lab runs here.
# Run from the repository root: bash tests/suites/docs.sh. Ends with "N passed, N failed, N skipped".
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin docs
# line number of the first line holding a fixed string, or being exactly it when the string
# starts with '=' (output lines also appear inside the printf that prints them); 0 when absent
line_of() {
  case $1 in
  =*) grep -nxF -m1 -- "${1#=}" "$2" ;;
  *) grep -nF -m1 -- "$1" "$2" ;;
  esac | cut -d: -f1 | grep . || echo 0
}
# checks that a before b (both present) in file
in_order() { # description, file, a, b
  local a b
  a=$(line_of "$3" "$2")
  b=$(line_of "$4" "$2")
  if [ "$a" -gt 0 ] && [ "$b" -gt "$a" ]; then ok "$1"; else bad "$1 (lines $a, $b)"; fi
}
# fences balanced and never empty: every opening fence has content before its closing fence
fences_ok() {
  awk '/^```/ { if (open) { if (body == 0) exit 1; open = 0 } else { open = 1; body = 0 }; next }
       open { body++ } END { exit open }' "$1"
}

suite_build docs-tool "building the weaver"
weave=build/weave/weave

# ---------------------------------------------------------------- fixture chapter
fix=tests/fixtures/weave/lab99.c
$weave mark "$fix" >"$tmp/marked.c"
n=$(grep -o 'al_weave_mark([0-9]*);' "$tmp/marked.c" | wc -l)
if [ "$n" = 4 ]; then ok "4 markers (not at file scope, not before else)"; else bad "markers: $n, want 4"; fi
if cc -std=c11 -Wall -Wextra -Werror -iquote "$(dirname "$fix")" -o "$tmp/lab99" "$tmp/marked.c" \
  >"$tmp/cc.log" 2>&1; then ok "marked chapter compiles -Wall -Wextra -Werror"; else
  bad "marked chapter does not compile"
  head -20 "$tmp/cc.log"
fi
# #line keeps diagnostics pointing at the chapter's own lines: break line 44 ('never') and
# the compiler must name the chapter file and line 44.
sed '44s/printf("never\\n");/undeclared_function_xyz();/' "$fix" >"$tmp/broken.c"
if grep -q undeclared_function_xyz "$tmp/broken.c"; then
  $weave mark "$tmp/broken.c" >"$tmp/broken_marked.c"
  cc -std=c11 -c -o /dev/null "$tmp/broken_marked.c" >"$tmp/cc2.log" 2>&1
  check "#line: an error is reported at the chapter's line" grep -qF "$tmp/broken.c:44:" "$tmp/cc2.log"
else
  bad "fixture line 46 is no longer the 'never' printf: update this test"
fi

mkdir -p "$tmp/docs/out/lab99"
"$tmp/lab99" --out "$tmp/docs/out/lab99" >"$tmp/docs/out/lab99/output.txt" 2>&1
$weave doc "$fix" --log "$tmp/docs/out/lab99/output.txt" --fig-dir "$tmp/docs/out/lab99" \
  --md-dir "$tmp/docs" --command "./lab99 --out X" >"$tmp/docs/lab99.md"
md=$tmp/docs/lab99.md
check "woven file is not empty" test -s "$md"
check "title heading kept" grep -qx '# Fixture Chapter' "$md"
check "inline math verbatim" grep -qF 'Math stays as written: $\alpha_i = \frac{1}{2}$ and' "$md"
check "display math verbatim" grep -qxF '$$\sum_{i=1}^n x_i \quad \text{(display)}$$' "$md"
check "no comment markers left" bash -c "! grep -qE '/\\*\\*\\*|^ *\\*/' '$md'"
check "Javadoc stars stripped" grep -qx '## Javadoc Style' "$md"
check "Javadoc text at column 0" grep -qx 'A block written with leading stars, which the weaver strips.' "$md"
check "column-0 bullets kept" grep -qx '\* a bullet at column 0 stays a bullet' "$md"
check "code in \`\`\`c fences" grep -qx '```c' "$md"
check "fences balanced, none empty" fences_ok "$md"
check "run command noted" grep -qF 'the output and figures are from `./lab99 --out X`' "$md"
in_order "output before the first marked block follows main's opening code" "$md" \
  'printf("before any block\n");' '=before any block'
in_order "... and comes before the next prose" "$md" '=before any block' '## Counting'
in_order "loop output after the loop code" "$md" 'for (int i = 0; i < 3; i++)' '=count 2'
in_order "loop output before the next prose" "$md" '=count 2' '## Javadoc Style'
in_order "figure image where it was drawn" "$md" 'printf("[figure %s]\n", path);' '![Figure 1. drawn](out/lab99/drawn.png)'
in_order "output continues after the figure" "$md" '![Figure 1. drawn](out/lab99/drawn.png)' '=after the figure'
check "the [figure] line itself is replaced" bash -c "! grep -q '^\\[figure ' '$md'"
in_order "stderr interleaved in order" "$md" '=in the else branch' '=a line on stderr'
check "backticks in output get a longer fence" grep -qx '````text' "$md"
in_order "unannounced PNG in a closing Figures section" "$md" '## Figures' '![Figure 2. unannounced](out/lab99/unannounced.png)'
in_order "Summary after the program's last code" "$md" 'return 0;' '## Summary'
in_order "Figures section at the very end" "$md" '## Summary' '## Figures'
check "marker bytes never reach the page" bash -c "! grep -q \$'\\x1e' '$md'"

# ---------------------------------------------------------------- what a page may not hold
# A control byte in a chapter (a "\b" of \boldsymbol that went through a string escape) stops
# the weave, naming the file and line; a tab is refused in prose, allowed in code.
sed '24s/The loop prints/The \x08oldsymbol loop prints/' "$fix" >"$tmp/ctl.c"
$weave doc "$tmp/ctl.c" >/dev/null 2>"$tmp/err.txt"
rc=$?
if [ $rc -ne 0 ] && grep -qF "$tmp/ctl.c:24:5: control byte 0x08 in prose" "$tmp/err.txt"; then
  ok "a backspace byte in prose: the weave fails at file:line ($(cut -c1-60 "$tmp/err.txt" | head -1)...)"
else bad "a backspace byte in prose: exit $rc, $(cat "$tmp/err.txt")"; fi
sed '24s/The loop prints/The \textit{loop} prints/; 24s/\\t/\t/' "$fix" >"$tmp/tab.c"
$weave mark "$tmp/tab.c" >/dev/null 2>"$tmp/err.txt"
if grep -qF "$tmp/tab.c:24:" "$tmp/err.txt" && grep -q 'tab' "$tmp/err.txt"; then ok "a tab byte in prose: weave mark fails at file:line"; else
  bad "a tab byte in prose: $(cat "$tmp/err.txt")"; fi
sed '26s/^  for/\tfor/' "$fix" >"$tmp/codetab.c"
check "a tab in code (indentation) is allowed" $weave doc "$tmp/codetab.c"

# Claims: prose marks what it says the run printed, [TEXT]{.run} or [TEXT]{.run out="..."}; the
# weave fails when the output woven on the page does not bear it out (--claims check, the kit's
# pages) or notes it in the page (--claims note, a student's own run).
claim() { # the fixture with line 24's prose replaced by $1
  # (ENVIRON, not awk -v, which would turn the \f of \frac into a form feed: this very bug)
  T=$1 awk 'NR == 24 { print ENVIRON["T"]; next } { print }' "$fix" >"$tmp/claim.c"
}
log=$tmp/docs/out/lab99/output.txt
claim 'The loop prints [`count 2`]{.run} last, [three]{.run out="count 2"} lines... no: [2]{.run out="count 2"}.'
if $weave doc "$tmp/claim.c" --log "$log" --md-dir "$tmp/docs" >"$tmp/claim.md" 2>"$tmp/err.txt"; then
  bad "an out= that does not hold its text was accepted"
else
  check "out= must hold the claimed text" grep -qF 'its out="..." does not hold the claimed text' "$tmp/err.txt"
fi
claim 'The loop prints [`count 2`]{.run} last, [2]{.run out="count 2"} being its
last [count
1]{.run} but one.'
if $weave doc "$tmp/claim.c" --log "$log" --md-dir "$tmp/docs" >"$tmp/claim.md" 2>"$tmp/err.txt"; then
  ok "true claims (one wrapped over two lines) pass"
else bad "true claims rejected: $(cat "$tmp/err.txt")"; fi
check "the claim stays in the page as a pandoc span" grep -qF '[`count 2`]{.run}' "$tmp/claim.md"
claim 'The loop prints [`count 3`]{.run} last.'
$weave doc "$tmp/claim.c" --log "$log" --md-dir "$tmp/docs" >/dev/null 2>"$tmp/err.txt"
rc=$?
if [ $rc -ne 0 ] && grep -qF "$tmp/claim.c:24: the prose claims \"count 3\"" "$tmp/err.txt"; then
  ok "a wrong claimed value fails the weave, naming the line (exit $rc)"
else bad "a wrong claimed value: exit $rc, $(cat "$tmp/err.txt")"; fi
claim 'The loop prints [4]{.run out="count 4"} lines.'
check "a wrong value in an out= claim fails too" bash -c "! $weave doc '$tmp/claim.c' --log '$log' --md-dir '$tmp/docs' >/dev/null 2>&1"
$weave doc "$tmp/claim.c" --log "$log" --md-dir "$tmp/docs" --claims note >"$tmp/note.md" 2>/dev/null
check "--claims note: the page says the run differs" grep -qF '> **Note:** the text above says `count 4`' "$tmp/note.md"
check "no run, nothing to check: the claim is not an error" $weave doc "$tmp/claim.c" --md-dir "$tmp/docs"

# Paths: the run's absolute paths are shown as the kit names them; a page that would still hold
# one outside the kit (here in prose) is refused.
root=$(pwd -P)
mkdir -p "$tmp/paths/docs"
printf '%s\n' "data: $(dirname "$root")/shared/data/fra-eng.zip" "wrote $tmp/paths/docs/out/lab99/summary.json" \
  "read $root/tests/fixtures/weave/lab99.c" "found /home/someone/d2l/train.gz" \
  "found /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz" "2/3 done, 5 tokens/sec" >"$tmp/paths/log"
$weave doc "$fix" --log "$tmp/paths/log" --md-dir "$tmp/paths/docs" --command "./lab99 --out $tmp/paths/docs/out/lab99" >"$tmp/paths.md"
check "path: the data file as the kit's search names it (../shared/data/)" grep -qx 'data: ../shared/data/fra-eng.zip' "$tmp/paths.md"
check "path: the page's own directory as docs/" grep -qx 'wrote docs/out/lab99/summary.json' "$tmp/paths.md"
check "path: the run command's --out as docs/" grep -qF '`./lab99 --out docs/out/lab99`' "$tmp/paths.md"
check "path: inside the kit, relative to its root" grep -qx 'read tests/fixtures/weave/lab99.c' "$tmp/paths.md"
check "path: elsewhere, only the file name" grep -qx 'found .../train.gz' "$tmp/paths.md"
check "path: a system location as it is" grep -qx 'found /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz' "$tmp/paths.md"
check "path: not every slash is a path" grep -qx '2/3 done, 5 tokens/sec' "$tmp/paths.md"
claim 'The data live in /home/someone/d2l/fra-eng.zip here.'
$weave doc "$tmp/claim.c" --md-dir "$tmp/docs" >/dev/null 2>"$tmp/err.txt"
rc=$?
if [ $rc -ne 0 ] && grep -qF 'holds the path /home/someone/d2l/fra-eng.zip, outside the kit' "$tmp/err.txt"; then
  ok "a page holding an absolute path outside the kit is refused"
else bad "absolute path in a page: exit $rc, $(cat "$tmp/err.txt")"; fi

# A pandoc warning (TeX it cannot convert, shown raw) fails the page's build, with pandoc's words.
if command -v pandoc >/dev/null 2>&1; then
  claim 'Broken math: $\frac{1}{$ here.'
  cp "$tmp/claim.c" "$tmp/lab97.c"
  WEAVE=$weave PANDOC=yes DOCS_DIR="$tmp/pw" bash docs/weave.sh lab97 "$tmp/lab97.c" ./none no "" >"$tmp/pw.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ] && grep -q 'WARNING' "$tmp/pw.log" && grep -qF 'pandoc failed or warned' "$tmp/pw.log"; then
    ok "a pandoc warning fails the page (exit $rc) and is shown"
  else bad "a pandoc warning: exit $rc, $(tail -3 "$tmp/pw.log")"; fi
  check "... and leaves no HTML page" test ! -e "$tmp/pw/lab97.html"
fi

# no absolute path outside the kit in a woven page (independent of the weaver's own check):
# system locations (/usr, /dev, /proc, /etc) are all a page may name
outside_paths() { # page.md: prints the offending paths
  grep -oP '(?<![\w:/.\-~$])/[A-Za-z_.][\w.+-]*(/[\w.+-]+)+' "$1" | grep -vE '^/(usr|dev|proc|etc)/' | sort -u
}

# A log without markers (an unmarked run) becomes one closing section.
printf 'plain output\n' >"$tmp/plain.txt"
$weave doc "$fix" --log "$tmp/plain.txt" --md-dir "$tmp" >"$tmp/plain.md"
in_order "unmarked output in a closing Program output section" "$tmp/plain.md" '## Summary' '## Program output'
$weave doc "$fix" --md-dir "$tmp" >"$tmp/norun.md"
check "no run: says so" grep -qF 'the program was not run for this page' "$tmp/norun.md"
check "no run: no output blocks" bash -c "! grep -qx '\`\`\`text' '$tmp/norun.md'"

# Errors are clear, not crashes.
printf 'int main(void) { return 0; }\n' >"$tmp/noprose.c"
$weave doc "$tmp/noprose.c" >"$tmp/err.md" 2>"$tmp/err.txt"
rc=$?
if [ $rc -ne 0 ] && grep -q 'no prose blocks' "$tmp/err.txt"; then ok "chapter without prose: clear error (exit $rc)"; else
  bad "chapter without prose: exit $rc, $(cat "$tmp/err.txt")"
fi
printf '/***\n# T\n*/\nint x; /* unterminated\n' >"$tmp/unterminated.c"
$weave mark "$tmp/unterminated.c" >/dev/null 2>"$tmp/err.txt"
rc=$?
if [ $rc -ne 0 ] && grep -q 'unterminated comment' "$tmp/err.txt"; then ok "unterminated comment: clear error"; else
  bad "unterminated comment: exit $rc"
fi
$weave doc /nonexistent/lab.c >/dev/null 2>"$tmp/err.txt"
rc=$?
if [ $rc -ne 0 ] && grep -q 'cannot open /nonexistent/lab.c' "$tmp/err.txt"; then ok "missing chapter: clear error"; else
  bad "missing chapter: exit $rc"
fi

# ---------------------------------------------------------------- @code and @program
# tests/fixtures/weave/splice.c splices from splice_model.c and from an exercise file whose
# labs/ path is read from --exercises (ex_labs: a stub, ex_solutions: a solution).
fx=tests/fixtures/weave
$weave doc $fx/splice.c --exercises $fx/ex_solutions --md-dir "$tmp" >"$tmp/splice.md" 2>"$tmp/splice.err"
md=$tmp/splice.md
body=$tmp/splice_body.md # the page without its collapsed program section
sed '/^<details class="program">/,/^<\/details>/d' "$md" >"$body"
check "@code: a function with the comment above it" grep -qx '/\* The forward pass, with its comment spliced too. \*/' "$md"
check "@code: the function's body up to its closing brace" grep -qx '  return helper_not_spliced(x) \* t->width;' "$md"
check "@code: a line tagged @program left out of the splice" bash -c "! grep -q release_scratch '$md'"
check "@code: only the named function" bash -c "! grep -q 'static int helper_not_spliced' '$md'"
check "@code: a typedef struct" grep -qx '} Tiny;' "$md"
check "@code: a region, de-indented, without its markers" bash -c \
  "grep -qx 'for (int i = 0; i < 3; i++) t->width \\*= 2; /\\* the loop body shown \\*/' '$md' && ! grep -q '@region\\|@end' '$md'"
check "@code: the block names its file" grep -qx '/\* tests/fixtures/weave/splice_model.c \*/' "$md"
check "@code: no directive line left in the prose" bash -c "! grep -q '^@code\\|^@program' '$md'"
check "@code: labs/ path read from --exercises (solutions)" grep -qF 'return 2 * tiny_helper(x); /* SOLUTION BODY */' "$md"
check "@code: NAME? spliced where the file has it" grep -qF '/* HELPER */' "$md"
$weave doc $fx/splice.c --exercises $fx/ex_labs --md-dir "$tmp" >"$tmp/splice_stub.md"
check "@code: labs/ path read from --exercises (stubs)" bash -c \
  "grep -qF 'STUB BODY' '$tmp/splice_stub.md' && ! grep -qF 'SOLUTION BODY' '$tmp/splice_stub.md'"
check "@code: NAME? left out, silently, where the file lacks it" bash -c \
  "! grep -q 'HELPER\\|@code error' '$tmp/splice_stub.md'"
in_order "@code: spliced where the directive is" "$md" 'The model, spliced from its file:' '} Tiny;'
in_order "@code: prose after the splices goes on" "$md" 'SOLUTION BODY' 'Text after the splices.'
check "@program: includes not in the page body" bash -c "! grep -q '#include' '$body'"
check "@program: free( not in the page body" bash -c "! grep -q 'free(' '$body'"
check "@program: a tagged line not in the page body" bash -c "! grep -q 'malloc' '$body'"
check "@program: one collapsed section" bash -c "[ \$(grep -c '^<details class=\"program\">' '$md') = 1 ]"
in_order "@program: it holds the includes and the frees" "$md" '#include <stdlib.h>' '  free(buf);'
check "@program: shown code kept" grep -qx '  printf("second\\n");' "$body"
printf '/***\n# T\n@code %s nonexistent_fn\n*/\nint x;\n' $fx/splice_model.c >"$tmp/badsplice.c"
$weave doc "$tmp/badsplice.c" >"$tmp/badsplice.md" 2>"$tmp/err.txt"
rc=$?
# said on stderr and in the page (docs_site.sh fails such a page); the rest is still woven
if grep -q "badsplice.c: @code .*nonexistent_fn: no function, type or @region" "$tmp/err.txt" &&
  grep -q '^> \*\*@code error:\*\* .*nonexistent_fn' "$tmp/badsplice.md"; then
  ok "@code: a missing name is a clear error, on stderr and in the page"
else
  bad "@code: a missing name: exit $rc, $(cat "$tmp/err.txt")"
fi
# A run that stopped at a stub (exit 3): marked there, the reference run's output after it.
mkdir -p "$tmp/stop/ref/lab98"
printf '\036weave:1\036\nfirst\nexercise 98.1 tiny_exercise is not implemented yet (labs/lab98/ex.c)\n' >"$tmp/stop/log.txt"
printf '\036weave:1\036\nfirst\n\036weave:2\036\nsecond\n[figure /elsewhere/fig.png]\n' >"$tmp/stop/ref/lab98/output.txt"
printf 'not a png' >"$tmp/stop/ref/lab98/fig.png"
$weave doc $fx/splice.c --exercises $fx/ex_labs --md-dir "$tmp/stop" --log "$tmp/stop/log.txt" \
  --status 3 --command ./lab98 --ref-log "$tmp/stop/ref/lab98/output.txt" \
  --ref-dir "$tmp/stop/ref/lab98" >"$tmp/stop.md"
check "stopped run: marked unfinished with the exercise" grep -qF '**Unfinished:** the run stopped here: `exercise 98.1 tiny_exercise is not implemented yet' "$tmp/stop.md"
in_order "stopped run: the mark after the output up to the stop" "$tmp/stop.md" '=first' '**Unfinished:**'
in_order "stopped run: the prose and code go on" "$tmp/stop.md" '**Unfinished:**' '## Second'
in_order "stopped run: then the reference output, marked" "$tmp/stop.md" '  printf("second\n");' '```{.text .reference}'
check "stopped run: reference figure from the reference directory" grep -qF '(reference run)](ref/lab98/fig.png)' "$tmp/stop.md"
$weave doc $fx/splice.c --md-dir "$tmp/stop" --exercises $fx/ex_labs --log "$tmp/stop/log.txt" --status 3 >"$tmp/stop2.md"
check "stopped run without a reference: marked, no output after" bash -c \
  "grep -qF 'without output' '$tmp/stop2.md' && ! grep -q reference '$tmp/stop2.md' && ! grep -qx second '$tmp/stop2.md'"

# ---------------------------------------------------------------- every chapter's @code splices
# Woven without a run (fast), with the solutions and with the stubs (a handout's pages): every
# @code names a file and function that exist (a moved function shows here first).
for src in chapters/*/lab[0-9][0-9].c; do
  for ex in solutions labs; do
    [ -d "$ex" ] || continue
    if $weave doc "$src" --exercises "$ex" --md-dir "$tmp" >"$tmp/all.md" 2>"$tmp/all.err" &&
      ! grep -q '@code' "$tmp/all.err"; then
      ok "$(basename "$src" .c) ($ex): every @code splice found"
    else
      bad "$(basename "$src" .c) ($ex): $(head -3 "$tmp/all.err")"
    fi
    bad_paths=$(outside_paths "$tmp/all.md")
    [ -z "$bad_paths" ] || bad "$(basename "$src" .c) ($ex): absolute paths outside the kit: $bad_paths"
  done
done

# every exercise file of the manifest is on a page: some chapter splices it (@code labs/FILE)
if [ -f tests/grade/manifest.txt ]; then
  missing=$(awk '!/^#/ && NF >= 2 { print $1 }' tests/grade/manifest.txt | while read -r f; do
    grep -q "^@code labs/$f " chapters/*/lab[0-9][0-9].c || echo "$f"
  done)
  if [ -z "$missing" ]; then ok "every exercise file of tests/grade/manifest.txt is spliced into a page"; else
    bad "exercise files no page shows (add @code labs/FILE NAME to its chapter): $(echo $missing)"
  fi
fi

# ---------------------------------------------------------------- a real chapter: make docs lab02
# With the solutions (this repository) lab02 runs to the end; in a handout (stubs only) it would
# stop at exercise 2.1, so there only prose and code are woven and checked.
run=yes
[ -d solutions/lab02 ] || run=no
if [ -f chapters/02_scoring_functions/lab02.c ]; then
  src=chapters/02_scoring_functions/lab02.c
  vflag=()
  [ $run = yes ] && vflag=(VARIANT=solutions)
  if make -s docs DOCS_LABS=lab02 DOCS_RUN=$run DOCS_DIR="$tmp/real" "${vflag[@]}" >"$tmp/real.log" 2>&1; then
    ok "make docs DOCS_LABS=lab02 DOCS_RUN=$run (into a temporary directory)"
  else
    bad "make docs DOCS_LABS=lab02 failed:"
    tail -20 "$tmp/real.log"
  fi
  md=$tmp/real/lab02.md
  check "lab02.md written" test -s "$md"
  check "lab02: interleaved (marked) build used" bash -c "! grep -q 'did not compile' '$tmp/real.log'"
  check "lab02: fences balanced, none empty" fences_ok "$md"
  # every heading of the chapter's prose, in the chapter's order
  grep -E '^#{1,3} ' "$src" >"$tmp/want_headings"
  grep -E '^#{1,3} ' "$md" >"$tmp/got_headings"
  if [ -s "$tmp/want_headings" ] && diff -q "$tmp/want_headings" "$tmp/got_headings" >/dev/null; then
    ok "lab02: all $(wc -l <"$tmp/want_headings") headings, in order"
  else
    bad "lab02: headings differ"
    diff "$tmp/want_headings" "$tmp/got_headings" | head
  fi
  in_order "lab02: Summary then Exercises" "$md" '## Summary' '## Exercises'
  bad_paths=$(outside_paths "$md")
  if [ -z "$bad_paths" ]; then ok "lab02: no absolute path outside the kit in the page"; else
    bad "lab02: absolute paths outside the kit in the page: $bad_paths"; fi
  check "lab02: no pandoc warning (make docs would have failed)" bash -c "! grep -q WARNING '$tmp/real.log'"
fi
if [ -f chapters/02_scoring_functions/lab02.c ] && [ $run = yes ]; then
  n=$(grep -c '^```text' "$md")
  if [ "$n" -ge 3 ]; then ok "lab02: $n output blocks interleaved"; else bad "lab02: $n output blocks"; fi
  in_order "lab02: masked softmax output follows its code" "$md" \
    'Tensor *w = NEED(masked_softmax(X, valid_lens)' 'tensor([[[' 
  if command -v gnuplot >/dev/null 2>&1; then
    # numbered, captioned from docs/captions.txt, at half its pixel width (drawn at 2x)
    check "lab02: heatmap linked where drawn, with its caption" grep -qxE '!\[Figure 1\. Additive attention weights[^]]*\]\(out/lab02/attention_additive.png\)\{width=[0-9]+\}' "$md"
    check "lab02: linked PNG exists" test -s "$tmp/real/out/lab02/attention_additive.png"
  fi
  if command -v pandoc >/dev/null 2>&1; then
    check "lab02.html written" test -s "$tmp/real/lab02.html"
    check "lab02.html has MathML" grep -q '<math' "$tmp/real/lab02.html"
  fi
fi

# The student guide's table of exercises (section 3) is manifest.txt's: every exercise with
# its file and points, no other, and each lab's total and the kit's
guide_table_ok() {
  python3 - tests/grade/manifest.txt docs/student-guide.md <<'PY'
import re, sys
labs = {}
for line in open(sys.argv[1]):
    if line.strip() and not line.startswith("#"):
        f, ex, pts = line.split()[:3]
        labs.setdefault(f[3:5], []).append("%s `%s` %s" % (ex.replace(",", "/"), f[6:], pts))
rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| (\d\d) [^|]*\|[^\n]*", open(sys.argv[2]).read(), re.M)}
bad = []
for lab, exs in labs.items():
    row = rows.get(lab, "")
    cells = [c.strip() for c in row.split("|")]
    total = sum(int(e.rsplit(" ", 1)[1]) for e in exs)
    if len(cells) < 4 or [c.strip() for c in cells[2].split(",")] != exs or cells[3] != str(total):
        bad.append("lab %s: want %s | %d" % (lab, ", ".join(exs), total))
kit = sum(int(e.rsplit(" ", 1)[1]) for exs in labs.values() for e in exs)
if "| | all | %d |" % kit not in open(sys.argv[2]).read():
    bad.append("the total: want | | all | %d |" % kit)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
if out=$(guide_table_ok); then
  ok "docs/student-guide.md lists manifest.txt's exercises, points and totals"
else
  bad "docs/student-guide.md's table of exercises differs from tests/grade/manifest.txt:"; echo "$out"
fi

# The student guide's flag table (section 2) is each lab's --help: the common flags every lab
# takes, --epochs and --preset where the lab takes them, and the lab's own flags, no more, no
# fewer (the guide once said every lab takes --epochs and --preset; lab02 refuses both).
flags_of_help() { # ./labNN: the flags of its usage lines, one a line, sorted
  "$1" --help 2>/dev/null | awk '/^usage:/ { u = 1 } u && /^$/ { exit } u' | grep -o '\[--[^]]*\]' |
    tr -d '[]' | sort
}
flags_of_guide() { # NN: the row's flags, one a line, sorted
  awk -F'|' -v lab="$1" '$2 ~ "^ " lab " $" && NF >= 5 {
      print "--seed N"; print "--out DIR"; print "--device cpu|cuda"; print "--data-dir DIR"; print "--help"
      if ($3 ~ /yes/) print "--epochs N"
      if ($4 ~ /yes/) print "--preset NAME"
      n = split($5, f, "`"); for (i = 2; i <= n; i += 2) print f[i]
    }' docs/student-guide.md | sort
}
for src in chapters/*/lab[0-9][0-9].c; do
  lab=$(basename "$src" .c)
  if ! make -s "$lab" >"$tmp/build_$lab.log" 2>&1; then
    bad "$lab does not build: the guide's flag table not checked for it"
    continue
  fi
  flags_of_help "./$lab" >"$tmp/help_flags"
  flags_of_guide "${lab#lab}" >"$tmp/guide_flags"
  if [ ! -s "$tmp/guide_flags" ]; then
    bad "docs/student-guide.md has no row for $lab in its flag table"
  elif [ -s "$tmp/help_flags" ] && cmp -s "$tmp/help_flags" "$tmp/guide_flags"; then
    ok "$lab: the guide's flag table matches ./$lab --help ($(wc -l <"$tmp/help_flags") flags)"
  else
    bad "$lab: the guide's flag table differs from ./$lab --help (< --help, > guide): $(diff "$tmp/help_flags" "$tmp/guide_flags" | grep '^[<>]' | tr '\n' ' ')"
  fi
done

# The handout's reference pages run lab03 and lab06 at their chapters' defaults (no flags), as
# their prose describes them; the weave checks the prose's claims against that run. A short
# run's output fails that check: trained 3 epochs, lab06's page is refused (the real claims of
# the chapter, against a real run: about 2 s).
check "handout: lab03 and lab06 pages from runs at the chapter's defaults" \
  grep -qF '"DOCS_ARGS_lab03=" "DOCS_ARGS_lab06="' tests/grade/handout.sh
check "handout: the prose's claims checked (DOCS_CLAIMS=check)" grep -qF '"DOCS_CLAIMS=check"' tests/grade/handout.sh
if [ -d solutions ] && [ -x ./lab06 ] && { [ -f ../shared/data/fra-eng.zip ] || [ -f data/fra-eng.zip ] || [ -n "${D2L_DATA_DIR:-}" ]; }; then
  ./lab06 --epochs 3 --no-heldout --out "$tmp/short06" >"$tmp/short06.log" 2>&1
  $weave doc chapters/06_transformer/lab06.c --log "$tmp/short06.log" --md-dir "$tmp" >/dev/null 2>"$tmp/err.txt"
  rc=$?
  n=$(grep -c 'the prose claims' "$tmp/err.txt")
  if [ $rc = 3 ] && [ "$n" -ge 2 ]; then ok "lab06's page from a 3-epoch run is refused: $n claims of its prose not in the run's output"; else
    bad "lab06's page from a 3-epoch run: exit $rc, $n claims caught"; fi
  $weave doc chapters/06_transformer/lab06.c --log "$tmp/short06.log" --md-dir "$tmp" --claims note >"$tmp/note06.md" 2>/dev/null
  check "... and with --claims note (a student's run) the page says so" grep -q '^> \*\*Note:\*\* the text above says' "$tmp/note06.md"
else
  skip "lab06 or fra-eng.zip missing: a short run's claims not checked against lab06's prose"
fi

suite_end
