/* weave — turn a literate chapter (chapters/NN_name/labNN.c) into Markdown. Built and run by
 * `make docs` (docs/docs.mk); docs/README.md describes the output.
 *
 *   weave mark SRC.c > MARKED.c
 *       The chapter with one `al_weave_mark(k);` call after every prose block k that sits at
 *       statement level inside a function. Built and run, the marked program prints a marker
 *       line (RS "weave:k" RS) on stdout each time it passes block k, so its output can be cut
 *       into the pieces each stretch of code printed. Line numbers are unchanged (#line).
 *
 *   weave doc SRC.c [--log FILE] [--fig-dir DIR] [--md-dir DIR] [--command TEXT] [--status N]
 *       Markdown on stdout: the prose blocks as they are, the code between them as ```c blocks,
 *       and the program's output from --log (the marked run's stdout + stderr) as ```text
 *       blocks after the code that printed it. A `[figure PATH.png]` line in the output becomes
 *       an image right there; PNGs in --fig-dir the output never named go to a closing
 *       "Figures" section. A log without markers (an unmarked run) goes to a closing
 *       "Program output" section. Paths are written relative to --md-dir (where the .md goes).
 *       Figures are numbered and captioned from --captions FILE ("labNN/NAME caption" lines).
 *
 *   weave mathml PAGE.html > FIXED.html
 *       pandoc's MathML with upright names (\mathrm{softmax}) that Chromium also sets upright.
 *
 * Prose blocks open with a line holding only `/ *** ` (no space) and end at the next `* /`; the
 * text is Markdown with LaTeX math and is copied verbatim except for two removals: a common
 * indentation, and a Javadoc-style leading " * " when every line has one (and the block is
 * clearly in that style: some line is a bare " *" or the first line is a heading). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MARK_BYTE '\036' /* ASCII record separator: never printed by a lab */

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("weave: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

static void *xrealloc(void *p, size_t n) {
  p = realloc(p, n ? n : 1);
  if (!p) die("out of memory");
  return p;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open %s: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = xrealloc(NULL, cap);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n < 2) buf = xrealloc(buf, cap *= 2);
  }
  if (ferror(f)) die("error reading %s", path);
  fclose(f);
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

/* ------------------------------------------------------------------ growable string */
typedef struct {
  char *s;
  size_t n, cap;
} Str;

static void str_addn(Str *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->s = xrealloc(b->s, b->cap);
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = '\0';
}
static void str_add(Str *b, const char *s) { str_addn(b, s, strlen(s)); }

/* ------------------------------------------------------------------ chapter parsing */
typedef struct {
  size_t start, end;           /* byte range of the whole comment, "/ *** " .. "* /" inclusive */
  size_t line_start, line_end; /* the same widened to whole lines when alone on them */
  int depth;                   /* brace depth at the block: 0 = file scope */
  int markable;                /* a statement may follow it: the marked build prints a marker */
} Block;

typedef struct {
  const char *src;
  size_t len;
  Block *b;
  int n;
} Chapter;

static int is_ident(int c) { return isalnum(c) || c == '_'; }

/* The next code token after position i (skipping space and comments) starts with `word`? */
static int next_word_is(const char *s, size_t len, size_t i, const char *word) {
  for (;;) {
    while (i < len && isspace((unsigned char)s[i])) i++;
    if (i + 1 < len && s[i] == '/' && s[i + 1] == '*') {
      const char *e = strstr(s + i + 2, "*/");
      if (!e) return 0;
      i = (size_t)(e - s) + 2;
    } else if (i + 1 < len && s[i] == '/' && s[i + 1] == '/') {
      while (i < len && s[i] != '\n') i++;
    } else {
      break;
    }
  }
  size_t w = strlen(word);
  return i + w <= len && strncmp(s + i, word, w) == 0 && !(i + w < len && is_ident(s[i + w]));
}

/* One pass of a small C lexer: comments, strings, character constants and preprocessor lines
 * are skipped; braces give the depth; `last`/`before_last` are the last two significant code
 * characters (preprocessor lines do not count), which decide whether a marker statement may
 * follow a block. */
