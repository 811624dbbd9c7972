#!/bin/sh
# tests/cli/class_edges.sh - an object's link to its class is a reference
# (man 5 heapdump-store, CLASS REFERENCES), on the heaps of a real
# program: data/gen/class_edges.rb, a registry of requests each holding a
# user only through its singleton class's methods and another only
# through an anonymous class's, dumped before, after N requests and
# after 2N, by dump_all on every Ruby (HD_RUBIES, else Debian's and
# /opt/rubies/*) and by the gem on each of HD_RUBIES (else Debian's).
# Before the class edge, `path` to those users said "no GC root reaches"
# and the registry retained about a tenth of what it holds.
. "$(dirname "$0")/../lib.sh"
needs jq jq

H=$HEAPDUMP
G=$TOP/data/gen/class_edges.rb
N=150
rubies=${HD_RUBIES:-/usr/bin/ruby $(ls /opt/rubies/*/bin/ruby 2>/dev/null)}
gem_rubies=${HD_RUBIES:-/usr/bin/ruby}

# run TAG DIR: the checks on the three dumps in DIR
run() {
	t=$1 d=$2
	b=$d/class_edges_before.json a=$d/class_edges_after.json
	l=$d/class_edges_later.json e=$d/class_edges_expected.json
	reg=$(jq -r .registry "$e")
	check "$t/requests" $((2 * N)) "$(jq -r .requests "$e")"
	# the user held only by its request's singleton method
	check_rc "$t/path-user-exit" 0 "$H" path -q "$l" "$(jq -r .user "$e")"
	check_grep "$t/path-user" "^  .*Array( \[[0-9]+\])? -> Request \(class\) -> #<Class:#<Request:0x[0-9a-f]+>> -> IMEMO/ment -> Proc -> IMEMO/env( user)? -> User$" "$TMP/out"
	# ...and through an anonymous class's method
	check_rc "$t/path-anon-exit" 0 "$H" path -q "$l" "$(jq -r .anon_user "$e")"
	check_grep "$t/path-anon" "^  .*Array( \[[0-9]+\])? -> Request( @handler)? -> #<Class:0x[0-9a-f]+> \(class\) -> #<Class:0x[0-9a-f]+> -> IMEMO/ment -> Proc -> .*User$" "$TMP/out"
	# JSON names the hop, inferred (the store made it)
	"$H" path -q -f json "$l" "$(jq -r .user "$e")" >"$TMP/p.json" 2>"$TMP/err"
	check "$t/path-json" '{"type":"OBJECT","class":"Request","name":"(class)","inferred":true}' \
		"$(jq -c '.path[] | select(.name == "(class)") | {type, class, name, inferred}' "$TMP/p.json")"
	# the store answers as the dump
	"$H" index -q "$l" -o "$d/later.hds" 2>"$TMP/err"
	"$H" path -q "$l" "$(jq -r .user "$e")" >"$TMP/p1" 2>&1
	"$H" path -q "$d/later.hds" "$(jq -r .user "$e")" >"$TMP/p2" 2>&1
	check "$t/path-store" "$(cat "$TMP/p1")" "$(cat "$TMP/p2")"
	# stats counts references as the dump lists them, dump and store alike
	check "$t/stats-references" "$(jq -s '[.[] | select(.address) | (.references // []) | length] | add' "$l")" \
		"$("$H" stats -q -f json "$d/later.hds" | jq '.totals.references + 0')"
	# every singleton class of a request is retained by the registry:
	# its dominator chain passes through the Array
	"$H" dominators -q -n 0 -f json "$d/later.hds" --name '/^#<Class:#<Request:/' >"$TMP/dom.json" 2>"$TMP/err"
	check "$t/dominators-singletons" "$((2 * N)) $((2 * N))" \
		"$(jq -s --arg r "$reg" '"\(length) \([.[] | select([.chain[].object.address] | index($r))] | length)"' -r "$TMP/dom.json")"
	# and the registry retains nearly all that grew from BEFORE to LATER
	# (new objects alive in LATER); without the class edge about 10%
	grew=$("$H" diff -q -f json "$b" "$l" | jq '.new.memsize')
	kept=$("$H" dominators -q -f json "$d/later.hds" "$reg" | jq '.chain[-1].retained_memsize')
	check "$t/registry-retains-growth" yes \
		"$(awk -v k="${kept:-0}" -v g="${grew:-1}" 'BEGIN { print (k >= 0.95 * g ? "yes" : "no " k " of " g) }')"
	# top: the registry is among the first retainers, with that size
	"$H" top -q -n 5 -f json "$d/later.hds" >"$TMP/top.json" 2>"$TMP/err"
	check "$t/top-registry" "${kept:-?}" \
		"$(jq --arg r "$reg" '.objects[] | select(.object.address == $r) | .retained_memsize' "$TMP/top.json")"
	# leaks on three dumps: suspect 1 is the registry, with nearly all
	# that suspects hold (about 1% of the leak before the class edge; the
	# rest is the VM's tables and garbage, which no suspect holds)
	check_rc "$t/leaks-exit" 0 "$H" leaks -q -f json "$b" "$a" "$l"
	check "$t/leaks-suspect-1" "$reg yes" \
		"$(jq -r '.shares.suspects as $all | .suspects[0] | "\(.holder.address) \(if .share >= 0.95 * $all and .share >= 0.8 then "yes" else "no \(.share) of \($all)" end)"' "$TMP/out")"
}

for r in $rubies; do
	[ -x "$r" ] || { notok "ruby" "$r is missing"; continue; }
	v=$("$r" -e 'print RUBY_VERSION')
	mkdir -p "$TMP/dump_all-$v"
	if ! "$r" --disable-gems "$G" "$TMP/dump_all-$v" $N 2>"$TMP/err"; then
		notok "dump_all-$v/program" "$(head -c 300 "$TMP/err")"; continue
	fi
	run "dump_all-$v" "$TMP/dump_all-$v"
done

for r in $gem_rubies; do
	v=$("$r" -e 'print RUBY_VERSION')
	case ${B:-build} in
	/*) EXT=$B/ext-$v ;;
	*) EXT=$TOP/${B:-build}/ext-$v ;;
	esac
	[ -f "$EXT/heapdump_ext.so" ] || { notok "gem-$v" "$EXT/heapdump_ext.so is missing: make ext RUBIES=$r"; continue; }
	mkdir -p "$TMP/gem-$v"
	if ! env DUMPER=heapdump RUBYLIB="$EXT:$TOP/src/lib" "$r" --disable-gems "$G" "$TMP/gem-$v" $N 2>"$TMP/err"; then
		notok "gem-$v/program" "$(head -c 300 "$TMP/err")"; continue
	fi
	run "gem-$v" "$TMP/gem-$v"
done
