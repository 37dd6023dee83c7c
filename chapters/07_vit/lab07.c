/***
# Transformers for Vision

The Transformer was designed for sequences of words, yet nothing in its encoder cares that the
tokens are words. The *Vision Transformer* (ViT, Dosovitskiy et al., 2021) feeds it an image
instead: the image is cut into patches, each patch becomes a token, a special `<cls>` token is
put in front, and after a stack of Transformer encoder blocks the `<cls>` token's output is
classified. There are no convolutions and no built-in notion that nearby pixels belong
together; the model has to learn that from data. On small data sets this weaker inductive bias
costs accuracy compared with a CNN, but at scale ViTs match and beat them.

This lab builds the ViT from the pieces of the earlier labs — lab04's `MultiHeadAttention`,
layer norm, dropout — trains it on Fashion-MNIST, and then looks at what it predicts and where
its `<cls>` token looks.

Run it with `make lab07 && ./lab07` (flags: `./lab07 --help`). The default preset is sized for
a CPU (28 x 28 images, patches of 7, 64 hiddens) and trains ten epochs in about a minute on two
cores; `--preset d2l` is the book's configuration (96 x 96, patches of 16, 512 hiddens), meant
for a GPU or a patient CPU (about 8 minutes an epoch on two cores). Figures go to `out/lab07/` (or `--out DIR`), together with `summary.json`.
@program
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/backend.h"
#include "../../common/cli.h"
#include "../../common/exercise.h"
#include "../../common/fashion_mnist.h"
#include "../../common/gemm.h"
#include "../../common/summary.h"
#include "../../common/nn.h"
#include "../../common/plot.h"
#include "../../common/rng.h"
#include "../../common/util.h"
#include "vit.h"
#include "vit_cls_only.h"
#include "vit_step.h"

/* A training configuration. */
typedef struct Preset {
  const char *name;
  int img_size, patch_size, num_hiddens, mlp_num_hiddens, num_heads, num_blks;
  float emb_dropout, blk_dropout, lr;
  int batch_size, epochs;
} Preset;

static const Preset PRESETS[] = {
    /* CPU-sized: 16 patches of 7 x 7 pixels, so one training step is ~1 GFLOP. */
    {"cpu", 28, 7, 64, 128, 4, 2, 0.1f, 0.1f, 0.1f, 128, 10},
    /* The book's: 36 patches of 16 x 16 pixels of the image resized to 96 x 96. */
    {"d2l", 96, 16, 512, 2048, 8, 2, 0.1f, 0.1f, 0.1f, 128, 10},
};

/* The book's Classifier.loss: the mean cross-entropy of logits (n, 10) against labels y (n). */
static Tensor *vit_loss(Tensor *logits, Tensor *y) {
  return t_mean_all(t_cross_entropy(logits, y, NULL)); /* (1) */
}

/* Mean loss and accuracy of the model on n images of d (in batches, no gradient, eval mode). */
typedef struct EvalResult {
  double loss, acc;
} EvalResult;

static EvalResult evaluate(ViT *net, ViTForwardFn forward, const FashionMNIST *d, int n, int size,
                           int batch) {
  double loss_sum = 0;
  long correct = 0;
  bool save = ag_grad_enabled();
  ag_set_grad_enabled(false);
  for (int start = 0; start < n; start += batch) {
    int bs = n - start < batch ? n - start : batch;
    /* the batch is decoded on the host and sent to the model's device in one copy each */
    Tensor *Xh = tensor_new_on(DEV_CPU, 4, (const int[]){bs, 1, size, size}); /* (bs,1,size,size) */
    Tensor *yh = tensor_new_on(DEV_CPU, 1, (const int[]){bs});                /* (bs) */
    fashion_mnist_batch(d, NULL, start, bs, size, Xh->data, yh->data);
    const float *y = yh->data;
    Tensor *Xt = tensor_to(Xh, tensor_default_device());
    Tensor *yt = tensor_to(yh, tensor_default_device());
    Tensor *logits = NEED(forward(net, Xt, false), "evaluating the ViT"); /* (bs, 10) */
    Tensor *l = t_cross_entropy(logits, yt, NULL);                    /* (bs) */
    const float *lh = host_read(l), *lg = host_read(logits); /* what the metrics count */
    for (int b = 0; b < bs; b++) {
      loss_sum += lh[b];
      const float *row = lg + (long)b * logits->shape[1];
      int best = 0;
      for (int c = 1; c < logits->shape[1]; c++)
        if (row[c] > row[best]) best = c;
      correct += best == (int)y[b];
    }
    ag_step_reset();
  }
  ag_set_grad_enabled(save);
  return (EvalResult){n ? loss_sum / n : NAN, n ? (double)correct / n : NAN};
}

