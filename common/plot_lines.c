/* plot_lines.c — line plots: rows of panels of curves (plot_axes_row), and draw_axes, which the
 * animator (plot_animator.c) draws through. Calls the driver (plot.c); the map is in
 * plot_draw.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_draw.h"

/* Matplotlib's default colour cycle (tab10). */
static const char *const k_cycle[10] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                        "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                        "#bcbd22", "#17becf"};

/* A series' style: our names ("lines", "dashed", ...) or a matplotlib format string as d2l
 * passes them ('-', 'm--', 'g-.', 'r:', 'o', 'b-o'): an optional colour letter, then the line
 * or marker, then optionally " alpha=A" (matplotlib's alpha=, the opacity in (0, 1]).
 * *color gets the letter's colour (matplotlib's values) or NULL for the cycle. */
static int parse_fmt(const char *style, const char **color, double *alpha) {
  static const char letters[] = "bgrcmykw";
  static const char *const colors[] = {"#0000ff", "#008000", "#ff0000", "#00bfbf",
                                       "#bf00bf", "#bfbf00", "#000000", "#ffffff"};
  *color = NULL;
  *alpha = 1;
  char s[32] = "";
  if (style) {
    const char *a = strstr(style, " alpha=");
    size_t n = a ? (size_t)(a - style) : strlen(style);
    snprintf(s, sizeof s, "%.*s", (int)n, style);
    if (a) {
      double v = strtod(a + 7, NULL);
      if (v > 0 && v <= 1) *alpha = v;
    }
  }
  if (!*s || !strcmp(s, "lines")) return ST_LINES;
  if (!strcmp(s, "dashed")) return ST_DASHED;
  if (!strcmp(s, "points")) return ST_POINTS;
  if (!strcmp(s, "linespoints")) return ST_LINESPOINTS;
  if (!strcmp(s, "dashdot")) return ST_DASHDOT;
  if (!strcmp(s, "dotted")) return ST_DOTTED;
  const char *rest = s, *letter = strchr(letters, s[0]);
  if (letter && s[0]) {
    *color = colors[letter - letters];
    rest = s + 1;
  }
  if (!*rest || !strcmp(rest, "-")) return ST_LINES;
  if (!strcmp(rest, "--")) return ST_DASHED;
  if (!strcmp(rest, "o")) return ST_POINTS;
  if (!strcmp(rest, "-o") || !strcmp(rest, "o-")) return ST_LINESPOINTS;
  if (!strcmp(rest, "-.")) return ST_DASHDOT;
  if (!strcmp(rest, ":")) return ST_DOTTED;
  *color = NULL;
  static int warned;
  if (!warned) {
    warned = 1;
    fprintf(stderr,
            "plot: unknown series style '%s' (use lines, dashed, points, linespoints or a "
            "matplotlib format such as 'm--'); drawing lines\n",
            style);
  }
  return ST_LINES;
}

static int parse_style(const char *s) {
  const char *color;
  double alpha;
  return parse_fmt(s, &color, &alpha);
}

/* Axis range with matplotlib's 5% margins; logy works on log10 of positive values. */
static void auto_range(double lo, double hi, double want_lo, double want_hi, bool log,
                       double *out_lo, double *out_hi) {
  if (!(lo <= hi)) { /* no finite data */
    lo = log ? 1 : 0;
    hi = log ? 10 : 1;
  }
  if (log) {
    lo = log10(lo);
    hi = log10(hi);
  }
  if (hi == lo) {
    double d = fabs(lo) > 0 ? 0.05 * fabs(lo) : 0.05;
    lo -= d;
    hi += d;
  }
  double m = 0.05 * (hi - lo);
  double a = lo - m, b = hi + m;
  if (log) {
    a = pow(10, a);
    b = pow(10, b);
  }
  *out_lo = isnan(want_lo) ? a : want_lo;
  *out_hi = isnan(want_hi) ? b : want_hi;
  if (!(*out_lo < *out_hi)) { /* one limit given on the wrong side of the data */
    if (isnan(want_lo)) *out_lo = log ? *out_hi / 10 : *out_hi - 1;
    else *out_hi = log ? *out_lo * 10 : *out_lo + 1;
  }
}

