/* Tests of common/plot: the .dat/.gp pair every figure writes (with gnuplot switched off), that
 * the data reads back, that the scripts name the right terminal and files, I/O errors, and —
 * where gnuplot is installed — that real PNGs come out, also when a .gp is rerun by hand from
 * another directory. Everything goes to a mkdtemp directory that is removed afterwards. */
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/plot.h"
#include "../golden_io.h"
#include "../test.h"

/* ---------- helpers */

/* Like CHECK_STR_CONTAINS, but a failure quotes only the missing piece, not the whole file. */
#define CHECK_HAS(text, sub)                                                              \
  do {                                                                                    \
    if (!strstr((text), (sub))) test_fail(__FILE__, __LINE__, "%s lacks \"%s\"", #text, (sub)); \
  } while (0)

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void rm_rf(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static char *make_tmpdir(void) {
  const char *t = getenv("TMPDIR");
  char tmpl[512];
  snprintf(tmpl, sizeof tmpl, "%s/al_plot_XXXXXX", t && *t ? t : "/tmp");
  char *d = mkdtemp(tmpl);
  if (!d) return NULL;
  char *r = malloc(strlen(d) + 1);
  strcpy(r, d);
  return r;
}

static bool file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && st.st_size > 0;
}

static bool is_png(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  unsigned char m[8] = {0};
  size_t n = fread(m, 1, 8, f);
  fclose(f);
  static const unsigned char magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  return n == 8 && memcmp(m, magic, 8) == 0;
}

/* The numbers of block k of a .dat, in reading order: plot.c opens every block with a
 * "# index k" comment (so an empty block still counts) and ends it with a blank line.
 * Returns how many were read (at most cap are stored), -1 when the block is missing. */
static int read_index(const char *text, int k, double *out, int cap) {
  char tag[32];
  snprintf(tag, sizeof tag, "\n# index %d", k);
  const char *p = strstr(text, tag);
  if (!p) return -1;
  p = strchr(p + 1, '\n'); /* end of the comment line */
  int n = 0;
  while (p && *++p && *p != '\n' && *p != '#') { /* one data line per pass */
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char line[4096];
    if (len >= sizeof line) len = sizeof line - 1;
    memcpy(line, p, len);
    line[len] = '\0';
    for (char *q = line, *end;; q = end) {
      double v = strtod(q, &end);
      if (end == q) break;
      if (n < cap) out[n] = v;
      n++;
    }
    p = eol;
  }
  return n;
}

static char *join(const char *dir, const char *name) {
  char *s = malloc(strlen(dir) + strlen(name) + 2);
  sprintf(s, "%s/%s", dir, name);
  return s;
}

/* ---------- without gnuplot: data + script */

TEST(plot_axes_writes_dat_and_gp_without_gnuplot) {
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  plot_force_no_gnuplot(1);
  CHECK(!plot_have_gnuplot());
  float x[5] = {0, 1, 2, 3, 4}, y1[5] = {1.5f, -2.25f, 3.125f, 1e-7f, 123456.7f};
  float y2[3] = {0.1f, 0.2f, NAN};
  Series s[2] = {{"train", x, y1, 5, "lines"}, {"test", x, y2, 3, "dashed"}};
  Series s3[1] = {{NULL, x, y1, 5, "points"}};
  Axes ax[2] = {{"First", "epoch", "loss", NAN, NAN, NAN, NAN, false, s, 2},
                {"Second", "x", NULL, 0, 4, 0.01, 1e6, true, s3, 1}};
  char *base = join(dir, "fig");
  CHECK_INT(plot_axes_row(base, ax, 2, 0, 0), 1);
  char *dat = join(dir, "fig.dat"), *gp = join(dir, "fig.gp"), *png = join(dir, "fig.png");
  CHECK(file_exists(dat));
  CHECK(file_exists(gp));
  CHECK(!file_exists(png));
  char *d = slurp(dat), *g = slurp(gp);
  CHECK(d && g);
  if (d && g) {
    /* %.6g keeps 6 significant digits: relative error below 5e-6 */
    double v[32];
    CHECK_INT(read_index(d, 0, v, 32), 10);
    for (int i = 0; i < 5; i++) {
      CHECK_NEAR(v[2 * i], x[i], 5e-6 * fabs(x[i]));
      CHECK_NEAR(v[2 * i + 1], y1[i], 5e-6 * fabs(y1[i]));
    }
    CHECK_INT(read_index(d, 1, v, 32), 6);
    CHECK_NEAR(v[3], 0.2, 1e-7);
    CHECK(isnan(v[5])); /* NaN written as a missing point */
    CHECK_INT(read_index(d, 2, v, 32), 10);
    CHECK_NEAR(v[9], y1[4], 5e-6 * fabs(y1[4]));
    CHECK_HAS(d, "Columns: x y");
    CHECK_HAS(d, "\"train\"");
    /* the script: terminal chain, its files by script-relative name, the styling */
    CHECK_HAS(g, "set terminal pngcairo size 1400,500");
    CHECK_HAS(g, "set terminal png ");
    CHECK_HAS(g, "set terminal svg ");
    CHECK_HAS(g, "gp_dir.'fig.png'");
    CHECK_HAS(g, "gp_dir.'fig.svg'");
    CHECK_HAS(g, "gp_dat = gp_dir.'fig.dat'");
    CHECK_HAS(g, "set multiplot layout 1,2");
    CHECK_HAS(g, "set title 'First'");
    CHECK_HAS(g, "set xlabel 'epoch'");
    CHECK_HAS(g, "title 'train'");
    CHECK_HAS(g, "lc rgb '#1f77b4'");
    CHECK_HAS(g, "lc rgb '#ff7f0e'");
    CHECK_HAS(g, "with points");
    CHECK_HAS(g, "dt (");          /* dashed */
    CHECK_HAS(g, "set logscale y"); /* panel 2 */
    CHECK_HAS(g, "set xrange [0:4]");
    CHECK_HAS(g, "set yrange [0.01:1000000]");
    CHECK(strstr(g, "DISPLAY") == NULL);
  }
  free(d);
  free(g);
  free(dat);
  free(gp);
  free(png);
  free(base);
  plot_force_no_gnuplot(0);
  rm_rf(dir);
  free(dir);
}

TEST(plot_heatmaps_writes_matrices_without_gnuplot) {
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  plot_force_no_gnuplot(1);
  float m[6][12];
  HeatMap hm[6];
  char titles[6][32]; /* "Head " + any int fits */
  for (int k = 0; k < 6; k++) {
    for (int i = 0; i < 12; i++) m[k][i] = 0.01f * (float)(k * 12 + i) - 0.3f;
    snprintf(titles[k], sizeof titles[k], "Head %d", k);
    hm[k] = (HeatMap){titles[k], m[k], 3, 4};
  }
  char *base = join(dir, "sub dir/heat");
  CHECK_INT(plot_heatmaps(base, hm, 2, 3, "Keys", "Queries", "Blues", 0, 0), 1);
  char *dat = join(dir, "sub dir/heat.dat"), *gp = join(dir, "sub dir/heat.gp");
  char *d = slurp(dat), *g = slurp(gp);
  CHECK(d && g);
  if (d && g) {
    double v[16];
    for (int k = 0; k < 6; k++) {
      CHECK_INT(read_index(d, k, v, 16), 12);
      /* %.6g round trip; values are O(1), so 1e-6 absolute */
      for (int i = 0; i < 12; i++) CHECK_NEAR(v[i], m[k][i], 1e-6);
    }
    CHECK_HAS(d, "\"Head 5\"");
    CHECK_HAS(g, "#08306b");                  /* darkest Blues */
    /* one colour range over all panels: min of the first, max of the last (float inputs) */
    double lo = 0, hi = 0;
    const char *cb = strstr(g, "set cbrange [");
    CHECK(cb && sscanf(cb, "set cbrange [%lf:%lf]", &lo, &hi) == 2);
    CHECK_NEAR(lo, m[0][0], 1e-6);
    CHECK_NEAR(hi, m[5][11], 1e-6);
    CHECK_HAS(g, "set yrange [2.5:-0.5]");   /* row 0 on top */
    CHECK_HAS(g, "with image");
    CHECK_HAS(g, "set title \"Head 3\"");
    CHECK_HAS(g, "gp_dir.'heat.png'");
    /* one colour bar: five panels switch theirs off */
    int off = 0;
    for (const char *p = g; (p = strstr(p, "unset colorbox")); p++) off++;
    CHECK_INT(off, 5);
    CHECK_HAS(g, "set colorbox user");
  }
  free(d);
  free(g);
  free(dat);
  free(gp);
  free(base);
  plot_force_no_gnuplot(0);
  rm_rf(dir);
  free(dir);
}

TEST(plot_animator_keeps_copies_and_skips_nan) {
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  plot_force_no_gnuplot(1);
  char *base = join(dir, "anim");
  char leg0[] = "train loss", leg1[] = "test acc";
  const char *legs[2] = {leg0, leg1};
  Animator *a = animator_new(base, "epoch", "loss", legs, 2, 1, 4, false, 2);
  CHECK(a != NULL);
  if (a) {
    leg0[0] = 'X'; /* the animator must have copied its legends */
    for (int e = 1; e <= 4; e++) {
      double ys[2] = {1.0 / e, e % 2 ? NAN : 0.5 + 0.1 * e};
      animator_add(a, e, ys);
    }
    CHECK_INT(animator_close(a), 1);
    char *dat = join(dir, "anim.dat");
    char *d = slurp(dat);
    CHECK(d != NULL);
    if (d) {
      double v[16];
      CHECK_INT(read_index(d, 0, v, 16), 8);
      CHECK_NEAR(v[6], 4, 0);
      CHECK_NEAR(v[7], 0.25, 1e-7);
      CHECK_INT(read_index(d, 1, v, 16), 4); /* epochs 2 and 4 only */
      CHECK_NEAR(v[0], 2, 0);
      CHECK_NEAR(v[3], 0.9, 1e-7);
      CHECK_HAS(d, "\"train loss\"");
    }
    free(d);
    free(dat);
  }
  free(base);
  plot_force_no_gnuplot(0);
  rm_rf(dir);
  free(dir);
}

TEST(plot_book_formats_markers_and_wrapped_titles) {
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  plot_force_no_gnuplot(1);
  float x[5] = {0, 1, 2, 3, 4}, y[5] = {1, 2, 3, 2, 1}, one_x[1] = {1}, one_y[1] = {0.5f};
  float gap_y[5] = {1, NAN, 3, NAN, 2}; /* points 0, 2 and 4 have no finite neighbour */
  Series s[5] = {{"a", x, y, 5, "-"},
                 {"b", x, y, 5, "m--"},
                 {"c", x, y, 5, "o alpha=0.5"},
                 {"one", one_x, one_y, 1, "g-."},
                 {"gaps", x, gap_y, 5, "r:"}};
  Axes ax = {NULL, "x", "y", NAN, NAN, NAN, NAN, false, s, 5, false};
  char *base = join(dir, "fmt");
  CHECK_INT(plot_axes_row(base, &ax, 1, 0, 0), 1);
  char *gp = join(dir, "fmt.gp");
  char *g = slurp(gp);
  CHECK(g != NULL);
  if (g) {
    /* d2l's formats; an explicit colour does not use up the cycle, so 'o' gets the second */
    CHECK_HAS(g, "index 0 using 1:2 with lines lw 4.00 dt solid lc rgb '#1f77b4' title 'a'");
    CHECK_HAS(g, "index 1 using 1:2 with lines lw 4.00 dt (14.8,6.4) lc rgb '#bf00bf' title 'b'");
    CHECK_HAS(g, "with points pt 7 ps 2.60 lc rgb '#80ff7f0e' title 'c'"); /* 50% transparent */
    /* lone points get markers, in the series' own colour and line style */
    CHECK_HAS(g, "index 3 using 1:2 with linespoints pt 7 ps 2.60 lw 4.00 dt (25.6,6.4,4.0,6.4) "
                 "lc rgb '#008000' title 'one'");
    CHECK_HAS(g, "index 4 using 1:2 with linespoints pt 7 ps 2.60 lw 4.00 dt (4.0,6.6) "
                 "lc rgb '#ff0000' title 'gaps'");
  }
  free(g);
  free(gp);
  free(base);

  /* heatmap titles: a caller's '\n' breaks, a long title wraps at spaces to its panel, and
   * the colour bar carries its label */
  float m[4 * 4];
  for (int i = 0; i < 16; i++) m[i] = (float)i / 15;
  HeatMap hm[2] = {{"coat\n(true: ankle boot)", m, 4, 4},
                   {"a rather long title that cannot fit one small panel", m, 4, 4}};
  base = join(dir, "titles");
  CHECK_INT(plot_heatmaps_cb(base, hm, 1, 2, NULL, NULL, "attention / max", "Reds", 900, 0), 1);
  gp = join(dir, "titles.gp");
  g = slurp(gp);
  CHECK(g != NULL);
  if (g) {
    CHECK_HAS(g, "set title \"coat\\n(true: ankle boot)\"");
    CHECK_HAS(g, "set title \"a rather");
    CHECK(strstr(g, "a rather long title that cannot fit one small panel\"") == NULL);
    CHECK_HAS(g, "set label 998 'attention / max'");
  }
  free(g);
  free(gp);
  free(base);
  plot_force_no_gnuplot(0);
  rm_rf(dir);
  free(dir);
}

TEST(plot_quotes_awkward_file_names) {
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  plot_force_no_gnuplot(1);
  float x[2] = {0, 1}, y[2] = {1, 2};
  Series s = {"it's", x, y, 2, NULL};
  Axes ax = {"a 'quoted' title", NULL, NULL, NAN, NAN, NAN, NAN, false, &s, 1, false};
  char *base = join(dir, "it's a fig");
  CHECK_INT(plot_axes_row(base, &ax, 1, 0, 0), 1);
  char *gp = join(dir, "it's a fig.gp");
  char *g = slurp(gp);
  CHECK(g != NULL);
  if (g) {
    CHECK_HAS(g, "gp_dir.'it''s a fig.dat'");
    CHECK_HAS(g, "gp_dir.'it''s a fig.png'");
    CHECK_HAS(g, "set title 'a ''quoted'' title'");
    CHECK_HAS(g, "title 'it''s'");
  }
  free(g);
  free(gp);
  free(base);
  plot_force_no_gnuplot(0);
  rm_rf(dir);
  free(dir);
}

TEST(plot_io_error_returns_minus_one) {
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  plot_force_no_gnuplot(1);
  /* a regular file where the directory should be: no permission games (tests may run as root) */
  char *blocker = join(dir, "file");
  FILE *f = fopen(blocker, "w");
  CHECK(f != NULL);
  if (f) fclose(f);
  char *base = join(dir, "file/fig");
  float x[1] = {0}, y[1] = {0};
  Series s = {NULL, x, y, 1, NULL};
  Axes ax = {NULL, NULL, NULL, NAN, NAN, NAN, NAN, false, &s, 1, false};
  CHECK_INT(plot_axes_row(base, &ax, 1, 0, 0), -1);
  HeatMap hm = {NULL, y, 1, 1};
  CHECK_INT(plot_heatmaps(base, &hm, 1, 1, NULL, NULL, "Reds", 0, 0), -1);
  CHECK_INT(plot_heatmaps(base, &hm, 0, 1, NULL, NULL, "Reds", 0, 0), -1); /* empty grid */
  free(base);
  free(blocker);
  plot_force_no_gnuplot(0);
  rm_rf(dir);
  free(dir);
}

TEST(plot_env_switch_disables_rendering) {
  const char *old = getenv("AL_NO_GNUPLOT");
  char *saved = old ? strcpy(malloc(strlen(old) + 1), old) : NULL;
  setenv("AL_NO_GNUPLOT", "1", 1);
  plot_force_no_gnuplot(0); /* re-probe */
  CHECK(!plot_have_gnuplot());
  if (saved) setenv("AL_NO_GNUPLOT", saved, 1);
  else unsetenv("AL_NO_GNUPLOT");
  free(saved);
  plot_force_no_gnuplot(0);
}

/* ---------- with gnuplot: real images */

static bool need_gnuplot(const char *test) {
  plot_force_no_gnuplot(0);
  if (plot_have_gnuplot()) return true;
  test_skip("no gnuplot with a png/svg terminal (make deps)");
  return false;
}

/* Only PNG terminals give a .png; a gnuplot with svg alone writes .svg. */
static bool image_ok(const char *dir, const char *name) {
  char buf[600];
  snprintf(buf, sizeof buf, "%s/%s.png", dir, name);
  if (file_exists(buf)) return is_png(buf);
  snprintf(buf, sizeof buf, "%s/%s.svg", dir, name);
  return file_exists(buf);
}

TEST(plot_renders_png_with_gnuplot) {
  if (!need_gnuplot("plot_renders_png_with_gnuplot")) return;
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  float x[50], y1[50], y2[50];
  for (int i = 0; i < 50; i++) {
    x[i] = 0.1f * i;
    y1[i] = sinf(x[i]);
    y2[i] = expf(-x[i]);
  }
  Series s[3] = {{"sin", x, y1, 50, "lines"},
                 {"exp", x, y2, 50, "dashed"},
                 {NULL, x, y2, 10, "points"}};
  Series sl[1] = {{"exp", x, y2, 50, "linespoints"}};
  Axes ax[2] = {{"lines", "x", "y", NAN, NAN, -1.5, 1.5, false, s, 3},
                {"log", "x", NULL, NAN, NAN, NAN, NAN, true, sl, 1}};
  char *base = join(dir, "row");
  CHECK_INT(plot_axes_row(base, ax, 2, 0, 0), 0);
  CHECK(image_ok(dir, "row"));

  /* rerun the script by hand from another directory: paths are script-relative */
  char *png = join(dir, "row.png");
  if (file_exists(png)) {
    remove(png);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cd / && gnuplot '%s/row.gp' 2>&1", dir);
    CHECK_INT(system(cmd), 0);
    CHECK(is_png(png));
  }
  free(png);
  free(base);
  rm_rf(dir);
  free(dir);
}

TEST(plot_heatmap_grid_2x3_and_strip_with_gnuplot) {
  if (!need_gnuplot("plot_heatmap_grid_2x3_and_strip_with_gnuplot")) return;
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  enum { R = 20, C = 16 };
  static float m[6][R * C];
  HeatMap hm[6];
  for (int k = 0; k < 6; k++) {
    for (int i = 0; i < R * C; i++) m[k][i] = (float)((i * (k + 3)) % 17) / 17.0f;
    hm[k] = (HeatMap){k == 2 ? "third" : NULL, m[k], R, C};
  }
  char *base = join(dir, "grid");
  CHECK_INT(plot_heatmaps(base, hm, 2, 3, "Keys", "Queries", "Reds", 0, 0), 0);
  CHECK(image_ok(dir, "grid"));
  /* a 1 x 10 strip and a 10 x 1 column (gnuplot's image styles cannot draw these) */
  float strip[10] = {0.5f, 0.5f, 0, 0, 0, 0, 0, 0, 0, 0};
  HeatMap hs = {"strip", strip, 1, 10}, hc = {NULL, strip, 10, 1};
  char *b2 = join(dir, "strip"), *b3 = join(dir, "col");
  CHECK_INT(plot_heatmaps(b2, &hs, 1, 1, "Keys", "Queries", "Reds", 0, 0), 0);
  CHECK(image_ok(dir, "strip"));
  CHECK_INT(plot_heatmaps(b3, &hc, 1, 1, NULL, NULL, "Blues", 400, 300), 0);
  CHECK(image_ok(dir, "col"));
  free(b2);
  free(b3);
  free(base);
  rm_rf(dir);
  free(dir);
}

TEST(plot_animator_with_gnuplot) {
  if (!need_gnuplot("plot_animator_with_gnuplot")) return;
  char *dir = make_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  char *base = join(dir, "loss");
  const char *legs[1] = {"loss"};
  Animator *a = animator_new(base, "epoch", "loss", legs, 1, 1, 6, true, 3);
  CHECK(a != NULL);
  if (a) {
    for (int e = 1; e <= 3; e++) {
      double y = 2.0 / e;
      animator_add(a, e, &y);
    }
    CHECK(image_ok(dir, "loss")); /* drawn after `every` = 3 additions */
    for (int e = 4; e <= 6; e++) {
      double y = 2.0 / e;
      animator_add(a, e, &y);
    }
    CHECK_INT(animator_close(a), 0);
    CHECK(image_ok(dir, "loss"));
  }
  free(base);
  rm_rf(dir);
  free(dir);
}
