#!/usr/bin/env python3
"""funclen.py — functions longer than a limit in C, CUDA and C++ sources.

    python3 tests/tools/funclen.py [--max 80] [--allow-main GLOB] PATH...

PATH is a file or a folder (searched for *.c, *.h, *.cu, *.cuh, *.cpp). Prints one line per
function over the limit, "file:line:name:length" (length in lines, from the line of the name to
the closing brace), and exits 1 when there is one. --allow-main GLOB exempts a function named
`main` in files matching GLOB (the chapters' literate mains).

How: comments, strings and character literals are blanked out (keeping line breaks), then every
top-level brace block whose opening brace follows a closing parenthesis, possibly with
qualifiers between (`) const {`, `) __attribute__((...)) {`), is a function body; its name is the
identifier before the parenthesis group. A block after `=`, `struct X`, `enum`, `extern "C"` or
a namespace is not a function; `extern "C" {`, namespaces, structs and classes are entered (their
member functions count), other blocks are not.
Preprocessor lines are blanked too, so a `#define` body never counts.
"""
import argparse
import fnmatch
import os
import re
import sys

EXTS = (".c", ".h", ".cu", ".cuh", ".cpp")


def blank(src):
    """src with comments, string/char literals and preprocessor lines replaced by spaces."""
    out = []
    i, n = 0, len(src)
    line_start = True
    while i < n:
        c = src[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # a directive, with its backslash continuations
            while i < n and src[i] != "\n":
                if src[i] == "\\" and i + 1 < n and src[i + 1] == "\n":
                    out.append(" \n")  # keep the line break
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = False
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
        elif src.startswith("//", i):
            while i < n and src[i] != "\n":
                out.append(" ")
                i += 1
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else " " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


QUALIFIERS = re.compile(r"\)\s*(?:(?:const|noexcept|override|final|volatile|__attribute__\s*\(\(.*?\)\))\s*)*$",
                        re.S)


def functions(path):
    """(name, first line, length) of each function body in the file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank(f.read())
    found = []
    depth = 0        # brace depth counted from the innermost scope that holds functions
    scopes = []      # stack: for each open brace, whether it is an entered scope
    start = None     # (name, line, offset) of the function body being read
    i = 0
    line = 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            if start is None and (not scopes or scopes[-1] == "scope"):
                head = text[max(0, i - 2000):i]
                m = QUALIFIERS.search(head)
                kind = "block"
                if m:
                    # the name before the matching "(" of the last parenthesis group
                    close = m.start()
                    d, k = 0, close
                    while k >= 0:
                        if head[k] == ")":
                            d += 1
                        elif head[k] == "(":
                            d -= 1
                            if d == 0:
                                break
                        k -= 1
                    nm = re.search(r"([A-Za-z_][A-Za-z_0-9:~]*)\s*$", head[:max(k, 0)])
                    before = head[:max(k, 0)].rstrip()
                    if nm and not re.search(r"(=|\breturn|\bsizeof)\s*[A-Za-z_0-9:~]*$", before) \
                            and nm.group(1) not in ("if", "for", "while", "switch", "catch"):
                        name = nm.group(1)
                        first = line - head[nm.start():].count("\n")
                        start = (name, first)
                        kind = "function"
                elif re.search(r"(\bextern\s*\"\s*\"|\b(namespace|struct|class|union)\b[^;{}()=]*)\s*$",
                               head):
                    kind = "scope"
                scopes.append(kind)
            else:
                scopes.append("inner")
        elif c == "}":
            if scopes:
                kind = scopes.pop()
                if kind == "function" and start:
                    found.append((start[0], start[1], line - start[1] + 1))
                    start = None
    return found


def sources(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for f in sorted(files):
                    if f.endswith(EXTS):
                        yield os.path.join(root, f)
        else:
            yield p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=80)
    ap.add_argument("--allow-main", action="append", default=[])
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    over = 0
    for path in sources(a.paths):
        for name, line, length in functions(path):
            if length <= a.max:
                continue
            if name == "main" and any(fnmatch.fnmatch(path, g) for g in a.allow_main):
                continue
            print(f"{path}:{line}:{name}:{length}")
            over += 1
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