/* matplotlib's loc='best' in miniature: of the key positions below (its order of preference),
 * pick the one whose box covers the fewest samples of the drawn data. Positions are fractions
 * of the plot area; kw, kh are the key's size as such fractions. */
static const char *best_key_pos(const Axes *ax, double x0, double x1, double y0, double y1,
                                double kw, double kh, long *covered, long *samples) {
  static const char *names[] = {"right top",    "left top",     "left bottom", "right bottom",
                                "right center", "left center",  "center top",  "center bottom"};
  /* key box [bx0,bx1] x [by0,by1] in axes fractions; 0.02 of padding like the legend's */
  double boxes[8][4] = {
      {1 - kw - 0.02, 1, 1 - kh - 0.02, 1}, {0, kw + 0.02, 1 - kh - 0.02, 1},
      {0, kw + 0.02, 0, kh + 0.02},         {1 - kw - 0.02, 1, 0, kh + 0.02},
      {1 - kw - 0.02, 1, 0.5 - kh / 2, 0.5 + kh / 2}, {0, kw + 0.02, 0.5 - kh / 2, 0.5 + kh / 2},
      {0.5 - kw / 2, 0.5 + kw / 2, 1 - kh - 0.02, 1}, {0.5 - kw / 2, 0.5 + kw / 2, 0, kh + 0.02}};
  long bad[8] = {0}, nsamp = 0;
  double ly0 = ax->logy ? log10(y0) : y0, ly1 = ax->logy ? log10(y1) : y1;
  if (ax->logx) x0 = log10(x0), x1 = log10(x1);
  for (int s = 0; s < ax->nseries; s++) {
    const Series *se = &ax->series[s];
    int st = parse_style(se->style);
    int sub = (st == ST_POINTS) ? 1 : 8; /* samples per segment: lines cover their spans */
    double px = NAN, py = NAN;
    for (int i = 0; i < se->n; i++) {
      double x = se->x[i], y = se->y[i];
      if (ax->logy) y = y > 0 ? log10(y) : NAN;
      if (ax->logx) x = x > 0 ? log10(x) : NAN;
      if (!isfinite(x) || !isfinite(y)) {
        px = NAN;
        continue;
      }
      double fx = (x - x0) / (x1 - x0), fy = (y - ly0) / (ly1 - ly0);
      int k0 = isfinite(px) && sub > 1 ? 1 : sub; /* first point of a run: just itself */
      for (int k = k0; k <= sub; k++) {
        double t = (double)k / sub;
        double sx = isfinite(px) ? px + t * (fx - px) : fx;
        double sy = isfinite(py) ? py + t * (fy - py) : fy;
        nsamp++;
        for (int b = 0; b < 8; b++)
          if (sx >= boxes[b][0] && sx <= boxes[b][1] && sy >= boxes[b][2] && sy <= boxes[b][3])
            bad[b]++;
      }
      px = fx;
      py = fy;
    }
  }
  int best = 0;
  for (int b = 1; b < 8; b++)
    if (bad[b] < bad[best]) best = b;
  *covered = bad[best];
  *samples = nsamp;
  return names[best];
}

/* Characters of the longest tick label over [lo, hi] (roughly: the two ends and one step). */
static int tick_chars(double lo, double hi, double step) {
  char buf[64];
  int w = 1;
  double v[3] = {ceil(lo / step) * step, floor(hi / step) * step, step};
  for (int i = 0; i < 3; i++) {
    int n = snprintf(buf, sizeof buf, "%g", fabs(v[i]) < 1e-12 * step ? 0.0 : v[i]);
    if (n > w) w = n;
  }
  return w;
}


/* Sizes of a figure's text, lines and markers: they scale with the panel, so a caller's
 * smaller figure stays balanced. */
typedef struct {
  double pw, ph;   /* one panel, pixels */
  double s;        /* scale: 2 for the default 700 x 500 panel and for d2l's figsize=(12, 3)
                    * row at 2400 x 600, so every figure's text has one size */
  double fontpt;   /* 10 pt at 100 dpi = 13.9 px; pngcairo draws 1 pt as 4/3 px */
  double lw, ps;   /* matplotlib's 1.5 pt line at 100 dpi ~ 2 px; 'o' marker at 6 pt */
} LineSizes;

