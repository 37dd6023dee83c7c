/***
# Self-Attention and Positional Encoding

In deep learning we often process a sequence with a CNN or an RNN. Attention offers a third
way: feed the sequence of tokens in as the queries, *and* as the keys, *and* as the values, so
that every token attends to every other token of the same sequence. This is *self-attention*
(also called intra-attention). This lab checks its shapes, compares it with convolution and
recurrence on cost, parallelism and path length, and then deals with what self-attention gives
up — the order of the tokens — by adding *positional encodings*.

Run it with `make lab05 && ./lab05` (flags: `./lab05 --help`). Figures go to `out/lab05/`
(or `--out DIR`), together with `summary.json`.
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
#include "../../common/util.h"
#include "../../cuda/profile.h"
#include "lab05/lab05.h"

/* The rotation property for one offset delta over the rows i with i + delta < rows and the
 * complete column pairs: the largest |R(delta w_j) (p_{i,2j}, p_{i,2j+1}) - (p_{i+delta,2j},
 * p_{i+delta,2j+1})|, in double on the float32 table P (rows, d). */
static double rotation_error(const float *P, int rows, int d, int delta) {
  double worst = 0;
  for (int j = 0; 2 * j + 1 < d; j++) {
    const double w = 1.0 / pow(10000.0, 2.0 * j / d), c = cos(delta * w), s = sin(delta * w);
    for (int i = 0; i + delta < rows; i++) {
      const float *p = P + (long)i * d + 2 * j, *q = P + (long)(i + delta) * d + 2 * j;
      worst = fmax(worst, fabs(c * p[0] + s * p[1] - q[0]));
      worst = fmax(worst, fabs(-s * p[0] + c * p[1] - q[1]));
    }
  }
  return worst;
}

/* On the emulated device (make lab05-emu && build/emu-bin/lab05 --device cuda): the memory
 * counters of the kernel that computes rows of P there (exercise 5.2's, or the kit's until it is
 * done), for rows 0 .. steps - 1. Nothing elsewhere: a GPU has Nsight Compute instead. */
static void posenc_counters(const PositionalEncoding *pe, int steps) {
  if (tensor_default_device() != DEV_CUDA || !cuda_profile_start()) return;
  t_positional_encoding(pe->P, pe->max_len, pe->num_hiddens, 0, steps, DEV_CUDA); /* (steps, d) */
  CudaKernelProfile k[8];
  int n = cuda_profile_stop(k, 8);
  printf("memory counters of the kernel that computed P[0:%d] (CUDA emulator):\n", steps);
  printf("  %-22s %8s %8s %12s %9s\n", "kernel", "launches", "st req", "sectors/req", "KB moved");
  for (int i = 0; i < n && i < 8; i++)
    printf("  %-22s %8ld %8ld %12.1f %9.1f\n", k[i].kernel, k[i].launches, k[i].st_req,
           k[i].st_req ? (double)k[i].st_sectors / k[i].st_req : 0.0,
           32.0 * (double)(k[i].ld_sectors + k[i].st_sectors) / 1024);
  printf("  (4.0 sectors a request is the ideal: a warp's 32 lanes store 32 consecutive floats)\n");
  ag_step_reset();
}