static void parse_chapter(Chapter *ch, const char *path) {
  const char *s = ch->src;
  size_t len = ch->len, i = 0;
  int depth = 0, cap = 0;
  char last = ';', before_last = ';';
  int at_line_start = 1; /* only whitespace so far on this line */
  while (i < len) {
    char c = s[i];
    if (c == '\n') {
      at_line_start = 1;
      i++;
      continue;
    }
    if (at_line_start && c == '#') { /* preprocessor line, with backslash continuations */
      while (i < len && s[i] != '\n') i += (s[i] == '\\' && i + 1 < len) ? 2 : 1;
      continue;
    }
    if (isspace((unsigned char)c)) {
      i++;
      continue;
    }
    at_line_start = 0;
    if (c == '/' && i + 1 < len && s[i + 1] == '/') {
      while (i < len && s[i] != '\n') i++;
      continue;
    }
    if (c == '/' && i + 1 < len && s[i + 1] == '*') {
      const char *e = strstr(s + i + 2, "*/");
      if (!e) die("%s: unterminated comment starting at byte %zu", path, i);
      size_t end = (size_t)(e - s) + 2;
      /* prose: "/ *** " followed by whitespace, not a row of stars */
      if (i + 4 <= len && strncmp(s + i, "/***", 4) == 0 &&
          (i + 4 == len || isspace((unsigned char)s[i + 4]))) {
        if (ch->n == cap) ch->b = xrealloc(ch->b, sizeof(Block) * (size_t)(cap = cap ? 2 * cap : 16));
        Block *b = &ch->b[ch->n++];
        b->start = i;
        b->end = end;
        size_t ls = i;
        while (ls > 0 && (s[ls - 1] == ' ' || s[ls - 1] == '\t')) ls--;
        b->line_start = (ls == 0 || s[ls - 1] == '\n') ? ls : i;
        size_t le = end;
        while (le < len && (s[le] == ' ' || s[le] == '\t')) le++;
        b->line_end = (le == len) ? le : (s[le] == '\n' ? le + 1 : end);
        b->depth = depth;
        b->markable = depth > 0 &&
                      (last == ';' || last == '}' ||
                       (last == '{' && before_last != '=' && before_last != ',')) &&
                      !next_word_is(s, len, end, "else") &&
                      !(last == '}' && next_word_is(s, len, end, "while"));
      }
      i = end;
      continue;
    }
    if (c == '"' || c == '\'') {
      i++;
      while (i < len && s[i] != c && s[i] != '\n') i += (s[i] == '\\') ? 2 : 1;
      i++;
      before_last = last, last = c;
      continue;
    }
    if (c == '{') depth++;
    if (c == '}' && depth > 0) depth--;
    before_last = last, last = c;
    i++;
  }
}

/* ------------------------------------------------------------------ mark */
static int cmd_mark(const char *path) {
  Chapter ch = {0};
  ch.src = read_file(path, &ch.len);
  parse_chapter(&ch, path);
  printf("/* generated by docs/weave.c from %s for make docs: do not edit */\n", path);
  printf("#include <stdio.h>\n");
  printf("__attribute__((unused)) static void al_weave_mark(int k) {\n"
         "  printf(\"\\036weave:%%d\\036\\n\", k);\n}\n");
  /* Line-buffered stdout keeps the lab's stdout and stderr in the order a terminal shows. */
  printf("__attribute__((constructor)) static void al_weave_init(void) {\n"
         "  setvbuf(stdout, NULL, _IOLBF, 0);\n}\n");
  printf("#line 1 \"%s\"\n", path);
  size_t pos = 0;
  for (int k = 0; k < ch.n; k++) {
    const Block *b = &ch.b[k];
    fwrite(ch.src + pos, 1, b->end - pos, stdout);
    if (b->markable) printf(" al_weave_mark(%d);", k);
    pos = b->end;
  }
  fwrite(ch.src + pos, 1, ch.len - pos, stdout);
  free(ch.b);
  free((void *)ch.src);
  return ferror(stdout) ? 2 : 0;
}

