#!/bin/sh
# tests/tools/same_output.sh - runs two builds of heapdump over the same
# inputs and compares what they write, byte for byte: standard output,
# standard error, exit status and every file written (stores included).
# For refactorings that must not change behaviour.
#
#   tests/tools/same_output.sh OLD NEW [DUMP...]
#
# OLD and NEW are heapdump binaries. The inputs are every fixture of
# data/dumps plus the DUMPs given (e.g. the chain and pair dumps of
# tests/bench/gen_chain.rb and gen_pair.rb: BEFORE and AFTER of a pair are
# recognised by their names, *before* and *after*). Commands: stats,
# index (with and without --dominators and --skip-weak), top, dominators,
# path, roots-of, subgraph-of, to-dot, to-gml, interface-with, diff,
# leaks, in every format, on the dump and on the store.
#
# Exits 0 when every run matched, 1 listing the runs that differ, 2 on a
# usage error. SAME_KEEP=1 keeps the work directory. SAME_STRIP=ID compares
# NEW's stores without their section ID (tests/tools/store_sections strip,
# built as $B/tests/store_sections), for a build that adds a section. The time a command
# says it took ("computed in 0.01s") is not compared.
set -u
LC_ALL=C
export LC_ALL
[ $# -ge 2 ] || { echo "usage: $0 OLD NEW [DUMP...]" >&2; exit 2; }
OLD=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
NEW=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
shift 2
top=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d) || exit 2
[ "${SAME_KEEP:-0}" = 1 ] || trap 'rm -rf "$W"' EXIT
mkdir "$W/old" "$W/new"
n=0

# run ARGS...: one run of each binary, in its own directory (outputs are
# named relative to it, so messages naming them match).
run() {
	n=$((n + 1))
	printf '%s\t%s\n' "$n" "$*" >>"$W/runs"
	for side in old new; do
		if [ $side = old ]; then bin=$OLD; else bin=$NEW; fi
		(cd "$W/$side" &&
			{ "$bin" "$@" 2>"e.$n"; echo $? >"r.$n"; } |
			sed 's/ computed in [0-9.]*s$/ computed in Ts/' >"o.$n")
	done
}

# for_input IN: the single-input commands on a dump or a store.
for_input() {
	in=$1
	for f in text json tsv; do
		run stats -q -f "$f" -n 0 --by type,class,location "$in"
		run stats -q -f "$f" -n 0 "$in"
		run stats -q -f "$f" --all --namespace "$in"
		run top -q -f "$f" -n 0 "$in"
		run top -q -f "$f" -n 25 --by class "$in"
		run top -q -f "$f" -n 0 --all --skip-weak "$in"
	done
	for sel in "--type OBJECT" "--class Node" "--generation 1.."; do
		# shellcheck disable=SC2086
		{
			for f in text json; do
				run dominators -q -f "$f" -n 0 $sel "$in"
				run dominators -q -f "$f" -n 50 --all --skip-weak $sel "$in"
				run path -q -f "$f" -n 0 $sel "$in"
				run path -q -f "$f" -n 50 --skip-weak $sel "$in"
			done
			run roots-of -q $sel "$in"
			run roots-of -q --all-ancestors $sel "$in"
			run roots-of -q --skip-weak -o roots.$n.json $sel "$in"
			run subgraph-of -q $sel "$in"
			run subgraph-of -q -d 2 -o sub.$n.json $sel "$in"
			run to-dot -q --depth 2 --max-nodes 0 $sel "$in"
			run to-dot -q --depth 1 --collapse --max-nodes 0 $sel "$in"
			run to-gml -q --depth 2 --max-nodes 0 $sel "$in"
			run to-gml -q --collapse --max-nodes 0 -o g.$n.gml $sel "$in"
			run interface-with -q --self-border --summary -n 0 $sel "$in"
			run interface-with -q --summary -f json -n 0 $sel "$in"
		}
	done
}

