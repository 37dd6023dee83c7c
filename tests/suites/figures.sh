#!/usr/bin/env bash
# Figures: every lab renders its figures on a short run and tests/tools/figcheck.py checks each
# one mechanically (every series drawn, markers where a series has a lone point, a y label on
# every line plot, no title wider than its panel measured with the font's own widths, the
# image there when gnuplot is). Then the book's looks where the notebook names them: d2l.plot's
# formats '-', 'm--', 'g-.', 'r:', one font size for every line plot, a legend off the curves,
# a colour bar that says what it shows. Run from the repository root: bash tests/suites/figures.sh.
set -u
. "$(dirname "$0")/../suite_lib.sh" && suite_begin figures

if [ ! -d solutions ]; then
  skip "a student handout: the labs stop at the first exercise still to do, before their figures"
  suite_end
  exit $?
fi
if ! command -v python3 >/dev/null 2>&1; then
  skip "python3 not found (make deps): the figure checks need it"
  suite_end
  exit $?
fi
need_image=()
if command -v gnuplot >/dev/null 2>&1; then need_image=(--need-image); else
  echo "note: gnuplot not found: checking the .gp/.dat files only, no images (make deps)"
fi

out=$tmp/out
run() { # name, command...: one short lab run that must exit 0
  local name=$1
  shift
  if env -u AL_NO_GNUPLOT "$@" >"$tmp/$name.log" 2>&1; then ok "$name: $* exits 0"; else
    bad "$name: $* exited $?"
    tail -5 "$tmp/$name.log"
  fi
}
for l in 01 02 04 05; do
  [ -x ./lab$l ] && run lab$l ./lab$l --out "$out/lab$l"
done
have_fra=no
for d in "${D2L_DATA_DIR:-}" data ../shared/data; do
  [ -n "$d" ] && [ -f "$d/fra-eng.zip" ] && have_fra=yes
done
if [ $have_fra = yes ]; then
  run lab03 ./lab03 --epochs 2 --heldout 0 --out "$out/lab03"
  run lab06 ./lab06 --epochs 2 --out "$out/lab06"
else
  skip "lab03, lab06: fra-eng.zip not found (make data): their loss and attention figures unchecked"
fi
if ./lab07 --steps 1 --out "$tmp/probe07" >"$tmp/probe07.log" 2>&1; then
  run lab07 ./lab07 --steps 5 --out "$out/lab07"
  # the book's configuration: 96 x 96 images make titles and panels of another size
  run lab07_d2l ./lab07 --preset d2l --steps 1 --out "$out/lab07_d2l"
else
  skip "lab07: Fashion-MNIST not found (make deps installs dataset-fashion-mnist)"
fi

# A terminal with no UTF-8 locale (LANG unset: containers, ssh, CI): the scripts' `set encoding
# utf8` made gnuplot warn "iconv failed to convert degree sign" once per figure
if [ ${#need_image[@]} -gt 0 ] && [ -x ./lab01 ]; then
  env -u AL_NO_GNUPLOT -u LANG -u LC_CTYPE LC_ALL=C ./lab01 --out "$tmp/lab01_c" >"$tmp/lab01_c.log" 2>&1
  if grep -qi 'warning' "$tmp/lab01_c.log"; then
    bad "lab01 under LC_ALL=C: gnuplot warned: $(grep -i -m1 warning "$tmp/lab01_c.log")"
  else
    ok "lab01 under LC_ALL=C: figures drawn without a gnuplot warning"
  fi
fi

if python3 tests/tools/figcheck.py "${need_image[@]}" "$out" >"$tmp/figcheck.log" 2>&1; then
  ok "figcheck: $(tail -1 "$tmp/figcheck.log")"
else
  bad "figcheck: $(tail -1 "$tmp/figcheck.log")"
  grep '^FAIL' "$tmp/figcheck.log" | head -20
fi

# ---------------------------------------------------------------- the book's looks
gp=$out/lab01/fit_sigmas.gp
if [ -f "$gp" ]; then
  # plot_kernel_reg: d2l.plot(x, [y_truth, y_hat], legend=['Truth', 'Pred']) -> '-' then 'm--';
  # the training data 'o' with alpha=0.5 in the next colour of the cycle (orange)
  check "lab01: Truth solid blue ('-')" grep -qE "index 0 using 1:2 with lines lw [0-9.]+ dt solid lc rgb '#1f77b4' title 'Truth'" "$gp"
  check "lab01: Pred dashed magenta ('m--')" grep -qE "index 1 using 1:2 with lines lw [0-9.]+ dt \([0-9.]+,[0-9.]+\) lc rgb '#bf00bf' title 'Pred'" "$gp"
  check "lab01: training points orange at alpha 0.5" grep -qE "index 2 using 1:2 with points .*lc rgb '#80ff7f0e'" "$gp"
fi
# one text size for every line plot (lab01's rows were smaller and thinner than the rest)
sizes=$(grep -l 'plot_axes_row\|animator' "$out"/*/*.gp 2>/dev/null | xargs -r grep -ho "pngcairo size [0-9]*,[0-9]* noenhanced font 'DejaVu Sans,[0-9.]*'" | sed "s/.*,//; s/'//" | sort -u)
if [ "$(echo "$sizes" | grep -c .)" = 1 ]; then ok "every line plot uses one font size ($sizes)"; else
  bad "line plots use several font sizes: $(echo $sizes)"
fi
gp=$out/lab05/pe_columns.gp
if [ -f "$gp" ]; then
  # d2l.plot's default fmts in order: '-', 'm--', 'g-.', 'r:'
  check "lab05: Col 6 '-' (solid, first colour)" grep -qE "index 0 using 1:2 with lines lw [0-9.]+ dt solid lc rgb '#1f77b4' title 'Col 6'" "$gp"
  check "lab05: Col 7 'm--'" grep -qE "index 1 using 1:2 with lines lw [0-9.]+ dt \([0-9.]+,[0-9.]+\) lc rgb '#bf00bf' title 'Col 7'" "$gp"
  check "lab05: Col 8 'g-.'" grep -qE "index 2 using 1:2 with lines lw [0-9.]+ dt \([0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+\) lc rgb '#008000' title 'Col 8'" "$gp"
  check "lab05: Col 9 'r:'" grep -qE "index 3 using 1:2 with lines lw [0-9.]+ dt \([0-9.]+,[0-9.]+\) lc rgb '#ff0000' title 'Col 9'" "$gp"
  check "lab05: the legend sits off the curves (outside)" grep -q '^set key outside' "$gp"
fi
for gp in "$out"/lab0[136]/loss.gp "$out"/lab07/vit_training.gp; do
  [ -f "$gp" ] || continue
  check "$(basename "$(dirname "$gp")")/$(basename "$gp" .gp): the Animator's ylabel" grep -qE "^set ylabel '(loss|loss, accuracy)'" "$gp"
done
gp=$out/lab07/cls_attention.gp
if [ -f "$gp" ]; then
  check "lab07 cls_attention: the colour bar says the maps are scaled to their max" grep -qE "^set label 998 '.*attention.*max" "$gp"
fi
gp=$out/lab07/vit_training.gp
if [ -f "$gp" ]; then
  n=$(grep -c 'with linespoints\|with points' "$gp")
  if [ "$n" -ge 3 ]; then ok "lab07 --steps 5: all 3 one-point series drawn with markers"; else
    bad "lab07 --steps 5: $n of 3 one-point series have markers"
  fi
fi
suite_end
