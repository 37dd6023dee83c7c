/***
# Attention Pooling: Nadaraya–Watson Kernel Regression

Attention mechanisms are built from three ingredients: *queries* (what we are looking for, the
volitional cues), *keys* (what each input offers to be matched against, the nonvolitional cues)
and *values* (the inputs themselves). *Attention pooling* combines them: every query assigns a
weight to every key by comparing the two, and returns the weighted average of the values.

Long before deep learning, statisticians used exactly this recipe for regression. Nadaraya and
Watson (1964) predicted the output at a new input by averaging the observed outputs, weighting
each by how close its input is to the new one. This lab builds that estimator from scratch in
C, looks at its attention weights, and then turns it into a tiny *trained* attention model with
one learnable parameter — the smallest complete example of learning with attention.

Run it with `make lab01 && ./lab01` (flags: `./lab01 --help`). Figures go to `out/lab01/`
(or `--out DIR`), together with `summary.json`, which holds every prediction shown here.
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
#include "lab01/lab01.h"
#include "lab01_data.h"

#define N_TEST 50 /* queries 0, 0.1, ..., 4.9 */

/* One estimator's predictions at the N_TEST queries, as drawn and as written to summary.json. */
typedef struct Estimate {
  const char *key;   /* its name in summary.json */
  const char *title; /* its panel title */
  float y_hat[N_TEST];
  int unsupported;   /* queries whose kernel weights were all zero */
  bool d10;          /* on d2l 1.0's data (else 0.17's) */
} Estimate;

/* One training set and the noiseless truth at the N_TEST queries. */
typedef struct Data {
  int n;                     /* number of training points */
  float *x_train, *y_train;  /* (n) keys and values, x sorted */
  float y_truth[N_TEST];     /* f(x_test) without noise */
} Data;

/* What every section shares: the data, where figures go, and the run's options. The chapter
 * follows two editions of the book, each on its own data (--data gives both the file's). */
typedef struct Lab {
  Data d10;                  /* d2l 1.0: 2 sin x + x, 40 points (kernels and widths) */
  Data d17;                  /* d2l 0.17: 2 sin x + x^0.8, 50 points (pooling, training) */
  float x_test[N_TEST];      /* (N_TEST) queries, the same in both editions */
  const char *out;           /* output directory */
  bool fallback_mean;        /* --fallback-mean */
} Lab;

static char *out_path(const Lab *L, const char *name) { return path_join(L->out, name); }

/* One fit as 0.17's plot_kernel_reg draws it: d2l.plot's '-' for the truth and 'm--' for the
 * prediction (legend Truth, Pred), the training data as 'o' at alpha 0.5, x in [0, 5] and y
 * in [-1, 5]. */
static void plot_fit(const Lab *L, const char *name, const Estimate *est) {
  const Data *D = &L->d17;
  Series s[3] = {{"Truth", L->x_test, D->y_truth, N_TEST, "-"},
                 {"Pred", L->x_test, est->y_hat, N_TEST, "m--"},
                 {NULL, D->x_train, D->y_train, D->n, "o alpha=0.5"}};
  Axes ax = {.xlabel = "x", .ylabel = "y", .xmin = 0, .xmax = 5, .ymin = -1, .ymax = 5,
             .series = s, .nseries = 3};
  char *base = out_path(L, name);
  figure_saved(base, plot_axes_row(base, &ax, 1, 0, 0));
  free(base);
}

/* A row of four fits as 1.0's plot() draws them: subplots(1, 4, sharey=True, figsize=(12, 3))
 * at 2x; the prediction first in the colour cycle's blue ('-'), the truth 'm--', the training
 * data 'o' at alpha 0.5, legend y_hat, y; each panel's name as its x label. The shared y axis
 * is one range over all four panels, matplotlib's data limits plus 5% margins, labelled once. */
static void plot_fit_row(const Lab *L, const char *name, Estimate *const *est) {
  const Data *D = &L->d10;
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < D->n; i++) lo = fmin(lo, D->y_train[i]), hi = fmax(hi, D->y_train[i]);
  for (int i = 0; i < N_TEST; i++) {
    lo = fmin(lo, D->y_truth[i]), hi = fmax(hi, D->y_truth[i]);
    for (int p = 0; p < 4; p++)
      if (isfinite(est[p]->y_hat[i]))
        lo = fmin(lo, est[p]->y_hat[i]), hi = fmax(hi, est[p]->y_hat[i]);
  }
  Series s[4][3];
  Axes ax[4];
  for (int p = 0; p < 4; p++) {
    s[p][0] = (Series){"y_hat", L->x_test, est[p]->y_hat, N_TEST, "-"};
    s[p][1] = (Series){"y", L->x_test, D->y_truth, N_TEST, "m--"};
    s[p][2] = (Series){NULL, D->x_train, D->y_train, D->n, "o alpha=0.5"};
    ax[p] = (Axes){.xlabel = est[p]->title, .ylabel = p == 0 ? "y" : NULL, .xmin = NAN,
                   .xmax = NAN, .ymin = lo - 0.05 * (hi - lo), .ymax = hi + 0.05 * (hi - lo),
                   .series = s[p], .nseries = 3};
  }
  char *base = out_path(L, name);
  figure_saved(base, plot_axes_row(base, ax, 4, 2400, 600));
  free(base);
}