# for_big IN: the same, bounded for large dumps (a 300,000-long chain
# has 300,000 paths of up to 300,000 steps each).
for_big() {
	in=$1
	for f in text json tsv; do
		run top -q -f "$f" -n 50 "$in"
		run top -q -f "$f" -n 50 --by class --skip-weak "$in"
	done
	for sel in "--class Node" "--type OBJECT" "--type HASH"; do
		# shellcheck disable=SC2086
		{
			run dominators -q -f json -n 20 $sel "$in"
			run path -q -f json -n 20 $sel "$in"
			run roots-of -q $sel "$in"
			run subgraph-of -q -d 3 $sel "$in"
			run to-gml -q --max-nodes 0 $sel "$in"
			run interface-with -q --summary -f json -n 0 $sel "$in"
			run interface-with -q --self-border $sel "$in"
		}
	done
}

# for_pair BEFORE AFTER [LATER]
for_pair() {
	for f in text json tsv; do
		run diff -q -f "$f" -n 0 "$@"
		run diff -q -f "$f" -n 0 --all --no-generation -s memsize "$@"
		run leaks -q -f "$f" -n 0 --min-share 0 "$@"
		run leaks -q -f "$f" --skip-weak --force "$@"
	done
	run diff -q -o new.$n.json --with-paths "$@"
	newf=new.$((n)).json
	run diff -q -o new2.$n.json "$@"
	# the after (or later) dump and the new objects
	if [ $# -eq 3 ]; then aft=$3; else aft=$2; fi
	for f in text json; do
		run interface-with -q --summary -f "$f" -n 0 --self-border "$aft" "$W/old/$newf"
	done
	run interface-with -q -o if.$n.json --self-border "$aft" "$W/old/$newf"
	run interface-with -q --summary -n 0 --later "$aft" "$2" "$W/old/$newf"
}

nfix=$(ls "$top"/data/dumps/*.json "$top"/data/dumps/*.json.gz | wc -l)
set --  "$top"/data/dumps/*.json "$top"/data/dumps/*.json.gz "$@"
k=0
for d in "$@"; do
	k=$((k + 1))
	b=$(basename "$d")
	run index -q -o "$b.hds" "$d"
	run index -q --dominators -o "$b.dom.hds" "$d"
	run index -q --dominators --skip-weak -o "$b.domw.hds" "$d"
	if [ $k -le "$nfix" ]; then
		for_input "$d"
		# each side reads its own store
		for_input "$b.hds"
	else
		for_big "$b.hds"
	fi
	for f in text json; do
		run top -q -f "$f" -n 100 "$b.dom.hds"
		run top -q -f "$f" -n 100 --skip-weak "$b.domw.hds"
		run dominators -q -f "$f" -n 20 --type OBJECT "$b.dom.hds"
	done
	case $b in
	*before*)
		a=$(echo "$d" | sed 's/before/after/')
		l=$(echo "$d" | sed 's/before/later/')
		[ -f "$a" ] || continue
		for_pair "$d" "$a"
		[ -f "$l" ] && for_pair "$d" "$a" "$l"
		;;
	esac
done

bad=0
i=1
while [ $i -le $n ]; do
	for k in o e r; do
		if ! cmp -s "$W/old/$k.$i" "$W/new/$k.$i"; then
			echo "DIFFERS ($k): $(grep "^$i	" "$W/runs" | cut -f2-)"
			bad=1
		fi
	done
	i=$((i + 1))
done
# every other file written (stores, -o outputs)
for f in "$W"/old/*; do
	case $(basename "$f") in [oer].[0-9]*) continue ;; esac
	g="$W/new/$(basename "$f")"
	case $f in
	*.hds)
		if [ -n "${SAME_STRIP:-}" ]; then
			"$top/${B:-build}/tests/store_sections" strip "$g" \
				"$SAME_STRIP" "$W/stripped" && g="$W/stripped"
		fi ;;
	esac
	if ! cmp -s "$f" "$g"; then
		echo "DIFFERS (file): $(basename "$f")"
		bad=1
	fi
done
[ "$(ls "$W/old" | wc -l)" = "$(ls "$W/new" | wc -l)" ] ||
	{ echo "DIFFERS: not the same files written"; bad=1; }
echo "$n runs, $(ls "$W/old" | wc -l) files: $([ $bad = 0 ] && echo same || echo DIFFERENT)"
exit $bad
