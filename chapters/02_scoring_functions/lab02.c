/***
# Attention Scoring Functions

Lab 01 pooled values with weights that came from a kernel: the query $x$ was compared with each
key $x_i$ through $-\frac{1}{2}(x - x_i)^2$, and a softmax turned the comparisons into weights.
The comparison is the part worth designing. Call it the *attention scoring function*
$a(\mathbf{q}, \mathbf{k})$: for a query $\mathbf{q}$ and $m$ key–value pairs
$(\mathbf{k}_1, \mathbf{v}_1), \ldots, (\mathbf{k}_m, \mathbf{v}_m)$, attention pooling is

$$f(\mathbf{q}, (\mathbf{k}_1, \mathbf{v}_1), \ldots, (\mathbf{k}_m, \mathbf{v}_m)) =
\sum_{i=1}^m \alpha(\mathbf{q}, \mathbf{k}_i) \mathbf{v}_i,
\qquad
\alpha(\mathbf{q}, \mathbf{k}_i) = \mathrm{softmax}(a(\mathbf{q}, \mathbf{k}_i)) =
\frac{\exp(a(\mathbf{q}, \mathbf{k}_i))}{\sum_{j=1}^m \exp(a(\mathbf{q}, \mathbf{k}_j))}.$$

The weights $\alpha$ are non-negative and sum to one over the keys, whatever $a$ is. This lab
builds the two scoring functions every later lab uses — *additive* attention (lab 03's Bahdanau
decoder) and *scaled dot-product* attention (lab 04's multi-head attention, the Transformer of
lab 06, the ViT of lab 07) — and the masked softmax that lets them ignore padding.

Run it with `make lab02 && ./lab02` (flags: `./lab02 --help`). Output goes to `out/lab02/`
(or `--out DIR`): the two heatmaps and `summary.json`, which holds every tensor printed here.
Built with `VARIANT=labs`, the chapter runs until it needs an exercise you have not written
yet, then says which.
@program
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/cli.h"
#include "../../common/exercise.h"
#include "../../common/summary.h"
#include "../../common/nn.h"
#include "../../common/plot.h"
#include "../../common/rng.h"
#include "../../common/util.h"
#include "lab02/lab02.h"

/* d2l's show_heatmaps for one (queries, keys) matrix: the book reshapes the weights to
 * (1, 1, queries, keys) — one panel — with Keys across and Queries down, in Reds. */
static void show_heatmap(const char *out, const char *name, const Tensor *w) {
  HeatMap hm = {NULL, host_read(w), (int)(w->size / w->shape[w->ndim - 1]),
                w->shape[w->ndim - 1]};
  char *base = path_join(out, name);
  figure_saved(base, plot_heatmaps(base, &hm, 1, 1, "Keys", "Queries", "Reds", 0, 0));
  free(base);
}

/* Largest |a - b| over two same-sized tensors. */
static double max_abs_diff(const Tensor *a, const Tensor *b) {
  const float *ah = host_read(a), *bh = host_read(b);
  double m = 0;
  for (long i = 0; i < a->size; i++) m = fmax(m, fabs((double)ah[i] - bh[i]));
  return m;
}

static void cost_table(Summary *S);
static void covariance_check(Summary *S, uint64_t seed);

