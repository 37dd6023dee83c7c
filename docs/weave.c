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
 *       In a prose block, a line `@code PATH NAME...` splices NAME (a function, a type or an
 *       `@region NAME` ... `@end NAME` stretch) from PATH, labs/ and solutions/ paths read from
 *       --exercises DIR; a line `@program` sends the code after the block to one collapsed
 *       "program" section at the page's end, as do code lines tagged `@program` and the lines
 *       between `@program begin` and `@program end`. A run that stopped (--status not 0) is
 *       marked where it stopped; --ref-log/--ref-dir (a reference run's output and figures)
 *       fill in the rest, marked as the reference's.
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

/* A control byte in a chapter is never meant: a "\b" or "\t" of LaTeX (\boldsymbol, \text)
 * that went through a string escape on its way into the file arrives as a backspace or a tab,
 * which pandoc passes on as raw TeX. Newlines only, anywhere in the file; tabs are allowed in
 * code (indentation) but not in prose. Says file:line:column and the byte, and stops. */
static void check_bytes(const char *path, const char *s, size_t len, size_t prose_from,
                        size_t prose_to) {
  int line = 1;
  size_t bol = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\n') {
      line++;
      bol = i + 1;
      continue;
    }
    int tab_ok = c == '\t' && !(i >= prose_from && i < prose_to);
    if ((c < 0x20 && !tab_ok) || c == 0x7f) {
      static const char *names[32] = {[8] = "backspace: a \\b (\\boldsymbol, \\beta) written "
                                             "through a string escape?",
                                      [9] = "tab: a \\t (\\text, \\times) written through a "
                                            "string escape? (no tabs in prose)",
                                      [12] = "form feed: a \\f (\\frac) written through a "
                                             "string escape?",
                                      [13] = "carriage return: CRLF line ends (check out with "
                                             "LF)"};
      die("%s:%d:%zu: control byte 0x%02x in %s (%s): write the character it stands for",
          path, line, i - bol + 1, c, i >= prose_from && i < prose_to ? "prose" : "the chapter",
          c < 32 && names[c] ? names[c] : "not text");
    }
  }
}

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
        check_bytes(path, s, end, i, end); /* up to this block's end; its prose strictly */
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
  check_bytes(path, s, len, len, len); /* the code after the last block */
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

/* ------------------------------------------------------------------ @code: splicing */
/* `@code PATH NAME...` in a prose block splices, from PATH, each NAME: a region between lines
 * holding `@region NAME` and `@end NAME` (in comments), else the definition of a function NAME
 * (with the comment right above it), else a struct/union/enum NAME or a typedef NAME of one.
 * A PATH under labs/ or solutions/ is read from the build's exercise directory
 * (--exercises DIR), so a handout's page shows the student's file. */
static const char *g_exercises; /* --exercises DIR: where labs/... and solutions/... are read */
static const char *g_chapter;   /* the chapter being woven (for messages) */

/* Skip whitespace, comments and preprocessor lines from i; the index of the next code char. */
static size_t skip_space(const char *s, size_t len, size_t i) {
  for (;;) {
    while (i < len && isspace((unsigned char)s[i])) i++;
    if (i + 1 < len && s[i] == '/' && s[i + 1] == '*') {
      const char *e = strstr(s + i + 2, "*/");
      i = e ? (size_t)(e - s) + 2 : len;
    } else if (i + 1 < len && s[i] == '/' && s[i + 1] == '/') {
      while (i < len && s[i] != '\n') i++;
    } else if (i < len && s[i] == '#' && (i == 0 || s[i - 1] == '\n' || isspace((unsigned char)s[i - 1]))) {
      size_t ls = i;
      while (ls > 0 && (s[ls - 1] == ' ' || s[ls - 1] == '\t')) ls--;
      if (ls > 0 && s[ls - 1] != '\n') return i;
      while (i < len && s[i] != '\n') i += (s[i] == '\\' && i + 1 < len) ? 2 : 1;
    } else {
      return i;
    }
  }
}

static size_t line_start_of(const char *s, size_t i) {
  while (i > 0 && s[i - 1] != '\n') i--;
  return i;
}
static size_t line_end_of(const char *s, size_t len, size_t i) { /* past the newline */
  while (i < len && s[i] != '\n') i++;
  return i < len ? i + 1 : i;
}

/* Does s[a, b) hold identifier `name` as a whole word, followed (after spaces) by `(` when
 * call is set? Strings and comments are not skipped: declarations rarely hold them. */
