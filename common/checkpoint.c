/* checkpoint.c — a model's parameters to and from a file (nn.h): one copy of the block between
 * the device and the host, a named, shaped and CRC-checked record of every tensor. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "data.h"
#include "nn.h"
#include "util.h"

/* ---------- checkpoints ---------- */

/* Layout (little-endian host order; the magic's version word rejects foreign byte orders):
 *   "ALCKPT\0\0"  u32 version  u32 tag_len  tag bytes  u32 count
 *   per tensor: u32 name_len, name, u32 ndim, i32 shape[ndim], f32 data[size]
 *   u32 crc32 of every byte above. */
#define CKPT_MAGIC "ALCKPT\0\0"
#define CKPT_VERSION 1u

typedef struct Buf {
  unsigned char *p;
  size_t n, cap;
} Buf;

static void buf_put(Buf *b, const void *src, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 256;
    b->p = xrealloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}
static void buf_u32(Buf *b, uint32_t v) { buf_put(b, &v, 4); }

int checkpoint_save(ParamSet *ps, const char *tag, const char *path, char *err,
                    size_t errlen) {
  if (!ps || !path) return fail(err, errlen, "checkpoint_save: NULL argument");
  paramset_pack(ps);
  if (!tag) tag = "";
  Buf b = {0};
  buf_put(&b, CKPT_MAGIC, 8);
  buf_u32(&b, CKPT_VERSION);
  buf_u32(&b, (uint32_t)strlen(tag));
  buf_put(&b, tag, strlen(tag));
  buf_u32(&b, (uint32_t)ps->n);
  /* the whole parameter block to the host in one copy */
  float *host = xmalloc(sizeof(float) * (size_t)(ps->total ? ps->total : 1));
  backend_of(ps->device)->to_host(host, ps->data, sizeof(float) * (size_t)ps->total);
  long off = 0;
  for (int i = 0; i < ps->n; i++) {
    const Tensor *t = ps->items[i];
    const char *nm = t->name ? t->name : "";
    buf_u32(&b, (uint32_t)strlen(nm));
    buf_put(&b, nm, strlen(nm));
    buf_u32(&b, (uint32_t)t->ndim);
    for (int k = 0; k < t->ndim; k++) buf_u32(&b, (uint32_t)t->shape[k]);
    buf_put(&b, host + off, sizeof(float) * (size_t)t->size);
    off += t->size;
  }
  free(host);
  buf_u32(&b, crc32_update(0, b.p, b.n));
  size_t tl = strlen(path) + 5;
  char *tmp = xmalloc(tl);
  snprintf(tmp, tl, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  int rc = 0;
  if (!f) {
    rc = fail(err, errlen, "checkpoint_save: cannot create %s: %s", tmp, strerror(errno));
  } else {
    bool ok = fwrite(b.p, 1, b.n, f) == b.n;
    ok = (fflush(f) == 0) && ok;
    ok = (fsync(fileno(f)) == 0) && ok; /* on disk before the rename makes it the checkpoint */
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
      rc = fail(err, errlen, "checkpoint_save: writing %s failed: %s (disk full?)", tmp,
                strerror(errno));
      remove(tmp);
    } else if (rename(tmp, path) != 0) {
      rc = fail(err, errlen, "checkpoint_save: cannot rename %s to %s: %s", tmp, path,
                strerror(errno));
      remove(tmp);
    }
  }
  free(tmp);
  free(b.p);
  return rc;
}

/* A bounds-checked reader over the loaded file. */
typedef struct Rd {
  const unsigned char *p;
  size_t n, off;
} Rd;
static bool rd(Rd *r, void *dst, size_t n) {
  if (n > r->n - r->off) return false;
  memcpy(dst, r->p + r->off, n);
  r->off += n;
  return true;
}

/* The whole file into b (malloc'd). */
static int read_file(const char *path, Buf *b, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) return fail(err, errlen, "checkpoint %s: cannot open: %s", path, strerror(errno));
  unsigned char chunk[65536];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (b->n + k > ((size_t)1 << 31)) {
      fclose(f);
      return fail(err, errlen, "checkpoint %s: larger than 2 GiB, not a lab checkpoint", path);
    }
    buf_put(b, chunk, k);
  }
  const bool rerr = ferror(f);
  fclose(f);
  return rerr ? fail(err, errlen, "checkpoint %s: read error", path) : 0;
}

static int truncated(const char *path, size_t n, char *err, size_t errlen) {
  return fail(err, errlen, "checkpoint %s: truncated or malformed (%zu bytes); save it again",
              path, n);
}

/* The magic, version, CRC, model tag and tensor count of b, checked against the model; leaves
 * r after the count, its end before the CRC. */
