/***
# The Transformer

Labs 04 and 05 built the parts: multi-head attention, self-attention and positional encoding.
The *Transformer* (Vaswani et al., 2017) is made of nothing else. It drops convolution and
recurrence altogether: an encoder of stacked self-attention blocks reads the source sentence,
and a decoder of stacked blocks, each with self-attention over the target so far and attention
over the encoder's outputs, writes the translation. Because self-attention relates every pair
of positions in one step, the whole target sequence can be trained in parallel — no recurrence
to unroll.

This lab assembles the model from the book's pieces — position-wise FFN, the residual
connection with layer normalization (`AddNorm`), encoder and decoder blocks — checks their
shapes like the book, trains it on the English–French pairs of lab 03, translates, and draws
what its heads attend to. It also fixes two defects of the book's decoder and shows, with
`--d2l-compat`, what they do.

Run it with `make lab06 && ./lab06` (flags: `./lab06 --help`). Figures and `summary.json` go to
`out/lab06/` (or `--out DIR`).

## Model

The encoder is a stack of $n$ identical blocks with two sublayers each: multi-head
self-attention (queries, keys and values all come from the previous block's outputs) and a
position-wise feed-forward network. Around each sublayer sits a residual connection, followed by
layer normalization: for an input $\mathbf x$ and sublayer $\mathrm{sublayer}$, the output is
$\mathrm{LayerNorm}(\mathbf x + \mathrm{sublayer}(\mathbf x))$, which needs every sublayer to
keep the width $d$. The decoder is a stack of blocks with three sublayers: *masked*
self-attention over the target (each position may attend only to itself and earlier positions,
so the model stays autoregressive), encoder–decoder attention (queries from the decoder, keys
and values from the encoder's outputs), and the feed-forward network — again each wrapped in
residual connection and layer normalization.
@program
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/cli.h"
#include "../../common/exercise.h"
#include "../../common/summary.h"
#include "../../common/plot.h"
#include "../../common/nmt_input.h"
#include "../../common/seq2seq.h"
#include "../../common/util.h"
#include "lab03/lab03.h" /* seq2seq_train_step, exercise 3.4 */
#include "transformer.h"

/* Layers × heads heatmap grid of rec (blks, heads, R, C), showing rows [0, rows) and columns
 * [0, cols) of every panel. */
static void heatmap_grid(const char *out, const char *name, const float *rec, int blks,
                         int heads, int R, int C, int rows, int cols, const char *xlabel,
                         const char *ylabel) {
  int n = blks * heads;
  HeatMap *maps = xcalloc((size_t)n, sizeof *maps);
  float *buf = xcalloc((size_t)n * rows * cols, sizeof(float));
  char (*titles)[48] = xcalloc((size_t)n, sizeof *titles);
  for (int l = 0; l < blks; l++)
    for (int h = 0; h < heads; h++) {
      int p = l * heads + h;
      float *dst = buf + (long)p * rows * cols;
      for (int i = 0; i < rows; i++)
        memcpy(dst + (long)i * cols, rec + ((long)p * R + i) * C, sizeof(float) * (size_t)cols);
      snprintf(titles[p], sizeof titles[p], "Head %d", h + 1); /* the book's; rows are blocks */
      maps[p] = (HeatMap){titles[p], dst, rows, cols};
    }
  char *base = path_join(out, name);
  figure_saved(base, plot_heatmaps(base, maps, blks, heads, xlabel, ylabel, "Reds",
                                   240 * heads + 140, 0));
  free(base), free(titles), free(buf), free(maps);
}

/* Largest masked (must-be-zero) entry of a recorded decoder self-attention: key j > query i. */
static double max_future_weight(const TransformerAttnRecord *r, int steps) {
  double m = 0;
  for (int p = 0; p < r->blks * r->heads; p++)
    for (int i = 0; i < steps; i++)
      for (int j = i + 1; j < r->max_steps; j++)
        m = fmax(m, fabs(r->dec_self[((long)p * r->max_steps + i) * r->max_steps + j]));
  return m;
}

typedef struct Extra {
  const char *preset;
  const TransformerConfig *cfg;
  bool d2l_compat;
  double sec_per_epoch, full_vs_incremental, compat_eval_leak;
  Seq2SeqHeldout heldout;
  long params;
  const char *figs[3];
} Extra;

/* lab06's own summary.json keys, after the shared ones. */
static void record_extra(Summary *S, const Extra *e) {
  summary_str(S, "model", "Transformer");
  summary_int(S, "config/num_hiddens", e->cfg->num_hiddens);
  summary_int(S, "config/ffn_num_hiddens", e->cfg->ffn_num_hiddens);
  summary_int(S, "config/num_heads", e->cfg->num_heads);
  summary_int(S, "config/num_blks", e->cfg->num_blks);
  summary_num(S, "config/dropout", e->cfg->dropout);
  summary_bool(S, "d2l_compat", e->d2l_compat);
  summary_int(S, "parameters", e->params);
  summary_num(S, "seconds_per_epoch", e->sec_per_epoch);
  seq2seq_heldout_record(S, &e->heldout);
  summary_num(S, "max_abs_diff_full_vs_incremental", e->full_vs_incremental);
  summary_num(S, "compat_eval_future_dependence", e->compat_eval_leak);
  summary_ints(S, "figures", NULL, 0); /* [] when none was drawn */
  for (int i = 0, k = 0; i < 3; i++)
    if (e->figs[i]) summary_str(S, summary_path("figures/%d", k++), e->figs[i]);
}

/* Logits of a teacher-forced evaluation pass over (1, T) target ids `tgt` for source `src`, and
 * the same with the last target token changed: how much do the earlier positions move? With a
 * causal mask: not at all. */