int main(int argc, char **argv) {
  LabArgs args;
  int steps = 0, img_size = 0, patch = 0, batch_size = 0, n_show = 6;
  float lr = 0;
  bool mean_pool = false;
  const CliOpt extra[] = {
      {"--steps", OPT_INT, &steps,
       "stop training after N batches in all (for timing); validation then uses N batches "
       "(default: no limit)"},
      {"--img-size", OPT_INT, &img_size,
       "resize the images to this side (a multiple of the patch size; challenge 1; default: the "
       "preset's)"},
      {"--patch", OPT_INT, &patch, "patch size (default: the preset's; it must divide the image size)"},
      {"--batch-size", OPT_INT, &batch_size, "minibatch size (default: the preset's, 128)"},
      {"--lr", OPT_FLOAT, &lr, "SGD learning rate (default: the preset's, 0.1)"},
      {"--mean-pool", OPT_FLAG, &mean_pool,
       "classify the mean of the patch outputs instead of <cls> (challenge 2)"},
      {"--show", OPT_INT, &n_show, "test images in the prediction and attention figures (1..12)"},
      {NULL, 0, NULL, NULL},
  };
  static const char *const presets[] = {"cpu", "d2l", NULL};
  cli_lab_info(&(CliLabInfo){presets, "cpu is sized for a laptop, d2l is the book's (96 x 96, "
                             "patch 16, 512 hiddens)", 0, INT_MAX,
                             "0 evaluates the untrained model", 0});
  cli_parse(argc, argv, "lab07", "the Vision Transformer on Fashion-MNIST", &args, extra);
  const Preset *P = NULL;
  const char *pname = args.preset ? args.preset : "cpu";
  for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++)
    if (strcmp(PRESETS[i].name, pname) == 0) P = &PRESETS[i];
  if (!P) die("lab07: unknown --preset '%s' (use cpu or d2l)", pname);
  Preset cfg = *P;
  if (img_size) cfg.img_size = img_size;
  if (patch) cfg.patch_size = patch;
  if (batch_size) cfg.batch_size = batch_size;
  if (lr) cfg.lr = lr;
  if (args.epochs >= 0) cfg.epochs = args.epochs;
  if (cfg.patch_size < 1 || cfg.img_size < cfg.patch_size || cfg.img_size % cfg.patch_size != 0 ||
      cfg.img_size > 512)
    die("lab07: --img-size %d must be a multiple of the patch size %d (and at most 512)",
        cfg.img_size, cfg.patch_size);
  if (cfg.batch_size < 1 || cfg.batch_size > 4096)
    die("lab07: --batch-size must be in 1..4096, got %d", cfg.batch_size);
  if (!(cfg.lr > 0)) die("lab07: --lr must be positive, got %g", (double)cfg.lr);
  if (steps < 0) die("lab07: --steps must be >= 0, got %d", steps);
  if (n_show < 1 || n_show > 12) die("lab07: --show must be in 1..12, got %d", n_show);

  /***
## Model

Given an input image of height $h$, width $w$ and $c$ channels, and a patch size $p$, the
image is split into a sequence of $m = hw/p^2$ patches, each flattened to a vector of length
$cp^2$. The Transformer encoder treats these patch vectors like the token representations of a
sentence. A `<cls>` token and the $m$ image patches are projected into $m+1$ vectors, summed
with learnable positional embeddings and passed through the encoder; the output of the `<cls>`
token is projected to the output label.

### Patch Embedding

The book splits and projects in one step with a convolution whose kernel size and stride are
both $p$: each output position sees exactly its own patch, and the kernel is the projection
matrix. We write down what that convolution computes — `t_patchify` cuts the images into
patches of shape $(c, p, p)$, flattened, and one `Linear` layer projects all patches of all
images in a single matrix product. `PatchEmbedding_forward` is exercise 7.1
(`labs/lab07/patch_embedding.c`).

@code labs/lab07/lab07.h PatchEmbedding
@code labs/lab07/patch_embedding.c PatchEmbedding_forward

The book's check: images of $96 \times 96$ pixels with 3 channels and patches of $16 \times 16$
give $6 \times 6 = 36$ patches, each projected to 512 features.
  */
  {
    ParamSet ps = {0};
    PatchEmbedding pe;
    PatchEmbedding_init(&pe, &ps, "patch_emb", 96, 16, 3, 512);
    Tensor *X = tensor_zeros(4, (const int[]){4, 3, 96, 96}); /* (batch, channels, h, w) */
    Tensor *Y = NEED(PatchEmbedding_forward(&pe, X), "the patch embedding check");
    print_shape("patch embedding of zeros (4, 3, 96, 96), patch 16, 512 hiddens", Y);
    paramset_free(&ps); /* @program */
    ag_step_reset();
  }

  /***
### Vision Transformer Encoder

The MLP of the ViT encoder differs from the position-wise FFN of the original Transformer:
its nonlinearity is the Gaussian error linear unit (GELU), a smoother ReLU,
$\mathrm{GELU}(x) = x\,\Phi(x)$ with $\Phi$ the standard normal CDF, and dropout follows each
of its two dense layers. `ViTMLP_forward` is exercise 7.4 (`labs/lab07/vit_mlp.c`):

@code labs/lab07/lab07.h ViTMLP
@code labs/lab07/vit_mlp.c ViTMLP_forward

The encoder block puts the normalization *before* each sublayer, not after the residual
addition as in lab06 ("pre-normalization"):

$$\mathbf X \leftarrow \mathbf X + \mathrm{MHA}(\mathrm{LN}_1(\mathbf X)), \qquad
\mathbf X \leftarrow \mathbf X + \mathrm{MLP}(\mathrm{LN}_2(\mathbf X)).$$

The residual stream then carries $\mathbf X$ unnormalized from block to block, which is known
to make deep Transformers easier to train. The attention is lab04's `MultiHeadAttention`
without biases. `ViTBlock_forward` is exercise 7.2 (`labs/lab07/vit_block.c`):

@code labs/lab07/lab07.h ViTBlock
@code labs/lab07/vit_block.c ViTBlock_forward

Like every Transformer encoder block, it does not change the shape of its input:
  */
  {
    ParamSet ps = {0};
    ViTBlock blk;
    ViTBlock_init(&blk, &ps, "blk", 24, 48, 8, 0.5f, false);
    Tensor *X = tensor_full(3, (const int[]){2, 100, 24}, 1.0f); /* (batch, steps, hiddens) */
    Tensor *Y = NEED(ViTBlock_forward(&blk, X, NULL, false), "the ViT block check");
    print_shape("ViT block on ones (2, 100, 24)", Y);
    paramset_free(&ps); /* @program */
    ag_step_reset();
  }

  /***
### Putting It All Together

The forward pass (`ViT_forward`) embeds the patches, prepends the `<cls>` token, adds the
positional embeddings and applies dropout — exercise 7.3, `vit_add_cls_and_positions`
(`labs/lab07/vit_embed.c`) — then runs the blocks and hands the `<cls>` output through a
layer norm and a linear layer to the ten classes — exercise 7.5, `ViT_head`
(`labs/lab07/vit_head.c`), the book's `self.head(X[:, 0])`:

@code labs/lab07/vit_head.c ViT_head

As in the book, the `<cls>` token starts at zero and the positional embeddings at
$\mathcal N(0, 0.02^2)$; every linear layer starts at PyTorch's default
$\mathcal U(\pm 1/\sqrt{\text{fan-in}})$.

@code labs/lab07/lab07.h ViT
@code chapters/07_vit/vit.c ViT_forward ViT_tokens
@code labs/lab07/vit_embed.c vit_add_cls_and_positions

Since only the `<cls>` output is classified, the last block's other outputs are never read: the
book computes them anyway. The lab trains with a forward pass that runs the last block for the
`<cls>` row alone — its query against every row's keys and values, then its residual, norm and
your MLP — which is 0.62 of the book preset's arithmetic per step, with the same logits and
gradients (`chapters/07_vit/vit_cls_only.c`). It first checks, on a few training images, that
your `ViTBlock_forward` gives the same `<cls>` row; a block written differently (try post-norm)
runs in full on every row, through `ViT_forward`, and the lab says so.
  */
  ParamSet ps = {0};
  ViT net;
  ViT_init(&net, &ps, cfg.img_size, cfg.patch_size, 1, cfg.num_hiddens, cfg.mlp_num_hiddens,
           cfg.num_heads, cfg.num_blks, cfg.emb_dropout, cfg.blk_dropout, false, 10);
  net.mean_pool = mean_pool;
  printf("preset %s: %dx%d images, patch %d (%d patches + <cls>), %d hiddens, MLP %d, %d heads, "
         "%d blocks, dropout %.1f, lr %g, batch %d, %d epochs%s\n",
         cfg.name, cfg.img_size, cfg.img_size, cfg.patch_size, net.patch_embedding.num_patches,
         cfg.num_hiddens, cfg.mlp_num_hiddens, cfg.num_heads, cfg.num_blks,
         (double)cfg.blk_dropout, (double)cfg.lr, cfg.batch_size, cfg.epochs,
         mean_pool ? ", mean pooling (no <cls> readout)" : "");
  printf("parameters: %ld\n", paramset_count(&ps));

  /***
## Training

Fashion-MNIST has 60,000 training and 10,000 test images of $28 \times 28$ gray pixels in ten
classes of clothing. Like the book we validate on the test set. The images are read from the
original `*-ubyte.gz` files (`common/fashion_mnist.c` checks their headers, sizes and labels),
scaled to $[0, 1]$, and — when the preset asks for another size — resized bilinearly as
`torchvision`'s `Resize` does. The trainer is the book's: minibatch SGD on the mean
cross-entropy, the training set reshuffled every epoch, and after each epoch the validation
loss and accuracy. How a batch's forward, loss and backward are executed is
`vit_step_begin`'s business (`chapters/07_vit/vit_step.c`): for a small model on a two-core
machine the batch runs as two halves side by side, with gradients that add up to the batch's.
On a GPU the step is launched, not waited for: the next batch is read and resized on the host
while the device computes, and `vit_step_end` reads the loss, the step's one wait.
  */
  char err[1024];
  FashionMNIST train, test;
  /* @program begin */
  if (fashion_mnist_load(&train, "train", args.data_dir, err, sizeof err) != 0) die("%s", err);
  if (fashion_mnist_load(&test, "t10k", args.data_dir, err, sizeof err) != 0) die("%s", err);
  /* @program end */
  printf("Fashion-MNIST: %d training and %d test images of %dx%d\n", train.n, test.n, train.rows,
         train.cols);

  const int S = cfg.img_size, BS = cfg.batch_size;
  ViTForwardFn forward;
  { /* ViT_forward, or the <cls>-only last block where it agrees with yours on 4 images */
    Tensor *Xh = tensor_new_on(DEV_CPU, 4, (const int[]){4, 1, S, S}); /* (4, 1, S, S) */
    Tensor *yh = tensor_new_on(DEV_CPU, 1, (const int[]){4});          /* (4) */
    fashion_mnist_batch(&train, NULL, 0, 4, S, Xh->data, yh->data);
    forward = ViT_forward_choose(&net, tensor_to(Xh, tensor_default_device()));
    ag_step_reset();
  }
  const int batches_per_epoch = (train.n + BS - 1) / BS;
  int epochs = cfg.epochs;
  if (steps > 0 && (steps + batches_per_epoch - 1) / batches_per_epoch < epochs)
    epochs = (steps + batches_per_epoch - 1) / batches_per_epoch;
  const int n_val = steps > 0 && (long)steps * BS < test.n ? steps * BS : test.n;
  double *train_loss = xcalloc((size_t)epochs, sizeof(double));
  double *val_loss = xcalloc((size_t)epochs, sizeof(double));
  double *val_acc = xcalloc((size_t)epochs, sizeof(double));
  SGD trainer = {.ps = &ps, .lr = cfg.lr};
  static const char *const legend[3] = {"train_loss", "val_loss", "val_acc"};
  char *curve_base = path_join(args.out, "vit_training");
  /* x from 0 to the last epoch; a run cut short by --steps ends inside the first epoch, so
   * its x range is left to the data */
  const double x_end = steps > 0 && steps < (long)batches_per_epoch * epochs ? NAN : epochs;
  Animator *animator =
      animator_new(curve_base, "epoch", "loss, accuracy", legend, 3, 0, x_end, false, 1);
  double train_time = 0, train_flops = 0; /* train_flops: of the matrix products (gemm_flops) */
  double first_step_time = 0;              /* it pays for the arenas' first touch */
  long first_step_images = 0;
  long train_images = 0, step = 0;
  int epochs_done = 0;
  ViTStep *stepper = vit_step_new(&net, &ps, forward, vit_loss);
  /* a batch's images (BS, 1, S, S) and labels (BS) on the host, refilled every step */
  float *Xb = xmalloc(sizeof(float) * (size_t)BS * S * S), *yb = xmalloc(sizeof(float) * BS);
  for (int epoch = 0; epoch < epochs && (steps == 0 || step < steps); epoch++) {
    int *order = fashion_mnist_order(train.n, &g_rng);
    double loss_sum = 0, quarter_sum = 0;
    long seen = 0, quarter_seen = 0;
    double t0 = now_seconds(), f0 = gemm_flops();
    fashion_mnist_batch(&train, order, 0, BS < train.n ? BS : train.n, S, Xb, yb); /* the first */
    for (int bi = 0; bi < batches_per_epoch && (steps == 0 || step < steps); bi++, step++) {
      int start = bi * BS, bs = train.n - start < BS ? train.n - start : BS;
      paramset_zero_grad(&ps);
      /* forward, loss and backward of Xb (bs, 1, S, S), yb (bs) (how the batch runs:
       * vit_step.c); then SGD's step */
      vit_step_begin(stepper, Xb, yb, bs, 1, S);
      SGD_step(&trainer);
      /* the next batch is read and resized while a device still works on this one */
      const int next = start + BS;
      if (bi + 1 < batches_per_epoch && (steps == 0 || step + 1 < steps))
        fashion_mnist_batch(&train, order, next, train.n - next < BS ? train.n - next : BS, S, Xb,
                            yb);
      double lv = vit_step_end(stepper); /* the step's mean loss: its one wait for a device */
      ag_step_reset();
      backend_step_end(ps.device);
      if (step == 0) first_step_time = now_seconds() - t0, first_step_images = bs;
      /* @program begin */
      if (!isfinite(lv)) die("lab07: the training loss became %g at step %ld; lower --lr", lv, step);
      /* @program end */
      loss_sum += lv * bs;
      seen += bs;
      quarter_sum += lv * bs;
      quarter_seen += bs;
      /* the book's board plots the training loss a few times per epoch: here the means of
       * the epoch's four quarters (the last one is drawn with the validation points) */
      if (bi + 1 < batches_per_epoch &&
          (bi + 1) * 4 / batches_per_epoch != bi * 4 / batches_per_epoch) {
        double ys[3] = {quarter_sum / quarter_seen, NAN, NAN};
        animator_add(animator, epoch + (double)(bi + 1) / batches_per_epoch, ys);
        quarter_sum = 0, quarter_seen = 0;
      }
    }
    double dt = now_seconds() - t0;
    train_flops += gemm_flops() - f0;
    free(order); /* @program */
    train_time += dt;
    train_images += seen;
    EvalResult ev = evaluate(&net, forward, &test, n_val, S, BS);
    train_loss[epoch] = loss_sum / (seen ? seen : 1);
    val_loss[epoch] = ev.loss;
    val_acc[epoch] = ev.acc;
    double ys[3] = {quarter_seen ? quarter_sum / quarter_seen : NAN, ev.loss, ev.acc};
    animator_add(animator, epoch + (double)seen / train.n, ys); /* < 1 epoch with --steps */
    epochs_done = epoch + 1;
    /* one throughput per run: every line shows the rate over all epochs so far */
    printf("epoch %d/%d: train loss %.4f, val loss %.4f, val acc %.4f, %.1f images/sec%s\n",
           epoch + 1, epochs, train_loss[epoch], ev.loss, ev.acc,
           train_time > 0 ? train_images / train_time : 0,
           n_val < test.n ? " (validation on a subset: --steps)" : "");
    fflush(stdout);
  }
  vit_step_free(stepper); /* @program */
  free(Xb);               /* @program */
  free(yb);               /* @program */
  figure_saved(curve_base, animator_close(animator));
  free(curve_base); /* @program */
  const double ips = train_time > 0 ? train_images / train_time : 0;
  const Device dv = tensor_default_device();
  printf("%ld training images in %.1f s: %.1f images/sec on %s (%s GEMM)\n"
         "(images/sec: training images per second inside the training loop, validation "
         "excluded, over all epochs)\n",
         train_images, train_time, ips, device_name(dv), dv == DEV_CUDA ? "cuBLAS" : gemm_backend());
  if (train_time > 0)
    printf("matrix products: %.1f GFLOP in %.2f s of training, %.1f GFLOP/s\n", train_flops * 1e-9,
           train_time, train_flops * 1e-9 / train_time);

  /***
With the default preset and seed the validation accuracy is about
[0.78]{.run out="val acc 0.78"} after one epoch (the run above), 0.81 after two and 0.86
after ten; the training loss falls steadily and the validation loss follows
it, so the small model is not overfitting yet. On a data set this small the ViT does not beat
the convolutional networks of the book's earlier chapters (ResNet passes 0.9 on Fashion-MNIST):
a Transformer lacks the built-in translation invariance and locality of convolutions and has to
learn them from data. The book's point is the other side of this trade: with much more data,
that flexibility pays off, and ViTs scale better than CNNs.

With `--preset d2l` the first SGD steps at learning rate 0.1 overshoot: the training loss jumps
far above its starting $\log 10 \approx 2.3$ before it comes down (the book's PyTorch code does
the same on the same data), and after about 160 steps the validation accuracy is near 0.4 and
climbing. A smaller `--lr` or a warm-up would smooth the start.

## Beyond the Book: Predictions and Where `<cls>` Looks

First, the first test images in gray, each titled with its true and its predicted label, as
the book's `predict_ch3` shows them with `show_images`. Then the attention
weights of the `<cls>` query over the patches in the first and the last block, averaged over
the heads and laid out on the patch grid (each patch drawn as its $p \times p$ pixels, so the
map lines up with the image above it): this is what the classification token gathers
its summary from. Each map is divided by its maximum so that images and maps share one color
scale.
  */
  const int ns = n_show, g = cfg.img_size / cfg.patch_size, np = g * g;
  float *imgs = xmalloc(sizeof(float) * (size_t)ns * S * S);
  float *ylab = xmalloc(sizeof(float) * (size_t)ns);
  fashion_mnist_batch(&test, NULL, 0, ns, S, imgs, ylab);
  int pred[12];
  float *att = xcalloc((size_t)cfg.num_blks * ns * np, sizeof(float)); /* (blocks, ns, g*g) */
  {
    ag_set_grad_enabled(false);
    Tensor *Xt = tensor_from(4, (const int[]){ns, 1, S, S}, imgs);
    Tensor *logits = NEED(forward(&net, Xt, false), "predicting"); /* (ns, 10) */
    const float *lg = host_read(logits);
    for (int b = 0; b < ns; b++) {
      const float *row = lg + (long)b * 10;
      pred[b] = 0;
      for (int c = 1; c < 10; c++)
        if (row[c] > row[pred[b]]) pred[b] = c;
    }
    const int H = cfg.num_heads, steps_n = np + 1;
    for (int k = 0; k < cfg.num_blks; k++) {
      /* (ns*H, n+1, n+1); the last block's (ns*H, 1, n+1) where it computes the <cls> query only */
      const Tensor *Wt = net.blks[k].attention.attention.attention_weights;
      const float *W = host_read(Wt);
      const int nq = Wt->shape[1];
      for (int b = 0; b < ns; b++) {
        float *a = att + ((long)k * ns + b) * np, mx = 0;
        for (int h = 0; h < H; h++) /* query 0 (<cls>), keys 1..np (the patches) */
          for (int j = 0; j < np; j++)
            a[j] += W[((long)(b * H + h) * nq + 0) * steps_n + 1 + j] / H;
        for (int j = 0; j < np; j++) mx = fmaxf(mx, a[j]);
        for (int j = 0; j < np; j++) a[j] = mx > 0 ? a[j] / mx : 0;
      }
    }
    ag_step_reset();
    ag_set_grad_enabled(true);
  }
  /* predictions: up to 4 panels per row; a blank panel fills the last row */
  int n_right = 0;
  const int pcols = ns <= 4 ? ns : (ns + 1) / 2 <= 4 ? (ns + 1) / 2 : 4;
  const int prows = (ns + pcols - 1) / pcols;
  char titles[3 * 12][64];
  HeatMap maps[3 * 12];
  float *blank = xmalloc(sizeof(float) * (size_t)S * S); /* NaN: drawn as nothing */
  for (int i = 0; i < S * S; i++) blank[i] = NAN;
  for (int b = 0; b < prows * pcols; b++) {
    if (b >= ns) {
      maps[b] = (HeatMap){NULL, blank, S, S};
      continue;
    }
    const char *pl = fashion_mnist_text_labels[pred[b]], *tl = fashion_mnist_text_labels[(int)ylab[b]];
    n_right += pred[b] == (int)ylab[b];
    /* two lines, as d2l's predict_ch3 titles them (true, then predicted), each named */
    snprintf(titles[b], sizeof titles[b], "true: %s\npred: %s", tl, pl);
    maps[b] = (HeatMap){titles[b], imgs + (long)b * S * S, S, S};
    printf("test image %d: predicted %s, true %s\n", b, pl, tl);
  }
  {
    char *base = path_join(args.out, "predictions");
    figure_saved(base, plot_images(base, maps, prows, pcols, 0, 0));
    free(base); /* @program */
  }
  /* <cls> attention: rows are the images, then the first and the last block's map, each patch
   * drawn as its p x p block of pixels so that maps and images line up */
  const int rows = 1 + (cfg.num_blks < 2 ? cfg.num_blks : 2), p = cfg.patch_size;
  float *up = xmalloc(sizeof(float) * (size_t)(rows - 1) * ns * S * S);
  for (int b = 0; b < ns; b++)
    maps[b] = (HeatMap){fashion_mnist_text_labels[(int)ylab[b]], imgs + (long)b * S * S, S, S};
  for (int k = 0; k < rows - 1; k++) {
    int blk = k == 0 ? 0 : cfg.num_blks - 1; /* first and last block */
    for (int b = 0; b < ns; b++) {
      const float *a = att + ((long)blk * ns + b) * np;
      float *u = up + ((long)k * ns + b) * S * S;
      for (int r = 0; r < S; r++)
        for (int c = 0; c < S; c++) u[r * S + c] = a[(r / p) * g + c / p];
      char *t = titles[(k + 1) * 12 + b];
      snprintf(t, 64, "block %d", blk + 1);
      maps[(k + 1) * ns + b] = (HeatMap){t, u, S, S};
    }
  }
  {
    char *base = path_join(args.out, "cls_attention");
    /* one bar, two meanings: say both (each attention map is scaled to its own maximum) */
    figure_saved(base, plot_heatmaps_cb(base, maps, rows, ns, NULL, NULL,
                                        "pixel value; attention / map's max", "Reds", 0, 0));
    free(base); /* @program */
  }
  /* @program begin */
  free(up);
  free(blank);
  /* @program end */

  /***
How to read the maps: in the first block the `<cls>` query is the same vector for every image
(the learned token plus its position, normalized), so only the patches' keys differ, and the
attention goes wherever the keys happen to match that one query — in this run (seed 42) often
to background and border patches. By the last block the `<cls>` token has already gathered
information about the image, its query differs per image, and the attention moves onto the
garment: the shaft and heel of the boot, the patches between the trouser legs, a sleeve of
the pullover. Attention maps are a hint of what the model uses, not an explanation; try other
`--seed` values and more `--show` images before reading too much into one picture.

  */
  {
    /* @program begin */
    Summary *S = summary_new("lab07", args.seed);
    summary_str(S, "device", device_name(tensor_default_device()));
    summary_str(S, "preset", cfg.name);
    summary_int(S, "img_size", cfg.img_size);
    summary_int(S, "patch_size", cfg.patch_size);
    summary_int(S, "batch_size", BS);
    summary_str(S, "readout", mean_pool ? "mean" : "cls");
    summary_int(S, "parameters", paramset_count(&ps));
    summary_int(S, "steps", step);
    summary_doubles(S, "train_loss", train_loss, epochs_done);
    summary_doubles(S, "val_loss", val_loss, epochs_done);
    summary_doubles(S, "val_acc", val_acc, epochs_done);
    summary_int(S, "val_images", n_val);
    summary_num(S, "images_per_sec", ips);
    summary_num(S, "train_seconds", train_time);
    /* @program end */
    /* after the first step, as benchmarks time PyTorch after its warm-up steps (bench-vs-torch) */
    /* @program begin */
    summary_num(S, "images_per_sec_after_first_step",
                step > 1 ? (train_images - first_step_images) / (train_time - first_step_time) : NAN);
    summary_str(S, "gemm", gemm_backend());
    summary_int(S, "peak_rss_kb", peak_rss_kb());
    summary_int(S, "shown_correct", n_right);
    summary_int(S, "shown", ns);
    summary_write(S, args.out);
    /* @program end */
  }
  printf("peak RSS: %ld kB\n", peak_rss_kb());

  /***
## Summary

* The Vision Transformer turns an image into a sequence: $p \times p$ patches, each flattened
  and linearly projected (a stride-$p$ convolution), plus a learned `<cls>` token and learned
  positional embeddings.
* Its encoder blocks are pre-norm: layer norm before multi-head attention and before the MLP
  (dense–GELU–dropout–dense–dropout), with the residual stream left unnormalized.
* The `<cls>` output, normalized and projected, gives the class; its attention over the
  patches shows what the summary is made of.
* Without the convolutional prior, a small ViT on a small data set does not beat a CNN; the
  strength of Transformers is how they scale with data and model size.

## Exercises

1. How does the image size affect training time? Run `./lab07 --img-size 56` (and 14, 84) and
   compare images/sec: the number of patches grows with the square of the side, and attention
   with the square of the number of patches. Which part of a step grows fastest?
2. Instead of the `<cls>` output, classify the mean of the patch outputs
   (`./lab07 --mean-pool`). Compare the accuracy curves. Does `<cls>` earn its keep?
3. (Graded, `make grade LAB=07`) Exercises 7.1 `PatchEmbedding_forward`, 7.2
   `ViTBlock_forward`, 7.3 `vit_add_cls_and_positions`, 7.4 `ViTMLP_forward` and 7.5
   `ViT_head` in `labs/lab07/`.
4. Change the patch size (`--patch 4` on 28 x 28 images gives 49 patches instead of 16, `--patch
   14` gives 4): how do accuracy and speed trade off?
  */
  /* @program begin */
  free(att);
  free(imgs);
  free(ylab);
  free(train_loss);
  free(val_loss);
  free(val_acc);
  fashion_mnist_free(&train);
  fashion_mnist_free(&test);
  ViT_free(&net);
  paramset_free(&ps);
  tensor_shutdown();
  return 0;
}
/* @program end */
