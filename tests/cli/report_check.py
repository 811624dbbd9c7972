#!/usr/bin/env python3
"""report_check.py - reads the HTML of `heapdump report` with Python's
html.parser and compares it with the JSON of the commands whose numbers
it shows (tests/cli/report.sh). Prints "ok - report/NAME" or
"not ok - report/NAME: why" lines.

  report_check.py leak NAME HTML LEAKS.json DIFF_CLASS.json DIFF_LOC.json
  report_check.py one NAME HTML STATS.json TOP.json TOP_CLASS.json [SIDECAR_STATS.json]
  report_check.py safe NAME HTML [MARK...]   no markup but ours, no network,
                                             MARK shown as text
  report_check.py caveat NAME HTML KIND      li.caveat.KIND present
  report_check.py png NAME FILE.png          a PNG of more than one colour
"""
import json
import os
import re
import struct
import sys
import zlib
from html.parser import HTMLParser

SUITE = os.environ.get("SUITE", "report")
failures = 0


def ok(name):
    print("ok - %s/%s" % (SUITE, name))


def notok(name, why):
    global failures
    failures += 1
    print("not ok - %s/%s: %s" % (SUITE, name, str(why)[:400]))


def check(name, want, got):
    if want == got:
        ok(name)
    else:
        notok(name, "expected %r, got %r" % (want, got))


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag = tag
        self.attrs = dict(attrs)
        self.parent = parent
        self.children = []
        self.text = []  # data directly inside, in order

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def all_text(self):
        out = []
        for c in self.children:
            if isinstance(c, str):
                out.append(c)
            else:
                out.append(c.all_text())
        return "".join(out)

    def walk(self):
        yield self
        for c in self.children:
            if not isinstance(c, str):
                yield from c.walk()

    def find_all(self, tag=None, cls=None, id=None):
        for n in self.walk():
            if tag and n.tag != tag:
                continue
            if cls and cls not in n.classes():
                continue
            if id and n.attrs.get("id") != id:
                continue
            yield n

    def find(self, **kw):
        for n in self.find_all(**kw):
            return n
        return None

    def data(self):
        """The data elements below, by class: {key: [values]}."""
        d = {}
        for n in self.find_all(tag="data"):
            for c in n.classes():
                d.setdefault(c, []).append(n.attrs.get("value"))
        return d


VOID = {"meta", "br", "img", "hr", "input", "link", "area", "base", "col",
        "embed", "source", "track", "wbr", "param"}


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root
        self.tags = []       # every start tag, (tag, attrs)
        self.texts = []      # every text run

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        self.texts.append(data)
        self.cur.children.append(data)


def parse(path):
    with open(path, "rb") as f:
        raw = f.read()
    t = Tree()
    t.feed(raw.decode("utf-8"))
    t.close()
    t.raw = raw
    return t


def one(d, k):
    v = d.get(k)
    return None if v is None else v[0]


def num(v):
    return None if v is None else int(v)


def close(a, b):
    return a is not None and b is not None and abs(float(a) - float(b)) < 1e-4


def table_rows(t, tid, keys):
    """(key..., count, memsize) of a stats table, and its rows_total."""
    top = t.root if hasattr(t, "root") else t
    tab = top.find(id=tid)
    if tab is None:
        return None, None
    rows = []
    for tr in tab.find_all(tag="tr", cls="row"):
        ks = [td.all_text() for td in tr.find_all(tag="td", cls="key")]
        d = tr.data()
        rows.append(tuple(ks) + (num(one(d, "count")), num(one(d, "memsize"))))
    return rows, tab.attrs.get("data-rows-total")


def esc(s):
    """What heapdump's text escaper (cli_text_string) shows of s: C0
    controls, DEL and C1 controls as \\u00XX, bidi controls as \\u202a..."""
    if s is None:
        return None
    out = []
    for ch in s:
        o = ord(ch)
        if o < 0x20 or 0x7f <= o <= 0x9f or 0x202a <= o <= 0x202e or \
                0x2066 <= o <= 0x2069:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    return "".join(out)


def json_rows(rows, keys):
    return [tuple(esc(r[k]) for k in keys) + (r["count"], r["memsize"]) for r in rows]


# ---- leak ----

