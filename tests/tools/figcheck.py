#!/usr/bin/env python3
"""figcheck.py DIR... — check every figure (BASE.gp + BASE.dat, from common/plot.c) under DIR.

What can be checked mechanically, from the script and the data rather than from plot.c's own
layout arithmetic:
  * every data block with a finite point is drawn (its 'index k' is in a plot command);
  * a line-style series whose points include one with no finite neighbour (one epoch, one
    validation point) is drawn with markers, since a lone point draws no line;
  * every line-plot panel (plot_axes_row, animator) has a y label, or shares its y range with
    a labelled panel of its row (sharey=True: the axis is labelled once);
  * no panel title is wider than its panel, measured with the real advance widths of the font
    (DejaVu Sans, read from the font file by ttfwidth.py; 0.62 em per character otherwise);
  * the image exists and is not empty when gnuplot is installed (--need-image).
Prints one "ok"/"FAIL" line per figure and check; exits 1 on any failure."""
import glob
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ttfwidth  # noqa: E402

FONT_PATHS = ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"]
_font = None
for p in FONT_PATHS:
    try:
        _font = ttfwidth.Font(p)
        break
    except (OSError, ValueError, KeyError):
        pass


def text_px(s, px_per_em):
    if _font is not None:
        return _font.width_em(s) * px_per_em
    return 0.62 * len(s) * px_per_em  # conservative: wider than DejaVu Sans' average


def gp_string(s):
    """The value of a gnuplot string literal at the start of s ('..' or "..")."""
    if s.startswith("'"):
        m = re.match(r"'((?:[^']|'')*)'", s)
        return m.group(1).replace("''", "'") if m else None
    if s.startswith('"'):
        m = re.match(r'"((?:[^"\\]|\\.)*)"', s)
        if not m:
            return None
        return re.sub(r"\\(.)", lambda t: "\n" if t.group(1) == "n" else t.group(1), m.group(1))
    return None


def dat_blocks(path):
    """Blocks of BASE.dat as lists of rows of floats (blocks split by two blank lines)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    blocks = re.split(r"\n\s*\n\s*\n", text)
    out = []
    for i, b in enumerate(blocks):
        rows = []
        for line in b.split("\n"):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            rows.append([float(v) if v.lower() != "nan" else math.nan for v in line.split()])
        if i == 0 and not rows:
            continue  # the header alone
        out.append(rows)
    return out


def check_figure(gp_path, need_image):
    problems = []
    base = gp_path[:-3]
    name = os.path.relpath(base)
    with open(gp_path, encoding="utf-8") as f:
        gp = f.read()
    m = re.search(r"set terminal pngcairo size (\d+),(\d+) \S+ font '[^,]*,([\d.]+)'", gp)
    if not m:
        return ["%s: no pngcairo terminal line" % name]
    W, H, fontpt = int(m.group(1)), int(m.group(2)), float(m.group(3))
    m = re.search(r"gp_title_font = ',([\d.]+)'", gp)
    title_pt = float(m.group(1)) if m else fontpt
    em = fontpt * 4.0 / 3.0  # pngcairo: 1 pt = 4/3 px at its 96 dpi
    kind = "heatmaps" if "heatmaps, drawn from" in gp else "lines"
    try:
        blocks = dat_blocks(base + ".dat")
    except (OSError, ValueError) as e:
        return ["%s: cannot read %s.dat: %s" % (name, name, e)]

    panels = re.split(r"\n# ---- panel ", gp)[1:]
    if not panels:
        problems.append("%s: no panels in the script" % name)
    drawn = {}  # block index -> plot clause
    for pn in panels:
        for clause in re.findall(r"gp_dat index (\d+) ([^\\\n]*)", pn):
            drawn[int(clause[0])] = clause[1]
    npanels = len(panels)
    yranges = [re.search(r"^set yrange (.*)$", pn, re.M) for pn in panels]
    yranges = [m.group(1) if m else None for m in yranges]
    labelled = set()
    for pn, yr in zip(panels, yranges):
        yl = re.search(r"^set ylabel (.*)$", pn, re.M)
        if yl and gp_string(yl.group(1)):
            labelled.add(yr)
    for k, rows in enumerate(blocks):
        if kind == "lines":
            fin = [len(r) >= 2 and math.isfinite(r[0]) and math.isfinite(r[1]) for r in rows]
        else:
            fin = [any(math.isfinite(v) for v in r) for r in rows]
        if not any(fin):
            continue
        if k not in drawn:
            problems.append("%s: data block %d (%d rows) is never drawn" % (name, k, len(rows)))
            continue
        if kind == "lines":
            lone = any(fin[i] and not (i > 0 and fin[i - 1]) and not (i + 1 < len(fin) and fin[i + 1])
                       for i in range(len(fin)))
            if lone and "points" not in drawn[k]:
                problems.append("%s: block %d has a point with no neighbour but is drawn without "
                                "markers (%s): it is invisible" % (name, k, drawn[k].strip()[:60]))

    shared = len(set(yranges)) == 1 and None not in yranges
    for i, pn in enumerate(panels):
        label = pn.split("\n", 1)[0].strip()
        t = re.search(r"^set title (.*)$", pn, re.M)
        title = gp_string(t.group(1)) if t else ""
        if kind == "lines":
            yl = re.search(r"^set ylabel (.*)$", pn, re.M)
            if (not yl or not gp_string(yl.group(1))) and not (shared and yranges[i] in labelled):
                problems.append("%s: panel %s has no y label" % (name, label))
            panel_w = W / npanels
            tpt = title_pt
        else:
            lm = re.search(r"set lmargin at screen ([\d.]+)", pn)
            rm = re.search(r"set rmargin at screen ([\d.]+)", pn)
            panel_w = (float(rm.group(1)) - float(lm.group(1))) * W if lm and rm else W
            f = re.search(r"^set title .* font ',([\d.]+)'", pn, re.M)
            tpt = float(f.group(1)) if f else fontpt
        for line in (title or "").split("\n"):
            w = text_px(line, tpt * 4.0 / 3.0)
            if w > panel_w + 1:
                problems.append("%s: panel %s title line '%s' is %.0f px wide, its panel %.0f px"
                                % (name, label, line, w, panel_w))
    if need_image:
        png = base + ".png"
        if not os.path.isfile(png) or os.path.getsize(png) == 0:
            problems.append("%s: %s.png missing or empty" % (name, name))
    return problems


def main(argv):
    need_image = "--need-image" in argv
    dirs = [a for a in argv if not a.startswith("--")]
    if _font is None:
        print("note: DejaVu Sans not found; title widths estimated at 0.62 em per character")
    nfig = nbad = 0
    for d in dirs:
        for gp in sorted(glob.glob(os.path.join(d, "**", "*.gp"), recursive=True)):
            nfig += 1
            probs = check_figure(gp, need_image)
            if probs:
                nbad += 1
                for p in probs:
                    print("FAIL " + p)
            else:
                print("ok   " + os.path.relpath(gp[:-3]))
    if nfig == 0:
        print("FAIL no figures (.gp files) under " + " ".join(dirs))
        return 1
    print("%d figures, %d with problems" % (nfig, nbad))
    return 1 if nbad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
