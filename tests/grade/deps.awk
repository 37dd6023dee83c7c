# deps.awk — the exercises' dependency map, read from tests/grade/manifest.txt (its fourth
# column: the exercises a file's code calls). One reading for make and the grader:
#
#   awk -v MODE=table -f deps.awk manifest.txt   one line per exercise, for the grader:
#       EXERCISE FILE LEVEL DEPS      DEPS: every exercise it builds on, transitively ("-": none)
#   awk -v MODE=mk -f deps.awk manifest.txt      make variables (grade.mk):
#       GRADE_LEVELS := 0 1 2 ...     levels of files (a file's level: 1 + its deps' highest)
#       GLEVEL_STU_k := labNN/F ...   the files of level k (their tests run in runner k)
#       GLEVEL_REF_k := labNN/F ...   the files they build on, transitively (references)
#
# A file's exercises are graded together (its tests run with its own code), so dependencies are
# between files: an exercise names its file. Files of one level never depend on each other, so
# one runner per level holds the student's files of that level, the references of what they
# build on and the stubs of the rest: no runner holds the reference of a file whose tests it runs.
# Errors (an unknown exercise, a file depending on itself, a cycle) stop with a message, exit 1.
function fail(msg) { print "deps.awk: tests/grade/manifest.txt: " msg > "/dev/stderr"; bad = 1; exit 1 }
/^#/ || NF == 0 { next }
{
  if (NF != 4) fail("line " NR ": want FILE EXERCISES POINTS DEPS ('-' for none), got " NF " fields")
  f = $1; sub(/\.cu?$/, "", f)
  files[++nf] = f
  exs[f] = $2
  n = split($2, e, ",")
  for (i = 1; i <= n; i++) {
    if (e[i] in file_of) fail("exercise " e[i] " is listed twice")
    file_of[e[i]] = f
  }
  raw[f] = $4
}
# level(f): 0 without deps, else 1 + the highest of its deps' (depth-first; a cycle is an error)
function level(f,    n, d, i, g, l, best) {
  if (f in lvl) return lvl[f]
  if (f in visiting) fail("a dependency cycle through " f)
  visiting[f] = 1
  best = 0
  if (raw[f] != "-") {
    n = split(raw[f], d, ",")
    for (i = 1; i <= n; i++) {
      if (!(d[i] in file_of)) fail(f ": depends on exercise " d[i] ", which no file has")
      g = file_of[d[i]]
      if (g == f) fail(f ": depends on its own exercise " d[i])
      direct[f, g] = 1
      l = level(g) + 1
      if (l > best) best = l
    }
  }
  delete visiting[f]
  return lvl[f] = best
}
# closure(f): every file f builds on, as a space-separated list in manifest order
function closure(f,    i, g, out) {
  delete seen
  mark(f)
  out = ""
  for (i = 1; i <= nf; i++) {
    g = files[i]
    if (g != f && (g in seen)) out = out (out == "" ? "" : " ") g
  }
  return out
}
function mark(f,    i, g) {
  seen[f] = 1
  for (i = 1; i <= nf; i++) {
    g = files[i]
    if (((f, g) in direct) && !(g in seen)) mark(g)
  }
}
END {
  if (bad) exit 1
  maxl = 0
  for (i = 1; i <= nf; i++) { l = level(files[i]); if (l > maxl) maxl = l }
  for (i = 1; i <= nf; i++) clo[files[i]] = closure(files[i])
  if (MODE == "table") {
    for (i = 1; i <= nf; i++) {
      f = files[i]
      # the exercises of the files it builds on
      dl = ""
      n = split(clo[f], c, " ")
      for (k = 1; k <= n; k++) dl = dl (dl == "" ? "" : ",") exs[c[k]]
      m = split(exs[f], e, ",")
      for (k = 1; k <= m; k++) print e[k], f, lvl[f], (dl == "" ? "-" : dl)
    }
  } else if (MODE == "mk") {
    s = "GRADE_LEVELS :="
    for (l = 0; l <= maxl; l++) s = s " " l
    print s
    for (l = 0; l <= maxl; l++) {
      stu = ""; delete refs
      for (i = 1; i <= nf; i++) {
        f = files[i]
        if (lvl[f] != l) continue
        stu = stu " " f
        n = split(clo[f], c, " ")
        for (k = 1; k <= n; k++) refs[c[k]] = 1
      }
      ref = ""
      for (i = 1; i <= nf; i++) if (files[i] in refs) ref = ref " " files[i]
      print "GLEVEL_STU_" l " :=" stu
      print "GLEVEL_REF_" l " :=" ref
    }
  } else {
    fail("MODE must be table or mk")
  }
}