def leak(name, html, leaks_json, diffc_json, diffl_json):
    t = parse(html)
    L = json.load(open(leaks_json))
    v = t.root.find(id="verdict")
    if v is None:
        notok(name + "/verdict", "no section#verdict")
        return
    d = v.data()
    check(name + "/new-count", L["new"]["count"], num(one(d, "new_count")))
    check(name + "/new-memsize", L["new"]["memsize"], num(one(d, "new_memsize")))
    if "leaked" in L:
        check(name + "/leaked-count", L["leaked"]["count"], num(one(d, "leaked_count")))
        check(name + "/leaked-memsize", L["leaked"]["memsize"], num(one(d, "leaked_memsize")))
    else:
        check(name + "/no-leaked-line", None, one(d, "leaked_count"))
    check(name + "/border", L["border"], num(one(d, "border")))
    check(name + "/groups", L["groups"], num(one(d, "groups")))
    check(name + "/clusters-total", L["clusters_total"], num(one(d, "clusters")))
    secs = list(t.root.find_all(tag="section", cls="suspect"))
    check(name + "/suspects-shown", len(L["suspects"]), len(secs))
    for js, sec in zip(L["suspects"], secs):
        p = "%s/suspect-%d" % (name, js["rank"])
        check(p + "/id", "suspect-%d" % js["rank"], sec.attrs.get("id"))
        sd = sec.data()
        for k in ("border_count", "retained_count", "retained_memsize",
                  "keepalive_count", "keepalive_memsize"):
            check(p + "/" + k, js[k], num(one(sd, k)))
        if close(js["share"], one(sd, "share")):
            ok(p + "/share")
        else:
            notok(p + "/share", "json %r, html %r" % (js["share"], one(sd, "share")))
        h = sec.find(cls="holder")
        check(p + "/holder", js["holder"]["address"] if js["holder"] else "",
              h.attrs.get("data-address") if h else None)
        f = sec.find(cls="first")
        check(p + "/first-border", js["first_border"]["address"],
              f.attrs.get("data-address") if f else None)
        hops = list(sec.find_all(tag="li", cls="hop"))
        if js["path"] is None:
            check(p + "/no-path", (0, True), (len(hops), sec.find(cls="nopath") is not None))
        else:
            check(p + "/path-addresses", [o["address"] for o in js["path"]["objects"]],
                  [h.attrs.get("data-address") for h in hops])
            root = sec.find(tag="li", cls="root")
            rs = root.find(tag="span", cls="root").all_text() if root else None
            check(p + "/path-root", js["path"]["root"], rs)
            want = [esc(o.get("name")) for o in js["path"]["objects"]]
            got = []
            for h in hops:
                r = h.find(cls="ref")
                got.append(r.all_text() if r else None)
            check(p + "/path-names", want, got)
            # the one-line path holds every name, in order
            line = sec.find(cls="pathline")
            text = line.all_text() if line else ""
            pos = 0
            for nm in [n for n in want if n]:
                i = text.find(nm, pos)
                if i < 0:
                    notok(p + "/pathline-names", "%r not in %r" % (nm, text))
                    break
                pos = i + len(nm)
            else:
                ok(p + "/pathline-names")
        rows, _ = table_rows(sec, "suspect-%d-classes" % js["rank"], 1)
        check(p + "/classes", json_rows(js["classes"], ["class"]), rows)
        rows, _ = table_rows(sec, "suspect-%d-sites" % js["rank"], 2)
        check(p + "/sites", json_rows(js["sites"], ["class", "location"]), rows)
        dr = sec.find(cls="drawing")
        nd = sec.find(cls="nodrawing")
        if dr is not None and dr.find(tag="svg") is not None:
            ok(p + "/drawing")
        else:
            notok(p + "/drawing", "no inline svg: %s" % (nd.all_text() if nd else "nothing"))
    tab = t.root.find(id="clusters")
    if L["suspects"]:
        cl = list(tab.find_all(tag="tr", cls="cluster")) if tab else []
        check(name + "/clusters-shown", len(L["clusters"]), len(cl))
        check(name + "/clusters-total-attr", str(L["clusters_total"]),
              tab.attrs.get("data-total") if tab else None)
        for jc, tr in zip(L["clusters"], cl):
            p = "%s/cluster-%d" % (name, jc["rank"])
            cd = tr.data()
            for k in ("suspects", "retained_count", "retained_memsize"):
                check(p + "/" + k, jc[k], num(one(cd, k)))
            if close(jc["share"], one(cd, "share")):
                ok(p + "/share")
            else:
                notok(p + "/share", "json %r, html %r" % (jc["share"], one(cd, "share")))
            sh = tr.find(cls="shape")
            if jc["shape"] is not None:
                check(p + "/shape", esc(jc["shape"]), sh.all_text() if sh else None)
            ranks = tr.find(cls="ranks").all_text()
            check(p + "/ranks", ", ".join(str(r) for r in jc["suspect_ranks"][:10]),
                  ranks.split(" and ")[0])
    for tid, path, key in (("diff-class", diffc_json, "class"),
                           ("diff-location", diffl_json, "location")):
        D = json.load(open(path))
        rows, total = table_rows(t, tid, 1)
        if D["new"]["count"] == 0:
            check(name + "/" + tid + "-absent", None, rows)
            continue
        check(name + "/" + tid, json_rows(D["rows"], [key]), rows)
        check(name + "/" + tid + "-total", str(D["rows_total"]), total)


