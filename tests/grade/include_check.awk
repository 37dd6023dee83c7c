# include_check.awk — reads `cc -E` output of one submission file as the preprocessor writes it
# (a stream: the first offending line stops the preprocessor, whose next write gets SIGPIPE)
# and passes it on unchanged when every file it opened is allowed. Variables (-v):
#   MAIN   the submission file, as named on the command line (relative to CWD)
#   CWD    the directory the compiler runs in
#   ALLOW  allowed directories, ':'-separated: the kit's headers and the system's
#   WHY    file that gets the one-line reason on refusal (exit status 3)
# Refused: an #include (or #include_next) resolving outside ALLOW, the file including itself,
# a #line naming another file, and in the submission's own lines (macros expanded) inline
# assembly and section attributes (.incbin and the like can read any file into the object).
function norm(p, n, i, k, parts, out, m) {
  if (substr(p, 1, 1) != "/") p = CWD "/" p
  n = split(p, parts, "/")
  m = 0
  for (i = 1; i <= n; i++) {
    if (parts[i] == "" || parts[i] == ".") continue
    if (parts[i] == "..") { if (m > 0) m--; continue }
    out[++m] = parts[i]
  }
  p = ""
  for (k = 1; k <= m; k++) p = p "/" out[k]
  return p == "" ? "/" : p
}
function allowed(p, i) {
  for (i = 1; i <= nallow; i++)
    if (index(p, allow[i] "/") == 1) return 1
  return 0
}
function refuse(msg) {
  printf "%s\n", msg > WHY
  close(WHY)
  bad = 1
  exit 3
}
function where() { return shown[depth] ":" line[depth] }
BEGIN {
  nallow = split(ALLOW, allow, ":")
  for (i = 1; i <= nallow; i++) allow[i] = norm(allow[i])
  main = norm(MAIN)
  depth = 0; file[0] = MAIN; shown[0] = MAIN; line[0] = 0
}
/^# [0-9]+ "/ {
  # # LINE "NAME" FLAGS: NAME ends at the last quote (the flags are digits)
  q1 = index($0, "\"")
  rest = substr($0, q1 + 1)
  if (match(rest, /"( [0-9]+)*$/) == 0) { print; next }
  name = substr(rest, 1, RSTART - 1)
  flags = substr(rest, RSTART + 1)
  n = $2 + 0
  if (name ~ /\/\/$/ && flags == "") { print; next } # -g: the working directory
  if (name ~ /^<.*>$/) { # <built-in>, <command-line>: not files
    if (flags ~ /^ 1( |$)/) { depth++; file[depth] = name; shown[depth] = name }
    else if (flags ~ /^ 2( |$)/ && depth > 0) depth--
    line[depth] = n
    print
    next
  }
  p = norm(name)
  if (flags ~ /^ 1( |$)/) {
    if (p == main)
      refuse(where() ": the file includes itself; an exercise file includes only the kit's headers and system headers")
    if (!allowed(p))
      refuse(where() ": #include of " name ": an exercise file may include only the kit's exercise headers (\"labNN/labNN.h\", \"../../common/...\") and system headers")
    depth++; file[depth] = p; shown[depth] = name; line[depth] = n
  } else if (flags ~ /^ 2( |$)/) {
    if (depth > 0) depth--
    line[depth] = n
  } else {
    if (p != (depth ? file[depth] : main))
      refuse(where() ": #line names another file (" name "); not allowed in an exercise file")
    line[depth] = n
  }
  print
  next
}
{
  if (depth == 0) {
    if ($0 ~ /(^|[^A-Za-z0-9_])(asm|__asm|__asm__)([^A-Za-z0-9_]|$)/)
      refuse(where() ": inline assembly; no exercise needs it (and it could read files into the object)")
    if ($0 ~ /__attribute(__)?[ \t]*\(.*(^|[^A-Za-z0-9_])(section|__section__|symver|__symver__)[ \t]*\(/)
      refuse(where() ": a section or symver attribute; no exercise needs one")
  }
  line[depth]++
  print
}