static LineSizes line_sizes(int W, int H, int npanels) {
  LineSizes z;
  z.pw = (double)W / npanels;
  z.ph = H;
  z.s = fmin(z.pw / 300.0, z.ph / 250.0);
  if (z.s < 0.8) z.s = 0.8;
  if (z.s > 3) z.s = 3;
  z.fontpt = 10.0 * z.s;
  z.lw = 2.0 * z.s;
  z.ps = 1.3 * z.s;
  return z;
}

/* A base name, panels, and x and y data for every series with points; else a message. */
static bool panels_ok(const char *base, const Axes *panels, int npanels) {
  if (!base || !*base || npanels < 1 || !panels) {
    fprintf(stderr, "plot: plot_axes_row needs a file base name and at least one panel\n");
    return false;
  }
  for (int a = 0; a < npanels; a++) {
    bool bad = panels[a].nseries > 0 && !panels[a].series;
    for (int k = 0; !bad && k < panels[a].nseries; k++)
      bad = panels[a].series[k].n > 0 && (!panels[a].series[k].x || !panels[a].series[k].y);
    if (bad) {
      fprintf(stderr, "plot: panel %d of '%s' has a series without x or y data\n", a + 1, base);
      return false;
    }
  }
  return true;
}

/* BASE.dat: a header listing the blocks, then one block per (panel, series). */
static int write_lines_dat(const Paths *p, const Axes *panels, int npanels, const char *what) {
  FILE *f = open_w(p->dat);
  if (!f) return -1;
  fprintf(f, "# %s.dat — data of %s.png (%s).\n", p->name, p->name, what);
  fputs("# One block per (panel, series), blocks separated by two blank lines; gnuplot's\n"
        "# 'index k' selects block k. Columns: x y (NaN = no point).\n",
        f);
  int blk = 0;
  for (int a = 0; a < npanels; a++)
    for (int s2 = 0; s2 < panels[a].nseries; s2++, blk++) {
      const Series *se = &panels[a].series[s2];
      fprintf(f, "#   index %d: panel %d ", blk, a + 1);
      if (has_label(panels[a].title)) {
        fputc('"', f);
        put_comment_text(f, panels[a].title);
        fputs("\" ", f);
      }
      fprintf(f, "series %d", s2 + 1);
      if (has_label(se->label)) {
        fputs(" \"", f);
        put_comment_text(f, se->label);
        fputc('"', f);
      }
      fprintf(f, ", %d points\n", se->n > 0 ? se->n : 0);
    }
  blk = 0;
  for (int a = 0; a < npanels; a++)
    for (int s2 = 0; s2 < panels[a].nseries; s2++, blk++) {
      const Series *se = &panels[a].series[s2];
      /* a comment line opens every block, so an empty one still counts as a block */
      fprintf(f, "%s# index %d: panel %d series %d\n", blk ? "\n\n" : "\n", blk, a + 1, s2 + 1);
      for (int i = 0; i < se->n; i++) {
        put_num(f, se->x[i]);
        fputc(' ', f);
        put_num(f, se->y[i]);
        fputc('\n', f);
      }
    }
  return close_w(f, p->dat);
}

/* A panel's axis ranges (matplotlib's margins around its finite data, or the caller's), and
 * its labelled series: how many, the longest label's length. */
typedef struct {
  double x0, x1, y0, y1;
  int nlab, maxlab;
} PanelRange;

static PanelRange panel_range(const Axes *ax) {
  PanelRange r = {0};
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (int s2 = 0; s2 < ax->nseries; s2++) {
    const Series *se = &ax->series[s2];
    for (int i = 0; i < se->n; i++) {
      double x = se->x[i], y = se->y[i];
      if (!isfinite(x) || !isfinite(y) || (ax->logy && y <= 0) || (ax->logx && x <= 0)) continue;
      xlo = fmin(xlo, x);
      xhi = fmax(xhi, x);
      ylo = fmin(ylo, y);
      yhi = fmax(yhi, y);
    }
    if (has_label(se->label) && se->n > 0) {
      r.nlab++;
      int l = (int)strlen(se->label);
      if (l > r.maxlab) r.maxlab = l;
    }
  }
  auto_range(xlo, xhi, ax->xmin, ax->xmax, ax->logx, &r.x0, &r.x1);
  if (ax->logx && !(r.x0 > 0)) r.x0 = r.x1 / 1e3;
  auto_range(ylo, yhi, ax->ymin, ax->ymax, ax->logy, &r.y0, &r.y1);
  if (ax->logy && !(r.y0 > 0)) r.y0 = r.y1 / 1e3; /* a log axis cannot start at or below 0 */
  return r;
}

