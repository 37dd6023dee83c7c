/***
# Multi-Head Attention

One attention pooling looks at the key–value pairs in one way: a single set of projections, a
single similarity, a single weighted average. In practice we want a model that can attend to
several things at once — nearby tokens and distant ones, syntax and meaning — and combine what
it finds. *Multi-head attention* does this by running $h$ attention poolings side by side, each
on its own learned linear projection of the queries, keys and values, and mixing their outputs
with one more linear layer. Each of the $h$ poolings is a *head*.

This lab builds `MultiHeadAttention` on the scaled dot-product attention of lab 02 and shows
the trick that makes it fast: the heads are not computed in a loop but folded into the batch
dimension, so one batched attention call serves all of them. Then it looks at what each head
attends to.

Run it with `make lab04 && ./lab04` (flags: `./lab04 --help`). Figures go to `out/lab04/`
(or `--out DIR`), together with `summary.json`.
@program
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/cli.h"
#include "../../common/exercise.h"
#include "../../common/gemm.h"
#include "../../common/summary.h"
#include "../../common/nn.h"
#include "../../common/plot.h"
#include "../../common/rng.h"
#include "../../common/util.h"
#include "../../cuda/profile.h"
#include "lab04/lab04.h"

/* The same layer computed one head at a time: slice head h's columns out of W_q, W_k, W_v,
 * attend, concatenate the heads, apply W_o. Slow on purpose; it is the definition. Biases are
 * sliced the same way when the layer has them. */
static Tensor *mha_loop_over_heads(MultiHeadAttention *m, Tensor *queries, Tensor *keys,
                                   Tensor *values, Tensor *valid_lens) {
  const int H = m->num_heads, d = m->num_hiddens / H;
  Tensor *heads[64];
  if (H > 64) die("lab04: the loop over heads handles at most 64 heads, got %d", H);
  for (int h = 0; h < H; h++) {
    const Linear *lin[3] = {&m->W_q, &m->W_k, &m->W_v};
    Tensor *in[3] = {queries, keys, values}, *proj[3];
    for (int p = 0; p < 3; p++) {
      Tensor *W = t_slice(lin[p]->W, 1, h * d, (h + 1) * d);              /* (in, d) */
      Tensor *b = lin[p]->b ? t_slice(lin[p]->b, 0, h * d, (h + 1) * d) : NULL; /* (d) */
      proj[p] = t_linear(in[p], W, b);                                    /* (B, n, d) */
    }
    DotProductAttention att;
    DotProductAttention_init(&att, 0.0f);
    heads[h] = NEED(DotProductAttention_forward(&att, proj[0], proj[1], proj[2], valid_lens,
                                                false),
                    "the loop over heads");                               /* (B, queries, d) */
  }
  return Linear_forward(&m->W_o, t_concat(heads, H, 2));                  /* (B, queries, h) */
}

/* The permute {0, 2, 1, 3} at lab 04's keys (2, 6, 5, 20), lab 06's (64, 10, 4, 8) and a plain
 * transpose (d = 1), by exercise 4.4's kernel, 4.5's and the kit's own: the emulator's memory
 * counters of each, one row per kernel, and the reference solutions' (solutions/lab04/
 * permute_kernel.cu), as its build printed them (tests/suites/cuda_labs.sh checks that the
 * solutions' rows still print these numbers). Prints why not where there are no counters. */
