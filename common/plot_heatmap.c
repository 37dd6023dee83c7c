/* plot_heatmap.c — grids of heatmaps with one shared colour bar, as d2l's show_heatmaps draws
 * attention weights (plot_heatmaps, plot_heatmaps_cb). Calls the driver (plot.c); the map is
 * in plot_draw.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_draw.h"
#include "util.h"

/* matplotlib's Reds / Blues (ColorBrewer 9-class sequential) as gnuplot palettes. */
static const char *const k_reds[9] = {"#fff5f0", "#fee0d2", "#fcbba1", "#fc9272", "#fb6a4a",
                                      "#ef3b2c", "#cb181d", "#a50f15", "#67000d"};
static const char *const k_blues[9] = {"#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6",
                                       "#4292c6", "#2171b5", "#08519c", "#08306b"};

/* A 1-2-5 tick step for n cells that gives at most 6 ticks, and no more than fit along px
 * pixels when each tick label needs label_px (so small image panels do not run labels together). */
/* matplotlib's 'gray' (black to white), for images as d2l's show_images draws them */
static const char *const k_grays[9] = {"#000000", "#202020", "#404040", "#606060", "#808080",
                                       "#9f9f9f", "#bfbfbf", "#dfdfdf", "#ffffff"};

static int tick_step(int n, double px, double label_px) {
  int maxt = label_px > 0 ? (int)(px / label_px) : 6;
  if (maxt < 2) maxt = 2;
  if (maxt > 6) maxt = 6;
  int steps[] = {1, 2, 5};
  for (long mag = 1;; mag *= 10)
    for (int i = 0; i < 3; i++) {
      long st = steps[i] * mag;
      if ((n - 1) / st + 1 <= maxt || st > 1000000) return (int)st;
    }
}

int plot_heatmaps(const char *base, const HeatMap *maps, int nrows, int ncols,
                  const char *xlabel, const char *ylabel, const char *palette, int width,
                  int height) {
  return plot_heatmaps_cb(base, maps, nrows, ncols, xlabel, ylabel, NULL, palette, width, height);
}


/* One heatmap figure: what the caller asked for, and the layout computed from it (pixels at
 * 2x, matplotlib's 100 dpi). */
typedef struct {
  /* the call */
  const HeatMap *maps;
  int nrows, ncols, np;
  const char *xlabel, *ylabel, *cblabel;
  int width, height; /* 0: free */
  const char *const *pal;
  bool images; /* plot_images: gray, no ticks, no colour bar (d2l's show_images) */
  /* the data */
  int mr, mc;    /* the largest matrix: panels share one cell size */
  double lo, hi; /* the shared colour range */
  /* text */
  double s, fontpt, em;
  bool any_title;
  int cbchars;        /* characters of the longest colour-bar label */
  double xw, yw;      /* widths of the axis labels */
  char (*wrapped)[256]; /* each title, wrapped to its panel */
  double title_scale; /* the titles' font, as a fraction of the text's */
  /* layout */
  double left, bottom, title_h, hgap, vgap, pad, cb_gap, cb_right;
  double cell, panel_w, panel_h, area_h, span_h;
  double cb_h, cb_w, cb_top, cb_x, cb_step, y_top, x_off;
  int W, H;
} Heat;

/* The grid's matrices (the largest's size into h), the palette; false with a message when a
 * matrix is missing. */
static bool heat_check(const char *base, Heat *h, const char *palette) {
  if (!base || !*base || !h->maps || h->nrows < 1 || h->ncols < 1) {
    fprintf(stderr, "plot: plot_heatmaps needs a file base name and a grid of at least 1x1\n");
    return false;
  }
  h->np = h->nrows * h->ncols;
  for (int k = 0; k < h->np; k++) {
    const HeatMap *m = &h->maps[k];
    if (!m->m || m->rows < 1 || m->cols < 1) {
      fprintf(stderr, "plot: heatmap %d of '%s' has no data (%d x %d)\n", k, base, m->rows,
              m->cols);
      return false;
    }
    if (m->rows > h->mr) h->mr = m->rows;
    if (m->cols > h->mc) h->mc = m->cols;
  }
  h->pal = k_reds;
  if (h->images) {
    h->pal = k_grays;
  } else if (palette && !strcmp(palette, "Blues")) {
    h->pal = k_blues;
  } else if (palette && strcmp(palette, "Reds") != 0) {
    fprintf(stderr, "plot: unknown palette '%s' for '%s' (use \"Reds\" or \"Blues\"); using Reds\n",
            palette, base);
  }
  return true;
}

