/* data.h — finding data files and reading archives: a zip reader (central directory, stored
 * and deflated members, CRC-32 checked, __MACOSX/ skipped), a gzip reader, and IDX parsing for
 * Fashion-MNIST. Every failure returns -1 and writes a one-line message naming the file and
 * the problem into err; nothing here exits or crashes on bad input. */
#ifndef AL_DATA_H
#define AL_DATA_H

#include <stddef.h>
#include <stdint.h>

/* Find `name` (e.g. "fra-eng.zip") in, in order: data_dir (--data-dir, may be NULL),
 * $D2L_DATA_DIR, ./data/, ../shared/data/, then extra_dir (may be NULL, e.g.
 * "/usr/share/datasets/fashion-mnist"). Returns a malloc'd path, or NULL and writes into
 * `searched` the list of places tried (for the error message). */
char *data_find(const char *name, const char *data_dir, const char *extra_dir, char *searched,
                size_t searched_len);
/* When on (the labs: cli_parse turns it on), data_find prints "data: /abs/path" on stdout for
 * each file it finds, once per file, so a run says which data it read. */
void data_set_announce(int on);

/* Read member `member` of zip archive `path` into a malloc'd buffer (NUL-terminated; *len
 * excludes the NUL). */
int zip_read_member(const char *path, const char *member, unsigned char **out, size_t *len,
                    char *err, size_t errlen);

/* Read a whole gzip file (or a plain file) into a malloc'd buffer. More than GZ_MAX_BYTES of
 * decompressed data is an error (a small .gz can inflate to anything): it is read in growing
 * steps and stops there, never allocating more. */
#define GZ_MAX_BYTES ((size_t)256 << 20) /* 256 MiB: Fashion-MNIST's largest file is 47 MB */
int gz_read_all(const char *path, unsigned char **out, size_t *len, char *err, size_t errlen);

/* Read an IDX file (gzip or plain) whose size comes from its header: the magic and the dims
 * are read and checked first, then exactly header + prod(dims) bytes are allocated and read;
 * a stream with fewer or more bytes than the header promises is an error. The header's claim
 * is capped at GZ_MAX_BYTES. *buf (malloc'd, the whole file) and *payload as idx_parse. */
int idx_read(const char *path, int expect_ndim, int dims[3], unsigned char **buf,
             const unsigned char **payload, char *err, size_t errlen);

/* IDX (MNIST) parsing of an in-memory file: magic 0x00000801 (labels, 1 dim) or 0x00000803
 * (images, 3 dims). Validates the magic, dims and the byte count; *dims gets the sizes. */
int idx_parse(const unsigned char *buf, size_t len, int expect_ndim, int dims[3],
              const unsigned char **payload, const char *name, char *err, size_t errlen);

uint32_t crc32_update(uint32_t crc, const void *buf, size_t len); /* zlib-compatible CRC-32 */

#endif
