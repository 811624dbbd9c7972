#!/usr/bin/env python3
"""serve_hostile.py - the crafted dump and the hostile clients of
tests/cli/serve_hostile.sh. Loopback only, bounded in count and time.

  dump OUT FILES          a dump (NDJSON, man 5 heapdump-dump) of FILES
                          strings, each allocated in its own file of one
                          gem (big-1.0), memsizes rising with the file
                          name (so the files sorted by size come in the
                          reverse order of their names), all held by a
                          root; a tree of
                          1 + 100 + 800 objects (0x20000000, drawn in a
                          second or so); a clique of 60 arrays each
                          referring to all 60 (0x30000000: 3600
                          references, more than a drawing may have)
  slow PORT N SECS GAP    N sockets that each send one byte of a request
                          header every GAP seconds, reopened when the
                          server closes them, for SECS seconds; prints
                          how many connections it opened and how many
                          the server closed
"""
import socket
import sys
import time

CLASS_STRING = 0x5000
CLASS_ARRAY = 0x5028


def line(f, **rec):
    parts = []
    for k, v in rec.items():
        if isinstance(v, str):
            parts.append('"%s":"%s"' % (k, v))
        elif isinstance(v, list):
            parts.append('"%s":[%s]' % (k, ", ".join('"0x%x"' % a for a in v)))
        else:
            parts.append('"%s":%d' % (k, v))
    f.write("{" + ", ".join(parts) + "}\n")


def dump(out, nfiles):
    tree = 0x20000000
    mids = [tree + 0x28 * (1 + j) for j in range(100)]
    leaves = [tree + 0x28 * (101 + k) for k in range(800)]
    clique = [0x30000000 + 0x28 * i for i in range(60)]
    with open(out, "w") as f:
        strs = [0x10000000 + 0x28 * i for i in range(nfiles)]
        line(f, type="ROOT", root="vm", references=[tree, clique[0]] + strs)
        f.write('{"address":"0x%x", "type":"CLASS", "name":"String", '
                '"memsize":480}\n' % CLASS_STRING)
        f.write('{"address":"0x%x", "type":"CLASS", "name":"Array", '
                '"memsize":480}\n' % CLASS_ARRAY)
        for i in range(nfiles):
            f.write('{"address":"0x%x", "type":"STRING", "class":"0x%x", '
                    '"bytesize":1, "value":"s", "file":"/srv/gems/big-1.0/'
                    'lib/f%07d.rb", "line":1, "generation":1, '
                    '"memsize":%d}\n' % (0x10000000 + 0x28 * i,
                                         CLASS_STRING, i, 40 + i))
        line(f, address="0x%x" % tree, type="ARRAY", **{"class": "0x%x" % CLASS_ARRAY},
             references=mids, memsize=840)
        for j, m in enumerate(mids):
            line(f, address="0x%x" % m, type="ARRAY",
                 **{"class": "0x%x" % CLASS_ARRAY},
                 references=leaves[8 * j:8 * j + 8], memsize=104)
        for a in leaves:
            line(f, address="0x%x" % a, type="STRING",
                 **{"class": "0x%x" % CLASS_STRING}, bytesize=1, value="x",
                 memsize=40)
        for a in clique:
            line(f, address="0x%x" % a, type="ARRAY",
                 **{"class": "0x%x" % CLASS_ARRAY}, references=clique,
                 memsize=520)


def slow(port, n, secs, gap):
    end = time.time() + secs
    socks = [None] * n
    opened = closed = 0
    head = b"GET /api/overview HTTP/1.1\r\nHost: x\r\nX-Slow: "
    sent = [0] * n
    last = [0.0] * n
    while time.time() < end:
        for i in range(n):
            s = socks[i]
            if s is None:
                try:
                    s = socket.create_connection(("127.0.0.1", port),
                                                 timeout=1)
                except OSError:
                    continue
                s.setblocking(False)
                socks[i] = s
                sent[i] = 0
                last[i] = 0.0
                opened += 1
            if time.time() - last[i] < gap:
                continue
            try:
                # one byte of the header, never its end
                b = head[sent[i]:sent[i] + 1] or b"a"
                s.send(b)
                sent[i] += 1
                last[i] = time.time()
                if s.recv(4096, socket.MSG_PEEK) == b"":
                    raise OSError("closed")
            except BlockingIOError:
                pass
            except OSError:
                s.close()
                socks[i] = None
                closed += 1
        time.sleep(0.05)
    for s in socks:
        if s is not None:
            s.close()
    print("%d %d" % (opened, closed))


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "slow":
        slow(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]),
             float(sys.argv[5]))
    else:
        sys.exit("usage: serve_hostile.py dump OUT FILES | slow PORT N SECS GAP")
