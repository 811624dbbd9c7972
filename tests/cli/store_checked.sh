#!/bin/sh
# store_checked.sh - a store's whole-column check done once (issue 40,
# lib/store_trust.c): after a store file passed it, a record of its
# stat in $XDG_CACHE_HOME/heapdump/checked/ lets the next open skip it
# while the file is unchanged. Here (HEAPDUMP_STORE_CHECKED=all: records
# for stores of any size): the record written 0600 with the store's
# device, inode, size, mtime and ctime; the answers the same with it,
# without it and with the check forced; a store damaged in place after
# it (its ctime moves) checked again and refused with the check's
# message; a record that fits the damaged store opens it unchecked (the
# record is what skips the check), but not when the record is writable
# by group, is a link, its directory is writable by others or the knob
# is off; a link planted at the record's name replaced, its target
# untouched; a small store keeps no record by default (16 MB and more).
# A sanitized build (SAN_FLAGS) reads stores into memory: no record is
# kept there, and a fitting one is not trusted.
. "$(dirname "$0")/../lib.sh"

HD=$HEAPDUMP
TOOLS="$TOP/${B:-build}/tests"
case ${B:-build} in /*) TOOLS="$B/tests" ;; esac
SS="$TOOLS/store_sections"
[ -x "$SS" ] || { notok needs-tools "$SS is missing: make"; exit 1; }
XDG_CACHE_HOME=$TMP/xdg
HEAPDUMP_STORE_CHECKED=all
export XDG_CACHE_HOME HEAPDUMP_STORE_CHECKED
REC=$TMP/xdg/heapdump/checked

"$HD" index -q -o "$TMP/s.hds" "$DATA/leak_after.json" || { notok index "index failed"; exit 1; }
chmod 600 "$TMP/s.hds"
# the record's name and line for the store as it is now
rec_name() { printf '%s/%x-%x' "$REC" "$(stat -c %d "$1")" "$(stat -c %i "$1")"; }
rec_line() {
	printf 'heapdump-checked 1 %s %s %s %s %s %s\n' "$("$HD" --version | awk '{ print $NF }')" \
		"$(stat -c %d "$1")" "$(stat -c %i "$1")" "$(stat -c %s "$1")" \
		"$(stat -c %.9Y "$1")" "$(stat -c %.9Z "$1")"
}

check none-before "" "$(ls "$REC" 2>/dev/null)"
"$HD" stats -f json "$TMP/s.hds" >"$TMP/first.json" 2>&1
check first/exit 0 $?
R=$(rec_name "$TMP/s.hds")
off=$("$SS" list "$TMP/s.hds" | awk '$1 == 20 { print $3 }')
if [ -n "${SAN_FLAGS:-}" ]; then
	# a sanitized build reads stores into memory (HD_NO_MMAP): no
	# record is kept, and none is trusted, even one that fits
	check in-memory/no-record "" "$(ls "$REC" 2>/dev/null)"
	printf '\360\377\377\177' | dd of="$TMP/s.hds" bs=1 seek="$off" conv=notrunc 2>/dev/null
	mkdir -p "$REC" && chmod 700 "$TMP/xdg" "$TMP/xdg/heapdump" "$REC"
	rec_line "$TMP/s.hds" >"$R"
	chmod 600 "$R"
	"$HD" stats -q "$TMP/s.hds" >"$TMP/v" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q 'store edge section points out of range' "$TMP/v"; then ok in-memory/never-trusted
	else notok in-memory/never-trusted "exit $rc: $(head -c 200 "$TMP/v")"; fi
	exit 0
fi
check record/written yes "$([ -f "$R" ] && echo yes)"
check record/mode 600 "$(stat -c %a "$R" 2>/dev/null)"
check record/dir-mode 700 "$(stat -c %a "$REC" 2>/dev/null)"
check record/line "$(rec_line "$TMP/s.hds")" "$(cat "$R" 2>/dev/null)"
"$HD" stats -f json "$TMP/s.hds" >"$TMP/second.json" 2>&1
check second/same-answer "" "$(cmp "$TMP/first.json" "$TMP/second.json" 2>&1)"
HEAPDUMP_STORE_CHECKED=off "$HD" stats -f json "$TMP/s.hds" >"$TMP/off.json" 2>&1
check off/same-answer "" "$(cmp "$TMP/first.json" "$TMP/off.json" 2>&1)"
"$HD" query -f json "$TMP/s.hds" 'select count(*) n, sum(memsize) m from objects' >"$TMP/q1" 2>&1
HEAPDUMP_STORE_CHECKED=off "$HD" query -f json "$TMP/s.hds" 'select count(*) n, sum(memsize) m from objects' >"$TMP/q2" 2>&1
check query/same-answer "" "$(cmp "$TMP/q1" "$TMP/q2" 2>&1)"

# damaged in place after its record: the edge section (20) points out
# of range
sleep 0.01
printf '\360\377\377\177' | dd of="$TMP/s.hds" bs=1 seek="$off" conv=notrunc 2>/dev/null
refused() { # NAME [VAR=VALUE...]: stats on the damaged store exits 1 with the check's message
	n=$1
	shift
	env "$@" "$HD" stats -q "$TMP/s.hds" >"$TMP/v" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q 'store edge section points out of range' "$TMP/v"; then ok "$n"
	else notok "$n" "exit $rc: $(head -c 200 "$TMP/v")"; fi
}
refused damaged/refused
check damaged/record-stale yes "$([ "$(rec_line "$TMP/s.hds")" != "$(cat "$R")" ] && echo yes)"

# a record that fits the damaged store: the check is skipped (what the
# record does), unless the record or its place cannot be trusted
rec_line "$TMP/s.hds" >"$TMP/line"
cp "$TMP/line" "$R"
chmod 600 "$R"
"$HD" stats -q "$TMP/s.hds" >"$TMP/v" 2>&1
check forged/trusted 0 $?
refused forged/knob-off HEAPDUMP_STORE_CHECKED=off
chmod 620 "$R"
refused forged/group-writable
chmod 600 "$R"
chmod 770 "$REC"
refused forged/dir-group-writable
chmod 700 "$REC"
rm -f "$R"
ln -s "$TMP/line" "$R"
refused forged/link
rm -f "$R"

# a link planted at the record's name is replaced, never followed
"$HD" index -q -o "$TMP/t.hds" "$DATA/leak_after.json"
chmod 600 "$TMP/t.hds"
T=$(rec_name "$TMP/t.hds")
echo victim >"$TMP/victim"
ln -s "$TMP/victim" "$T"
"$HD" stats -q "$TMP/t.hds" >/dev/null 2>&1
check link/victim-untouched victim "$(cat "$TMP/victim")"
check link/replaced-by-a-file yes "$([ -f "$T" ] && [ ! -L "$T" ] && echo yes)"
check link/record-line "$(rec_line "$TMP/t.hds")" "$(cat "$T" 2>/dev/null)"

# by default, a small store keeps no record
rm -rf "$REC"
HEAPDUMP_STORE_CHECKED= "$HD" stats -q "$TMP/t.hds" >/dev/null 2>&1
check small/no-record "" "$(ls "$REC" 2>/dev/null)"
