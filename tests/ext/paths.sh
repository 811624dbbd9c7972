#!/bin/sh
# tests/ext/paths.sh - retention paths a person can read, on dumps a real
# Ruby writes at test time (data/gen/chain.rb: a leak held at the far end
# of a chain of 2,000 closures), with the gem (reference names) and with
# ObjectSpace.dump_all: every human output folds the chain's run of
# repeated hops (heapdump path's chain line and object lines, leaks in
# text and TSV, report's HTML, serve's API runs, the gem's Path#to_s and
# Suspect#inspect) with the right count and lines of bounded length, and
# the JSON outputs keep every hop.
SUITE=ext/paths
. "$(dirname "$0")/lib.sh"
needs jq jq
needs curl curl
H=$HEAPDUMP
N=2000
MORE=3,998 # objects of the run below its first repetition: 2 (N - 1)
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# longest FILE: the length of its longest line
longest() { awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$1"; }
# short NAME FILE: no line of FILE is longer than 300 characters
short() {
	m=$(longest "$2")
	if [ "$m" -le 300 ]; then ok "$1"; else notok "$1" "a line of $m characters"; fi
}

for dumper in gem dump_all; do
	d=$TMP/$dumper
	mkdir "$d"
	if DUMPER=$dumper ruby "$TOP/data/gen/chain.rb" "$d" $N 2>"$TMP/rb.err"; then ok "$dumper/run"; else
		notok "$dumper/run" "chain.rb failed: $(tail -c 600 "$TMP/rb.err")"
		continue
	fi
	sink=$(jq -r .sink "$d/chain_expected.json")
	first=$(jq -r .first "$d/chain_expected.json")
	L=$d/chain_later.json
	# the pattern as printed: the gem names each env's link
	case $dumper in gem) pat='(Proc -> IMEMO/env prev ->)' ;; *) pat='(Proc -> IMEMO/env ->)' ;; esac

	# ---- path ----
	check_rc "$dumper/path" 0 "$H" path -q "$L" "$sink"
	cp "$TMP/out" "$d/path.txt"
	short "$dumper/path/short" "$d/path.txt"
	check "$dumper/path/folded-line" 1 \
		"$(grep -cF -- "  ... $pat x$N: $MORE more objects" "$d/path.txt")"
	case $dumper in gem)
		check_grep "$dumper/path/chain" "^  .*Holder ::CHAIN -> Array \\[0\\] -> \\(Proc -> IMEMO/env prev ->\\) x$N Array\$" "$d/path.txt" ;;
	esac
	# the first closure: one pair fewer, the target a Proc
	"$H" path -q "$L" "$first" >"$d/first.txt" 2>&1
	check "$dumper/path/first" 1 "$(grep -cF -- "  ... $pat x$((N - 1)): " "$d/first.txt")"
	# JSON keeps every hop
	"$H" path -q -f json "$L" "$sink" >"$d/path.json"
	check "$dumper/path/json-procs" $N "$(jq '[.path[] | select(.class == "Proc")] | length' "$d/path.json")"
	check "$dumper/path/json-length" "$(jq .length "$d/path.json")" "$(jq '.path | length' "$d/path.json")"

	# ---- dominators: the chain folds too, its JSON keeps every hop ----
	"$H" dominators -q "$L" "$sink" >"$d/dom.txt" 2>&1
	short "$dumper/dominators/short" "$d/dom.txt"
	check "$dumper/dominators/folded-line" 1 "$(grep -cF -- "  ... $pat x$N: $MORE more objects" "$d/dom.txt")"
	check "$dumper/dominators/json-procs" $N "$("$H" dominators -q -f json "$L" "$sink" | jq '[.chain[] | select(.object.class == "Proc")] | length')"

	# ---- leaks: text, TSV, JSON ----
	check_rc "$dumper/leaks" 0 "$H" leaks -q "$d/chain_before.json" "$d/chain_after.json" "$L"
	cp "$TMP/out" "$d/leaks.txt"
	short "$dumper/leaks/short" "$d/leaks.txt"
	check "$dumper/leaks/folded-lines" 1 "$(grep -cF -- "    ... $pat x$N: " "$d/leaks.txt" | awk '{ print ($1 >= 1) }')"
	check_rc "$dumper/leaks-tsv" 0 "$H" leaks -q -f tsv "$d/chain_before.json" "$d/chain_after.json" "$L"
	cp "$TMP/out" "$d/leaks.tsv"
	short "$dumper/leaks-tsv/short" "$d/leaks.tsv"
	check "$dumper/leaks-tsv/folded" 1 "$(grep '^suspect	' "$d/leaks.tsv" | grep -cF -- "-> $pat x$N Array")"
	check "$dumper/leaks-tsv/shape" 1 "$(grep '^cluster	' "$d/leaks.tsv" | grep -cF -- " $pat x$N Array")"
	"$H" leaks -q -f json "$d/chain_before.json" "$d/chain_after.json" "$L" >"$d/leaks.json"
	check "$dumper/leaks-json/every-hop" $N \
		"$(jq --arg a "$sink" '[.suspects[] | select(.holder.address == $a or .first_border.address == $a) | .path.path[]? // .path.objects[]? | select(.class == "Proc")] | length' "$d/leaks.json")"

	# ---- report ----
	check_rc "$dumper/report" 0 "$H" report -q -o "$d/r.html" "$d/chain_before.json" "$d/chain_after.json" "$L"
	check_grep "$dumper/report/pathline" "class=\"fold\">\\(Proc &#8594; IMEMO/env( prev)? &#8594;\\) x$N</span>" "$d/r.html"
	check_grep "$dumper/report/list" "<li class=\"fold\">&#8230; .* x$N</span>: $MORE more objects" "$d/r.html"
	check_grep "$dumper/report/shape" "<td class=\"shape\">.*\\(Proc -&gt; IMEMO/env( prev)? -&gt;\\) x$N Array</td>" "$d/r.html"
	check "$dumper/report/no-long-list" 0 "$(grep -c 'class="hop"' "$d/r.html" | awk '{ print ($1 > 200) }')"

	# ---- serve: every hop, and the runs the page folds ----
	if serve_start "$dumper-serve" 300 "$H" serve -q --no-cache "$L"; then
		curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/object?address=$sink" >"$d/obj.json"
		check "$dumper/serve/hops" $N "$(jq '[.path.hops[] | select(.class == "Proc")] | length' "$d/obj.json")"
		check "$dumper/serve/runs" "2 $N" "$(jq -r '.path.runs[] | select(.[2] > 100) | "\(.[1]) \(.[2])"' "$d/obj.json")"
		check "$dumper/serve/dominator-runs" "2 $N" "$(jq -r '.dominators.runs[] | select(.[2] > 100) | "\(.[1]) \(.[2])"' "$d/obj.json")"
		kill "$SPID" 2>/dev/null
	fi

	# ---- the gem's Path#to_s and Suspect#inspect ----
	ruby -rheapdump -e '
		d, sink, n = ARGV
		n = Integer(n)
		l = HeapDump.load("#{d}/chain_later.json", cache: false)
		path = l.path(l.select(address: sink).first)
		puts "to_s #{path.to_s.length} #{path.to_s[/\) x\d+ Array\z/]}"
		puts "ids #{path.ids.length >= 2 * n + 1}"
		puts "runs #{path.runs.map { |r| r[1..] }.select { |r| r[1] > 100 }.inspect}"
		b = HeapDump.load("#{d}/chain_before.json", cache: false)
		a = HeapDump.load("#{d}/chain_after.json", cache: false)
		s = b.leaks(a, l).suspects.find { |x| x.path && x.path.ids.last == path.ids.last }
		puts "inspect #{s && s.inspect.length} #{s && s.inspect[/x\d+ Array/]}"
	' "$d" "$sink" $N >"$d/rb.txt" 2>&1
	check "$dumper/ruby/path-to_s" "x$N Array" "$(awk '$1 == "to_s" && $2 <= 300 { print $4, $5 }' "$d/rb.txt")"
	check "$dumper/ruby/path-ids" "ids true" "$(grep '^ids' "$d/rb.txt")"
	check "$dumper/ruby/path-runs" "runs [[2, $N]]" "$(grep '^runs' "$d/rb.txt")"
	check "$dumper/ruby/suspect-inspect" "x$N Array" "$(awk '$1 == "inspect" && $2 <= 400 { print $3, $4 }' "$d/rb.txt")"