/* ------------------------------------------------------------------ doc */
/* Lines of a text, as [start, end) ranges without the newline. */
typedef struct {
  const char *p;
  size_t n;
} Line;

static int split_lines(const char *s, size_t n, Line **out) {
  int cap = 16, k = 0;
  Line *v = xrealloc(NULL, sizeof(Line) * (size_t)cap);
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && s[j] != '\n') j++;
    if (k == cap) v = xrealloc(v, sizeof(Line) * (size_t)(cap *= 2));
    v[k].p = s + i;
    v[k].n = j - i;
    k++;
    i = j + 1;
  }
  *out = v;
  return k;
}

static int blank(const Line *l) {
  for (size_t i = 0; i < l->n; i++)
    if (!isspace((unsigned char)l->p[i])) return 0;
  return 1;
}

/* Emit lines [a, b) after dropping leading and trailing blank lines; `strip` characters are
 * removed from the front of each line (up to that many, only while they are whitespace). */
static void emit_lines(Str *o, const Line *v, int a, int b, size_t strip) {
  while (a < b && blank(&v[a])) a++;
  while (b > a && blank(&v[b - 1])) b--;
  for (int i = a; i < b; i++) {
    size_t k = 0;
    while (k < strip && k < v[i].n && isspace((unsigned char)v[i].p[k])) k++;
    size_t n = v[i].n;
    while (n > k && (v[i].p[n - 1] == ' ' || v[i].p[n - 1] == '\t' || v[i].p[n - 1] == '\r')) n--;
    str_addn(o, v[i].p + k, n - k);
    str_add(o, "\n");
  }
}

/* A fence longer than any run of backticks in the text. */
static void fence(Str *o, const char *text, size_t n, const char *lang) {
  int run = 0, most = 0;
  for (size_t i = 0; i < n; i++) {
    run = text[i] == '`' ? run + 1 : 0;
    if (run > most) most = run;
  }
  for (int i = 0; i < (most >= 3 ? most + 1 : 3); i++) str_add(o, "`");
  if (lang) str_add(o, lang);
  str_add(o, "\n");
}

static void fenced(Str *o, const char *lang, const char *text, size_t n) {
  fence(o, text, n, lang);
  str_addn(o, text, n);
  if (n && text[n - 1] != '\n') str_add(o, "\n");
  fence(o, text, n, NULL);
  str_add(o, "\n");
}

/* The prose of a block: the text between "/ *** " and "* /", de-indented, Javadoc stars gone. */
static void emit_prose(Str *o, const char *s, const Block *b) {
  const char *text = s + b->start + 4;
  size_t n = b->end - 2 - (b->start + 4);
  Line *v;
  int k = split_lines(text, n, &v);
  /* Javadoc style: every non-blank line is "<space>*" or "<space>* ..." */
  int all_star = k > 0, bare = 0, nonblank = 0, first = -1;
  for (int i = 0; i < k; i++) {
    if (blank(&v[i])) continue;
    nonblank++;
    size_t j = 0;
    while (j < v[i].n && (v[i].p[j] == ' ' || v[i].p[j] == '\t')) j++;
    if (first < 0) first = i;
    if (j == 0 || j >= v[i].n || v[i].p[j] != '*' || (j + 1 < v[i].n && v[i].p[j + 1] != ' ')) {
      all_star = 0;
      break;
    }
    if (j + 1 >= v[i].n) bare = 1;
  }
  if (all_star && nonblank > 0) {
    const char *f = v[first].p;
    size_t j = 0;
    while (j < v[first].n && f[j] != '*') j++;
    int heading = j + 2 < v[first].n && f[j + 2] == '#';
    if (bare || heading) {
      for (int i = 0; i < k; i++) {
        size_t j2 = 0;
        while (j2 < v[i].n && v[i].p[j2] != '*') j2++;
        if (j2 < v[i].n) {
          j2++;
          if (j2 < v[i].n && v[i].p[j2] == ' ') j2++;
          v[i].p += j2;
          v[i].n -= j2;
        }
      }
    }
  }
  size_t indent = (size_t)-1;
  for (int i = 0; i < k; i++) {
    if (blank(&v[i])) continue;
    size_t j = 0;
    while (j < v[i].n && (v[i].p[j] == ' ' || v[i].p[j] == '\t')) j++;
    if (j < indent) indent = j;
  }
  if (indent == (size_t)-1) indent = 0;
  size_t before = o->n;
  emit_lines(o, v, 0, k, indent);
  if (o->n > before) str_add(o, "\n");
  free(v);
}

