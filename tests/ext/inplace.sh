#!/bin/sh
# tests/ext/inplace.sh - the growth in place (lib/growth.c, lib/leaks.c
# set_inplace): memory that grows inside old objects, which no new
# object shows. Real programs, on every Ruby, dumped by the gem and by
# ObjectSpace.dump_all, three dumps each:
#   seen     a Hash of Integers (a "seen ids" set) and a log String
#            appended to: before this check `leaks` said "no significant
#            leak" (4 objects, 192 B new) while 7 MB grew; now the
#            verdict is a leak, first.kind in_place, whose path ends at
#            the Hash under Seen (@ids with the gem), with the Hash's
#            memsize dump by dump as jq reads it from the three dumps;
#   buffer   only a String buffer grows: it is named, with its length
#            of text (the dump's bytesize) grown at every dump;
#   both     a new-object leak (a registry of Strings, 300 KB) beside
#            a small buffer that grows (40 KB): suspect 1 stays first;
#   steady   a Hash rewritten in place at the same size: no leak.
SUITE=ext/inplace
. "$(dirname "$0")/lib.sh"
needs jq jq

cat >"$TMP/prog.rb" <<'RB'
require "objspace"
mode, dumper, *out = ARGV
require "heapdump" if dumper == "gem"
class Seen
  def initialize = @ids = {}
  def mark(i) = @ids[i] = true
end
class Log
  def initialize = @buf = +""
  def add(l) = @buf << l
end
class Registry
  def initialize = @items = []
  def add(x) = @items << x
end
SEEN = Seen.new
LOG = Log.new
REG = Registry.new
STEADY = { a: 1 }
def work(mode, step)
  case mode
  when "seen"
    (step * 30_000).upto(step * 30_000 + 29_999) { |i| SEEN.mark(i) }
    3_000.times { |i| LOG.add("request #{i} done\n") }
  when "buffer"
    20_000.times { |i| LOG.add("line #{i} of the log\n") }
  when "both"
    1_000.times { |i| REG.add("item #{step} #{i} " + "x" * 200) }
    2_000.times { |i| LOG.add("#{i}\n") }
  when "steady"
    100.times { |i| STEADY[:a] = "v#{i}" }
  end
end
def dump(dumper, path)
  GC.start
  if dumper == "gem"
    HeapDump.dump(path, gc: true)
  else
    File.open(path, "w") { |f| ObjectSpace.dump_all(output: f) }
  end
end
work(mode, 0)
out.each_with_index { |p, k| work(mode, k + 1) if k > 0; dump(dumper, p) }
RB

for d in gem dump_all; do
	for m in seen buffer both steady; do
		o=$TMP/$d-$m
		if ! ruby "$TMP/prog.rb" "$m" "$d" "$o.1" "$o.2" "$o.3" 2>"$TMP/err"; then
			notok "$d/$m/run" "$(tail -c 300 "$TMP/err")"
			continue
		fi
		"$HEAPDUMP" leaks -q -f json "$o.1" "$o.2" "$o.3" >"$o.json" 2>"$TMP/err" ||
			notok "$d/$m/leaks" "exit $?: $(head -c 300 "$TMP/err")"
	done
	v() { jq -r "$1" "$TMP/$d-$2.json"; }

	# seen: the Hash is named, with the dumps' own memsizes
	check "$d/seen/leak" true "$(v .verdict.leak seen)"
	check "$d/seen/kind" in_place "$(v .verdict.first.kind seen)"
	want="Seen -> Hash"
	[ "$d" = gem ] && want="Seen @ids -> Hash"
	check "$d/seen/path" "$want" "$(v '.verdict.first.path_text | split(" -> ") | .[-2:] | join(" -> ")' seen)"
	addr=$(v .verdict.first.address seen)
	got=$(v '.verdict.first.memsizes | map(tostring) | join(" ")' seen)
	mem=""
	for k in 1 2 3; do
		mem="$mem $(grep -F "{\"address\":\"$addr\"," "$TMP/$d-seen.$k" | jq -r .memsize)"
	done
	check "$d/seen/memsizes-of-the-dumps" "${mem# }" "$got"
	check "$d/seen/grew-in-place-2" 2 "$(v '.totals.inplace_count' seen)"
	v .verdict.text seen >"$TMP/text"
	check_grep "$d/seen/text" '^growth in place: .*Hash grew at every dump: .*length 30000 -> 60000 -> 90000' "$TMP/text"

	# buffer: the String, whose bytesize grew at every dump
	check "$d/buffer/kind" in_place "$(v .verdict.first.kind buffer)"
	addr=$(v .verdict.first.address buffer)
	sizes=""
	for k in 1 2 3; do
		sizes="$sizes $(grep -F "{\"address\":\"$addr\"," "$TMP/$d-buffer.$k" | jq -r .bytesize)"
	done
	check "$d/buffer/a-string-that-grows" yes \
		"$(echo $sizes | awk '{ print ($1 < $2 && $2 < $3 && $3 > 1000000) ? "yes" : "no: " $0 }')"
	[ "$d" = gem ] && check "$d/buffer/path" "Log @buf -> String" \
		"$(v '.verdict.first.path_text | split(" -> ") | .[-2:] | join(" -> ")' buffer)"

	# both: the new objects' suspect stays first
	check "$d/both/kind" suspect "$(v .verdict.first.kind both)"
	check "$d/both/inplace-counted" yes "$(v 'if .totals.inplace_memsize > 0 then "yes" else "no" end' both)"

	# steady: nothing grows, no leak
	check "$d/steady/no-leak" false "$(v .verdict.leak steady)"
done
exit 0
