# emu_rewrite.awk — a kernel exercise's standard CUDA (.cu) made host C++ for the emulator
# (cuda/emu.h), line for line. nvcc compiles the file as it is; the emulated builds (make
# grade, cuda_check_emu, the -emu labs) compile this script's output with -DAL_CUDA_EMU:
#
#   k<<<grid, block[, shared_bytes[, stream]]>>>(args)
#       -> AL_EMU_LAUNCH((grid, block, ...), (args), k)     (al_cuda.h: every such launch runs
#          its threads as fibers, so __syncthreads and shuffles work: LAUNCH_SYNC's mode)
#   __shared__ float t[32][33];      (inside a function)
#       -> float (&t)[32][33] = emu_shared_array<float[32][33]>([] {});   (the array per block)
#   extern __shared__ float sh[];    (inside a function, or alone on its line at file scope)
#       -> float *sh = (float *)emu_dynamic_shared();      (file scope: a #define of the name)
#
# Text is only inserted or replaced within a line's own characters (newlines inside a launch
# stay where they were), so the output has the input's lines: compiler errors and the
# emulator's reports name the student's line. Comments, strings and character literals are
# skipped. The input is data: nothing of it is evaluated. What the script cannot read stops it
# with "FILE:LINE: cannot read this ...: why" on stderr and status 1 (F: the name to print).
# Variables: F (the file's name in messages), LINE=1 (start the output with #line 1 "F", for a
# compile from a pipe).
BEGIN { src = "" }
{ src = src $0 "\n" }
function fail(ln, what, why) {
  printf "%s:%d: cannot read this %s: %s\n", F, ln, what, why > "/dev/stderr"
  failed = 1
  exit 1
}
function is_ident(ch) { return ch ~ /[A-Za-z0-9_]/ }
# The index just past the comment, string or character literal starting at j (j itself when
# none starts there).
function skip_lit(j,    c2, q, k) {
  c2 = substr(src, j, 2)
  if (c2 == "//") {
    k = index(substr(src, j), "\n")
    return k ? j + k - 1 : L + 1
  }
  if (c2 == "/*") {
    k = index(substr(src, j + 2), "*/")
    return k ? j + k + 3 : L + 1
  }
  q = substr(src, j, 1)
  if (q == "\"" || q == "'") {
    for (k = j + 1; k <= L; k++) {
      c2 = substr(src, k, 1)
      if (c2 == "\\") { k++; continue }
      if (c2 == q || c2 == "\n") return k + 1
    }
    return L + 1
  }
  return j
}
# The index of the first `stop` (a string) at bracket depth 0 from j on, or 0; a `;` or an
# unbalanced closing bracket at depth 0 first also gives 0.
function find_top(j, stop,    d, c, k, n) {
  d = 0
  n = length(stop)
  while (j <= L) {
    k = skip_lit(j)
    if (k != j) { j = k; continue }
    c = substr(src, j, 1)
    if (d == 0 && substr(src, j, n) == stop) return j
    if (c == "(" || c == "[" || c == "{") d++
    else if (c == ")" || c == "]" || c == "}") { if (--d < 0) return 0 }
    else if (c == ";" && d == 0) return 0
    j++
  }
  return 0
}
function trim(s) {
  sub(/^[ \t\n]+/, "", s)
  sub(/[ \t\n]+$/, "", s)
  return s
}
function lines_in(s,    t) { t = s; return gsub(/\n/, "", t) }
# top-level comma-separated parts of s
function count_top(s,    d, c, k, n) {
  d = 0; n = 1
  for (k = 1; k <= length(s); k++) {
    c = substr(s, k, 1)
    if (c == "(" || c == "[" || c == "{") d++
    else if (c == ")" || c == "]" || c == "}") d--
    else if (c == "," && d == 0) n++
  }
  return n
}

function launch(i,    j, d, ns, name, cfg, e, p, q, args, ln, ws) {
  ln = line
  # the kernel: an identifier (with ::), maybe with template arguments <...>, before <<<
  j = i - 1
  while (j >= mark && substr(src, j, 1) ~ /[ \t\n]/) j--
  ws = substr(src, j + 1, i - j - 1)
  if (substr(src, j, 1) == ">") {
    d = 0
    for (; j >= mark; j--) {
      if (substr(src, j, 1) == ">") d++
      else if (substr(src, j, 1) == "<" && --d == 0) { j--; break }
    }
  }
  while (j >= mark && (is_ident(substr(src, j, 1)) || substr(src, j, 1) == ":")) j--
  ns = j + 1
  name = substr(src, ns, i - ns - length(ws))
  if (name == "" || name !~ /^[A-Za-z_:]/)
    fail(ln, "launch", "expected a kernel's name before <<<")
  e = find_top(i + 3, ">>>")
  if (!e) fail(ln, "launch", "no >>> closes its configuration <<<grid, block, shared_bytes, stream>>>")
  cfg = substr(src, i + 3, e - i - 3)
  if (trim(cfg) == "" || count_top(cfg) < 2 || count_top(cfg) > 4)
    fail(ln, "launch", "a launch is kernel<<<grid, block>>>(...), with optionally shared_bytes and a stream after block")
  p = e + 3
  while (p <= L && substr(src, p, 1) ~ /[ \t\n]/) p++
  if (substr(src, p, 1) != "(") fail(ln, "launch", "the kernel's arguments in parentheses must follow >>>")
  q = find_top(p + 1, ")")
  if (!q) fail(ln, "launch", "its argument list has no closing parenthesis")
  args = substr(src, p, q - p + 1)
  if (name ~ /\n/) fail(ln, "launch", "write the kernel's name on one line")
  out = out substr(src, mark, ns - mark) "AL_EMU_LAUNCH(" ws "(" cfg ")" \
        substr(src, e + 3, p - e - 3) ", " args ", " name ")"
  line += lines_in(cfg) + lines_in(substr(src, e + 3, p - e - 3)) + lines_in(args)
  mark = q + 1
  return q + 1
}