/* Code between prose blocks, verbatim; nothing when it is only whitespace. */
static void emit_code(Str *o, const char *s, size_t a, size_t b) {
  Line *v;
  int k = split_lines(s + a, b - a, &v);
  Str code = {0};
  emit_lines(&code, v, 0, k, 0);
  if (code.n) fenced(o, "c", code.s, code.n);
  free(code.s);
  free(v);
}

typedef struct {
  char **v;
  int n;
} Names;

static int names_has(const Names *ns, const char *s) {
  for (int i = 0; i < ns->n; i++)
    if (strcmp(ns->v[i], s) == 0) return 1;
  return 0;
}
static void names_add(Names *ns, const char *s) {
  ns->v = xrealloc(ns->v, sizeof(char *) * (size_t)(ns->n + 1));
  ns->v[ns->n++] = strdup(s);
}

/* A path as seen from the directory of the Markdown file: both are made absolute (relative
 * ones against the current directory), the common leading components dropped, one "../" put
 * in for each component of md_dir that remains. */
static void rel_path(Str *o, const char *md_dir, const char *path) {
  char cwd[4096], a[8192], b[8192];
  if (!getcwd(cwd, sizeof cwd)) {
    str_add(o, path);
    return;
  }
  snprintf(a, sizeof a, "%s%s%s", md_dir[0] == '/' ? "" : cwd, md_dir[0] == '/' ? "" : "/", md_dir);
  snprintf(b, sizeof b, "%s%s%s", path[0] == '/' ? "" : cwd, path[0] == '/' ? "" : "/", path);
  /* normalise: drop "." components and repeated slashes (".." is left as written) */
  char *parts[2][512];
  int np[2] = {0, 0};
  char *bufs[2] = {a, b};
  for (int t = 0; t < 2; t++)
    for (char *tok = strtok(bufs[t], "/"); tok && np[t] < 512; tok = strtok(NULL, "/"))
      if (strcmp(tok, ".") != 0) parts[t][np[t]++] = tok;
  int common = 0;
  while (common < np[0] && common < np[1] - 1 && strcmp(parts[0][common], parts[1][common]) == 0)
    common++;
  for (int i = common; i < np[0]; i++) str_add(o, "../");
  for (int i = common; i < np[1]; i++) {
    str_add(o, parts[1][i]);
    if (i + 1 < np[1]) str_add(o, "/");
  }
}

/* Captions (--captions FILE): lines "labNN/NAME  caption text" ('#' lines are comments); a
 * figure's key is its directory's last component and its file name without ".png". */
static char *g_captions;
static int g_fig_no; /* figures on this page so far: "Figure 1." ... */

static const char *find_caption(const char *key, size_t *len) {
  size_t kl = strlen(key);
  for (const char *l = g_captions; l && *l;) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    if (l[0] != '#' && n > kl && strncmp(l, key, kl) == 0 && (l[kl] == ' ' || l[kl] == '\t')) {
      const char *c = l + kl;
      while (*c == ' ' || *c == '\t') c++;
      *len = n - (size_t)(c - l);
      return c;
    }
    l = e ? e + 1 : l + n;
  }
  return NULL;
}