/* The colour range shared by all panels: their finite values, widened when they are all one. */
static void heat_color_range(Heat *h) {
  double lo = INFINITY, hi = -INFINITY;
  for (int k = 0; k < h->np; k++)
    for (long i = 0; i < (long)h->maps[k].rows * h->maps[k].cols; i++) {
      double v = h->maps[k].m[i];
      if (!isfinite(v)) continue;
      lo = fmin(lo, v);
      hi = fmax(hi, v);
    }
  if (!(lo <= hi)) {
    lo = 0;
    hi = 1;
  } else if (lo == hi) {
    double d = lo != 0 ? 0.1 * fabs(lo) : 0.5;
    lo -= d;
    hi += d;
  }
  h->lo = lo;
  h->hi = hi;
}

/* Around the panels: y tick labels and label on the left, x ones below, a title line above
 * every row, the colour bar and its labels on the right. */
static void heat_margins(Heat *h) {
  h->s = 2.0;
  h->fontpt = 10.0 * h->s;
  h->em = h->fontpt * 4.0 / 3.0;
  const double em = h->em;
  for (int k = 0; k < h->np; k++) h->any_title |= has_label(h->maps[k].title);
  int ydigits = 1;
  for (int v = h->mr - 1; v >= 10; v /= 10) ydigits++;
  h->cbchars = 1;
  char buf[64];
  double cv[4] = {h->lo, h->hi, (h->hi - h->lo) / 4, h->lo + (h->hi - h->lo) / 2};
  for (int i = 0; i < 4; i++) {
    int n = snprintf(buf, sizeof buf, "%g", cv[i]);
    if (n > h->cbchars) h->cbchars = n;
  }
  h->xw = text_width(h->xlabel, em);
  h->yw = text_width(h->ylabel, em);
  h->left = (has_label(h->ylabel) ? 2.1 * em : 0.3 * em) + (ydigits * 0.62 + 0.9) * em;
  h->bottom = (has_label(h->xlabel) ? 1.6 * em : 0.2 * em) + 2.3 * em;
  h->title_h = h->any_title ? 1.6 * em : 0.4 * em;
  h->hgap = 0.6 * em;
  h->vgap = 1.1 * em;
  h->pad = 0.7 * em;
  h->cb_gap = 0.9 * em;
  h->cb_right = (h->cbchars * 0.62 + 1.2) * em;
  if (has_label(h->cblabel)) h->cb_right += 1.7 * em; /* the bar's label, rotated, beside its ticks */
  if (h->images) { /* no tick labels, no colour bar: the panels and their titles only */
    h->left = h->bottom = h->pad = 0.4 * em;
    h->cb_gap = h->cb_right = 0;
  }
}

/* The canvas height besides the cells. */
static double heat_fixed_h(const Heat *h) {
  return h->pad + h->nrows * h->title_h + (h->nrows - 1) * h->vgap + h->bottom;
}

/* Cell size: a panel of about 300 x 300 px (d2l's 2.5 in figure at 2x), its long side at most
 * 450 px, the whole canvas at most ~1900 px wide; a caller's size overrides. */
static void heat_cell(Heat *h) {
  int mr = h->mr, mc = h->mc;
  double cell = sqrt(90000.0 / ((double)mr * mc));
  if (cell * (mr > mc ? mr : mc) > 450) cell = 450.0 / (mr > mc ? mr : mc);
  double fixed_w = h->left + (h->ncols - 1) * h->hgap + h->cb_gap +
                   (h->images ? 0 : 1.0 * h->em) + h->cb_right + h->pad;
  if (fixed_w + h->ncols * mc * cell > 1900) cell = (1900 - fixed_w) / (h->ncols * mc);
  if (h->width > 0) cell = (h->width - fixed_w) / (h->ncols * mc);
  if (h->height > 0) {
    double c2 = (h->height - heat_fixed_h(h)) / (h->nrows * mr);
    if (h->width <= 0 || c2 < cell) cell = c2;
  }
  h->cell = cell < 1 ? 1 : cell;
}

