/* plot.h — figures through gnuplot (popen), headless. Every figure writes three files beside
 * each other: BASE.dat (its data, columns documented in a header comment), BASE.gp (the script
 * that renders it) and BASE.png (pngcairo, else png) or BASE.svg when no PNG terminal exists.
 * Without gnuplot the .dat and .gp are still written and one line (printed once per program)
 * says how to render them; the lab carries on. Functions return 0 when an image was made,
 * 1 when only data and script were written, -1 on an I/O error (message printed). */
#ifndef AL_PLOT_H
#define AL_PLOT_H

#include <math.h>
#include <stdbool.h>

typedef struct Series {
  const char *label;   /* legend text; NULL for none */
  const float *x, *y;  /* n points */
  int n;
  const char *style;   /* "lines" (default), "dashed", "points", "linespoints", or a matplotlib
                        * format as d2l.plot passes it: '-', 'm--', 'g-.', 'r:', 'o', with
                        * optionally " alpha=0.5" after it (matplotlib's alpha=) */
} Series;

typedef struct Axes {
  const char *title, *xlabel, *ylabel;
  double xmin, xmax, ymin, ymax; /* NAN = automatic */
  bool logy;
  const Series *series;
  int nseries;
  bool logx; /* x on a log axis (base 2: ticks at the powers of two, as d = 1, 2, ..., 256) */
} Axes;

/* 1 x n row of panels (n = 1 for a single plot). width/height in pixels (0 = default: 700 x 500
 * per panel, matplotlib's 3.5 x 2.5 in at 2x). A series whose points have no finite neighbour
 * (one epoch) is drawn with markers, so it shows. The legend goes where it hides the fewest
 * points, or outside on the right where every place inside would hide some. */
int plot_axes_row(const char *base, const Axes *panels, int npanels, int width, int height);

typedef struct HeatMap {
  const char *title;   /* per-panel title, may be NULL */
  const float *m;      /* rows x cols, row-major */
  int rows, cols;
} HeatMap;

/* A rows x cols grid of heatmaps with one shared colorbar (range over all panels), drawn
 * `with image pixels`, row 0 at the top like matplotlib's imshow. palette: "Reds" or "Blues". */
int plot_heatmaps(const char *base, const HeatMap *maps, int nrows, int ncols,
                  const char *xlabel, const char *ylabel, const char *palette, int width,
                  int height);

/* The same with a label on the colour bar (say what the colours mean where panels share the
 * bar but not a unit, e.g. "pixel value; attention / map's max"). Titles are wrapped at spaces
 * (and at '\n') to their panel's width. */
int plot_heatmaps_cb(const char *base, const HeatMap *maps, int nrows, int ncols,
                     const char *xlabel, const char *ylabel, const char *cblabel,
                     const char *palette, int width, int height);

/* Images as d2l's show_images draws them: a rows x cols grid in gray (matplotlib's 'gray',
 * black to white over the values of all panels), each with its title, no ticks, no colour bar.
 * Titles are wrapped as plot_heatmaps_cb's. */
int plot_images(const char *base, const HeatMap *images, int nrows, int ncols, int width,
                int height);

/* Training-curve animator (d2l's Animator(xlabel='epoch', ylabel='loss', ...)): add points per
 * epoch; the figure is redrawn every `every` additions and at animator_close. Series take
 * d2l's formats in order: '-', 'm--', 'g-.', 'r:'. */
typedef struct Animator Animator;
Animator *animator_new(const char *base, const char *xlabel, const char *ylabel,
                       const char *const *legends, int nseries, double xmin, double xmax,
                       bool logy, int every);
void animator_add(Animator *a, double x, const double *ys); /* NAN in ys = no point */
int animator_close(Animator *a); /* final render; frees a */

/* Tell the reader where a figure went, given a plot function's return value: "[figure BASE.png]"
 * (0), or "[figure data BASE.dat + BASE.gp: render with gnuplot]" (1); nothing on -1 (the
 * plot function has already printed the error). Use: figure_saved(base, plot_heatmaps(...)). */
void figure_saved(const char *base, int rc);

bool plot_have_gnuplot(void);   /* probed once */
/* Tests: force "no gnuplot" (1) or re-probe (0). */
void plot_force_no_gnuplot(int on);

#endif