static int has_word(const char *s, size_t a, size_t b, const char *name, int call) {
  size_t n = strlen(name);
  for (size_t i = a; i + n <= b; i++) {
    if (strncmp(s + i, name, n) || (i > a && is_ident(s[i - 1])) || (i + n < b && is_ident(s[i + n])))
      continue;
    if (!call) return 1;
    size_t j = i + n;
    while (j < b && isspace((unsigned char)s[j])) j++;
    if (j < b && s[j] == '(') return 1;
  }
  return 0;
}

/* The extent [*from, *to) of NAME in the file text s: a region, a function definition or a
 * type definition, widened to whole lines (a function's comment right above it included). */
static int find_symbol(const char *s, size_t len, const char *name, size_t *from, size_t *to) {
  char tag[300];
  snprintf(tag, sizeof tag, "@region %s", name);
  for (const char *r = strstr(s, tag); r; r = strstr(r + 1, tag)) {
    size_t te = (size_t)(r - s) + strlen(tag);
    if (te < len && is_ident(s[te])) continue;
    char end_tag[300];
    snprintf(end_tag, sizeof end_tag, "@end %s", name);
    const char *e = strstr(r, end_tag);
    if (!e) return 0; /* an @region without its @end: not found */
    *from = line_end_of(s, len, (size_t)(r - s));
    *to = line_start_of(s, (size_t)(e - s));
    return 1;
  }
  /* top-level items: from one item's end to the next ';' (or, for a function, its '}') */
  size_t i = skip_space(s, len, 0);
  size_t prev_end = 0;
  while (i < len) {
    size_t start = i, open = 0, close = 0;
    int depth = 0, is_func = 0;
    char last = 0;
    while (i < len) {
      char c = s[i];
      if (c == '/' && i + 1 < len && (s[i + 1] == '*' || s[i + 1] == '/')) {
        i = skip_space(s, len, i);
        continue;
      }
      if (c == '"' || c == '\'') {
        i++;
        while (i < len && s[i] != c && s[i] != '\n') i += (s[i] == '\\') ? 2 : 1;
        i++;
        last = c;
        continue;
      }
      if (c == '{') {
        if (depth == 0 && !open) {
          open = i;
          is_func = last == ')';
        }
        depth++;
      } else if (c == '}') {
        depth--;
        if (depth == 0 && is_func) {
          close = ++i;
          break;
        }
      } else if (c == ';' && depth == 0) {
        close = ++i;
        break;
      }
      if (!isspace((unsigned char)c)) last = c;
      i++;
    }
    if (!close) close = i;
    size_t head_end = open ? open : close;
    int hit = 0;
    if (is_func) hit = has_word(s, start, head_end, name, 1);
    else if (open) {
      /* struct NAME {, enum NAME {, or the typedef name after the closing brace */
      for (const char *kw = "struct\0union\0enum\0"; *kw && !hit; kw += strlen(kw) + 1) {
        char pat[300];
        snprintf(pat, sizeof pat, "%s %s", kw, name);
        hit = has_word(s, start, head_end, pat, 0);
      }
      size_t rb = close;
      while (rb > start && s[rb - 1] != '}') rb--;
      if (!hit && has_word(s, rb, close, name, 0)) hit = 1;
    }
    if (hit) {
      size_t a = line_start_of(s, start);
      /* the comment that ends on the line right above (no blank line between) */
      size_t p = a;
      while (p > prev_end && isspace((unsigned char)s[p - 1]) && s[p - 1] != '\n') p--;
      if (p >= 3 && p > prev_end && s[p - 1] == '\n' && s[p - 2] == '/' && s[p - 3] == '*') {
        size_t q = p - 3;
        while (q > prev_end && !(s[q] == '/' && s[q + 1] == '*')) q--;
        if (s[q] == '/' && s[q + 1] == '*' && strncmp(s + q, "/***", 4) != 0) a = line_start_of(s, q);
      }
      *from = a;
      *to = line_end_of(s, len, close - 1);
      return 1;
    }
    prev_end = close;
    i = skip_space(s, len, close);
  }
  return 0;
}

/* Does s[0, n) hold `word`? */
static int strstr_n(const char *s, size_t n, const char *word) {
  size_t w = strlen(word);
  for (size_t i = 0; i + w <= n; i++)
    if (!strncmp(s + i, word, w)) return 1;
  return 0;
}

/* The file a directive names: labs/X and solutions/X from the exercise directory, where it
 * has that file. */