/* The widest unwrapped line of any title at the current title font. */
static double heat_widest_title(const Heat *h) {
  double unwrapped = 0;
  for (int k = 0; k < h->np; k++)
    for (const char *t = h->maps[k].title; t && *t;) {
      size_t len = strcspn(t, "\n");
      unwrapped = fmax(unwrapped, text_width_n(t, len, h->title_scale * h->em));
      t += len + (t[len] == '\n');
    }
  return unwrapped;
}

/* One round of fitting the titles: wrap them to the panel width; a taller title band, wider
 * cells or a smaller title font where they do not fit. Returns whether anything changed. */
static bool heat_fit_titles_once(Heat *h) {
  double pw = h->mc * h->cell, widest = 0;
  int lines = 1;
  for (int k = 0; k < h->np; k++) {
    if (!has_label(h->maps[k].title)) continue;
    double w;
    int l = wrap_title(h->maps[k].title, h->title_scale * h->em, pw, h->wrapped[k],
                       sizeof h->wrapped[k], &w);
    if (l > lines) lines = l;
    if (w > widest) widest = w;
  }
  double want_h = (1.2 * lines + 0.15) * h->title_scale * h->em;
  bool changed = false;
  if (want_h > h->title_h + 0.5) {
    h->title_h = want_h;
    changed = true;
    if (h->height > 0) { /* fixed height: the taller title band comes out of the cells */
      double c2 = (h->height - heat_fixed_h(h)) / (h->nrows * h->mr);
      if (c2 < h->cell) h->cell = c2 < 1 ? 1 : c2;
    }
  }
  if (widest > h->mc * h->cell + 0.5) { /* the cells as the title band may have left them */
    changed = true;
    if (h->width <= 0 && h->height <= 0) h->cell = (widest + 2) / h->mc;
    else if (h->title_scale > 0.6) /* no smaller than 0.6 of the text: beyond, it stays wide */
      h->title_scale = fmax(0.6, h->title_scale * (h->mc * h->cell) / widest * 0.98);
  }
  return changed;
}

/* Titles no wider than their panel: wrapped at spaces (a caller's '\n' always breaks); a word
 * wider than the panel widens the cells where the caller left the width free, else the titles'
 * font shrinks. More lines make the title band taller (and, at a fixed height, the cells
 * smaller, so wrap again). */
static void heat_fit_titles(Heat *h) {
  h->title_scale = 1.0;
  for (int iter = 0; h->any_title && iter < 5; iter++) {
    /* a title at most 25% too wide for a panel of a fixed size is set smaller, not broken */
    double unwrapped = heat_widest_title(h), pw = h->mc * h->cell;
    if ((h->width > 0 || h->height > 0) && unwrapped > pw && unwrapped * 0.8 <= pw &&
        h->title_scale > 0.8) {
      h->title_scale *= pw / unwrapped * 0.98;
      continue;
    }
    if (!heat_fit_titles_once(h)) break;
  }
}

