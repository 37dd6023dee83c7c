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
  skip "python3 not found (make deps-dev): the figure checks need it"
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
# lab01 draws each edition's figures on that edition's data. d2l 1.0's plot(): y_hat first in
# the cycle's blue ('-'), the truth 'm--', the training data 'o' at alpha 0.5 in the next colour
# (orange), legend y_hat, y; sharey=True. 0.17's plot_kernel_reg: d2l.plot(x, [y_truth, y_hat],
# legend=['Truth', 'Pred']) -> Truth '-', Pred 'm--', the same points.
for f in fit_kernels fit_sigmas; do
  gp=$out/lab01/$f.gp
  [ -f "$gp" ] || continue
  check "lab01 $f (1.0): y_hat solid blue ('-')" grep -qE "index 0 using 1:2 with lines lw [0-9.]+ dt solid lc rgb '#1f77b4' title 'y_hat'" "$gp"
  check "lab01 $f (1.0): y dashed magenta ('m--')" grep -qE "index 1 using 1:2 with lines lw [0-9.]+ dt \([0-9.]+,[0-9.]+\) lc rgb '#bf00bf' title 'y'" "$gp"
  check "lab01 $f (1.0): training points orange at alpha 0.5" grep -qE "index 2 using 1:2 with points .*lc rgb '#80ff7f0e'" "$gp"
  check "lab01 $f (1.0): one shared y range on the 4 panels" test "$(grep -c '^set yrange' "$gp")/$(grep '^set yrange' "$gp" | sort -u | wc -l)" = 4/1
done
gp=$out/lab01/fit_kernels.gp
if [ -f "$gp" ]; then
  check "lab01 fit_kernels (1.0): the kernel names are the x labels" bash -c "grep '^set xlabel' '$gp' | cut -d\' -f2 | tr '\n' ' ' | grep -qx 'Gaussian Boxcar Constant Epanechnikov '"
fi
gp=$out/lab01/kernels.gp
if [ -f "$gp" ]; then
  check "lab01 kernels (1.0): the kernel names are the x labels" bash -c "grep '^set xlabel' '$gp' | cut -d\' -f2 | tr '\n' ' ' | grep -qx 'Gaussian Boxcar Constant Epanechnikov '"
fi
gp=$out/lab01/fit_average.gp
if [ -f "$gp" ]; then
  check "lab01 fit_average (0.17): Truth solid blue ('-')" grep -qE "index 0 using 1:2 with lines lw [0-9.]+ dt solid lc rgb '#1f77b4' title 'Truth'" "$gp"
  check "lab01 fit_average (0.17): Pred dashed magenta ('m--')" grep -qE "index 1 using 1:2 with lines lw [0-9.]+ dt \([0-9.]+,[0-9.]+\) lc rgb '#bf00bf' title 'Pred'" "$gp"
  check "lab01 fit_average (0.17): training points orange at alpha 0.5" grep -qE "index 2 using 1:2 with points .*lc rgb '#80ff7f0e'" "$gp"
fi
# The data behind them, from the .dat files: 1.0's rows are 2 sin x + x with 40 noisy points
# around it (torch.randn: std 1), 0.17's 2 sin x + x^0.8 with 50 (std 0.5).
if [ -f "$out/lab01/fit_kernels.dat" ]; then
  python3 - "$out/lab01" >"$tmp/lab01data.log" 2>&1 <<'PY'
import math, os, sys
sys.path.insert(0, "tests/tools")
from figcheck import dat_blocks
d = sys.argv[1]
f10 = lambda x: 2 * math.sin(x) + x
f17 = lambda x: 2 * math.sin(x) + x ** 0.8
def check(name, fig, f, n_train, std, panels, truth_at):
    blocks = dat_blocks(os.path.join(d, fig + ".dat"))
    bad = []
    if len(blocks) != 3 * panels:
        bad.append("%d data blocks, want %d" % (len(blocks), 3 * panels))
    for p in range(min(panels, len(blocks) // 3)):
        truth, train = blocks[3 * p + truth_at], blocks[3 * p + 2]
        xs = [r[0] for r in truth]
        if len(truth) != 50 or any(abs(x - 0.1 * i) > 1e-5 for i, x in enumerate(xs)):
            bad.append("panel %d: the truth is not drawn at x = 0, 0.1, ..., 4.9" % (p + 1))
        # 1e-4: the .dat holds 6 significant digits of a float32 value below 10
        worst = max((abs(y - f(x)) for x, y in truth), default=math.inf)
        if worst > 1e-4:
            bad.append("panel %d: the truth is off %s by %.3g" % (p + 1, name, worst))
        if len(train) != n_train:
            bad.append("panel %d: %d training points, want %d" % (p + 1, len(train), n_train))
        elif train:
            r = [y - f(x) for x, y in train]
            m = sum(r) / len(r)
            sd = math.sqrt(sum((v - m) ** 2 for v in r) / (len(r) - 1))
            # the sample std of n >= 40 normal draws stays within +-50% of their std
            # (4.5 standard errors): the noise's scale; the truth and the count tell the editions apart
            if not (0.5 * std <= sd <= 1.5 * std) or abs(m) > 0.8 * std:
                bad.append("panel %d: training residuals mean %.2f, std %.2f, want N(0, %g)"
                           % (p + 1, m, sd, std))
    print(("FAIL " if bad else "ok   ") + "%s: %s" % (fig, "; ".join(bad) or
          "%d panel(s), %s, %d training points" % (panels, name, n_train)))
    return not bad
# the truth is each panel's second series in 1.0 (y_hat, y), its first in 0.17 (Truth, Pred)
good = [check("2 sin x + x", f, f10, 40, 1.0, 4, 1) for f in ("fit_kernels", "fit_sigmas")]
good.append(check("2 sin x + x^0.8", "fit_average", f17, 50, 0.5, 1, 0))
sys.exit(0 if all(good) else 1)
PY
  rc=$?
  while read -r line; do
    case $line in
      ok*) ok "lab01 data ${line#ok   }" ;;
      FAIL*) bad "lab01 data ${line#FAIL }" ;;
      *) bad "lab01 data check: $line" ;;
    esac
  done <"$tmp/lab01data.log"
  [ $rc -eq 0 ] || [ -s "$tmp/lab01data.log" ] || bad "lab01 data check exited $rc"
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
# d2l 0.17's Animator(xlabel='epoch', ylabel='loss', ...) passes no legend: it draws none
# (lab03 and lab06 run their default preset, d2l-0.17, here)
for gp in "$out"/lab0[136]/loss.gp; do
  [ -f "$gp" ] || continue
  check "$(basename "$(dirname "$gp")")/loss: no legend, as 0.17's Animator" grep -qx 'unset key' "$gp"