function shared(s,    is_extern, ds, e, decl, al, dims, k, d, name, prefix, ln, lead) {
  ln = line
  # what precedes __shared__ in its statement (comments aside): nothing, or `extern`
  ds = s
  if (prevword == "extern") { is_extern = 1; ds = lastword_at }
  else if (lastc != "" && lastc !~ /[;{}]/)
    fail(ln, "__shared__ declaration", "write __shared__ first (or after extern): __shared__ float tile[32][33];")
  if (ds < mark) fail(ln, "__shared__ declaration", "it is inside a launch")
  e = find_top(s + 10, ";")
  if (!e) fail(ln, "__shared__ declaration", "no ; ends it")
  decl = substr(src, s + 10, e - s - 10)
  if (decl ~ /\n/) fail(ln, "__shared__ declaration", "write it on one line")
  al = ""
  if (match(decl, /__align__[ \t]*\([ \t]*[0-9]+[ \t]*\)/)) {
    al = substr(decl, RSTART, RLENGTH)
    gsub(/[^0-9]/, "", al)
    decl = substr(decl, 1, RSTART - 1) substr(decl, RSTART + RLENGTH)
  }
  decl = trim(decl)
  if (decl ~ /=/) fail(ln, "__shared__ declaration", "shared memory cannot be initialized in its declaration")
  if (count_top(decl) > 1) fail(ln, "__shared__ declaration", "declare one array per __shared__")
  dims = ""
  while (decl ~ /\][ \t]*$/) {
    sub(/[ \t]+$/, "", decl)
    d = 0
    for (k = length(decl); k >= 1; k--) {
      if (substr(decl, k, 1) == "]") d++
      else if (substr(decl, k, 1) == "[" && --d == 0) break
    }
    if (k < 1) fail(ln, "__shared__ declaration", "unbalanced [ ]")
    dims = substr(decl, k) dims
    decl = substr(decl, 1, k - 1)
  }
  sub(/[ \t]+$/, "", decl)
  if (!match(decl, /[A-Za-z_][A-Za-z0-9_]*$/)) fail(ln, "__shared__ declaration", "expected the array's name")
  name = substr(decl, RSTART)
  prefix = trim(substr(decl, 1, RSTART - 1))
  if (prefix == "") fail(ln, "__shared__ declaration", "expected a type before " name)
  lead = substr(src, mark, ds - mark)
  if (is_extern) {
    if (dims != "[]") fail(ln, "extern __shared__ declaration", "dynamic shared memory is declared extern __shared__ T " name "[];")
    if (depth > 0) {
      out = out lead prefix " *" name " = (" prefix " *)emu_dynamic_shared();"
    } else { # file scope: a macro, which needs the line to itself
      if (lead !~ /(^|\n)[ \t]*$/ || substr(src, e + 1) !~ /^[ \t]*(\/\/[^\n]*)?\n/)
        fail(ln, "extern __shared__ declaration", "at file scope, put it on a line of its own")
      out = out lead "#define " name " ((" prefix " *)emu_dynamic_shared())"
    }
  } else {
    if (depth == 0) fail(ln, "__shared__ declaration", "declare __shared__ arrays inside the kernel")
    if (dims ~ /\[[ \t]*\]/) fail(ln, "__shared__ declaration", "a static array needs its size (dynamic shared memory is extern __shared__ T " name "[];)")
    out = out lead prefix " (&" name ")" dims " = emu_shared_array<" prefix dims \
          (al != "" ? ", " al : "") ">([] {});"
  }
  mark = e + 1
  return e + 1
}

END {
  if (failed) exit 1
  L = length(src)
  out = ""
  mark = 1
  line = 1
  depth = 0
  i = 1
  while (i <= L) {
    k = skip_lit(i)
    if (k != i) { line += lines_in(substr(src, i, k - i)); i = k; continue }
    c = substr(src, i, 1)
    if (c == "\n") { line++; i++; continue }
    if (c ~ /[ \t\r\f]/) { i++; continue }
    if (c == "{") depth++
    else if (c == "}") depth--
    # the last token (comments aside): its character, and the word when it is one
    prevword = lastword
    lastword = ""
    if (c == "<" && substr(src, i, 3) == "<<<") { i = launch(i); lastc = ")"; continue }
    if (c ~ /[A-Za-z_]/ && (i == 1 || !is_ident(substr(src, i - 1, 1)))) {
      for (k = i + 1; k <= L && is_ident(substr(src, k, 1)); k++) {}
      if (substr(src, i, k - i) == "__shared__") { i = shared(i); lastc = ";"; continue }
      lastword = substr(src, i, k - i)
      lastword_at = i
      lastc = "w"
      i = k
      continue
    }
    lastc = c
    i++
  }
  out = out substr(src, mark)
  if (LINE == 1) printf "#line 1 \"%s\"\n", F
  printf "%s", out
}
