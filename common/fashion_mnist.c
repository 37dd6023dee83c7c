/* fashion_mnist.c — reading, validating and batching Fashion-MNIST (see fashion_mnist.h). */
#include "fashion_mnist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "util.h"

const char *const fashion_mnist_text_labels[10] = {"t-shirt", "trouser", "pullover", "dress",
                                                   "coat",    "sandal",  "shirt",    "sneaker",
                                                   "bag",     "ankle boot"};

int fashion_mnist_read(FashionMNIST *d, const char *images_path, const char *labels_path,
                       char *err, size_t errlen) {
  memset(d, 0, sizeof *d);
  unsigned char *ibuf = NULL, *lbuf = NULL;
  const unsigned char *ipay, *lpay;
  int idims[3], ldims[3];
  /* idx_read sizes the buffer from the header: a small .gz that inflates to gigabytes stops
   * at the header's byte count, before any large allocation */
  if (idx_read(images_path, 3, idims, &ibuf, &ipay, err, errlen) != 0) return -1;
  int rc = -1;
  if (idx_read(labels_path, 1, ldims, &lbuf, &lpay, err, errlen) != 0) goto done;
  if (ldims[0] != idims[0]) {
    fail(err, errlen,
         "%s: %d labels, but %s has %d images (the two files must come from the same split)",
         labels_path, ldims[0], images_path, idims[0]);
    goto done;
  }
  for (int i = 0; i < ldims[0]; i++)
    if (lpay[i] > 9) {
      fail(err, errlen, "%s: label %d of image %d is not a class id 0..9 (corrupt file?)",
           labels_path, lpay[i], i);
      goto done;
    }
  d->n = idims[0];
  d->rows = idims[1];
  d->cols = idims[2];
  size_t npix = (size_t)d->n * (size_t)d->rows * (size_t)d->cols;
  d->pixels = xmalloc(npix ? npix : 1);
  memcpy(d->pixels, ipay, npix);
  d->labels = xmalloc((size_t)d->n);
  memcpy(d->labels, lpay, (size_t)d->n);
  rc = 0;
done:
  free(ibuf);
  free(lbuf);
  return rc;
}

int fashion_mnist_load(FashionMNIST *d, const char *split, const char *data_dir, char *err,
                       size_t errlen) {
  memset(d, 0, sizeof *d);
  if (!split || (strcmp(split, "train") != 0 && strcmp(split, "t10k") != 0))
    return fail(err, errlen, "fashion_mnist_load: split must be \"train\" or \"t10k\", got %s",
                split ? split : "NULL");
  char iname[64], lname[64], searched[1024];
  snprintf(iname, sizeof iname, "%s-images-idx3-ubyte.gz", split);
  snprintf(lname, sizeof lname, "%s-labels-idx1-ubyte.gz", split);
  const char *sys = "/usr/share/datasets/fashion-mnist";
  char *ip = data_find(iname, data_dir, sys, searched, sizeof searched);
  if (!ip)
    return fail(err, errlen,
                "Fashion-MNIST file %s not found (looked at: %s); install it with "
                "`apt-get install dataset-fashion-mnist` (make deps) or pass --data-dir",
                iname, searched);
  char *lp = data_find(lname, data_dir, sys, searched, sizeof searched);
  if (!lp) {
    free(ip);
    return fail(err, errlen, "Fashion-MNIST file %s not found (looked at: %s)", lname, searched);
  }
  int rc = fashion_mnist_read(d, ip, lp, err, errlen);
  free(ip);
  free(lp);
  return rc;
}

void fashion_mnist_free(FashionMNIST *d) {
  free(d->pixels);
  free(d->labels);
  memset(d, 0, sizeof *d);
}

/* Source coordinate of output index i for align_corners = false, clamped at the low edge as
 * PyTorch does (the high edge is handled by clamping the second tap). */
static void taps(int i, int in, int out, int *i0, int *i1, float *w1) {
  float s = ((float)i + 0.5f) * ((float)in / (float)out) - 0.5f;
  if (s < 0) s = 0;
  int a = (int)s;
  if (a > in - 1) a = in - 1;
  *i0 = a;
  *i1 = a + 1 < in ? a + 1 : in - 1;
  *w1 = s - (float)a;
}

void bilinear_resize(const float *src, int ih, int iw, float *dst, int oh, int ow) {
  for (int y = 0; y < oh; y++) {
    int y0, y1;
    float wy;
    taps(y, ih, oh, &y0, &y1, &wy);
    for (int x = 0; x < ow; x++) {
      int x0, x1;
      float wx;
      taps(x, iw, ow, &x0, &x1, &wx);
      float top = src[y0 * iw + x0] * (1 - wx) + src[y0 * iw + x1] * wx;
      float bot = src[y1 * iw + x0] * (1 - wx) + src[y1 * iw + x1] * wx;
      dst[y * ow + x] = top * (1 - wy) + bot * wy;
    }
  }
}

void fashion_mnist_batch(const FashionMNIST *d, const int *order, int start, int bs, int size,
                         float *X, float *y) {
  const int R = d->rows, C = d->cols;
  float *tmp = size == R && size == C ? NULL : xmalloc(sizeof(float) * (size_t)R * C);
  for (int b = 0; b < bs; b++) {
    int idx = order ? order[start + b] : start + b;
    const unsigned char *px = d->pixels + (size_t)idx * R * C;
    float *dst = X + (size_t)b * size * size; /* (1, size, size) */
    float *f = tmp ? tmp : dst;
    for (int i = 0; i < R * C; i++) f[i] = (float)px[i] * (1.0f / 255.0f);
    if (tmp) bilinear_resize(tmp, R, C, dst, size, size);
    y[b] = (float)d->labels[idx];
  }
  free(tmp);
}

int *fashion_mnist_order(int n, Rng *r) {
  int *o = xmalloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++) o[i] = i;
  if (r) rng_shuffle(r, o, n);
  return o;
}
