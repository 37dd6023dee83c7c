/* Tests of common/data.c: the zip reader, the gzip reader, IDX parsing and data_find.
 * The archives are built here, in a temp dir, by a small zip writer (stored entries, raw-deflate
 * entries, a __MACOSX entry, an optional archive comment), then damaged on purpose. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "../../common/data.h"
#include "../../common/rng.h"
#include "../test.h"

/* ------------------------------------------------------------ temp files */

static char g_tmpdir[64];
static int g_ntmp;
static char g_tmpfiles[32][128];

static const char *tmp_dir(void) {
  if (!g_tmpdir[0]) {
    strcpy(g_tmpdir, "/tmp/al_test_data_XXXXXX");
    if (!mkdtemp(g_tmpdir)) {
      perror("mkdtemp");
      exit(2);
    }
  }
  return g_tmpdir;
}

/* Path of a temp file (remembered for cleanup). */
static const char *tmp_path(const char *name) {
  for (int i = 0; i < g_ntmp; i++)
    if (strcmp(strrchr(g_tmpfiles[i], '/') + 1, name) == 0) return g_tmpfiles[i];
  if (g_ntmp == 32) exit(2);
  snprintf(g_tmpfiles[g_ntmp], sizeof g_tmpfiles[0], "%s/%s", tmp_dir(), name);
  return g_tmpfiles[g_ntmp++];
}

static void tmp_cleanup(void) {
  for (int i = 0; i < g_ntmp; i++) unlink(g_tmpfiles[i]);
  g_ntmp = 0;
  if (g_tmpdir[0]) rmdir(g_tmpdir);
  g_tmpdir[0] = '\0';
}

static void write_file(const char *path, const void *buf, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(buf, 1, n, f) != n) {
    perror(path);
    exit(2);
  }
  fclose(f);
}

/* ------------------------------------------------------------ a tiny zip writer */

typedef struct {
  unsigned char *b;
  size_t n, cap;
} Buf;

static void put(Buf *b, const void *p, size_t n) {
  if (n == 0) return;
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->b = realloc(b->b, b->cap);
  }
  memcpy(b->b + b->n, p, n);
  b->n += n;
}
static void put16(Buf *b, unsigned v) {
  unsigned char p[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
  put(b, p, 2);
}
static void put32(Buf *b, uint32_t v) {
  unsigned char p[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  put(b, p, 4);
}

typedef struct {
  const char *name;
  const char *data;
  size_t len;
  int method; /* 0 stored, 8 deflated */
} Entry;

/* Offsets inside the built archive, for targeted damage. */
typedef struct {
  size_t data_off[8], data_len[8]; /* compressed data of each entry */
  size_t cdir_off[8];              /* central-directory record of each entry */
  size_t eocd_off;
} ZipLayout;

static void raw_deflate(const char *src, size_t n, Buf *out) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) exit(2);
  uLong cap = deflateBound(&zs, n);
  unsigned char *tmp = malloc(cap);
  zs.next_in = (Bytef *)src;
  zs.avail_in = (uInt)n;
  zs.next_out = tmp;
  zs.avail_out = (uInt)cap;
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) exit(2);
  put(out, tmp, zs.total_out);
  deflateEnd(&zs);
  free(tmp);
}

