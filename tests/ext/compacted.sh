#!/bin/sh
# tests/ext/compacted.sh - a leak hunt across compactions: the gem's
# sidecar says how many compactions ran (gc_compact_count), and with
# untraced dumps between which the count grew, heapdump leaks (the CLI
# and the gem's Heap#leaks alike) warns 'compacted' (a moved object looks
# new without tracing); traced dumps follow moved objects by their
# generation (no warning, the holder named); dumps without a compaction
# between them are not warned about (compacted_prog.rb).
SUITE=ext/compacted
. "$(dirname "$0")/lib.sh"

prog=$TOP/tests/ext/compacted_prog.rb
for mode in plain traced still; do
	d=$TMP/$mode
	mkdir "$d"
	if ! ruby "$prog" "$d" $mode >"$TMP/prog.out" 2>"$TMP/prog.err" || ! grep -qx done "$TMP/prog.out"; then
		notok $mode/program "$(tail -c 400 "$TMP/prog.err")"
		continue
	fi
	counts=$(for w in before after later; do jq -r '.gc_compact_count' "$d/$w.json.hdmeta" 2>/dev/null || echo none; done | tr '\n' ' ')
	case $mode in
	still) want_grow=no ;;
	*) want_grow=yes ;;
	esac
	grew=$(echo $counts | awk '{ print ($1 ~ /^[0-9]+$/ && $2 > $1 && $3 > $2) ? "yes" : (($1 ~ /^[0-9]+$/ && $1 == $2 && $2 == $3) ? "no" : "bad") }')
	check "$mode/sidecar-compact-count" "$want_grow" "$grew"
	"$HEAPDUMP" leaks -q -f json --no-cache "$d/before.json" "$d/after.json" "$d/later.json" >"$TMP/l.json" 2>"$TMP/l.err"
	cli=$(jq -r '[.caveats[] | select(.name == "compacted") | .warning] | map(tostring) | join(",")' "$TMP/l.json" 2>/dev/null)
	gem=$(ruby -e 'require "heapdump"; h = %w[before after later].map { |w| HeapDump.load(File.join(ARGV[0], "#{w}.json"), cache: false) }
		l = h[0].leaks(h[1], h[2]); puts l.caveats.select { |c| c[:name] == "compacted" }.map { |c| c[:warning].to_s }.join(",")' "$d" 2>"$TMP/g.err")
	case $mode in
	plain) want=true ;;
	*) want= ;;
	esac
	check "$mode/cli-warns" "$want" "$cli"
	check "$mode/gem-warns" "$want" "$gem"
	if [ "$mode" != plain ]; then
		holder=$(jq -r '.verdict.first.path_text // ""' "$TMP/l.json")
		case $holder in
		*Registry*) ok "$mode/holder: $holder" ;;
		*) notok "$mode/holder" "suspect 1 is not the registry: $holder" ;;
		esac
	fi
done
