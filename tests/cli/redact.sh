#!/bin/sh
# tests/cli/redact.sh - heapdump redact (issue 39) on the heaps of a real
# program full of planted secrets (data/gen/secrets.rb: string contents,
# String and Symbol hash keys, instance variable, constant, global and
# local names, a file path with invalid UTF-8, a control byte and quotes,
# a method name, class names and a temporary name on 3.3+), dumped before,
# after and later by the gem (names) on each of HD_RUBIES (else Debian's)
# and by dump_all on the newest Ruby (HD_RUBIES, else Debian's and
# /opt/rubies/*): with --all no marker survives in any form (raw, any
# case, and the escaped bytes), and stats, diff, leaks, top, path,
# strings and waste give the same answers on the redacted dumps, their
# names turned back with --unmap (generations aside: --times shifts
# them). Then the defaults, memprof, gzip, stores, a map reused, and the
# refusals.
. "$(dirname "$0")/../lib.sh"
needs jq jq

H=$HEAPDUMP
G=$TOP/data/gen/secrets.rb
rubies=${HD_RUBIES:-/usr/bin/ruby $(ls /opt/rubies/*/bin/ruby 2>/dev/null)}
gem_rubies=${HD_RUBIES:-/usr/bin/ruby}
MARKERS="SECRETVALUE SECRETKEY SECRETSYM SECRETIVAR SECRETCONST SECRETGLOBAL
SECRETLOCAL SECRETPATH SECRETMETHOD SECRETCLASS SECRETBYTES"

# norm: JSON with what redaction may change left out (the dumps' names,
# generations, the sidecars' names, string contents, which --unmap does
# not turn back) and every array sorted
# (rows of equal counts sort by their names, which differ)
norm() {
	jq -S 'walk(if type == "object" then del(.generation, .generations,
	  .dump, .dumps, .input, .inputs, .before, .after, .later, .sidecar,
	  .value)
	  elif type == "array" then sort else . end)'
}

# same T NAME CMD...: CMD on the three original dumps ($o1 $o2 $o3 where
# CMD says @1 @2 @3) and on the redacted ones, unmapped, agree
same() {
	t=$1 n=$2
	shift 2
	a=$(printf '%s ' "$@" | sed "s|@1|$o1|g; s|@2|$o2|g; s|@3|$o3|g")
	b=$(printf '%s ' "$@" | sed "s|@1|$r1|g; s|@2|$r2|g; s|@3|$r3|g")
	# shellcheck disable=SC2086
	$H $a 2>/dev/null | norm >"$TMP/a.json"
	# shellcheck disable=SC2086
	$H $b 2>/dev/null | $H redact --unmap "$M" | norm >"$TMP/b.json"
	if [ ! -s "$TMP/a.json" ]; then
		notok "$t/$n" "no output from heapdump $a"
	elif cmp -s "$TMP/a.json" "$TMP/b.json"; then
		ok "$t/$n"
	else
		notok "$t/$n" "$(diff "$TMP/a.json" "$TMP/b.json" | head -c 300)"
	fi
}

# run T DIR: the checks on DIR's three dumps
run() {
	t=$1 d=$2
	o1=$d/secrets_before.json o2=$d/secrets_after.json o3=$d/secrets_later.json
	r1=$d/r_before.json r2=$d/r_after.json r3=$d/r_later.json
	M=$d/map
	for p in before after later; do
		$H redact -q --all --map "$M" "$d/secrets_$p.json" -o "$d/r_$p.json" 2>"$TMP/err" &&
		! grep -v 'repaired' "$TMP/err" | grep -q . ||
			{ notok "$t/redact-$p" "$(head -c 300 "$TMP/err")"; return; }
	done
	ok "$t/redact"
	check "$t/map-mode" "600" "$(stat -c %a "$M")"
	# every marker was there, and none is left
	for m in $MARKERS; do
		n0=$(cat "$o1" "$o2" "$o3" | grep -aic "$m")
		n1=$(cat "$d"/r_* | grep -aic "$m")
		check "$t/gone-$m" "planted, 0 left" \
			"$([ "$n0" -gt 0 ] && echo planted || echo "not planted"), $n1 left"
	done
	# the file name's bytes: raw (dump_all) or escaped (the gem)
	raw=$(printf '\377\376')
	n0=$(cat "$o3" | grep -ac -e "$raw" -e '\\u00ff\\u00fe')
	n1=$(cat "$d"/r_* | grep -ac -e "$raw" -e '\\u00ff\\u00fe')
	check "$t/gone-bytes" "planted, 0 left" \
		"$([ "$n0" -gt 0 ] && echo planted || echo "not planted"), $n1 left"
	# the gem's sidecar: beside the output, without the host, the
	# process's numbers kept (the leak's "process" section compared below)
	if [ -f "$o3.hdmeta" ]; then
		check "$t/sidecar" "redacted $(jq .process.rss "$o3.hdmeta")" \
			"$(jq -r '"\(.host) \(.process.rss)"' "$r3.hdmeta")"
		check "$t/sidecar-host-gone" "0" "$(grep -c "\"$(jq -r .host "$o3.hdmeta")\"" "$r3.hdmeta")"
	fi
	check "$t/valid-json" "0" "$(cat "$r1" "$r2" "$r3" | jq -c . 2>&1 >/dev/null | wc -l)"
	check "$t/lines" "$(cat "$o3" | wc -l)" "$(cat "$r3" | wc -l)"
	# the analyses agree
	same "$t" stats stats -f json --by class,type,location,method @3
	same "$t" diff diff -f json @1 @2 @3
	same "$t" leaks leaks -f json @1 @2 @3
	verdict=$(jq -r '.verdict.text // .verdict' "$TMP/a.json")
	same "$t" top top -f json @3
	same "$t" strings strings -f json @3
	holder=$(jq -r .holder "$d/secrets_expected.json")
	same "$t" path path -f json @3 "$holder"
	# waste's numbers (its top site among sites of equal bytes is the
	# first by name, and names differ: so does its line)
	a=$($H waste -f json "$o3" 2>/dev/null | jq -c 'del(.. | .line?) | [.. | numbers] | sort')
	b=$($H waste -f json "$r3" 2>/dev/null | jq -c 'del(.. | .line?) | [.. | numbers] | sort')
	check "$t/waste" "$a" "$b"
	# the verdict names the holder (unmapped: its words are the same)
	case $verdict in *SecretVault*) ok "$t/verdict-holder" ;;
	*) notok "$t/verdict-holder" "$verdict" ;; esac
}

# the gem on the first and the last of gem_rubies (3.1: no temporary
# names; 4.0: IMEMO/fields), dump_all on the newest Ruby
set -- $gem_rubies
first=$1
shift $(($# - 1))
for r in $(printf '%s\n' "$first" "$1" | uniq); do
	v=$("$r" -e 'print RUBY_VERSION')
	case ${B:-build} in
	/*) EXT=$B/ext-$v ;;
	*) EXT=$TOP/${B:-build}/ext-$v ;;
	esac
	[ -f "$EXT/heapdump_ext.so" ] || { notok "gem-$v" "$EXT/heapdump_ext.so is missing: make ext RUBIES=$r"; continue; }
	mkdir -p "$TMP/gem-$v"
	if ! env DUMPER=heapdump RUBYLIB="$EXT:$TOP/src/lib" "$r" --disable-gems "$G" "$TMP/gem-$v" 2>"$TMP/err"; then
		notok "gem-$v/program" "$(head -c 300 "$TMP/err")"; continue
	fi
	run "gem-$v" "$TMP/gem-$v"
done

newest="" nv=""
for r in $rubies; do
	[ -x "$r" ] || continue
	v=$("$r" -e 'print RUBY_VERSION')
	if [ -z "$nv" ] || [ "$(printf '%s\n%s\n' "$nv" "$v" | sort -V | tail -1)" = "$v" ]; then
		newest=$r nv=$v
	fi
done
mkdir -p "$TMP/dump_all"
if "$newest" --disable-gems "$G" "$TMP/dump_all" 2>"$TMP/err"; then
	run "dump_all-$nv" "$TMP/dump_all"
else
	notok "dump_all-$nv/program" "$(head -c 300 "$TMP/err")"
fi

# The rest on the dump_all set.
d=$TMP/dump_all
L=$d/secrets_later.json

# Defaults: contents and hash keys go, paths and names stay.
$H redact -q "$L" -o "$TMP/def.json" 2>/dev/null
check defaults-values "0" "$(grep -ac SECRETVALUE "$TMP/def.json")"
check defaults-paths-kept "yes" "$(grep -q SECRETPATH "$TMP/def.json" && echo yes)"
check defaults-stdout "$(cat "$L" | wc -l)" \
	"$($H redact -q --map "$d/map" "$L" 2>/dev/null | wc -l)"
# the same map, the same dump: the same bytes (its key is reused)
$H redact -q --all --map "$d/map" "$L" -o "$TMP/again.json" 2>/dev/null
check map-reused "same" "$(cmp -s "$TMP/again.json" "$d/r_later.json" && echo same)"
# gzip and a store read as the dump
gzip -c "$L" >"$TMP/l.json.gz"
$H redact -q --all --map "$d/map" "$TMP/l.json.gz" -o "$TMP/gz.json" 2>/dev/null
check gzip "same" "$(cmp -s "$TMP/gz.json" "$d/r_later.json" && echo same)"
cp "$L" "$TMP/s.json"
$H index -q "$TMP/s.json" -o "$TMP/s.hds" 2>/dev/null
$H redact -q --all --map "$d/map" "$TMP/s.hds" -o "$TMP/st.json" 2>/dev/null
check store "same" "$(cmp -s "$TMP/st.json" "$d/r_later.json" && echo same)"
$H redact -q --all --map "$d/map" - <"$L" >"$TMP/in.json" 2>/dev/null
check stdin "same" "$(cmp -s "$TMP/in.json" "$d/r_later.json" && echo same)"

# memprof: read as memprof, the same stats
MP=$DATA/edge_memprof.json
$H redact -q --all --map "$TMP/mp.map" "$MP" -o "$TMP/mp.json"
a=$($H stats -f json --by class,type "$MP" | norm)
b=$($H stats -f json --by class,type "$TMP/mp.json" | $H redact --unmap "$TMP/mp.map" | norm)
check memprof-stats "$a" "$b"
check memprof-contents "0" "$(grep -c '"data":"app.rb"' "$TMP/mp.json")"
check memprof-ivars "0" "$(grep -c '@body' "$TMP/mp.json")"

# Every odd fixture (invalid lines, salvage, framing) comes out as valid
# JSON with the same objects
for f in "$DATA"/bad_*.json "$DATA"/edge_*.json; do
	[ -f "$f" ] || continue
	n=$(basename "$f" .json)
	a=$($H stats -f json "$f" 2>/dev/null | jq -c '.totals | {objects, memsize, roots}')
	[ -n "$a" ] || continue
	$H redact -q --all "$f" -o "$TMP/odd.json" 2>/dev/null ||
		{ notok "odd-$n" "redact failed"; continue; }
	b=$($H stats -f json "$TMP/odd.json" 2>/dev/null | jq -c '.totals | {objects, memsize, roots}')
	bad=$(jq -c . "$TMP/odd.json" 2>&1 >/dev/null | wc -l)
	check "odd-$n" "$a 0" "$b $bad"
done

# unmap leaves what is not in the map, however often it comes
check unmap-unknown "x m_0000000000000000 [\"k\"] m_0000000000000000 [\"k\"]" \
	"$(echo 'x m_0000000000000000 ["k"] m_0000000000000000 ["k"]' | $H redact --unmap "$d/map")"

# Refusals, each saying why
# refuse NAME RC PATTERN CMD...
refuse() {
	n=$1 want=$2 pat=$3
	shift 3
	check_rc "$n" "$want" "$@"
	check_grep "$n-says" "$pat" "$TMP/err"
}
ln -s "$TMP/elsewhere" "$TMP/link.map"
refuse refuse-map-link 2 "symbolic link" $H redact -q --map "$TMP/link.map" "$L" -o "$TMP/x.json"
check refuse-map-link-nothing "no" "$([ -e "$TMP/elsewhere" ] && echo yes || echo no)"
refuse refuse-map-input 2 "is the input" $H redact -q --map "$L" "$L" -o "$TMP/x.json"
refuse refuse-map-output 2 "name one file" $H redact -q --map "$TMP/x.json" "$L" -o "$TMP/x.json"
refuse refuse-map-not-a-map 2 "not a redaction map" $H redact -q --map "$DATA/edge_memprof.json.expect" "$L" -o "$TMP/x.json"
refuse refuse-output-input 2 "is the input" $H redact -q "$L" -o "$L"
refuse refuse-no-dump 2 "which dump" $H redact -q
refuse unmap-missing-map 1 "No such file" $H redact --unmap "$TMP/none.map"
refuse unmap-with-options 2 "no redaction option" $H redact --unmap "$d/map" --all