/* The panel's title, axis labels, ranges and margins. */
static void put_panel_frame(FILE *f, const Axes *ax, const PanelRange *r) {
  fputs("set title ", f);
  put_q(f, has_label(ax->title) ? ax->title : "");
  fputs(" font gp_title_font\nset xlabel ", f);
  put_q(f, has_label(ax->xlabel) ? ax->xlabel : "");
  fputs(" offset 0,0.45\nset ylabel ", f);
  put_q(f, has_label(ax->ylabel) ? ax->ylabel : "");
  /* the log switch goes before the range: a range below 0 on a still-log axis warns */
  fprintf(f, "\n%s\n%s\nset xrange [%.10g:%.10g]\nset yrange [%.10g:%.10g]\n",
          ax->logx ? "set logscale x 2" : "unset logscale x",
          ax->logy ? "set logscale y" : "unset logscale y", r->x0, r->x1, r->y0, r->y1);
  /* margins in character heights: gnuplot's defaults leave a wide band above the title */
  fprintf(f, "set tmargin %.1f\nset bmargin %.1f\nset rmargin 2\n",
          has_label(ax->title) ? 2.6 : 1.0, has_label(ax->xlabel) ? 3.1 : 1.8);
}

/* Tick spacing like matplotlib's MaxNLocator: at most one interval per 3 em of x axis and per
 * 2 em of y axis (nicer steps first), fewer when the x labels are long. */
static void put_panel_ticks(FILE *f, const Axes *ax, const PanelRange *r, const LineSizes *z) {
  double x0 = r->x0, x1 = r->x1, y0 = r->y0, y1 = r->y1;
  double em = z->fontpt * 4.0 / 3.0, plot_w = 0.8 * z->pw, plot_h = 0.64 * z->ph;
  int xb = (int)(plot_w / (3 * em)), yb = (int)(plot_h / (1.8 * em));
  if (xb < 2) xb = 2;
  if (yb < 2) yb = 2;
  double xs = nice_step(x0, x1, xb + 1);
  for (int b = xb; b >= 2; b--) {
    xs = nice_step(x0, x1, b + 1);
    if ((x1 - x0) / xs * (tick_chars(x0, x1, xs) + 1.5) * 0.62 * em <= plot_w) break;
  }
  if (ax->logx) { /* every power of two in range, labelled as a plain number */
    fputs("set xtics (", f);
    int nt = 0;
    for (double t = exp2(ceil(log2(x0))); t <= x1 * (1 + 1e-9) && nt < 40; t *= 2)
      fprintf(f, "%s\"%g\" %.10g", nt++ ? ", " : "", t, t);
    fputs(")\nset mxtics default\n", f);
  } else {
    fprintf(f, "set xtics %.10g\n", xs);
  }
  double lst = ax->logy ? nice_step(y0, y1, yb + 1) : 0;
  double lt0 = ax->logy ? ceil(y0 / lst) * lst : 0;
  if (ax->logy && log10(y1 / y0) < 1.2 && lt0 <= y1) {
    /* under about a decade gnuplot would label one tick or none: label nice values */
    fputs("set ytics (", f);
    int nt = 0;
    for (double t = lt0; t <= y1 * (1 + 1e-9) && nt < 20; t += lst)
      fprintf(f, "%s%.10g", nt++ ? ", " : "", t);
    fputs(")\nset mytics default\n", f);
  } else if (ax->logy) {
    fputs("set ytics autofreq\nset mytics 10\n", f);
  } else
    fprintf(f, "set ytics %.10g\nset mytics default\n", nice_step(y0, y1, yb + 1));
}

/* The legend: inside where it hides the fewest points (matplotlib's loc='best'), outside on the
 * right where every place inside would hide some; none without labelled series. */
