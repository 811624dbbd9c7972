#!/usr/bin/env python3
# sizes_trend.py - an independent count for `stats --by length` and
# `heapdump trend`, written with Python's json module over the raw dumps
# (plain or gzip; the first record of an address counts, SHAPE and ROOT
# lines do not).
#
#   sizes_trend.py length DUMP           # [[type, bucket, count, memsize], ...]
#   sizes_trend.py trend CLASS,... D1 .. DN
#       # [[class, [counts], [memsizes], count_slope, memsize_slope, verdict]]
#
# The length of an object: a STRING's bytesize (a shared string has none),
# an ARRAY's length, a HASH's size, a STRUCT's member count when given;
# every other object, or one without the field, is in the bucket "-".
# Buckets: 0, 1, 2-3, 4-7, 8-15, ...
# Class names: the "name" of the CLASS record the object's "class" points
# to, or its "real_class_name" when it is a singleton class (only named
# classes are asked for). Slope: least squares over the
# steps 0..N-1. Verdict: every-step when the count or the memsize grows
# strictly at every step; else overall when either is larger in the last
# dump than in the first; else flat when both are equal; else shrinks.
import gzip
import json
import sys


def records(path):
    opener = gzip.open if path.endswith(".gz") else open
    seen = set()
    with opener(path, "rb") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line.decode("utf-8", "surrogateescape"),
                           strict=False)
            if "address" not in r or r.get("type") in ("SHAPE", "ROOT"):
                continue
            a = int(r["address"], 16)
            if a in seen:
                continue
            seen.add(a)
            yield r


def bucket(r):
    t = r["type"]
    n = None
    if t == "STRING" and not r.get("shared"):
        n = r.get("bytesize")
    elif t == "ARRAY":
        n = r.get("length")
    elif t == "HASH":
        n = r.get("size")
    elif t == "STRUCT" and r.get("length", 0) > 0:
        n = r["length"]
    if n is None:
        return "-"
    if n < 2:
        return str(n)
    lo = 1 << (n.bit_length() - 1)
    return "%d-%d" % (lo, 2 * lo - 1)


def length(path):
    acc = {}
    for r in records(path):
        k = (r["type"], bucket(r))
        c = acc.setdefault(k, [0, 0])
        c[0] += 1
        c[1] += r.get("memsize", 0)
    return sorted([k[0], k[1], v[0], v[1]] for k, v in acc.items())


def slope(ys):
    n = len(ys)
    mx = (n - 1) / 2.0
    my = sum(ys) / float(n)
    num = sum((x - mx) * (y - my) for x, y in enumerate(ys))
    den = sum((x - mx) ** 2 for x in range(n))
    return num / den


def verdict(cs, ms):
    def every(v):
        return all(v[i] < v[i + 1] for i in range(len(v) - 1))
    if every(cs) or every(ms):
        return "every-step"
    if cs[-1] > cs[0] or ms[-1] > ms[0]:
        return "overall"
    if cs[-1] == cs[0] and ms[-1] == ms[0]:
        return "flat"
    return "shrinks"


def num(x):
    x = round(x, 3)
    return int(x) if x == int(x) else x


def trend(classes, paths):
    counts = {c: [0] * len(paths) for c in classes}
    mems = {c: [0] * len(paths) for c in classes}
    for i, p in enumerate(paths):
        recs = list(records(p))
        # an object of a singleton class (an Array with singleton
        # methods) counts as its real class, as heapdump counts it
        names = {int(r["address"], 16): r.get("name") or
                 (r.get("real_class_name") if r.get("singleton") else None)
                 for r in recs if r["type"] == "CLASS"}
        for r in recs:
            if "class" not in r or r["type"] in ("CLASS", "MODULE", "ICLASS",
                                                  "IMEMO", "DATA"):
                continue
            n = names.get(int(r["class"], 16))
            if n in counts:
                counts[n][i] += 1
                mems[n][i] += r.get("memsize", 0)
    return [[c, counts[c], mems[c], num(slope(counts[c])),
             num(slope(mems[c])), verdict(counts[c], mems[c])]
            for c in classes]


if __name__ == "__main__":
    if sys.argv[1] == "length":
        print(json.dumps(length(sys.argv[2]), separators=(",", ":")))
    else:
        print(json.dumps(trend(sys.argv[2].split(","), sys.argv[3:]),
                         separators=(",", ":")))