static void directive_path(char *buf, size_t n, const char *path) {
  const char *rest = NULL;
  if (!strncmp(path, "labs/", 5)) rest = path + 5;
  else if (!strncmp(path, "solutions/", 10)) rest = path + 10;
  if (rest && g_exercises) snprintf(buf, n, "%s/%s", g_exercises, rest);
  /* not there (the headers live in labs/ only): the path as written */
  if (!rest || !g_exercises || access(buf, R_OK) != 0) snprintf(buf, n, "%s", path);
}

/* A directive that cannot be honoured (a file or name gone, e.g. moved by a later change): said
 * on stderr and in the page, where tests/suites/docs_site.sh finds it; the weave goes on. */
static int g_splice_errors;
static void splice_error(Str *o, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "weave: %s: %s\n", g_chapter, msg);
  str_add(o, "> **@code error:** ");
  str_add(o, msg);
  str_add(o, "\n\n");
  g_splice_errors++;
}

/* One `@code PATH NAME...` line (without "@code"): the spliced code as one ```c block, headed
 * by a comment naming the file it came from. */
static void emit_splice(Str *o, const char *args, size_t n) {
  char line[2048];
  if (n >= sizeof line) {
    splice_error(o, "@code line too long");
    return;
  }
  memcpy(line, args, n);
  line[n] = '\0';
  char *save = NULL, *path = strtok_r(line, " \t", &save);
  if (!path) {
    splice_error(o, "@code needs a file and names: @code PATH NAME...");
    return;
  }
  char file[4096];
  directive_path(file, sizeof file, path);
  FILE *f = fopen(file, "rb");
  if (!f) {
    splice_error(o, "@code %s: cannot open %s: %s", path, file, strerror(errno));
    return;
  }
  fclose(f);
  size_t len;
  char *src = read_file(file, &len);
  Str code = {0};
  str_add(&code, "/* ");
  str_add(&code, file[0] == '.' && file[1] == '/' ? file + 2 : file);
  str_add(&code, " */\n");
  int names = 0, given = 0;
  for (char *name = strtok_r(NULL, " \t", &save); name; name = strtok_r(NULL, " \t", &save)) {
    size_t a, b;
    given++;
    size_t nl = strlen(name);
    int optional = nl > 1 && name[nl - 1] == '?'; /* NAME?: only where the file has it */
    if (optional) name[nl - 1] = '\0';
    if (!find_symbol(src, len, name, &a, &b)) {
      if (optional) continue;
      splice_error(o, "@code %s %s: no function, type or @region %s in %s", path, name, name,
                   file);
      continue;
    }
    if (names++) str_add(&code, "\n");
    Line *v;
    int k = split_lines(src + a, b - a, &v);
    size_t indent = (size_t)-1; /* a region inside a function: shown from its own margin */
    for (int i = 0; i < k; i++) {
      size_t j = 0;
      while (j < v[i].n && (v[i].p[j] == ' ' || v[i].p[j] == '\t')) j++;
      if (j < v[i].n && j < indent) indent = j;
    }
    /* lines tagged @program (and @program begin/end stretches) stay out of the page here too */
    int in_region = 0, kept = 0;
    for (int i = 0; i < k; i++) {
      int hide = in_region || strstr_n(v[i].p, v[i].n, "@program");
      if (strstr_n(v[i].p, v[i].n, "@program begin")) in_region = 1;
      if (strstr_n(v[i].p, v[i].n, "@program end")) in_region = 0;
      if (hide) continue;
      v[kept++] = v[i];
    }
    emit_lines(&code, v, 0, kept, indent == (size_t)-1 ? 0 : indent);
    free(v);
  }
  if (!given) splice_error(o, "@code %s names nothing: @code PATH NAME...", path);
  if (names) fenced(o, "c", code.s, code.n);
  free(code.s);
  free(src);
}

/* The prose of a block: the text between "/ *** " and "* /", de-indented, Javadoc stars gone. */
/* Returns whether the block holds @program (the code after it is the program's, not the page's). */
static int emit_prose(Str *o, const char *s, const Block *b) {
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
  /* directives at the block's left margin: @code PATH NAME... and @program */
  int from = 0, program = 0;
  for (int i = 0; i <= k; i++) {
    const char *t = NULL;
    size_t tn = 0;
    if (i < k) {
      size_t j = 0;
      while (j < indent && j < v[i].n && isspace((unsigned char)v[i].p[j])) j++;
      t = v[i].p + j;
      tn = v[i].n - j;
      while (tn > 0 && isspace((unsigned char)t[tn - 1])) tn--;
    }
    int is_code = i < k && tn > 6 && !strncmp(t, "@code", 5) && (t[5] == ' ' || t[5] == '\t');
    int is_prog = i < k && tn == 8 && !strncmp(t, "@program", 8);
    if (i < k && !is_code && !is_prog) continue;
    size_t before = o->n;
    emit_lines(o, v, from, i, indent);
    if (o->n > before) str_add(o, "\n");
    if (is_code) emit_splice(o, t + 6, tn - 6);
    if (is_prog) program = 1;
    from = i + 1;
  }
  free(v);
  return program;
}