static double future_dependence(Transformer *t, const NmtData *d) {
  const int T = d->num_steps;
  ag_set_grad_enabled(false);
  float *xh = arena_alloc(sizeof(float) * (size_t)T), vh = (float)d->src_valid[0];
  float *y1 = arena_alloc(sizeof(float) * (size_t)T), *y2 = arena_alloc(sizeof(float) * (size_t)T);
  for (int j = 0; j < T; j++) xh[j] = (float)d->src[j];
  for (int j = 0; j < T; j++) y1[j] = y2[j] = (float)d->tgt[j];
  y2[T - 1] = (float)((d->tgt[T - 1] + 7) % d->tgt_vocab->size); /* change the future */
  Tensor *X = tensor_from(2, (int[]){1, T}, xh), *vl = tensor_from(1, (int[]){1}, &vh);
  Tensor *Y1 = tensor_from(2, (int[]){1, T}, y1), *Y2 = tensor_from(2, (int[]){1, T}, y2);
  Tensor *a = NEED(Transformer_forward(t, X, vl, Y1, false), "the Transformer");
  Tensor *b = NEED(Transformer_forward(t, X, vl, Y2, false), "the Transformer");
  const int V = d->tgt_vocab->size;
  const float *ah = host_read(a), *bh = host_read(b);
  double m = 0;
  for (long i = 0; i < (long)(T - 1) * V; i++) m = fmax(m, fabs((double)ah[i] - bh[i]));
  ag_step_reset();
  ag_set_grad_enabled(true);
  return m;
}

/* Parameters of the tensors whose names start with prefix. */
static long params_named(const ParamSet *ps, const char *prefix) {
  long n = 0;
  for (int i = 0; i < ps->n; i++)
    if (ps->items[i]->name && strncmp(ps->items[i]->name, prefix, strlen(prefix)) == 0)
      n += ps->items[i]->size;
  return n;
}

/* --num-blks: each encoder and each decoder block has the parameters the book's classes give
 * it (no biases in attention: 4 d^2 per multi-head attention; the FFN d f + f + f d + d; 2 d
 * per layer norm), and the rest of the model does not depend on the number of blocks. */
static void blocks_check(const ParamSet *ps, const TransformerConfig *c) {
  const long d = c->num_hiddens, f = c->ffn_num_hiddens, ffn = 2 * d * f + f + d;
  const long want_enc = 4 * d * d + ffn + 2 * (2 * d);      /* attention, FFN, 2 AddNorms */
  const long want_dec = 2 * (4 * d * d) + ffn + 3 * (2 * d); /* 2 attentions, FFN, 3 AddNorms */
  bool same = true;
  for (int i = 0; i < c->num_blks; i++) {
    char e[32], dd[32];
    snprintf(e, sizeof e, "encoder.blk%d.", i);
    snprintf(dd, sizeof dd, "decoder.blk%d.", i);
    same = same && params_named(ps, e) == want_enc && params_named(ps, dd) == want_dec;
  }
  const long rest = paramset_count(ps) - c->num_blks * (want_enc + want_dec);
  printf("--num-blks %d: %ld parameters = %ld outside the blocks + %d x (%ld per encoder block "
         "+ %ld per decoder block)%s\n", c->num_blks, paramset_count(ps), rest, c->num_blks,
         want_enc, want_dec, same ? "" : " -- but some block's own tensors differ from that");
}