int main(int argc, char **argv) {
  LabArgs args;
  bool random_keys = false, distance = false, bilinear = false, cost = false, covariance = false;
  const CliOpt extra[] = {
      {"--random-keys", OPT_FLAG, &random_keys,
       "draw the toy keys from N(0, 1) instead of all ones (exercise 1)"},
      {"--distance", OPT_FLAG, &distance,
       "also score with the Gaussian kernel -|q - k|^2 / 2 and compare (exercise 2)"},
      {"--bilinear", OPT_FLAG, &bilinear,
       "score queries and keys of different lengths with q^T M k (exercise 3)"},
      {"--cost", OPT_FLAG, &cost,
       "time additive vs dot-product attention as the sequences grow (exercise 4)"},
      {"--covariance", OPT_FLAG, &covariance,
       "check that the gradient of dot-product attention in q is the keys' covariance "
       "(d2l 1.0, 11.1 exercise 2)"},
      {NULL, 0, NULL, NULL},
  };
  cli_parse(argc, argv, "lab02", "attention scoring functions: masked softmax, additive and "
            "scaled dot-product attention", &args, extra);
  /* Nothing in this lab is trained: record no tape (like torch.no_grad()). */
  ag_set_grad_enabled(false);

  Summary *S = summary_new("lab02", args.seed); /* summary.json, written at the end */
  summary_str(S, "device", device_name(tensor_default_device()));

  /***
## From the Gaussian Kernel to Dot Products

Start from the scoring function lab 01 used, the exponent of a Gaussian kernel, now for vectors
$\mathbf{q}, \mathbf{k}_i \in \mathbb{R}^d$, and expand the square:

$$a(\mathbf{q}, \mathbf{k}_i) = -\frac{1}{2}\|\mathbf{q} - \mathbf{k}_i\|^2
= \mathbf{q}^\top \mathbf{k}_i - \frac{1}{2}\|\mathbf{k}_i\|^2 - \frac{1}{2}\|\mathbf{q}\|^2.$$

Each of the three terms can be judged by what the softmax does with it.

* $-\frac{1}{2}\|\mathbf{q}\|^2$ is the same for every key of this query. Adding one constant
  to all the inputs of a softmax multiplies numerator and denominator by the same $e^c$: the
  term cancels exactly.
* $-\frac{1}{2}\|\mathbf{k}_i\|^2$ does depend on the key, but in deep networks the keys come
  out of batch or layer normalization (lab 06), which keeps their norms roughly equal. A
  constant cancels again, so dropping this term changes the weights very little.
* $\mathbf{q}^\top \mathbf{k}_i$ is what remains: one dot product per query–key pair, which a
  matrix product computes for all pairs at once.

One more adjustment keeps the scores in a range where the softmax still has useful gradients.
If the $d$ entries of $\mathbf{q}$ and $\mathbf{k}_i$ are independent with mean $0$ and
variance $1$, their dot product is a sum of $d$ terms of mean $0$ and variance $1$: it has mean
$0$ and variance $d$, so its typical size grows like $\sqrt{d}$. Dividing by $\sqrt{d}$ brings
the variance back to $1$ for any $d$:

$$a(\mathbf{q}, \mathbf{k}_i) = \frac{\mathbf{q}^\top \mathbf{k}_i}{\sqrt{d}}.$$

This is the *scaled dot-product* scoring function, and the weights are its softmax. It needs
queries and keys of the same length $d$; additive attention, further down, does not.

## Masked Softmax Operation

Before the scoring functions, the softmax itself needs one more feature. Minibatches of text
hold sentences of different lengths, padded with a filler token to a common length: with
$10$ positions, "Dive into Deep Learning" becomes four words and six pads. Attention must not
put weight on the pads. We therefore pass a *valid length* $l$ along with each row of scores
and give the keys at positions $j \geq l$ weight $0$; the remaining weights are a softmax over
the first $l$ keys alone.

The book implements this by overwriting the masked scores with $-10^6$ before the softmax:
$\exp(-10^6)$ underflows to zero. That fails quietly in one case — a row whose valid length is
$0$ has *all* its scores at $-10^6$, and the softmax of equal numbers is uniform, so the pads
get all the attention. Here the masked scores become $-\infty$ instead: $\exp(-\infty)$ is
exactly $0$, and `t_softmax` turns a row that is all $-\infty$ into zeros, so an empty row
attends to nothing.

Exercise 2.1 (`labs/lab02/masked_softmax.c`) writes `masked_softmax(X, valid_lens)` for scores
`X` of shape (batch, queries, keys). `valid_lens` is either a vector with one length per
example, shared by all its queries, or a matrix with one length per query:

@code labs/lab02/masked_softmax.c masked_softmax

First, two examples
of two queries over four keys, with valid lengths $2$ and $3$ — random scores, so the weights
are uneven but always zero beyond the valid length:
  */
  {
    Tensor *X = tensor_rand(3, (int[]){2, 2, 4}, 0.0f, 1.0f);          /* (2, 2, 4) */
    Tensor *valid_lens = tensor_from(1, (int[]){2}, (float[]){2, 3});  /* (2) */
    Tensor *w = NEED(masked_softmax(X, valid_lens), "the masked softmax demo"); /* (2, 2, 4) */
    printf("masked_softmax(X (2, 2, 4), valid_lens [2, 3]):\n");
    tensor_print(w, NULL);
    /* @program begin */
    summary_tensor(S, "masked_softmax/X_1d", X);
    summary_tensor(S, "masked_softmax/valid_lens_1d", valid_lens);
    summary_tensor(S, "masked_softmax/weights_1d", w);
    /* @program end */

    /***
With a matrix of valid lengths, every query row gets its own: here $1$ and $3$ for the two
queries of the first example, $2$ and $4$ for the second.
    */
    X = tensor_rand(3, (int[]){2, 2, 4}, 0.0f, 1.0f);                          /* (2, 2, 4) */
    valid_lens = tensor_from(2, (int[]){2, 2}, (float[]){1, 3, 2, 4});         /* (2, 2) */
    w = NEED(masked_softmax(X, valid_lens), "the masked softmax demo");        /* (2, 2, 4) */
    printf("masked_softmax(X (2, 2, 4), valid_lens [[1, 3], [2, 4]]):\n");
    tensor_print(w, NULL);
    /* @program begin */
    summary_tensor(S, "masked_softmax/X_2d", X);
    summary_tensor(S, "masked_softmax/valid_lens_2d", valid_lens);
    summary_tensor(S, "masked_softmax/weights_2d", w);
    /* @program end */

    /***
And the case the $-10^6$ trick gets wrong: a valid length of $0$. The first example's rows are
all zeros, not $0.25$ everywhere:
    */
    valid_lens = tensor_from(1, (int[]){2}, (float[]){0, 2});                  /* (2) */
    w = NEED(masked_softmax(X, valid_lens), "the masked softmax demo");        /* (2, 2, 4) */
    printf("masked_softmax(X (2, 2, 4), valid_lens [0, 2]):\n");
    tensor_print(w, NULL);
    /* @program begin */
    summary_tensor(S, "masked_softmax/valid_lens_zero", valid_lens);
    summary_tensor(S, "masked_softmax/weights_zero", w);
    /* @program end */
  }
  ag_step_reset();

  /***
## Batch Matrix Multiplication

Attention pools many queries of many examples at once, and the workhorse for that is the
*batch matrix product*: for minibatches $\mathbf{Q} = [\mathbf{Q}_1, \ldots, \mathbf{Q}_n]$ of
$a \times b$ matrices and $\mathbf{K} = [\mathbf{K}_1, \ldots, \mathbf{K}_n]$ of $b \times c$
matrices it returns the $n$ products $[\mathbf{Q}_1\mathbf{K}_1, \ldots, \mathbf{Q}_n
\mathbf{K}_n]$, of shape $(n, a, c)$. `t_bmm` does this with one call of the batched GEMM
(`common/gemm.h`); `t_bmm_nt` multiplies by the transpose of each $\mathbf{K}_i$ without copying
it — exactly $\mathbf{Q}\mathbf{K}^\top$ for scores. The book's shape check: $n = 2$ products of
$3 \times 4$ by $4 \times 6$ matrices, of ones, give a $(2, 3, 6)$ tensor (every entry is $4$):
  */
  {
    Tensor *Q = tensor_full(3, (int[]){2, 3, 4}, 1.0f); /* (2, 3, 4) */
    Tensor *K = tensor_full(3, (int[]){2, 4, 6}, 1.0f); /* (2, 4, 6) */
    Tensor *QK = t_bmm(Q, K);                           /* (2, 3, 6) */
    char sq[48], sk[48], sqk[48];
    printf("t_bmm(Q %s, K %s) shape: %s\n", shape_str(Q, sq, sizeof sq),
           shape_str(K, sk, sizeof sk), shape_str(QK, sqk, sizeof sqk));
    summary_shape(S, "bmm_shape", QK); /* @program */
    ag_step_reset();
  }

  /***
## Additive Attention

When queries and keys have different lengths — a decoder state of $20$ numbers looking at
encoder outputs of $2$ — a dot product is not even defined. *Additive attention* projects both
into a common space of $h$ hidden units, adds them, and scores the sum with a one-layer
network:

$$a(\mathbf{q}, \mathbf{k}) = \mathbf{w}_v^\top \tanh(\mathbf{W}_q\mathbf{q} + \mathbf{W}_k
\mathbf{k}) \in \mathbb{R},$$

with learnable $\mathbf{W}_q \in \mathbb{R}^{h \times q}$, $\mathbf{W}_k \in \mathbb{R}^{h
\times k}$ and $\mathbf{w}_v \in \mathbb{R}^{h}$. Read differently: the query and the key are
concatenated and fed into an MLP with one hidden layer of $h$ tanh units and no biases.

In `AdditiveAttention_forward` (exercise 2.2, `labs/lab02/additive_attention.c`) the projected
queries, of shape (batch, queries, $h$), and keys, (batch, keys, $h$), are viewed as
(batch, queries, 1, $h$) and (batch, 1, keys, $h$); broadcasting adds every query to every key
in one op, giving (batch, queries, keys, $h$). After the tanh, $\mathbf{w}_v$ reduces the last
axis to one score per pair, the masked softmax turns the scores into weights, dropout (on in
training only) thins them, and a batch matrix product with the values pools them.
`AdditiveAttention_init` (in `chapters/02_scoring_functions/attention.c`) makes the three
bias-free `Linear` layers.

@code labs/lab02/lab02.h AdditiveAttention
@code chapters/02_scoring_functions/attention.c AdditiveAttention_init
@code labs/lab02/additive_attention.c AdditiveAttention_forward

The toy example has two examples, each with one query of length $20$ and ten key–value pairs:
keys of length $2$, all ones, and values of length $4$ holding the numbers $0, \ldots, 39$
(the same for both examples). The valid lengths are $2$ and $6$; the layer has $h = 8$ and
dropout $0.1$, switched off because we evaluate (training = false).
  */
  Tensor *keys = random_keys ? tensor_randn(3, (int[]){2, 10, 2}, 0.0f, 1.0f)
                             : tensor_full(3, (int[]){2, 10, 2}, 1.0f);       /* (2, 10, 2) */
  float vh[80];
  for (int i = 0; i < 80; i++) vh[i] = (float)(i % 40);
  Tensor *values = tensor_from(3, (int[]){2, 10, 4}, vh);                     /* (2, 10, 4) */
  Tensor *valid_lens = tensor_from(1, (int[]){2}, (float[]){2, 6});           /* (2) */
  if (random_keys) printf("--random-keys: the keys are drawn from N(0, 1)\n");

  ParamSet ps = {0};
  Tensor *queries_add = tensor_randn(3, (int[]){2, 1, 20}, 0.0f, 1.0f);       /* (2, 1, 20) */
  AdditiveAttention additive;
  AdditiveAttention_init(&additive, &ps, "attention", 2, 20, 8, 0.1f);
  Tensor *out_add = NEED(AdditiveAttention_forward(&additive, queries_add, keys, values,
                                                   valid_lens, false),
                         "the additive attention example"); /* (2, 1, 4) */
  printf("additive attention output (2, 1, 4):\n");
  tensor_print(out_add, NULL);
  NEED(additive.attention_weights, "the additive attention weights (store them in the layer)");

  /***
Every key is the same vector, so every key gets the same score, and the weights are uniform
over the valid keys: $\frac{1}{2}$ on the first two keys of the first example,
$\frac{1}{6}$ on the first six of the second. The outputs are the averages of the value rows:
$(0\ldots3 + 4\ldots7)/2 = (2, 3, 4, 5)$ and $(10, 11, 12, 13)$. The heatmap shows the two
queries' weights (rows) over the ten keys (columns):
  */
  show_heatmap(args.out, "attention_additive", additive.attention_weights);
  /* @program begin */
  summary_tensor(S, "additive/queries", queries_add);
  summary_tensor(S, "additive/keys", keys);
  summary_tensor(S, "additive/valid_lens", valid_lens);
  summary_tensor(S, "additive/output", out_add);
  summary_tensor(S, "additive/attention_weights", additive.attention_weights);
  /* @program end */

  /***
## Scaled Dot-Product Attention

For a minibatch the scaled dot-product scores of $n$ queries $\mathbf{Q} \in \mathbb{R}^{n
\times d}$ against $m$ keys $\mathbf{K} \in \mathbb{R}^{m \times d}$, pooled over values
$\mathbf{V} \in \mathbb{R}^{m \times v}$, are one formula:

$$\mathrm{softmax}\left(\frac{\mathbf{Q}\mathbf{K}^\top}{\sqrt{d}}\right)\mathbf{V} \in
\mathbb{R}^{n \times v}.$$

`DotProductAttention_forward` (exercise 2.3, `labs/lab02/dot_product_attention.c`) is that
formula plus the mask and dropout: `t_bmm_nt` for $\mathbf{Q}\mathbf{K}^\top$, a scale by
$1/\sqrt{d}$, `masked_softmax`, dropout, `t_bmm`. It has no parameters: all the learning
happens in whatever produces $\mathbf{Q}$, $\mathbf{K}$ and $\mathbf{V}$.

@code labs/lab02/dot_product_attention.c DotProductAttention_forward

Same keys and values as before; the queries now need the keys' length, $d = 2$:
  */
  Tensor *queries_dot = tensor_randn(3, (int[]){2, 1, 2}, 0.0f, 1.0f); /* (2, 1, 2) */
  DotProductAttention dot;
  DotProductAttention_init(&dot, 0.5f);
  Tensor *out_dot = NEED(DotProductAttention_forward(&dot, queries_dot, keys, values, valid_lens,
                                                     false),
                         "the dot-product attention example"); /* (2, 1, 4) */
  printf("scaled dot-product attention output (2, 1, 4):\n");
  tensor_print(out_dot, NULL);
  NEED(dot.attention_weights, "the dot-product attention weights (store them in the layer)");

  /***
Identical keys again give identical scores, so the weights — and the heatmap — match the
additive ones exactly (the largest difference printed below is
[0.0000]{.run out="max |additive - dot-product| attention weight: 0.0000"}):
  */
  show_heatmap(args.out, "attention_dot_product", dot.attention_weights);
  const double diff = max_abs_diff(additive.attention_weights, dot.attention_weights);
  printf("max |additive - dot-product| attention weight: %.4f\n", diff);
  /* @program begin */
  summary_tensor(S, "dot_product/queries", queries_dot);
  summary_tensor(S, "dot_product/output", out_dot);
  summary_tensor(S, "dot_product/attention_weights", dot.attention_weights);
  summary_num(S, "dot_product/max_weight_diff_vs_additive", diff);
  /* @program end */

  /***
### Why $\sqrt{d}$: the experiment

The variance argument above, measured. Exercise 2.4 (`labs/lab02/score_variance.c`) draws $n$
pairs of vectors $\mathbf{q}, \mathbf{k} \in \mathbb{R}^d$ with independent
$\mathcal{N}(0, 1)$ entries and returns the sample variance of their scores
$\mathbf{q}^\top \mathbf{k}$, or of $\mathbf{q}^\top \mathbf{k} / \sqrt{d}$:

@code labs/lab02/score_variance.c dot_product_score_variance

Unscaled, the variance grows with $d$ as the argument says; scaled, it stays at $1$. A sample
variance is itself random: for $s = \mathbf{q}^\top \mathbf{k}$, $\mathbb{E}[s^4] = 3d^2 + 6d$,
so the variance of $n$ scores has a standard error of $\sqrt{(2d^2 + 6d)/n}$, about $2\%$ of $d$
here for large $d$ and $4\%$ for $d = 1$. Why it matters: a softmax over scores whose spread
grows like $\sqrt{d}$ puts nearly all the weight on one key, where its gradient vanishes.
  */
  {
    enum { NDIMS = 9, PAIRS = 5000 };
    Rng rng; /* a generator of the experiment's own: the demos above and below draw as before */
    rng_init(&rng, args.seed);
    float dims[NDIMS], var[NDIMS], var_scaled[NDIMS], one[NDIMS];
    printf("the 1/sqrt(d) experiment: variance of the scores of %d pairs of N(0, 1) vectors\n",
           PAIRS);
    printf("%6s %12s %18s\n", "d", "var(q.k)", "var(q.k/sqrt(d))");
    for (int i = 0; i < NDIMS; i++) {
      const int d = 1 << i;
      const double v = dot_product_score_variance(d, PAIRS, false, &rng);
      const double vs = dot_product_score_variance(d, PAIRS, true, &rng);
      if (isnan(v) || isnan(vs)) exercise_missing("the 1/sqrt(d) experiment");
      printf("%6d %12.3f %18.3f\n", d, v, vs);
      dims[i] = (float)d, var[i] = (float)v, var_scaled[i] = (float)vs, one[i] = 1.0f;
      /* @program begin */
      summary_int(S, summary_path("score_variance/%d/d", i), d);
      summary_num(S, summary_path("score_variance/%d/unscaled", i), v);
      summary_num(S, summary_path("score_variance/%d/scaled", i), vs);
      /* @program end */
    }
    const Series unscaled[2] = {{"measured", dims, var, NDIMS, "o"},
                                {"d (theory)", dims, dims, NDIMS, "--"}};
    const Series scaled[2] = {{"measured", dims, var_scaled, NDIMS, "o"},
                              {"1 (theory)", dims, one, NDIMS, "--"}};
    /* d doubles from 1 to 256: a log axis spaces the nine points evenly (on a linear one the
     * first five overlap); the unscaled variance grows like d, so log-log: a line of slope 1 */
    const Axes ax[2] = {{.title = "q . k", .xlabel = "d", .ylabel = "variance", .xmin = NAN,
                         .xmax = NAN, .ymin = NAN, .ymax = NAN, .logy = true, .series = unscaled,
                         .nseries = 2, .logx = true},
                        {.title = "q . k / sqrt(d)", .xlabel = "d", .ylabel = "variance",
                         .xmin = NAN, .xmax = NAN, .ymin = 0, .ymax = 1.5, .series = scaled,
                         .nseries = 2, .logx = true}};
    char *base = path_join(args.out, "score_variance");
    figure_saved(base, plot_axes_row(base, ax, 2, 1400, 500));
    free(base); /* @program */
  }

  /***
## Challenges

The flags below answer the exercises at the end by running them.

**`--random-keys`** draws the keys from a standard normal instead of all ones. Now the two
scoring functions see different keys and disagree: the printed difference above is no longer
zero, and the two heatmaps differ.

**`--distance`** scores with the full Gaussian kernel, $-\frac{1}{2}\|\mathbf{q} -
\mathbf{k}_i\|^2$, and checks the derivation: computed with broadcasting from its definition
and from its expansion $\mathbf{q}^\top\mathbf{k}_i - \frac{1}{2}\|\mathbf{k}_i\|^2$ (the query
norm dropped), the two give the same weights up to rounding. An efficient implementation only
needs the squared key norms, one per key, on top of the dot products. With all-ones keys every
norm is equal, so the weights also match those of the *unscaled* dot product; with
`--random-keys` they do not.
  */
  summary_int(S, "challenges/random_keys", random_keys); /* @program */
  if (distance) {
    const int B = 2, Q = 1, K = 10, d = 2;
    /* from the definition: (B, Q, 1, d) - (B, 1, K, d) -> (B, Q, K, d) -> (B, Q, K) */
    Tensor *diffs = t_sub(t_view(queries_dot, B, Q, 1, d), t_view(keys, B, 1, K, d));
    Tensor *w_def = NEED(masked_softmax(t_scale(t_sum(t_square(diffs), -1, false), -0.5f),
                                        valid_lens), "--distance");        /* (B, Q, K) */
    /* from the expansion: Q K^T - |k|^2 / 2, the key norms broadcast over the queries */
    Tensor *k_norm2 = t_view(t_sum(t_square(keys), -1, false), B, 1, K);  /* (B, 1, K) */
    Tensor *QK = t_bmm_nt(queries_dot, keys);                             /* (B, Q, K) */
    Tensor *w_exp = NEED(masked_softmax(t_sub(QK, t_scale(k_norm2, 0.5f)), valid_lens),
                         "--distance");                                   /* (B, Q, K) */
    Tensor *w_dot = NEED(masked_softmax(QK, valid_lens), "--distance");   /* unscaled */
    printf("--distance: Gaussian-kernel attention weights\n");
    tensor_print(w_def, NULL);
    printf("max |definition - expansion without |q|^2| = %.2g\n", max_abs_diff(w_def, w_exp));
    printf("max |Gaussian - unscaled dot product|      = %.4f\n", max_abs_diff(w_def, w_dot));
    show_heatmap(args.out, "attention_distance", w_def);
    /* @program begin */
    summary_tensor(S, "challenges/distance/attention_weights", w_def);
    summary_num(S, "challenges/distance/max_diff_expansion", max_abs_diff(w_def, w_exp));
    summary_num(S, "challenges/distance/max_diff_unscaled_dot", max_abs_diff(w_def, w_dot));
    /* @program end */
  }

  /***
**`--bilinear`** lets dot-product attention compare queries and keys of different lengths with
matrix products only: score $\mathbf{q}^\top\mathbf{M}\mathbf{k}$ with a learnable $\mathbf{M}
\in \mathbb{R}^{20 \times 2}$ — that is, project the length-$20$ queries of the additive example
to length $2$ with a bias-free `Linear` and run `DotProductAttention` on the result.
  */
  if (bilinear) {
    Linear M;
    Linear_init(&M, &ps, "M", 20, 2, false);
    Tensor *out_bil = NEED(DotProductAttention_forward(&dot, Linear_forward(&M, queries_add), keys,
                                                       values, valid_lens, false),
                           "--bilinear"); /* (2, 1, 4) */
    printf("--bilinear: q^T M k attention output\n");
    tensor_print(out_bil, NULL);
    show_heatmap(args.out, "attention_bilinear", dot.attention_weights);
    /* @program begin */
    summary_tensor(S, "challenges/bilinear/output", out_bil);
    summary_tensor(S, "challenges/bilinear/attention_weights", dot.attention_weights);
    /* @program end */
  }
  ag_step_reset();

  /***
**`--cost`** times both layers on growing inputs (batch $4$, $n$ queries and $n$ keys, query,
key and value length $64$, $h = 64$) and reports the activation memory each forward pass
allocates. Dot-product attention costs $O(n^2 d)$ arithmetic and stores the $n \times n$
scores; additive attention builds the full (batch, $n$, $n$, $h$) feature tensor before
reducing it, so it moves $h$ times more memory and is bound by memory bandwidth, not by
arithmetic.
  */
  if (cost) cost_table(S);

  /***
**`--covariance`** checks a claim of d2l 1.0's first section on attention (its exercise 2): with
the score $\mathbf{q}^\top \mathbf{k}_i$ and the keys as values ($\mathbf{v}_i = \mathbf{k}_i$),
the gradient of the output $\sum_i \alpha_i \mathbf{k}_i$ in $\mathbf{q}$ is the covariance of the
keys under the attention weights, $\sum_i \alpha_i \mathbf{k}_i \mathbf{k}_i^\top -
\boldsymbol{\mu}\boldsymbol{\mu}^\top$ with $\boldsymbol{\mu} = \sum_i \alpha_i \mathbf{k}_i$
(differentiate $\alpha_i$: $\partial \alpha_i / \partial \mathbf{q} = \alpha_i(\mathbf{k}_i -
\boldsymbol{\mu})$). `DotProductAttention_forward` scales the scores by $1/\sqrt{d}$, so its
gradient is that covariance over $\sqrt{d}$. The flag computes the Jacobian with autograd, one
backward pass per output coordinate, for $6$ random keys of length $4$, and prints how far
$\sqrt{d}$ times it is from the covariance.
  */
  if (covariance) covariance_check(S, args.seed);

  /***
## The kernel track: masked softmax as a loop, and as a warp kernel

Everything above composes the kit's ops, as the book composes PyTorch's. Exercises 2.5 and 2.6
open the box: the loops those ops run, and the CUDA kernel that runs them on a GPU.

**Exercise 2.5** (`labs/lab02/masked_softmax_rows.c`) is `masked_softmax_rows`, the masked
softmax on raw `float` arrays, one row at a time. A row of length $n$ takes three passes: the
max $m$ of its first $n$ scores; $e_j = \exp(x_j - m)$ and their sum $s$; then $y_j = e_j / s$
for $j < n$ and $0$ after. Subtracting $m$ changes nothing in exact arithmetic (the factor
$e^{-m}$ cancels) but keeps every exponential at most $1$: `expf(1000)` is `inf`, and
`inf / inf` is NaN. A row of length $0$ skips the first two passes and is written as zeros.
Its backward is the softmax's Jacobian-vector product, $\partial L / \partial x_j = y_j
\left(\partial L / \partial y_j - \sum_k y_k\, \partial L / \partial y_k\right)$, which is
$0$ wherever $y_j = 0$, so masked keys get no gradient without being told. The grade also says
which of your loops GCC vectorized for an AVX2 laptop (8 floats at a time) and GCC's reason
where it did not, for information: a loop that calls `expf`, for one, does not vectorize
without `-ffast-math`, which is why the kit's own CPU kernel computes its exponential with a
polynomial (`common/fastmath.h`).

@code labs/lab02/masked_softmax_rows.c masked_softmax_rows masked_softmax_rows_backward

Here it is on the book's example, with one length per query and a query of length $0$; it
must agree with exercise 2.1's composition to float rounding:
  */
  {
    static const float x[16] = {0.5f, 0.2f, 0.9f, 0.1f,  0.3f, 0.8f, 0.4f, 0.6f,
                                0.7f, 0.1f, 0.2f, 0.95f, 0.4f, 0.4f, 0.5f, 0.05f}; /* (2, 2, 4) */
    static const int lens[4] = {1, 3, 2, 0};                                      /* (2, 2) */
    float y[16];                                                                   /* (2, 2, 4) */
    if (masked_softmax_rows(x, lens, 2, 2, 2, 4, y) == 0) {
      Tensor *Y = tensor_from(3, (int[]){2, 2, 4}, y);
      printf("masked_softmax_rows(x (2, 2, 4), valid_lens [[1, 3], [2, 0]]):\n");
      tensor_print(Y, NULL);
      Tensor *w = NEED(masked_softmax(tensor_from(3, (int[]){2, 2, 4}, x),
                                      tensor_from(2, (int[]){2, 2}, (float[]){1, 3, 2, 0})),
                       "the kernel track's comparison"); /* (2, 2, 4) */
      double d = max_abs_diff(Y, w);
      printf("max |masked_softmax_rows - masked_softmax| = %.1e\n", d);
      summary_tensor(S, "kernel_track/masked_softmax_rows", Y); /* @program */
      summary_num(S, "kernel_track/max_diff_vs_masked_softmax", d); /* @program */
    } else {
      printf("(exercise 2.5 is not done yet: the chapter goes on without it)\n");
    }
  }

  /***
**Exercise 2.6** (`labs/lab02/masked_softmax_kernel.cu`) is the same softmax as a CUDA kernel,
`masked_softmax_cuda`, and it is not a toy: built with `--device cuda`, every softmax the labs
compute goes through it (the `softmax` entry of the CUDA kernel table runs it with no lengths;
lab 06's masked attention is still your exercise 2.1's composition, a $-\infty$ mask and then
this softmax), so your kernel trains lab 06's Transformer on a GPU, or on the kit's emulator.

A GPU runs threads in groups of 32 called *warps*: the 32 *lanes* of a warp execute the same
instruction at the same time, each on its own data, and a memory access of a warp is served in
32-byte *sectors* — 32 lanes reading 32 consecutive floats touch 4 sectors, one request. The
obvious kernel gives each row a thread. Its lanes then read 32 different rows: with rows of 10
keys that is 40 bytes apart, so every load of the warp touches 32 sectors, for 4 bytes of each.
The kernel here gives each row a *warp*. Lane $l$ takes keys $l, l + 32, l + 64, \ldots$, so
consecutive lanes read consecutive floats, and each lane keeps a partial max (then a partial
sum) of its keys.

The 32 partial results become one with *shuffles*: `__shfl_xor_sync(0xffffffff, v, o)` hands
every lane the value `v` of lane $l \oplus o$ — registers to registers, no shared memory, no
barrier. Five steps, $o = 16, 8, 4, 2, 1$, form a butterfly: after the step with $o = 16$ each
lane holds the max of two lanes, after $o = 8$ of four, and after $o = 1$ every lane holds the
max of all 32 — the row's max, in every lane, which is what the next pass needs. The mask
`0xffffffff` promises that all 32 lanes make that call; the row loop therefore gives the 32
lanes of a warp the same rows (its bound depends on the warp, never on the lane), and the
block size is a multiple of 32 (here 256 threads: 8 warps, 8 rows a block, in a grid-stride
loop over the rows).

The kit's emulator (cuda/README.md) checks all of this when it runs your kernel: a shuffle
whose mask leaves out a lane, or a warp that is not whole, is a synccheck error; two warps
writing one row is a race (racecheck); a row past the end is a memcheck error — each names the
kernel, the thread and the line. Its profiler counts the memory requests. For the softmax of
lab 06's attention weights, (64, 10, 10) — 640 rows of 10 keys — the kit's one-thread-per-row
kernel makes 600 load requests of 32 sectors each and 400 stores of 32, moving 1000 KB; the
warp-per-row kernel makes 1920 loads and 1280 stores of 2 sectors each (a row of 10 floats is
40 bytes: two sectors) and moves 200 KB, five times less. On such short rows only 10 of a
warp's 32 lanes have a key; on rows of 32 keys or more all of them do. To see the counters of
your own kernel on a whole run: `make lab06-emu && AL_CUDA_EMU_PROFILE=1 build/emu-bin/lab06
--device cuda`.

@code labs/lab02/masked_softmax_kernel.cu masked_softmax_warp_kernel? masked_softmax_cuda
  */

  /* @program begin */
  summary_write(S, args.out);
  paramset_free(&ps);
  tensor_shutdown();
  return 0;
}
/* @program end */