/* Where the panels and the colour bar go, and the canvas size. */
static void heat_place(Heat *h) {
  const double em = h->em;
  h->panel_w = h->mc * h->cell;
  h->panel_h = h->mr * h->cell;
  /* an x label wider than its panel needs room beside it */
  if (h->xw > h->panel_w) {
    if (h->ncols > 1 && h->hgap < h->xw - h->panel_w + 0.8 * em)
      h->hgap = h->xw - h->panel_w + 0.8 * em;
    if (h->left < (h->xw - h->panel_w) / 2 + h->pad) h->left = (h->xw - h->panel_w) / 2 + h->pad;
  }
  h->area_h = h->nrows * (h->title_h + h->panel_h) + (h->nrows - 1) * h->vgap; /* titles + panels */
  h->span_h = h->area_h - h->title_h; /* top of the first panel to bottom of the last */
  /* the colour bar: 80% of the panels' height, at least 7 lines even beside a 1 x 10 strip */
  h->cb_h = fmax(0.8 * h->span_h, 7 * em);
  h->cb_w = fmax(h->cb_h / 20, 1.0 * em);
  if (h->yw > h->span_h && h->yw > h->cb_h) h->cb_h = fmin(h->yw, 12 * em);
  if (h->images) h->cb_h = h->span_h, h->cb_w = 0;
  h->y_top = h->pad; /* top of the first title line */
  h->cb_top = h->pad + h->title_h + (h->span_h - h->cb_h) / 2;
  if (h->cb_h > h->span_h) { /* panels centered on the bar */
    h->cb_top = h->pad;
    h->y_top = h->pad + (h->cb_h - h->span_h) / 2 - h->title_h;
    if (h->y_top < h->pad) {
      h->cb_top += h->pad - h->y_top;
      h->y_top = h->pad;
    }
  }
  double nat_w = h->left + h->ncols * h->panel_w + (h->ncols - 1) * h->hgap + h->cb_gap + h->cb_w +
                 h->cb_right + h->pad;
  double nat_h = fmax(h->y_top + h->area_h + h->bottom, h->cb_top + h->cb_h + h->pad);
  h->W = h->width > 0 ? h->width : (int)ceil(nat_w);
  h->H = h->height > 0 ? h->height : (int)ceil(nat_h);
  h->x_off = fmax(0, (h->W - nat_w) / 2);
  double y_off = fmax(0, (h->H - nat_h) / 2);
  h->y_top += y_off;
  h->cb_top += y_off;
  /* colour bar ticks: one per ~1.4 lines of its height (6 at most), at nice values */
  int cb_bins = (int)(h->cb_h / (1.4 * em));
  h->cb_step = nice_step(h->lo, h->hi, (cb_bins < 2 ? 2 : cb_bins > 6 ? 6 : cb_bins) + 1);
  h->cb_x = h->x_off + h->left + h->ncols * h->panel_w + (h->ncols - 1) * h->hgap + h->cb_gap;
}

/* BASE.dat: a header listing the panels, then one matrix per panel. */
static int write_heat_dat(const Paths *p, const Heat *h) {
  FILE *f = open_w(p->dat);
  if (!f) return -1;
  fprintf(f, "# %s.dat — data of %s.png (plot_heatmaps, %d x %d panels).\n", p->name, p->name,
          h->nrows, h->ncols);
  fputs("# One matrix per panel, blocks separated by two blank lines ('index k' = panel k,\n"
        "# row-major over the grid). Each line is one matrix row, row 0 first (drawn at the\n"
        "# top); gnuplot reads a block with 'matrix': x = column, y = row. NaN = no value.\n",
        f);
  for (int k = 0; k < h->np; k++) {
    const HeatMap *m = &h->maps[k];
    fprintf(f, "#   index %d: panel (%d, %d) %d x %d", k, k / h->ncols, k % h->ncols, m->rows,
            m->cols);
    if (has_label(m->title)) {
      fputs(" \"", f);
      put_comment_text(f, m->title);
      fputc('"', f);
    }
    fputc('\n', f);
  }
  for (int k = 0; k < h->np; k++) {
    fprintf(f, "%s# index %d\n", k ? "\n\n" : "\n", k);
    for (int r = 0; r < h->maps[k].rows; r++) {
      const float *row = h->maps[k].m + (long)r * h->maps[k].cols;
      for (int c = 0; c < h->maps[k].cols; c++) {
        if (c) fputc(' ', f);
        put_num(f, row[c]);
      }
      fputc('\n', f);
    }
  }
  return close_w(f, p->dat);
}

/* The settings every panel shares: palette, colour range, frame and ticks, and the labels of
 * the colour bar and the y axis, placed by hand once for the whole grid. */
