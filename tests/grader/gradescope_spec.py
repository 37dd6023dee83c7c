#!/usr/bin/env python3
"""gradescope_spec.py RESULTS.json... — check results files against Gradescope's autograder
results specification (https://gradescope-autograders.readthedocs.io/en/latest/specs/): every
key is one the spec defines, with the spec's type or one of its values; plus what this kit
promises on top (tests/grade/grader.c): every test has name, number, score, max_score; the
visible tests are in number order and no number repeats; test_output_format, leaderboard and extra_data.tests_version are there.
Prints one line per problem; exit status 1 if there is any."""
import json
import sys

VIS = {"hidden", "after_due_date", "after_published", "visible"}
FMT = {"text", "html", "simple_format", "md", "ansi"}


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def string(v):
    return isinstance(v, str)


def one_of(values):
    return lambda v: isinstance(v, str) and v in values


TOP = {"score": num, "execution_time": num, "output": string, "output_format": one_of(FMT),
       "test_output_format": one_of(FMT), "test_name_format": one_of(FMT),
       "visibility": one_of(VIS), "stdout_visibility": one_of(VIS),
       "extra_data": lambda v: isinstance(v, dict), "tests": lambda v: isinstance(v, list),
       "leaderboard": lambda v: isinstance(v, list)}
TEST = {"score": num, "max_score": num, "status": one_of({"passed", "failed"}), "name": string,
        "name_format": one_of(FMT), "number": string, "output": string,
        "output_format": one_of(FMT), "tags": lambda v: isinstance(v, list) and all(map(string, v)),
        "visibility": one_of(VIS), "extra_data": lambda v: isinstance(v, dict)}
BOARD = {"name": string, "value": lambda v: num(v) or string(v), "order": one_of({"asc", "desc"})}


def check(obj, spec, where, problems):
    for k, v in obj.items():
        if k not in spec:
            problems.append("%s: key %r is not in Gradescope's specification" % (where, k))
        elif not spec[k](v):
            problems.append("%s: %r has the wrong type or value: %r" % (where, k, v))


def number_key(n):
    return tuple(int(p) for p in n.split("."))


def main(paths):
    problems = []
    for path in paths:
        try:
            r = json.load(open(path, encoding="utf-8"))
        except (OSError, ValueError) as e:
            problems.append("%s: not JSON: %s" % (path, e))
            continue
        if not isinstance(r, dict):
            problems.append("%s: not an object" % path)
            continue
        check(r, TOP, path, problems)
        for k in ("tests", "test_output_format", "leaderboard"):
            if k not in r:
                problems.append("%s: no %r" % (path, k))
        if "tests_version" not in r.get("extra_data", {}):
            problems.append("%s: extra_data has no tests_version" % path)
        numbers = []
        for i, t in enumerate(r.get("tests", [])):
            where = "%s: tests[%d]" % (path, i)
            if not isinstance(t, dict):
                problems.append(where + ": not an object")
                continue
            check(t, TEST, where, problems)
            for k in ("name", "number", "score", "max_score"):
                if k not in t:
                    problems.append("%s: no %r" % (where, k))
            try:
                numbers.append((number_key(t.get("number", "")), t.get("visibility", "visible")))
            except ValueError:
                problems.append("%s: number %r is not dotted integers" % (where, t.get("number")))
        # the visible tests in number order (hidden ones follow their lab's), every number once
        shown = [n for n, vis in numbers if vis == "visible"]
        if shown != sorted(shown) or len({n for n, _ in numbers}) != len(numbers):
            problems.append("%s: tests are not in increasing number order, or a number repeats" % path)
        for i, e in enumerate(r.get("leaderboard", []) if isinstance(r.get("leaderboard"), list) else []):
            where = "%s: leaderboard[%d]" % (path, i)
            if not isinstance(e, dict) or "name" not in e or "value" not in e:
                problems.append(where + ": wants an object with name and value")
            else:
                check(e, BOARD, where, problems)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