/* Build a zip of entries (+ optional archive comment) into *out. */
static void zip_build(const Entry *e, int n, const char *comment, Buf *out, ZipLayout *lay) {
  Buf cd = {0};
  uint32_t offs[8];
  memset(out, 0, sizeof *out);
  for (int i = 0; i < n; i++) {
    Buf data = {0};
    if (e[i].method == 8) raw_deflate(e[i].data, e[i].len, &data);
    else put(&data, e[i].data, e[i].len);
    uint32_t crc = (uint32_t)crc32(0, (const Bytef *)e[i].data, (uInt)e[i].len);
    size_t nl = strlen(e[i].name);
    offs[i] = (uint32_t)out->n;
    put32(out, 0x04034b50u);
    put16(out, 20), put16(out, 0), put16(out, (unsigned)e[i].method), put16(out, 0), put16(out, 0);
    put32(out, crc), put32(out, (uint32_t)data.n), put32(out, (uint32_t)e[i].len);
    put16(out, (unsigned)nl), put16(out, 0);
    put(out, e[i].name, nl);
    if (lay) lay->data_off[i] = out->n, lay->data_len[i] = data.n;
    put(out, data.b ? data.b : (unsigned char *)"", data.n);
    if (lay) lay->cdir_off[i] = cd.n; /* relative for now */
    put32(&cd, 0x02014b50u);
    put16(&cd, 20), put16(&cd, 20), put16(&cd, 0), put16(&cd, (unsigned)e[i].method);
    put16(&cd, 0), put16(&cd, 0);
    put32(&cd, crc), put32(&cd, (uint32_t)data.n), put32(&cd, (uint32_t)e[i].len);
    put16(&cd, (unsigned)nl), put16(&cd, 0), put16(&cd, 0), put16(&cd, 0), put16(&cd, 0);
    put32(&cd, 0), put32(&cd, offs[i]);
    put(&cd, e[i].name, nl);
    free(data.b);
  }
  size_t cd_off = out->n;
  if (lay)
    for (int i = 0; i < n; i++) lay->cdir_off[i] += cd_off;
  put(out, cd.b, cd.n);
  if (lay) lay->eocd_off = out->n;
  size_t cl = comment ? strlen(comment) : 0;
  put32(out, 0x06054b50u);
  put16(out, 0), put16(out, 0), put16(out, (unsigned)n), put16(out, (unsigned)n);
  put32(out, (uint32_t)cd.n), put32(out, (uint32_t)cd_off), put16(out, (unsigned)cl);
  if (cl) put(out, comment, cl);
  free(cd.b);
}

/* A sample text long enough that deflate really compresses it. */
static char *sample_text(size_t *n) {
  Buf b = {0};
  for (int i = 0; i < 400; i++) {
    char line[64];
    int k = snprintf(line, sizeof line, "Line %d.\tLigne %d !\n", i, i * 7);
    put(&b, line, (size_t)k);
  }
  put(&b, "", 1);
  *n = b.n - 1;
  return (char *)b.b;
}

#define N_ENTRIES 5
static void sample_zip(Buf *z, ZipLayout *lay, const char *comment, char **text, size_t *tlen) {
  *text = sample_text(tlen);
  Entry e[N_ENTRIES] = {
      {"dir/", "", 0, 0},
      {"__MACOSX/dir/._a.txt", "\x00\x05\x16\x07junk", 8, 0},
      {"dir/a.txt", "hello, stored world\n", 20, 0},
      {"dir/b.txt", *text, *tlen, 8},
      {"dir/empty.txt", "", 0, 8},
  };
  zip_build(e, N_ENTRIES, comment, z, lay);
}

static int one_line(const char *s) { return s[0] && !strchr(s, '\n') && !strchr(s, '\r'); }

/* ------------------------------------------------------------ zip tests */

TEST(zip_reads_stored_and_deflated_members) {
  Buf z;
  ZipLayout lay;
  char *text;
  size_t tlen;
  sample_zip(&z, &lay, NULL, &text, &tlen);
  CHECK(lay.data_len[3] < tlen / 2); /* the deflated entry really is compressed */
  const char *p = tmp_path("ok.zip");
  write_file(p, z.b, z.n);
  unsigned char *out = NULL;
  size_t len = 0;
  char err[512] = "";
  CHECK_INT(zip_read_member(p, "dir/a.txt", &out, &len, err, sizeof err), 0);
  CHECK_INT(len, 20);
  CHECK(out && memcmp(out, "hello, stored world\n", 20) == 0 && out[20] == '\0');
  free(out);
  CHECK_INT(zip_read_member(p, "dir/b.txt", &out, &len, err, sizeof err), 0);
  CHECK_INT(len, tlen);
  CHECK(out && memcmp(out, text, tlen) == 0 && out[tlen] == '\0');
  free(out);
  CHECK_INT(zip_read_member(p, "dir/empty.txt", &out, &len, err, sizeof err), 0);
  CHECK_INT(len, 0);
  CHECK(out && out[0] == '\0');
  free(out);
  free(text);
  free(z.b);
  tmp_cleanup();
}

