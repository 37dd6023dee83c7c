/* plot.c — figures through gnuplot, headless, styled after matplotlib as d2l uses it: the
 * driver the figure kinds share (plot_lines.c, plot_heatmap.c, plot_animator.c; the map is in
 * plot_draw.h). It calls none of them.
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
#define _DARWIN_C_SOURCE /* macOS: strcasestr is hidden by _POSIX_C_SOURCE alone */
#include "plot.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot_draw.h"
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
 * where PATH finds it, keys the cached answer (asking starts a gnuplot, which takes a while), so
 * a changed PATH asks again. */
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

static char *strcat3(const char *a, const char *b, const char *c) {
  size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
  char *s = xmalloc(la + lb + lc + 1);
  memcpy(s, a, la);
  memcpy(s + la, b, lb);
  memcpy(s + la + lb, c, lc + 1);
  return s;
}

void paths_init(Paths *p, const char *base) {
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

void paths_free(Paths *p) {
  free(p->dir);
  free(p->name);
  free(p->dat);
  free(p->gp);
  free(p->png);
  free(p->svg);
}

/* Write s as the body of a single-quoted gnuplot string ('' is a literal quote; newlines,
 * which cannot appear inside one, become spaces). */
void put_q(FILE *f, const char *s) {
  fputc('\'', f);
  for (; s && *s; s++) {
    if (*s == '\'') fputs("''", f);
    else if (*s == '\n' || *s == '\r') fputc(' ', f);
    else fputc(*s, f);
  }
  fputc('\'', f);
}

/* Text for a one-line '#' comment in the .dat header. */
void put_comment_text(FILE *f, const char *s) {
  for (; s && *s; s++) fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
}

void put_num(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.6g", v);
  else fputs("NaN", f); /* gnuplot reads NaN as a missing value */
}

FILE *open_w(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "plot: cannot write '%s': %s\n", path, strerror(errno));
  return f;
}

/* fclose with the write error check; -1 and a message naming the file on failure. */
int close_w(FILE *f, const char *path) {
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
int ensure_dir(const Paths *p) {
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
void put_preamble(FILE *f, const Paths *p, const char *what, int w, int h, double fontpt) {
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
int render(const Paths *p) {
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
double text_width_n(const char *s, size_t n, double em) {
  double w = 0;
  for (size_t i = 0; s && i < n && s[i]; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 32 && c < 127) w += k_dejavu_w[c - 32] / 1000.0;
    else if ((c & 0xC0) != 0x80) w += 0.62; /* the first byte of a non-ASCII character */
  }
  return w * em;
}

double text_width(const char *s, double em) {
  return text_width_n(s, s ? strlen(s) : 0, em);
}

/* Word-wrap a title into at most 3 lines no wider than max_px (the caller's '\n' always break);
 * out gets the lines joined by '\n'. Returns the number of lines and, in *widest, the widest
 * line's width (which exceeds max_px only where one word alone is wider). */
int wrap_title(const char *s, double em, double max_px, char *out, size_t cap,
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
void put_qq(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if (*s == '\n') fputs("\\n", f);
    else if (*s == '\r') fputc(' ', f);
    else fputc(*s, f);
  }
  fputc('"', f);
}

/* nice_step (plot_draw.h): the steps 1, 2, 2.5, 5 of each power of ten. */
double nice_step(double lo, double hi, int maxticks) {
  double raw = (hi - lo) / (maxticks > 1 ? maxticks - 1 : 1);
  if (!(raw > 0) || !isfinite(raw)) return 1;
  double mag = pow(10, floor(log10(raw)));
  static const double m[] = {1, 2, 2.5, 5, 10};
  for (int i = 0; i < 5; i++)
    if (m[i] * mag >= raw * (1 - 1e-9)) return m[i] * mag;
  return 10 * mag;
}