/* Width in pixels from a PNG's IHDR (bytes 16..19, big-endian); 0 when unreadable. */
static unsigned png_width(const char *path) {
  unsigned char h[24];
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = fread(h, 1, sizeof h, f);
  fclose(f);
  if (n < 24 || memcmp(h + 1, "PNG", 3) != 0) return 0;
  return (unsigned)h[16] << 24 | (unsigned)h[17] << 16 | (unsigned)h[18] << 8 | h[19];
}

/* A figure: "Figure k. caption" (pandoc makes a standalone image with text a <figure> with
 * that <figcaption>) at half its pixel width, since every figure is drawn at 2x; the page's
 * stylesheet shrinks it to the page where it is wider. */
static void emit_image(Str *o, const char *md_dir, const char *png) {
  const char *base = strrchr(png, '/');
  base = base ? base + 1 : png;
  size_t n = strlen(base);
  if (n > 4) n -= 4; /* drop ".png" */
  char key[512];
  const char *dir_end = base > png ? base - 1 : png, *dir = dir_end;
  while (dir > png && dir[-1] != '/') dir--;
  snprintf(key, sizeof key, "%.*s/%.*s", (int)(dir_end - dir), dir, (int)n, base);
  size_t cl = 0;
  const char *cap = find_caption(key, &cl);
  char num[32];
  snprintf(num, sizeof num, "Figure %d. ", ++g_fig_no);
  str_add(o, "![");
  str_add(o, num);
  if (cap) str_addn(o, cap, cl);
  else str_addn(o, base, n); /* no caption yet: the name (tests/suites/docs.sh flags it) */
  str_add(o, "](");
  rel_path(o, md_dir, png);
  str_add(o, ")");
  unsigned w = png_width(png);
  if (w > 0) {
    char attr[64];
    snprintf(attr, sizeof attr, "{width=%u}", (w + 1) / 2);
    str_add(o, attr);
  }
  str_add(o, "\n\n");
}

/* Program output: ```text blocks, with `[figure X.png]` lines replaced by the image. */
static void emit_output(Str *o, const char *text, size_t n, const char *md_dir, Names *shown) {
  Line *v;
  int k = split_lines(text, n, &v);
  int from = 0;
  for (int i = 0; i <= k; i++) {
    int fig = 0;
    char png[4096];
    if (i < k && v[i].n > 13 && v[i].n < sizeof png + 9 && strncmp(v[i].p, "[figure ", 8) == 0 &&
        strncmp(v[i].p + v[i].n - 5, ".png]", 5) == 0) {
      memcpy(png, v[i].p + 8, v[i].n - 9);
      png[v[i].n - 9] = '\0';
      fig = 1;
    }
    if (i < k && !fig) continue;
    Str chunk = {0};
    emit_lines(&chunk, v, from, i, 0);
    if (chunk.n) fenced(o, "text", chunk.s, chunk.n);
    free(chunk.s);
    if (fig) {
      emit_image(o, md_dir, png);
      const char *base = strrchr(png, '/');
      names_add(shown, base ? base + 1 : png);
    }
    from = i + 1;
  }
  free(v);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
  Str *seg; /* seg[k + 1]: output after marker k; seg[0]: before any marker */
  int any_marker;
} Log;

static Log parse_log(const char *text, size_t n, int nblocks) {
  Log lg = {calloc((size_t)nblocks + 1, sizeof(Str)), 0};
  if (!lg.seg) die("out of memory");
  int cur = -1;
  size_t i = 0;
  while (i < n) {
    const char *m = memchr(text + i, MARK_BYTE, n - i);
    size_t stop = m ? (size_t)(m - text) : n;
    str_addn(&lg.seg[cur + 1], text + i, stop - i);
    if (!m) break;
    int k;
    const char *close = memchr(m + 1, MARK_BYTE, n - (stop + 1));
    if (close && sscanf(m + 1, "weave:%d", &k) == 1 && k >= 0 && k < nblocks) {
      cur = k;
      lg.any_marker = 1;
      i = (size_t)(close - text) + 1;
      if (i < n && text[i] == '\n') i++;
    } else {
      str_addn(&lg.seg[cur + 1], m, 1); /* a stray separator byte: keep it */
      i = stop + 1;
    }
  }
  return lg;
}

