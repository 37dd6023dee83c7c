/* data.c — locating data files and reading them with zlib: a small zip reader (central
 * directory walk, stored and deflated members, CRC-32 verified), a gzip reader, and IDX
 * parsing. Every field read from a file is bounds-checked before use: a hostile or damaged
 * file yields -1 and a one-line message, never a crash or a huge allocation. */
#include "data.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "util.h"

/* ------------------------------------------------------------------ helpers */

/* fail() (util.h) with the file the error is about first: "path: message". */
#define fail_file(err, errlen, path, fmt, ...) \
  fail((err), (errlen), "%s: " fmt, (path) ? (path) : "(null)", ##__VA_ARGS__)

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint32_t rd32be(const unsigned char *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

uint32_t crc32_update(uint32_t crc, const void *buf, size_t len) {
  const unsigned char *p = buf;
  uLong c = crc;
  while (len > 0) { /* zlib's crc32 takes a uInt length: feed it in chunks */
    uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
    c = crc32(c, p, n);
    p += n;
    len -= n;
  }
  return (uint32_t)c;
}

/* ------------------------------------------------------------------ data_find */

static int is_readable_file(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  fclose(f);
  return 1;
}

static int g_announce;
static char *g_announced[8]; /* the files already announced (a lab reads at most a few) */

void data_set_announce(int on) { g_announce = on; }

static void announce(const char *p) {
  if (!g_announce) return;
  char *abs = realpath(p, NULL);
  const char *show = abs ? abs : p;
  int i = 0;
  for (; i < 8 && g_announced[i]; i++)
    if (strcmp(g_announced[i], show) == 0) {
      free(abs);
      return;
    }
  printf("data: %s\n", show);
  if (i < 8) g_announced[i] = xstrdup(show); /* kept for the program's life */
  free(abs);
}

char *data_find(const char *name, const char *data_dir, const char *extra_dir, char *searched,
                size_t searched_len) {
  const char *env = getenv("D2L_DATA_DIR");
  const char *dirs[5] = {data_dir, (env && *env) ? env : NULL, "./data", "../shared/data",
                         extra_dir};
  size_t used = 0;
  if (searched && searched_len) searched[0] = '\0';
  for (int i = 0; i < 5; i++) {
    if (!dirs[i] || !*dirs[i]) continue;
    char *p = path_join(dirs[i], name);
    if (is_readable_file(p)) {
      announce(p);
      return p;
    }
    if (searched && searched_len > used + 1) {
      int k = snprintf(searched + used, searched_len - used, "%s%s", used ? ", " : "", p);
      if (k > 0) used += (size_t)k < searched_len - used ? (size_t)k : searched_len - used - 1;
    }
    free(p);
  }
  return NULL;
}

/* ------------------------------------------------------------------ zip */

#define ZIP_EOCD_SIG 0x06054b50u
#define ZIP_CDIR_SIG 0x02014b50u
#define ZIP_LOCAL_SIG 0x04034b50u
#define ZIP_EOCD_LEN 22
#define ZIP_CDIR_LEN 46
#define ZIP_LOCAL_LEN 30

/* Read exactly n bytes at offset off; 0 on success. */
static int read_at(FILE *f, uint64_t off, void *buf, size_t n) {
  if (off > (uint64_t)LLONG_MAX) return -1;
  if (fseeko(f, (off_t)off, SEEK_SET) != 0) return -1;
  return fread(buf, 1, n, f) == n ? 0 : -1;
}

/* Whether a central-directory name is a macOS resource-fork entry. */
static int is_macosx(const unsigned char *name, size_t n) {
  return n >= 9 && memcmp(name, "__MACOSX/", 9) == 0;
}

/* Append a (sanitized, shortened) member name to a "members: ..." list. */
static void list_name(char *list, size_t cap, const unsigned char *name, size_t n, int *count) {
  size_t used = strlen(list);
  if (*count >= 5) {
    if (*count == 5 && used + 6 < cap) memcpy(list + used, ", ...", 6);
    (*count)++;
    return;
  }
  if (used + 3 >= cap) return;
  if (*count) {
    memcpy(list + used, ", ", 2);
    used += 2;
  }
  for (size_t i = 0; i < n && i < 60 && used + 1 < cap; i++) {
    unsigned char c = name[i];
    list[used++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
  }
  list[used] = '\0';
  (*count)++;
}

/* Inflate or copy the member's compressed bytes into a NUL-terminated buffer of usize bytes. */
static int zip_extract(const char *path, const char *member, const unsigned char *comp,
                       size_t csize, size_t usize, int method, unsigned char **out, char *err,
                       size_t errlen) {
  unsigned char *buf = malloc(usize + 1);
  if (!buf) return fail_file(err, errlen, path, "out of memory for member '%s' (%zu bytes)", member, usize);
  if (method == 0) {
    memcpy(buf, comp, usize);
  } else {
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -15) != Z_OK) {
      free(buf);
      return fail_file(err, errlen, path, "zlib inflateInit2 failed");
    }
    size_t in_left = csize, out_left = usize;
    zs.next_in = (Bytef *)comp;
    zs.next_out = buf;
    int rc = Z_OK;
    while (rc == Z_OK) {
      /* zlib counts in uInt: feed big members in chunks */
      if (zs.avail_in == 0 && in_left) {
        zs.avail_in = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
        in_left -= zs.avail_in;
      }
      if (zs.avail_out == 0 && out_left) {
        zs.avail_out = out_left > (1u << 30) ? (1u << 30) : (uInt)out_left;
        out_left -= zs.avail_out;
      }
      rc = inflate(&zs, Z_NO_FLUSH);
      if (rc == Z_BUF_ERROR) { /* no progress possible: say which side ran out */
        if (zs.avail_out == 0 && out_left == 0) rc = 1000;     /* more output than usize */
        else if (zs.avail_in == 0 && in_left == 0) rc = Z_BUF_ERROR; /* input ran out */
        else rc = Z_DATA_ERROR;
      }
    }
    size_t produced = (size_t)zs.total_out;
    const char *zmsg = zs.msg;
    inflateEnd(&zs);
    if (rc == 1000) {
      free(buf);
      return fail_file(err, errlen, path,
                  "member '%s' inflates to more than its recorded size %zu bytes (corrupt archive)",
                  member, usize);
    }
    if (rc != Z_STREAM_END) {
      free(buf);
      if (rc == Z_BUF_ERROR)
        return fail_file(err, errlen, path,
                    "member '%s': compressed data ends early (truncated or corrupt archive)",
                    member);
      return fail_file(err, errlen, path, "member '%s': corrupt deflate data (%s)", member,
                  zmsg ? zmsg : "zlib error");
    }
    if (produced != usize) {
      free(buf);
      return fail_file(err, errlen, path,
                  "member '%s' inflates to %zu bytes but the directory says %zu (corrupt archive)",
                  member, produced, usize);
    }
  }
  buf[usize] = '\0';
  *out = buf;
  return 0;
}

/* The end-of-central-directory record's facts a reader needs. */
typedef struct {
  uint32_t cd_off, cd_size; /* the central directory: where, how many bytes */
  uint16_t n_total;         /* its entries */
} ZipDir;

/* A regular file that starts like a zip archive (a local header or, empty, the end record). */
static int zip_check_start(FILE *f, const char *path, uint64_t *fsize, char *err, size_t errlen) {
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
    return fail_file(err, errlen, path, "not a regular file");
  *fsize = (uint64_t)st.st_size;
  unsigned char sig[4];
  if (*fsize < 4 || read_at(f, 0, sig, 4) != 0)
    return fail_file(err, errlen, path, "not a zip archive (only %llu bytes)",
                     (unsigned long long)*fsize);
  if (rd32(sig) != ZIP_LOCAL_SIG && rd32(sig) != ZIP_EOCD_SIG)
    return fail_file(err, errlen, path, "not a zip archive (no 'PK' signature at the start)");
  return 0;
}

/* The end-of-central-directory record in tail[0..tail_len): the last whose comment fits; -1
 * when there is none (*comment_cut: one was found whose comment runs past the end). */
static long zip_find_eocd(const unsigned char *tail, size_t tail_len, int *comment_cut) {
  *comment_cut = 0;
  for (long p = (long)tail_len - ZIP_EOCD_LEN; p >= 0; p--) {
    if (rd32(tail + p) != ZIP_EOCD_SIG) continue;
    size_t clen = rd16(tail + p + 20);
    if ((size_t)p + ZIP_EOCD_LEN + clen > tail_len) {
      *comment_cut = 1; /* a record whose comment runs past the end: cut short, or a false match */
      continue;
    }
    return p;
  }
  return -1;
}

/* 1. End of central directory: the last 22 bytes, or earlier when a comment (<= 65535 bytes)
 * follows it. Searched backwards for its signature, then checked. */
static int zip_read_eocd(FILE *f, const char *path, uint64_t fsize, ZipDir *d, char *err,
                         size_t errlen) {
  size_t tail_len = fsize < ZIP_EOCD_LEN + 65535u ? (size_t)fsize : ZIP_EOCD_LEN + 65535u;
  uint64_t tail_off = fsize - tail_len;
  unsigned char *tail = malloc(tail_len);
  int rc = -1, comment_cut;
  long eocd;
  if (!tail || read_at(f, tail_off, tail, tail_len) != 0) {
    fail_file(err, errlen, path, "cannot read the end of the archive");
  } else if ((eocd = zip_find_eocd(tail, tail_len, &comment_cut)) < 0) {
    fail_file(err, errlen, path, "%s",
              comment_cut ? "truncated zip archive (the archive comment is cut short)"
                          : "truncated or damaged zip archive: no end-of-central-directory record");
  } else {
    const unsigned char *e = tail + eocd;
    uint16_t disk = rd16(e + 4), cd_disk = rd16(e + 6), n_disk = rd16(e + 8);
    *d = (ZipDir){rd32(e + 16), rd32(e + 12), rd16(e + 10)};
    uint64_t eocd_pos = tail_off + (uint64_t)eocd;
    if (d->n_total == 0xFFFF || d->cd_size == 0xFFFFFFFFu || d->cd_off == 0xFFFFFFFFu)
      fail_file(err, errlen, path, "Zip64 archives are not supported (re-zip without Zip64)");
    else if (disk != 0 || cd_disk != 0 || n_disk != d->n_total)
      fail_file(err, errlen, path, "multi-part (spanned) zip archives are not supported");
    else if ((uint64_t)d->cd_off + d->cd_size > eocd_pos)
      fail_file(err, errlen, path,
                "central directory (offset %u, %u bytes) lies outside the archive (truncated or "
                "corrupt)", d->cd_off, d->cd_size);
    else
      rc = 0;
  }
  free(tail);
  return rc;
}

/* 2. Walk the central directory cdir (d->cd_size bytes) for member: its entry in *hit, or an
 * error that lists the members there are. */
static int zip_find_member(const unsigned char *cdir, const ZipDir *d, const char *path,
                           const char *member, const unsigned char **hit, char *err,
                           size_t errlen) {
  size_t mlen = strlen(member), pos = 0;
  char names[400] = "";
  int nlisted = 0;
  for (unsigned i = 0; i < d->n_total; i++) {
    if (pos + ZIP_CDIR_LEN > d->cd_size || rd32(cdir + pos) != ZIP_CDIR_SIG)
      return fail_file(err, errlen, path, "corrupt central directory (entry %u of %u is damaged)",
                       i + 1, (unsigned)d->n_total);
    const unsigned char *c = cdir + pos;
    size_t nlen = rd16(c + 28), xlen = rd16(c + 30), klen = rd16(c + 32);
    if (pos + ZIP_CDIR_LEN + nlen + xlen + klen > d->cd_size)
      return fail_file(err, errlen, path, "corrupt central directory (entry %u runs past its end)",
                       i + 1);
    const unsigned char *name = c + ZIP_CDIR_LEN;
    if (!is_macosx(name, nlen)) {
      if (nlen == mlen && memcmp(name, member, mlen) == 0) {
        *hit = c;
        return 0;
      }
      if (!(nlen > 0 && name[nlen - 1] == '/')) list_name(names, sizeof names, name, nlen, &nlisted);
    }
    pos += ZIP_CDIR_LEN + nlen + xlen + klen;
  }
  return fail_file(err, errlen, path, "no member '%s' in the archive (members: %s)", member,
                   nlisted ? names : "none");
}

/* A member as its central directory entry and local header describe it. */
typedef struct {
  uint16_t method;
  uint32_t crc, csize, usize;
  uint64_t data_off; /* where its compressed bytes start */
} ZipMember;

/* 3. The member's entry hit: flags, method, sizes (checked), then its local header, which says
 * where the data starts. */
static int zip_member(FILE *f, const unsigned char *hit, const ZipDir *d, const char *path,
                      const char *member, ZipMember *m, char *err, size_t errlen) {
  uint16_t flags = rd16(hit + 8);
  m->method = rd16(hit + 10);
  m->crc = rd32(hit + 16);
  m->csize = rd32(hit + 20);
  m->usize = rd32(hit + 24);
  uint32_t loc_off = rd32(hit + 42), csize = m->csize, usize = m->usize;
  if (flags & 0x1)
    return fail_file(err, errlen, path,
                     "member '%s' is encrypted; encrypted archives are not supported", member);
  if (m->method != 0 && m->method != 8)
    return fail_file(err, errlen, path,
                     "member '%s' uses compression method %u; only stored (0) and deflated (8) "
                     "are supported", member, (unsigned)m->method);
  if (csize == 0xFFFFFFFFu || usize == 0xFFFFFFFFu || loc_off == 0xFFFFFFFFu)
    return fail_file(err, errlen, path, "member '%s' needs Zip64, which is not supported", member);
  if (m->method == 0 && csize != usize)
    return fail_file(err, errlen, path,
                     "member '%s' is stored but its sizes differ (%u vs %u): corrupt", member,
                     csize, usize);
  /* deflate expands at most ~1032:1; a larger claim is a corrupt (or hostile) header */
  if (m->method == 8 && (uint64_t)usize > (uint64_t)csize * 1032u + 1024u)
    return fail_file(err, errlen, path,
                     "member '%s' claims %u bytes from %u compressed: corrupt header", member,
                     usize, csize);
  unsigned char lh[ZIP_LOCAL_LEN];
  if ((uint64_t)loc_off + ZIP_LOCAL_LEN > d->cd_off || read_at(f, loc_off, lh, sizeof lh) != 0 ||
      rd32(lh) != ZIP_LOCAL_SIG)
    return fail_file(err, errlen, path,
                     "member '%s': local header at offset %u is missing or damaged", member,
                     loc_off);
  m->data_off = (uint64_t)loc_off + ZIP_LOCAL_LEN + rd16(lh + 26) + rd16(lh + 28);
  if (m->data_off + csize > d->cd_off)
    return fail_file(err, errlen, path,
                     "member '%s': data (offset %llu, %u bytes) runs past the archive contents "
                     "(truncated?)", member, (unsigned long long)m->data_off, csize);
  return 0;
}

/* 4. The member's bytes: read, inflated (or copied) into a new buffer, checked by CRC-32. */
static int zip_member_bytes(FILE *f, const ZipMember *m, const char *path, const char *member,
                            unsigned char **out, char *err, size_t errlen) {
  unsigned char *comp = malloc(m->csize ? m->csize : 1), *buf = NULL;
  int rc = -1;
  if (!comp || read_at(f, m->data_off, comp, m->csize) != 0) {
    fail_file(err, errlen, path, "member '%s': cannot read %u bytes of data", member, m->csize);
  } else if (zip_extract(path, member, comp, m->csize, m->usize, m->method, &buf, err, errlen) ==
             0) {
    uint32_t crc_got = crc32_update(0, buf, m->usize);
    if (crc_got != m->crc) {
      free(buf);
      fail_file(err, errlen, path,
                "member '%s': CRC-32 mismatch (%08x, expected %08x): corrupt data", member,
                crc_got, m->crc);
    } else {
      *out = buf;
      rc = 0;
    }
  }
  free(comp);
  return rc;
}

int zip_read_member(const char *path, const char *member, unsigned char **out, size_t *len,
                    char *err, size_t errlen) {
  if (out) *out = NULL;
  if (len) *len = 0;
  if (!path || !member || !out || !len) return fail_file(err, errlen, path, "zip_read_member: NULL argument");
  FILE *f = fopen(path, "rb");
  if (!f) return fail_file(err, errlen, path, "cannot open: %s", strerror(errno));
  int rc = -1;
  unsigned char *cdir = NULL;
  uint64_t fsize = 0;
  ZipDir d;
  const unsigned char *hit = NULL;
  ZipMember m = {0};
  if (zip_check_start(f, path, &fsize, err, errlen) != 0 ||
      zip_read_eocd(f, path, fsize, &d, err, errlen) != 0)
    goto done;
  cdir = malloc(d.cd_size ? d.cd_size : 1);
  if (!cdir || read_at(f, d.cd_off, cdir, d.cd_size) != 0) {
    fail_file(err, errlen, path, "cannot read the central directory");
    goto done;
  }
  if (zip_find_member(cdir, &d, path, member, &hit, err, errlen) == 0 &&
      zip_member(f, hit, &d, path, member, &m, err, errlen) == 0 &&
      zip_member_bytes(f, &m, path, member, out, err, errlen) == 0) {
    *len = m.usize;
    rc = 0;
  }
done:
  free(cdir);
  fclose(f);
  return rc;
}

/* ------------------------------------------------------------------ gzip */

/* gzerror's text without the "path: " prefix zlib puts in front of it. */
static void gz_msg(gzFile g, const char *path, char *msg, size_t n) {
  int zerr = 0;
  const char *m = gzerror(g, &zerr);
  size_t pl = strlen(path);
  if (m && strncmp(m, path, pl) == 0 && m[pl] == ':' && m[pl + 1] == ' ') m += pl + 2;
  snprintf(msg, n, "%s", m && *m ? m : "zlib error");
}

int gz_read_all(const char *path, unsigned char **out, size_t *len, char *err, size_t errlen) {
  if (out) *out = NULL;
  if (len) *len = 0;
  if (!path || !out || !len) return fail_file(err, errlen, path, "gz_read_all: NULL argument");
  struct stat st;
  if (stat(path, &st) != 0) return fail_file(err, errlen, path, "cannot open: %s", strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail_file(err, errlen, path, "not a regular file");
  gzFile g = gzopen(path, "rb");
  if (!g) return fail_file(err, errlen, path, "cannot open: %s", strerror(errno));
  gzbuffer(g, 1 << 17);
  size_t cap = 1 << 16, n = 0;
  unsigned char *buf = malloc(cap + 1);
  if (!buf) {
    gzclose_r(g);
    return fail_file(err, errlen, path, "out of memory");
  }
  for (;;) {
    if (n > GZ_MAX_BYTES) { /* the read below asked for at most one byte past the cap */
      free(buf);
      gzclose_r(g);
      return fail_file(err, errlen, path,
                  "decompresses to more than %zu MiB (GZ_MAX_BYTES), more than any data file "
                  "of the kit: corrupt or not a data file", GZ_MAX_BYTES >> 20);
    }
    if (cap - n < (1 << 16) && cap <= GZ_MAX_BYTES) {
      size_t ncap = cap * 2 > GZ_MAX_BYTES + 1 ? GZ_MAX_BYTES + 1 : cap * 2;
      unsigned char *nb = realloc(buf, ncap + 1);
      if (!nb) {
        free(buf);
        gzclose_r(g);
        return fail_file(err, errlen, path, "out of memory (%zu bytes read so far)", n);
      }
      buf = nb;
      cap = ncap;
    }
    unsigned want = (unsigned)((cap - n) > (1u << 30) ? (1u << 30) : (cap - n));
    int got = gzread(g, buf + n, want);
    if (got < 0) {
      char msg[160];
      gz_msg(g, path, msg, sizeof msg);
      free(buf);
      gzclose_r(g);
      return fail_file(err, errlen, path, "corrupt gzip data (%s)", msg);
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  int zerr = Z_OK;
  char msg[160]; /* gzerror's string dies with gzclose */
  gz_msg(g, path, msg, sizeof msg);
  gzerror(g, &zerr);
  int crc = gzclose_r(g);
  if (zerr == Z_BUF_ERROR || crc == Z_BUF_ERROR) {
    free(buf);
    return fail_file(err, errlen, path, "truncated gzip file (the stream ends early; re-download it)");
  }
  if (zerr != Z_OK || crc != Z_OK) {
    free(buf);
    return fail_file(err, errlen, path, "gzip read error (%s)", msg);
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

/* ------------------------------------------------------------------ IDX */

/* The magic and dims of an IDX header in buf[0..len): *header its size in bytes, *count the
 * payload bytes it promises. */
static int idx_header(const unsigned char *buf, size_t len, int expect_ndim, int dims[3],
                      size_t *header_len, uint64_t *count_out, const char *name, char *err,
                      size_t errlen) {
  if (expect_ndim != 1 && expect_ndim != 3)
    return fail_file(err, errlen, name, "idx_parse: expect_ndim must be 1 or 3, got %d", expect_ndim);
  if (len < 4) return fail_file(err, errlen, name, "not an IDX file (only %zu bytes)", len);
  uint32_t magic = rd32be(buf);
  if (magic != 0x00000801u && magic != 0x00000803u)
    return fail_file(err, errlen, name,
                "not an IDX file: magic 0x%08x (expected 0x00000801 or 0x00000803)", magic);
  int ndim = (int)(magic & 0xff);
  if (ndim != expect_ndim)
    return fail_file(err, errlen, name, "IDX magic 0x%08x means %d dims, expected %d (%s file?)", magic,
                ndim, expect_ndim, ndim == 1 ? "a labels" : "an images");
  size_t header = 4 + 4 * (size_t)ndim;
  if (len < header)
    return fail_file(err, errlen, name, "truncated IDX header (%zu bytes, need %zu)", len, header);
  uint64_t count = 1;
  for (int i = 0; i < 3; i++) dims[i] = 0;
  for (int i = 0; i < ndim; i++) {
    uint32_t d = rd32be(buf + 4 + 4 * i);
    if (d == 0 || d > (uint32_t)INT_MAX)
      return fail_file(err, errlen, name, "IDX dimension %d is %u (must be 1..%d)", i, d, INT_MAX);
    dims[i] = (int)d;
    count *= d;
    if (count > ((uint64_t)1 << 40))
      return fail_file(err, errlen, name, "IDX dimensions are absurdly large (corrupt header)");
  }
  *header_len = header;
  *count_out = count;
  return 0;
}

int idx_parse(const unsigned char *buf, size_t len, int expect_ndim, int dims[3],
              const unsigned char **payload, const char *name, char *err, size_t errlen) {
  if (payload) *payload = NULL;
  if (!buf || !dims) return fail_file(err, errlen, name, "idx_parse: NULL argument");
  size_t header = 0;
  uint64_t count = 0;
  if (idx_header(buf, len, expect_ndim, dims, &header, &count, name, err, errlen) != 0) return -1;
  uint64_t have = len - header;
  if (have < count)
    return fail_file(err, errlen, name, "truncated IDX data: %llu bytes, the header says %llu",
                (unsigned long long)have, (unsigned long long)count);
  if (have > count)
    return fail_file(err, errlen, name, "IDX size mismatch: %llu bytes of data, the header says %llu",
                (unsigned long long)have, (unsigned long long)count);
  if (payload) *payload = buf + header;
  return 0;
}

/* Read up to n bytes; returns the count, or -1 on a gzip error (message in msg). */
static long gz_read_n(gzFile g, const char *path, unsigned char *dst, size_t n, char *msg,
                      size_t msglen) {
  size_t got = 0;
  while (got < n) {
    unsigned want = (unsigned)(n - got > (1u << 30) ? (1u << 30) : n - got);
    int k = gzread(g, dst + got, want);
    if (k < 0) {
      gz_msg(g, path, msg, msglen);
      return -1;
    }
    if (k == 0) break;
    got += (size_t)k;
  }
  return (long)got;
}

/* The count bytes of IDX data after the header, into dst, and nothing after them (which also
 * checks the gzip trailer). A stream that ends early is a truncated file. */
static int idx_read_payload(gzFile g, const char *path, unsigned char *dst, uint64_t count,
                            char *err, size_t errlen) {
  char msg[160];
  long k = gz_read_n(g, path, dst, (size_t)count, msg, sizeof msg);
  if (k < 0 || (uint64_t)k < count) {
    int zerr = 0;
    gzerror(g, &zerr);
    if (zerr == Z_BUF_ERROR)
      return fail_file(err, errlen, path,
                       "truncated gzip file (the stream ends early; re-download it)");
    if (k < 0) return fail_file(err, errlen, path, "corrupt gzip data (%s)", msg);
    return fail_file(err, errlen, path, "truncated IDX data: %ld bytes, the header says %llu", k,
                     (unsigned long long)count);
  }
  unsigned char extra;
  k = gz_read_n(g, path, &extra, 1, msg, sizeof msg);
  if (k < 0) return fail_file(err, errlen, path, "corrupt gzip data (%s)", msg);
  if (k > 0)
    return fail_file(err, errlen, path,
                     "IDX size mismatch: more than the %llu bytes of data the header says "
                     "(stopped reading there)", (unsigned long long)count);
  return 0;
}

int idx_read(const char *path, int expect_ndim, int dims[3], unsigned char **out,
             const unsigned char **payload, char *err, size_t errlen) {
  if (out) *out = NULL;
  if (payload) *payload = NULL;
  if (!path || !dims || !out) return fail_file(err, errlen, path, "idx_read: NULL argument");
  if (expect_ndim != 1 && expect_ndim != 3)
    return fail_file(err, errlen, path, "idx_read: expect_ndim must be 1 or 3, got %d", expect_ndim);
  struct stat st;
  if (stat(path, &st) != 0) return fail_file(err, errlen, path, "cannot open: %s", strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail_file(err, errlen, path, "not a regular file");
  gzFile g = gzopen(path, "rb");
  if (!g) return fail_file(err, errlen, path, "cannot open: %s", strerror(errno));
  char msg[160];
  unsigned char hdr[16];
  size_t header = 4 + 4 * (size_t)expect_ndim;
  uint64_t count = 0;
  unsigned char *buf = NULL;
  long k = gz_read_n(g, path, hdr, header, msg, sizeof msg);
  if (k < 0) {
    fail_file(err, errlen, path, "corrupt gzip data (%s)", msg);
    goto bad;
  }
  /* the header alone decides the size: checked before anything is allocated */
  if (idx_header(hdr, (size_t)k, expect_ndim, dims, &header, &count, path, err, errlen) != 0)
    goto bad;
  if (count > GZ_MAX_BYTES - header) {
    fail_file(err, errlen, path,
         "the IDX header promises %llu bytes, more than the %zu MiB this reader accepts "
         "(GZ_MAX_BYTES): corrupt header", (unsigned long long)count, GZ_MAX_BYTES >> 20);
    goto bad;
  }
  buf = malloc(header + (size_t)count + 1);
  if (!buf) {
    fail_file(err, errlen, path, "out of memory (%llu bytes)", (unsigned long long)count);
    goto bad;
  }
  memcpy(buf, hdr, header);
  if (idx_read_payload(g, path, buf + header, count, err, errlen) != 0) goto bad;
  int zerr = Z_OK;
  gz_msg(g, path, msg, sizeof msg);
  gzerror(g, &zerr);
  int crc = gzclose_r(g);
  g = NULL;
  if (zerr == Z_BUF_ERROR || crc == Z_BUF_ERROR) {
    fail_file(err, errlen, path, "truncated gzip file (the stream ends early; re-download it)");
    goto bad;
  }
  if (zerr != Z_OK || crc != Z_OK) {
    fail_file(err, errlen, path, "gzip read error (%s)", msg);
    goto bad;
  }
  buf[header + count] = '\0';
  *out = buf;
  if (payload) *payload = buf + header;
  return 0;
bad:
  free(buf);
  if (g) gzclose_r(g);
  return -1;
}