int main(int argc, char **argv) {
  LabArgs args;
  bool d2l_compat = false, no_heldout = false;
  const char *save = NULL, *load = NULL, *translate = NULL;
  int heldout = 200, threads = 0, num_blks = 2;
  float lr = 0;
  const CliOpt extra[] = {
      {"--d2l-compat", OPT_FLAG, &d2l_compat,
       "the book's decoder: causal mask only in training, every generated token at position 0"},
      {"--save", OPT_STR, &save, "write the trained model to this checkpoint file"},
      {"--load", OPT_STR, &load, "load this checkpoint file instead of training"},
      {"--translate", OPT_STR, &translate, "also translate this English sentence"},
      {"--heldout", OPT_INT, &heldout, "unseen pairs scored by the held-out BLEU-4"},
      {"--no-heldout", OPT_FLAG, &no_heldout, "skip the held-out BLEU-4"},
      {"--lr", OPT_FLOAT, &lr, "Adam learning rate (0: the preset's, 0.005 or 0.001 for d2l-1.0)"},
      {"--num-blks", OPT_INT, &num_blks,
       "encoder and decoder blocks (default 2, both presets; exercise 1: a deeper Transformer)"},
      {"--threads", OPT_INT, &threads,
       "OpenMP threads (default 0: the preset's; where two run, the two halves of each batch "
       "train side by side, one thread each; 1: everything on one thread)"},
      {NULL, 0, NULL, NULL},
  };
  static const char *const presets[] = {"d2l-0.17", "d2l-1.0", NULL};
  cli_lab_info(&(CliLabInfo){presets, "the book's two editions (see the chapter text)", 1,
                             INT_MAX, SEQ2SEQ_EPOCHS_WHY, 0});
  cli_parse(argc, argv, "lab06", "the Transformer: blocks, training on English-French, heads",
            &args, extra);
  cli_check_output_file("--save", save); /* before training, not after */
  if (heldout < 1) die("lab06: --heldout must be at least 1, got %d", heldout);
  if (lr < 0) die("lab06: --lr must be positive (or 0 for the preset's), got %g", (double)lr);
  if (threads < 0) die("lab06: --threads must be at least 0 (0: the preset's), got %d", threads);
  if (num_blks < 1 || num_blks > TRANSFORMER_MAX_BLKS)
    die("lab06: --num-blks must be between 1 and %d, got %d", TRANSFORMER_MAX_BLKS, num_blks);
  NmtConfig ncfg;
  if (nmt_preset(args.preset, &ncfg) != 0)
    die("lab06: unknown --preset '%s'; use d2l-0.17 (the default) or d2l-1.0", args.preset);
  const bool d2l10 = ncfg.preset == NMT_D2L_10;
  seq2seq_set_threads(threads, d2l10);

  /***
## Positionwise Feed-Forward Networks

The feed-forward network transforms the representation at every position with the same
two-layer MLP — "position-wise" because the positions never mix here (that is attention's job):

$$\mathrm{FFN}(\mathbf x) = \mathbf W_2\, \mathrm{ReLU}(\mathbf W_1 \mathbf x + \mathbf b_1) + \mathbf b_2 .$$

An input of shape (batch size, number of time steps, $d$) becomes (batch size, number of time
steps, `ffn_num_outputs`). The forward pass is exercise 6.1 (`labs/lab06/ffn.c`):

@code labs/lab06/lab06.h PositionWiseFFN
@code labs/lab06/ffn.c PositionWiseFFN_forward

Since the same weights apply at every position, identical inputs at all positions give
identical outputs — the book's check with a $(2, 3, 4)$ tensor of ones and an FFN with 4 hidden
units and 8 outputs:
  */
  ParamSet demo_ps = {0};
  {
    PositionWiseFFN ffn;
    PositionWiseFFN_init(&ffn, &demo_ps, "demo.ffn", 4, 4, 8);
    Tensor *X = tensor_full(3, (int[]){2, 3, 4}, 1.0f);           /* (2, 3, 4) */
    Tensor *Y = NEED(PositionWiseFFN_forward(&ffn, X), "the FFN demo"); /* (2, 3, 8) */
    print_shape("ffn(ones (2, 3, 4)) shape", Y);
    tensor_print(t_slice(Y, 0, 0, 1), "ffn(X)[0]");
    bool same = true;
    const float *y = host_read(Y);
    for (int i = 1; i < 6; i++)
      for (int k = 0; k < 8; k++) same = same && y[i * 8 + k] == y[k];
    printf("all 6 positions identical: %s\n", same ? "yes" : "NO");
    ag_step_reset();
  }

  /***
## Residual Connection and Layer Normalization

Layer normalization is batch normalization's sibling: both center and scale, but layer norm
does it over the features of *one* example (one position), batch norm over the *batch* for one
feature. In language, batch statistics are unreliable — sequence lengths vary, padding is
everywhere, and batches are small — while per-position statistics are always there. The book
compares the two on $\begin{bmatrix}1&2\\2&3\end{bmatrix}$ (batch norm in training mode):
  */
  {
    Tensor *X = tensor_from(2, (int[]){2, 2}, (float[]){1, 2, 2, 3}); /* (2 examples, 2 features) */
    LayerNorm ln;
    LayerNorm_init(&ln, &demo_ps, "demo.ln", 2);
    Tensor *bn_g = tensor_full(1, (int[]){2}, 1.0f), *bn_b = tensor_zeros(1, (int[]){2});
    Tensor *rm = tensor_zeros(1, (int[]){2}), *rv = tensor_full(1, (int[]){2}, 1.0f);
    tensor_print(LayerNorm_forward(&ln, X), "layer norm");
    tensor_print(t_batch_norm(X, bn_g, bn_b, rm, rv, true, 0.1f, 1e-5f), "batch norm");
    ag_step_reset();
  }

  /***
Layer norm makes each *row* (example) have mean 0 and variance 1 — both rows become
$[-1, 1]$; batch norm does that for each *column* (feature), so both columns become
$[-1, 1]^\top$. (Not exactly $\pm 1$: $\epsilon = 10^{-5}$ sits under the square root.)

`AddNorm` adds the sublayer's output $\mathbf y$, after dropout, to its input $\mathbf x$ and
normalizes: $\mathrm{LayerNorm}(\mathbf x + \mathrm{dropout}(\mathbf y))$ — exercise 6.2
(`labs/lab06/addnorm.c`):

@code labs/lab06/addnorm.c AddNorm_forward

The residual connection needs both to have the same shape, and so does the output:
  */
  {
    AddNorm add_norm;
    AddNorm_init(&add_norm, &demo_ps, "demo.addnorm", 4, 0.5f);
    Tensor *X = tensor_full(3, (int[]){2, 3, 4}, 1.0f);
    Tensor *Y = NEED(AddNorm_forward(&add_norm, X, X, false), "the AddNorm demo");
    print_shape("add_norm(ones (2, 3, 4), ones (2, 3, 4)) shape", Y);
    ag_step_reset();
  }

  /***
(d2l 0.17 builds this `AddNorm([3, 4], 0.5)`, normalizing over the last *two* dims; d2l 1.0 and
this lab normalize each position over its $d$ features, `AddNorm(4, 0.5)`, as the Transformer
paper does.)

### Layer norm as CUDA kernels (exercise 6.7)

With `--device cuda`, layer norm's arithmetic is exercise 6.7 (`labs/lab06/layer_norm_kernel.cu`):
once it is done, the student's kernels normalize every `AddNorm` of this Transformer, forward and
backward (until then the kit's own, with one note a run). Layer norm is two *reductions* per row
(the mean, then the variance around it: two passes, as on the CPU, so no cancellation) and an
elementwise step; its backward is two more reductions per row, $\mathrm{mean}(\hat{\mathbf
g})$ and $\mathrm{mean}(\hat{\mathbf g} \odot \hat{\mathbf x})$ with $\hat{\mathbf g} =
\mathbf g \odot \boldsymbol\gamma$, and two reductions *down the columns*, for the gradients of
$\boldsymbol\gamma$ and $\boldsymbol\beta$.

**A block per row, a reduction in shared memory.** The forward gives each row a block of
threads (a power of two: the smallest $\ge d$, from one warp to 256). Thread $t$ sums features
$t, t + 256, \ldots$ of the row (a warp reads 32 consecutive floats: coalesced, 4 sectors a
request), writes its partial sum to `red[t]` in shared memory, and then the block halves the
array: at each level the first half of the threads add the second half's values to theirs,
until `red[0]` holds the row's sum — $\log_2$ of the block size levels instead of a sum by one
thread. Every level ends with `__syncthreads()`: the next level reads what this one wrote, and
without the barrier a thread would read a partial sum before its owner added to it. The
emulator's racecheck reports exactly that pair of accesses, and the grader scores such a kernel
0 even when its numbers happen to come out right. One more barrier after everyone has read
`red[0]` lets the next reduction reuse the array.

@code labs/lab06/layer_norm_kernel.cu block_reduce_sum? layer_norm_block_kernel?

At lab 06's shape, 640 rows of 32 features, `cuda_check_emu --family nn --profile` counts for the
forward 4.0 sectors per load request (the stores average 2.0: thread 0's two `stats` floats a
row are one-lane requests), 520 KB moved, and 34 shared-memory requests a row with no bank
conflict: consecutive threads touch consecutive words. With rows of 32 the block is one warp,
and those shared-memory round trips are what the kit's own kernel avoids with warp shuffles
(`warp_sum`, one warp per row); the block reduction pays off when rows are long (the ViT of
lab 07's book preset has 512 features: one warp would walk each row 16 times per pass).

**Column sums.** $\partial\boldsymbol\gamma = \sum_{\text{rows}} \mathbf g \odot \hat{\mathbf
x}$ and $\partial\boldsymbol\beta = \sum_{\text{rows}} \mathbf g$ add 640 rows per feature. One
thread per column would read coalesced (the 32 lanes of a warp take 32 neighbouring columns of a
row) but leave 32 threads for the whole sum. So a block of 256 threads owns 32 columns: 8 groups
of 32 lanes, group $k$ summing rows $k, k + 8, \ldots$; their 8 partial sums meet in shared
memory after a barrier, and group 0 adds them in a fixed order. One block owns each column
outright, so there is no atomic add and the sums come out the same every run (2.5 sectors per
load request: `g` and `x` 4, the row's `stats` broadcast to the warp in 1).

@code labs/lab06/layer_norm_kernel.cu layer_norm_cols_block_kernel?

## Encoder

A `TransformerEncoderBlock` is the two sublayers, each inside an `AddNorm`: self-attention
(queries, keys and values all $\mathbf X$, the padding masked by `valid_lens`), then the FFN.
Its forward pass is exercise 6.4 (`labs/lab06/encoder_block.c`):

@code labs/lab06/lab06.h TransformerEncoderBlock
@code labs/lab06/encoder_block.c TransformerEncoderBlock_forward

No layer in it changes the shape, so blocks stack. The book's check: 24 hidden units, 48 FFN
hidden units, 8 heads, dropout 0.5, a batch of two sequences of 100 positions with valid lengths
$[3, 2]$:
  */
  {
    TransformerEncoderBlock blk;
    TransformerEncoderBlock_init(&blk, &demo_ps, "demo.encoder_blk", 24, 48, 8, 0.5f, false);
    Tensor *X = tensor_full(3, (int[]){2, 100, 24}, 1.0f);           /* (2, 100, 24) */
    Tensor *vl = tensor_from(1, (int[]){2}, (float[]){3, 2});         /* (2) */
    Tensor *Y = NEED(TransformerEncoderBlock_forward(&blk, X, vl, false), "the encoder block");
    print_shape("encoder_blk(ones (2, 100, 24), valid_lens [3, 2]) shape", Y);
    ag_step_reset();
  }

  /***
The encoder (`TransformerEncoder`) embeds the token ids, multiplies the embeddings by
$\sqrt d$ — they start as $\mathcal N(0, 1)$ numbers, and the scaling keeps them from being
drowned by the positional encoding's values in $[-1, 1]$ — adds the positional encoding of lab
05, and runs the blocks:

@code chapters/06_transformer/transformer.c embed TransformerEncoder_forward

A vocabulary of 200, two blocks, ids all ones:
  */
  {
    TransformerEncoder enc;
    TransformerEncoder_init(&enc, &demo_ps, 200, 24, 48, 8, 2, 0.5f, false);
    Tensor *X = tensor_full(2, (int[]){2, 100}, 1.0f);               /* (2, 100) ids */
    Tensor *vl = tensor_from(1, (int[]){2}, (float[]){3, 2});
    Tensor *Y = NEED(TransformerEncoder_forward(&enc, X, vl, false), "the encoder");
    print_shape("encoder(ones (2, 100), valid_lens [3, 2]) shape", Y);
    print_shape("block 1 attention weights shape", enc.blks[0].attention.attention.attention_weights);
    ag_step_reset();
    TransformerEncoder_free(&enc); /* @program */
  }

  /***
The weights are (batch × heads, queries, keys) = $(2 \cdot 8, 100, 100)$.

## Decoder

A `TransformerDecoderBlock` has three sublayers, each inside an `AddNorm`: masked
self-attention over the target, encoder–decoder attention (queries from the decoder, keys and
values the encoder's outputs, the source's padding masked) and the FFN.

In training the decoder sees the whole target at once (teacher forcing), so its self-attention
must hide the future: query $i$ may attend only to keys $0, \ldots, i$. As valid lengths that is
`dec_valid_lens` $= [1, 2, \ldots, T]$ for each sequence. At prediction time the decoder runs one
token at a time; block $i$ keeps its inputs of the earlier steps in a *key/value cache*
(`key_values`, the book's `state[2][i]`), and the new token attends to the cache and to itself:
the keys and values are the cached inputs followed by the new one, and the cache becomes that
concatenation. The block's forward pass with its cache is exercise 6.5
(`labs/lab06/decoder_block.c`), shown below after the two defects its mask and positions fix.

### Two defects of the book's decoder, fixed

1. **The mask follows `self.training`.** The book builds `dec_valid_lens` when training and
   passes `None` otherwise, assuming "not training" means "one token at a time". But an
   evaluation pass over a whole target — a validation loss, a teacher-forced score, d2l 1.0's
   validation step — is not training, and then every position sees the *future* target tokens:
   the validation loss is optimistic and the logits differ from what decoding would produce.
   Here the mask depends only on positions: query $i$ of a call whose first token is at target
   position $t$ (the cache holds $t$ tokens) sees keys $0, \ldots, t + i$. For a whole sequence
   $t = 0$ and that is the causal mask; for one cached step it lets the token see the cache and
   itself. Training mode plays no part. This is exercise 6.3 (`causal_valid_lens`,
   `labs/lab06/causal_mask.c`).
2. **Every generated token gets position 0's encoding.** The book's decoder adds
   `P[:, :X.shape[1]]` to its input; when decoding feeds one token per call, that is always
   row 0 of $\mathbf P$. In training, token $i$ had position $i$'s encoding, so at prediction the
   model sees inputs it was never trained on. (The four toy translations often come out the
   same anyway — they are 2 to 5 tokens long — but the logits move by several units, as the
   check below shows with `--d2l-compat`.) Here the decoder counts the tokens it has fed (`state.steps`) and adds row
   $t$ to token $t$.

With both fixed, decoding token by token with the cache computes *exactly* what one
masked pass over the whole sequence computes — `tests/unit/test_lab06.c` checks the logits agree.
`--d2l-compat` restores the book's behaviour. The mask (exercise 6.3), the block with its
cache (exercise 6.5) and the decoder that feeds it positions:

@code labs/lab06/causal_mask.c causal_valid_lens
@code labs/lab06/lab06.h TransformerDecoderBlock
@code labs/lab06/decoder_block.c TransformerDecoderBlock_forward
@code chapters/06_transformer/transformer.c TransformerDecoder_forward

The book's shape check for one block (same sizes as the encoder block, the encoder block's
output as `enc_outputs`):
  */
  {
    TransformerEncoderBlock eb;
    TransformerEncoderBlock_init(&eb, &demo_ps, "demo.enc_blk2", 24, 48, 8, 0.5f, false);
    TransformerDecoderBlock db;
    TransformerDecoderBlock_init(&db, &demo_ps, "demo.decoder_blk", 24, 48, 8, 0.5f, false);
    Tensor *X = tensor_full(3, (int[]){2, 100, 24}, 1.0f);
    Tensor *vl = tensor_from(1, (int[]){2}, (float[]){3, 2});
    Tensor *enc = NEED(TransformerEncoderBlock_forward(&eb, X, vl, false), "the encoder block");
    Tensor *kv = NULL;
    Tensor *Y = NEED(TransformerDecoderBlock_forward(&db, X, enc, vl, &kv, false, DECODER_FIXED),
                     "the decoder block");
    print_shape("decoder_blk(ones (2, 100, 24), state) shape", Y);
    print_shape("its key/value cache", kv);
    ag_step_reset();
  }
  paramset_free(&demo_ps); /* @program */

  /***
## Training

The whole encoder–decoder (`Transformer` in `transformer.c`) plugs into lab 03's training loop
(`train_seq2seq` in `common/seq2seq_train.c`): Adam, the masked softmax cross-entropy loss, gradient
clipping, teacher forcing; each step is your `seq2seq_train_step` of lab 03 (exercise 3.4), or
the kit's batched step where the two agree on one batch of this run (one line says which). The
book's classic configuration (`--preset d2l-0.17`, the default):
2 blocks, $d = 32$, 4 heads, FFN width 64, dropout 0.1, batch 64, 10 time steps, learning rate
0.005, [200]{.run out="over all 200 epochs"} epochs on 600 English–French pairs. `--preset d2l-1.0`: $d = 256$, FFN 64, 4 heads,
2 blocks, dropout 0.2, learning rate 0.001, 30 epochs, gradient clip 1, on 512 pairs (batch
128, 9 steps), with 129 validation pairs.

fra-eng's first pairs are short: a d2l-1.0 batch holds about 4 real tokens per 9 steps. The book
computes every padded position; `train_seq2seq` skips what the loss cannot see — target positions
past every row's valid length (the decoder is causal, the loss weighs them 0) and source positions
that are padding in every row (attention masks them) — and runs a batch of mixed lengths as two
parts sorted by length, side by side on two threads where there are two cores (the second on a
twin of the model that reads the same weights; all of it in `common/step.c`). The loss and
gradients are the whole padded batch's (`tests/unit/test_seq2seq_trim.c`); the step does 0.57 of
the book's position-wise arithmetic. The model's forward pass, as the training loop calls it:

@code chapters/06_transformer/transformer.c Transformer_forward
  */
  char err[512];
  NmtData *d = nmt_load(&ncfg, args.data_dir, err, sizeof err);
  if (!d) die("lab06: %s", err); /* @program */
  nmt_translate_flag(d, translate, 0); /* a --translate without words: refused before training */
  TransformerConfig tcfg = {
      .src_vocab = d->src_vocab->size,
      .tgt_vocab = d->tgt_vocab->size,
      .num_hiddens = d2l10 ? 256 : 32,
      .ffn_num_hiddens = 64,
      .num_heads = 4,
      .num_blks = num_blks, /* the book's 2 */
      .dropout = d2l10 ? 0.2f : 0.1f,
      .use_bias = false,
      .d2l_compat = d2l_compat,
  };
  const int epochs = args.epochs > 0 ? args.epochs : (d2l10 ? 30 : 200);
  if (!(lr > 0)) lr = d2l10 ? 0.001f : 0.005f;
  ParamSet ps = {0};
  Transformer net;
  Transformer_init(&net, &ps, &tcfg);
  Seq2SeqModel model = Transformer_model(&net, &ps);
  char tag[160];
  Transformer_tag(&net, tag, sizeof tag);
  printf("preset %s: %d pairs, source vocab %d, target vocab %d, %ld parameters%s\n",
         d2l10 ? "d2l-1.0" : "d2l-0.17", d->n, tcfg.src_vocab, tcfg.tgt_vocab,
         paramset_count(&ps), d2l_compat ? " (--d2l-compat: the book's decoder)" : "");
  if (num_blks != 2) blocks_check(&ps, &tcfg); /* exercise 1: what the deeper model adds */

  Seq2SeqTrainResult res = {0};
  double sec_per_epoch = NAN;
  if (load) {
    /* @program begin */
    if (checkpoint_load(&ps, tag, load, err, sizeof err) != 0) die("lab06: %s", err);
    /* @program end */
    printf("loaded %s (no training)\n", load);
  } else {
    char *fig = path_join(args.out, "loss");
    Seq2SeqTrainConfig tc = {.epochs = epochs,
                             .lr = lr,
                             .clip = 1.0f,
                             .token_mean = d2l10,
                             .fig_base = fig,
                             .plot_every = d2l10 ? 1 : 10,
                             .step = seq2seq_train_step}; /* yours (exercise 3.4) */
    if (train_seq2seq(&model, d, &tc, &res) != 0) die("lab06: training diverged");
    figure_saved(fig, plot_have_gnuplot() ? 0 : 1); /* the loss curve, as lab03 announces it */
    free(fig); /* @program */
    sec_per_epoch = res.train_seconds / res.epochs;
    printf("%.4f s per epoch, peak RSS %ld MB\n", sec_per_epoch, peak_rss_kb() / 1024);
    if (save) {
      /* @program begin */
      if (checkpoint_save(&ps, tag, save, err, sizeof err) != 0) die("lab06: %s", err);
      /* @program end */
      printf("saved %s\n", save);
    }
  }

  /***
The loss falls fast: the Transformer has no recurrence to push gradients through, and every
target position is trained in parallel. Now the book's four sentences, with BLEU
(`bleu(pred, ref, k=2)`), decoded greedily token by token with the key/value cache.
`predict_seq2seq` (`common/seq2seq_decode.c`) turns the sentence into ids and the result back
into words; the loop in between, d2l's, is exercise 6.6 (`labs/lab06/predict.c`): encode, feed
`<bos>`, then each step's argmax, until `<eos>` or `num_steps` steps. (Lab 03 decodes with the
kit's copy of this loop.)

@code labs/lab06/predict.c predict_seq2seq_greedy

Each `decode_step` runs one token through the decoder, its blocks' caches growing by one:

@code chapters/06_transformer/transformer.c Transformer_decode_step

  */
  const char *engs[4] = {"go .", "i lost .", "he's calm .", "i'm home ."};
  const char *fras[4] = {"va !", "j'ai perdu .", "il est calme .", "je suis chez moi ."};
  Seq2SeqTranslation tr[5];
  Seq2SeqPrediction preds[5];
  int ntr = 4;
  double mean_bleu = 0;
  TransformerAttnRecord rec;
  attn_record_init(&rec, tcfg.num_blks, tcfg.num_heads, d->num_steps, d->num_steps);
  for (int i = 0; i < 4; i++) {
    net.record = i == 3 ? &rec : NULL; /* the heatmaps are of the last sentence */
    predict_seq2seq(&model, d, engs[i], 0, false, &preds[i]);
    double b = bleu_str(preds[i].text, fras[i], 2);
    tr[i] = (Seq2SeqTranslation){engs[i], fras[i], preds[i].text, b};
    mean_bleu += b / 4;
    printf("%s => %s, bleu %.3f\n", engs[i], preds[i].text, b);
  }
  net.record = NULL;
  printf("mean BLEU of the four sentences: %.3f\n", mean_bleu);
  if (translate) {
    nmt_translate_flag(d, translate, 1); /* unknown words, a sentence longer than num_steps */
    predict_seq2seq(&model, d, translate, 0, false, &preds[4]);
    printf("%s => %s\n", translate, preds[4].text);
  }

  /***
Three of these sentences are training pairs, and the trained model gets them exactly right
([`go . => va !, bleu 1.000`]{.run}, [`i lost . => j'ai perdu ., bleu 1.000`]{.run},
[`i'm home . => je suis chez moi ., bleu 1.000`]{.run}); `he's calm .` is not (lab 03 checks
this and explains how the model can still compose `il est calme .` from `il est ...` and `je
suis calme .`). So the four scores say more about fitting than translating. For an honest number,
lab 03's held-out BLEU-4:
greedy translations of pairs it never saw (d2l-0.17: the lines after the 600 training pairs;
d2l-1.0: the validation pairs), scored as a corpus.
  */
  Seq2SeqHeldout held = {.bleu4 = NAN, .bleu2 = NAN};
  if (!no_heldout) seq2seq_heldout_report(&model, d, args.data_dir, heldout, &held);

  /***
Expect a low number: 600 short pairs teach a vocabulary of about 200 words, and most held-out
sentences contain words the model has never seen (they become `<unk>`). BLEU-4 is usually
exactly 0 here because not one 4-gram matches; the n-gram precisions and BLEU-2 (the same
formula over 1- and 2-grams) show what the model does get right.

### Incremental decoding equals the masked full pass

With the fixes, feeding the decoder one token at a time (with the cache) and feeding it the
whole sequence at once (with the causal mask) compute the same function. We check on the first
training pair: teacher-force its target through both paths and compare logits. Then the first
defect, measured: change the *last* target token and see whether the logits of the *earlier*
positions of an evaluation-mode pass move.
  */
  double full_vs_inc = 0;
  {
    ag_set_grad_enabled(false);
    const int T = d->num_steps, V = tcfg.tgt_vocab;
    float *xh = arena_alloc(sizeof(float) * (size_t)T), vh = (float)d->src_valid[0];
    float *dh = arena_alloc(sizeof(float) * (size_t)T);
    for (int j = 0; j < T; j++) xh[j] = (float)d->src[j];
    dh[0] = (float)vocab_idx(d->tgt_vocab, "<bos>");
    for (int j = 1; j < T; j++) dh[j] = (float)d->tgt[j - 1];
    Tensor *X = tensor_from(2, (int[]){1, T}, xh), *vl = tensor_from(1, (int[]){1}, &vh);
    Tensor *dec = tensor_from(2, (int[]){1, T}, dh);
    Tensor *full = NEED(Transformer_forward(&net, X, vl, dec, false), "the Transformer");
    const float *fh = host_read(full);
    Transformer_begin_decode(&net, X, vl);
    for (int j = 0; j < T; j++) {
      const float *step = host_read(Transformer_decode_step(&net, (int)dh[j], j)); /* (1, V) */
      for (int v = 0; v < V; v++)
        full_vs_inc = fmax(full_vs_inc, fabs((double)step[v] - fh[(long)j * V + v]));
    }
    ag_step_reset();
    ag_set_grad_enabled(true);
  }
  double leak = future_dependence(&net, d);
  printf("max |full pass - token by token| over %d positions: %.3g%s\n", d->num_steps,
         full_vs_inc, d2l_compat ? " (--d2l-compat: they differ)" : "");
  printf("evaluation pass, earlier positions' logits after changing the last target token: "
         "max change %.3g%s\n",
         leak, d2l_compat ? " (--d2l-compat: the future leaks in)" : " (causal: 0)");

  /***
Without `--d2l-compat` both numbers are 0 up to float rounding. Run `./lab06 --d2l-compat` to
see the book's decoder: the evaluation pass depends on future tokens, and the token-by-token
logits no longer match the full pass.

## Attention Weights

Now the heads of the trained model, for the last sentence ("i'm home ." → "je suis chez
moi ."): one panel per head (columns) and block (rows). First the encoder's self-attention over
the source positions (`num_steps`: 10 in the classic preset, 9 in d2l-1.0); keys beyond the valid length (the sentence and `<eos>`) are padding and
get weight 0 — masked entries are zero in all three figures.
  */
  const char *figs[3] = {NULL, NULL, NULL};
  {
    int steps = rec.steps, S = d->num_steps;
    heatmap_grid(args.out, "enc_self_attention", rec.enc, rec.blks, rec.heads, S, S, S, S,
                 "Key positions", "Query positions");
    figs[0] = "enc_self_attention";
    heatmap_grid(args.out, "dec_self_attention", rec.dec_self, rec.blks, rec.heads,
                 rec.max_steps, rec.max_steps, steps, steps, "Key positions", "Query positions");
    figs[1] = "dec_self_attention";
    heatmap_grid(args.out, "dec_enc_attention", rec.dec_cross, rec.blks, rec.heads,
                 rec.max_steps, S, steps, S, "Key positions", "Query positions");
    figs[2] = "dec_enc_attention";
    printf("decoder self-attention: %d steps, largest weight on a future key %.3g\n", steps,
           max_future_weight(&rec, steps));
  }

  /***
The decoder's self-attention is lower triangular: generated token $t$ (row) attends only to
tokens $0..t$, through the cache. In the encoder–decoder attention, every decoder step looks at
the source; keys past the source's valid length get 0. Rows are decoding steps: the
`<bos>` step first, then one per generated token (including the step that produced `<eos>`).

## Speed

`train_seq2seq` reports tokens per second (valid target tokens over the time inside the training
loop); the summary records this run's rate, seconds per epoch and peak memory. `make
bench-vs-torch` times PyTorch running the book's code beside it (docs/performance.md).
  */
  /* @program begin */
  Extra ex = {.preset = d2l10 ? "d2l-1.0" : "d2l-0.17",
              .cfg = &tcfg,
              .d2l_compat = d2l_compat,
              .sec_per_epoch = sec_per_epoch,
              .full_vs_incremental = full_vs_inc,
              .compat_eval_leak = leak,
              .heldout = held,
              .params = paramset_count(&ps),
              .figs = {figs[0], figs[1], figs[2]}};
  {
    Summary *S = summary_new("lab06", args.seed);
    seq2seq_summary_record(S, ex.preset, d, load ? NULL : &res, tr, ntr, held.bleu4);
    record_extra(S, &ex);
    summary_write(S, args.out);
  }

  for (int i = 0; i < 4; i++) seq2seq_prediction_free(&preds[i]);
  if (translate) seq2seq_prediction_free(&preds[4]);
  attn_record_free(&rec);
  seq2seq_train_result_free(&res);
  Transformer_free(&net);
  paramset_free(&ps);
  nmt_data_free(d);
  tensor_shutdown();
  return 0;
}
/* @program end */

