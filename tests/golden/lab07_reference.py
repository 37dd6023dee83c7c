#!/usr/bin/python3
"""Golden reference numbers for lab07 (the Vision Transformer), from the book's PyTorch code
(d2l "Transformers for Vision"), re-typed here so that no d2l package is needed.

A tiny ViT (8x8 one-channel images, patches of 4, 8 hiddens, MLP 12, 2 heads, 2 blocks, no
dropout, 10 classes) with deterministic weights: parameter j, in the order
tests/unit/test_lab07.c's ViT_init registers them, is gen(shape, 0.3 + 0.07 j, 0.1 j, 0.5) in
OUR layout (a C Linear keeps W as (in, out), the patch projection as (C*p*p, out) with rows
ordered (c, i, j)); torch gets the transposes. gen(shape, a, b, scale)[i] = scale*sin(a*i + b)
in double rounded to float32. Images gen((2,1,8,8), 0.23, 0.1, 1), labels [3, 7].

Writes tests/golden/lab07_reference.txt: records "name count v0 v1 ...": the logits, the mean
cross-entropy, the last block's attention weights and every parameter's gradient (our layout);
and one bilinear resize (F.interpolate, align_corners=False).
Run with Debian's PyTorch:  /usr/bin/python3 tests/golden/lab07_reference.py
"""
import os

import torch
from torch import nn

from golden_common import MultiHeadAttention, gen, record

HERE = os.path.dirname(os.path.abspath(__file__))
IMG, PATCH, HID, MLP, HEADS, BLKS, CLASSES, BATCH = 8, 4, 8, 12, 2, 2, 10, 2


# ---------------------------------------------------------------- the book's layers
class PatchEmbedding(nn.Module):
    def __init__(self, img_size, patch_size, num_hiddens):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.conv = nn.Conv2d(1, num_hiddens, kernel_size=patch_size, stride=patch_size)

    def forward(self, X):
        # (batch, num_hiddens, grid, grid) -> (batch, num_patches, num_hiddens)
        return self.conv(X).flatten(2).transpose(1, 2)


class ViTMLP(nn.Module):
    def __init__(self, mlp_num_hiddens, mlp_num_outputs, dropout=0.5):
        super().__init__()
        self.dense1 = nn.Linear(HID, mlp_num_hiddens)
        self.gelu = nn.GELU()
        self.dropout1 = nn.Dropout(dropout)
        self.dense2 = nn.Linear(mlp_num_hiddens, mlp_num_outputs)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout2(self.dense2(self.dropout1(self.gelu(self.dense1(x)))))


class ViTBlock(nn.Module):
    def __init__(self, num_hiddens, norm_shape, mlp_num_hiddens, num_heads, dropout,
                 use_bias=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(norm_shape)
        self.attention = MultiHeadAttention(num_hiddens, num_hiddens, num_hiddens, num_hiddens,
                                            num_heads, dropout, use_bias)
        self.ln2 = nn.LayerNorm(norm_shape)
        self.mlp = ViTMLP(mlp_num_hiddens, num_hiddens, dropout)

    def forward(self, X, valid_lens=None):
        X = X + self.attention(*([self.ln1(X)] * 3), valid_lens)
        return X + self.mlp(self.ln2(X))


class ViT(nn.Module):
    def __init__(self, img_size, patch_size, num_hiddens, mlp_num_hiddens, num_heads,
                 num_blks, emb_dropout, blk_dropout, use_bias=False, num_classes=10):
        super().__init__()
        self.patch_embedding = PatchEmbedding(img_size, patch_size, num_hiddens)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, num_hiddens))
        num_steps = self.patch_embedding.num_patches + 1
        self.pos_embedding = nn.Parameter(torch.randn(1, num_steps, num_hiddens) * 0.02)
        self.dropout = nn.Dropout(emb_dropout)
        self.blks = nn.Sequential()
        for i in range(num_blks):
            self.blks.add_module(f"{i}", ViTBlock(num_hiddens, num_hiddens, mlp_num_hiddens,
                                                  num_heads, blk_dropout, use_bias))
        self.head = nn.Sequential(nn.LayerNorm(num_hiddens), nn.Linear(num_hiddens, num_classes))

    def forward(self, X):
        X = self.patch_embedding(X)
        X = torch.cat((self.cls_token.expand(X.shape[0], -1, -1), X), 1)
        X = self.dropout(X + self.pos_embedding)
        for blk in self.blks:
            X = blk(X)
        return self.head(X[:, 0])