static int check_header(const Buf *b, Rd *r, const ParamSet *ps, const char *tag,
                        const char *path, char *err, size_t errlen) {
  char magic[8];
  uint32_t ver, tlen, count, crc;
  if (!rd(r, magic, 8) || memcmp(magic, CKPT_MAGIC, 8) != 0)
    return fail(err, errlen, "checkpoint %s: not an attention-lab checkpoint (bad magic); was "
                "it written by --save?", path);
  if (!rd(r, &ver, 4)) return truncated(path, b->n, err, errlen);
  if (ver != CKPT_VERSION)
    return fail(err, errlen, "checkpoint %s: format version %u is %s this build's (version %u); "
                "%s", path, ver, ver < CKPT_VERSION ? "older than" : "newer than", CKPT_VERSION,
                ver < CKPT_VERSION ? "save it again with this build" : "use the build that wrote it");
  if (b->n < 8 + 4 + 4) return truncated(path, b->n, err, errlen);
  memcpy(&crc, b->p + b->n - 4, 4);
  if (crc32_update(0, b->p, b->n - 4) != crc)
    return fail(err, errlen, "checkpoint %s: CRC-32 mismatch: the file is truncated or corrupted "
                "(%zu bytes); save it again", path, b->n);
  r->n = b->n - 4; /* the CRC is not payload */
  if (!rd(r, &tlen, 4) || tlen > r->n - r->off) return truncated(path, b->n, err, errlen);
  if (tlen != strlen(tag) || memcmp(r->p + r->off, tag, tlen) != 0)
    return fail(err, errlen, "checkpoint %s: saved for model '%.*s', but this model is '%s'; use "
                "the same --preset and model flags as when it was saved (./labNN --help lists "
                "them)", path, (int)(tlen < 200 ? tlen : 200), (const char *)r->p + r->off, tag);
  r->off += tlen;
  if (!rd(r, &count, 4)) return truncated(path, b->n, err, errlen);
  if ((int)count != ps->n)
    return fail(err, errlen, "checkpoint %s: holds %u tensors, the model has %d", path, count,
                ps->n);
  return 0;
}

/* Tensor t's record (name, shape, values) from r into dst, checked against t. */
static int read_tensor(Rd *r, int i, const Tensor *t, float *dst, const char *path,
                       size_t total, char *err, size_t errlen) {
  char name[512];
  uint32_t nl, nd;
  if (!rd(r, &nl, 4) || nl >= sizeof name || !rd(r, name, nl))
    return truncated(path, total, err, errlen);
  name[nl] = '\0';
  if (strcmp(name, t->name ? t->name : "") != 0)
    return fail(err, errlen, "checkpoint %s: tensor %d is '%s', the model expects '%s'", path, i,
                name, t->name ? t->name : "");
  if (!rd(r, &nd, 4) || nd < 1 || nd > T_MAXDIM) return truncated(path, total, err, errlen);
  int shape[T_MAXDIM];
  bool same = (int)nd == t->ndim;
  for (uint32_t d = 0; d < nd; d++) {
    uint32_t v;
    if (!rd(r, &v, 4)) return truncated(path, total, err, errlen);
    shape[d] = (int)v;
    if (same && shape[d] != t->shape[d]) same = false;
  }
  if (!same) {
    char st[64], sf[96];
    int o = snprintf(sf, sizeof sf, "(");
    for (uint32_t d = 0; d < nd && o < 80; d++)
      o += snprintf(sf + o, sizeof sf - (size_t)o, "%s%d", d ? ", " : "", shape[d]);
    snprintf(sf + o, sizeof sf - (size_t)o, ")");
    return fail(err, errlen, "checkpoint %s: tensor '%s' has shape %s in the file but %s in the "
                "model", path, name, sf, shape_str(t, st, sizeof st));
  }
  if (!rd(r, dst, sizeof(float) * (size_t)t->size)) return truncated(path, total, err, errlen);
  return 0;
}

int checkpoint_load(ParamSet *ps, const char *tag, const char *path, char *err, size_t errlen) {
  if (!ps || !path) return fail(err, errlen, "checkpoint_load: NULL argument");
  if (!tag) tag = "";
  Buf b = {0};
  if (read_file(path, &b, err, errlen) != 0) {
    free(b.p);
    return -1;
  }
  paramset_pack(ps);
  /* the file's values, staged on the host as one block and sent to the model in one copy */
  float *staged = xmalloc(sizeof(float) * (size_t)(ps->total ? ps->total : 1));
  Rd r = {b.p, b.n, 0};
  int rc = check_header(&b, &r, ps, tag, path, err, errlen);
  long off = 0;
  for (int i = 0; i < ps->n && rc == 0; i++) {
    rc = read_tensor(&r, i, ps->items[i], staged + off, path, b.n, err, errlen);
    off += ps->items[i]->size;
  }
  if (rc == 0 && r.off != r.n)
    rc = fail(err, errlen, "checkpoint %s: %zu unexpected bytes after the last tensor", path,
              r.n - r.off);
  if (rc == 0) /* everything checked out: now overwrite the model */
    backend_of(ps->device)->from_host(ps->data, staged, sizeof(float) * (size_t)ps->total);
  free(staged);
  free(b.p);
  return rc;
}
