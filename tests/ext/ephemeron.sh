#!/bin/sh
# tests/ext/ephemeron.sh - the keys of ObjectSpace::WeakKeyMap (issue 34,
# item 12), which dump_all does not list: the gem's dump writes each
# value as the last reference of its key, named "(ephemeron value)"
# (src/hd_eph.c, man 5 heapdump-dump), for the keys it can ask without
# running the program's code: Strings, and objects with an object id
# whose #hash is Kernel#hash. A key with its own #hash, or an Array, is
# not asked (its value stays the map's). Asking gives no object an id:
# on 4.0, whose dumps flag object ids, an object never hashed has none
# after the dump. `heapdump leaks` then credits the values to the keys'
# holder (tests/cli/verdict.sh, weakkey); here the path to a value goes
# through its key, and the key dominates it (lib/dominators.c). Ruby 3.1
# has no WeakKeyMap: no such name is written.
SUITE=ext/ephemeron
. "$(dirname "$0")/lib.sh"

ruby -e '
require "heapdump"
class Doc; def initialize(n) = @n = "doc-#{n}"; end
class Custom; def hash = 7; def eql?(o) = o.is_a?(Custom); end
$docs = Array.new(3) { |i| Doc.new(i) }
$keys = ["key-a".dup, "key-b".dup]
$custom = Custom.new
$arr = [1, 2]
$plain = Object.new
if defined?(ObjectSpace::WeakKeyMap)
  $map = ObjectSpace::WeakKeyMap.new
  $docs.each_with_index { |d, i| $map[d] = "parse-#{i}".dup }
  $keys.each { |k| $map[k] = [k.upcase] }
  $map[$custom] = "custom-value".dup
  $map[$arr] = "array-value".dup
end
HeapDump.dump(ARGV[0])
require "objspace"
addr = ->(o) { ObjectSpace.dump(o)[/"address":"(0x\h+)"/, 1] }
File.write(ARGV[1], [*$docs, *$keys, $custom, $arr, $plain].map(&addr).join("\n") + "\n")
' "$TMP/d.json" "$TMP/addrs" 2>"$TMP/rb.err" || notok run "$(tail -c 300 "$TMP/rb.err")"

# the record of the object at an address
rec() { grep -F "{\"address\":\"$1\"," "$TMP/d.json"; }
eph_names() { rec "$1" | jq '[.ref_names[]? | select(. == "(ephemeron value)")] | length'; }
set -- $(cat "$TMP/addrs")
doc0=$1 doc1=$2 doc2=$3 ka=$4 kb=$5 custom=$6 arr=$7 plain=$8

if ruby -e 'exit(defined?(ObjectSpace::WeakKeyMap) ? 0 : 1)'; then
	check doc-key-listed "1 1 1" "$(eph_names "$doc0") $(eph_names "$doc1") $(eph_names "$doc2")"
	val=$(rec "$doc0" | jq -r '.references[-1]')
	check doc-value-last "\"parse-0\"" "$(rec "$val" | jq -c .value)"
	check doc-own-names-kept "@n" "$(rec "$doc0" | jq -r '.ref_names[0]')"
	check string-key-listed "1 1" "$(eph_names "$ka") $(eph_names "$kb")"
	sval=$(rec "$ka" | jq -r '.references[-1]')
	check string-value "ARRAY" "$(rec "$sval" | jq -r .type)"
	check custom-hash-not-asked 0 "$(eph_names "$custom")"
	check array-key-not-asked 0 "$(eph_names "$arr")"
	check references-and-names-parallel true \
		"$(rec "$doc0" | jq '(.references | length) == (.ref_names | length)')"
	# leaks' path to a value goes through its key
	"$HEAPDUMP" path -q "$TMP/d.json" "$val" >"$TMP/path" 2>&1
	check_grep path-through-key 'Doc \(ephemeron value\) -> String' "$TMP/path"
	# and its key dominates it (the map's reference is not counted):
	# the key's retained size holds the value
	"$HEAPDUMP" dominators -q "$TMP/d.json" --address "$val" >"$TMP/dom" 2>&1
	check dominated-by-key "$doc0" \
		"$(grep -B1 'via (ephemeron value)' "$TMP/dom" | sed -n '1s/^ *\(0x[0-9a-f]*\) .*/\1/p')"
	case $HD_RUBY_VERSION in
	3.[0-9]*) ;;
	*) check no-id-given null "$(rec "$plain" | jq .flags.object_id)" ;;
	esac
else
	check none-without-weakkeymap 0 "$(grep -c '(ephemeron value)' "$TMP/d.json")"
fi
exit 0
