#!/usr/bin/env python3
"""strings_waste.py - an independent count of what `heapdump strings` and
`heapdump waste` report, straight from the raw JSON of a dump (plain or
gzip), sharing no code with heapdump.

  strings_waste.py strings DUMP [--by value|site|holder] [--min-count N]
  strings_waste.py waste DUMP

Prints one JSON document, the same shape as the fields of heapdump's
--format json that the tests compare (see tests/cli/strings_waste.sh).
The rules, written again from the man pages: objects allocated by
dump_all itself and the allocation tracer are left out; a string's group
is its value (JSON-unescaped), bytesize and encoding; a string without a
value has the value "" if its bytesize is 0 and no group otherwise;
shared strings have no group; the first copy in dump order is kept and
every later one is waste; a copy's holder is the class of the object of
lowest address that references it."""
import gzip
import json
import re
import sys
from collections import defaultdict


def records(path):
    op = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    last = None
    with op(path, "rb") as f:
        for line in f:
            try:
                r = json.loads(line.decode("utf-8", "surrogateescape"))
            except ValueError:
                # a line Ruby wrote as invalid JSON (a raw quote or
                # newline in a file name): its address, type and memsize
                a = re.search(rb'"address":"(0x[0-9a-f]+)"', line)
                t = re.search(rb'"type":"([A-Z]+)"', line)
                m = re.search(rb'"memsize":([0-9]+)', line)
                if a and t:
                    r = {"address": a.group(1).decode(), "type": t.group(1).decode()}
                    if m:
                        r["memsize"] = int(m.group(1))
                    last = r
                    yield r
                elif m and last is not None:
                    # the second half of a record split by a raw newline
                    last.setdefault("memsize", int(m.group(1)))
                continue
            last = r
            if isinstance(r, dict) and "address" in r and "type" in r:
                yield r


def is_dumper(r):
    if r["type"] == "DATA" and r.get("struct") == "ObjectTracing/allocation_info_tracer":
        return True
    if r.get("method") in ("dump_all", "_dump_all"):
        return True
    f = r.get("file", "")
    return f == "objspace.rb" or f.endswith("/objspace.rb")


def load(path):
    objs = [r for r in records(path) if r["type"] not in ("ROOT", "SHAPE")]
    return objs


def site(r):
    if "file" not in r:
        return None
    return {"file": r["file"], "line": r.get("line", 0)}


def groups_of(objs):
    """(key -> list of string records in dump order), and counts"""
    g = defaultdict(list)
    t = dict(strings=0, memsize=0, shared=0, no_value=0)
    for r in objs:
        if r["type"] != "STRING" or is_dumper(r):
            continue
        t["strings"] += 1
        t["memsize"] += r.get("memsize", 0)
        if r.get("shared"):
            t["shared"] += 1
            continue
        bs = r.get("bytesize")
        if "value" in r:
            v = r["value"]
            if bs is None:
                bs = len(v.encode("utf-8", "surrogateescape"))
        elif bs == 0:
            v = ""
        else:
            t["no_value"] += 1
            continue
        g[(v, bs, r.get("encoding", ""))].append(r)
    return g, t


def holder_names(objs):
    by_addr = {r["address"]: r for r in objs}
    held = {}
    for r in sorted(objs, key=lambda r: int(r["address"], 16)):
        for a in r.get("references", []):
            held.setdefault(a, r)

    def cls_name(r):
        t = r["type"]
        if t in ("CLASS", "MODULE") and "name" in r:
            return r["name"]
        if t == "IMEMO":
            return "IMEMO/" + r.get("imemo_type", "")
        c = by_addr.get(r.get("class"))
        if c is None:
            # a class-less DATA is named by its struct (VM/pin_array_list)
            if t == "DATA" and r.get("struct"):
                return "DATA/" + r["struct"]
            return "(hidden %s)" % t
        if "name" in c:
            return c["name"]
        if c["type"] == "CLASS":
            return "#<Class:0x%016x>" % int(c["address"], 16)
        return "?"

    return held, cls_name


def strings(path, by, min_count):
    objs = load(path)
    g, t = groups_of(objs)
    held, cls_name = holder_names(objs) if by == "holder" else (None, None)
    rows = []
    for (v, bs, enc), copies in g.items():
        if len(copies) < min_count:
            continue
        sub = defaultdict(lambda: dict(count=0, memsize=0, wasted_memsize=0))
        for i, r in enumerate(copies):
            if by == "site":
                k = json.dumps(site(r), sort_keys=True)
            elif by == "holder":
                h = held.get(r["address"])
                k = json.dumps(cls_name(h) if h is not None else None)
            else:
                k = "null"
            s = sub[k]
            s["count"] += 1
            s["memsize"] += r.get("memsize", 0)
            if i:
                s["wasted_memsize"] += r.get("memsize", 0)
        for k, s in sub.items():
            row = dict(value=v, bytesize=bs, encoding=enc, **s)
            if by != "value":
                row[by] = json.loads(k)
            rows.append(row)
    rep = [c for c in g.values() if len(c) >= 2]
    t["values"] = len(g)
    t["repeated"] = len(rep)
    t["wasted_memsize"] = sum(sum(r.get("memsize", 0) for r in c[1:]) for c in rep)
    rows.sort(key=lambda r: json.dumps(r, sort_keys=True))
    return dict(totals=t, rows=rows)