static int cmd_doc(int argc, char **argv) {
  const char *src_path = argv[0], *log_path = NULL, *fig_dir = NULL, *md_dir = "docs",
             *command = NULL;
  int status = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc) die("doc: %s needs a value", a);
    if (!strcmp(a, "--log")) log_path = argv[++i];
    else if (!strcmp(a, "--fig-dir")) fig_dir = argv[++i];
    else if (!strcmp(a, "--md-dir")) md_dir = argv[++i];
    else if (!strcmp(a, "--command")) command = argv[++i];
    else if (!strcmp(a, "--status")) status = atoi(argv[++i]);
    else if (!strcmp(a, "--captions")) g_captions = read_file(argv[++i], NULL);
    else die("doc: unknown option %s (see the comment at the top of docs/weave.c)", a);
  }
  Chapter ch = {0};
  ch.src = read_file(src_path, &ch.len);
  parse_chapter(&ch, src_path);
  if (ch.n == 0) die("%s has no prose blocks (/*** ... */): nothing to weave", src_path);

  size_t log_len = 0;
  char *log_text = NULL;
  if (log_path) log_text = read_file(log_path, &log_len);
  Log lg = parse_log(log_text ? log_text : "", log_len, ch.n);

  /* Where each output segment goes: after the code that follows block p, where p is the last
   * block before the next marked block or the next file-scope block (the code that ran). */
  int *place = malloc(sizeof(int) * ((size_t)ch.n + 1)); /* indexed like seg */
  if (!place) die("out of memory");
  int first_marked = -1;
  for (int k = 0; k < ch.n && first_marked < 0; k++)
    if (ch.b[k].markable) first_marked = k;
  place[0] = first_marked > 0 ? first_marked - 1 : 0;
  for (int k = 0; k < ch.n; k++) {
    int q = k + 1;
    while (q < ch.n && !ch.b[q].markable && ch.b[q].depth > 0) q++;
    place[k + 1] = q - 1;
  }

  Str o = {0};
  Names shown = {0};
  str_add(&o, "<!-- generated by `make docs` (docs/weave.c) from ");
  str_add(&o, src_path);
  str_add(&o, ": edit the chapter, not this file -->\n\n");
  for (int k = 0; k < ch.n; k++) {
    emit_prose(&o, ch.src, &ch.b[k]);
    if (k == 0) { /* after the title block: where the text and the output come from */
      str_add(&o, "> Woven from [`");
      str_add(&o, src_path);
      str_add(&o, "`](");
      rel_path(&o, md_dir, src_path);
      str_add(&o, ")");
      if (command) {
        str_add(&o, "; the output and figures are from `");
        str_add(&o, command);
        str_add(&o, "`");
        if (status) {
          char buf[64];
          snprintf(buf, sizeof buf, ", which stopped with exit status %d", status);
          str_add(&o, buf);
        }
      } else {
        str_add(&o, "; the program was not run for this page");
      }
      str_add(&o, ".\n\n");
    }
    size_t code_end = k + 1 < ch.n ? ch.b[k + 1].line_start : ch.len;
    emit_code(&o, ch.src, ch.b[k].line_end, code_end);
    if (lg.any_marker)
      for (int s = 0; s <= ch.n; s++)
        if (place[s] == k && lg.seg[s].n)
          emit_output(&o, lg.seg[s].s, lg.seg[s].n, md_dir, &shown);
  }
  if (!lg.any_marker && log_len) {
    str_add(&o, "## Program output\n\n");
    emit_output(&o, log_text, log_len, md_dir, &shown);
  }
  /* Figures the run wrote but never announced. */
  if (fig_dir) {
    DIR *d = opendir(fig_dir);
    Names rest = {0};
    if (d) {
      struct dirent *e;
      while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ".png") == 0 && !names_has(&shown, e->d_name))
          names_add(&rest, e->d_name);
      }
      closedir(d);
    }
    if (rest.n) {
      qsort(rest.v, (size_t)rest.n, sizeof(char *), cmp_str);
      str_add(&o, "## Figures\n\n");
      for (int i = 0; i < rest.n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", fig_dir, rest.v[i]);
        emit_image(&o, md_dir, path);
        free(rest.v[i]);
      }
    }
    free(rest.v);
  }
  while (o.n >= 2 && o.s[o.n - 1] == '\n' && o.s[o.n - 2] == '\n') o.s[--o.n] = '\0';
  fwrite(o.s, 1, o.n, stdout);
  for (int i = 0; i < shown.n; i++) free(shown.v[i]);
  free(shown.v);
  for (int s = 0; s <= ch.n; s++) free(lg.seg[s].s);
  free(lg.seg);
  free(place);
  free(o.s);
  free(log_text);
  free(g_captions);
  free(ch.b);
  free((void *)ch.src);
  return ferror(stdout) ? 2 : 0;
}

