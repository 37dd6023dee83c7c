/* plot.c — figures through gnuplot, headless, styled after matplotlib as d2l uses it.
 *
 * Every figure is three files beside each other:
 *   BASE.dat  the numbers (a header comment says which block holds what),
 *   BASE.gp   a complete gnuplot script that reads BASE.dat and writes BASE.png,
 *   BASE.png  (pngcairo, else png; BASE.svg where gnuplot has neither).
 * The script names its files RELATIVE TO ITS OWN DIRECTORY (from ARG0, which gnuplot sets for
 * `gnuplot FILE.gp` and `load 'FILE.gp'`), so `gnuplot out/lab01/fig.gp` works from any
 * directory and the three files can be moved together. The script picks its terminal itself
 * from GPVAL_TERMINALS, so a .gp written on a machine without gnuplot renders elsewhere.
 * We render by piping `load 'BASE.gp'` into one gnuplot process per figure.
 *
 * Styling follows matplotlib's defaults as d2l sets them up: a 3.5 x 2.5 inch panel at
 * 100 dpi drawn at 2x (700 x 500 px), DejaVu Sans, the tab10 colour cycle, a light grid,
 * a full black frame with outward ticks, 5% data margins, and a framed legend placed where it
 * covers the fewest data points (matplotlib's loc='best'). Heatmaps keep imshow's square
 * cells and Reds/Blues colour maps; each panel is placed at exact screen coordinates so the
 * grid lines up and one colour bar serves all. Matrices of 2 x 2 and up are drawn `with image`
 * (crisp and seamless; `with image pixels` shows antialiasing seams between cells), single
 * rows and columns as filled boxes (gnuplot's image styles draw nothing for them).
 *
 * Without gnuplot one line on stderr (once per program) says where the scripts are and how to
 * render them. Environment: AL_NO_GNUPLOT=1 skips rendering the same way. */
#define _POSIX_C_SOURCE 200809L
#include "plot.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

/* The scripts say `set encoding utf8`; under a non-UTF-8 locale (LANG unset: a container, an
 * ssh session, CI) gnuplot then warns "iconv failed to convert degree sign" once per figure.
 * Such a locale gets gnuplot run under C.UTF-8 (glibc's built-in UTF-8 locale). */
static bool utf8_locale(void) {
  const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
  for (int i = 0; i < 3; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) return strcasestr(v, "utf-8") || strcasestr(v, "utf8");
  }
  return false;
}

/* ------------------------------------------------------------------ gnuplot probe */

static int g_probed;            /* probe done */
static int g_forced_off;        /* plot_force_no_gnuplot(1) */
static int g_env_off;           /* AL_NO_GNUPLOT set */
static char g_term[16];         /* "pngcairo", "png", "svg" or "" (no gnuplot / no terminal) */
static int g_notice_printed;    /* the one "gnuplot not found" line */

/* The first executable `name` on $PATH into out (size cap); false when there is none. Looking
 * ourselves avoids the shell's "not found" message. */
