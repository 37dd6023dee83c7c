/* mlp_recompute.c — the ViT MLP with a memory-saving recompute (gelu_mlp_forward, nn.h). Not on
 * any lab's path: lab07 runs exercise 7.4's ViTMLP_forward, the plain composition. A file of
 * its own so that a test runner, which never calls it, never holds it
 * (tests/grade/kit_answers.txt: it computes exercise 7.4). */
#include "nn.h"
#include "rng.h"

/* What rebuilding dropout1(GELU(A)) takes: dense1's output, still held, and the generator as
 * dropout1 found it, replayed so that its mask comes out the same. */
typedef struct {
  Tensor *A;
  const Dropout *dropout1;
  bool training;
  Rng draws;
} MlpHidden;

/* Hand back values no backward reads (a big arena block; arena_release). */
static void release_values(Tensor *t) {
  if (arena_release(t->data)) t->data = NULL;
}

static Tensor *mlp_hidden_again(void *arg) {
  const MlpHidden *h = arg;
  Rng replay = h->draws, *was = rng_current();
  rng_use(&replay);
  Tensor *G = t_gelu(h->A); /* (..., mlp_num_hiddens) */
  Tensor *H = Dropout_forward(h->dropout1, G, h->training);
  rng_use(was);
  if (H != G) release_values(G);
  return H;
}

Tensor *gelu_mlp_forward(const Linear *dense1, const Dropout *dropout1, const Linear *dense2,
                         const Dropout *dropout2, Tensor *X, bool training) {
  Tensor *A = Linear_forward(dense1, X); /* (..., mlp_num_hiddens) */
  MlpHidden *hid = arena_alloc(sizeof *hid);
  *hid = (MlpHidden){A, dropout1, training, *rng_current()};
  Tensor *G = t_gelu(A);
  Tensor *H = Dropout_forward(dropout1, G, training);
  Tensor *Z = Linear_forward(dense2, H); /* (..., h) */
  /* Memory (the book ViT preset's hidden activations are 4736 x 2048, 39 MB each): H's values
   * are read by dense2's backward only, so they are rebuilt just before it (one GELU and one
   * dropout pass) instead of kept through the step. */
  Tensor *R = t_recompute(Z, H, mlp_hidden_again, hid);
  Tensor *out = Dropout_forward(dropout2, R, training);
  if (R != Z) { /* no backward reads G's values (GELU's reads A, dropout's its mask), nor Z's
                 * once dropout2 has made its own */
    if (G != H) release_values(G);
    if (out != R) release_values(Z), R->data = Z->data;
  }
  return out;
}
