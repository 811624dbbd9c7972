#!/usr/bin/env python3
"""flame_paths.py - `heapdump flame --by path` frame totals against
`heapdump top`'s retained sizes, for tests/cli/flame.sh.

  flame_paths.py TOP_JSON DOMINATORS_NDJSON FOLDED N

TOP_JSON is `top -n 0 -f json`, DOMINATORS_NDJSON `dominators -n 0 -f
json` of every object top lists (its chain from the roots). Each
object's frame path is its chain's nodes, "Class" plus " (TYPE)" when
the type says more (top's rule); a frame may start with the name of the
reference that holds it. The total of the frames of a path P must be
the retained size of the objects whose path is P (they are disjoint
subtrees: an object at P dominated by another would have a longer
path), and at least the retained size of each of them: checked for the
first N objects of top. Prints a line per object; exit 1 on a mismatch.
"""
import json, sys
topf, domf, folded = sys.argv[1], sys.argv[2], sys.argv[3]
def node(o):
    c, t = o["class"], o["type"]
    adds = t != "OBJECT" and not c.startswith("(") and not c.startswith("IMEMO/") \
        and not c.startswith("DATA/") and c.lower() != t.lower()
    return c + (" (%s)" % t if adds else "")
lines = []
for l in open(folded):
    st, n = l.rstrip("\n").rsplit(" ", 1)
    lines.append((st.split(";"), int(n)))
def match(fr, p):
    return fr == p or fr.endswith(" " + p)
def folded_total(path):
    return sum(n for st, n in lines if len(st) >= len(path) and
               all(match(st[i], path[i]) for i in range(len(path))))
paths = {}
for l in open(domf):
    r = json.loads(l)
    if not r.get("reached"):
        continue
    ch = r["chain"]
    p = tuple(node(c["object"]) for c in ch)
    paths[p] = paths.get(p, 0) + ch[-1]["retained_memsize"]
top = json.load(open(topf))
bad = 0
for o in top["objects"][:int(sys.argv[4])]:
    a = o["object"]["address"]
    p = None
    for l in open(domf):
        r = json.loads(l)
        if r["target"] == a:
            p = tuple(node(c["object"]) for c in r["chain"])
            break
    got, want = folded_total(list(p)), paths[p]
    ok = got == want and got >= o["retained_memsize"]
    bad += not ok
    print("%s %s %d %d %d %s" % ("ok" if ok else "BAD", a, o["retained_memsize"], want, got, ";".join(p)))
sys.exit(1 if bad else 0)