/***
## Attention in one kernel (kernel track, exercise 6.8)

Every attention above is composed: `t_bmm` writes the scores $QK^\top/\sqrt d$, a
(queries × keys) array per head, to memory; the mask reads and writes it; the softmax reads and
writes it; the second `t_bmm` reads it once more. On a GPU each of those is a trip through
global memory, the slowest thing a kernel does, for an array nobody needs afterwards.
FlashAttention (Dao et al., 2022) computes the same output without ever storing it.

Two ideas make that possible. **Tiles**: a block of 32 threads takes 32 queries, one each, and
walks the keys 32 at a time; each step it loads those 32 rows of $K$ and $V$ into shared memory
once, and all 32 queries use them from there. $K$ and $V$ are read once per tile of queries,
not once per query. **The online softmax**: a thread cannot normalize before it has seen every
key, so it keeps the largest score so far $m$, the sum $\ell = \sum_j e^{s_j - m}$ and the
weighted sum $a = \sum_j e^{s_j - m} v_j$. A new key's score $s$ updates them as

$$m' = \max(m, s),\quad \ell' = \ell\, e^{m - m'} + e^{s - m'},\quad
a' = a\, e^{m - m'} + e^{s - m'} v,$$

and at the end $o = a / \ell$ — the softmax-weighted sum of the values, to rounding, and
numerically stable for the same reason the row max is subtracted in lab 02.

@code labs/lab06/flash_attention.cu flash_attention_kernel? flash_attention_cuda

The grade prints the emulator's memory counters of the student's kernel beside the
reference's. At (4 sentences, 128 queries, 128 keys, $d$ = 32) the reference loads 18,432
sectors of 32 bytes (640 KB moved in all; the emulator's H100 estimate, bytes over bandwidth,
0.20 µs); a kernel whose threads read $K$ and $V$ for their own query only — no shared tiles —
gives the same numbers from 133,120 load sectors (4,224 KB, 1.29 µs), 7.2 times the reads, and
loses the exercise's last two points. The kernel has no backward of its own: `t_attention_fused`
(common/ops/attention.c) recomputes the scores from $Q$ and $K$ with the composed ops, as
FlashAttention's backward recomputes them tile by tile. Nor does it apply dropout to the
weights, as d2l's `DotProductAttention` does while training, so the lab trains with the composed
attention; `build/labs/cuda_check_emu --family attention` (after `make -j2
build/labs/cuda_check_emu VARIANT=labs`) checks a student's kernel against the CPU's, every
sanitizer on.

## Summary

* The Transformer is an encoder–decoder built from attention alone: multi-head self-attention,
  encoder–decoder attention, position-wise feed-forward networks, each sublayer wrapped in a
  residual connection and layer normalization; positions enter through the positional encoding.
* The encoder's blocks see the whole source; the decoder's masked self-attention lets target
  position $i$ see only positions $\le i$, which makes training parallel over all positions and
  prediction autoregressive.
* Layer normalization normalizes each position over its features, independent of the batch —
  the right choice for variable-length sequences.
* The causal mask is a property of *positions*, not of training mode; and a token decoded at
  step $t$ must get position $t$'s encoding. With both, token-by-token decoding with a
  key/value cache computes exactly the masked full pass.

## Exercises

1. Train a deeper Transformer. How does it affect training speed and translation quality?
   (Challenge: `--num-blks 4` (or 6); compare loss, tokens/s and held-out BLEU-4 with the
   default 2 for several `--seed`s. The run prints its parameter count and what each extra
   encoder–decoder block pair adds, checked against the blocks' own sizes; the cache and the
   heatmaps follow the number of blocks.)
2. Is it a good idea to replace scaled dot-product attention with additive attention in the
   Transformer? Why? (Challenge: `MultiHeadAttention` calls `DotProductAttention_forward`; swap
   in lab 02's `AdditiveAttention` per head and time an epoch.)
3. For language modeling, should we use the Transformer encoder, decoder, or both? How would
   you design it? (A decoder-only model is this decoder without encoder–decoder attention:
   `causal_valid_lens` is all the masking it needs.)
4. What can be challenging to Transformers if input sequences are very long? Why? (Self-attention
   costs $\mathcal O(n^2 d)$; time `TransformerEncoder_forward` for $n$ = 100, 200, 400.)
5. How would you improve the computational and memory efficiency of Transformers? (Hint: the
   key/value cache here re-projects every cached input at every step; store projected keys and
   values per head instead, and measure the decoding speed-up.)
6. Design Transformer-based models for image classification without using convolution (lab 07,
   the Vision Transformer).
7. Challenge — learnable positional embeddings: replace `PositionalEncoding` with an
   `Embedding` of positions (a parameter (max_len, d) added to the token embeddings) and compare
   held-out BLEU-4. What happens to a position never seen in training?
8. Challenge — batch norm in place of layer norm: swap `LayerNorm_forward` in `AddNorm_forward`
   for `t_batch_norm` (with running statistics) and train. Why does it behave worse with
   padding and small batches?
*/
