#!/usr/bin/env python3
"""msnap_gen.py - writes malloc snapshots (man 5 heapdump-malloc, format 1)
for tests/cli/malloc.sh, until the tracker itself writes them in tests.

usage: msnap_gen.py OUT PID TIME [--format N] [--no-tracking WHY]
                    [--leaks] [--garbage] SITE...
SITE is KIND:ALLOCS:FREES:BYTES_ALLOCATED:LIVE_BYTES:NAME (NAME last, may
hold colons; \\e in it is ESC, \\xff the invalid byte 0xff)."""
import json
import sys


def esc(name):
    """JSON as the tracker writes it: control bytes and invalid UTF-8
    bytes as \\u00XX of the byte."""
    b = name.encode('latin-1') if any(ord(c) > 0x7f and ord(c) < 0x100
                                      for c in name) else name.encode()
    out = []
    i = 0
    while i < len(b):
        c = b[i]
        if c == 0x22 or c == 0x5c:
            out.append('\\' + chr(c))
        elif c < 0x20 or c == 0x7f or c >= 0x80:
            out.append('\\u%04x' % c)
        else:
            out.append(chr(c))
        i += 1
    return '"' + ''.join(out) + '"'


def main(a):
    out, pid, t = a[0], int(a[1]), float(a[2])
    fmt, tracking, why, leaks, garbage, sites = 1, True, None, False, False, []
    i = 3
    while i < len(a):
        if a[i] == '--format':
            fmt = a[i + 1]
            i += 2
            continue
        if a[i] == '--no-tracking':
            tracking, why = False, a[i + 1]
            i += 2
            continue
        if a[i] == '--leaks':
            leaks = True
        elif a[i] == '--garbage':
            garbage = True
        else:
            k, al, fr, ba, lb, name = a[i].split(':', 5)
            name = name.replace('\\e', '\x1b').replace('\\xff', '\xff')
            sites.append((k, int(al), int(fr), int(ba), int(lb), name))
        i += 1
    tot = [sum(s[j] for s in sites) for j in (1, 2, 3, 4)]
    h = {"type": "malloc_snapshot", "pid": pid, "time": t,
         "ruby": "3.4.8", "allocator": "glibc", "tracking": tracking,
         "reason": "interval", "gc_count": 7,
         "totals": {"allocs": tot[0], "frees": tot[1],
                    "bytes_allocated": tot[2], "live_bytes": tot[3],
                    "live_blocks": tot[0] - tot[1]},
         "malloc": {"in_use": tot[3] + 1000, "free": 500}, "rss": 9000000}
    if fmt != 'none':
        h["format"] = int(fmt)
    if why:
        h["why"] = why
    lines = [json.dumps(h)]
    if tracking:
        for k, al, fr, ba, lb, name in sites:
            lines.append('{"type":"site","site":%s,"kind":"%s","allocs":%d,'
                         '"frees":%d,"bytes_allocated":%d,"live_bytes":%d,'
                         '"live_blocks":%d,"gen_oldest":1,"gen_mean":2.5}'
                         % (esc(name), k, al, fr, ba, lb, al - fr))
            if garbage:
                lines.append('{"type":"site","site":"cut.rb:1","allocs":')
                garbage = False
        if leaks and sites:
            k, al, fr, ba, lb, name = sites[0]
            lines.append(json.dumps({
                "type": "leakscan", "allocator": "glibc",
                "live_blocks": al - fr, "scanned_bytes": 123456,
                "unreached_blocks": 3, "unreached_bytes": 3072,
                "seconds": 0.25,
                "blind": ["addresses held only as Ruby Integers",
                          "registers of threads other than the scanning one"]}))
            lines.append('{"type":"leaked","site":%s,"kind":"%s",'
                         '"blocks":3,"bytes":3072}' % (esc(name), k))
    with open(out, 'w') as f:
        f.write('\n'.join(lines) + '\n')


main(sys.argv[1:])