static void permute_counters_table(void) {
  enum { SHAPES = 3, ROWS = 5 };
  static const int shapes[SHAPES][4] = {{2, 6, 5, 20}, {64, 10, 4, 8}, {4, 64, 64, 1}};
  static const char *names[ROWS] = {"4.4 yours: a thread per row", "4.4 reference",
                                    "4.5 yours: tiled", "4.5 reference",
                                    "kit: a thread per element"};
  static const int which[ROWS] = {PERMUTE_BY_NAIVE, -1, PERMUTE_BY_TILED, -1, PERMUTE_BY_KIT};
  /* the reference rows: ld and st sectors per request, KB moved, shared replays per request
   * (-1: no shared memory) */
  static const double ref[SHAPES][2][4] = {
      {{30.00, 30.00, 75.0, -1}, {3.00, 3.75, 10.3, 0.00}},
      {{32.00, 32.00, 1280.0, -1}, {4.00, 3.33, 160.0, 0.00}},
      {{4.00, 32.00, 576.0, -1}, {4.00, 4.00, 128.0, 0.00}}};
  printf("permute {0, 2, 1, 3}, x (A, B, C, D) -> y (A, C, B, D), on the emulated device:\n");
  printf("  %-16s %-28s %9s %9s %9s %14s\n", "(A, B, C, D)", "kernel", "ld sect/", "st sect/",
         "KB moved", "shared memory");
  printf("  %-16s %-28s %9s %9s %9s %14s\n", "", "", "request", "request", "", "replays/req");
  for (int s = 0; s < SHAPES; s++) {
    const int *p = shapes[s];
    char shape[32];
    snprintf(shape, sizeof shape, "(%d, %d, %d, %d)", p[0], p[1], p[2], p[3]);
    for (int k = 0; k < ROWS; k++) {
      double v[4];
      if (which[k] < 0) {
        memcpy(v, ref[s][k / 2], sizeof v);
      } else {
        CudaKernelProfile c;
        int rc = cuda_permute0213_profile((PermuteKernel)which[k], p[0], p[1], p[2], p[3], &c);
        if (rc == -2) {
          printf("  (no memory counters in this build: they come from the CUDA emulator, "
                 "make lab04-emu && build/emu-bin/lab04 --device cuda)\n");
          return;
        }
        if (rc != 0) {
          printf("  %-16s %-28s   (not implemented yet)\n", shape, names[k]);
          continue;
        }
        v[0] = c.ld_req ? (double)c.ld_sectors / c.ld_req : 0;
        v[1] = c.st_req ? (double)c.st_sectors / c.st_req : 0;
        v[2] = 32.0 * (double)(c.ld_sectors + c.st_sectors) / 1024;
        v[3] = c.sh_req ? (double)(c.sh_wavefronts - c.sh_req) / c.sh_req : -1;
      }
      char shm[32] = "-";
      if (v[3] >= 0) snprintf(shm, sizeof shm, "%.2f", v[3]);
      printf("  %-16s %-28s %9.2f %9.2f %9.1f %14s\n", shape, names[k], v[0], v[1], v[2], shm);
    }
  }
}

/* What one forward of a way costs in ops (entries on the autograd tape, views included: on a GPU
 * each computing op is at least one kernel launch) and in matrix-product FLOPs (gemm_flops). */
typedef struct Cost {
  long ops;
  double gflop;
} Cost;