static bool find_in_path(const char *name, char *out, size_t cap) {
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  while (*path) {
    const char *colon = strchr(path, ':');
    size_t len = colon ? (size_t)(colon - path) : strlen(path);
    out[0] = '\0';
    if (len == 0) snprintf(out, cap, "./%s", name);
    else if (len + strlen(name) + 2 <= cap) snprintf(out, cap, "%.*s/%s", (int)len, path, name);
    struct stat st;
    if (out[0] && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
      return true;
    if (!colon) break;
    path = colon + 1;
  }
  return false;
}

/* Which of pngcairo / png / svg the gnuplot on PATH offers ("" if none or it fails). `exe`,
 * where PATH finds it, keys the cached answer (asking costs a gnuplot start, ~0.1-0.3 s), so a
 * changed PATH asks again. */
static const char *query_terminal(const char *exe) {
  static char cached_exe[4096], cached_term[16];
  static int cached;
  if (cached && strcmp(cached_exe, exe) == 0) return cached_term;
  cached = 1;
  snprintf(cached_exe, sizeof cached_exe, "%s", exe);
  cached_term[0] = '\0';
  /* GPVAL_TERMINALS lists the terminal names, space separated, with a space at both ends. */
  fflush(stdout);
  FILE *p = popen("gnuplot -e \"print GPVAL_TERMINALS\" 2>&1 </dev/null", "r");
  if (!p) return cached_term;
  char out[8192];
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return cached_term;
  const char *terms[] = {"pngcairo", "png", "svg"};
  for (int i = 0; i < 3; i++) {
    char pat[32];
    snprintf(pat, sizeof pat, " %s ", terms[i]);
    if (strstr(out, pat)) {
      strcpy(cached_term, terms[i]);
      break;
    }
  }
  return cached_term;
}

static void probe(void) {
  if (g_probed) return;
  g_probed = 1;
  g_term[0] = '\0';
  const char *env = getenv("AL_NO_GNUPLOT");
  g_env_off = env && *env && strcmp(env, "0") != 0;
  char exe[4096];
  if (g_forced_off || g_env_off || !find_in_path("gnuplot", exe, sizeof exe)) return;
  strcpy(g_term, query_terminal(exe));
}

void figure_saved(const char *base, int rc) {
  if (rc == 0)
    printf("[figure %s.png]\n", base);
  else if (rc == 1)
    printf("[figure data %s.dat + %s.gp: render with gnuplot]\n", base, base);
}

bool plot_have_gnuplot(void) {
  probe();
  return g_term[0] != '\0';
}

void plot_force_no_gnuplot(int on) {
  g_forced_off = on != 0;
  g_probed = 0; /* probed again on next use (each probe starts a gnuplot) */
}

/* ------------------------------------------------------------------ small helpers */

/* Matplotlib's default colour cycle (tab10). */
static const char *const k_cycle[10] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                        "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                        "#bcbd22", "#17becf"};

/* BASE split into the directory part ("" or ending in '/') and the file name. */
typedef struct {
  char *dir, *name;          /* malloc'd */
  char *dat, *gp, *png, *svg; /* full paths as given (relative to the cwd or absolute) */
} Paths;

static char *strcat3(const char *a, const char *b, const char *c) {
  size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
  char *s = xmalloc(la + lb + lc + 1);
  memcpy(s, a, la);
  memcpy(s + la, b, lb);
  memcpy(s + la + lb, c, lc + 1);
  return s;
}

static void paths_init(Paths *p, const char *base) {
  const char *slash = strrchr(base, '/');
  size_t dl = slash ? (size_t)(slash - base) + 1 : 0;
  p->dir = xmalloc(dl + 1);
  memcpy(p->dir, base, dl);
  p->dir[dl] = '\0';
  p->name = xstrdup(base + dl);
  p->dat = strcat3(base, ".dat", "");
  p->gp = strcat3(base, ".gp", "");
  p->png = strcat3(base, ".png", "");
  p->svg = strcat3(base, ".svg", "");
}

static void paths_free(Paths *p) {
  free(p->dir);
  free(p->name);
  free(p->dat);
  free(p->gp);
  free(p->png);
  free(p->svg);
}

/* Write s as the body of a single-quoted gnuplot string ('' is a literal quote; newlines,
 * which cannot appear inside one, become spaces). */
static void put_q(FILE *f, const char *s) {
  fputc('\'', f);
  for (; s && *s; s++) {
    if (*s == '\'') fputs("''", f);
    else if (*s == '\n' || *s == '\r') fputc(' ', f);
    else fputc(*s, f);
  }
  fputc('\'', f);
}

/* Text for a one-line '#' comment in the .dat header. */
static void put_comment_text(FILE *f, const char *s) {
  for (; s && *s; s++) fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static void put_num(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.6g", v);
  else fputs("NaN", f); /* gnuplot reads NaN as a missing value */
}

static FILE *open_w(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "plot: cannot write '%s': %s\n", path, strerror(errno));
  return f;
}

/* fclose with the write error check; -1 and a message naming the file on failure. */
static int close_w(FILE *f, const char *path) {
  int bad = ferror(f);
  int err = errno;
  if (fclose(f) != 0 && !bad) {
    bad = 1;
    err = errno;
  }
  if (bad) {
    fprintf(stderr, "plot: error writing '%s': %s\n", path, strerror(err ? err : EIO));
    return -1;
  }
  return 0;
}

/* Create BASE's directory when missing (labs pass out/labNN/fig before anything else exists). */
static int ensure_dir(const Paths *p) {
  if (!p->dir[0]) return 0;
  if (mkdir_p(p->dir) != 0) {
    int len = (int)strlen(p->dir);
    if (len > 1) len--; /* without its trailing '/' */
    fprintf(stderr, "plot: cannot create directory '%.*s' for '%s.gp': %s\n", len, p->dir,
            p->name, strerror(errno));
    return -1;
  }
  return 0;
}

/* The script's preamble: where it lives, which terminal, where the image goes. */
static void put_preamble(FILE *f, const Paths *p, const char *what, int w, int h, double fontpt) {
  fprintf(f, "# %s.gp — %s, drawn from %s.dat (written by attention-lab common/plot.c).\n",
          p->name, what, p->name);
  fputs("# Regenerate the image from any directory:  gnuplot path/to/THIS.gp\n"
        "# Every file name below is relative to this script's own directory (ARG0), so the\n"
        "# .gp, .dat and image can be moved together. Fed on stdin, it uses the current one.\n",
        f);
  fputs("gp_dir = ''\n"
        "if (exists('ARG0')) { if (strlen(ARG0) > 0) {\n"
        "  gp_i = strlen(ARG0)\n"
        "  while (gp_i > 0 && ARG0[gp_i:gp_i] ne '/') { gp_i = gp_i - 1 }\n"
        "  if (gp_i > 0) { gp_dir = ARG0[1:gp_i] }\n"
        "} }\n",
        f);
  fputs("gp_dat = gp_dir.", f);
  put_q(f, p->dat + strlen(p->dir));
  fputs("\nset encoding utf8\n", f);
  /* pngcairo, else the libgd png terminal (its points are smaller), else svg — the order
   * plot.c probes. gp_title_font is the panel titles' font, 1.2 times the text. */
  const char *term[3] = {"pngcairo", "png", "svg"};
  const char *face[3] = {"DejaVu Sans", "DejaVuSans", "DejaVu Sans"};
  const double scale[3] = {1.0, 0.75, 1.0};
  for (int i = 0; i < 3; i++) {
    if (i < 2) fprintf(f, "%sif (strstrt(GPVAL_TERMINALS, ' %s ') > 0) {\n", i ? "} else { " : "",
                       term[i]);
    else fputs("} else {\n", f);
    fprintf(f,
            "  set terminal %s size %d,%d noenhanced font '%s,%.1f' background '#ffffff'\n"
            "  gp_title_font = ',%.1f'\n"
            "  set output gp_dir.",
            term[i], w, h, face[i], fontpt * scale[i], 1.2 * fontpt * scale[i]);
    put_q(f, (i < 2 ? p->png : p->svg) + strlen(p->dir));
    fputc('\n', f);
  }
  fputs("} }\n", f);
}

/* Render BASE.gp with gnuplot, or say (once) how to do it later. 0 / 1 / -1 as in plot.h. */
static int render(const Paths *p) {
  probe();
  if (!g_term[0]) {
    if (!g_notice_printed) {
      g_notice_printed = 1;
      fflush(stdout); /* keep the notice after what the lab printed so far */
      const char *dir = p->dir[0] ? p->dir : "./";
      if (g_env_off || g_forced_off)
        fprintf(stderr,
                "figures not rendered (%s): written as .dat + .gp under %s; run gnuplot "
                "FILE.gp to render them\n",
                g_env_off ? "AL_NO_GNUPLOT is set" : "gnuplot switched off", dir);
      else
        fprintf(stderr,
                "gnuplot not found: figures written as .dat + .gp under %s; install "
                "gnuplot-nox (make deps) and run gnuplot FILE.gp to render them\n",
                dir);
    }
    return 1;
  }
  const char *img = strcmp(g_term, "svg") == 0 ? p->svg : p->png;
  if (unlink(img) != 0 && errno != ENOENT) {
    fprintf(stderr, "plot: cannot replace '%s': %s\n", img, strerror(errno));
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  /* gnuplot dying early must not kill the lab with SIGPIPE: ignore it while we write. */
  struct sigaction ign, old;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPIPE, &ign, &old);
  int rc = 0;
  FILE *gp = popen(utf8_locale() ? "gnuplot" : "LC_ALL=C.UTF-8 gnuplot", "w");
  if (!gp) {
    fprintf(stderr, "plot: cannot start gnuplot for '%s': %s\n", p->gp, strerror(errno));
    rc = -1;
  } else {
    fputs("load ", gp);
    put_q(gp, p->gp);
    fputs("\n", gp);
    fflush(gp);
    int st = pclose(gp);
    if (st == -1) {
      fprintf(stderr, "plot: waiting for gnuplot on '%s' failed: %s\n", p->gp, strerror(errno));
      rc = -1;
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "plot: gnuplot failed on '%s' (%s %d); see its message above\n", p->gp,
              WIFEXITED(st) ? "exit status" : "signal",
              WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
      rc = -1;
    }
  }
  sigaction(SIGPIPE, &old, NULL);
  if (rc == 0) {
    struct stat sb;
    if (stat(img, &sb) != 0 || sb.st_size == 0) {
      fprintf(stderr, "plot: gnuplot ran '%s' but wrote no '%s'\n", p->gp, img);
      rc = -1;
    }
  }
  if (rc != 0) (void)unlink(img); /* no half-written image left behind */
  return rc;
}

/* Advance widths of DejaVu Sans (the figures' font) for ASCII 32..126, in 1/1000 em, read from
 * the font's hmtx table; other characters count as 0.62 em. Titles are measured with these so
 * a layout can wrap or widen them before they run into a neighbour. */
static const short k_dejavu_w[95] = {
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636,
    636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632,
    575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685,
    611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579,
    278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838};

/* Width in pixels of the first n bytes of s (one line) at em pixels per em. */
static double text_width_n(const char *s, size_t n, double em) {
  double w = 0;
  for (size_t i = 0; s && i < n && s[i]; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 32 && c < 127) w += k_dejavu_w[c - 32] / 1000.0;
    else if ((c & 0xC0) != 0x80) w += 0.62; /* the first byte of a non-ASCII character */
  }
  return w * em;
}