/* --cost: forward time (best of 3) and arena bytes of one forward pass per layer and size. */
static void cost_table(Summary *S) {
  enum { B = 4, D = 64, H = 64, NSIZES = 4 };
  const int sizes[NSIZES] = {16, 64, 128, 256};
  ParamSet ps = {0};
  AdditiveAttention add;
  AdditiveAttention_init(&add, &ps, "cost", D, D, H, 0.0f);
  DotProductAttention dot;
  DotProductAttention_init(&dot, 0.0f);
  printf("%6s %14s %14s %14s %14s\n", "n", "additive ms", "dot ms", "additive MiB", "dot MiB");
  for (int s = 0; s < NSIZES; s++) {
    const int n = sizes[s];
    double t_best[2] = {INFINITY, INFINITY}, mib[2] = {0, 0};
    for (int rep = 0; rep < 3; rep++) {
      for (int layer = 0; layer < 2; layer++) {
        Tensor *q = tensor_randn(3, (int[]){B, n, D}, 0.0f, 1.0f); /* (B, n, D) */
        Tensor *k = tensor_randn(3, (int[]){B, n, D}, 0.0f, 1.0f); /* (B, n, D) */
        Tensor *v = tensor_randn(3, (int[]){B, n, D}, 0.0f, 1.0f); /* (B, n, D) */
        size_t before = arena_used();
        double t0 = now_seconds();
        Tensor *out = layer == 0 ? AdditiveAttention_forward(&add, q, k, v, NULL, false)
                                 : DotProductAttention_forward(&dot, q, k, v, NULL, false);
        double t = now_seconds() - t0;
        NEED(out, "--cost");
        if (t < t_best[layer]) t_best[layer] = t;
        mib[layer] = (double)(arena_used() - before) / (1024.0 * 1024.0);
        ag_step_reset();
      }
    }
    printf("%6d %14.3f %14.3f %14.2f %14.2f\n", n, 1e3 * t_best[0], 1e3 * t_best[1], mib[0],
           mib[1]);
    /* @program begin */
    summary_int(S, summary_path("challenges/cost/%d/n", s), n);
    summary_num(S, summary_path("challenges/cost/%d/additive_ms", s), 1e3 * t_best[0]);
    summary_num(S, summary_path("challenges/cost/%d/dot_ms", s), 1e3 * t_best[1]);
    summary_num(S, summary_path("challenges/cost/%d/additive_mib", s), mib[0]);
    summary_num(S, summary_path("challenges/cost/%d/dot_mib", s), mib[1]);
    /* @program end */
  }
  paramset_free(&ps); /* @program */
}

