# store_key_copy.py SRC DST - copies the cache key of store SRC's META
# section (the source dump's size, mtime, fingerprint and its kind) over
# DST's: the trust suites' planted store that claims another dump's key.
import struct
import sys


def meta(b):
    count = struct.unpack_from("<I", b, 12)[0]
    for i in range(count):
        sid, _fl, off, _size = struct.unpack_from("<IIQQ", b, 32 + 24 * i)
        if sid == 1:
            return off
    sys.exit("no META section in " + sys.argv[1])


src, dst = open(sys.argv[1], "rb").read(), bytearray(open(sys.argv[2], "rb").read())
so, do = meta(src), meta(dst)
for f in (8, 9, 10, 11):  # source size, mtime, fingerprint, its kind
    dst[do + 8 * f:do + 8 * f + 8] = src[so + 8 * f:so + 8 * f + 8]
open(sys.argv[2], "r+b").write(dst)
