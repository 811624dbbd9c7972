#!/bin/sh
# tests/ext/version.sh - the Ruby version of the gem's dumps (issue 34,
# item 10): the first ROOT record names the exact version
# ("ruby_version", man 5 heapdump-dump), which heapdump stats prints (text
# and JSON, from the dump, from its store, without its sidecar), as
# HeapDump::Heap#ruby_version does; a since: dump has no ROOT record:
# its sidecar says it (stats' process line and identity columns,
# Heap#ruby_version). The features alone gave "3.2" for 3.3.10 and
# "unknown" for 3.4.8 and 4.0.1.
SUITE=ext/version
. "$(dirname "$0")/lib.sh"

want=$HD_RUBY_VERSION
ruby -e 'require "heapdump"; HeapDump.dump(ARGV[0])
	GC.start; g = GC.count # >= 1: since: 0 is a whole dump
	HeapDump.trace_allocations { $kept = Array.new(10) { Object.new } }
	HeapDump.dump(ARGV[1], since: g)' \
	"$TMP/a.json" "$TMP/since.json" 2>"$TMP/rb.err" ||
	notok dump "$(tail -c 300 "$TMP/rb.err")"
first=$(head -n 1 "$TMP/a.json" | jq -r 'select(.type == "ROOT") | .ruby_version' 2>/dev/null)
check first-root-names-it "$want" "$first"
check only-once 1 "$(grep -c '^{"type":"ROOT".*"ruby_version":' "$TMP/a.json")"

ruby_line() { "$HEAPDUMP" stats -q "$1" | awk '$1 == "ruby" { print $2 }'; }
check stats-text "$want" "$(ruby_line "$TMP/a.json")"
check stats-json "$want" "$("$HEAPDUMP" stats -q -f json "$TMP/a.json" | jq -r .ruby)"
cp "$TMP/a.json" "$TMP/alone.json"
check stats-without-sidecar "$want" "$(ruby_line "$TMP/alone.json")"
"$HEAPDUMP" index -q "$TMP/alone.json" -o "$TMP/alone.hds" 2>"$TMP/err" || notok index "$(head -c 300 "$TMP/err")"
check stats-of-store "$want" "$(ruby_line "$TMP/alone.hds")"
check stats-stdin "$want" "$("$HEAPDUMP" stats -q - <"$TMP/alone.json" | awk '$1 == "ruby" { print $2 }')"
# a since: dump: no ROOT record, the sidecar says it
check since-objects yes "$([ -s "$TMP/since.json" ] && echo yes)"
check since-no-root 0 "$(grep -c '^{"type":"ROOT"' "$TMP/since.json")"
check since-process-line "$want" "$("$HEAPDUMP" stats -q "$TMP/since.json" | awk '$1 == "process" { sub(",", "", $5); print $5 }')"
check since-identity "$want sidecar" "$("$HEAPDUMP" stats -q -f ndjson "$TMP/since.json" | head -n 1 | jq -r '"\(.ruby_version) \(.ruby_version_from)"')"
check since-heap-ruby-version "$want" "$(ruby -e 'require "heapdump"; print HeapDump.load(ARGV[0], cache: false).ruby_version' "$TMP/since.json" 2>"$TMP/err")"
check heap-ruby-version "$want" "$(ruby -e 'require "heapdump"; print HeapDump.load(ARGV[0], cache: false).ruby_version' "$TMP/alone.json" 2>"$TMP/err")"
exit 0