static void put_panel_key(FILE *f, const Axes *ax, const PanelRange *r, const LineSizes *z) {
  if (r->nlab == 0) {
    fputs("unset key\n", f);
    return;
  }
  /* key size as a fraction of the plot area (char ~0.6 em; plot area ~80% x 75%) */
  double em = z->fontpt * 4.0 / 3.0;
  double kw = (r->maxlab * 0.6 * em + 4.8 * em) / (0.75 * z->pw);
  double kh = (r->nlab * 1.3 * em + 1.0 * em) / (0.6 * z->ph);
  long covered, samples;
  const char *pos = best_key_pos(ax, r->x0, r->x1, r->y0, r->y1, fmin(kw, 0.9), fmin(kh, 0.9),
                                 &covered, &samples);
  /* where every inside place would hide more than 1% of the curves (periodic curves fill
   * the plot), the legend goes outside on the right, off the data */
  if (covered > samples / 100 + 1)
    fputs("set key outside right top\nunset rmargin\n", f);
  else
    fprintf(f, "set key inside %s\n", pos);
}

/* Whether the series has a point with no finite neighbour: a line draws nothing there. */
static bool has_isolated_point(const Series *se) {
  for (int i = 0; i < se->n; i++) {
    bool fin = isfinite(se->x[i]) && isfinite(se->y[i]);
    bool prev = i > 0 && isfinite(se->x[i - 1]) && isfinite(se->y[i - 1]);
    bool next = i + 1 < se->n && isfinite(se->x[i + 1]) && isfinite(se->y[i + 1]);
    if (fin && !prev && !next) return true;
  }
  return false;
}

/* The `with ...` of style st; marks: a line style that also marks its points. */
static void put_with(FILE *f, int st, bool marks, const LineSizes *z) {
  double lw = z->lw, ps = z->ps;
  const char *with = marks ? "linespoints" : "lines";
  char mk[48] = "";
  if (marks) snprintf(mk, sizeof mk, " pt 7 ps %.2f", ps);
  switch (st) {
    case ST_POINTS:
      fprintf(f, " with points pt 7 ps %.2f", ps);
      break;
    case ST_LINESPOINTS:
      fprintf(f, " with linespoints pt 7 ps %.2f lw %.2f dt solid", ps, lw);
      break;
    case ST_DASHED: /* matplotlib '--': 3.7 on, 1.6 off, in line widths */
      fprintf(f, " with %s%s lw %.2f dt (%.1f,%.1f)", with, mk, lw, 3.7 * lw, 1.6 * lw);
      break;
    case ST_DASHDOT: /* '-.' */
      fprintf(f, " with %s%s lw %.2f dt (%.1f,%.1f,%.1f,%.1f)", with, mk, lw, 6.4 * lw,
              1.6 * lw, 1.0 * lw, 1.6 * lw);
      break;
    case ST_DOTTED: /* ':' */
      fprintf(f, " with %s%s lw %.2f dt (%.1f,%.1f)", with, mk, lw, 1.0 * lw, 1.65 * lw);
      break;
    default:
      fprintf(f, " with %s%s lw %.2f dt solid", with, mk, lw);
  }
}

/* The panel's plot command: one clause per series with a point to draw; the panel's series are
 * the data blocks from blk0 on. */
