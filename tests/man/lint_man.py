#!/usr/bin/env python3
"""tests/man/lint_man.py - what groff and mandoc accept but a reader sees
wrong, in the mdoc pages given as arguments. One line a problem,
"PAGE:LINE: what", and exit status 1 when there is any.

  quotes   a quote opened inside a quote of its own kind, in the page
           rendered by groff (".Pq Ql Array , Ql Hash" prints
           "(`Array, `Hash')'": Ql encloses the rest of the line); the
           line is the source line that starts the paragraph
  column   a cell of a ".Bl -column" list wider than the width its
           column was given (the columns of the rendered table shift)
"""
import re
import subprocess
import sys

MACROS = set("Ad An Ar Cd Cm Dv Er Ev Fa Fl Fn Ic Li Ms Mt Nm No Ns Pa Sy "
             "Em Ql Qq Dq Sq Pq Bq Brq Aq Va Vt Xr Tn Ux Lk Ot St".split())


def rendered(page):
    out = subprocess.run(["groff", "-mandoc", "-Tutf8", "-P-cbou",
                          "-rLL=1000n", page],
                         capture_output=True, text=True).stdout
    return out.split("\n")


def source_line(src, word):
    """The macro line that quotes word twice over, else the first that
    holds word, else 0."""
    first = 0
    for i, line in enumerate(src, 1):
        if word not in line or line.startswith(".\\\""):
            continue
        first = first or i
        if len(re.findall(r"\b(Ql|Sq|Dq|Qq|Do|So|Oo)\b", line)) >= 2:
            return i
    return first


def check_quotes(page, src):
    bad = []
    for line in rendered(page):
        for o, c in (("\u2018", "\u2019"), ("\u201c", "\u201d")):
            depth = 0
            for k, ch in enumerate(line):
                if ch == o:
                    depth += 1
                    if depth > 1:
                        frag = line[max(0, k - 40):k + 40].strip()
                        word = re.match(r"[^\s,.;:\u2019\u201d]*",
                                        line[k + 1:]).group(0)
                        bad.append((source_line(src, word),
                                    "nested %s...%s quotes: %s" %
                                    (o, o, frag)))
                        break
                elif ch == c:
                    depth = max(0, depth - 1)
            else:
                continue
            break
    return bad


def cell_text(cell):
    """A cell's printed text, roughly: macros and escapes dropped."""
    cell = re.sub(r"\\\(..|\\\[[^]]*\]", "x", cell)
    cell = re.sub(r"\\&|\\\|", "", cell).replace("\\-", "-")
    words = [w for w in cell.split() if w not in MACROS]
    text = " ".join(words)
    return re.sub(r" ([,.;:)\]])", r"\1", text).strip('"')


def check_columns(page, src):
    bad = []
    widths = None
    for i, line in enumerate(src, 1):
        if line.startswith(".Bl -column"):
            widths = [cell_text(w)
                      for w in re.findall(r'"([^"]*)"', line)]
            continue
        if line.startswith(".El"):
            widths = None
            continue
        if widths is None or not line.startswith(".It"):
            continue
        cells = re.split(r"\s+Ta\s+|\t", line[3:].strip())
        for k, cell in enumerate(cells[:-1]):
            if k >= len(widths):
                break
            t = cell_text(cell)
            if len(t) > len(widths[k]):
                bad.append((i, 'column %d: "%s" is wider than its width '
                            '"%s"' % (k + 1, t, widths[k])))
    return bad


def main():
    status = 0
    for page in sys.argv[1:]:
        with open(page, encoding="utf-8") as f:
            src = f.read().split("\n")
        for line, what in check_quotes(page, src) + check_columns(page, src):
            print("%s:%d: %s" % (page, line, what))
            status = 1
    return status


sys.exit(main())