static void put_heat_settings(FILE *f, const Heat *h) {
  const double em = h->em;
  fputs("set palette defined (", f);
  for (int i = 0; i < 9; i++) fprintf(f, "%s%d '%s'", i ? ", " : "", i, h->pal[i]);
  fprintf(f,
          ")  # matplotlib's %s\n"
          "set cbrange [%.10g:%.10g]\n"
          "set border 15 lw %.2f lc rgb '#000000'\n"
          "set tics out nomirror scale 0.8 front\n"
          "set cbtics %.10g out nomirror scale 0.8\n"
          "set format x '%%g'\nset format y '%%g'\nset format cb '%%g'\n"
          "unset key\nunset grid\n",
          h->pal == k_blues ? "Blues" : h->pal == k_grays ? "gray" : "Reds", h->lo, h->hi,
          1.1 * h->s, h->cb_step);
  if (has_label(h->cblabel)) { /* placed by hand: gnuplot's cblabel ignores a user colorbox's
                                * tick labels and runs into them */
    fputs("set label 998 ", f);
    put_q(f, h->cblabel);
    fprintf(f, " at screen %.5f, screen %.5f center rotate by 90 front\n",
            (h->cb_x + h->cb_w + (h->cbchars * 0.62 + 1.6) * em) / h->W,
            1 - (h->cb_top + h->cb_h / 2) / h->H);
  }
  fputs("set multiplot\n", f);
  /* One y label for the whole grid, centred on the panels at the left edge: gnuplot's own
   * per-panel ylabel runs into the tick labels and the next row when panels are short. */
  if (has_label(h->ylabel)) {
    fputs("set label 999 ", f);
    put_q(f, h->ylabel);
    fprintf(f, " at screen %.5f, screen %.5f center rotate by 90 front\n",
            (h->x_off + 0.8 * em) / h->W, 1 - (h->y_top + h->title_h + h->span_h / 2) / h->H);
  }
}

/* Panel k's ticks, tick labels and axis labels: like sharex/sharey subplots, labels only on the
 * outer panels. */
static void put_heat_axes(FILE *f, const Heat *h, int k, double w, double ht) {
  const HeatMap *hm = &h->maps[k];
  int r = k / h->ncols, c = k % h->ncols;
  fprintf(f, "set xrange [-0.5:%.1f]\nset yrange [%.1f:-0.5]\n", hm->cols - 0.5,
          hm->rows - 0.5);
  if (h->images) { /* the book's show_images hides both axes */
    fputs("unset xtics\nunset ytics\nunset xlabel\nunset ylabel\n", f);
    return;
  }
  int xdig = 1;
  for (int v = hm->cols - 1; v >= 10; v /= 10) xdig++;
  fprintf(f, "set xtics 0,%d,%d\nset ytics 0,%d,%d\n",
          tick_step(hm->cols, w, (xdig * 0.62 + 1.0) * h->em), hm->cols - 1,
          tick_step(hm->rows, ht, 1.4 * h->em), hm->rows - 1);
  bool bottom_row = r == h->nrows - 1, left_col = c == 0;
  fputs(bottom_row ? "set format x '%g'\n" : "set format x ''\n", f);
  fputs(left_col ? "set format y '%g'\n" : "set format y ''\n", f);
  fputs("set xlabel ", f);
  put_q(f, bottom_row && has_label(h->xlabel) ? h->xlabel : "");
  fputs(" offset 0,0.2\nunset ylabel\n", f);
}

