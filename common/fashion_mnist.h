/* fashion_mnist.h — the Fashion-MNIST data set (lab 07): the four IDX files read with zlib,
 * validated (magic, dims, byte counts, label range, images/labels count), kept as raw bytes;
 * batches are made on demand as floats in [0, 1], bilinearly resized (align_corners = false,
 * like torchvision's Resize in the book's pipeline) when the requested side is not 28.
 * Resizing per batch keeps memory at 47 MB for the training set even for the book's 96 x 96
 * (a pre-resized float copy would need 2.2 GB). Every failure returns -1 with a one-line
 * message naming the file; nothing here exits or crashes on bad input. */
#ifndef AL_FASHION_MNIST_H
#define AL_FASHION_MNIST_H

#include <stddef.h>

#include "rng.h"

typedef struct FashionMNIST {
  int n;                  /* number of images */
  int rows, cols;         /* pixels per image (28 x 28) */
  unsigned char *pixels;  /* (n, rows, cols), 0..255 */
  unsigned char *labels;  /* (n), 0..9 */
} FashionMNIST;

/* The book's text labels, index = class id. */
extern const char *const fashion_mnist_text_labels[10];

/* Read an images file and a labels file (gzip or plain IDX). Checks: IDX magic (0x803 images,
 * 0x801 labels), no truncation or trailing bytes, labels in 0..9, as many labels as images. */
int fashion_mnist_read(FashionMNIST *d, const char *images_path, const char *labels_path,
                       char *err, size_t errlen);
/* Find and read split "train" or "t10k" ("train-images-idx3-ubyte.gz", ...) via data_find:
 * data_dir, $D2L_DATA_DIR, ./data/, ../shared/data/, /usr/share/datasets/fashion-mnist/. */
int fashion_mnist_load(FashionMNIST *d, const char *split, const char *data_dir, char *err,
                       size_t errlen);
void fashion_mnist_free(FashionMNIST *d);

/* Bilinear resize of one ih x iw image to oh x ow, align_corners = false (PyTorch's
 * F.interpolate(mode="bilinear") rule: source coordinate (i + 0.5) * ih / oh - 0.5, clamped). */
void bilinear_resize(const float *src, int ih, int iw, float *dst, int oh, int ow);

/* Batch: images order[start .. start + bs) as X (bs, 1, size, size) floats in [0, 1] and their
 * class ids in y (bs) (floats holding integers, as the ops take labels). order may be NULL
 * (identity). */
void fashion_mnist_batch(const FashionMNIST *d, const int *order, int start, int bs, int size,
                         float *X, float *y);
/* A malloc'd permutation 0..n-1, shuffled with r when r is not NULL. */
int *fashion_mnist_order(int n, Rng *r);

#endif