def main():
    torch.manual_seed(0)
    net = ViT(IMG, PATCH, HID, MLP, HEADS, BLKS, 0.0, 0.0, False, CLASSES)
    net.eval()
    # (torch tensor, our shape, how ours maps to torch) in the C ParamSet order
    conv = net.patch_embedding.conv
    params = [(conv.weight, (PATCH * PATCH, HID), "conv"), (conv.bias, (HID,), "same"),
              (net.cls_token, (1, 1, HID), "same"), (net.pos_embedding, (1, 5, HID), "same")]
    for blk in net.blks:
        params += [(blk.ln1.weight, (HID,), "same"), (blk.ln1.bias, (HID,), "same")]
        for lin in (blk.attention.W_q, blk.attention.W_k, blk.attention.W_v, blk.attention.W_o):
            params.append((lin.weight, (HID, HID), "T"))
        params += [(blk.ln2.weight, (HID,), "same"), (blk.ln2.bias, (HID,), "same"),
                   (blk.mlp.dense1.weight, (HID, MLP), "T"), (blk.mlp.dense1.bias, (MLP,), "same"),
                   (blk.mlp.dense2.weight, (MLP, HID), "T"), (blk.mlp.dense2.bias, (HID,), "same")]
    params += [(net.head[0].weight, (HID,), "same"), (net.head[0].bias, (HID,), "same"),
               (net.head[1].weight, (HID, CLASSES), "T"), (net.head[1].bias, (CLASSES,), "same")]
    with torch.no_grad():
        for j, (p, shape, how) in enumerate(params):
            ours = gen(shape, 0.3 + 0.07 * j, 0.1 * j, 0.5)
            if how == "T":
                p.copy_(ours.t())
            elif how == "conv":  # (C*p*p, out) -> (out, C, p, p)
                p.copy_(ours.t().reshape(HID, 1, PATCH, PATCH))
            else:
                p.copy_(ours.reshape(p.shape))
    X = gen((BATCH, 1, IMG, IMG), 0.23, 0.1, 1.0)
    y = torch.tensor([3, 7])
    logits = net(X)
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()
    att = net.blks[1].attention.attention.attention_weights  # (batch*heads, 5, 5)

    def ours_grad(p, how):
        g = p.grad
        if how == "T":
            return g.t()
        if how == "conv":
            return g.reshape(HID, -1).t()
        return g

    lines = ["# lab07 golden numbers, written by tests/golden/lab07_reference.py (torch %s); read "
             "by tests/unit/test_lab07.c." % torch.__version__,
             "# tiny ViT: img 8, patch 4, hidden 8, mlp 12, 2 heads, 2 blocks, no dropout, 10 "
             "classes; param j = gen(our shape, 0.3 + 0.07 j, 0.1 j, 0.5); images "
             "gen((2,1,8,8), 0.23, 0.1, 1); labels [3, 7]"]

    def rec(name, t):
        lines.append(record(name, t))

    rec("logits", logits)
    rec("loss", loss.reshape(1))
    rec("attention_last", att)
    for j, (p, shape, how) in enumerate(params):
        rec("grad.%d" % j, ours_grad(p, how).contiguous())
    # bilinear resize, align_corners=False (the torchvision pipeline's rule), up in one axis and
    # down in the other: gen((5, 7), 0.37, 0.2, 1) -> (9, 4)
    img = gen((1, 1, 5, 7), 0.37, 0.2, 1.0)
    rec("resize_5x7_to_9x4", nn.functional.interpolate(img, size=(9, 4), mode="bilinear",
                                                       align_corners=False))
    with open(os.path.join(HERE, "lab07_reference.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", os.path.join(HERE, "lab07_reference.txt"))


if __name__ == "__main__":
    main()