def sitekey(k):
    s = json.loads(k)
    if s is None:
        return (0, b"", 0)
    return (1, s["file"].encode("utf-8", "surrogateescape"), s["line"])


def waste(path):
    objs = [r for r in load(path) if not is_dumper(r)]
    cats = {c: dict(count=0, bytes=0, sites=defaultdict(lambda: [0, 0]))
            for c in ("empty-arrays", "empty-hashes", "string-capacity",
                      "array-capacity", "duplicate-strings", "frozen-duplicates")}

    def add(c, r, b):
        cats[c]["count"] += 1
        cats[c]["bytes"] += b
        s = cats[c]["sites"][json.dumps(site(r), sort_keys=True)]
        s[0] += 1
        s[1] += b

    for r in objs:
        m = r.get("memsize", 0)
        if r["type"] == "ARRAY":
            n = r.get("length", 0)
            if n == 0:
                add("empty-arrays", r, m)
            elif not r.get("embedded") and not r.get("shared"):
                word = 4 if int(r["address"], 16) <= 0xffffffff else 8
                extra = m - r.get("slot_size", 5 * word) - word * n
                if extra > 0 and extra % word == 0:
                    add("array-capacity", r, extra)
        elif r["type"] == "HASH" and r.get("size", 0) == 0:
            add("empty-hashes", r, m)
        elif r["type"] == "STRING" and not r.get("shared"):
            cap, bs = r.get("capacity"), r.get("bytesize")
            if cap is not None and bs is not None and cap > bs:
                add("string-capacity", r, cap - bs)
    g, _ = groups_of(objs)
    for copies in g.values():
        for r in copies[1:]:
            add("duplicate-strings", r, r.get("memsize", 0))
        fr = [r for r in copies if r.get("frozen")]
        for r in fr[1:]:
            add("frozen-duplicates", r, r.get("memsize", 0))
    out = {}
    for c, d in cats.items():
        top = sorted(d["sites"].items(), key=lambda kv: (-kv[1][1], -kv[1][0], sitekey(kv[0])))
        out[c] = dict(count=d["count"], bytes=d["bytes"],
                      top_site=(dict(site=json.loads(top[0][0]), count=top[0][1][0],
                                     bytes=top[0][1][1]) if top else None))
    heap = sum(r.get("memsize", 0) for r in objs)
    return dict(heap_memsize=heap, categories=out)


TOTALS = ("strings", "memsize", "shared", "no_value", "values", "repeated",
          "wasted_memsize")
ROW = ("value", "bytesize", "encoding", "count", "memsize", "wasted_memsize",
       "site", "holder")


def norm(doc):
    """heapdump's strings JSON in the shape strings() prints"""
    t = {k: doc["totals"][k] for k in TOTALS}
    rows = []
    for r in doc["rows"]:
        row = {k: r[k] for k in ROW if k in r}
        if "site" in row and row["site"] is not None:
            row["site"] = {"file": row["site"]["file"], "line": row["site"]["line"]}
        rows.append(row)
    rows.sort(key=lambda r: json.dumps(r, sort_keys=True))
    return dict(totals=t, rows=rows)


def norm_waste(doc):
    out = {}
    for c in doc["categories"]:
        s = c["sites"][0] if c["sites"] else None
        out[c["name"]] = dict(count=c["count"], bytes=c["bytes"],
                              top_site=(dict(site=s.get("site"), count=s["count"],
                                             bytes=s["bytes"]) if s else None))
    return dict(heap_memsize=doc["heap_memsize"], categories=out)


def main(argv):
    if argv[1] in ("norm", "norm-waste"):
        doc = json.load(sys.stdin)
        json.dump(norm(doc) if argv[1] == "norm" else norm_waste(doc),
                  sys.stdout, sort_keys=True)
        print()
        return
    cmd, path = argv[1], argv[2]
    by, min_count = "value", 2
    i = 3
    while i < len(argv):
        if argv[i] == "--by":
            by = argv[i + 1]
        elif argv[i] == "--min-count":
            min_count = int(argv[i + 1])
        i += 2
    res = strings(path, by, min_count) if cmd == "strings" else waste(path)
    json.dump(res, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv)