TEST(zip_with_archive_comment) {
  Buf z;
  char *text;
  size_t tlen;
  char comment[300];
  memset(comment, 'c', sizeof comment - 1);
  comment[sizeof comment - 1] = '\0';
  memcpy(comment + 100, "PK\x05\x06", 4); /* a fake signature inside the comment */
  sample_zip(&z, NULL, comment, &text, &tlen);
  const char *p = tmp_path("comment.zip");
  write_file(p, z.b, z.n);
  unsigned char *out = NULL;
  size_t len = 0;
  char err[512] = "";
  CHECK_INT(zip_read_member(p, "dir/b.txt", &out, &len, err, sizeof err), 0);
  CHECK(len == tlen && out && memcmp(out, text, tlen) == 0);
  free(out);
  /* cut inside the comment: the record claims more comment than there is */
  write_file(p, z.b, z.n - 50);
  CHECK_INT(zip_read_member(p, "dir/b.txt", &out, &len, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "truncated");
  CHECK(out == NULL);
  free(text);
  free(z.b);
  tmp_cleanup();
}

TEST(zip_member_missing_lists_members) {
  Buf z;
  char *text;
  size_t tlen;
  sample_zip(&z, NULL, NULL, &text, &tlen);
  const char *p = tmp_path("missing.zip");
  write_file(p, z.b, z.n);
  unsigned char *out = (unsigned char *)1;
  size_t len = 7;
  char err[512] = "";
  CHECK_INT(zip_read_member(p, "fra-eng/fra.txt", &out, &len, err, sizeof err), -1);
  CHECK(out == NULL && len == 0);
  CHECK_STR_CONTAINS(err, p);
  CHECK_STR_CONTAINS(err, "no member 'fra-eng/fra.txt'");
  CHECK_STR_CONTAINS(err, "dir/a.txt");
  CHECK(!strstr(err, "__MACOSX")); /* resource-fork entries are skipped, not listed */
  /* __MACOSX entries are never matched, even by their exact name */
  CHECK_INT(zip_read_member(p, "__MACOSX/dir/._a.txt", &out, &len, err, sizeof err), -1);
  CHECK(one_line(err));
  free(text);
  free(z.b);
  tmp_cleanup();
}

TEST(zip_truncated_anywhere_is_an_error) {
  Buf z;
  ZipLayout lay;
  char *text;
  size_t tlen;
  sample_zip(&z, &lay, NULL, &text, &tlen);
  const char *p = tmp_path("cut.zip");
  /* cut points: the first and last 64 bytes, a few bytes around every header, every 37th */
  unsigned char *cut_here = calloc(z.n, 1);
  for (size_t c = 0; c < z.n; c++) cut_here[c] = c < 64 || c + 64 >= z.n || c % 37 == 0;
  size_t marks[2 * N_ENTRIES + 1];
  int nm = 0;
  for (int i = 0; i < N_ENTRIES; i++) marks[nm++] = lay.data_off[i], marks[nm++] = lay.cdir_off[i];
  marks[nm++] = lay.eocd_off;
  for (int i = 0; i < nm; i++)
    for (size_t c = marks[i] >= 40 ? marks[i] - 40 : 0; c < marks[i] + 3 && c < z.n; c++) cut_here[c] = 1;
  int fails = 0, cuts = 0;
  for (size_t cut = 0; cut < z.n; cut++) {
    if (!cut_here[cut]) continue;
    write_file(p, z.b, cut);
    unsigned char *out = NULL;
    size_t len = 0;
    char err[512] = "";
    int rc = zip_read_member(p, "dir/b.txt", &out, &len, err, sizeof err);
    cuts++;
    if (rc != -1 || out != NULL || !one_line(err) || !strstr(err, p)) {
      if (fails++ < 3) test_fail(__FILE__, __LINE__, "cut at %zu: rc %d, err '%s'", cut, rc, err);
    }
    free(out);
  }
  free(cut_here);
  CHECK(cuts > 150);
  free(text);
  free(z.b);
  tmp_cleanup();
}

TEST(zip_corrupted_data_fails_crc) {
  Buf z;
  ZipLayout lay;
  char *text;
  size_t tlen;
  sample_zip(&z, &lay, NULL, &text, &tlen);
  const char *p = tmp_path("crc.zip");
  unsigned char *out = NULL;
  size_t len = 0;
  char err[512] = "";
  /* stored member: a flipped byte inflates fine, only the CRC can catch it */
  z.b[lay.data_off[2] + 3] ^= 0x20;
  write_file(p, z.b, z.n);
  CHECK_INT(zip_read_member(p, "dir/a.txt", &out, &len, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "CRC-32 mismatch");
  CHECK(out == NULL && one_line(err));
  z.b[lay.data_off[2] + 3] ^= 0x20;
  /* deflated member: damage is either a deflate error or a CRC/size mismatch */
  for (size_t k = 0; k < lay.data_len[3]; k += 17) {
    z.b[lay.data_off[3] + k] ^= 0x55;
    write_file(p, z.b, z.n);
    int rc = zip_read_member(p, "dir/b.txt", &out, &len, err, sizeof err);
    if (rc == 0) { /* only acceptable if the bytes still decode to the same text */
      CHECK(len == tlen && memcmp(out, text, tlen) == 0);
      free(out);
    } else {
      CHECK(out == NULL && one_line(err));
    }
    z.b[lay.data_off[3] + k] ^= 0x55;
  }
  free(text);
  free(z.b);
  tmp_cleanup();
}

TEST(zip_rejects_not_a_zip_method_encryption_zip64) {
  const char *p = tmp_path("plain.zip");
  unsigned char *out = NULL;
  size_t len = 0;
  char err[512] = "";
  write_file(p, "Go.\tVa !\n", 9);
  CHECK_INT(zip_read_member(p, "x", &out, &len, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "not a zip archive");
  write_file(p, "", 0);
  CHECK_INT(zip_read_member(p, "x", &out, &len, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "not a zip archive");
  CHECK_INT(zip_read_member("/nonexistent/dir/x.zip", "x", &out, &len, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "/nonexistent/dir/x.zip: cannot open");

  Buf z;
  ZipLayout lay;
  char *text;
  size_t tlen;
  sample_zip(&z, &lay, NULL, &text, &tlen);
  size_t c = lay.cdir_off[3]; /* central record of dir/b.txt */
  z.b[c + 10] = 12;            /* method 12 = bzip2 */
  write_file(p, z.b, z.n);
  CHECK_INT(zip_read_member(p, "dir/b.txt", &out, &len, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "compression method 12");
  z.b[c + 10] = 8;
  z.b[c + 8] |= 1; /* general-purpose flag bit 0: encrypted */
  write_file(p, z.b, z.n);
  CHECK_INT(zip_read_member(p, "dir/b.txt", &out, &len, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "encrypted");
  z.b[c + 8] &= (unsigned char)~1;
  memset(z.b + lay.eocd_off + 16, 0xff, 4); /* central directory offset 0xFFFFFFFF: Zip64 */
  write_file(p, z.b, z.n);
  CHECK_INT(zip_read_member(p, "dir/b.txt", &out, &len, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "Zip64");
  CHECK(out == NULL && one_line(err));
  free(text);
  free(z.b);
  tmp_cleanup();
}

TEST(zip_survives_random_damage) {
  /* hostile bytes anywhere (headers included) must give ok-with-right-bytes or a clean -1 */
  Buf z;
  ZipLayout lay;
  char *text;
  size_t tlen;
  sample_zip(&z, &lay, NULL, &text, &tlen);
  const char *p = tmp_path("fuzz.zip");
  unsigned char *copy = malloc(z.n);
  Rng r;
  rng_init(&r, 7);
  int bad = 0;
  for (int it = 0; it < 300; it++) {
    memcpy(copy, z.b, z.n);
    int nflip = 1 + rng_int(&r, 4);
    for (int k = 0; k < nflip; k++) {
      /* aim half the damage at the directory and the end record, where the offsets live */
      size_t pos = rng_int(&r, 2) ? lay.cdir_off[0] + (size_t)rng_int(&r, (int)(z.n - lay.cdir_off[0]))
                                   : (size_t)rng_int(&r, (int)z.n);
      copy[pos] = (unsigned char)rng_int(&r, 256);
    }
    write_file(p, copy, z.n);
    unsigned char *out = NULL;
    size_t len = 0;
    char err[512] = "";
    int rc = zip_read_member(p, "dir/b.txt", &out, &len, err, sizeof err);
    if (rc == 0) {
      if (len != tlen || memcmp(out, text, tlen) != 0) bad++;
      free(out);
    } else if (rc != -1 || out || !one_line(err)) {
      bad++;
    }
  }
  CHECK_INT(bad, 0);
  free(copy);
  free(text);
  free(z.b);
  tmp_cleanup();
}

/* ------------------------------------------------------------ gzip */

static void write_gz(const char *path, const char *data, size_t n) {
  gzFile g = gzopen(path, "wb9");
  if (!g || gzwrite(g, data, (unsigned)n) != (int)n) exit(2);
  gzclose(g);
}

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) exit(2);
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(*n + 1);
  if (fread(b, 1, *n, f) != *n) exit(2);
  fclose(f);
  return b;
}

TEST(gz_good_truncated_corrupted) {
  size_t tlen;
  char *text = sample_text(&tlen);
  const char *p = tmp_path("t.gz");
  write_gz(p, text, tlen);
  unsigned char *out = NULL;
  size_t len = 0;
  char err[512] = "";
  CHECK_INT(gz_read_all(p, &out, &len, err, sizeof err), 0);
  CHECK(len == tlen && out && memcmp(out, text, tlen) == 0 && out[len] == '\0');
  free(out);
  size_t gn;
  unsigned char *gz = slurp(p, &gn);
  /* truncated: drop the 8-byte trailer, or cut into the compressed data */
  size_t cuts[] = {gn - 1, gn - 4, gn - 8, gn - 9, gn / 2, 12};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    write_file(p, gz, cuts[i]);
    out = NULL;
    CHECK_INT(gz_read_all(p, &out, &len, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "truncated");
    CHECK(out == NULL && one_line(err));
  }
  /* corrupted: a flipped byte in the compressed data (deflate error or CRC mismatch) */
  gz[gn / 2] ^= 0x5a;
  write_file(p, gz, gn);
  CHECK_INT(gz_read_all(p, &out, &len, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, p);
  CHECK(out == NULL && one_line(err));
  gz[gn / 2] ^= 0x5a;
  gz[gn - 6] ^= 0x01; /* the stored CRC-32 in the trailer */
  write_file(p, gz, gn);
  CHECK_INT(gz_read_all(p, &out, &len, err, sizeof err), -1);
  CHECK(out == NULL && one_line(err));
  /* a plain file reads as is */
  write_file(p, "plain\n", 6);
  CHECK_INT(gz_read_all(p, &out, &len, err, sizeof err), 0);
  CHECK(len == 6 && memcmp(out, "plain\n", 6) == 0);
  free(out);
  CHECK_INT(gz_read_all("/nonexistent/t.gz", &out, &len, err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "/nonexistent/t.gz: cannot open");
  free(gz);
  free(text);
  tmp_cleanup();
}

/* ------------------------------------------------------------ IDX */

TEST(idx_good_and_bad) {
  /* a 2 x 3 x 2 images file and a 4-label file */
  unsigned char img[16 + 12] = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 2};
  for (int i = 0; i < 12; i++) img[16 + i] = (unsigned char)(i * 20);
  unsigned char lab[8 + 4] = {0, 0, 8, 1, 0, 0, 0, 4, 9, 0, 3, 7};
  int dims[3];
  const unsigned char *pay = NULL;
  char err[512] = "";
  CHECK_INT(idx_parse(img, sizeof img, 3, dims, &pay, "img", err, sizeof err), 0);
  CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == 2 && pay == img + 16);
  CHECK_INT(idx_parse(lab, sizeof lab, 1, dims, &pay, "lab", err, sizeof err), 0);
  CHECK(dims[0] == 4 && pay == lab + 8 && pay[3] == 7);
  /* wrong dims for what the caller expects */
  CHECK_INT(idx_parse(lab, sizeof lab, 3, dims, &pay, "lab", err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "lab: IDX magic 0x00000801 means 1 dims, expected 3");
  CHECK(pay == NULL);
  /* wrong magic */
  unsigned char bad[sizeof img];
  memcpy(bad, img, sizeof img);
  bad[2] = 9;
  CHECK_INT(idx_parse(bad, sizeof bad, 3, dims, &pay, "img", err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "magic 0x00000903");
  /* truncated payload and truncated header */
  CHECK_INT(idx_parse(img, sizeof img - 1, 3, dims, &pay, "img", err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "truncated IDX data: 11 bytes, the header says 12");
  CHECK_INT(idx_parse(img, 10, 3, dims, &pay, "img", err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "truncated IDX header");
  CHECK_INT(idx_parse(img, 2, 3, dims, &pay, "img", err, sizeof err), -1);
  /* extra bytes, a zero dim, dims that overflow */
  unsigned char big[sizeof img + 1];
  memcpy(big, img, sizeof img);
  big[sizeof img] = 0;
  CHECK_INT(idx_parse(big, sizeof big, 3, dims, &pay, "img", err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "size mismatch");
  memcpy(bad, img, sizeof img);
  bad[7] = 0;
  CHECK_INT(idx_parse(bad, sizeof bad, 3, dims, &pay, "img", err, sizeof err), -1);
  CHECK_STR_CONTAINS(err, "dimension 0 is 0");
  memset(bad + 4, 0x7f, 12);
  CHECK_INT(idx_parse(bad, sizeof bad, 3, dims, &pay, "img", err, sizeof err), -1);
  CHECK(one_line(err));
}

TEST(crc32_matches_zlib) {
  const char *s = "The quick brown fox jumps over the lazy dog";
  CHECK(crc32_update(0, s, strlen(s)) == 0x414fa339u); /* the well-known CRC-32 of this line */
  uint32_t c = crc32_update(0, s, 10);
  CHECK(crc32_update(c, s + 10, strlen(s) - 10) == 0x414fa339u);
}

/* ------------------------------------------------------------ data_find */

TEST(data_find_search_order) {
  const char *p = tmp_path("probe.bin");
  write_file(p, "x", 1);
  char searched[1024];
  const char *old = getenv("D2L_DATA_DIR");
  char *saved = old ? strdup(old) : NULL;
  unsetenv("D2L_DATA_DIR");
  char *found = data_find("probe.bin", tmp_dir(), NULL, searched, sizeof searched);
  CHECK(found && strcmp(found, p) == 0);
  free(found);
  /* $D2L_DATA_DIR is the second place; extra_dir the last */
  setenv("D2L_DATA_DIR", tmp_dir(), 1);
  found = data_find("probe.bin", "/nonexistent-a", NULL, searched, sizeof searched);
  CHECK(found && strcmp(found, p) == 0);
  free(found);
  unsetenv("D2L_DATA_DIR");
  found = data_find("probe.bin", NULL, tmp_dir(), searched, sizeof searched);
  CHECK(found && strcmp(found, p) == 0);
  free(found);
  /* not found: NULL and every place tried, in order */
  setenv("D2L_DATA_DIR", "/nonexistent-env", 1);
  found = data_find("nothere.zip", "/nonexistent-a", "/nonexistent-x", searched, sizeof searched);
  CHECK(found == NULL);
  CHECK_STR_CONTAINS(searched, "/nonexistent-a/nothere.zip, /nonexistent-env/nothere.zip, "
                               "./data/nothere.zip, ../shared/data/nothere.zip, "
                               "/nonexistent-x/nothere.zip");
  /* a tiny buffer is truncated, not overrun */
  char small[8];
  CHECK(data_find("nothere.zip", "/nonexistent-a", NULL, small, sizeof small) == NULL);
  CHECK(strlen(small) < sizeof small);
  if (saved) setenv("D2L_DATA_DIR", saved, 1);
  else unsetenv("D2L_DATA_DIR");
  free(saved);
  tmp_cleanup();
}

/* ------------------------------------------------------------ the real archive */

TEST(zip_reads_real_fra_eng) {
  char searched[1024];
  char *path = data_find("fra-eng.zip", NULL, NULL, searched, sizeof searched);
  if (!path) {
    test_skip("fra-eng.zip not found (%s); run make data", searched);
    return;
  }
  unsigned char *out = NULL;
  size_t len = 0;
  char err[512] = "";
  int rc = zip_read_member(path, "fra-eng/fra.txt", &out, &len, err, sizeof err);
  CHECK_INT(rc, 0);
  if (rc == 0) {
    /* figures from ../shared/data/README.md */
    CHECK_INT(len, 11669748);
    long lines = 0;
    for (size_t i = 0; i < len; i++) lines += out[i] == '\n';
    CHECK_INT(lines, 167130);
    CHECK(memcmp(out, "Go.\tVa !\n", 9) == 0);
  }
  free(out);
  free(path);
}