/* The program's code, kept out of the page body: one collapsed section at the page's end. */
static Str g_program;

static int line_has(const Line *l, const char *word) {
  size_t n = strlen(word);
  for (size_t i = 0; i + n <= l->n; i++)
    if (!strncmp(l->p + i, word, n)) return 1;
  return 0;
}

/* Lines [a, b) of the chapter (lines v, the first at chapter line `line0`) into the program
 * section, headed by where they are. */
static void program_add(const Line *v, int a, int b, int line0) {
  while (a < b && blank(&v[a])) a++;
  while (b > a && blank(&v[b - 1])) b--;
  if (a >= b) return;
  char head[160];
  snprintf(head, sizeof head, "%s/* %s, line %d */\n", g_program.n ? "\n" : "", g_chapter,
           line0 + a);
  str_add(&g_program, head);
  emit_lines(&g_program, v, a, b, 0);
}

/* Code between prose blocks, verbatim; nothing when it is only whitespace. All of it goes to
 * the program section when `program` is set (the block before held @program); otherwise the
 * lines tagged `@program` (a comment at the line's end) and those between `@program begin`
 * and `@program end` lines do. `line0`: the chapter's line number of byte a. */
static void emit_code(Str *o, const char *s, size_t a, size_t b, int program, int line0) {
  Line *v;
  int k = split_lines(s + a, b - a, &v);
  Str code = {0};
  if (program) {
    program_add(v, 0, k, line0);
  } else {
    int in_region = 0, from = -1, prev_blank = 1;
    for (int i = 0; i <= k; i++) {
      int hide = 0;
      if (i < k) {
        if (line_has(&v[i], "@program begin")) in_region = 1;
        hide = in_region || line_has(&v[i], "@program");
        if (line_has(&v[i], "@program end")) in_region = 0;
      }
      if (hide && from < 0) from = i;
      if (!hide && from >= 0) {
        /* the region markers themselves are not shown */
        int fa = from, fb = i;
        if (line_has(&v[fa], "@program begin")) fa++;
        if (fb > fa && line_has(&v[fb - 1], "@program end")) fb--;
        program_add(v, fa, fb, line0);
        from = -1;
      }
      if (i == k || hide) continue;
      int bl = blank(&v[i]);
      if (bl && prev_blank) continue; /* no double blank line where program lines went */
      prev_blank = bl;
      emit_lines(&code, v, i, i + 1, 0);
      if (bl) str_add(&code, "\n");
    }
    while (code.n >= 1 && code.s[code.n - 1] == '\n' && (code.n == 1 || code.s[code.n - 2] == '\n'))
      code.s[--code.n] = '\0';
    /* a cell of main's body reads from its own margin, as a notebook cell does */
    Line *cv;
    int ck = split_lines(code.s ? code.s : "", code.n, &cv);
    size_t indent = (size_t)-1;
    for (int i = 0; i < ck; i++) {
      size_t j = 0;
      while (j < cv[i].n && cv[i].p[j] == ' ') j++;
      if (j < cv[i].n && j < indent) indent = j;
    }
    if (indent != (size_t)-1 && indent > 0) {
      Str d = {0};
      for (int i = 0; i < ck; i++) {
        str_addn(&d, cv[i].p + (cv[i].n >= indent ? indent : cv[i].n),
                 cv[i].n >= indent ? cv[i].n - indent : 0);
        str_add(&d, "\n");
      }
      free(code.s);
      code = d;
    }
    free(cv);
  }
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
static int g_ref_fig; /* the figure being emitted is the reference run's */

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
 * that <figcaption>) at 3/4 of its pixel width: the figures are drawn with 22-24 px text, which
 * comes out near the page's 16 px (at half size heatmap labels were 11 px, too small to read);
 * the page's stylesheet shrinks a figure to the window where it is wider. */
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
  if (g_ref_fig) str_add(o, " (reference run)");
  str_add(o, "](");
  rel_path(o, md_dir, png);
  str_add(o, ")");
  unsigned w = png_width(png);
  if (w > 0) {
    char attr[64];
    snprintf(attr, sizeof attr, "{width=%u}", (3 * w + 2) / 4);
    str_add(o, attr);
  }
  str_add(o, "\n\n");
}

