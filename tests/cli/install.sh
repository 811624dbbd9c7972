#!/bin/sh
# make install into a scratch DESTDIR: the program, the libraries, the
# header, the pkg-config file and the man pages land where they should,
# and a program built against the installed files alone works.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
d="$TMP/root"
if ! make -s install PREFIX=/opt/hd DESTDIR="$d" >"$TMP/log" 2>&1; then
	notok make-install "$(tail -5 "$TMP/log")"
	exit 1
fi
ok make-install
for f in bin/heapdump lib/libheapdump.a lib/libheapdump.so.0 \
	include/heapdump.h lib/pkgconfig/heapdump.pc \
	lib/heapdump/libheapdump-malloc.so; do
	if [ -f "$d/opt/hd/$f" ]; then ok "installed/$f"; else notok "installed/$f" missing; fi
done
# every page of man/, in the section its name ends with
missing=""
for m in man/*.[1-9]; do
	f=share/man/man${m##*.}/${m#man/}
	[ -f "$d/opt/hd/$f" ] || missing="$missing $f"
done
check installed/every-man-page "" "$missing"
check installed/man-pages "$(ls man/*.[1-9] | wc -l)" \
	"$(find "$d/opt/hd/share/man" -type f | wc -l)"
check pc-prefix "prefix=/opt/hd" "$(grep '^prefix=' "$d/opt/hd/lib/pkgconfig/heapdump.pc")"
cat >"$TMP/use.c" <<'C'
#include <heapdump.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	hd_reader *r;
	const hd_record *rec;
	hd_error err;
	unsigned long n = 0;

	if (argc < 2 || hd_reader_open(&r, argv[1], NULL, &err))
		return 1;
	while (hd_reader_next(r, &rec, &err) == 0)
		n += rec->kind == HD_REC_OBJECT;
	hd_reader_free(r);
	printf("%lu\n", n);
	return 0;
}
C
# linked statically with what the pkg-config file's Libs.private lists
if ${CC:-cc} -std=c99 ${SAN_FLAGS:-} -I"$d/opt/hd/include" -o "$TMP/use" "$TMP/use.c" \
	"$d/opt/hd/lib/libheapdump.a" \
	$(sed -n 's/^Libs.private: //p' "$d/opt/hd/lib/pkgconfig/heapdump.pc") 2>"$TMP/err"; then
	want=$("$HEAPDUMP" stats -q --all --format json "$DATA/ok_ruby3.4_traced.json" 2>/dev/null | jq .totals.objects)
	check installed-library-works "$want" "$("$TMP/use" "$DATA/ok_ruby3.4_traced.json")"
else
	notok installed-library-compiles "$(head -c 300 "$TMP/err")"
fi
check_rc installed-program-runs 0 "$d/opt/hd/bin/heapdump" version
make -s uninstall PREFIX=/opt/hd DESTDIR="$d" >/dev/null 2>&1
check uninstall-removes "" "$(find "$d" -type f | head -3)"