static Cost count_forward(MultiHeadAttention *m, bool loop, Tensor *x, Tensor *valid_lens) {
  const size_t t0 = ag_tape_len();
  const double f0 = gemm_flops();
  if (loop)
    mha_loop_over_heads(m, x, x, x, valid_lens);
  else
    MultiHeadAttention_forward(m, x, x, x, valid_lens, false);
  return (Cost){(long)(ag_tape_len() - t0), (gemm_flops() - f0) * 1e-9};
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile of n sorted values (linear between neighbours). */
static double quantile(const double *v, int n, double q) {
  const double pos = q * (n - 1);
  const int i = (int)pos;
  return i + 1 < n ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[n - 1];
}

static double max_abs_diff(const Tensor *a, const Tensor *b) {
  const float *ah = host_read(a), *bh = host_read(b);
  double m = 0;
  for (long i = 0; i < a->size; i++) m = fmax(m, fabs((double)ah[i] - bh[i]));
  return m;
}

int main(int argc, char **argv) {
  LabArgs args;
  int demo_heads = 4, bench_reps = 0;
  bool no_bench = false;
  const CliOpt extra[] = {
      {"--heads", OPT_INT, &demo_heads,
       "heads of the per-head heatmap example (1, 2, 4, 8 or 16; 16 hiddens are split among "
       "them)"},
      {"--bench-reps", OPT_INT, &bench_reps,
       "also time the two ways, N forwards each, and print the median and quartiles (default "
       "0: no timing)"},
      {"--no-bench", OPT_FLAG, &no_bench, "skip the loop-vs-parallel counts and timing"},
      {NULL, 0, NULL, NULL},
  };
  cli_parse(argc, argv, "lab04", "multi-head attention: parallel heads, shapes, per-head weights",
            &args, extra);
  if (demo_heads < 1 || demo_heads > 16 || 16 % demo_heads != 0)
    die("lab04: --heads must divide the example's 16 hiddens (1, 2, 4, 8 or 16), got %d",
        demo_heads);
  if (bench_reps < 0 || bench_reps > 100000)
    die("lab04: --bench-reps must be in 0..100000 (0: no timing), got %d", bench_reps);

  /***
## Model

Given a query $\mathbf{q} \in \mathbb{R}^{d_q}$, a key $\mathbf{k} \in \mathbb{R}^{d_k}$ and a
value $\mathbf{v} \in \mathbb{R}^{d_v}$, head $i = 1, \ldots, h$ computes

$$\mathbf{h}_i = f(\mathbf W_i^{(q)}\mathbf q, \mathbf W_i^{(k)}\mathbf k,\mathbf W_i^{(v)}\mathbf v) \in \mathbb R^{p_v},$$

with learnable $\mathbf W_i^{(q)}\in\mathbb R^{p_q\times d_q}$,
$\mathbf W_i^{(k)}\in\mathbb R^{p_k\times d_k}$ and
$\mathbf W_i^{(v)}\in\mathbb R^{p_v\times d_v}$, and an attention pooling $f$ — here scaled
dot-product attention. The heads are concatenated and mixed by one more learnable matrix
$\mathbf W_o\in\mathbb R^{p_o\times h p_v}$:

$$\mathbf W_o \begin{bmatrix}\mathbf h_1\\\vdots\\\mathbf h_h\end{bmatrix} \in \mathbb{R}^{p_o}.$$

Each head is free to learn its own notion of similarity in its own subspace; $\mathbf W_o$
decides how to combine what they found.

## Implementation

We choose $p_q = p_k = p_v = p_o / h$, the book's setting: with `num_hiddens` $= p_o$, every
head works on `num_hiddens / num_heads` features, so $h$ heads cost about as much as one head of
full width. Then the $h$ projections $\mathbf W_1^{(q)}, \ldots, \mathbf W_h^{(q)}$ stack into
one `num_hiddens`-wide linear layer `W_q`, whose output columns $i p_q, \ldots, (i+1)p_q - 1$
belong to head $i$; the same for keys and values.

To run all heads at once, `transpose_qkv` (exercise 4.1, `labs/lab04/transpose_qkv.c`) reshapes
the projected `(batch, n, num_hiddens)` tensor to `(batch, n, num_heads, num_hiddens/num_heads)`,
swaps the two middle axes and merges batch and heads:
`(batch * num_heads, n, num_hiddens/num_heads)`. Row $b h + i$ is head $i$ of example $b$.
Scaled dot-product attention only ever pairs a row of queries with the same row of keys, so the
heads never mix. `transpose_output` (exercise 4.2) undoes the move, which places the heads side
by side again: exactly the concatenation $[\mathbf h_1; \ldots; \mathbf h_h]$. The valid lengths
of example $b$ apply to all its heads, so each is repeated `num_heads` times in place
(`t_repeat_interleave`, $[3, 2] \to [3, 3, 3, 3, 3, 2, 2, 2, 2, 2]$ for five heads). The forward
pass is exercise 4.3 (`labs/lab04/multihead_attention.c`); `MultiHeadAttention_init`
(`chapters/04_multihead_attention/multihead.c`) creates the four linear layers.

@code labs/lab04/transpose_qkv.c transpose_qkv transpose_output
@code labs/lab04/lab04.h MultiHeadAttention
@code chapters/04_multihead_attention/multihead.c MultiHeadAttention_init
@code labs/lab04/multihead_attention.c MultiHeadAttention_forward

First the two reshapes on a small tensor: two examples, three positions, $4 \times 3$ features.
  */
  /* @program begin */
  Summary *S = summary_new("lab04", args.seed); /* summary.json, written at the end */
  summary_str(S, "device", device_name(tensor_default_device()));
  /* @program end */
  Tensor *tq_in, *tq_out;
  {
    float h[72];
    for (int i = 0; i < 72; i++) h[i] = (float)i;
    tq_in = tensor_from(3, (int[]){2, 3, 12}, h); /* (batch, n, num_hiddens) */
    tq_out = NEED(transpose_qkv(tq_in, 4), "the transpose_qkv demo"); /* (8, 3, 3) */
    print_shape("transpose_qkv(X (2, 3, 12), 4 heads)", tq_out);
    summary_shape(S, "transpose_qkv_shape", tq_out); /* @program */
    Tensor *back = NEED(transpose_output(tq_out, 4), "the transpose_output demo");
    print_shape("transpose_output(...)", back);
    printf("round trip exact: %s\n", max_abs_diff(back, tq_in) == 0 ? "yes" : "NO");
    printf("head 1 of example 0 (row 1) takes columns 3..5 of X[0]:\n");
    tensor_print(t_slice(tq_out, 0, 1, 2), NULL);
  }

  /***
### The book's check

`num_hiddens` $= 100$, five heads, a batch of two with four queries and six key–value pairs,
valid lengths $[3, 2]$. Queries, keys and values are all ones, and keys double as values. The
output keeps the query shape: `(batch_size, num_queries, num_hiddens)`.
  */
  ParamSet ps = {0};
  MultiHeadAttention attention;
  const int num_hiddens = 100, num_heads = 5;
  const int batch_size = 2, num_queries = 4, num_kvpairs = 6;
  MultiHeadAttention_init(&attention, &ps, "attention", num_hiddens, num_hiddens, num_hiddens,
                          num_hiddens, num_heads, 0.5f, false);
  int out_shape[3], w_shape[3];
  {
    Tensor *valid_lens = tensor_from(1, (int[]){2}, (float[]){3, 2});            /* (batch) */
    Tensor *X = tensor_full(3, (int[]){batch_size, num_queries, num_hiddens}, 1.0f);
    Tensor *Y = tensor_full(3, (int[]){batch_size, num_kvpairs, num_hiddens}, 1.0f);
    Tensor *out = NEED(MultiHeadAttention_forward(&attention, X, Y, Y, valid_lens, false),
                       "the book's shape check");                /* (batch, queries, hiddens) */
    print_shape("output shape", out);
    print_shape("attention weights shape", attention.attention.attention_weights);
    if (!(out->ndim == 3 && out->shape[0] == batch_size && out->shape[1] == num_queries &&
          out->shape[2] == num_hiddens))
      die("lab04: expected output (2, 4, 100)");
    memcpy(out_shape, out->shape, sizeof out_shape);
    memcpy(w_shape, attention.attention.attention_weights->shape, sizeof w_shape);
    printf("parameters: %ld (W_q, W_k, W_v, W_o: 100 x 100 each, no bias)\n",
           paramset_count(&ps));
    ag_step_reset();
  }

  /***
The weights have one row of `num_queries` per example *and head*: $2 \times 5 = 10$.

### Parallel heads are the same as a loop over heads

Folding heads into the batch is an implementation trick, not a different model. To convince
ourselves, we compute the same layer the slow way — slice head $i$'s columns out of
$\mathbf W_q, \mathbf W_k, \mathbf W_v$, attend, concatenate, apply $\mathbf W_o$ — on random
inputs, and compare. Then we count what each way does on a larger, transformer-sized input
(batch 32, 20 queries and keys, 256 hiddens, 8 heads): the ops it runs and the floating-point
operations of its matrix products.
  */
  double loop_diff;
  Cost cost_par = {0}, cost_loop = {0};
  double t_par[3] = {NAN, NAN, NAN}, t_loop[3] = {NAN, NAN, NAN}; /* quartiles, ms */
  {
    ag_set_grad_enabled(false);
    Tensor *q = tensor_randn(3, (int[]){batch_size, num_queries, num_hiddens}, 0, 1);
    Tensor *kv = tensor_randn(3, (int[]){batch_size, num_kvpairs, num_hiddens}, 0, 1);
    Tensor *valid_lens = tensor_from(1, (int[]){2}, (float[]){3, 2});
    Tensor *a = MultiHeadAttention_forward(&attention, q, kv, kv, valid_lens, false);
    Tensor *b = mha_loop_over_heads(&attention, q, kv, kv, valid_lens);
    loop_diff = max_abs_diff(a, b);
    printf("max |parallel - loop over heads| = %.3g\n", loop_diff);
    ag_step_reset();
    ag_set_grad_enabled(true);

    if (!no_bench) {
      ParamSet ps2 = {0};
      MultiHeadAttention big;
      MultiHeadAttention_init(&big, &ps2, "big", 256, 256, 256, 256, 8, 0.0f, false);
      /* The input lives in host memory; each forward copies it into a fresh arena. */
      Tensor *x0 = tensor_randn(3, (int[]){32, 20, 256}, 0, 1);
      float *xs = xmalloc(sizeof(float) * (size_t)x0->size);
      tensor_to_host(x0, xs);
      ag_step_reset();
#define BENCH_X() tensor_from(3, (int[]){32, 20, 256}, xs) /* (batch, n, hiddens) */
#define BENCH_VL() tensor_full(1, (int[]){32}, 20.0f)     /* (batch) */
      /* with gradients on, so that the tape records every op of the forward */
      cost_par = count_forward(&big, false, BENCH_X(), BENCH_VL());
      ag_step_reset();
      cost_loop = count_forward(&big, true, BENCH_X(), BENCH_VL());
      ag_step_reset();
      printf("forward (32, 20, 256), 8 heads: parallel %ld ops, %.4f GFLOP in matrix products; "
             "loop over heads %ld ops, %.4f GFLOP\n",
             cost_par.ops, cost_par.gflop, cost_loop.ops, cost_loop.gflop);
      if (bench_reps > 0) {
        /* one forward at a time, the two ways alternating, so that a load that comes and goes
         * on a shared machine hits both alike; the median and quartiles, not the mean */
        ag_set_grad_enabled(false);
        double *tp = xmalloc(sizeof(double) * (size_t)bench_reps);
        double *tl = xmalloc(sizeof(double) * (size_t)bench_reps);
        for (int r = -1; r < bench_reps; r++) { /* r = -1 warms caches and the arena */
          double t0 = now_seconds();
          Tensor *x = BENCH_X();
          MultiHeadAttention_forward(&big, x, x, x, BENCH_VL(), false);
          ag_step_reset();
          double t1 = now_seconds();
          x = BENCH_X();
          mha_loop_over_heads(&big, x, x, x, BENCH_VL());
          ag_step_reset();
          double t2 = now_seconds();
          if (r >= 0) tp[r] = 1e3 * (t1 - t0), tl[r] = 1e3 * (t2 - t1);
        }
        qsort(tp, (size_t)bench_reps, sizeof *tp, cmp_double);
        qsort(tl, (size_t)bench_reps, sizeof *tl, cmp_double);
        for (int k = 0; k < 3; k++) {
          t_par[k] = quantile(tp, bench_reps, 0.25 * (k + 1));
          t_loop[k] = quantile(tl, bench_reps, 0.25 * (k + 1));
        }
        printf("timed, %d forwards each: parallel median %.2f ms (quartiles %.2f-%.2f), loop "
               "over heads median %.2f ms (%.2f-%.2f)\n",
               bench_reps, t_par[1], t_par[0], t_par[2], t_loop[1], t_loop[0], t_loop[2]);
        free(tp), free(tl); /* @program */
        ag_set_grad_enabled(true);
      }
#undef BENCH_X
#undef BENCH_VL
      /* @program begin */
      free(xs);
      paramset_free(&ps2);
      /* @program end */
    }
  }

  /***
The two agree — typically bit for bit, because every output element is the same dot product
summed in the same order either way. They also do the same arithmetic: the matrix products
add up to the same FLOPs. What differs is how it is cut up. The batched call runs one
attention over `batch * num_heads` rows instead of `num_heads` attentions over `batch` rows,
and three projections of full width instead of `3 * num_heads` thin ones: about a quarter of
the ops, each $h$ times larger. (It pays for that with the copies `transpose_qkv` and
`transpose_output` make of Q, K, V and the output.) On a GPU, where every op is at least one
kernel launch costing a few microseconds whatever its size, the op count is what matters; on a
CPU at this size the two take about the same time. These counts are the same on every machine;
times are not — `--bench-reps 200` times both ways, alternating, and prints each one's median
and quartiles, the spread saying how far this run's numbers can be trusted.

## What the Heads Attend To

The book stops at the shape check. Let us look inside: a layer with 16 hiddens and 4 heads
(`--heads` changes that), random weights from the seed, two examples of 8 random key–value
pairs (with valid lengths 8 and 5) and 6 queries each. Below, one panel per head and one row per
example; each panel is the $6 \times 8$ matrix of attention weights of that head — rows are
queries, columns keys.
  */
  const int dq = 6, dk = 8, dh = 16;
  float *demo_w = NULL;
  {
    ParamSet ps3 = {0};
    MultiHeadAttention small;
    MultiHeadAttention_init(&small, &ps3, "small", dh, dh, dh, dh, demo_heads, 0.0f, false);
    ag_set_grad_enabled(false);
    Tensor *q = tensor_randn(3, (int[]){2, dq, dh}, 0, 1); /* (2, 6, 16) */
    Tensor *k = tensor_randn(3, (int[]){2, dk, dh}, 0, 1); /* (2, 8, 16) */
    Tensor *vl = tensor_from(1, (int[]){2}, (float[]){8, 5});
    NEED(MultiHeadAttention_forward(&small, q, k, k, vl, false), "the per-head heatmaps");
    Tensor *w = small.attention.attention_weights; /* (2 * heads, 6, 8) */
    demo_w = xmalloc(sizeof(float) * (size_t)w->size);
    tensor_to_host(w, demo_w);
    HeatMap maps[2 * 16];
    char titles[2 * 16][48];
    for (int b = 0; b < 2; b++)
      for (int h = 0; h < demo_heads; h++) {
        int r = b * demo_heads + h; /* row of the folded batch */
        snprintf(titles[r], sizeof titles[r], "example %d, head %d", b + 1, h + 1);
        maps[r] = (HeatMap){titles[r], demo_w + (long)r * dq * dk, dq, dk};
      }
    char *base = path_join(args.out, "heads");
    figure_saved(base, plot_heatmaps(base, maps, 2, demo_heads, "Keys", "Queries", "Reds",
                                     demo_heads > 4 ? 250 * demo_heads : 0, 0));
    free(base); /* @program */
    /* Where does each head look? The most-attended key of each query. */
    for (int b = 0; b < 2; b++)
      for (int h = 0; h < demo_heads; h++) {
        printf("example %d, head %d: argmax key per query:", b + 1, h + 1);
        for (int i = 0; i < dq; i++) {
          const float *row = demo_w + ((long)(b * demo_heads + h) * dq + i) * dk;
          int best = 0;
          for (int j = 1; j < dk; j++) best = row[j] > row[best] ? j : best;
          printf(" %d", best);
        }
        printf("\n");
      }
    ag_set_grad_enabled(true);
    ag_step_reset();
    paramset_free(&ps3); /* @program */
  }

  /***
Even untrained, the heads differ: every head compares queries and keys through its own
projection, so it ranks the keys differently. In the second example keys $5$ to $7$ are padding
and get no weight in any head — the valid lengths were repeated for every head. Training shapes
these differences into useful specializations; lab 06 draws the heads of a trained Transformer.
  */
  /***
## The permute as a CUDA kernel (exercises 4.4 and 4.5)

On a GPU, `transpose_qkv`'s permute is a kernel of its own, run for the queries, keys and
values of every attention call, and `transpose_output`'s is the same permute the other way:
$x$ of shape $(A, B, C, D)$ becomes $y$ of shape $(A, C, B, D)$, $y_{acbj} = x_{abcj}$ (batch,
steps, heads, $d$ = `num_hiddens / num_heads`). It computes nothing; its whole cost is moving
memory, and how fast a GPU moves memory depends on *which* addresses the threads touch
together. Exercises 4.4 and 4.5 (`labs/lab04/permute_kernel.cu`) write it twice, and with
`--device cuda` the kit runs the student's kernel for this permute (the tiled one once it is
done) in every lab.

**Coalescing.** A GPU runs threads in *warps* of 32 that execute each instruction together. A
load or store of a warp is one *request*, and the memory system serves it in *sectors* of 32
contiguous, aligned bytes. 32 lanes reading 32 consecutive floats touch 128 bytes: 4 sectors,
the ideal. 32 lanes reading floats that lie 32 bytes or more apart touch 32 sectors, of which
they use 4 bytes each: eight times the traffic for the same data. Whether a kernel's accesses
are *coalesced* is decided by how its thread index maps to addresses. Here is what three
kernels do, counted by the emulator at lab 04's keys, lab 06's shape and a plain transpose
($d = 1$), as `build/emu-bin/lab04 --device cuda` prints it at the end of this lab (with the
solutions; with your kernels in `labs/`, the "yours" rows are yours):

```text
permute {0, 2, 1, 3}, x (A, B, C, D) -> y (A, C, B, D), on the emulated device:
  (A, B, C, D)     kernel                        ld sect/  st sect/  KB moved  shared memory
                                                  request   request              replays/req
  (2, 6, 5, 20)    4.4 yours: a thread per row      30.00     30.00      75.0              -
  (2, 6, 5, 20)    4.4 reference                    30.00     30.00      75.0              -
  (2, 6, 5, 20)    4.5 yours: tiled                  3.00      3.75      10.3           0.00
  (2, 6, 5, 20)    4.5 reference                     3.00      3.75      10.3           0.00
  (2, 6, 5, 20)    kit: a thread per element         5.05      3.95      10.7              -
  (64, 10, 4, 8)   4.4 yours: a thread per row      32.00     32.00    1280.0              -
  (64, 10, 4, 8)   4.4 reference                    32.00     32.00    1280.0              -
  (64, 10, 4, 8)   4.5 yours: tiled                  4.00      3.33     160.0           0.00
  (64, 10, 4, 8)   4.5 reference                     4.00      3.33     160.0           0.00
  (64, 10, 4, 8)   kit: a thread per element         4.00      4.00     160.0              -
  (4, 64, 64, 1)   4.4 yours: a thread per row       4.00     32.00     576.0              -
  (4, 64, 64, 1)   4.4 reference                     4.00     32.00     576.0              -
  (4, 64, 64, 1)   4.5 yours: tiled                  4.00      4.00     128.0           0.00
  (4, 64, 64, 1)   4.5 reference                     4.00      4.00     128.0           0.00
  (4, 64, 64, 1)   kit: a thread per element        32.00      4.00     576.0              -
```

**4.4, the naive kernel: one thread per row.** The first kernel a C programmer writes is the CPU
loop with its outer loops made parallel: thread $r$ takes row $(a, b, c)$ of $x$ and copies its
$D$ floats to row $(a, c, b)$ of $y$. It is correct, and its lanes are one row apart: at each
$j$ the 32 lanes read 32 floats $D$ apart and write 32 floats $BD$ apart. For $D \ge 8$ each
float sits in a sector of its own: 32 sectors a request, loads and stores (at lab 06's shape
it moves 1280 KB to permute 80 KB).

@code labs/lab04/permute_kernel.cu permute0213_naive_kernel?

**A thread per element.** Give consecutive threads consecutive floats of $y$ instead, and the
stores are coalesced. Here is the point to be honest about: `transpose_qkv` keeps $d$ contiguous
on *both* sides, so the reads come in runs of $d$ consecutive floats too. At lab 06's $d = 8$ a
run is exactly one sector, and this simple kernel (the kit's own, "kit" in the table) is already
at the ideal, 4 and 4; at lab 04's $d = 20$ the 80-byte runs straddle sectors (5.05 on loads).
A thread per element is only bad when $d$ is small: at $d = 1$ the permute is a plain
transpose of steps and heads, and its reads stride by $C$ floats: 32 sectors a request.

**4.5, the tile.** To make both sides coalesced whatever $d$, a block stages a *tile* in shared
memory, the small on-chip memory its threads share: $T_B$ steps by $T_C$ heads of one batch row,
with $T_C = \lceil 32 / d \rceil$ so that a row of the tile, $T_C d$ contiguous floats of $x$,
fills a warp's request, and $T_B$ steps so that a tile holds about 1024 floats. The warps read
the tile row by row (lanes on consecutive floats of $x$), meet at `__syncthreads()`, and write
it head by head: head $c$'s part of the tile is $T_B d$ contiguous floats of $y$. Without the
barrier a warp would read rows another warp has not written yet: on a GPU, garbage or the
previous tile; the emulator stops the kernel there (initcheck: shared memory no thread of the
block wrote). A second barrier keeps the next tile from overwriting one still being read. At $d = 1$ this turns 576 KB into 128 KB. At lab 04's shape it moves 10.3 KB against the
thread-per-element kernel's 10.7 (its 3.00 sectors a load request: a tile row of 40 floats is a
request of 32 lanes and one of 8). At lab 06's it moves what the thread-per-element kernel
moves, 160 KB: there the tile buys nothing, which is why the kit's own permute has none.

@code labs/lab04/permute_kernel.cu permute0213_tiled_kernel?

**Bank conflicts.** Shared memory is split into 32 *banks* of 4-byte words (word $w$ in bank
$w \bmod 32$); lanes of a request that read different words of one bank wait for each other,
one extra pass (a *replay*) per word. Writing a head, consecutive lanes read tile elements
$(b, j)$ in $y$'s order, which in the tile are one row apart every $d$ lanes. Stored densely
at lab 06's shape a tile row is $4 \times 8 = 32$ floats, so the lanes of steps $b$ and $b + 1$
hit the same banks: 1.27 replays per shared request over the kernel. The fix is *padding*: rows
$L$ floats apart with $L \equiv d \pmod{32}$ put element $(b, j)$ of a head in bank
$(b d + j + \text{const}) \bmod 32$, consecutive for consecutive lanes: no conflict (the table's
0.00). For $d = 1$ this is the classic $32 \times 33$ transpose tile.

The table's counters are the emulator's (`cuda/README.md`, "The profiler"): sectors per
request of each kernel's loads and stores, the sectors' bytes moved, bank-conflict replays per
shared-memory request. The "reference" rows are the kit's solutions, as the solutions' build
prints them; "yours" are measured on the run, from the kernels the build took (`labs/` or
`solutions/`). On the CPU the lab prints how to get the table:
  */
  if (tensor_default_device() == DEV_CUDA)
    permute_counters_table();
  else
    printf("(the permute kernels' memory counters: make lab04-emu && build/emu-bin/lab04 "
           "--device cuda)\n");

  /* @program begin */
  {
    summary_int(S, "book_check/num_hiddens", num_hiddens);
    summary_int(S, "book_check/num_heads", num_heads);
    summary_ints(S, "book_check/valid_lens", (const int[]){3, 2}, 2);
    summary_ints(S, "book_check/output_shape", out_shape, 3);
    summary_ints(S, "book_check/attention_weights_shape", w_shape, 3);
    summary_int(S, "book_check/parameters", paramset_count(&ps));
    summary_num(S, "max_abs_diff_parallel_vs_loop", loop_diff);
    summary_str(S, "cost/config", "batch 32, 20 queries/keys, 256 hiddens, 8 heads, forward only");
    summary_int(S, "cost/parallel/ops", cost_par.ops);
    summary_num(S, "cost/parallel/gflop", cost_par.gflop);
    summary_int(S, "cost/loop_over_heads/ops", cost_loop.ops);
    summary_num(S, "cost/loop_over_heads/gflop", cost_loop.gflop);
    summary_int(S, "timing_ms/reps", bench_reps);
    summary_floats(S, "timing_ms/parallel_quartiles", (const float[]){(float)t_par[0],
                   (float)t_par[1], (float)t_par[2]}, 3);
    summary_floats(S, "timing_ms/loop_over_heads_quartiles", (const float[]){(float)t_loop[0],
                   (float)t_loop[1], (float)t_loop[2]}, 3);
    summary_int(S, "heads_demo/num_heads", demo_heads);
    summary_int(S, "heads_demo/num_hiddens", dh);
    summary_ints(S, "heads_demo/valid_lens", (const int[]){8, 5}, 2);
    summary_ints(S, "heads_demo/weights_shape", (const int[]){2 * demo_heads, dq, dk}, 3);
    summary_floats(S, "heads_demo/weights", demo_w, 2L * demo_heads * dq * dk);
    summary_write(S, args.out);
  }

  free(demo_w);
  paramset_free(&ps);
  tensor_shutdown();
  return 0;
}
/* @program end */

/***
## Summary

* Multi-head attention runs $h$ attention poolings on $h$ different learned projections of the
  same queries, keys and values, and mixes the concatenated results with $\mathbf W_o$.
* With $p_q = p_k = p_v = p_o/h$ the per-head projections stack into ordinary
  `num_hiddens`-wide linear layers, and the whole layer costs about as much as one full-width
  head.
* The heads run in parallel: `transpose_qkv` folds them into the batch dimension, one batched
  scaled dot-product attention computes them all, and `transpose_output` lays them side by side
  again. Valid lengths are repeated per head. The result is exactly the loop over heads.

## Exercises

1. Visualize the attention weights of multiple heads in this experiment. (Done above for a small
   random layer: run with `--heads 1`, `--heads 2` and `--heads 8`, and other `--seed`s. What
   changes when each head gets fewer features?)
2. Suppose that we have a trained model based on multi-head attention and we want to prune the
   least important attention heads to increase the prediction speed. How can we design
   experiments to measure the importance of an attention head? (Challenge: in lab 06, zero one
   head's slice of the concatenation before $\mathbf W_o$ at evaluation time and measure the
   BLEU drop per head; compare with the average attention entropy of each head.)
3. `mha_loop_over_heads` in this file is the definition; the batched version is what the labs
   use. Count and time both (`--bench-reps 200`) for other shapes (edit the sizes): when does
   the loop catch up, and why? Which of the two numbers would you trust on a shared machine?
4. Our heads split `num_hiddens` among them. What would change (parameters, cost, outputs) if
   every head instead kept the full width $p_q = p_k = p_v = p_o$?
*/