/* ------------------------------------------------------------------ paths in a page */
/* A run prints paths of the machine that built the page ("data: /home/x/shared/data/...",
 * "wrote /tmp/.../summary.json"); a page shows them as the kit names them: relative to the
 * kit's root (the directory make docs runs in), docs/... for the page's own directory, the
 * search path's ../shared/data/ (common/data.c), $D2L_DATA_DIR/..., /usr/... as they are, and
 * anything else as .../NAME. page_path_check then refuses a page holding any other absolute path. */
static char g_root[4096], g_md_abs[4096], g_shared[4096];

static void paths_init(const char *md_dir) {
  if (!realpath(".", g_root)) g_root[0] = '\0';
  if (!realpath(md_dir, g_md_abs)) g_md_abs[0] = '\0';
  snprintf(g_shared, sizeof g_shared, "%s", g_root);
  char *slash = strrchr(g_shared, '/');
  if (slash) snprintf(slash, sizeof g_shared - (size_t)(slash - g_shared), "/shared/data");
}

/* Where an absolute path starts at s[i]: '/' after a separator, a name after it, and at least
 * one more '/' inside the token (so "tokens/sec" and "a / b" are not paths). Returns the
 * token's length, 0 when it is not one. */
static size_t abs_path_at(const char *s, size_t n, size_t i) {
  if (s[i] != '/' || i + 1 >= n) return 0;
  if (i > 0 && !strchr(" \t([{=:'\"`,<>*", s[i - 1])) return 0;
  if (i > 0 && s[i - 1] == ':' && i > 1 && isalpha((unsigned char)s[i - 2]) && s[i + 1] == '/')
    return 0; /* a URL's "scheme://" */
  if (!(isalnum((unsigned char)s[i + 1]) || s[i + 1] == '_' || s[i + 1] == '.')) return 0;
  size_t j = i + 1;
  int slashes = 0;
  while (j < n && !isspace((unsigned char)s[j]) && !strchr(")]}'\"`,;<>*", s[j])) slashes += s[j++] == '/';
  while (j > i + 1 && (s[j - 1] == '.' || s[j - 1] == ':')) j--; /* a sentence's end */
  return slashes ? j - i : 0;
}

static int has_prefix_dir(const char *p, size_t n, const char *dir) {
  size_t k = strlen(dir);
  return k > 1 && n > k && strncmp(p, dir, k) == 0 && p[k] == '/';
}

/* A system location the kit names itself (Debian's dataset-fashion-mnist, CUDA, /dev/null). */
static int system_path(const char *p, size_t n) {
  return has_prefix_dir(p, n, "/usr") || has_prefix_dir(p, n, "/dev") ||
         has_prefix_dir(p, n, "/proc") || has_prefix_dir(p, n, "/etc");
}

/* text[0..n) with its absolute paths written as the kit names them (see above). */
static void add_kit_paths(Str *o, const char *s, size_t n) {
  const char *env = getenv("D2L_DATA_DIR");
  size_t from = 0;
  for (size_t i = 0; i < n; i++) {
    size_t k = abs_path_at(s, n, i);
    if (!k) continue;
    const char *p = s + i;
    str_addn(o, s + from, i - from);
    if (system_path(p, k)) {
      str_addn(o, p, k);
    } else if (g_md_abs[0] && has_prefix_dir(p, k, g_md_abs)) {
      str_add(o, "docs");
      str_addn(o, p + strlen(g_md_abs), k - strlen(g_md_abs));
    } else if (g_root[0] && has_prefix_dir(p, k, g_root)) {
      size_t r = strlen(g_root) + 1;
      str_addn(o, p + r, k - r);
    } else if (g_shared[0] && has_prefix_dir(p, k, g_shared)) {
      str_add(o, "../shared/data");
      str_addn(o, p + strlen(g_shared), k - strlen(g_shared));
    } else if (env && *env == '/' && has_prefix_dir(p, k, env)) {
      str_add(o, "$D2L_DATA_DIR");
      str_addn(o, p + strlen(env), k - strlen(env));
    } else {
      const char *base = p + k;
      while (base > p && base[-1] != '/') base--;
      str_add(o, ".../");
      str_addn(o, base, k - (size_t)(base - p));
    }
    from = i + k;
    i = from - 1;
  }
  str_addn(o, s + from, n - from);
}

/* The finished page: any absolute path left (in prose or code: the output's were rewritten)
 * that is not a system location stops the weave, naming it. */