/* 0.17's show_heatmaps of one weight matrix: rows are the (sorted) test queries, columns the
 * (sorted) training keys. */
static void plot_attention(const Lab *L, const char *name, const float *w) {
  HeatMap map = {NULL, w, N_TEST, L->d17.n};
  char *base = out_path(L, name);
  figure_saved(base, plot_heatmaps(base, &map, 1, 1, "Sorted training inputs",
                                   "Sorted testing inputs", "Reds", 0, 0));
  free(base);
}

/* 1.0's imshow of four weight matrices with one colour bar: 1.0 keeps the weights as (keys,
 * queries), so rows are the training inputs and columns the queries; w[p] is (N_TEST, n) and
 * is drawn transposed. The panel names go on top (plot_heatmaps has one x label per grid). */
static void plot_attention_row(const Lab *L, const char *name, const float *const *w,
                               Estimate *const *est) {
  const int n = L->d10.n;
  HeatMap maps[4];
  float *wt = xmalloc(sizeof(float) * 4 * (size_t)n * N_TEST); /* 4 x (n, N_TEST) */
  for (int p = 0; p < 4; p++) {
    float *t = wt + (long)p * n * N_TEST;
    for (int i = 0; i < N_TEST; i++)
      for (int j = 0; j < n; j++) t[(long)j * N_TEST + i] = w[p][(long)i * n + j];
    maps[p] = (HeatMap){est[p]->title, t, n, N_TEST};
  }
  char *base = out_path(L, name);
  figure_saved(base, plot_heatmaps(base, maps, 1, 4, NULL, NULL, "Reds", 0, 0));
  free(base);
  free(wt);
}

/* Say how many queries had no support, and apply --fallback-mean if asked. */
static void report_unsupported(const Lab *L, Estimate *const *est, int k, float mean) {
  printf("queries without support:");
  for (int p = 0; p < k; p++)
    printf(" %s %d%s", est[p]->key, est[p]->unsupported, p + 1 < k ? "," : "\n");
  for (int p = 0; p < k; p++) {
    if (!est[p]->unsupported) continue;
    if (L->fallback_mean) {
      for (int i = 0; i < N_TEST; i++)
        if (isnan(est[p]->y_hat[i])) est[p]->y_hat[i] = mean;
      printf("  %s: %d of %d queries have no training input inside the kernel's support; "
             "--fallback-mean predicts the average %.4f there\n",
             est[p]->key, est[p]->unsupported, N_TEST, (double)mean);
    } else {
      printf("  %s: %d of %d queries have no training input inside the kernel's support; their "
             "prediction is undefined (NaN: a gap in the figure, null in summary.json; "
             "--fallback-mean uses the average instead)\n",
             est[p]->key, est[p]->unsupported, N_TEST);
    }
  }
}

/* Copy the predictions of a (N_TEST) tensor into an Estimate (host memory, from any device). */
static void keep(Estimate *e, const Tensor *y_hat) { tensor_to_host(y_hat, e->y_hat); }

/* (rows, n): the n floats v repeated in every row, built on the host and copied to the device. */
static Tensor *repeat_rows(const float *v, int rows, int n) {
  float *h = arena_alloc(sizeof(float) * (size_t)rows * (size_t)n);
  for (int i = 0; i < rows; i++) memcpy(h + (long)i * n, v, sizeof(float) * (size_t)n);
  return tensor_from(2, (int[]){rows, n}, h);
}

/* Four Nadaraya-Watson estimates on 1.0's data (kernel fns[p] with width widths[p]) as one
 * row of fit panels and one row of weight heatmaps, with the report of queries that had no
 * support. */
static void nadaraya_watson_row(const Lab *L, Estimate est[4], const KernelFn fns[4],
                                const double widths[4], float mean, const char *fit_name,
                                const char *attention_name) {
  const Data *D = &L->d10;
  const float *w[4];
  Estimate *e[4];
  for (int p = 0; p < 4; p++) {
    Tensor *x_train = tensor_from(1, (int[]){D->n}, D->x_train); /* (n) keys */
    Tensor *y_train = tensor_from(1, (int[]){D->n}, D->y_train); /* (n) values */
    Tensor *x_test = tensor_from(1, (int[]){N_TEST}, L->x_test); /* (N_TEST) queries */
    Tensor *A;                                                    /* (N_TEST, n) weights */
    Tensor *y_hat = nadaraya_watson(x_train, y_train, x_test, fns[p], widths[p], &A,
                                    &est[p].unsupported);         /* (N_TEST) */
    NEED(y_hat, "Nadaraya-Watson regression");
    keep(&est[p], y_hat);
    w[p] = host_read(A); /* the figure's numbers */
    e[p] = &est[p];
  }
  report_unsupported(L, e, 4, mean);
  plot_fit_row(L, fit_name, e);
  plot_attention_row(L, attention_name, w, e);
  ag_step_reset();
}

