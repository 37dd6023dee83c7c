"""Helpers the golden scripts share: the Python side of tests/golden_io.h.

A golden text file holds '#' comment lines and records "name count v0 v1 ...", written with
%.9g so that every float32 reads back exactly. The scripts' inputs and weights are
gen(shape, a, b, scale)[i] = scale * sin(a i + b) in double, rounded to float32: the numbers
golden_gen() / golden_fill() make on the C side.
"""
import math

import torch


def gen(shape, a, b, scale):
    n = 1
    for s in shape:
        n *= s
    v = [scale * math.sin(a * i + b) for i in range(n)]
    return torch.tensor(v, dtype=torch.float32).reshape(shape)


def record(name, t):
    """One record line (no newline) for a tensor or a list of numbers."""
    v = t.detach().reshape(-1).tolist() if torch.is_tensor(t) else list(t)
    return "%s %d %s" % (name, len(v), " ".join("%.9g" % x for x in v))
