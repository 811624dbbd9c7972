#!/bin/sh
# tests/cli/weak_maps.sh - Ruby's weak maps (man 5 heapdump-store, WEAK
# MAPS) on the heap of a real program, data/gen/weak_maps.rb, dumped by
# dump_all on every Ruby (HD_RUBIES, else Debian's and /opt/rubies/*) and
# by the gem on each of HD_RUBIES (else Debian's): a WeakMap holds none of
# the objects it maps (their holder is credited), and a WeakKeyMap (3.3+),
# whose dump lists its values and never its keys, holds each value, named
# (ephemeron value), with and without --skip-weak (before, --skip-weak
# left its values reached by nothing though alive); in the gem's dumps,
# which list each value as a reference of its key too, the path goes
# through the key.
. "$(dirname "$0")/../lib.sh"
needs jq jq

H=$HEAPDUMP
G=$TOP/data/gen/weak_maps.rb
N=60
rubies=${HD_RUBIES:-/usr/bin/ruby $(ls /opt/rubies/*/bin/ruby 2>/dev/null)}
gem_rubies=${HD_RUBIES:-/usr/bin/ruby}

# run TAG DUMP
run() {
	t=$1 f=$2 e=$2.expected.json
	# the WeakMap: its value is held by Holders::ALL, not through the map
	wm=$(jq -r .wmap "$e") wv=$(jq -r .wmap_value "$e")
	"$H" path -q -f json "$f" "$wv" >"$TMP/p.json" 2>"$TMP/err"
	check "$t/wmap-value-path" "yes no" \
		"$(jq -r --arg h "$(jq -r .holders "$e")" --arg m "$wm" '[.path[].address] | "\(if index($h) then "yes" else "no" end) \(if index($m) then "yes" else "no" end)"' "$TMP/p.json")"
	"$H" dominators -q -f json "$f" "$wv" >"$TMP/d.json" 2>"$TMP/err"
	check "$t/wmap-value-dominated-by-holder" yes \
		"$(jq -r --arg h "$(jq -r .holders "$e")" 'if [.chain[].object.address] | index($h) then "yes" else "no" end' "$TMP/d.json")"
	# the map retains none of its N values (3.1: itself and its finalizer)
	"$H" dominators -q -f json "$f" "$wm" >"$TMP/d.json" 2>"$TMP/err"
	check "$t/wmap-retains-no-value" yes \
		"$(jq -r --argjson n "$(jq .n "$e")" 'if .chain[-1].retained_count < $n then "yes" else "no \(.chain[-1].retained_count)" end' "$TMP/d.json")"
	# the WeakKeyMap (3.3+)
	wk=$(jq -r '.wkmap // empty' "$e")
	[ -n "$wk" ] || return 0
	kv=$(jq -r .wkmap_value "$e")
	case $t in
	gem-*) keyed ;;
	*) unkeyed ;;
	esac
}

# dump_all: the map holds each value (no key is listed)
unkeyed() {
	for o in "" --skip-weak; do
		check_rc "$t/wkmap-path$o-exit" 0 "$H" path -q $o "$f" "$kv"
		check_grep "$t/wkmap-path$o" "ObjectSpace::WeakKeyMap \(ephemeron value\) -> Value$" "$TMP/out"
		"$H" dominators -q -f json $o "$f" "$kv" >"$TMP/d.json" 2>"$TMP/err"
		check "$t/wkmap-value-dominated$o" "$wk" \
			"$(jq -r '.chain[-2].object.address' "$TMP/d.json")"
	done
	"$H" path -q -f json "$f" "$kv" >"$TMP/p.json" 2>"$TMP/err"
	check "$t/wkmap-path-json" '{"class":"ObjectSpace::WeakKeyMap","name":"(ephemeron value)","inferred":true}' \
		"$(jq -c '.path[] | select(.name == "(ephemeron value)") | {class, name, inferred}' "$TMP/p.json")"
	# the map retains its N values, under --skip-weak too
	for o in "" --skip-weak; do
		"$H" dominators -q -f json $o "$f" "$wk" >"$TMP/d.json" 2>"$TMP/err"
		check "$t/wkmap-retains-values$o" yes \
			"$(jq -r --argjson n "$(jq .n "$e")" 'if .chain[-1].retained_count > $n then "yes" else "no \(.chain[-1].retained_count)" end' "$TMP/d.json")"
	done
}

# the gem's dumps also list each value as a reference of its key, named
# (ephemeron value) (man 5 heapdump-dump): the path goes through the key,
# and the map alone keeps no value alive (its key does too)
keyed() {
	for o in "" --skip-weak; do
		check_rc "$t/wkmap-path$o-exit" 0 "$H" path -q $o "$f" "$kv"
		check_grep "$t/wkmap-path-through-key$o" "Key \(ephemeron value\) -> Value$" "$TMP/out"
	done
	"$H" path -q -f json "$f" "$kv" >"$TMP/p.json" 2>"$TMP/err"
	check "$t/wkmap-path-json" '{"class":"Key","name":"(ephemeron value)","inferred":null}' \
		"$(jq -c '.path[] | select(.name == "(ephemeron value)") | {class, name, inferred}' "$TMP/p.json")"
	"$H" dominators -q -f json "$f" "$kv" >"$TMP/d.json" 2>"$TMP/err"
	check "$t/wkmap-value-not-the-maps-alone" yes \
		"$(jq -r --arg m "$wk" 'if .chain[-2].object.address != $m then "yes" else "no" end' "$TMP/d.json")"
	"$H" dominators -q -f json "$f" "$wk" >"$TMP/d.json" 2>"$TMP/err"
	check "$t/wkmap-retains-no-value" yes \
		"$(jq -r --argjson n "$(jq .n "$e")" 'if .chain[-1].retained_count < $n then "yes" else "no \(.chain[-1].retained_count)" end' "$TMP/d.json")"
}

for r in $rubies; do
	[ -x "$r" ] || { notok "ruby" "$r is missing"; continue; }
	v=$("$r" -e 'print RUBY_VERSION')
	if ! "$r" --disable-gems "$G" "$TMP/da-$v.json" $N 2>"$TMP/err"; then
		notok "dump_all-$v/program" "$(head -c 300 "$TMP/err")"; continue
	fi
	run "dump_all-$v" "$TMP/da-$v.json"
done

for r in $gem_rubies; do
	v=$("$r" -e 'print RUBY_VERSION')
	case ${B:-build} in
	/*) EXT=$B/ext-$v ;;
	*) EXT=$TOP/${B:-build}/ext-$v ;;
	esac
	[ -f "$EXT/heapdump_ext.so" ] || { notok "gem-$v" "$EXT/heapdump_ext.so is missing: make ext RUBIES=$r"; continue; }
	if ! env DUMPER=heapdump RUBYLIB="$EXT:$TOP/src/lib" "$r" --disable-gems "$G" "$TMP/gem-$v.json" $N 2>"$TMP/err"; then
		notok "gem-$v/program" "$(head -c 300 "$TMP/err")"; continue
	fi
	run "gem-$v" "$TMP/gem-$v.json"
done
