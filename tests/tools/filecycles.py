#!/usr/bin/env python3
"""filecycles.py — circles of calls between the source files of a library, from its objects.

    python3 tests/tools/filecycles.py OBJ...

Reads each object's defined and undefined global symbols (nm), draws an edge A -> B when A
needs a symbol B defines, and prints each circle (a strongly connected group of two or more
files) as "a.o -> b.o -> a.o" with the symbols on the way; exits 1 when there is one.
"""
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind == "U":
            needed.add(name)
        elif kind.isupper() or kind in "uvw":
            defined.add(name)
    return defined, needed


def main(objs):
    owner, needs = {}, {}
    for o in objs:
        d, n = symbols(o)
        needs[o] = n
        for s in d:
            owner.setdefault(s, o)
    edges = {o: {} for o in objs}
    for o in objs:
        for s in needs[o]:
            t = owner.get(s)
            if t and t != o:
                edges[o].setdefault(t, []).append(s)
    # Tarjan's strongly connected components
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in objs:
        if v not in index:
            visit(v)
    for comp in comps:
        members = set(comp)
        print("circle: " + ", ".join(comp))
        for a in comp:
            for b, syms in sorted(edges[a].items()):
                if b in members:
                    print(f"  {a} -> {b}: {' '.join(sorted(syms)[:4])}")
    return 1 if comps else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