static void put_panel_plot(FILE *f, const Axes *ax, const PanelRange *r, int blk0,
                           const SeriesLook *looks, int nlooks, const LineSizes *z) {
  fputs("plot ", f);
  int nplotted = 0, ncycle = 0;
  for (int s2 = 0; s2 < ax->nseries; s2++) {
    const Series *se = &ax->series[s2];
    int finite = 0;
    for (int i = 0; i < se->n && !finite; i++)
      finite = isfinite(se->x[i]) && isfinite(se->y[i]) && (!ax->logy || se->y[i] > 0) &&
               (!ax->logx || se->x[i] > 0);
    if (!finite) continue; /* gnuplot warns about blocks with no valid point */
    const SeriesLook *lk = nlooks > 0 ? &looks[s2 % nlooks] : NULL;
    const char *fmt_col;
    double alpha;
    int st = parse_fmt(se->style, &fmt_col, &alpha);
    if (lk && lk->style >= 0) st = lk->style;
    /* like matplotlib, a format's own colour does not use up a colour of the cycle */
    const char *col = lk && lk->color ? lk->color : fmt_col ? fmt_col : k_cycle[ncycle++ % 10];
    char argb[16];
    if (alpha < 1) { /* gnuplot's #AARRGGBB: AA is the transparency */
      snprintf(argb, sizeof argb, "#%02x%.6s", (int)lround(255 * (1 - alpha)), col + 1);
      col = argb;
    }
    /* a point with no finite neighbour draws no line: give line styles a marker there, as
     * an isolated value (one epoch, one validation) must still show */
    bool marks = st != ST_POINTS && st != ST_LINESPOINTS && has_isolated_point(se);
    fprintf(f, "%sgp_dat index %d using 1:2", nplotted ? ", \\\n     " : "", blk0 + s2);
    put_with(f, st, marks, z);
    fprintf(f, " lc rgb '%s' ", col);
    if (has_label(se->label)) {
      fputs("title ", f);
      put_q(f, se->label);
    } else {
      fputs("notitle", f);
    }
    nplotted++;
  }
  /* an empty panel still shows its frame, labels and limits */
  if (!nplotted) fprintf(f, "%.10g notitle lc rgb '#ffffff'", r->y1 + (r->y1 - r->y0) * 10);
  fputs("\n", f);
}

/* BASE.gp: matplotlib's look, then each panel's frame, ticks, legend and curves. */
static int write_lines_gp(const Paths *p, const Axes *panels, int npanels, int W, int H,
                          const SeriesLook *looks, int nlooks, const char *what) {
  LineSizes z = line_sizes(W, H, npanels);
  FILE *f = open_w(p->gp);
  if (!f) return -1;
  put_preamble(f, p, what, W, H, z.fontpt);
  fprintf(f,
          "# matplotlib's look: full frame, outward ticks, light grid, tab10 colours\n"
          "set border 15 lw %.2f lc rgb '#000000'\n"
          "set tics out nomirror scale %.2f\n"
          "set grid xtics ytics lt 1 lw %.2f lc rgb '#b0b0b0' dt 1\n"
          "set key opaque box lc rgb '#cccccc' lw %.2f reverse Left samplen 2 spacing 1.1 "
          "width 1 height 0.6\n"
          "set format x '%%g'\nset format y '%%g'\n",
          1.1 * z.s, 0.8, 1.0 * z.s, 1.0 * z.s);
  if (npanels > 1) fprintf(f, "set multiplot layout 1,%d\n", npanels);
  int blk = 0;
  for (int a = 0; a < npanels; a++) {
    const Axes *ax = &panels[a];
    fprintf(f, "\n# ---- panel %d\n", a + 1);
    PanelRange r = panel_range(ax);
    put_panel_frame(f, ax, &r);
    put_panel_ticks(f, ax, &r, &z);
    put_panel_key(f, ax, &r, &z);
    put_panel_plot(f, ax, &r, blk, looks, nlooks, &z);
    blk += ax->nseries;
  }
  if (npanels > 1) fputs("unset multiplot\n", f);
  fputs("set output\n", f);
  return close_w(f, p->gp);
}

int draw_axes(const char *base, const Axes *panels, int npanels, int width, int height,
              const SeriesLook *looks, int nlooks, const char *what) {
  if (!panels_ok(base, panels, npanels)) return -1;
  Paths p;
  paths_init(&p, base);
  /* 3.5 x 2.5 in per panel at 100 dpi, drawn at 2x */
  int W = width > 0 ? width : 700 * npanels;
  int H = height > 0 ? height : 500;
  int rc = -1;
  if (ensure_dir(&p) == 0 && write_lines_dat(&p, panels, npanels, what) == 0 &&
      write_lines_gp(&p, panels, npanels, W, H, looks, nlooks, what) == 0)
    rc = render(&p);
  paths_free(&p);
  return rc;
}

int plot_axes_row(const char *base, const Axes *panels, int npanels, int width, int height) {
  return draw_axes(base, panels, npanels, width, height, NULL, 0, "plot_axes_row");
}