static void page_path_check(const char *s, size_t n) {
  int line = 1, bad = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\n') line++;
    size_t k = abs_path_at(s, n, i);
    if (!k || system_path(s + i, k)) continue;
    fprintf(stderr, "weave: %s: the page (line %d) holds the path %.*s, outside the kit: write "
                    "it relative to the kit's root\n", g_chapter, line, (int)k, s + i);
    bad++;
    i += k - 1;
  }
  if (bad) exit(2);
}

/* ------------------------------------------------------------------ claims */
/* Prose that states what the run printed marks it: `[TEXT]{.run}` claims the output woven on
 * this page holds TEXT (backticks around it dropped), `[TEXT]{.run out="LINE PART"}` claims the
 * output holds LINE PART and LINE PART holds TEXT (for a number the prose states without its
 * printed context). Whitespace runs, line breaks included, compare as one space. pandoc renders
 * the mark as a <span class="run">. --claims check (the kit's own pages) makes any claim the run
 * does not bear out an error naming the chapter's line; --claims note (a student's pages, their
 * own run) says so in the page under the paragraph instead. Without output nothing is checked. */
static const char *g_claims = "check";
static int g_claim_errors, g_claims_checked;

/* s[0..n) with backticks at its ends dropped and whitespace runs as one space */
static void squeeze(Str *o, const char *s, size_t n) {
  while (n && (*s == '`' || isspace((unsigned char)*s))) s++, n--;
  while (n && (s[n - 1] == '`' || isspace((unsigned char)s[n - 1]))) n--;
  for (size_t i = 0; i < n; i++) {
    if (isspace((unsigned char)s[i])) {
      while (i + 1 < n && isspace((unsigned char)s[i + 1])) i++;
      str_add(o, " ");
    } else {
      str_addn(o, s + i, 1);
    }
  }
  if (!o->s) str_add(o, "");
}

/* The claims of the prose s[a..b) (a block), checked against `shown` (squeezed output). */
static void check_claims(Str *page, const char *src, size_t a, size_t b, const char *shown) {
  for (size_t i = a; i + 6 < b; i++) {
    if (src[i] != ']' || src[i + 1] != '{') continue;
    const char *close = memchr(src + i, '}', b - i);
    if (!close) break;
    size_t attr = i + 2, attr_end = (size_t)(close - src);
    int run = 0;
    for (size_t j = attr; j + 4 <= attr_end; j++)
      if (!strncmp(src + j, ".run", 4) && (j + 4 == attr_end || isspace((unsigned char)src[j + 4])) &&
          (j == attr || isspace((unsigned char)src[j - 1])))
        run = 1;
    if (!run) continue;
    size_t open = i; /* the matching '[' */
    int depth = 0;
    while (open > a) {
      open--;
      if (src[open] == ']') depth++;
      else if (src[open] == '[' && depth-- == 0) break;
    }
    int line = 1;
    for (size_t j = 0; j < i; j++) line += src[j] == '\n';
    Str text = {0}, out = {0};
    squeeze(&text, src + open + 1, i - open - 1);
    const char *q = NULL;
    for (size_t j = attr; j + 5 < attr_end && !q; j++)
      if (!strncmp(src + j, "out=\"", 5)) q = src + j + 5;
    if (q) {
      const char *qe = memchr(q, '"', (size_t)(close - q));
      squeeze(&out, q, qe ? (size_t)(qe - q) : (size_t)(close - q));
    } else {
      str_add(&out, text.s);
    }
    g_claims_checked++;
    const char *why = NULL;
    if (src[open] != '[' || !text.n) why = "a claim needs [TEXT]{.run}";
    else if (!strstr(out.s, text.s)) why = "its out=\"...\" does not hold the claimed text";
    else if (!strstr(shown, out.s)) why = "the run's output on this page does not print it";
    if (why) {
      fprintf(stderr, "weave: %s:%d: the prose claims \"%s\"%s%s%s: %s%s\n", g_chapter, line,
              text.s ? text.s : "", q ? " (out=\"" : "", q ? out.s : "", q ? "\")" : "", why,
              strcmp(g_claims, "check") ? "" : " (the page's run differs from what the text says: "
              "rerun at the chapter's defaults, or make the text say what this run shows)");
      if (!strcmp(g_claims, "check")) {
        g_claim_errors++;
      } else {
        str_add(page, "> **Note:** the text above says `");
        str_add(page, q ? out.s : text.s);
        str_add(page, "`; this run did not print that (the text describes the kit's reference "
                      "run at the chapter's defaults).\n\n");
      }
    }
    free(text.s);
    free(out.s);
    i = attr_end;
  }
}