static double text_width(const char *s, double em) {
  return text_width_n(s, s ? strlen(s) : 0, em);
}

/* Word-wrap a title into at most 3 lines no wider than max_px (the caller's '\n' always break);
 * out gets the lines joined by '\n'. Returns the number of lines and, in *widest, the widest
 * line's width (which exceeds max_px only where one word alone is wider). */
static int wrap_title(const char *s, double em, double max_px, char *out, size_t cap,
                      double *widest) {
  size_t o = 0;
  int lines = 1;
  *widest = 0;
  const char *line = s;
  while (*line) {
    size_t len = strcspn(line, "\n");
    /* greedy: the longest prefix ending before a space that fits, else up to the first space */
    size_t take = len;
    if (text_width_n(line, len, em) > max_px && lines < 3) {
      size_t best = 0, first = 0;
      for (size_t i = 1; i < len; i++)
        if (line[i] == ' ') {
          if (!first) first = i;
          if (text_width_n(line, i, em) <= max_px) best = i;
        }
      take = best ? best : first ? first : len;
    }
    double w = text_width_n(line, take, em);
    if (w > *widest) *widest = w;
    if (o + take + 2 < cap) {
      memcpy(out + o, line, take);
      o += take;
    }
    line += take;
    while (*line == ' ') line++;
    if (*line == '\n') line++;
    if (*line) {
      if (o + 1 < cap) out[o++] = '\n';
      lines++;
    }
  }
  out[o] = '\0';
  return lines;
}

/* Write s as a double-quoted gnuplot string, so that '\n' in it breaks the line. */
static void put_qq(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if (*s == '\n') fputs("\\n", f);
    else if (*s == '\r') fputc(' ', f);
    else fputc(*s, f);
  }
  fputc('"', f);
}

/* ------------------------------------------------------------------ line plots */