done
# lab06: show_heatmaps(..., titles=['Head %d' % i for i in range(1, 5)]): "Head h" on every
# panel, the rows (blocks) unlabelled
for gp in "$out"/lab06/*attention.gp; do
  [ -f "$gp" ] || continue
  t=$(grep '^set title' "$gp" | sed 's/ font.*//; s/ offset.*//')
  if [ -n "$t" ] && ! echo "$t" | grep -qvE '^set title "Head [0-9]+"$'; then
    ok "lab06/$(basename "$gp" .gp): panel titles 'Head h', as the book's"
  else
    bad "lab06/$(basename "$gp" .gp): panel titles $(echo "$t" | head -2 | tr '\n' ' ')"
  fi
done
gp=$out/lab07/cls_attention.gp
if [ -f "$gp" ]; then
  check "lab07 cls_attention: the colour bar says the maps are scaled to their max" grep -qE "^set label 998 '.*attention.*max" "$gp"
fi
# lab03's loss after a short run (--epochs 2 here): a point per epoch, so a curve, not the one
# dot that recording every 10th epoch left (issue 36); the book's every-10th stays for long runs
dat=$out/lab03/loss.dat
if [ -f "$dat" ]; then
  n=$(grep -cv '^#\|^$' "$dat")
  if [ "$n" = 2 ]; then ok "lab03 --epochs 2: the loss curve has a point per epoch (2)"; else
    bad "lab03 --epochs 2: the loss curve has $n points, want 2 (one per epoch)"; fi
fi
# lab02's score variance: d = 1 ... 256 doubling, on a log axis (base 2: evenly spaced, labelled
# 1, 2, 4, ...); unscaled, log-log (a line of slope 1)
gp=$out/lab02/score_variance.gp
if [ -f "$gp" ]; then
  check "lab02 score_variance: d on a log axis in both panels" test "$(grep -c '^set logscale x 2$' "$gp")" = 2
  check "lab02 score_variance: ticks at d = 1, 2, 4, ..., 256" grep -qF 'set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, "64" 64, "128" 128, "256" 256)' "$gp"
  check "lab02 score_variance: the unscaled variance on a log axis too" bash -c "grep -m1 -A1 '^set logscale x 2' '$gp' | grep -qx 'set logscale y'"
fi
# lab07's predictions as the book's show_images draws them: gray, no ticks, no colour bar, each
# titled with the true and the predicted label (predict_ch3's two lines)
gp=$out/lab07/predictions.gp
if [ -f "$gp" ]; then
  check "lab07 predictions: gray (black to white)" grep -q "^set palette defined (0 '#000000'.*8 '#ffffff')" "$gp"
  check "lab07 predictions: no colour bar" bash -c "! grep -q '^set colorbox' '$gp'"
  check "lab07 predictions: no ticks" bash -c "! grep -qE '^set (x|y)tics' '$gp'"
  nt=$(grep -cE '^set title "true: [a-z -]+\\npred: [a-z -]+"' "$gp")
  np=$(grep -c '^plot ' "$gp")
  if [ "$nt" -gt 0 ] && [ "$nt" = "$np" ]; then ok "lab07 predictions: all $np images titled 'true: ...' and 'pred: ...'"; else
    bad "lab07 predictions: $nt of $np images titled with the true and predicted labels"; fi
fi
gp=$out/lab07/vit_training.gp
if [ -f "$gp" ]; then
  n=$(grep -c 'with linespoints\|with points' "$gp")
  if [ "$n" -ge 3 ]; then ok "lab07 --steps 5: all 3 one-point series drawn with markers"; else
    bad "lab07 --steps 5: $n of 3 one-point series have markers"
  fi
fi
suite_end
