#!/usr/bin/env python3
"""flame_sites.py - what `heapdump flame --by site` must print, counted
from the dump's raw JSON alone (no heapdump code), for
tests/cli/flame.sh.

  flame_sites.py DUMP count|memsize [EXPECTED KEY]

One folded line per allocation site, "file:line in method N" (or
"(no site) N"), ';', control bytes and DEL as \\xHH: every object (ROOT
lines and 4.0's SHAPE records are none), the allocation tracer's and
dump_all's own left out (stats' rule, as dominators.sh writes it). With
EXPECTED (a data/dumps/*_expected.json) only the objects its KEY lists
(their records as DUMP has them).
"""
import json, sys
dump, metric = sys.argv[1], sys.argv[2]
only = None
if len(sys.argv) > 3:
    only = set(a for a, *_ in json.load(open(sys.argv[3]))[sys.argv[4]]["objects"])
def dumper(r):
    f = r.get("file") or ""
    return (r.get("type") == "DATA" and
            r.get("struct") == "ObjectTracing/allocation_info_tracer") or \
        r.get("method") in ("dump_all", "_dump_all") or \
        f == "objspace.rb" or f.endswith("/objspace.rb")
def esc(s):
    out = []
    for b in s.encode("utf-8", "surrogateescape"):
        out.append("\\x%02x" % b if b < 0x20 or b == 0x7f or b == 0x3b else chr(b) if b < 0x80 else bytes([b]).decode("utf-8", "surrogateescape"))
    return "".join(out)
sums = {}
for line in open(dump, encoding="utf-8", errors="surrogateescape"):
    r = json.loads(line, strict=False)  # 3.1 writes a file's tab raw
    # ROOT lines and 4.0's SHAPE records are no objects
    if r.get("type") in ("ROOT", "SHAPE") or "address" not in r or dumper(r):
        continue
    if only is not None and r["address"] not in only:
        continue
    if "file" in r:
        k = "%s:%d" % (r["file"], r.get("line", 0))
        if r.get("method"):
            k += " in " + r["method"]
    else:
        k = "(no site)"
    k = esc(k)
    sums[k] = sums.get(k, 0) + (1 if metric == "count" else r.get("memsize", 0))
for k, v in sorted(sums.items()):
    if v:
        sys.stdout.buffer.write((k + " %d\n" % v).encode("utf-8", "surrogateescape"))
