#!/usr/bin/python3
"""PyTorch's time per training step for the book's large presets, to compare with the kit's
(make bench-lab03 / bench-lab06 / bench-lab07 print the kit's side). The models are the book's
own definitions as re-written in tests/golden (lab03_torch_seeds.py for the Bahdanau GRU model,
lab06_reference.py for the Transformer, lab07_reference.py for the ViT), at the preset's sizes:

  lab03-d2l10  GRU encoder-decoder + additive attention, embed/hidden 256, 2 layers, dropout 0.2,
               batch 128, 9 steps, vocabularies 194 / 214 (the kit's d2l-1.0 data), Adam, clip 1
  lab06-d2l10  Transformer d 256, FFN 64, 4 heads, 2 blocks, dropout 0.2, batch 128, 9 steps,
               vocabularies 194 / 214, Adam, clip 1
  lab07-d2l    ViT 96x96, patch 16, width 512, MLP 2048, 8 heads, 2 blocks, batch 128, SGD 0.1

and the small ("classic", d2l-0.17 / the lab07 CPU preset) sizes of issue 14, where framework
overhead rather than arithmetic sets the pace:

  lab03-classic  the same GRU model at embed/hidden 32, dropout 0.1, batch 64, 10 steps,
                 vocabularies 184 / 201, loss summed over the batch (d2l 0.17), Adam 0.005
  lab06-classic  the same Transformer at d 32, FFN 64, 4 heads, dropout 0.1, batch 64, 10 steps
  lab07-cpu      ViT 28x28, patch 7, width 64, MLP 128, 4 heads, 2 blocks, batch 128, SGD 0.1

Batches are random token ids / images of the real shapes (valid lengths uniform in [3, 9]):
the time per step depends on the shapes only. The kit's d2l-1.0 epoch is 4 such steps
(512 training pairs / 128), so "s/epoch" below is 4 x the median step time.

TORCH_DEVICE=cuda runs them on the GPU (make gpu-report; needs a PyTorch with set_default_device,
2.0 or later). Run with Debian's PyTorch, on every core (TORCH_THREADS=N for another count), as
the issues measured it:
  OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 tests/bench/torch_step_time.py lab03-d2l10 [STEPS]
"""
import math
import os
import statistics
import sys
import time

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))


DEVICE = os.environ.get("TORCH_DEVICE", "cpu")


def sync():
    if DEVICE == "cuda":  # a step's kernels run asynchronously: wait for them before reading the clock
        torch.cuda.synchronize()


def step_timer(net, opt, batch_fn, loss_fn, steps, clip):
    times = []
    for i in range(steps + 2):  # two warm-up steps
        args = batch_fn()
        sync()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(net, *args)
        loss.backward()
        if clip:
            nn.utils.clip_grad_norm_(net.parameters(), clip)
        opt.step()
        sync()
        if i >= 2:
            times.append(time.perf_counter() - t0)
    return times


def seq_batch(sv, tv, B=128, T=9):
    X = torch.randint(0, sv, (B, T))
    Y = torch.randint(0, tv, (B, T))
    vl = torch.randint(3, T + 1, (B,))
    return X, Y, vl


def lab03(steps, classic=False):
    import lab03_torch_seeds as m
    m.EMBED, m.HIDDEN, m.LAYERS, m.DROPOUT = (32, 32, 2, 0.1) if classic else (256, 256, 2, 0.2)
    sv, tv = (184, 201) if classic else (194, 214)
    B, T = (64, 10) if classic else (128, 9)
    net = m.EncoderDecoder(m.Seq2SeqEncoder(sv), m.Seq2SeqAttentionDecoder(tv))
    net.apply(m.xavier_init_weights)
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=0.005)

    def loss_fn(net, X, Y, vl):
        out, _ = net(X, Y, vl)
        w = m.sequence_mask(torch.ones_like(Y, dtype=torch.float32), vl)
        l = nn.functional.cross_entropy(out.permute(0, 2, 1), Y, reduction="none")
        if classic:  # d2l 0.17: MaskedSoftmaxCELoss (mean over steps), then l.sum()
            return (l * w).mean(dim=1).sum()
        return (l * w).sum() / w.sum()  # d2l 1.0: mean over the valid tokens
    return step_timer(net, opt, lambda: seq_batch(sv, tv, B, T), loss_fn, steps, 1.0)


