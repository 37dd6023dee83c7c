/* plot_animator.c — d2l's Animator: training curves that grow point by point, redrawn every
 * few points as a line plot (draw_axes, plot_lines.c); the map is in plot_draw.h. */
#include <math.h>
#include <stdlib.h>

#include "plot_draw.h"
#include "util.h"

struct Animator {
  char *base, *xlabel, *ylabel;
  char **legends; /* nseries entries, NULL where none */
  int nseries, every, nadd;
  double xmin, xmax;
  bool logy;
  int n, cap;     /* points added */
  double *x, *y;  /* x[n], y[n * nseries] (NAN = no point) */
  int drawn_n, drawn_rc; /* points in the last drawing (-1: none yet) and its result */
};

Animator *animator_new(const char *base, const char *xlabel, const char *ylabel,
                       const char *const *legends, int nseries, double xmin, double xmax,
                       bool logy, int every) {
  if (!base || !*base || nseries < 1) {
    fprintf(stderr, "plot: animator_new needs a file base name and at least one series\n");
    return NULL;
  }
  Animator *a = xcalloc(1, sizeof *a);
  a->base = xstrdup(base);
  a->xlabel = xstrdup(xlabel ? xlabel : "");
  a->ylabel = xstrdup(ylabel ? ylabel : "");
  a->nseries = nseries;
  a->legends = xcalloc((size_t)nseries, sizeof *a->legends);
  for (int i = 0; i < nseries; i++)
    if (legends && legends[i]) a->legends[i] = xstrdup(legends[i]);
  a->xmin = xmin;
  a->xmax = xmax;
  a->logy = logy;
  a->every = every;
  a->drawn_n = -1;
  return a;
}

/* d2l's Animator fmts ('-', 'm--', 'g-.', 'r:'): blue solid, magenta dashed, green dash-dot,
 * red dotted. */
static const SeriesLook k_anim_looks[4] = {
    {"#1f77b4", ST_LINES}, {"#bf00bf", ST_DASHED}, {"#008000", ST_DASHDOT}, {"#ff0000", ST_DOTTED}};

static int animator_draw(Animator *a) {
  float *xs = xmalloc(sizeof(float) * (size_t)(a->n ? a->n : 1) * a->nseries);
  float *ys = xmalloc(sizeof(float) * (size_t)(a->n ? a->n : 1) * a->nseries);
  Series *ser = xcalloc((size_t)a->nseries, sizeof *ser);
  SeriesLook looks[4];
  for (int s = 0; s < a->nseries; s++) {
    /* only the points present: d2l skips None, so a series' line joins its own points */
    float *sx = xs + (size_t)s * a->n, *sy = ys + (size_t)s * a->n;
    int m = 0;
    for (int i = 0; i < a->n; i++) {
      double v = a->y[(size_t)i * a->nseries + s];
      if (isnan(v)) continue;
      sx[m] = (float)a->x[i];
      sy[m] = (float)v;
      m++;
    }
    ser[s] = (Series){a->legends[s], sx, sy, m, "lines"};
  }
  for (int i = 0; i < 4; i++) {
    looks[i] = k_anim_looks[i];
    if (a->nseries > 4) looks[i] = (SeriesLook){NULL, -1}; /* many series: plain cycle */
  }
  Axes ax = {NULL, a->xlabel, a->ylabel, a->xmin, a->xmax, NAN, NAN, a->logy, ser, a->nseries, false};
  int rc = draw_axes(a->base, &ax, 1, 0, 0, looks, 4, "animator");
  a->drawn_n = a->n;
  a->drawn_rc = rc;
  free(ser);
  free(xs);
  free(ys);
  return rc;
}

void animator_add(Animator *a, double x, const double *ys) {
  if (!a) return;
  if (a->n == a->cap) {
    a->cap = a->cap ? 2 * a->cap : 64;
    a->x = xrealloc(a->x, sizeof(double) * (size_t)a->cap);
    a->y = xrealloc(a->y, sizeof(double) * (size_t)a->cap * a->nseries);
  }
  a->x[a->n] = x;
  for (int s = 0; s < a->nseries; s++)
    a->y[(size_t)a->n * a->nseries + s] = ys ? ys[s] : NAN;
  a->n++;
  a->nadd++;
  if (a->every > 0 && a->nadd % a->every == 0) (void)animator_draw(a);
}

int animator_close(Animator *a) {
  if (!a) return -1;
  /* the last periodic drawing may already show every point */
  int rc = a->drawn_n == a->n ? a->drawn_rc : animator_draw(a);
  for (int s = 0; s < a->nseries; s++) free(a->legends[s]);
  free(a->legends);
  free(a->x);
  free(a->y);
  free(a->base);
  free(a->xlabel);
  free(a->ylabel);
  free(a);
  return rc;
}
