#!/usr/bin/env bash
# class_report.sh OUT [WALL_S JOBS] — the class view of a make grade-all batch, from the
# students' results.json files (OUT/students/NAME/results.json, written by the grader):
#   OUT/grades.csv      one row per student: points per exercise, total, max, CPU seconds
#   OUT/report.txt      scores, the exercises the class found hardest and the most common
#                       failure of each, CPU seconds per submission
#   OUT/histogram.png   the scores' histogram        (gnuplot; without it: said once, no figure)
#   OUT/pass_rate.png   per exercise, the share of students with its full points
# Reads only the grader's own lines of results.json (one test object per line: name, number,
# score, max_score, then extra_data with outcome and exercise, before any text of the student's).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1%/}
wall=${2:-}
jobs=${3:-}
[ -d "$out/students" ] || { echo "class_report: no $out/students" >&2; exit 2; }

# name<TAB>exercise<TAB>test<TAB>score<TAB>max<TAB>outcome, one line per test; a student without
# a results.json, or with one without tests (did not build), gets one line with exercise "-".
rows=$out/.tests.tsv
: >"$rows"
for d in "$out"/students/*/; do
  d=${d%/}
  name=${d##*/}
  r=$d/results.json
  if [ ! -s "$r" ] || ! grep -q '"name":"lab' "$r"; then
    printf '%s\t-\t-\t0\t0\tno_results\n' "$name" >>"$rows"
    continue
  fi
  LC_ALL=C awk -v N="$name" '
    match($0, /^ *\{"name":"[A-Za-z0-9_]+","number":"[^"]*","score":[0-9]+,"max_score":[0-9]+,/) {
      head = substr($0, RSTART, RLENGTH)
      split(head, f, "\"")
      test = f[4]
      score = head; sub(/.*"score":/, "", score); sub(/,.*/, "", score)
      max = head; sub(/.*"max_score":/, "", max); sub(/,.*/, "", max)
      rest = substr($0, RSTART + RLENGTH)
      outcome = rest; sub(/.*"extra_data":\{"outcome":"/, "", outcome); sub(/".*/, "", outcome)
      ex = rest; sub(/.*"extra_data":\{"outcome":"[a-z_]+","exercise":"/, "", ex); sub(/".*/, "", ex)
      if (ex == rest || ex == "") ex = "?"
      printf "%s\t%s\t%s\t%s\t%s\t%s\n", N, ex, test, score, max, outcome
    }' "$r" >>"$rows"
done

LC_ALL=C awk -F'\t' -v OUT="$out" -v WALL="$wall" -v JOBS="$jobs" '
  FNR == 1 { file++ }
  file == 1 { # manifest: exercise -> file name
    if ($0 ~ /^lab[0-9][0-9]\//) {
      split($0, mf, /[ \t]+/); n = split(mf[2], e, ",")
      for (i = 1; i <= n; i++) what[e[i]] = mf[1]
    }
    next
  }
  file == 2 { # cpu: name -> seconds
    cpu[$1] = $2; next
  }
  {
    s = $1
    if (!(s in seen)) { seen[s] = 1; students[++ns] = s }
    if ($2 == "-") { nobuild[s] = 1; next }
    if (!(($2) in exmax)) exs[++nex] = $2
    if (!((s, $3) in counted)) { counted[s, $3] = 1; if (!((($2), $3) in tmax)) { tmax[$2, $3] = $5; exmax[$2] += $5; total_max += $5 } }
    pts[s, $2] += $4
    tot[s] += $4
    if ($6 != "passed") {
      lost[s, $2] = 1
      fails[$2, $6]++; nfail[$2]++
      ftest[$2, $3]++
    }
  }
  function exkey(x,   a) { split(x, a, "."); return sprintf("%04d.%04d", a[1], a[2]) }
  END {
    # exercises in number order
    for (i = 1; i <= nex; i++) for (j = i + 1; j <= nex; j++)
      if (exkey(exs[j]) < exkey(exs[i])) { t = exs[i]; exs[i] = exs[j]; exs[j] = t }
    csv = OUT "/grades.csv"
    line = "student"
    for (i = 1; i <= nex; i++) line = line "," exs[i]
    print line ",total,max,cpu_s" > csv
    line = "max"
    for (i = 1; i <= nex; i++) line = line "," exmax[exs[i]]
    print line "," total_max "," total_max "," > csv
    ncpu = 0; sumcpu = 0; mincpu = -1; maxcpu = 0
    for (k = 1; k <= ns; k++) {
      s = students[k]; line = s
      for (i = 1; i <= nex; i++) line = line "," (s in nobuild ? 0 : pts[s, exs[i]] + 0)
      print line "," tot[s] + 0 "," total_max "," (s in cpu ? cpu[s] : "") > csv
      if (s in cpu) { c = cpu[s]; ncpu++; sumcpu += c; if (mincpu < 0 || c < mincpu) mincpu = c; if (c > maxcpu) maxcpu = c }
      score[k] = tot[s] + 0
      for (i = 1; i <= nex; i++) if (!(s in nobuild) && !((s, exs[i]) in lost)) full[exs[i]]++
    }
    close(csv)
    # scores: sorted for the median
    for (i = 1; i <= ns; i++) for (j = i + 1; j <= ns; j++) if (score[j] < score[i]) { t = score[i]; score[i] = score[j]; score[j] = t }
    sum = 0; for (i = 1; i <= ns; i++) sum += score[i]
    med = ns % 2 ? score[(ns + 1) / 2] : (score[ns / 2] + score[ns / 2 + 1]) / 2
    rep = OUT "/report.txt"
    printf "Class report: %d submissions graded", ns > rep
    if (WALL != "") printf " in %d s of wall time (%s at a time)", WALL, JOBS > rep
    printf "\n" > rep
    if (ncpu) printf "CPU per submission: %.1f s on average (min %.1f, max %.1f; user + system of its make grade, the batch'"'"'s shared build and reference runs not included)\n", sumcpu / ncpu, mincpu, maxcpu > rep
    printf "Scores (of %d): mean %.1f, median %g, min %d, max %d\n", total_max, ns ? sum / ns : 0, med, score[1], score[ns] > rep
    nb = 0; for (k = 1; k <= ns; k++) if (students[k] in nobuild) nb++
    if (nb) {
      printf "Did not build or left no results (score 0):" > rep
      for (k = 1; k <= ns; k++) if (students[k] in nobuild) printf " %s", students[k] > rep
      printf "\n" > rep
    }
    # hardest: lowest share of students with full marks
    for (i = 1; i <= nex; i++) { h[i] = exs[i]; rate[exs[i]] = ns ? (full[exs[i]] + 0) / ns : 0 }
    for (i = 1; i <= nex; i++) for (j = i + 1; j <= nex; j++)
      if (rate[h[j]] < rate[h[i]] || (rate[h[j]] == rate[h[i]] && exkey(h[j]) < exkey(h[i]))) { t = h[i]; h[i] = h[j]; h[j] = t }
    printf "\nHardest exercises (share of students with full marks), and the most common failure of each:\n" > rep
    shown = 0
    for (i = 1; i <= nex && shown < 5; i++) {
      x = h[i]
      if (rate[x] >= 1) break
      shown++
      best = ""; bn = 0
      for (key in fails) { split(key, kk, SUBSEP); if (kk[1] == x && (fails[key] > bn || (fails[key] == bn && kk[2] < best))) { best = kk[2]; bn = fails[key] } }
      bt = ""; btn = 0
      for (key in ftest) { split(key, kk, SUBSEP); if (kk[1] == x && (ftest[key] > btn || (ftest[key] == btn && kk[2] < bt))) { bt = kk[2]; btn = ftest[key] } }
      gsub(/_/, " ", best)
      printf "  %-4s %-32s %3.0f%% full marks; most common failure: %s (%d of %d failed tests), most often in %s\n", x, what[x], 100 * rate[x], best, bn, nfail[x], bt > rep
    }
    if (!shown) printf "  none: every student has every exercise'"'"'s full marks\n" > rep
    printf "\nPer exercise: share of students with full marks, mean points\n" > rep
    dat = OUT "/.pass_rate.dat"
    for (i = 1; i <= nex; i++) {
      x = exs[i]; m = 0
      for (k = 1; k <= ns; k++) m += pts[students[k], x]
      printf "  %-4s %-32s %3.0f%%  %.1f/%d\n", x, what[x], 100 * rate[x], ns ? m / ns : 0, exmax[x] > rep
      printf "%d \"%s\" %.4f\n", i - 1, x, 100 * rate[x] > dat
    }
    close(dat)
    hist = OUT "/.scores.dat"
    for (k = 1; k <= ns; k++) print score[k] > hist
    close(hist)
    print total_max > (OUT "/.max")
  }' tests/grade/manifest.txt <(for c in "$out"/students/*/cpu.txt; do
    n=${c%/cpu.txt}; n=${n##*/}; [ -s "$c" ] && awk -v N="$n" 'NF == 2 { printf "%s\t%.2f\n", N, $1 + $2 }' "$c"; done) "$rows"

max=$(cat "$out/.max" 2>/dev/null || echo 0)
if ! command -v gnuplot >/dev/null; then
  echo "class_report: gnuplot is not installed: no figures (grades.csv and report.txt are complete)" | tee -a "$out/report.txt"
else
  bin=$(awk -v m="$max" 'BEGIN { b = m / 10; print (b < 1 ? 1 : b) }')
  gnuplot <<EOF 2>"$out/.gnuplot.log" || echo "class_report: gnuplot failed ($out/.gnuplot.log)" >&2
set terminal pngcairo size 800,450 font ",11"
set output "$out/histogram.png"
set title "Scores ($(wc -l <"$out/.scores.dat") submissions, out of $max)"
set xlabel "score"
set ylabel "submissions"
set xrange [0:$max + $bin]
set yrange [0:*]
set style fill solid 0.6
set boxwidth $bin * 0.9 absolute
set grid ytics
bin(x) = $bin * floor(x / $bin) + $bin / 2.0
plot "$out/.scores.dat" using (bin(\$1)):(1.0) smooth frequency with boxes lc rgb "#3a6ea5" notitle
set output "$out/pass_rate.png"
set title "Share of students with each exercise's full marks"
set xlabel "exercise"
set ylabel "% of students"
set xrange [-0.7:*]
set yrange [0:105]
set boxwidth 0.7
set xtics rotate by -60 font ",9"
plot "$out/.pass_rate.dat" using 1:3:xtic(2) with boxes lc rgb "#5a9e4b" notitle
EOF
fi
echo "grade-all: $out/grades.csv, $out/report.txt$([ -s "$out/histogram.png" ] && echo ", histogram.png, pass_rate.png")"
cat "$out/report.txt"