enum { ST_LINES, ST_DASHED, ST_POINTS, ST_LINESPOINTS, ST_DASHDOT, ST_DOTTED };

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

static bool has_label(const char *s) { return s && *s; }

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
  for (int s = 0; s < ax->nseries; s++) {
    const Series *se = &ax->series[s];
    int st = parse_style(se->style);
    int sub = (st == ST_POINTS) ? 1 : 8; /* samples per segment: lines cover their spans */
    double px = NAN, py = NAN;
    for (int i = 0; i < se->n; i++) {
      double x = se->x[i], y = se->y[i];
      if (ax->logy) y = y > 0 ? log10(y) : NAN;
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

/* A "nice" tick step (1, 2, 2.5 or 5 times a power of ten) giving at most maxticks ticks over
 * [lo, hi], as matplotlib's MaxNLocator does; gnuplot places ticks at its multiples. */
static double nice_step(double lo, double hi, int maxticks) {
  double raw = (hi - lo) / (maxticks > 1 ? maxticks - 1 : 1);
  if (!(raw > 0) || !isfinite(raw)) return 1;
  double mag = pow(10, floor(log10(raw)));
  static const double m[] = {1, 2, 2.5, 5, 10};
  for (int i = 0; i < 5; i++)
    if (m[i] * mag >= raw * (1 - 1e-9)) return m[i] * mag;
  return 10 * mag;
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

typedef struct {
  const char *color;  /* NULL: the cycle */
  int style;          /* -1: the series' own */
} SeriesLook;

static int draw_axes(const char *base, const Axes *panels, int npanels, int width, int height,
                     const SeriesLook *looks, int nlooks, const char *what) {
  if (!base || !*base || npanels < 1 || !panels) {
    fprintf(stderr, "plot: plot_axes_row needs a file base name and at least one panel\n");
    return -1;
  }
  for (int a = 0; a < npanels; a++) {
    bool bad = panels[a].nseries > 0 && !panels[a].series;
    for (int k = 0; !bad && k < panels[a].nseries; k++)
      bad = panels[a].series[k].n > 0 && (!panels[a].series[k].x || !panels[a].series[k].y);
    if (bad) {
      fprintf(stderr, "plot: panel %d of '%s' has a series without x or y data\n", a + 1, base);
      return -1;
    }
  }
  Paths p;
  paths_init(&p, base);
  if (ensure_dir(&p) != 0) {
    paths_free(&p);
    return -1;
  }
  /* Size: 3.5 x 2.5 in per panel at 100 dpi, drawn at 2x. Fonts and lines scale with the
   * panel so a caller's smaller figure stays balanced. */
  int W = width > 0 ? width : 700 * npanels;
  int H = height > 0 ? height : 500;
  double pw = (double)W / npanels, ph = H;
  /* 2 for the default 700 x 500 panel and for d2l's figsize=(12, 3) row at 2400 x 600, so
   * every figure's text has one size */
  double s = fmin(pw / 300.0, ph / 250.0);
  if (s < 0.8) s = 0.8;
  if (s > 3) s = 3;
  double fontpt = 10.0 * s; /* 10 pt at 100 dpi = 13.9 px; pngcairo draws 1 pt as 4/3 px */
  double lw = 2.0 * s;     /* matplotlib's 1.5 pt line at 100 dpi ~ 2 px */
  double ps = 1.3 * s;     /* filled circle ~ matplotlib's 'o' marker at 6 pt */

  /* ---- .dat */
  FILE *f = open_w(p.dat);
  if (!f) {
    paths_free(&p);
    return -1;
  }
  fprintf(f, "# %s.dat — data of %s.png (%s).\n", p.name, p.name, what);
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
  if (close_w(f, p.dat) != 0) {
    paths_free(&p);
    return -1;
  }

  /* ---- .gp */
  f = open_w(p.gp);
  if (!f) {
    paths_free(&p);
    return -1;
  }
  put_preamble(f, &p, what, W, H, fontpt);
  fprintf(f,
          "# matplotlib's look: full frame, outward ticks, light grid, tab10 colours\n"
          "set border 15 lw %.2f lc rgb '#000000'\n"
          "set tics out nomirror scale %.2f\n"
          "set grid xtics ytics lt 1 lw %.2f lc rgb '#b0b0b0' dt 1\n"
          "set key opaque box lc rgb '#cccccc' lw %.2f reverse Left samplen 2 spacing 1.1 "
          "width 1 height 0.6\n"
          "set format x '%%g'\nset format y '%%g'\n",
          1.1 * s, 0.8, 1.0 * s, 1.0 * s);
  if (npanels > 1) fprintf(f, "set multiplot layout 1,%d\n", npanels);
  blk = 0;
  for (int a = 0; a < npanels; a++) {
    const Axes *ax = &panels[a];
    fprintf(f, "\n# ---- panel %d\n", a + 1);
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    int nlab = 0, maxlab = 0;
    for (int s2 = 0; s2 < ax->nseries; s2++) {
      const Series *se = &ax->series[s2];
      for (int i = 0; i < se->n; i++) {
        double x = se->x[i], y = se->y[i];
        if (!isfinite(x) || !isfinite(y) || (ax->logy && y <= 0)) continue;
        xlo = fmin(xlo, x);
        xhi = fmax(xhi, x);
        ylo = fmin(ylo, y);
        yhi = fmax(yhi, y);
      }
      if (has_label(se->label) && se->n > 0) {
        nlab++;
        int l = (int)strlen(se->label);
        if (l > maxlab) maxlab = l;
      }
    }
    double x0, x1, y0, y1;
    auto_range(xlo, xhi, ax->xmin, ax->xmax, false, &x0, &x1);
    auto_range(ylo, yhi, ax->ymin, ax->ymax, ax->logy, &y0, &y1);
    if (ax->logy && !(y0 > 0)) y0 = y1 / 1e3; /* a log axis cannot start at or below 0 */
    fputs("set title ", f);
    put_q(f, has_label(ax->title) ? ax->title : "");
    fputs(" font gp_title_font\nset xlabel ", f);
    put_q(f, has_label(ax->xlabel) ? ax->xlabel : "");
    fputs(" offset 0,0.45\nset ylabel ", f);
    put_q(f, has_label(ax->ylabel) ? ax->ylabel : "");
    /* the log switch goes before the range: a range below 0 on a still-log axis warns */
    fprintf(f, "\n%s\nset xrange [%.10g:%.10g]\nset yrange [%.10g:%.10g]\n",
            ax->logy ? "set logscale y" : "unset logscale y", x0, x1, y0, y1);
    /* margins in character heights: gnuplot's defaults leave a wide band above the title */
    fprintf(f, "set tmargin %.1f\nset bmargin %.1f\nset rmargin 2\n",
            has_label(ax->title) ? 2.6 : 1.0, has_label(ax->xlabel) ? 3.1 : 1.8);
    /* tick spacing like matplotlib's MaxNLocator: at most one interval per 3 em of x axis
     * and per 2 em of y axis (nicer steps first), fewer when the x labels are long */
    {
      double em = fontpt * 4.0 / 3.0, plot_w = 0.8 * pw, plot_h = 0.64 * ph;
      int xb = (int)(plot_w / (3 * em)), yb = (int)(plot_h / (1.8 * em));
      if (xb < 2) xb = 2;
      if (yb < 2) yb = 2;
      double xs = nice_step(x0, x1, xb + 1);
      for (int b = xb; b >= 2; b--) {
        xs = nice_step(x0, x1, b + 1);
        if ((x1 - x0) / xs * (tick_chars(x0, x1, xs) + 1.5) * 0.62 * em <= plot_w) break;
      }
      fprintf(f, "set xtics %.10g\n", xs);
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
        fprintf(f, "set ytics %.10g\nset mytics default\n",
                nice_step(y0, y1, yb + 1));
    }
    if (nlab > 0) {
      /* key size as a fraction of the plot area (char ~0.6 em; plot area ~80% x 75%) */
      double em = fontpt * 4.0 / 3.0;
      double kw = (maxlab * 0.6 * em + 4.8 * em) / (0.75 * pw);
      double kh = (nlab * 1.3 * em + 1.0 * em) / (0.6 * ph);
      long covered, samples;
      const char *pos =
          best_key_pos(ax, x0, x1, y0, y1, fmin(kw, 0.9), fmin(kh, 0.9), &covered, &samples);
      /* where every inside place would hide more than 1% of the curves (periodic curves fill
       * the plot), the legend goes outside on the right, off the data */
      if (covered > samples / 100 + 1)
        fputs("set key outside right top\nunset rmargin\n", f);
      else
        fprintf(f, "set key inside %s\n", pos);
    } else {
      fputs("unset key\n", f);
    }
    fputs("plot ", f);
    int nplotted = 0, ncycle = 0;
    for (int s2 = 0; s2 < ax->nseries; s2++, blk++) {
      const Series *se = &ax->series[s2];
      int finite = 0;
      for (int i = 0; i < se->n && !finite; i++)
        finite = isfinite(se->x[i]) && isfinite(se->y[i]) && (!ax->logy || se->y[i] > 0);
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
      bool marks = false;
      if (st != ST_POINTS && st != ST_LINESPOINTS) {
        bool isolated = false;
        for (int i = 0; i < se->n && !isolated; i++) {
          bool fin = isfinite(se->x[i]) && isfinite(se->y[i]);
          bool prev = i > 0 && isfinite(se->x[i - 1]) && isfinite(se->y[i - 1]);
          bool next = i + 1 < se->n && isfinite(se->x[i + 1]) && isfinite(se->y[i + 1]);
          isolated = fin && !prev && !next;
        }
        if (isolated) marks = true;
      }
      fprintf(f, "%sgp_dat index %d using 1:2", nplotted ? ", \\\n     " : "", blk);
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
    if (!nplotted) fprintf(f, "%.10g notitle lc rgb '#ffffff'", y1 + (y1 - y0) * 10);
    fputs("\n", f);
  }
  if (npanels > 1) fputs("unset multiplot\n", f);
  fputs("set output\n", f);
  if (close_w(f, p.gp) != 0) {
    paths_free(&p);
    return -1;
  }
  int rc = render(&p);
  paths_free(&p);
  return rc;
}

int plot_axes_row(const char *base, const Axes *panels, int npanels, int width, int height) {
  return draw_axes(base, panels, npanels, width, height, NULL, 0, "plot_axes_row");
}

/* ------------------------------------------------------------------ heatmaps */

/* matplotlib's Reds / Blues (ColorBrewer 9-class sequential) as gnuplot palettes. */
static const char *const k_reds[9] = {"#fff5f0", "#fee0d2", "#fcbba1", "#fc9272", "#fb6a4a",
                                      "#ef3b2c", "#cb181d", "#a50f15", "#67000d"};
static const char *const k_blues[9] = {"#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6",
                                       "#4292c6", "#2171b5", "#08519c", "#08306b"};

/* A 1-2-5 tick step for n cells that gives at most 6 ticks, and no more than fit along px
 * pixels when each tick label needs label_px (so small image panels do not run labels together). */
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

int plot_heatmaps_cb(const char *base, const HeatMap *maps, int nrows, int ncols,
                     const char *xlabel, const char *ylabel, const char *cblabel,
                     const char *palette, int width, int height) {
  if (!base || !*base || !maps || nrows < 1 || ncols < 1) {
    fprintf(stderr, "plot: plot_heatmaps needs a file base name and a grid of at least 1x1\n");
    return -1;
  }
  int np = nrows * ncols;
  int mr = 0, mc = 0; /* largest matrix: panels share one cell size */
  for (int k = 0; k < np; k++) {
    if (!maps[k].m || maps[k].rows < 1 || maps[k].cols < 1) {
      fprintf(stderr, "plot: heatmap %d of '%s' has no data (%d x %d)\n", k, base,
              maps[k].rows, maps[k].cols);
      return -1;
    }
    if (maps[k].rows > mr) mr = maps[k].rows;
    if (maps[k].cols > mc) mc = maps[k].cols;
  }
  const char *const *pal = k_reds;
  if (palette && !strcmp(palette, "Blues")) {
    pal = k_blues;
  } else if (palette && strcmp(palette, "Reds") != 0) {
    fprintf(stderr, "plot: unknown palette '%s' for '%s' (use \"Reds\" or \"Blues\"); using Reds\n",
            palette, base);
  }
  Paths p;
  paths_init(&p, base);
  if (ensure_dir(&p) != 0) {
    paths_free(&p);
    return -1;
  }

  /* shared colour range over all panels */
  double lo = INFINITY, hi = -INFINITY;
  for (int k = 0; k < np; k++)
    for (long i = 0; i < (long)maps[k].rows * maps[k].cols; i++) {
      double v = maps[k].m[i];
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

  /* ---- layout, in pixels at 2x (matplotlib's 100 dpi). Square cells like imshow, one cell
   * size for all panels. Around the panels: y tick labels and label on the left, x ones
   * below, a title line above every row, the colour bar and its labels on the right. */
  const double s = 2.0;
  const double fontpt = 10.0 * s, em = fontpt * 4.0 / 3.0;
  bool any_title = false;
  for (int k = 0; k < np; k++) any_title |= has_label(maps[k].title);
  int ydigits = 1, cbchars = 1;
  for (int v = mr - 1; v >= 10; v /= 10) ydigits++;
  {
    char buf[64];
    double cv[4] = {lo, hi, (hi - lo) / 4, lo + (hi - lo) / 2};
    for (int i = 0; i < 4; i++) {
      int n = snprintf(buf, sizeof buf, "%g", cv[i]);
      if (n > cbchars) cbchars = n;
    }
  }
  double xw = text_width(xlabel, em), yw = text_width(ylabel, em);
  double left = (has_label(ylabel) ? 2.1 * em : 0.3 * em) + (ydigits * 0.62 + 0.9) * em;
  double bottom = (has_label(xlabel) ? 1.6 * em : 0.2 * em) + 2.3 * em;
  double title_h = any_title ? 1.6 * em : 0.4 * em;
  double hgap = 0.6 * em, vgap = 1.1 * em, pad = 0.7 * em;
  double cb_gap = 0.9 * em, cb_right = (cbchars * 0.62 + 1.2) * em;
  if (has_label(cblabel)) cb_right += 1.7 * em; /* the bar's label, rotated, beside its ticks */
  /* cell size: a panel of about 300 x 300 px (d2l's 2.5 in figure at 2x), its long side at
   * most 450 px, the whole canvas at most ~1900 px wide; a caller's size overrides */
  double cell = sqrt(90000.0 / ((double)mr * mc));
  if (cell * (mr > mc ? mr : mc) > 450) cell = 450.0 / (mr > mc ? mr : mc);
  double fixed_w = left + (ncols - 1) * hgap + cb_gap + 1.0 * em + cb_right + pad;
  double fixed_h = pad + nrows * title_h + (nrows - 1) * vgap + bottom;
  if (fixed_w + ncols * mc * cell > 1900) cell = (1900 - fixed_w) / (ncols * mc);
  if (width > 0) cell = (width - fixed_w) / (ncols * mc);
  if (height > 0) {
    double c2 = (height - fixed_h) / (nrows * mr);
    if (width <= 0 || c2 < cell) cell = c2;
  }
  if (cell < 1) cell = 1;
  /* Titles no wider than their panel: wrapped at spaces (a caller's '\n' always breaks); a
   * word wider than the panel widens the cells where the caller left the width free, else the
   * titles' font shrinks. More lines make the title band taller (and, at a fixed height, the
   * cells smaller, so wrap again). */
  char(*wrapped)[256] = xcalloc((size_t)np, sizeof *wrapped);
  double title_scale = 1.0;
  for (int iter = 0; any_title && iter < 5; iter++) {
    /* a title at most 25% too wide for a panel of a fixed size is set smaller, not broken */
    double unwrapped = 0;
    for (int k = 0; k < np; k++)
      for (const char *t = maps[k].title; t && *t;) {
        size_t len = strcspn(t, "\n");
        unwrapped = fmax(unwrapped, text_width_n(t, len, title_scale * em));
        t += len + (t[len] == '\n');
      }
    if ((width > 0 || height > 0) && unwrapped > mc * cell && unwrapped * 0.8 <= mc * cell &&
        title_scale > 0.8) {
      title_scale *= mc * cell / unwrapped * 0.98;
      continue;
    }
    double widest = 0;
    int lines = 1;
    for (int k = 0; k < np; k++) {
      if (!has_label(maps[k].title)) continue;
      double w;
      int l = wrap_title(maps[k].title, title_scale * em, mc * cell, wrapped[k],
                         sizeof wrapped[k], &w);
      if (l > lines) lines = l;
      if (w > widest) widest = w;
    }
    double want_h = (1.2 * lines + 0.15) * title_scale * em;
    bool changed = false;
    if (want_h > title_h + 0.5) {
      title_h = want_h;
      changed = true;
      if (height > 0) { /* fixed height: the taller title band comes out of the cells */
        double fh = pad + nrows * title_h + (nrows - 1) * vgap + bottom;
        double c2 = (height - fh) / (nrows * mr);
        if (c2 < cell) cell = c2 < 1 ? 1 : c2;
      }
    }
    if (widest > mc * cell + 0.5) {
      changed = true;
      if (width <= 0 && height <= 0) cell = (widest + 2) / mc;
      else if (title_scale > 0.6) /* no smaller than 0.6 of the text: beyond, it stays wide */
        title_scale = fmax(0.6, title_scale * (mc * cell) / widest * 0.98);
    }
    if (!changed) break;
  }
  double panel_w = mc * cell, panel_h = mr * cell;
  /* an x label wider than its panel needs room beside it */
  if (xw > panel_w) {
    if (ncols > 1 && hgap < xw - panel_w + 0.8 * em) hgap = xw - panel_w + 0.8 * em;
    if (left < (xw - panel_w) / 2 + pad) left = (xw - panel_w) / 2 + pad;
  }
  double area_h = nrows * (title_h + panel_h) + (nrows - 1) * vgap; /* titles + panels */
  double span_h = area_h - title_h; /* top of the first panel to bottom of the last */
  /* the colour bar: 80% of the panels' height, at least 7 lines even beside a 1 x 10 strip */
  double cb_h = fmax(0.8 * span_h, 7 * em), cb_w = fmax(cb_h / 20, 1.0 * em);
  if (yw > span_h && yw > cb_h) cb_h = fmin(yw, 12 * em);
  double y_top = pad; /* top of the first title line */
  double cb_top = pad + title_h + (span_h - cb_h) / 2;
  if (cb_h > span_h) { /* panels centered on the bar */
    cb_top = pad;
    y_top = pad + (cb_h - span_h) / 2 - title_h;
    if (y_top < pad) {
      cb_top += pad - y_top;
      y_top = pad;
    }
  }
  double nat_w = left + ncols * panel_w + (ncols - 1) * hgap + cb_gap + cb_w + cb_right + pad;
  double nat_h = fmax(y_top + area_h + bottom, cb_top + cb_h + pad);
  int W = width > 0 ? width : (int)ceil(nat_w);
  int H = height > 0 ? height : (int)ceil(nat_h);
  double x_off = fmax(0, (W - nat_w) / 2), y_off = fmax(0, (H - nat_h) / 2);
  y_top += y_off;
  cb_top += y_off;
  /* colour bar ticks: one per ~1.4 lines of its height (6 at most), at nice values */
  int cb_bins = (int)(cb_h / (1.4 * em));
  double cb_step = nice_step(lo, hi, (cb_bins < 2 ? 2 : cb_bins > 6 ? 6 : cb_bins) + 1);
  double cb_x = x_off + left + ncols * panel_w + (ncols - 1) * hgap + cb_gap;

  /* ---- .dat */
  FILE *f = open_w(p.dat);
  if (!f) {
    paths_free(&p); free(wrapped);
    return -1;
  }
  fprintf(f, "# %s.dat — data of %s.png (plot_heatmaps, %d x %d panels).\n", p.name, p.name,
          nrows, ncols);
  fputs("# One matrix per panel, blocks separated by two blank lines ('index k' = panel k,\n"
        "# row-major over the grid). Each line is one matrix row, row 0 first (drawn at the\n"
        "# top); gnuplot reads a block with 'matrix': x = column, y = row. NaN = no value.\n",
        f);
  for (int k = 0; k < np; k++) {
    fprintf(f, "#   index %d: panel (%d, %d) %d x %d", k, k / ncols, k % ncols, maps[k].rows,
            maps[k].cols);
    if (has_label(maps[k].title)) {
      fputs(" \"", f);
      put_comment_text(f, maps[k].title);
      fputc('"', f);
    }
    fputc('\n', f);
  }
  for (int k = 0; k < np; k++) {
    fprintf(f, "%s# index %d\n", k ? "\n\n" : "\n", k);
    for (int r = 0; r < maps[k].rows; r++) {
      const float *row = maps[k].m + (long)r * maps[k].cols;
      for (int c = 0; c < maps[k].cols; c++) {
        if (c) fputc(' ', f);
        put_num(f, row[c]);
      }
      fputc('\n', f);
    }
  }
  if (close_w(f, p.dat) != 0) {
    paths_free(&p); free(wrapped);
    return -1;
  }

  /* ---- .gp */
  f = open_w(p.gp);
  if (!f) {
    paths_free(&p); free(wrapped);
    return -1;
  }
  put_preamble(f, &p, "heatmaps", W, H, fontpt);
  fputs("set palette defined (", f);
  for (int i = 0; i < 9; i++) fprintf(f, "%s%d '%s'", i ? ", " : "", i, pal[i]);
  fprintf(f,
          ")  # matplotlib's %s\n"
          "set cbrange [%.10g:%.10g]\n"
          "set border 15 lw %.2f lc rgb '#000000'\n"
          "set tics out nomirror scale 0.8 front\n"
          "set cbtics %.10g out nomirror scale 0.8\n"
          "set format x '%%g'\nset format y '%%g'\nset format cb '%%g'\n"
          "unset key\nunset grid\n",
          pal == k_blues ? "Blues" : "Reds", lo, hi, 1.1 * s, cb_step);
  if (has_label(cblabel)) { /* placed by hand: gnuplot's cblabel ignores a user colorbox's
                             * tick labels and runs into them */
    fputs("set label 998 ", f);
    put_q(f, cblabel);
    fprintf(f, " at screen %.5f, screen %.5f center rotate by 90 front\n",
            (cb_x + cb_w + (cbchars * 0.62 + 1.6) * em) / W, 1 - (cb_top + cb_h / 2) / H);
  }
  fputs("set multiplot\n", f);
  /* One y label for the whole grid, centred on the panels at the left edge: gnuplot's own
   * per-panel ylabel runs into the tick labels and the next row when panels are short. */
  if (has_label(ylabel)) {
    fputs("set label 999 ", f);
    put_q(f, ylabel);
    fprintf(f, " at screen %.5f, screen %.5f center rotate by 90 front\n",
            (x_off + 0.8 * em) / W, 1 - (y_top + title_h + span_h / 2) / H);
  }
  for (int k = 0; k < np; k++) {
    if (k == 1 && has_label(ylabel)) fputs("unset label 999\n", f);
    if (k == 1 && has_label(cblabel)) fputs("unset label 998\n", f);
    int r = k / ncols, c = k % ncols;
    const HeatMap *hm = &maps[k];
    double x0 = x_off + left + c * (panel_w + hgap);
    double ytop = y_top + r * (title_h + panel_h + vgap) + title_h;
    /* this panel's own extent inside its slot, centered when smaller than the largest */
    double w = hm->cols * cell, h = hm->rows * cell;
    double px0 = x0 + (panel_w - w) / 2, ptop = ytop + (panel_h - h) / 2;
    fprintf(f, "\n# ---- panel (%d, %d)\n", r, c);
    fprintf(f,
            "set lmargin at screen %.5f\nset rmargin at screen %.5f\n"
            "set tmargin at screen %.5f\nset bmargin at screen %.5f\n",
            px0 / W, (px0 + w) / W, 1 - ptop / H, 1 - (ptop + h) / H);
    fputs("set title ", f);
    put_qq(f, has_label(hm->title) ? wrapped[k] : "");
    if (title_scale < 1) fprintf(f, " font ',%.1f'", fontpt * title_scale);
    fprintf(f, " offset 0,-0.4\n");
    fprintf(f, "set xrange [-0.5:%.1f]\nset yrange [%.1f:-0.5]\n", hm->cols - 0.5,
            hm->rows - 0.5);
    int xdig = 1;
    for (int v = hm->cols - 1; v >= 10; v /= 10) xdig++;
    fprintf(f, "set xtics 0,%d,%d\nset ytics 0,%d,%d\n",
            tick_step(hm->cols, w, (xdig * 0.62 + 1.0) * em), hm->cols - 1,
            tick_step(hm->rows, h, 1.4 * em), hm->rows - 1);
    /* like sharex/sharey subplots: tick labels and axis labels only on the outer panels */
    bool bottom_row = r == nrows - 1, left_col = c == 0;
    fputs(bottom_row ? "set format x '%g'\n" : "set format x ''\n", f);
    fputs(left_col ? "set format y '%g'\n" : "set format y ''\n", f);
    fputs("set xlabel ", f);
    put_q(f, bottom_row && has_label(xlabel) ? xlabel : "");
    fputs(" offset 0,0.2\nunset ylabel\n", f);
    if (k == np - 1)
      fprintf(f, "set colorbox user origin screen %.5f,%.5f size screen %.5f,%.5f bdefault\n",
              cb_x / W, 1 - (cb_top + cb_h) / H, cb_w / W, cb_h / H);
    else
      fputs("unset colorbox\n", f);
    if (hm->rows >= 2 && hm->cols >= 2) {
      fprintf(f, "plot gp_dat index %d matrix using 1:2:3 with image\n", k);
    } else {
      /* gnuplot draws no image for a single row or column ('with image' wants 2 x 2, 'with
       * image pixels' silently draws nothing), so cells become filled boxes that overlap
       * their neighbours by ~1 px to leave no antialiasing seams; the frame clips them. */
      double d = 0.5 + fmin(0.1, 0.75 / cell);
      fprintf(f,
              "plot gp_dat index %d matrix using 1:2:(%.4f):(%.4f):3 with boxxyerror "
              "fs solid 1.0 noborder lc palette z\n",
              k, d, d);
    }
  }
  fputs("unset multiplot\nset output\n", f);
  if (close_w(f, p.gp) != 0) {
    paths_free(&p); free(wrapped);
    return -1;
  }
  int rc = render(&p);
  paths_free(&p); free(wrapped);
  return rc;
}

/* ------------------------------------------------------------------ animator */

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
  Axes ax = {NULL, a->xlabel, a->ylabel, a->xmin, a->xmax, NAN, NAN, a->logy, ser, a->nseries};
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
