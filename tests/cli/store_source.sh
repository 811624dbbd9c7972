#!/bin/sh
# A store finds the dump it was indexed from: from any directory (the
# store records the dump's real path), and beside the store when the two
# were moved together; a file there that is not the dump indexed is
# refused, never read as if it were.
. "$(dirname "$0")/../lib.sh"

H=$HEAPDUMP
D="$DATA/leak_after.json"
[ -f "$D" ] || { notok fixtures "$D is missing"; exit 1; }
W="$TMP/w"
mkdir -p "$W/d" "$W/elsewhere"
cp "$D" "$W/d/app.json"

# the answer every good case must give
"$H" strings -f json "$D" >"$TMP/want" 2>/dev/null

# indexed by a relative path, read from another directory
(cd "$W/d" && "$H" index -q app.json -o app.hds) >/dev/null 2>&1
check_rc relative/index 0 test -f "$W/d/app.hds"
(cd "$W/elsewhere" && "$H" strings -f json ../d/app.hds) >"$TMP/got" 2>"$TMP/err"
check relative/rc 0 $?
check relative/same "$(cat "$TMP/want")" "$(cat "$TMP/got")"

# subgraph-of reads records back from the dump too
(cd "$W/elsewhere" && "$H" subgraph-of -q ../d/app.hds \
	--name LeakyCache) >"$TMP/sub" 2>"$TMP/err"
check relative/subgraph-rc 0 $?
check relative/subgraph-lines 1 "$([ -s "$TMP/sub" ] && echo 1)"

# the store and its dump moved together to another directory
mkdir -p "$W/moved"
mv "$W/d/app.json" "$W/d/app.hds" "$W/moved/"
(cd "$W/elsewhere" && "$H" strings -f json ../moved/app.hds) >"$TMP/got" \
	2>"$TMP/err"
check moved/rc 0 $?
check moved/same "$(cat "$TMP/want")" "$(cat "$TMP/got")"

# another file of that name beside the store is not the dump indexed
cp "$DATA/leak_before.json" "$W/moved/app.json"
(cd "$W/elsewhere" && "$H" strings ../moved/app.hds) >"$TMP/got" 2>"$TMP/err"
rc=$?
check impostor/rc 1 "$rc"
check impostor/no-answer "" "$(cat "$TMP/got")"

# gone altogether: the error names the recorded path
rm "$W/moved/app.json"
(cd "$W/elsewhere" && "$H" strings ../moved/app.hds) >"$TMP/got" 2>"$TMP/err"
check gone/rc 1 $?
check gone/names-path 1 "$(grep -c "d/app.json" "$TMP/err")"