done

# ---- which path: program-level holders before VM caches and the C stack ----
# data/gen/const_cache.rb: Config::TABLE, a Hash, is also held by inline
# constant caches (IMEMO/constcache) of instruction sequences, one of
# them the main script's, which machine_context holds while it dumps.
c=$TMP/cc
mkdir "$c"
if ruby "$TOP/data/gen/const_cache.rb" "$c/cc.json" "$c/cc_expected.json" 2>"$TMP/rb.err"; then ok rule/run; else
	notok rule/run "const_cache.rb failed: $(tail -c 600 "$TMP/rb.err")"
fi
t=$(jq -r .table "$c/cc_expected.json")
# the dump has the other ways: constant caches hold the Hash (3.1 writes
# the cached value as the IMEMO's "class", later Rubies as a reference)
check rule/constcache-holds 1 "$(jq -c --arg a "$t" 'select(.imemo_type == "constcache" and (((.references // []) | index($a)) or .class == $a))' "$c/cc.json" | head -1 | wc -l | tr -d ' ')"
"$H" path -q -f json "$c/cc.json" "$t" >"$c/path.json"
check rule/through-constant "Config Hash" "$(jq -r '[.path[].class] | .[-2:] | join(" ")' "$c/path.json")"
check rule/not-stack "vm" "$(jq -r .root "$c/path.json")"
check rule/no-cache 0 "$(jq '[.path[] | select(.class | test("^IMEMO/(constcache|callcache|callinfo|iseq)$"))] | length' "$c/path.json")"
# where the shortest path went through the stack (3.4 and later: the
# constant's path is one hop longer there), the rule says it chose
case $HD_RUBY_VERSION in
3.4* | 4.*)
	check rule/json-passed-over '["vm_cache","machine_context"]' "$(jq -c .passed_over "$c/path.json")"
	"$H" path -q "$c/cc.json" "$t" >"$c/path.txt"
	check_grep rule/text-note '^  \(program-level holders preferred to the shortest path, from machine_context through a VM cache; man 1 heapdump-path\)$' "$c/path.txt"
	ruby -rheapdump -e 'h = HeapDump.load(ARGV[0], cache: false); puts h.path(h.select(address: ARGV[1]).first).note' "$c/cc.json" "$t" >"$c/rb.txt" 2>&1
	check rule/ruby-note "program-level holders preferred to the shortest path, from machine_context through a VM cache" "$(cat "$c/rb.txt")"
	if serve_start rule-serve 300 "$H" serve -q --no-cache "$c/cc.json"; then
		curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/object?address=$t" >"$c/obj.json"
		check rule/serve-note "program-level holders preferred to the shortest path, from machine_context through a VM cache" "$(jq -r .path.note "$c/obj.json")"
		check rule/serve-passed-over '["vm_cache","machine_context"]' "$(jq -c .path.passed_over "$c/obj.json")"
		kill "$SPID" 2>/dev/null
	fi
	;;
