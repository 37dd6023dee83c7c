# vec_info.awk — GCC's -fopt-info-vec-all report of one file (F, labNN/FILE.c), cut down to one
# line per loop for a student: vectorized (with the widest vectors) or GCC's reason why not.
# Used by confined.sh (VEC_INFO=1). Outer loops of a nest are left out: GCC vectorizes inner
# loops, so an outer one's "loop nest containing ... inner loops" says nothing about the code.
# A reason is the first "not vectorized:" message at or after the loop's line and before the
# next loop's (GCC names the statement that stopped it, often a line into the body).
BEGIN { n = 0 }
index($0, F ":") == 1 {
  split(substr($0, length(F) + 2), p, ":")
  line = p[1] + 0
  msg = $0
  sub(/^[^ ]* /, "", msg)
  if (msg ~ /^optimized: loop vectorized using [0-9]+ byte vectors/) {
    bytes = msg
    sub(/^optimized: loop vectorized using /, "", bytes)
    sub(/ byte.*/, "", bytes)
    if (!(line in kind)) order[n++] = line
    if (kind[line] != "yes" || bytes + 0 > width[line]) width[line] = bytes + 0
    kind[line] = "yes"
  } else if (msg ~ /^missed: couldn't vectorize loop/) {
    if (!(line in kind)) { order[n++] = line; kind[line] = "no" }
  } else if (msg ~ /^missed: not vectorized: /) {
    r = msg
    sub(/^missed: not vectorized: /, "", r)
    nr++
    rline[nr] = line
    rtext[nr] = r
  }
}
END {
  # loops in line order
  for (i = 0; i < n; i++)
    for (j = i + 1; j < n; j++)
      if (order[j] < order[i]) { x = order[i]; order[i] = order[j]; order[j] = x }
  out = 0
  for (i = 0; i < n; i++) {
    L = order[i]
    if (kind[L] == "yes") {
      lines[out++] = sprintf("  line %d: loop vectorized (%d-byte vectors, %d floats at a time)", L,
                             width[L], width[L] / 4)
      continue
    }
    next_l = i + 1 < n ? order[i + 1] : 1e9
    why = ""
    for (k = 1; k <= nr; k++)
      if (rline[k] >= L && rline[k] < next_l) { why = rtext[k]; break }
    if (why ~ /loop nest containing|multiple nested loops|outer-loop|inner-loop/) continue
    if (length(why) > 110) why = substr(why, 1, 107) "..."
    lines[out++] = sprintf("  line %d: not vectorized%s", L, why == "" ? "" : ": " why)
  }
  printf "grade: %s, for information (not graded): GCC's vectorizer for AVX2 (-O3 -march=x86-64-v3)", F
  if (out == 0) { print " found no loop to report"; exit }
  print ":"
  for (i = 0; i < out; i++) print lines[i]
  for (i = 0; i < out; i++)
    if (lines[i] ~ /no vectype for stmt/) {
      print "  (\"no vectype for stmt\" usually means a call GCC has no vector version of without"
      print "  -ffast-math, such as expf or fmaxf; a max written as x > m ? x : m can vectorize)"
      break
    }
}