/* Parse --w0 (a string flag, so that its absence means "draw it as the book does"). */
static float parse_w0(const char *s) {
  char *end;
  float v = strtof(s, &end);
  if (end == s || *end || !isfinite(v)) die("lab01: --w0 expects a number, got '%s'", s);
  return v;
}

int main(int argc, char **argv) {
  LabArgs args;
  const char *data_path = NULL, *w0_arg = NULL;
  int n_train = 0; /* 0: the book's, 40 (1.0) and 50 (0.17) */
  bool fallback_mean = false, no_loo = false;
  const CliOpt extra[] = {
      {"--data", OPT_STR, &data_path,
       "training points from FILE, one \"x y\" per line ('#' starts a comment) instead of the "
       "generated ones"},
      {"--w0", OPT_STR, &w0_arg,
       "initial w of the parametric model (default: uniform [0, 1) from --seed, like "
       "torch.rand((1,)))"},
      {"--n-train", OPT_INT, &n_train,
       "number of generated training points in both editions' data (default: the book's 40 "
       "and 50; exercise 1)"},
      {"--fallback-mean", OPT_FLAG, &fallback_mean,
       "predict the average where a kernel gives a query no support (default: NaN, reported)"},
      {"--no-loo", OPT_FLAG, &no_loo,
       "train the parametric model with each input attending to itself too (challenge)"},
      {NULL, 0, NULL, NULL},
  };
  cli_lab_info(&(CliLabInfo){.epochs_min = 0, .epochs_max = 1024, .epochs_default = 5,
                             .epochs_why = "the loss table keeps 1024 epochs"});
  cli_parse(argc, argv, "lab01", "attention pooling: Nadaraya–Watson kernel regression", &args,
            extra);
  const int epochs = args.epochs >= 0 ? args.epochs : 5;
  if (epochs > 1024) die("lab01: --epochs is at most 1024, got %d", epochs);

  Lab L = {.out = args.out, .fallback_mean = fallback_mean};

  /***
## Attention Cues

Before any estimator, a picture of what attention weights *are*: a matrix with one row per
query and one column per key, each row a probability distribution over the keys. The simplest
such matrix is the identity — every query attends to exactly one key, its own partner. We draw
attention matrices as heatmaps (darker red = more weight), here with $10$ queries and $10$ keys.
  */
  {
    float eye[100] = {0}; /* (queries, keys) */
    for (int i = 0; i < 10; i++) eye[i * 10 + i] = 1.0f;
    HeatMap hm = {NULL, eye, 10, 10};
    char *base = out_path(&L, "attention_cues");
    figure_saved(base, plot_heatmaps(base, &hm, 1, 1, "Keys", "Queries", "Reds", 0, 0));
    free(base); /* @program */
  }

  /***
## Kernels

Nadaraya–Watson estimators rest on a *kernel* $K(u)$ that scores the similarity of a query $q$
and a key $k$ from their difference $u = q - k$. The four kernels of this lab are

$$\begin{aligned}
K(u) &= \exp\left(-\frac{u^2}{2}\right) && \textrm{Gaussian} \\
K(u) &= 1 \textrm{ if } |u| < 1 \textrm{, else } 0 && \textrm{Boxcar} \\
K(u) &= 1 && \textrm{Constant} \\
K(u) &= \max\left(0, 1 - |u|\right) && \textrm{Epanechnikov}
\end{aligned}$$

(The normalized Gaussian density has an extra factor $1/\sqrt{2\pi}$; it cancels below, so we
drop it.) All four depend on $|u|$ only: shifting query and key together changes nothing. They
differ in *range* — the boxcar and Epanechnikov kernels ignore keys farther than $1$, the
Gaussian never quite does, the constant kernel looks at everything — and in *smoothness*.
Exercise 1.1 (`labs/lab01/kernels.c`) implements them:

@code labs/lab01/kernels.c gaussian_kernel boxcar_kernel constant_kernel epanechnikov_kernel

Here they are on $[-2.5, 2.5)$ with the key at the origin.

The kernels are plain C functions on arrays of floats, not tensor ops, so the estimator of
exercise 1.2 runs on the host whatever `--device` says: with `--device cuda` it copies the keys,
values and queries to the host (`host_read`), computes there, and sends its estimates back to
the device, where the trained estimator of the last section runs with ops like every other lab.
The graded tests run both on the CPU.
  */
  {
    static const char *const names[4] = {"Gaussian", "Boxcar", "Constant", "Epanechnikov"};
    const KernelFn fns[4] = {gaussian_kernel, boxcar_kernel, constant_kernel,
                             epanechnikov_kernel};
    float u[50], k[4][50];
    lab01_arange(-2.5f, 0.1, 50, u);
    Series s[4];
    Axes ax[4];
    for (int p = 0; p < 4; p++) {
      float *kp = fns[p](u, k[p], 50, 1.0);
      NEED(kp, "the kernel figure");
      s[p] = (Series){NULL, u, k[p], 50, "-"};
      /* sharey=True: one range, [0, 1] and matplotlib's 5% margins; labelled once */
      ax[p] = (Axes){.xlabel = names[p], .ylabel = p == 0 ? "K(u)" : NULL, .xmin = NAN,
                     .xmax = NAN, .ymin = -0.05, .ymax = 1.05, .series = &s[p], .nseries = 1};
    }
    char *base = out_path(&L, "kernels");
    figure_saved(base, plot_axes_row(base, ax, 4, 2400, 600)); /* figsize=(12, 3) at 2x */
    free(base); /* @program */
  }

  /***
## Attention Pooling via Nadaraya–Watson Regression

The data of this section (the book's 1.0 edition) are noisy samples of $f(x) = 2\sin(x) + x$:

$$y_i = 2\sin(x_i) + x_i + \epsilon,$$

where $\epsilon$ is standard normal. There are $40$ training inputs drawn uniformly from
$[0, 5)$ and sorted, and $50$ queries $x = 0, 0.1, \ldots, 4.9$. With `--data FILE` the
training points come from a file instead (`x y` per line, for this section and the next ones);
`--n-train N` changes how many are generated.
  */
  if (data_path) {
    char err[512];
    Data *D = &L.d10;
    if (lab01_read_xy(data_path, &D->x_train, &D->y_train, &D->n, err, sizeof err) != 0) /* @program */
      die("lab01: --data %s", err); /* @program */
    if (lab01_sort_xy(D->x_train, D->y_train, D->n))
      printf("note: sorted the %d points of %s by x (the heatmaps assume sorted keys)\n", D->n,
             data_path);
    printf("read %d training points from %s\n", D->n, data_path);
  } else {
    if (n_train != 0 && n_train < 2) /* @program */
      die("lab01: --n-train must be at least 2, got %d", n_train); /* @program */
    Data *D = &L.d10;
    D->n = n_train ? n_train : 40;
    D->x_train = xmalloc(sizeof(float) * (size_t)D->n);
    D->y_train = xmalloc(sizeof(float) * (size_t)D->n);
    /* a stream of its own (from --seed), so that 0.17's data and w0 draw from g_rng what
     * they would without this section */
    Rng r10;
    rng_init(&r10, args.seed ^ 0x10u);
    lab01_make_data10(&r10, D->n, D->x_train, D->y_train);
  }
  lab01_arange(0.0f, 0.1, N_TEST, L.x_test);
  for (int i = 0; i < N_TEST; i++) L.d10.y_truth[i] = lab01_f10(L.x_test[i]);

  /***
Nadaraya and Watson weigh each output $y_i$ by how close its input $x_i$ is to the query $x$:

$$f(x) = \sum_{i=1}^n \frac{K(x - x_i)}{\sum_{j=1}^n K(x - x_j)} y_i.$$

Read as attention, $x$ is the query, $(x_i, y_i)$ are the key–value pairs, and the estimator is
*attention pooling*

$$f(x) = \sum_{i=1}^n \alpha(x, x_i) y_i,$$

with attention weights $\alpha(x, x_i)$ that are non-negative and sum to one over $i$ for every
query. Exercise 1.2 (`labs/lab01/nadaraya_watson.c`) computes the weight matrix — one row per
query, one column per key — and the predictions:

@code labs/lab01/nadaraya_watson.c nadaraya_watson

Below are the fits of the four kernels (the
prediction `y_hat` solid, the truth `y` dashed) and their attention weights, drawn as the book
draws them: one row per training input (key), one column per query.

One case needs care. If *every* key scores $0$ for some query — a boxcar whose window around
the query holds no training input, or a Gaussian so narrow that $\exp$ underflows to zero — the
formula is $0/0$ and PyTorch would silently return NaN. Our implementation leaves that query's
weights at zero, marks its prediction as undefined (NaN on purpose, drawn as a gap and written
as `null` to `summary.json`), and the lab prints how many queries had no support. With
`--fallback-mean` it predicts the average of the training outputs there instead. The generated
data cover $[0, 5)$ densely, so the count is usually zero; try `--data` with a gap wider than
$2$ to see it happen.
  */
  float mean10;
  {
    double s = 0;
    for (int i = 0; i < L.d10.n; i++) s += L.d10.y_train[i];
    mean10 = (float)(s / L.d10.n);
  }
  Estimate kern[4] = {{.key = "gaussian", .title = "Gaussian", .d10 = true},
                      {.key = "boxcar", .title = "Boxcar", .d10 = true},
                      {.key = "constant", .title = "Constant", .d10 = true},
                      {.key = "epanechnikov", .title = "Epanechnikov", .d10 = true}};
  {
    const KernelFn fns[4] = {gaussian_kernel, boxcar_kernel, constant_kernel,
                             epanechnikov_kernel};
    const double widths[4] = {1.0, 1.0, 1.0, 1.0};
    nadaraya_watson_row(&L, kern, fns, widths, mean10, "fit_kernels", "attention_kernels");
  }

  /***
The Gaussian, boxcar and Epanechnikov fits are all reasonable, and their weight matrices look
alike: a band along the diagonal, because sorted queries attend to nearby sorted keys. The
constant kernel spreads its attention evenly over all keys — it is *average pooling*, the
estimator that ignores the inputs and predicts the mean output everywhere.

## Adapting Attention Pooling

The kernels have a width. Replacing $u$ by $u/\sigma$ in the Gaussian gives

$$K_\sigma(u) = \exp\left(-\frac{u^2}{2\sigma^2}\right),$$

where $\sigma$ decides how far a query looks. Here are $\sigma = 0.1, 0.2, 0.5, 1$:
  */
  Estimate sig[4] = {{.key = "sigma_0.1", .title = "Sigma 0.1", .d10 = true},
                     {.key = "sigma_0.2", .title = "Sigma 0.2", .d10 = true},
                     {.key = "sigma_0.5", .title = "Sigma 0.5", .d10 = true},
                     {.key = "sigma_1", .title = "Sigma 1", .d10 = true}};
  {
    const KernelFn fns[4] = {gaussian_kernel, gaussian_kernel, gaussian_kernel, gaussian_kernel};
    const double sigmas[4] = {0.1, 0.2, 0.5, 1.0};
    nadaraya_watson_row(&L, sig, fns, sigmas, mean10, "fit_sigmas", "attention_sigmas");
  }

  /***
The narrower the kernel, the rougher the estimate: it follows the noise of nearby points
instead of averaging it away, and its band of large weights is thinner. One width for the whole
input range is a compromise — where data are dense a narrow kernel would do, where they are
sparse it leaves queries with (almost) nothing to attend to.

## Generating the Dataset (d2l 0.17)

The book's earlier edition (0.17, "Attention Pooling: Nadaraya–Watson Kernel Regression")
takes the same road with tensor operations and then *trains* the attention. Its data differ:
the function is $f(x) = 2\sin(x) + x^{0.8}$, sampled as

$$y_i = 2\sin(x_i) + x_i^{0.8} + \epsilon,$$

where $\epsilon$ is normal with zero mean and standard deviation $0.5$, at $50$ training inputs
drawn uniformly from $[0, 5)$ and sorted; the $50$ test queries are the same as above. Its
figures draw the truth solid (`Truth`) and the prediction dashed (`Pred`), on $y \in [-1, 5]$.
The notebook prints the number of test examples:
  */
  if (data_path) {
    L.d17.n = L.d10.n; /* the same points: freed once, as d10's */
    L.d17.x_train = L.d10.x_train;
    L.d17.y_train = L.d10.y_train;
  } else {
    Data *D = &L.d17;
    D->n = n_train ? n_train : 50;
    D->x_train = xmalloc(sizeof(float) * (size_t)D->n);
    D->y_train = xmalloc(sizeof(float) * (size_t)D->n);
    lab01_make_data(D->n, D->x_train, D->y_train);
  }
  for (int i = 0; i < N_TEST; i++) L.d17.y_truth[i] = lab01_f(L.x_test[i]);
  const int n = L.d17.n;
  printf("n_test = %d\n", N_TEST);

  /* The training set and the queries as tensors (arena memory, rebuilt after each reset). */
#define X_TRAIN() tensor_from(1, (int[]){n}, L.d17.x_train) /* (n) keys */
#define Y_TRAIN() tensor_from(1, (int[]){n}, L.d17.y_train) /* (n) values */
#define X_TEST() tensor_from(1, (int[]){N_TEST}, L.x_test)  /* (N_TEST) queries */

  /***
## Average Pooling

The world's dumbest estimator ignores the inputs altogether and predicts the average output
everywhere:

$$f(x) = \frac{1}{n}\sum_{i=1}^n y_i.$$

In the figure the truth is solid, the prediction dashed, and the training data are the dots.
  */
  Estimate avg = {.key = "average", .title = "Average"};
  {
    double s = 0;
    for (int i = 0; i < n; i++) s += L.d17.y_train[i];
    const float mean = (float)(s / n);
    for (int i = 0; i < N_TEST; i++) avg.y_hat[i] = mean;
    plot_fit(&L, "fit_average", &avg);
  }

  /***
## Nonparametric Attention Pooling

With the Gaussian kernel the normalization is exactly a softmax over the keys:

$$\begin{aligned} f(x) &= \sum_{i=1}^n \alpha(x, x_i) y_i
= \sum_{i=1}^n \frac{\exp\left(-\frac{1}{2}(x - x_i)^2\right)}{\sum_{j=1}^n
\exp\left(-\frac{1}{2}(x - x_j)^2\right)} y_i \\
&= \sum_{i=1}^n \mathrm{softmax}\left(-\frac{1}{2}(x - x_i)^2\right) y_i. \end{aligned}$$

A key closer to the query gets more attention. This model has nothing to learn — it is
*nonparametric attention pooling*. The book computes it with tensor operations: repeat the
queries into an $(n_\textrm{test}, n)$ matrix, subtract the keys, square, scale by $-1/2$, take
a softmax along each row and multiply by the values. `t_sub` broadcasts a $(n_\textrm{test}, 1)$
column against the $(n)$ keys, so we need no explicit repeat. The result equals the Gaussian
kernel fit above; the softmax form is also the numerically safe one, since it subtracts the
row's largest score before exponentiating, so its denominator can never underflow to zero.
  */
  Estimate nonpar = {.key = "nonparametric", .title = "Nonparametric"};
  {
    Tensor *q = t_reshape(X_TEST(), 2, (int[]){N_TEST, 1});             /* (N_TEST, 1) */
    Tensor *scores = t_scale(t_square(t_sub(q, X_TRAIN())), -0.5f);     /* (N_TEST, n) */
    Tensor *attention_weights = t_softmax(scores);                      /* (N_TEST, n) */
    Tensor *y_hat = t_matmul(attention_weights, t_reshape(Y_TRAIN(), 2, (int[]){n, 1}));
    keep(&nonpar, y_hat);                                               /* (N_TEST, 1) */
    plot_fit(&L, "fit_nonparametric", &nonpar);
    plot_attention(&L, "attention_nonparametric", host_read(attention_weights));
    ag_step_reset();
  }

  /***
## Parametric Attention Pooling

Nonparametric Nadaraya–Watson regression is *consistent*: with enough data (and a kernel that
narrows as data grow) it converges to the best possible predictor. Still, nothing stops us from
putting a learnable parameter into the attention. Here the distance between query and key is
scaled by a learned $w$:

$$\begin{aligned}f(x) &= \sum_{i=1}^n \alpha(x, x_i) y_i
= \sum_{i=1}^n \frac{\exp\left(-\frac{1}{2}((x - x_i)w)^2\right)}{\sum_{j=1}^n
\exp\left(-\frac{1}{2}((x - x_j)w)^2\right)} y_i \\
&= \sum_{i=1}^n \mathrm{softmax}\left(-\frac{1}{2}((x - x_i)w)^2\right) y_i.\end{aligned}$$

$w$ plays the role of $1/\sigma$: a larger $w$ is a narrower kernel.

### Batch Matrix Multiplication

To pool many queries at once, the book uses batch matrix multiplication: for two minibatches of
$n$ matrices, $\mathbf{X}_1, \ldots, \mathbf{X}_n$ of shape $a \times b$ and
$\mathbf{Y}_1, \ldots, \mathbf{Y}_n$ of shape $b \times c$, it returns the $n$ products
$\mathbf{X}_i\mathbf{Y}_i$ of shape $a \times c$. So tensors of shapes $(n, a, b)$ and
$(n, b, c)$ give $(n, a, c)$:
  */
  {
    Tensor *X = tensor_full(3, (int[]){2, 1, 4}, 1.0f); /* (2, 1, 4) */
    Tensor *Y = tensor_full(3, (int[]){2, 4, 6}, 1.0f); /* (2, 4, 6) */
    char buf[48];
    printf("t_bmm(X, Y) shape: %s\n", shape_str(t_bmm(X, Y), buf, sizeof buf));

    /***
A weighted average of values is a batch matrix product too: weights of shape $(2, 1, 10)$
(ten weights $0.1$ per batch row) times values of shape $(2, 10, 1)$ (the numbers $0, \ldots,
19$) give the two averages $4.5$ and $14.5$:
    */
    Tensor *weights = tensor_full(2, (int[]){2, 10}, 0.1f);              /* (2, 10) */
    Tensor *values = t_reshape(tensor_arange(20), 2, (int[]){2, 10});    /* (2, 10) */
    tensor_print(t_bmm(t_reshape(weights, 3, (int[]){2, 1, 10}),
                       t_reshape(values, 3, (int[]){2, 10, 1})),
                 NULL);                                                   /* (2, 1, 1) */
    ag_step_reset();
  }

  /***
### Defining the Model

`NWKernelRegression` holds the single parameter `w`. Its forward pass (exercise 1.3,
`labs/lab01/nw_kernel_regression.c`) takes queries $(m)$, keys $(m, n)$ and values $(m, n)$ —
each query with its own set of key–value pairs — computes the softmax weights above with the
differentiable ops of `common/ops.h` and pools the values with one batch matrix product. Because
every step is a recorded op, `ag_backward` can send the gradient of the loss all the way to `w`.
Like the book's `torch.rand((1,))`, the initial `w` is uniform in $[0, 1)$ (`--w0` sets it).

@code labs/lab01/lab01.h NWKernelRegression
@code labs/lab01/nw_kernel_regression.c NWKernelRegression_forward
  */
  ParamSet ps = {0};
  NWKernelRegression net = {0};
  net.w = param_new(&ps, "w", 1, (int[]){1}); /* (1) */
  const float w0 = w0_arg ? parse_w0(w0_arg) : rng_uniform(&g_rng, 0.0f, 1.0f);
  tensor_copy_from_host(net.w, &w0);

  /***
### Training

To train $w$ we turn the training set into queries, keys and values. If a training input could
attend to its own key, the best $w$ would be infinite: every input would look only at itself
and copy its own noisy $y_i$, a perfect and useless fit. So each training input takes the
key–value pairs of *all other* training examples: keys and values are $(n, n-1)$ matrices whose
row $i$ leaves out example $i$ (exercise 1.4, `leave_one_out`):

@code labs/lab01/nw_kernel_regression.c leave_one_out

The loss is the squared error summed over the training points,

$$L(w) = \sum_{i=1}^n \frac{1}{2}\left(f(x_i) - y_i\right)^2,$$

as the book computes it (PyTorch's `MSELoss(reduction='none')` halved, then summed), minimized
by plain gradient descent with learning rate $0.5$ for $5$ epochs. Each epoch prints its loss,
and the animator draws the curve.
  */
  float losses[1024]; /* --epochs is at most 1024 */
  float w_learned = w0;
  {
    SGD trainer = {.ps = &ps, .lr = 0.5f};
    char *base = out_path(&L, "loss");
    /* d2l.Animator(xlabel='epoch', ylabel='loss', xlim=[1, 5]): no legend */
    Animator *animator = animator_new(base, "epoch", "loss", NULL, 1, 1,
                                      epochs > 1 ? epochs : 2, false, 1);
    if (no_loo)
      printf("--no-loo: every training input also attends to itself (watch w and the loss)\n");
    for (int epoch = 0; epoch < epochs; epoch++) {
      paramset_zero_grad(&ps);
      Tensor *x = X_TRAIN(), *y = Y_TRAIN();                         /* (n) */
      Tensor *keys, *values;                                         /* (n, n - 1) or (n, n) */
      if (no_loo) {
        keys = repeat_rows(L.d17.x_train, n, n);
        values = repeat_rows(L.d17.y_train, n, n);
      } else {
        keys = leave_one_out(x);
        values = leave_one_out(y);
        NEED(keys, "the leave-one-out training keys");
        NEED(values, "the leave-one-out training values");
      }
      Tensor *y_hat = NWKernelRegression_forward(&net, x, keys, values); /* (n) */
      NEED(y_hat, "training the parametric model");
      Tensor *l = t_scale(t_square(t_sub(y_hat, y)), 0.5f);          /* (n) */
      Tensor *loss = t_sum_all(l);                                   /* (1) */
      tensor_to_host(loss, &losses[epoch]);
      ag_backward(loss);
      SGD_step(&trainer);
      printf("epoch %d, loss %.6f\n", epoch + 1, (double)losses[epoch]);
      double lv = losses[epoch];
      animator_add(animator, epoch + 1, &lv);
      ag_step_reset();
    }
    figure_saved(base, animator_close(animator));
    free(base); /* @program */
    tensor_to_host(net.w, &w_learned);
    printf("learned w = %.4f (started at %.4f)\n", (double)w_learned, (double)w0);
  }

  /***
After training we predict at the test queries, now with every training example as a key–value
pair: keys and values are the training inputs and outputs repeated for each of the $50$
queries. The fit follows the data more closely than the nonparametric one — and is less
smooth, because it also follows their noise.
  */
  Estimate par = {.key = "parametric", .title = "Parametric"};
  {
    ag_set_grad_enabled(false); /* inference: record nothing */
    Tensor *keys = repeat_rows(L.d17.x_train, N_TEST, n);   /* (N_TEST, n) */
    Tensor *values = repeat_rows(L.d17.y_train, N_TEST, n); /* (N_TEST, n) */
    Tensor *y_hat = NWKernelRegression_forward(&net, X_TEST(), keys, values); /* (N_TEST) */
    NEED(y_hat, "predicting with the parametric model");
    keep(&par, y_hat);
    plot_fit(&L, "fit_parametric", &par);

    /***
Compared with nonparametric pooling, the band of large attention weights is sharper: the
learned $w$ is larger than $1$, so each query looks at fewer keys.
    */
    plot_attention(&L, "attention_parametric", host_read(net.attention_weights));
    ag_set_grad_enabled(true);
    ag_step_reset();
  }

  /***
## Comparing the Estimators

How far is each estimate from the noiseless truth $f$ of its own data (1.0's for the kernels
and widths, 0.17's for the rest)? The mean squared error over the test queries (undefined
predictions left out) gives a rough ranking within each edition. Try `--n-train 500`, or
other seeds, and see how it moves.
  */
  Estimate *all[] = {&avg,    &kern[0], &kern[1], &kern[2], &kern[3], &sig[0],
                     &sig[1], &sig[2],  &sig[3],  &nonpar,  &par};
  const int n_all = (int)(sizeof all / sizeof all[0]);
  double mse[sizeof all / sizeof all[0]];
  printf("%-14s %s\n", "estimator", "mse vs truth");
  for (int p = 0; p < n_all; p++) {
    double s = 0;
    int cnt = 0;
    const float *truth = all[p]->d10 ? L.d10.y_truth : L.d17.y_truth;
    for (int i = 0; i < N_TEST; i++)
      if (!isnan(all[p]->y_hat[i])) {
        double d = (double)all[p]->y_hat[i] - truth[i];
        s += d * d;
        cnt++;
      }
    mse[p] = cnt ? s / cnt : NAN;
    printf("%-14s %.4f%s\n", all[p]->key, mse[p], all[p]->unsupported ? " (some undefined)" : "");
  }

  /***
Everything above is also written to `summary.json`: the training data (0.17's at the top
level, 1.0's under `d2l10`), the queries and, per estimator, its edition, its 50 predictions
(`y_hat`), how many queries had no support and its error; the parametric entry adds `w0`, the
final `w` and the per-epoch losses.
@program
  */
  {
    Summary *S = summary_new("lab01", args.seed);
    summary_str(S, "device", device_name(tensor_default_device()));
    summary_str(S, "data", data_path); /* null: generated */
    summary_int(S, "n_train", n);
    summary_floats(S, "x_train", L.d17.x_train, n);
    summary_floats(S, "y_train", L.d17.y_train, n);
    summary_floats(S, "x_test", L.x_test, N_TEST);
    summary_floats(S, "y_truth", L.d17.y_truth, N_TEST);
    summary_int(S, "d2l10/n_train", L.d10.n);
    summary_floats(S, "d2l10/x_train", L.d10.x_train, L.d10.n);
    summary_floats(S, "d2l10/y_train", L.d10.y_train, L.d10.n);
    summary_floats(S, "d2l10/y_truth", L.d10.y_truth, N_TEST);
    for (int p = 0; p < n_all; p++) {
      const char *k = all[p]->key;
      summary_str(S, summary_path("estimators/%s/edition", k),
                  all[p]->d10 ? "d2l-1.0" : "d2l-0.17");
      summary_floats(S, summary_path("estimators/%s/y_hat", k), all[p]->y_hat, N_TEST);
      summary_int(S, summary_path("estimators/%s/unsupported", k), all[p]->unsupported);
      summary_num(S, summary_path("estimators/%s/mse", k), mse[p]);
      if (all[p] == &par) {
        summary_num(S, summary_path("estimators/%s/w0", k), w0);
        summary_num(S, summary_path("estimators/%s/w", k), w_learned);
        summary_int(S, summary_path("estimators/%s/epochs", k), epochs);
        summary_str(S, summary_path("estimators/%s/loo", k), no_loo ? "off" : "on");
        summary_floats(S, summary_path("estimators/%s/epoch_losses", k), losses, epochs);
      }
    }
    summary_write(S, L.out);
  }

  paramset_free(&ps);
  if (L.d17.x_train != L.d10.x_train) free(L.d17.x_train), free(L.d17.y_train);
  free(L.d10.x_train);
  free(L.d10.y_train);
  tensor_shutdown();
  return 0;
}