/***
## Summary

* Attention pooling is a weighted average of values; the weights are a softmax of a scoring
  function $a(\mathbf{q}, \mathbf{k})$ that compares the query with each key.
* Expanding the Gaussian kernel's $-\frac{1}{2}\|\mathbf{q} - \mathbf{k}\|^2$ leaves the dot
  product $\mathbf{q}^\top\mathbf{k}$ as the only term the softmax cares about when key norms
  are about equal; dividing by $\sqrt{d}$ keeps the scores at unit variance. Scaled dot-product
  attention, $\mathrm{softmax}(\mathbf{Q}\mathbf{K}^\top/\sqrt{d})\mathbf{V}$, is two batch
  matrix products and has no parameters.
* Additive attention, $\mathbf{w}_v^\top\tanh(\mathbf{W}_q\mathbf{q} + \mathbf{W}_k
  \mathbf{k})$, compares queries and keys of different lengths with a small learned MLP, at the
  price of a (batch, queries, keys, $h$) intermediate tensor.
* The masked softmax keeps padding out of the weights. Masking with $-\infty$ rather than a
  large negative number makes an empty row all zeros instead of uniform.
* Written out, the masked softmax is three passes over a row (max, exponentials and sum,
  scaling). On a GPU one warp takes a row: its lanes read consecutive keys, and shuffles
  combine their partial max and sum without shared memory or barriers.

## Exercises

1. Modify the keys in the toy example and visualize the attention weights (`--random-keys`). Do
   additive attention and scaled dot-product attention still output the same weights? Why or
   why not?
2. Implement distance-based attention, $a(\mathbf{q}, \mathbf{k}_i) = -\frac{1}{2}
   \|\mathbf{q} - \mathbf{k}_i\|^2$, by modifying the dot-product code (`--distance` shows one
   way). Why do you only need the squared norms of the keys, $\|\mathbf{k}_i\|^2$, for an
   efficient implementation?
3. Using matrix multiplications only, design a scoring function for queries and keys of
   different lengths (`--bilinear`). How many parameters does it have compared with additive
   attention with $h$ hidden units?
4. How does the cost of each scoring function scale with the lengths of queries, keys and
   values, and with their number? What about memory bandwidth (`--cost`)?
5. When queries and keys have the same length, is vector summation a better design than the
   dot product for the scoring function? Why or why not?
*/