# ---- one dump ----

def one_dump(name, html, stats_json, top_json, topc_json, side_json=None):
    t = parse(html)
    S = json.load(open(stats_json))
    tot = t.root.find(id="totals")
    if tot is None:
        notok(name + "/totals", "no #totals")
        return
    d = tot.data()
    for k, jk in (("objects", "objects"), ("memsize", "memsize"),
                  ("references", "references"), ("roots", "roots"),
                  ("root_categories", "root_categories")):
        check(name + "/totals-" + k, S["totals"][jk], num(one(d, k)))
    if S["totals"]["traced"]:
        check(name + "/totals-traced", S["totals"]["traced"], num(one(d, "traced")))
    ruby = tot.find(cls="ruby")
    check(name + "/ruby", S["ruby"], ruby.all_text() if ruby else None)
    for g in S["groupings"]:
        key = g["by"][0]
        tid = "by-" + key
        rows, total = table_rows(t, tid, 1)
        check(name + "/" + tid, json_rows(g["rows"], [key]), rows)
        check(name + "/" + tid + "-total", str(g["rows_total"]), total)
    T = json.load(open(top_json))
    tab = t.root.find(id="retainers")
    trs = list(tab.find_all(tag="tr", cls="row")) if tab else []
    want = [(o["object"]["address"], o["retained_memsize"], o["retained_count"])
            for o in T["objects"]]
    got = [(tr.attrs.get("data-address"), num(one(tr.data(), "retained_memsize")),
            num(one(tr.data(), "retained_count"))) for tr in trs]
    check(name + "/retainers", want, got)
    check(name + "/reached", (T["reached"], T["reached_memsize"]),
          (num(one(t.root.data(), "reached")), num(one(t.root.data(), "reached_memsize"))))
    C = json.load(open(topc_json))
    tab = t.root.find(id="retainers-class")
    trs = list(tab.find_all(tag="tr", cls="row")) if tab else []
    want = [(esc(c["class"]), c["objects"], c["shallow"], c["retained_count"],
             c["retained_memsize"]) for c in C["classes"]]
    got = []
    for tr in trs:
        dd = tr.data()
        got.append((tr.find(cls="key").all_text(), num(one(dd, "objects")),
                    num(one(dd, "shallow")), num(one(dd, "retained_count")),
                    num(one(dd, "retained_memsize"))))
    check(name + "/retainers-class", want, got)
    proc = t.root.find(id="process")
    if side_json:
        P = json.load(open(side_json))["process"]
        pd = proc.data() if proc else {}
        check(name + "/process-rss", P["rss"], num(one(pd, "rss")))
        check(name + "/process-objects", P["objects_memsize"], num(one(pd, "objects_memsize")))
        if close(P["objects_share"], one(pd, "objects_share")):
            ok(name + "/process-share")
        else:
            notok(name + "/process-share", (P["objects_share"], one(pd, "objects_share")))
        if "memsize_of_all" in P:
            check(name + "/process-memsize-of-all", P["memsize_of_all"],
                  num(one(pd, "memsize_of_all")))
    else:
        check(name + "/no-sidecar", True,
              proc is not None and "No sidecar" in proc.all_text())


# ---- safety ----

NET = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:|//)", re.I)
SAFE_URL = re.compile(r"^\s*(?:#|data:)", re.I)