def lab06(steps, classic=False):
    import lab06_reference as m
    sv, tv = (184, 201) if classic else (194, 214)
    m.SRC_V, m.TGT_V, m.D, m.FFN, m.HEADS, m.BLKS = sv, tv, 32 if classic else 256, 64, 4, 2
    B, T = (64, 10) if classic else (128, 9)
    m.P = m.pos_table()  # the module built it for its own width at import
    net = m.Transformer()
    for mod in net.modules():  # the book's dropout (the golden file uses 0)
        if isinstance(mod, nn.Dropout):
            mod.p = 0.1 if classic else 0.2
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=0.005 if classic else 0.001)

    def loss_fn(net, X, Y, vl):
        enc = net.encode(X, vl)
        state = [enc, vl, [None] * m.BLKS]
        out, _ = net.decode(Y, state)
        w = (torch.arange(Y.shape[1])[None, :] < vl[:, None]).float()
        l = nn.functional.cross_entropy(out.permute(0, 2, 1), Y, reduction="none")
        if classic:
            return (l * w).mean(dim=1).sum()
        return (l * w).sum() / w.sum()
    return step_timer(net, opt, lambda: seq_batch(sv, tv, B, T), loss_fn, steps, 1.0)


def lab07(steps, cpu_preset=False):
    import lab07_reference as m
    img, patch, hid, mlp, heads = (28, 7, 64, 128, 4) if cpu_preset else (96, 16, 512, 2048, 8)
    m.IMG, m.PATCH, m.HID, m.MLP, m.HEADS = img, patch, hid, mlp, heads  # globals layers read
    net = m.ViT(img, patch, hid, mlp, heads, 2, 0.1, 0.1, False, 10)
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)

    def loss_fn(net, X, y):
        return nn.functional.cross_entropy(net(X), y)
    return step_timer(net, opt, lambda: (torch.randn(128, 1, img, img), torch.randint(0, 10, (128,))),
                      loss_fn, steps, 0)


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "lab03-d2l10"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    torch.manual_seed(0)
    if DEVICE != "cpu":
        if not hasattr(torch, "set_default_device"):
            sys.exit(f"torch_step_time.py: TORCH_DEVICE={DEVICE} needs PyTorch 2.0 or later "
                     f"(this is {torch.__version__})")
        if DEVICE == "cuda" and not torch.cuda.is_available():
            sys.exit("torch_step_time.py: TORCH_DEVICE=cuda but torch.cuda.is_available() is False")
        torch.set_default_device(DEVICE)  # every tensor the book's models create lands there
    # Debian's build reports 1 OpenMP thread on this machine unless told: use every core, as
    # PyTorch does by default elsewhere (TORCH_THREADS=N to choose)
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", os.cpu_count())))
    fns = {"lab03-d2l10": lab03, "lab06-d2l10": lab06, "lab07-d2l": lab07,
           "lab03-classic": lambda n: lab03(n, True), "lab06-classic": lambda n: lab06(n, True),
           "lab07-cpu": lambda n: lab07(n, True)}
    if what not in fns:
        sys.exit(f"torch_step_time.py: unknown workload '{what}' ({', '.join(fns)})")
    t = fns[what](steps)
    med = statistics.median(t)
    # an epoch: 4 steps at d2l-1.0 (512 pairs / 128); 10 classic steps (600 pairs / 64, the
    # last batch partial: at these sizes a step costs the same whatever its batch)
    if what.startswith("lab07"):
        extra = f", {128 / med:.1f} images/sec"
    else:
        extra = f", {(10 if 'classic' in what else 4) * med:.3f} s/epoch"
    where = f"{torch.get_num_threads()} threads" if DEVICE == "cpu" else DEVICE
    print(f"PyTorch {torch.__version__} {what}: {where}, median step "
          f"{med * 1000:.1f} ms over {len(t)} steps (min {min(t) * 1000:.1f}, max "
          f"{max(t) * 1000:.1f}){extra}")


if __name__ == "__main__":
    main()
