/* plot_draw.h — inside the figures (plot.h is the interface): what the figure kinds share.
 *
 *   plot.c           the gnuplot driver: probing, file names and files, the script's
 *                    preamble, rendering, text widths and title wrapping, tick steps
 *   plot_lines.c     line plots (plot_axes_row), and draw_axes for the animator
 *   plot_heatmap.c   heatmap grids with one colour bar (plot_heatmaps, plot_heatmaps_cb)
 *   plot_animator.c  training curves redrawn as points arrive (animator_*)
 * Calls go down that list's dependencies only: the animator calls the line plots, the line
 * plots and heatmaps call the driver, the driver calls neither. */
#ifndef AL_PLOT_DRAW_H
#define AL_PLOT_DRAW_H

#include <stdbool.h>
#include <stdio.h>

#include "plot.h"

/* ---------- the driver (plot.c) ---------- */

/* BASE split into the directory part ("" or ending in '/') and the file name. */
typedef struct {
  char *dir, *name;          /* malloc'd */
  char *dat, *gp, *png, *svg; /* full paths as given (relative to the cwd or absolute) */
} Paths;
void paths_init(Paths *p, const char *base);
void paths_free(Paths *p);
/* Create BASE's directory when missing; -1 and a message when it cannot be. */
int ensure_dir(const Paths *p);
/* fopen for writing, and fclose with the write error check: NULL / -1 with a message naming
 * the file on failure. */
FILE *open_w(const char *path);
int close_w(FILE *f, const char *path);

/* s as a single-quoted gnuplot string (newlines become spaces), as a double-quoted one (a '\n'
 * breaks the line), as text for a one-line '#' comment; a number, NaN where not finite. */
void put_q(FILE *f, const char *s);
void put_qq(FILE *f, const char *s);
void put_comment_text(FILE *f, const char *s);
void put_num(FILE *f, double v);
static inline bool has_label(const char *s) { return s && *s; }

/* The script's preamble: where it lives, which terminal, where the image goes. */
void put_preamble(FILE *f, const Paths *p, const char *what, int w, int h, double fontpt);
/* Render BASE.gp with gnuplot, or say (once) how to do it later. 0 / 1 / -1 as in plot.h. */
int render(const Paths *p);

/* Width in pixels of s (of its first n bytes) in the figures' font at em pixels per em. */
double text_width_n(const char *s, size_t n, double em);
double text_width(const char *s, double em);
/* Word-wrap a title into at most 3 lines no wider than max_px (the caller's '\n' always break);
 * out gets the lines joined by '\n'. Returns the number of lines and, in *widest, the widest
 * line's width (which exceeds max_px only where one word alone is wider). */
int wrap_title(const char *s, double em, double max_px, char *out, size_t cap, double *widest);
/* A "nice" tick step (1, 2, 2.5 or 5 times a power of ten) giving at most maxticks ticks over
 * [lo, hi], as matplotlib's MaxNLocator does; gnuplot places ticks at its multiples. */
double nice_step(double lo, double hi, int maxticks);

/* ---------- line plots (plot_lines.c) ---------- */

enum { ST_LINES, ST_DASHED, ST_POINTS, ST_LINESPOINTS, ST_DASHDOT, ST_DOTTED };
/* How draw_axes draws series k: looks[k % nlooks], over the series' own style and colour. */
typedef struct {
  const char *color;  /* NULL: the cycle */
  int style;          /* -1: the series' own */
} SeriesLook;
/* plot_axes_row with looks (NULL: none) and `what` naming the figure kind in its files. */
int draw_axes(const char *base, const Axes *panels, int npanels, int width, int height,
              const SeriesLook *looks, int nlooks, const char *what);

#endif