def safe(name, html, marks):
    t = parse(html)
    # the one script element allowed: the leak's data, a JSON block no
    # browser runs (heapdump-json(5))
    data = [("type", "application/json"), ("id", "leak-data")]
    bad = [tg for tg, a in t.tags if tg in ("script", "iframe", "object", "embed",
                                           "link", "img", "base", "form", "frame",
                                           "audio", "video", "source")
           and not (tg == "script" and list(a) == data)]
    check(name + "/no-foreign-elements", [], bad)
    ev = [(tg, k) for tg, a in t.tags for k, _ in a if k.lower().startswith("on")]
    check(name + "/no-event-handlers", [], ev)
    urls = [(tg, k, v) for tg, a in t.tags for k, v in a
            if k.lower() in ("src", "href", "xlink:href", "action", "formaction",
                             "poster", "background", "srcset")
            and v is not None and not SAFE_URL.match(v)]
    check(name + "/no-references-out", [], urls)
    net = [(tg, k, v) for tg, a in t.tags for k, v in a
           if k.lower() in ("src", "href", "xlink:href") and v and NET.match(v)]
    check(name + "/no-network", [], net)
    styles = "".join(c for n in t.root.find_all(tag="style") for c in n.children
                     if isinstance(c, str))
    styles += "".join(v or "" for _, a in t.tags for k, v in a if k == "style")
    check(name + "/no-style-urls", [], re.findall(r"url\(|@import", styles, re.I))
    csp = [v for tg, a in t.tags if tg == "meta" for k, v in a
           if k == "content" and "default-src 'none'" in (v or "")]
    check(name + "/csp", 1, len(csp))
    ctl = [b for b in t.raw if (b < 0x20 and b not in (9, 10, 13)) or b == 0x7f]
    check(name + "/no-control-bytes", [], ctl[:5])
    text = "".join(t.texts)
    for i, m in enumerate(marks):
        if m in text:
            ok("%s/mark-%d-as-text" % (name, i))
        else:
            notok("%s/mark-%d-as-text" % (name, i), "%r not in the page's text" % m)


def caveat(name, html, kind):
    t = parse(html)
    v = t.root.find(id="verdict")
    li = v.find(tag="li", cls=kind) if v else None
    if li is not None and "caveat" in li.classes():
        ok(name)
        print("# %s: %s" % (name, li.all_text()[:200]))
    else:
        notok(name, "no li.caveat.%s in #verdict: %s" %
              (kind, v.all_text()[:300] if v else "no #verdict"))


# ---- png ----

def png_colours(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif typ == b"IDAT":
            idat.append(body)
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (0, 2, 4, 6) or interlace:
        raise ValueError("unexpected PNG (depth %d, type %d)" % (depth, ctype))
    bpp = {0: 1, 2: 3, 4: 2, 6: 4}[ctype]
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    prev = bytearray(stride)
    colours = set()
    # the top of the page (title, dumps, verdict) is enough to tell a
    # page from a blank one, and pure Python is slow
    for y in range(min(h, 400)):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        if y % 3 == 0 and len(colours) < 1000:
            for x in range(0, w, 3):
                colours.add(bytes(line[x * bpp:(x + 1) * bpp]))
        prev = line
    return w, h, len(colours)


def png(name, path):
    try:
        w, h, n = png_colours(path)
    except Exception as e:  # noqa: BLE001
        notok(name, "%s: %s" % (path, e))
        return
    if n > 1:
        ok(name)
        print("# %s: %dx%d, %d colours sampled" % (name, w, h, n))
    else:
        notok(name, "%s is blank: %dx%d, %d colour" % (path, w, h, n))


def main(argv):
    try:
        return run(argv)
    except Exception as e:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        notok("%s/%s" % (argv[1], argv[2] if len(argv) > 2 else "?"),
              "the check failed: %r" % e)
        return 1


def run(argv):
    cmd = argv[1]
    if cmd == "leak":
        leak(*argv[2:8])
    elif cmd == "one":
        one_dump(*argv[2:9])
    elif cmd == "safe":
        safe(argv[2], argv[3], argv[4:])
    elif cmd == "caveat":
        caveat(argv[2], argv[3], argv[4])
    elif cmd == "png":
        png(argv[2], argv[3])
    else:
        raise SystemExit("unknown check " + cmd)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