esac

# ---- a class-less DATA is named by its struct, everywhere ----
# Ruby 4.0's table of interned strings, a DATA of struct
# VM/concurrent_set without a class, was "(hidden DATA)" in paths,
# leaks, report and serve while stats named it by its struct
case $HD_RUBY_VERSION in
4.*)
	d=$TMP/dump_all
	L=$d/chain_later.json
	v=$(jq -r 'select(.type == "DATA" and .struct == "VM/concurrent_set" and (has("class") | not)) | .address' "$L" | head -1)
	check naming/fixture-has-table 1 "$(printf '%s\n' "$v" | grep -c '^0x')"
	"$H" path -q "$L" "$v" >"$d/vs.txt" 2>&1
	check_grep naming/path "^  $v DATA/VM/concurrent_set \\(DATA\\) memsize " "$d/vs.txt"
	check naming/path-json DATA/VM/concurrent_set "$("$H" path -q -f json "$L" "$v" | jq -r '.path[-1].class')"
	"$H" stats -q -n 0 --by class "$L" >"$d/stats.txt" 2>&1
	check_grep naming/stats '  DATA/VM/concurrent_set$' "$d/stats.txt"
	# every path printer: no class-less DATA with a struct is hidden
	for f in path.txt leaks.txt leaks.tsv r.html; do
		check "naming/no-hidden-data/$f" 0 "$(grep -c '(hidden DATA)' "$d/$f")"
	done
	check_grep naming/leaks-path 'DATA/VM/pin_array_list' "$d/leaks.txt"
	if serve_start naming-serve 300 "$H" serve -q --no-cache "$L"; then
		check naming/serve DATA/VM/concurrent_set "$(curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/object?address=$v" | jq -r '.path.text[-1]')"
		kill "$SPID" 2>/dev/null
	fi
	check naming/ruby DATA/VM/concurrent_set "$(ruby -rheapdump -e 'h = HeapDump.load(ARGV[0], cache: false); puts h.select(address: ARGV[1]).first.name' "$L" "$v" 2>&1)"
	;;
esac