int main(int argc, char **argv) {
  LabArgs args;
  int encoding_dim = 32, num_steps = 60, delta = 5;
  const CliOpt extra[] = {
      {"--encoding-dim", OPT_INT, &encoding_dim,
       "num_hiddens of the positional-encoding figures (>= 10; odd works: the last column is a "
       "sine)"},
      {"--num-steps", OPT_INT, &num_steps, "positions shown in the figures (1..1000)"},
      {"--delta", OPT_INT, &delta, "the offset whose rotation is printed in detail (1..999)"},
      {NULL, 0, NULL, NULL},
  };
  cli_parse(argc, argv, "lab05", "self-attention, the CNN/RNN/self-attention comparison and "
            "sinusoidal positional encoding", &args, extra);
  if (encoding_dim < 10 || encoding_dim > 4096)
    die("lab05: --encoding-dim must be in [10, 4096] (the figure draws columns 6 to 9), got %d",
        encoding_dim);
  if (num_steps < 1 || num_steps > 1000)
    die("lab05: --num-steps must be in [1, 1000] (the table has max_len 1000), got %d",
        num_steps);
  if (delta < 1 || delta > 999)
    die("lab05: --delta must be in [1, 999], got %d", delta);

  /***
## Self-Attention

Given a sequence of input tokens $\mathbf{x}_1, \ldots, \mathbf{x}_n$ with
$\mathbf{x}_i \in \mathbb{R}^d$, self-attention outputs a sequence of the same length
$\mathbf{y}_1, \ldots, \mathbf{y}_n$, where

$$\mathbf{y}_i = f(\mathbf{x}_i, (\mathbf{x}_1, \mathbf{x}_1), \ldots, (\mathbf{x}_n, \mathbf{x}_n)) \in \mathbb{R}^d$$

according to the definition of attention pooling $f$: token $i$ is the query, and every token
is both a key and a value. With lab 04's multi-head attention, self-attention is just a call
with the same tensor three times. The book's check: 100 hiddens, 5 heads, a batch of 2
sequences of 4 tokens with valid lengths $[3, 2]$ — the output has the input's shape
`(batch_size, num_queries, num_hiddens)`.
  */
  int sa_shape[3];
  {
    ParamSet ps = {0};
    MultiHeadAttention attention;
    const int num_hiddens = 100, num_heads = 5, batch_size = 2, num_queries = 4;
    MultiHeadAttention_init(&attention, &ps, "attention", num_hiddens, num_hiddens, num_hiddens,
                            num_hiddens, num_heads, 0.5f, false);
    Tensor *valid_lens = tensor_from(1, (int[]){2}, (float[]){3, 2});          /* (batch) */
    Tensor *X = tensor_full(3, (int[]){batch_size, num_queries, num_hiddens}, 1.0f);
    Tensor *Y = NEED(MultiHeadAttention_forward(&attention, X, X, X, valid_lens, false),
                     "the self-attention shape check");      /* (batch, queries, hiddens) */
    char s[64];
    printf("self-attention output shape: %s\n", shape_str(Y, s, sizeof s));
    if (!(Y->ndim == 3 && Y->shape[0] == 2 && Y->shape[1] == 4 && Y->shape[2] == 100))
      die("lab05: expected the output shape (2, 4, 100)");
    memcpy(sa_shape, Y->shape, sizeof sa_shape);
    ag_step_reset();
    paramset_free(&ps); /* @program */
  }

  /***
## Comparing CNNs, RNNs, and Self-Attention

Let us map a sequence of $n$ tokens to another sequence of $n$ tokens, every token a
$d$-dimensional vector, with each of the three architectures, and compare three things: the
*computational complexity* of one layer, the number of *sequential operations* (steps that
cannot run in parallel), and the *maximum path length* — how many layers a signal must cross to
get from any position to any other. Short paths make long-range dependencies easier to learn.

* A **CNN** layer with kernel size $k$ (padded so the length stays $n$) computes $n$ outputs,
  each a $d \times kd$ matrix–vector product: $\mathcal{O}(knd^2)$. All positions are
  independent: $\mathcal{O}(1)$ sequential operations. Each layer widens the receptive field by
  $k - 1$ positions, so connecting the two ends of the sequence takes $\mathcal{O}(n/k)$ stacked
  layers. (With *dilated* convolutions whose dilation grows by a factor $k$ per layer, the
  receptive field grows geometrically and $\mathcal{O}(\log_k n)$ layers suffice — the figure
  the Transformer paper quotes for convolutions.)
* An **RNN** layer multiplies a $d \times d$ matrix with a $d$-dimensional hidden state $n$
  times: $\mathcal{O}(nd^2)$, and the $n$ updates are inherently $\mathcal{O}(n)$ sequential.
  The path from the first to the last token passes through all $n$ hidden states:
  $\mathcal{O}(n)$.
* **Self-attention**: queries, keys and values are $n \times d$ matrices; $\mathbf{Q}\mathbf{K}^\top$
  is $n \times n$ and costs $\mathcal{O}(n^2 d)$, as does multiplying the weights with the values.
  Every token attends to every token directly: $\mathcal{O}(1)$ sequential operations and
  maximum path length $\mathcal{O}(1)$.
  */
  static const char *const table[3][4] = {
      {"CNN", "O(k n d^2)", "O(1)", "O(n/k)  [O(log_k n) dilated]"},
      {"RNN", "O(n d^2)", "O(n)", "O(n)"},
      {"self-attention", "O(n^2 d)", "O(1)", "O(1)"},
  };
  printf("%-15s %-12s %-16s %s\n", "architecture", "complexity", "sequential ops",
         "maximum path length");
  for (int r = 0; r < 3; r++)
    printf("%-15s %-12s %-16s %s\n", table[r][0], table[r][1], table[r][2], table[r][3]);

  /***
What do the orders of magnitude mean for real sizes? Below, the multiply-adds of one layer (the
leading terms above, $d = 512$, $k = 3$) and the path lengths as layer counts: plain CNN
$\lceil (n-1)/(k-1) \rceil$, dilated CNN $\lceil \log_k n \rceil$, RNN $n - 1$ steps,
self-attention $1$.
  */
  const int d_ex = 512, k_ex = 3;
  static const int ns[4] = {16, 128, 1024, 8192};
  double cost[4][3];
  int hops[4][4]; /* path lengths in layers (or steps) */
  printf("%-6s %-10s %-10s %-10s | %-5s %-8s %-5s %s\n", "n", "CNN", "RNN", "self-att", "CNN",
         "dilated", "RNN", "self-att");
  for (int r = 0; r < 4; r++) {
    const double n = ns[r];
    cost[r][0] = k_ex * n * d_ex * (double)d_ex;
    cost[r][1] = n * d_ex * (double)d_ex;
    cost[r][2] = n * n * d_ex;
    hops[r][0] = (ns[r] - 1 + k_ex - 2) / (k_ex - 1);
    int dil = 0;
    for (long span = 1; span < ns[r]; span *= k_ex) dil++;
    hops[r][1] = dil;
    hops[r][2] = ns[r] - 1;
    hops[r][3] = 1;
    printf("%-6d %-10.3g %-10.3g %-10.3g | %-5d %-8d %-5d %d\n", ns[r], cost[r][0], cost[r][1],
           cost[r][2], hops[r][0], hops[r][1], hops[r][2], hops[r][3]);
  }

  /***
Self-attention is the cheapest of the three while $n < d$ and the most parallel with the
shortest paths at any length — but its quadratic cost makes it very slow for long sequences
($n = 8192$ costs 16 times an RNN layer here).

## Positional Encoding

Unlike an RNN, which reads tokens one after another, self-attention treats its inputs as a
*set*: permute the tokens and the outputs are permuted the same way, nothing else changes. To
use the order of a sequence we inject it into the inputs by adding *positional encodings*.
They can be learned or fixed; the book uses fixed ones built from sine and cosine functions.

For an input $\mathbf{X} \in \mathbb{R}^{n \times d}$ of $n$ tokens with $d$-dimensional
embeddings, the encoding outputs $\mathbf{X} + \mathbf{P}$ with the same-shaped matrix
$\mathbf{P}$ whose row $i$ and columns $2j$, $2j+1$ are

$$\begin{aligned} p_{i, 2j} &= \sin\left(\frac{i}{10000^{2j/d}}\right),\\p_{i, 2j+1} &= \cos\left(\frac{i}{10000^{2j/d}}\right).\end{aligned}$$

Filling the table is exercise 5.1 (`labs/lab05/positional_encoding.c`);
`PositionalEncoding_init` (`chapters/05_self_attention_pe/posenc.c`) allocates a table for
`max_len` $= 1000$ positions once, and `PositionalEncoding_forward` adds its first $n$ rows to
every sequence of the batch, then applies dropout. (An odd $d$ gets a last column that is a
sine without a cosine partner; the book's PyTorch code would fail on it.)

@code labs/lab05/positional_encoding.c positional_encoding_table
@code labs/lab05/lab05.h PositionalEncoding
@code chapters/05_self_attention_pe/posenc.c PositionalEncoding_forward

### The table as a CUDA kernel (exercise 5.2)

With `--device cuda` the rows of $\mathbf{P}$ are computed on the GPU, where they are added, by
a kernel: exercise 5.2 (`labs/lab05/posenc_kernel.cu`), the first of the kernel track. A
*kernel* is a function that runs once per *thread*. Threads come in *blocks* (at most 1024;
here 256, eight *warps* of 32 threads that execute in step), and the blocks of one launch form
the *grid*. Each thread finds its element from where it sits: `e = blockIdx.x * blockDim.x +
threadIdx.x`, row `e / d`, column `e % d`. An entry of $\mathbf{P}$ depends on its own $i$ and
$j$ only, so one thread per element needs no communication at all.

Two rules make the kernel right for every size. The *bound*: a grid is a whole number of
blocks, so the last block usually reaches past the table, and a thread whose `e` is past
`rows * d` must write nothing (on a GPU it would overwrite someone else's memory; the kit's
emulator stops it with a memcheck report). The *grid-stride loop*, `for (e = first; e < n;
e += gridDim.x * blockDim.x)`, lets a grid smaller than the table cover it: the launcher caps
the grid at what a GPU runs at once (`cap_grid`), and the grader caps it at two blocks, so the
loop has to loop. Consecutive threads write consecutive floats, so each warp's store is one
128-byte request: 4 sectors of 32 bytes, the ideal the emulator's profiler counts. On the
emulated device (`make lab05-emu && build/emu-bin/lab05 --device cuda`) the lab prints those
counters for the kernel that computed the 60 rows below (yours once 5.2 is done):

```text
memory counters of the kernel that computed P[0:60] (CUDA emulator):
  kernel                 launches   st req  sectors/req  KB moved
  posenc_kernel                 1       60          4.0       7.5
```

A kernel whose threads walk the table column by column computes the same numbers with 32
sectors a request, eight times the traffic; the grader gives a point for staying near 4.

The kernel stands in for exercise 5.1 on the device, so the first time it fills a table the
kit compares its rows with 5.1's host table (`t_positional_encoding`). Until 5.2 is done,
`--device cuda` uses the kit's own kernel and says so once.

@code labs/lab05/posenc_kernel.cu posenc_kernel? positional_encoding_cuda

Below, $d = 32$, and we add the encoding to a zero input of 60 positions, which gives back
$\mathbf{P}$ itself. Each column oscillates at its own frequency; the frequency falls along the
columns — column 6/7 oscillates faster than column 8/9.
  */
  const int d = encoding_dim, steps = num_steps;
  PositionalEncoding pos_encoding;
  PositionalEncoding_init(&pos_encoding, d, 0.0f, 1000);
  float *P = xmalloc(sizeof(float) * (size_t)steps * d); /* (steps, d) of the forward */
  {
    Tensor *X = PositionalEncoding_forward(&pos_encoding, tensor_zeros(3, (int[]){1, steps, d}),
                                           0, false);   /* (1, steps, d) */
    tensor_to_host(X, P); /* (1, steps, d): steps * d floats */
    ag_step_reset();
  }
  posenc_counters(&pos_encoding, steps);
  float *pos = xmalloc(sizeof(float) * (size_t)steps), *cols = xmalloc(sizeof(float) * 4 * steps);
  {
    for (int i = 0; i < steps; i++) pos[i] = (float)i;
    for (int c = 0; c < 4; c++)
      for (int i = 0; i < steps; i++) cols[c * steps + i] = P[(long)i * d + 6 + c];
    static const char *const legend[4] = {"Col 6", "Col 7", "Col 8", "Col 9"};
    static const char *const fmts[4] = {"-", "m--", "g-.", "r:"}; /* d2l.plot's defaults */
    Series s[4];
    for (int c = 0; c < 4; c++) s[c] = (Series){legend[c], pos, cols + c * steps, steps, fmts[c]};
    Axes ax = {.xlabel = "Row (position)", .ylabel = "Encoding value", .xmin = NAN,
               .xmax = NAN, .ymin = NAN, .ymax = NAN, .series = s, .nseries = 4};
    char *base = path_join(args.out, "pe_columns");
    figure_saved(base, plot_axes_row(base, &ax, 1, 1200, 500));
    free(base); /* @program */
    printf("P[0:3, 6:10] =\n");
    for (int i = 0; i < 3 && i < steps; i++)
      printf("  [%.4f, %.4f, %.4f, %.4f]\n", P[i * d + 6], P[i * d + 7], P[i * d + 8],
             P[i * d + 9]);
  }

  /***
### Absolute Positional Information

How does a falling frequency encode position? Look at the binary representations of
$0, 1, \ldots, 7$:
  */
  char binary[8][4];
  for (int i = 0; i < 8; i++) {
    for (int b = 0; b < 3; b++) binary[i][b] = (char)('0' + ((i >> (2 - b)) & 1));
    binary[i][3] = '\0';
    printf("%d in binary is %s\n", i, binary[i]);
  }

  /***
The lowest bit flips at every number, the next every two numbers, the third every four: each
higher bit alternates at half the frequency of the one below. The sinusoidal encoding does the
same with continuous values — floats rather than bits, which also uses the space better. In the
heatmap of $\mathbf{P}$ (rows are positions, columns the encoding dimensions) the frequencies
fall from left to right, and each row is a distinct pattern.
  */
  {
    HeatMap hm = {NULL, P, steps, d};
    char *base = path_join(args.out, "pe_heatmap");
    figure_saved(base, plot_heatmaps(base, &hm, 1, 1, "Column (encoding dimension)",
                                     "Row (position)", "Blues", 560, 640));
    free(base); /* @program */
  }

  /***
### Relative Positional Information

The encoding also lets a model attend by *relative* position: for any fixed offset $\delta$,
the encoding at position $i + \delta$ is a linear function of the one at position $i$ — the
same function for every $i$. With $\omega_j = 1/10000^{2j/d}$, each pair of columns
$(p_{i, 2j}, p_{i, 2j+1})$ is rotated by the angle $\delta\omega_j$:

$$\begin{aligned}
&\begin{bmatrix} \cos(\delta \omega_j) & \sin(\delta \omega_j) \\  -\sin(\delta \omega_j) & \cos(\delta \omega_j) \\ \end{bmatrix}
\begin{bmatrix} p_{i, 2j} \\  p_{i, 2j+1} \\ \end{bmatrix}\\
=&\begin{bmatrix} \cos(\delta \omega_j) \sin(i \omega_j) + \sin(\delta \omega_j) \cos(i \omega_j) \\  -\sin(\delta \omega_j) \sin(i \omega_j) + \cos(\delta \omega_j) \cos(i \omega_j) \\ \end{bmatrix}\\
=&\begin{bmatrix} \sin\left((i+\delta) \omega_j\right) \\  \cos\left((i+\delta) \omega_j\right) \\ \end{bmatrix}\\
=&
\begin{bmatrix} p_{i+\delta, 2j} \\  p_{i+\delta, 2j+1} \\ \end{bmatrix},
\end{aligned}$$

and the $2\times 2$ matrix does not depend on $i$. We check this on our float32 table: apply
the rotation to every row and compare with the row $\delta$ further down. Over the first 60
positions the error is float32 rounding; over the whole table it grows with the position,
because the float32 angle $i\,\omega_j$ itself carries a rounding error proportional to $i$.
A consequence worth seeing: the dot product $\mathbf{p}_i^\top \mathbf{p}_{i+\delta} =
\sum_j \cos(\delta\omega_j)$ depends on $\delta$ only.
  */
  double err_detail, err_all_60 = 0, err_table = 0, dot_err = 0;
  double errs[20];
  {
    const float *T = pos_encoding.P; /* (1000, d) */
    for (int dl = 1; dl <= 20; dl++) {
      errs[dl - 1] = rotation_error(T, 60 + dl, d, dl); /* i < 60 */
      err_all_60 = fmax(err_all_60, errs[dl - 1]);
    }
    const int rows = 60 + delta < 1000 ? 60 : 1000 - delta; /* positions i with i + delta < 1000 */
    err_detail = rotation_error(T, rows + delta, d, delta);
    err_table = rotation_error(T, 1000, d, delta);
    printf("rotation check, delta = %d, positions i < %d: max error %.3g\n", delta, rows,
           err_detail);
    printf("rotation check, delta = 1..20, positions i < 60: max error %.3g\n", err_all_60);
    printf("rotation check, delta = %d, whole table (i + delta < 1000): max error %.3g\n", delta,
           err_table);
    /* p_i . p_{i+delta} against sum_j cos(delta w_j), over the complete pairs */
    double want = 0;
    for (int j = 0; 2 * j + 1 < d; j++) want += cos(delta / pow(10000.0, 2.0 * j / d));
    for (int i = 0; i < rows; i++) {
      double dot = 0;
      for (int c = 0; c < d - (d % 2); c++) dot += (double)T[i * d + c] * T[(i + delta) * d + c];
      dot_err = fmax(dot_err, fabs(dot - want));
    }
    printf("p_i . p_(i+%d) = %.6f for every i < %d (max deviation %.3g)\n", delta, want, rows,
           dot_err);
  }

  /* @program begin */
  {
    Summary *S = summary_new("lab05", args.seed);
    summary_str(S, "device", device_name(tensor_default_device()));
    summary_ints(S, "self_attention_output_shape", sa_shape, 3);
    const char *table_keys[4] = {"architecture", "complexity", "sequential_operations",
                                 "maximum_path_length"};
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 4; c++)
        summary_str(S, summary_path("complexity_table/%d/%s", r, table_keys[c]), table[r][c]);
    summary_int(S, "complexity_example/d", d_ex);
    summary_int(S, "complexity_example/k", k_ex);
    const char *madds[3] = {"cnn_madds", "rnn_madds", "self_attention_madds"};
    const char *paths[4] = {"cnn_path", "dilated_cnn_path", "rnn_path", "self_attention_path"};
    for (int r = 0; r < 4; r++) {
      summary_int(S, summary_path("complexity_example/rows/%d/n", r), ns[r]);
      for (int c = 0; c < 3; c++)
        summary_num(S, summary_path("complexity_example/rows/%d/%s", r, madds[c]), cost[r][c]);
      for (int c = 0; c < 4; c++)
        summary_int(S, summary_path("complexity_example/rows/%d/%s", r, paths[c]), hops[r][c]);
    }
    summary_int(S, "encoding_dim", d);
    summary_int(S, "num_steps", steps);
    for (int c = 0; c < 4; c++) /* column-major: 4 columns of num_steps values */
      summary_floats(S, summary_path("P_cols_6_9/%d", c), cols + c * steps, steps);
    for (int i = 0; i < 8; i++) summary_str(S, summary_path("binary/%d", i), binary[i]);
    summary_int(S, "rotation/delta", delta);
    summary_num(S, "rotation/max_error_first_60", err_detail);
    summary_num(S, "rotation/max_error_whole_table", err_table);
    summary_doubles(S, "rotation/max_error_first_60_by_delta_1_20", errs, 20);
    summary_num(S, "rotation/max_error_first_60_all_deltas", err_all_60);
    summary_num(S, "rotation/dot_product_max_deviation", dot_err);
    summary_write(S, args.out);
  }
  /* @program end */

  /* @program begin */
  free(pos);
  free(cols);
  free(P);
  PositionalEncoding_free(&pos_encoding);
  tensor_shutdown();
  return 0;
}
/* @program end */

