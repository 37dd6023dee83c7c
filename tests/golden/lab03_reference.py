#!/usr/bin/python3
"""Golden reference numbers for lab03's recurrent cells: one step of torch.nn.GRUCell and
torch.nn.LSTMCell (PyTorch's gate conventions: GRU [r | z | n] with r scaling W_hn h + b_hn;
LSTM [i | f | g | o]), forward and the gradients of sum(H' * w) w.r.t. x, h (and c) and the
weights.

Inputs are not random: entry i of each tensor is  scale * sin(a * i + b)  in double, rounded to
float32, so tests/unit/test_lab03.c regenerates them bit for bit. The C layer keeps
W_xh (input, G) and W_hh (H, G); torch keeps weight_ih (G, input): torch gets W.T.

Run with Debian's PyTorch:  /usr/bin/python3 tests/golden/lab03_reference.py
It writes tests/golden/lab03_reference.txt: one record per line, "name count v0 v1 ...".
"""
import os

import torch

from golden_common import gen, record

HERE = os.path.dirname(os.path.abspath(__file__))
B, IN, H = 3, 5, 4


def rec(out, name, t):
    out.append(record(name, t))


def cell(kind, out):
    G = (3 if kind == "gru" else 4) * H
    W_xh = gen((IN, G), 0.7, 0.1, 0.6)
    W_hh = gen((H, G), 1.3, 0.4, 0.6)
    b_xh = gen((G,), 0.9, 0.2, 0.3)
    b_hh = gen((G,), 1.7, 0.5, 0.3)
    x = gen((B, IN), 0.37, 0.3, 1.5).requires_grad_()
    h = gen((B, H), 0.53, 1.1, 0.9).requires_grad_()
    c = gen((B, H), 0.21, 0.7, 1.2).requires_grad_()
    w = gen((B, H), 0.61, 0.0, 1.0)
    m = torch.nn.GRUCell(IN, H) if kind == "gru" else torch.nn.LSTMCell(IN, H)
    with torch.no_grad():
        m.weight_ih.copy_(W_xh.T)
        m.weight_hh.copy_(W_hh.T)
        m.bias_ih.copy_(b_xh)
        m.bias_hh.copy_(b_hh)
    if kind == "gru":
        hn = m(x, h)
        loss = (hn * w).sum()
    else:
        hn, cn = m(x, (h, c))
        loss = (hn * w).sum() + (cn * w).sum() * 0.5
        rec(out, kind + "_c", cn)
    loss.backward()
    rec(out, kind + "_h", hn)
    rec(out, kind + "_dx", x.grad)
    rec(out, kind + "_dh", h.grad)
    if kind == "lstm":
        rec(out, kind + "_dc", c.grad)
    rec(out, kind + "_dW_xh", m.weight_ih.grad.T)
    rec(out, kind + "_dW_hh", m.weight_hh.grad.T)
    rec(out, kind + "_db_hh", m.bias_hh.grad)


def main():
    out = ["# lab03 golden numbers from torch %s (tests/golden/lab03_reference.py)" % torch.__version__]
    cell("gru", out)
    cell("lstm", out)
    with open(os.path.join(HERE, "lab03_reference.txt"), "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