/* Panel k: its place on the canvas, title, axes, and the image (the colour bar with the last). */
static void put_heat_panel(FILE *f, const Heat *h, int k) {
  const HeatMap *hm = &h->maps[k];
  if (k == 1 && has_label(h->ylabel)) fputs("unset label 999\n", f);
  if (k == 1 && has_label(h->cblabel)) fputs("unset label 998\n", f);
  int r = k / h->ncols, c = k % h->ncols;
  double x0 = h->x_off + h->left + c * (h->panel_w + h->hgap);
  double ytop = h->y_top + r * (h->title_h + h->panel_h + h->vgap) + h->title_h;
  /* this panel's own extent inside its slot, centered when smaller than the largest */
  double w = hm->cols * h->cell, ht = hm->rows * h->cell;
  double px0 = x0 + (h->panel_w - w) / 2, ptop = ytop + (h->panel_h - ht) / 2;
  fprintf(f, "\n# ---- panel (%d, %d)\n", r, c);
  fprintf(f,
          "set lmargin at screen %.5f\nset rmargin at screen %.5f\n"
          "set tmargin at screen %.5f\nset bmargin at screen %.5f\n",
          px0 / h->W, (px0 + w) / h->W, 1 - ptop / h->H, 1 - (ptop + ht) / h->H);
  fputs("set title ", f);
  put_qq(f, has_label(hm->title) ? h->wrapped[k] : "");
  if (h->title_scale < 1) fprintf(f, " font ',%.1f'", h->fontpt * h->title_scale);
  fprintf(f, " offset 0,-0.4\n");
  put_heat_axes(f, h, k, w, ht);
  if (k == h->np - 1 && !h->images)
    fprintf(f, "set colorbox user origin screen %.5f,%.5f size screen %.5f,%.5f bdefault\n",
            h->cb_x / h->W, 1 - (h->cb_top + h->cb_h) / h->H, h->cb_w / h->W, h->cb_h / h->H);
  else
    fputs("unset colorbox\n", f);
  if (hm->rows >= 2 && hm->cols >= 2) {
    fprintf(f, "plot gp_dat index %d matrix using 1:2:3 with image\n", k);
  } else {
    /* gnuplot draws no image for a single row or column ('with image' wants 2 x 2, 'with
     * image pixels' silently draws nothing), so cells become filled boxes that overlap
     * their neighbours by ~1 px to leave no antialiasing seams; the frame clips them. */
    double d = 0.5 + fmin(0.1, 0.75 / h->cell);
    fprintf(f,
            "plot gp_dat index %d matrix using 1:2:(%.4f):(%.4f):3 with boxxyerror "
            "fs solid 1.0 noborder lc palette z\n",
            k, d, d);
  }
}

/* BASE.gp: the shared settings, then every panel. */
static int write_heat_gp(const Paths *p, const Heat *h) {
  FILE *f = open_w(p->gp);
  if (!f) return -1;
  put_preamble(f, p, "heatmaps", h->W, h->H, h->fontpt);
  put_heat_settings(f, h);
  for (int k = 0; k < h->np; k++) {
    bool any = !h->images; /* an image with no value (a grid's filler) is left out, frame too */
    for (long i = 0; !any && i < (long)h->maps[k].rows * h->maps[k].cols; i++)
      any = isfinite(h->maps[k].m[i]);
    if (any) put_heat_panel(f, h, k);
  }
  fputs("unset multiplot\nset output\n", f);
  return close_w(f, p->gp);
}

static int heat_plot(Heat h, const char *base, const char *palette);

int plot_heatmaps_cb(const char *base, const HeatMap *maps, int nrows, int ncols,
                     const char *xlabel, const char *ylabel, const char *cblabel,
                     const char *palette, int width, int height) {
  Heat h = {.maps = maps, .nrows = nrows, .ncols = ncols, .xlabel = xlabel, .ylabel = ylabel,
            .cblabel = cblabel, .width = width, .height = height};
  return heat_plot(h, base, palette);
}

int plot_images(const char *base, const HeatMap *images, int nrows, int ncols, int width,
                int height) {
  Heat h = {.maps = images, .nrows = nrows, .ncols = ncols, .width = width, .height = height,
            .images = true};
  return heat_plot(h, base, NULL);
}

static int heat_plot(Heat h, const char *base, const char *palette) {
  if (!heat_check(base, &h, palette)) return -1;
  Paths p;
  paths_init(&p, base);
  int rc = -1;
  if (ensure_dir(&p) == 0) {
    heat_color_range(&h);
    heat_margins(&h);
    heat_cell(&h);
    h.wrapped = xcalloc((size_t)h.np, sizeof *h.wrapped);
    heat_fit_titles(&h);
    heat_place(&h);
    if (write_heat_dat(&p, &h) == 0 && write_heat_gp(&p, &h) == 0) rc = render(&p);
    free(h.wrapped);
  }
  paths_free(&p);
  return rc;
}