/***
## Summary

* In self-attention the queries, keys and values all come from the same sequence; every token
  attends to every token.
* CNNs and self-attention both compute in parallel, and self-attention has the shortest maximum
  path length ($\mathcal{O}(1)$, against $\mathcal{O}(n/k)$ — or $\mathcal{O}(\log_k n)$ dilated
  — for CNNs and $\mathcal{O}(n)$ for RNNs). Its cost grows quadratically with the sequence
  length, which makes very long sequences slow.
* Self-attention ignores order; positional encodings add it back. The sinusoidal encoding gives
  every position a distinct pattern of falling frequencies (absolute position), and shifting by
  $\delta$ is a fixed rotation of each column pair (relative position).

## Exercises

1. Suppose that we design a deep architecture to represent a sequence by stacking self-attention
   layers with positional encoding. What could the issues be? (Think of the $n^2$ cost per layer,
   of the encoding being added only once at the bottom, and of training stability; lab 06 adds
   residual connections and layer normalization for the last.)
2. Can you design a learnable positional encoding method? (Challenge: an `Embedding` of
   `max_len` rows added instead of $\mathbf{P}$ — lab 07's ViT does exactly this; compare the
   two in lab 06.)
3. Can we assign different learned embeddings according to the different offsets between queries
   and keys that are compared in self-attention? Hint: you may refer to relative position
   embeddings (Shaw et al., 2018; Huang et al., 2018). (Challenge: add a learned bias $b_{j-i}$,
   clipped to $|j - i| \le 16$, to the attention scores before the softmax.)
4. Run with `--encoding-dim 33` and `--delta 100`. Which column has no cosine partner, and how
   does the rotation error over the whole table change with $\delta$ and with the position?
*/