/* ------------------------------------------------------------------ weave mathml */

/* pandoc (2.17) writes \mathrm{softmax} as <mstyle mathvariant="normal"> around one <mi> per
 * letter, and MathML Core (Chromium) ignores mathvariant on <mstyle>, so the name comes out in
 * italic letters. Rewrite each such run of one-letter <mi>s as one <mi>softmax</mi> (a
 * multi-letter <mi> is upright) or, for one letter, <mi mathvariant="normal">d</mi>. */
static int cmd_mathml(const char *path) {
  size_t n;
  char *s = read_file(path, &n);
  static const char open_tag[] = "<mstyle mathvariant=\"normal\">", close_tag[] = "</mstyle>";
  Str o = {0};
  const char *p = s;
  for (;;) {
    const char *a = strstr(p, open_tag);
    if (!a) break;
    const char *body = a + strlen(open_tag), *end = strstr(body, close_tag);
    const char *nested = strstr(body, "<mstyle");
    if (!end || (nested && nested < end)) { /* not a plain run: leave it */
      str_addn(&o, p, (size_t)(body - p));
      p = body;
      continue;
    }
    str_addn(&o, p, (size_t)(body - p));
    /* the body: <mi>X</mi> runs are merged; anything else is copied */
    const char *q = body;
    while (q < end) {
      Str word = {0};
      int letters = 0;
      while (q < end && strncmp(q, "<mi>", 4) == 0) {
        const char *c = q + 4, *ce = strstr(c, "</mi>");
        if (!ce || ce > end) break;
        str_addn(&word, c, (size_t)(ce - c));
        letters++;
        q = ce + 5;
      }
      if (letters == 1) {
        str_add(&o, "<mi mathvariant=\"normal\">");
        str_addn(&o, word.s, word.n);
        str_add(&o, "</mi>");
      } else if (letters > 1) {
        str_add(&o, "<mi>");
        str_addn(&o, word.s, word.n);
        str_add(&o, "</mi>");
      }
      free(word.s);
      if (q < end && !letters) { /* another element: copy up to the next tag after it */
        const char *nx = strchr(q + 1, '<');
        if (!nx || nx > end) nx = end;
        str_addn(&o, q, (size_t)(nx - q));
        q = nx;
      }
    }
    p = end;
  }
  str_add(&o, p);
  fwrite(o.s, 1, o.n, stdout);
  free(o.s);
  free(s);
  return ferror(stdout) ? 2 : 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "mark") == 0 && argc == 3) return cmd_mark(argv[2]);
  if (argc >= 3 && strcmp(argv[1], "doc") == 0) return cmd_doc(argc - 2, argv + 2);
  if (argc == 3 && strcmp(argv[1], "mathml") == 0) return cmd_mathml(argv[2]);
  fprintf(stderr,
          "usage: weave mark CHAPTER.c > MARKED.c\n"
          "       weave doc CHAPTER.c [--log FILE] [--fig-dir DIR] [--md-dir DIR]\n"
          "                 [--command TEXT] [--status N] [--captions FILE] > CHAPTER.md\n"
          "       weave mathml PAGE.html > FIXED.html\n");
  return 2;
}