/***
## Summary

* Nadaraya–Watson kernel regression is attention pooling: the query is the new input, the
  key–value pairs are the training examples, and the attention weights are kernel scores
  normalized to sum to one.
* The kernel's shape and width decide how far a query looks; a narrow width fits local detail
  and noise, a wide one smooths both away. A kernel with bounded support can leave a query with
  nothing to attend to — a case to detect and report, not to paper over with NaN.
* With the Gaussian kernel the weights are a softmax of $-\frac{1}{2}(x - x_i)^2$
  (nonparametric attention pooling); scaling the distance by a learned $w$ gives parametric
  attention pooling, trained by gradient descent through the softmax — with the query's own
  example left out of its keys.

## Exercises

1. Increase the number of training examples (`--n-train 200`, `--n-train 1000`). Does
   nonparametric Nadaraya–Watson regression get closer to the truth? Watch the mse table.
2. What value of $w$ does the parametric model learn (the `learned w` line)? Why does it make
   the region of large attention weights sharper in the heatmap?
3. How could you add hyperparameters to nonparametric Nadaraya–Watson regression to predict
   better? The $\sigma$ sweep is one answer; which $\sigma$ has the smallest error here?
4. Design another parametric attention pooling for this regression problem (for example a
   separate learned width per key, or a learned width for the Epanechnikov kernel — what
   happens to its gradient for a query with no key in range?), train it and visualize its
   attention weights.
5. Train the parametric model without leaving each example out of its own keys
   (`--no-loo`). What happens to $w$ and to the loss, and why is the result useless?
6. Feed `--data` a training set with a gap wider than $2$ (for instance no points in
   $[1.5, 4]$). Which kernels leave queries without support, and what do `--fallback-mean` and
   the softmax form of the Gaussian do there?
*/