/* --covariance: the Jacobian of DotProductAttention_forward(q, K, K) in q, by autograd, against
 * Cov_alpha[k] / sqrt(d). On the CPU (it reads the gradients), its own generator. */
static void covariance_check(Summary *S, uint64_t seed) {
  enum { D = 4, M = 6 };
  Rng rng;
  rng_init(&rng, seed + 1);
  float k[M * D], q0[D]; /* host copies: the arena tensors go at each ag_step_reset */
  for (int i = 0; i < M * D; i++) k[i] = rng_normal(&rng, 0.0f, 1.0f);
  for (int c = 0; c < D; c++) q0[c] = rng_normal(&rng, 0.0f, 1.0f);
  DotProductAttention a;
  DotProductAttention_init(&a, 0.0f);
  ag_set_grad_enabled(true);
  double J[D][D], w[M]; /* J[j][c] = d out_j / d q_c */
  for (int j = 0; j < D; j++) {
    Tensor *K = tensor_new_on(DEV_CPU, 3, (const int[]){1, M, D}); /* (1, keys, d): = values */
    Tensor *q = tensor_new_on(DEV_CPU, 3, (const int[]){1, 1, D}); /* (1, 1, d) */
    memcpy(K->data, k, sizeof k);
    memcpy(q->data, q0, sizeof q0);
    q->requires_grad = true;
    Tensor *out = NEED(DotProductAttention_forward(&a, q, K, K, NULL, false),
                       "--covariance"); /* (1, 1, d) */
    float seed_j[D] = {0};
    seed_j[j] = 1;
    ag_backward_with(out, seed_j);
    const float *g = tensor_grad(q), *wh = host_read(a.attention_weights); /* (1, 1, keys) */
    for (int c = 0; c < D; c++) J[j][c] = g[c];
    for (int i = 0; i < M; i++) w[i] = wh[i];
    ag_step_reset();
  }
  ag_set_grad_enabled(false);
  double mu[D] = {0}, worst = 0, big = 0;
  for (int i = 0; i < M; i++)
    for (int c = 0; c < D; c++) mu[c] += w[i] * k[i * D + c];
  for (int j = 0; j < D; j++)
    for (int c = 0; c < D; c++) {
      double cov = -mu[j] * mu[c];
      for (int i = 0; i < M; i++) cov += w[i] * k[i * D + j] * k[i * D + c];
      worst = fmax(worst, fabs(sqrt((double)D) * J[j][c] - cov));
      big = fmax(big, fabs(cov));
    }
  /* float32 softmax and products of order-1 numbers: about 1e-7 of the largest entry */
  const bool same = worst <= 1e-5 * fmax(big, 1);
  printf("--covariance: max |sqrt(d) * d(attention)/dq - Cov[k]| = %.2g (largest entry %.3f): "
         "%s\n", worst, big, same ? "the gradient is the covariance" : "they differ");
  summary_num(S, "challenges/covariance/max_diff", worst); /* @program */
}