/* Program output: ```text blocks, with `[figure X.png]` lines replaced by the image. With
 * ref_dir set it is the reference run's output (a handout's, shown where the student's run
 * stopped): the blocks are classed `reference` and the figures are read from ref_dir. */
static void emit_output(Str *o, const char *text, size_t n, const char *md_dir, Names *shown,
                        const char *ref_dir) {
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
    Str chunk = {0}, shown_text = {0};
    emit_lines(&chunk, v, from, i, 0);
    if (chunk.n) add_kit_paths(&shown_text, chunk.s, chunk.n);
    if (shown_text.n) fenced(o, ref_dir ? "{.text .reference}" : "text", shown_text.s, shown_text.n);
    free(chunk.s);
    free(shown_text.s);
    if (fig && ref_dir) {
      const char *base = strrchr(png, '/');
      char path[8192];
      snprintf(path, sizeof path, "%s/%s", ref_dir, base ? base + 1 : png);
      g_ref_fig = 1;
      emit_image(o, md_dir, path);
      g_ref_fig = 0;
    } else if (fig) {
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
  int last; /* the segment the run ended in */
} Log;

static Log parse_log(const char *text, size_t n, int nblocks) {
  Log lg = {calloc((size_t)nblocks + 1, sizeof(Str)), 0, 0};
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
  lg.last = cur + 1;
  return lg;
}

/* Where a run stopped early: the exercise it stopped at (a stub's "exercise N.M NAME is not
 * implemented yet (FILE)" line, the last one printed), or the exit status. */
static void emit_stop_note(Str *o, const char *log, size_t n, int status, int have_ref) {
  const char *what = NULL;
  size_t wn = 0;
  for (const char *p = log; p && p < log + n;) {
    const char *e = memchr(p, '\n', (size_t)(log + n - p));
    size_t ln = e ? (size_t)(e - p) : (size_t)(log + n - p);
    const char *hit = NULL;
    for (size_t i = 0; i + 26 <= ln && !hit; i++)
      if (!strncmp(p + i, "is not implemented yet", 22)) hit = p + i;
    if (hit) {
      const char *ex = NULL;
      for (const char *q = p; q + 9 <= p + ln && !ex; q++)
        if (!strncmp(q, "exercise ", 9)) ex = q;
      what = ex ? ex : p;
      wn = ln - (size_t)(what - p);
    }
    p = e ? e + 1 : NULL;
  }
  char buf[96];
  str_add(o, "::: {.unfinished}\n**Unfinished:** ");
  if (what) {
    str_add(o, "the run stopped here: `");
    str_addn(o, what, wn);
    str_add(o, "`.");
  } else {
    snprintf(buf, sizeof buf, "the run stopped here (exit status %d).", status);
    str_add(o, buf);
  }
  str_add(o, have_ref ? " From here on the output and figures are the reference run's "
                        "(marked *reference*), shipped with the kit; `make docs` again once "
                        "the exercise is done shows your own.\n"
                      : " The rest of the page is prose and code without output; `make docs` "
                        "again once the exercise is done.\n");
  str_add(o, ":::\n\n");
}

static int cmd_doc(int argc, char **argv) {
  const char *src_path = argv[0], *log_path = NULL, *fig_dir = NULL, *md_dir = "docs",
             *command = NULL, *ref_log_path = NULL, *ref_dir = NULL;
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
    else if (!strcmp(a, "--exercises")) g_exercises = argv[++i];
    else if (!strcmp(a, "--ref-log")) ref_log_path = argv[++i];
    else if (!strcmp(a, "--ref-dir")) ref_dir = argv[++i];
    else if (!strcmp(a, "--claims")) g_claims = argv[++i];
    else die("doc: unknown option %s (see the comment at the top of docs/weave.c)", a);
  }
  if (strcmp(g_claims, "check") && strcmp(g_claims, "note"))
    die("doc: --claims must be check or note, got %s", g_claims);
  paths_init(md_dir);
  Chapter ch = {0};
  g_chapter = src_path;
  ch.src = read_file(src_path, &ch.len);
  parse_chapter(&ch, src_path);
  if (ch.n == 0) die("%s has no prose blocks (/*** ... */): nothing to weave", src_path);

  size_t log_len = 0;
  char *log_text = NULL;
  if (log_path) log_text = read_file(log_path, &log_len);
  Log lg = parse_log(log_text ? log_text : "", log_len, ch.n);
  /* A run that stopped early (an exercise still a stub, a crash): the page says so where it
   * stopped and goes on with the prose and code; the reference run's output (--ref-log, which
   * a handout ships) fills in what follows, marked as the reference's. */
  int stopped = status != 0 && lg.any_marker;
  size_t ref_len = 0;
  char *ref_text = NULL;
  if (stopped && ref_log_path && access(ref_log_path, R_OK) == 0)
    ref_text = read_file(ref_log_path, &ref_len);
  Log ref = parse_log(ref_text ? ref_text : "", ref_len, ch.n);
  if (!ref.any_marker) ref.last = -1;

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

  /* The output this page shows (the run's, the reference's after a stop), as shown: what the
   * prose's claims are checked against. */
  Str shown_out = {0};
  for (int s = 0; s <= ch.n; s++) {
    const Str *seg = !stopped || s <= lg.last ? &lg.seg[s] : s <= ref.last ? &ref.seg[s] : NULL;
    if (seg && seg->n) add_kit_paths(&shown_out, seg->s, seg->n);
  }
  if (!lg.any_marker && log_len) add_kit_paths(&shown_out, log_text, log_len);
  Str shown_sq = {0};
  squeeze(&shown_sq, shown_out.s ? shown_out.s : "", shown_out.n);
  free(shown_out.s);

  Str o = {0};
  Names shown = {0};
  str_add(&o, "<!-- generated by `make docs` (docs/weave.c) from ");
  add_kit_paths(&o, src_path, strlen(src_path));
  str_add(&o, ": edit the chapter, not this file -->\n\n");
  for (int k = 0; k < ch.n; k++) {
    int program = emit_prose(&o, ch.src, &ch.b[k]);
    if (shown_sq.n) check_claims(&o, ch.src, ch.b[k].start, ch.b[k].end, shown_sq.s);
    if (k == 0) { /* after the title block: where the text and the output come from */
      str_add(&o, "> Woven from [`");
      add_kit_paths(&o, src_path, strlen(src_path));
      str_add(&o, "`](");
      rel_path(&o, md_dir, src_path);
      str_add(&o, ")");
      if (command) {
        str_add(&o, "; the output and figures are from `");
        add_kit_paths(&o, command, strlen(command));
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
    int line0 = 1;
    for (size_t i = 0; i < ch.b[k].line_end; i++) line0 += ch.src[i] == '\n';
    emit_code(&o, ch.src, ch.b[k].line_end, code_end, program, line0);
    if (lg.any_marker)
      for (int s = 0; s <= ch.n; s++) {
        if (place[s] != k) continue;
        if (!stopped || s <= lg.last) {
          if (lg.seg[s].n) emit_output(&o, lg.seg[s].s, lg.seg[s].n, md_dir, &shown, NULL);
        } else if (ref.seg[s].n && s <= ref.last) {
          emit_output(&o, ref.seg[s].s, ref.seg[s].n, md_dir, &shown, ref_dir ? ref_dir : ".");
        }
        if (stopped && s == lg.last) emit_stop_note(&o, log_text, log_len, status, ref.any_marker);
      }
  }
  if (!lg.any_marker && log_len) {
    str_add(&o, "## Program output\n\n");
    emit_output(&o, log_text, log_len, md_dir, &shown, NULL);
  }
  if (g_program.n) { /* the program around the chapter, collapsed */
    str_add(&o, "<details class=\"program\">\n<summary>The program: includes, flags, the run's "
                "summary and clean-up (");
    char buf[32];
    int lines = 0;
    for (size_t i = 0; i < g_program.n; i++) lines += g_program.s[i] == '\n';
    snprintf(buf, sizeof buf, "%d lines", lines);
    str_add(&o, buf);
    str_add(&o, ")</summary>\n\n");
    fenced(&o, "c", g_program.s, g_program.n);
    str_add(&o, "</details>\n\n");
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
  if (g_claim_errors) {
    fprintf(stderr, "weave: %s: %d of %d claims in the prose not borne out by the run's output\n",
            src_path, g_claim_errors, g_claims_checked);
    exit(3);
  }
  page_path_check(o.s, o.n);
  fwrite(o.s, 1, o.n, stdout);
  free(shown_sq.s);
  for (int i = 0; i < shown.n; i++) free(shown.v[i]);
  free(shown.v);
  for (int s = 0; s <= ch.n; s++) free(lg.seg[s].s), free(ref.seg[s].s);
  free(lg.seg);
  free(ref.seg);
  free(ref_text);
  free(g_program.s);
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
          "                 [--command TEXT] [--status N] [--captions FILE] [--exercises DIR]\n"
          "                 [--ref-log FILE --ref-dir DIR] > CHAPTER.md\n"
          "       weave mathml PAGE.html > FIXED.html\n");
  return 2;
}
